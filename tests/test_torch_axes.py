"""Chapter 4's PyTorch column and axis traps, held to torch itself.

The table of statistics and parameter shapes (`normcore.experiments.axes.PYTORCH_LAYERS`), the
(B, T, D) trap, channels-last layer norm and the default epsilons are written in the chapter from
PyTorch's documentation; here each is checked against the installed torch.
"""

from __future__ import annotations

import numpy as np
import pytest

import normcore as nc
from normcore.experiments import axes

pytestmark = pytest.mark.numeric  # figures from float arithmetic: make test-arith reruns it


@pytest.fixture
def torch(oracle):
    """PyTorch, the oracle of every test here (a skip without it, a failure in CI)."""
    return oracle("torch")


N, C, H, W, G = 2, 8, 3, 5, 4


def shapes(module) -> str:
    """A module's weight and bias shapes, written as the chapter's table writes them."""
    names = {N: "N", C: "C", H: "H", W: "W", G: "G"}
    params = dict(module.named_parameters())
    if not params:
        return "none (affine=False)"

    def named(t) -> str:
        inner = ", ".join(names[s] for s in t.shape)
        return f"({inner},)" if t.dim() == 1 else f"({inner})"

    bias = named(params["bias"]) if "bias" in params else "none"
    return f"{named(params['weight'])}, {bias}"


def test_the_pytorch_columns_of_the_table_are_torchs_own(torch):
    modules = {
        "batch": torch.nn.BatchNorm1d(C),
        "image batch": torch.nn.BatchNorm2d(C),
        "layer": torch.nn.LayerNorm((C, H, W)),
        "RMS": torch.nn.RMSNorm((C, H, W)),
        "instance": torch.nn.InstanceNorm2d(C),
        "group": torch.nn.GroupNorm(G, C),
    }
    for name, module in modules.items():
        assert shapes(module) == axes.PYTORCH_LAYERS[name][2], name
    inst = modules["instance"]
    assert inst.affine is False and inst.track_running_stats is False
    assert modules["layer"].elementwise_affine is True


def test_the_statistics_columns_agree_with_torch_outputs(torch):
    # same standardisation in training mode, so the same statistics axes
    x = np.random.default_rng(3).normal(size=(N, C, H, W)) + np.arange(C)[:, None, None]
    xt = torch.tensor(x)
    pairs = {
        "image batch": (nc.ImageBatchNorm.create(C), torch.nn.BatchNorm2d(C).double()),
        "layer": (nc.LayerNorm.create((C, H, W)), torch.nn.LayerNorm((C, H, W)).double()),
        "instance": (nc.InstanceNorm.create(C), torch.nn.InstanceNorm2d(C).double()),
        "group": (nc.GroupNorm.create(C, G), torch.nn.GroupNorm(G, C).double()),
    }
    for name, (ours, theirs) in pairs.items():
        theirs.train()
        got = theirs(xt).detach().numpy()
        assert np.allclose(ours.forward(x, "train").output, got, atol=1e-10), name
    rows = {r.name: r for r in axes.axes_rows((N, C, H, W), G)}
    assert rows["group"].statistics_shape == (N, G) and rows["instance"].statistics_shape == (N, C)


def test_the_sequence_trap_is_torchs(torch):
    trap = axes.sequence_trap((4, 6, 6), seed=2)
    x = torch.tensor(trap.x)
    right = torch.nn.BatchNorm1d(6).double()(x.transpose(1, 2)).transpose(1, 2)
    silent = torch.nn.BatchNorm1d(6).double()(x)  # T = D: accepted, and wrong
    assert np.allclose(right.detach().numpy(), trap.right, atol=1e-10)
    assert np.allclose(silent.detach().numpy(), trap.wrong, atol=1e-10)
    # with T != D the untransposed block is refused (exercise 5's answer)
    with pytest.raises(RuntimeError):
        torch.nn.BatchNorm1d(8).double()(torch.zeros(4, 6, 8, dtype=torch.float64))


def test_channels_last_layer_norm_is_torchs_layernorm_over_c(torch):
    x = np.random.default_rng(4).normal(size=(2, 3, 3, 4))
    ours = nc.LayerNorm.create(4).forward(x).output
    theirs = torch.nn.LayerNorm(4).double()(torch.tensor(x)).detach().numpy()
    assert np.allclose(ours, theirs, atol=1e-10)


def test_default_epsilons(torch):
    for module in (
        torch.nn.BatchNorm1d(3),
        torch.nn.LayerNorm(3),
        torch.nn.GroupNorm(1, 3),
        torch.nn.InstanceNorm2d(3),
    ):
        assert module.eps == 1e-5
    assert torch.nn.RMSNorm(3).eps is None  # the dtype's machine epsilon, at run time
    assert nc.BatchNorm.create(3).eps == 1e-5 and nc.LayerNorm.create(3).eps == 1e-5
