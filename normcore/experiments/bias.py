"""The bias in front of a batch layer: its gradient is zero and it changes no output.

A batch layer (training mode) subtracts each feature's batch mean, so a constant added to a
feature before it, a dense layer's bias, leaves the output as it was, and the gradient reaching the
bias (the column sums of what the batch layer passes down) is zero up to rounding.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import deepnet


@dataclass(frozen=True)
class BiasFacts:
    """On one batch of the digits: the largest |bias gradient| over the eight hidden layers of the
    batch network and of the plain network (same seed); and the largest change in the batch
    network's logits when every hidden bias is moved by `moved_by`."""

    batch_grad: float
    plain_grad: float
    output_change: float
    moved_by: float


def _largest_bias_grad(net: deepnet.DeepNet, grads: list) -> float:
    hidden = {id(d) for d in net.dense}
    return max(float(np.max(np.abs(g.grads["bias"]))) for g in grads if id(g.layer) in hidden)


def facts(data: tuple[np.ndarray, ...], seed: int = 0, moved_by: float = 3.0) -> BiasFacts:
    """Measure both networks on the first 64 training rows of `data`."""
    x, y = data[0][:64], data[1][:64]
    out = {}
    for version in ("batch", "plain"):
        net = deepnet.build(version, [seed])
        _, grads = deepnet.gradients(net, x, y)
        out[version] = _largest_bias_grad(net, grads)
    net = deepnet.build("batch", [seed])
    moved = deepnet.DeepNet(
        dense=tuple(type(d)(weights=d.weights, bias=d.bias + moved_by) for d in net.dense),
        norms=net.norms,
        output=net.output,
    )
    before = deepnet.forward(net, x, "train")[1]
    after = deepnet.forward(moved, x, "train")[1]
    return BiasFacts(
        batch_grad=out["batch"],
        plain_grad=out["plain"],
        output_change=float(np.max(np.abs(after - before))),
        moved_by=moved_by,
    )
