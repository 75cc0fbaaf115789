"""Chapter 9's statements about PyTorch's multi-device batch norm, held to the installed torch."""

from __future__ import annotations

import inspect

import pytest

torch = pytest.importorskip("torch")


def test_ddp_broadcasts_rank_zeros_buffers_by_default() -> None:
    from torch.nn.parallel import distributed

    ddp = distributed.DistributedDataParallel
    params = inspect.signature(ddp.__init__).parameters
    names = [n for n in ("forward_sync_buffers", "broadcast_buffers") if n in params]
    assert names, "DDP takes neither forward_sync_buffers nor broadcast_buffers"
    # the default syncs: None means True for forward_sync_buffers; older torch: True
    default = params[names[0]].default
    assert default is None or default is True
    source = inspect.getsource(ddp._sync_buffers)
    assert "authoritative_rank = 0" in source  # rank 0's buffers are broadcast


def test_sync_batch_norm_reads_every_process_s_batch() -> None:
    doc = " ".join(torch.nn.SyncBatchNorm.__doc__.split())
    assert "over all mini-batches of the same process groups" in doc
