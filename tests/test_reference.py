"""Every edge-case row of chapter 12, checked by calling the layers directly (not via the table).

EXPECTED lists each case's kind and, for refusals, the error type; the direct checks below
re-run a selection of behaviours by hand, so a change in the layers fails here independently
of `normcore.reference`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import normcore as nc
from normcore import reference as ref
from normcore.mode import EVAL

pytestmark = pytest.mark.numeric  # figures from float arithmetic: make test-arith reruns it

R, A, W = "refused", "arithmetic", "worth knowing"
EXPECTED = {
    "bn-rank-1": (R, "ShapeError"),
    "bn-rank-3": (R, "ShapeError"),
    "bn-features": (R, "ShapeError"),
    "bn-empty": (R, "EmptyBatchError"),
    "bn-nan": (R, "NonFiniteError"),
    "bn-inf": (R, "NonFiniteError"),
    "bn-neg-inf": (R, "NonFiniteError"),
    "bn-1e200": (R, "MagnitudeError"),
    "bn-eps-0": (R, "EpsilonError"),
    "bn-eps-neg": (R, "EpsilonError"),
    "bn-momentum-1": (R, "MomentumError"),
    "bn-momentum-neg": (R, "MomentumError"),
    "bn-mode": (R, "ModeError"),
    "bn-bool": (R, "DtypeError"),
    "bn-foreign-gradient": (R, "ForeignResponseError"),
    "ln-foreign-response": (R, "ForeignResponseError"),
    "relu-dense-gradient": (R, "ForeignResponseError"),
    "ln-trailing": (R, "ShapeError"),
    "gn-groups": (R, "SettingError"),
    "gbn-group-rows": (R, "SettingError"),
    "gbn-rows": (R, "ShapeError"),
    "in-rank": (R, "ShapeError"),
    "wn-zero": (R, "ZeroDirectionError"),
    "dense-features": (R, "ShapeError"),
    "fold-layer-norm": (R, "FoldError"),
    "bn-constant": (A, ""),
    "bn-1e150": (A, ""),
    "bn-float32": (A, ""),
    "bn-int": (A, ""),
    "ln-constant": (A, ""),
    "in-constant": (A, ""),
    "bn-momentum-0": (A, ""),
    "gbn-one-group": (A, ""),
    "bn-one-row": (W, ""),
    "bn-one-row-predict": (W, ""),
    "gbn-three-predict": (W, ""),
    "ln-two-numbers": (W, ""),
    "bn-look": (W, ""),
    "bn-fresh": (W, ""),
    "bn-1e-150": (W, ""),
    "wn-tiny": (W, ""),
}
FOUR = nc.four_rows()


@pytest.fixture(scope="module")
def table():
    return {case.key: outcome for case, outcome in ref.edge_cases()}


def test_every_row_is_expected(table):
    assert set(table) == set(EXPECTED)


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_row_outcome(table, key):
    kind, error = EXPECTED[key]
    assert (table[key].kind, table[key].error) == (kind, error)
    if kind == R:
        assert table[key].message


def test_refusals_by_hand():
    bn = nc.BatchNorm.create(2)
    with pytest.raises(nc.ShapeError):
        bn.forward(np.ones(2))
    with pytest.raises(nc.EmptyBatchError):
        bn.forward(np.ones((0, 2)), "train")
    with pytest.raises(nc.NonFiniteError):
        bn.forward(np.array([[np.nan, 1.0]]))
    with pytest.raises(nc.MagnitudeError):
        bn.forward(FOUR * 1e200, "train")
    with pytest.raises(nc.EpsilonError):
        nc.BatchNorm.create(2, eps=0.0)
    with pytest.raises(nc.MomentumError):
        nc.BatchNorm.create(2, momentum=1.0)
    with pytest.raises(nc.ModeError):
        bn.forward(FOUR, "Train")
    with pytest.raises(nc.ZeroDirectionError):
        nc.WeightNormDense(direction=np.zeros((2, 1)))
    other = nc.BatchNorm.create(2)
    g = bn.backward(bn.forward(FOUR, "train"), np.ones((4, 2)))
    with pytest.raises(nc.ForeignResponseError):
        other.step(g, 0.1)
    assert issubclass(nc.NormcoreError, ValueError)


def test_answers_by_hand():
    bn = nc.BatchNorm.create(2)
    assert np.array_equal(bn.forward(FOUR[:1], "train").output, np.zeros((1, 2)))
    const = np.array([[5.0, 1.0], [5.0, 2.0]])
    assert np.all(bn.forward(const, "train").output[:, 0] == 0)
    big = bn.forward(FOUR * 1e150, "train").output[:, 0]
    assert np.allclose(big, [-7 / 9, -7 / 9, -1 / 9, 15 / 9], atol=1e-4)
    assert bn.forward(FOUR.astype(np.float32), "train").output.dtype == np.float32
    two = nc.LayerNorm.create(2).forward(np.array([[3.0, 11.0]])).output
    assert np.allclose(two, [[-1.0, 1.0]], atol=1e-6)
    bn.forward(FOUR, "train")  # a look
    assert np.array_equal(bn.running_mean, np.zeros(2))
    assert np.abs(bn.forward(FOUR * 1e-150, "train").output).max() < 1e-100


def test_ghost_by_hand():
    ghost = nc.GhostBatchNorm.create(2, 2)
    with pytest.raises(nc.SettingError):
        nc.GhostBatchNorm.create(2, 0)
    with pytest.raises(nc.ShapeError):
        ghost.forward(FOUR[:3], "train")
    whole = nc.GhostBatchNorm.create(2, 4).forward(FOUR, "train").output
    assert np.array_equal(whole, nc.BatchNorm.create(2).forward(FOUR, "train").output)
    three = ghost.forward(FOUR[:3]).output  # predicting: the running statistics, mean 0, variance 1
    assert np.allclose(three, FOUR[:3] / np.sqrt(1 + 1e-5), rtol=1e-12)
    # groups (1, 1) and (7, 23) of the first column: variances 0 and 64, averaged 32; the second
    # column's groups (7, 9) and (1, 7): 1 and 9, averaged 5
    r = ghost.forward(FOUR, "train")
    assert np.allclose(r.statistics.variance, [32.0, 5.0], rtol=1e-12)
    assert np.allclose(r.statistics.mean, [(1 + 15) / 2, (8 + 4) / 2], rtol=1e-12)


def test_statements_measured():
    rows = {r["layer"]: r for r in ref.statements()}
    assert rows["BatchNorm"]["variance"] == "biased (÷ n)"
    assert rows["BatchNorm"]["running variance"] == "biased"
    assert f"default {EVAL}" in rows["LayerNorm"]["modes (default)"]
    assert "over (rows)" in rows["BatchNorm"]["axis"]
    assert "over (features)" in rows["LayerNorm"]["axis"]
    assert "refused (ZeroDirectionError)" in rows["WeightNormDense"]["weight norm"]
    ghost = rows["GhostBatchNorm"]
    assert ghost["axis"] == "over (rows in a group of 2); one figure per group and feature"
    assert ghost["running variance"] == "biased"
    assert "the groups' average" in ghost["running rule and moment"]
    assert "within each group" in ghost["backward routes"]
    assert "agrees with the oracle" in ghost["backward routes"]
    assert ghost["parameter gradients"].startswith("scale ✓, shift ✓")


def test_pytorch_numbers():
    d = {r["difference"]: r for r in ref.pytorch_differences()}
    # biased 81 vs unbiased 108 on (1, 1, 7, 23): 0.9 + 8.1 = 9 against 0.9 + 10.8 = 11.7
    assert d["running variance"]["normcore"].endswith(": 9")
    assert d["running variance"]["PyTorch"].endswith(": 11.7")
    assert "0.8" in d["momentum's name"]["normcore"]
    # ghost batch, groups (1, 1) and (7, 23): ours folds in the averages 8 and 32 once,
    # 0.1 * 8 = 0.8 and 0.9 + 0.1 * 32 = 4.1; PyTorch per group, unbiased 0 then 128:
    # mean 0.1 * 1 = 0.1, then 0.09 + 1.5 = 1.59; variance 0.9, then 0.81 + 12.8 = 13.61
    ghost = d["ghost batch, groups of 2"]
    assert ghost["normcore"].endswith("running mean 0.8, variance 4.1")
    assert ghost["PyTorch"].endswith("running mean 1.59, variance 13.61")


def test_exercise_checks():
    from normcore.exercises import ch12

    assert ch12.check_pytorch_variance(0.9 + 0.1 * 9.0 * 4 / 3) == "right"
    assert ch12.check_two_steps(0.1 * 5 + 0.09 * 5) == "right"
    assert ch12.check_tiny_scale(-2) == "right"
    # each checker names the mistakes it expects, without the answer
    assert "biased variance" in ch12.check_pytorch_variance(0.9 + 0.1 * 9.0)
    assert "share taken" in ch12.check_pytorch_variance(0.1 + 0.9 * 12.0)
    assert "starts at 1" in ch12.check_pytorch_variance(0.1 * 12.0)
    assert "after one step" in ch12.check_two_steps(0.5)
    assert "share of the old figure" in ch12.check_two_steps(0.9 * 5 + 0.09 * 5)
    assert "batch mean itself" in ch12.check_two_steps(5.0)
    assert "epsilon's size" in ch12.check_tiny_scale(-3)
    assert "not the first power" in ch12.check_tiny_scale(-1)
    assert ch12.check_tiny_scale(0) == "not yet: that is not the answer"


def test_framework_defaults_are_listed_once_each() -> None:
    rows = ref.framework_defaults()
    assert {r["framework"] for r in rows} == {"PyTorch", "Keras", "Flax"}
    assert len({(r["framework"], r["setting"]) for r in rows}) == len(rows)
    assert all(set(r) == {"framework", "setting", "behaviour", "normcore"} for r in rows)


def test_framework_defaults_normcore_column_for_rms_is_measured() -> None:
    """The normcore column of the RMS lines says what normcore's RMSNorm does: a shift that
    starts at 0 and that a step moves (the frameworks' RMS layers have none)."""
    rms = nc.RMSNorm.create(3)
    assert np.all(rms.shift == 0) and rms.eps == 1e-5
    x = np.array([[1.0, 2.0, 4.0], [-1.0, 0.5, 3.0]])
    response = rms.forward(x, "train")
    stepped = rms.step(rms.backward(response, np.ones_like(x)), 0.1)
    assert np.all(stepped.shift != 0)  # learned
    rows = [r for r in ref.framework_defaults() if "RMS" in r["setting"]]
    assert len(rows) == 3
    for r in rows:
        assert "a shift that starts at 0 and is learned; epsilon 1e-5" in r["normcore"]
        assert "no shift" in r["behaviour"]


def test_framework_defaults_hold_in_pytorch(oracle: Any) -> None:
    """The PyTorch lines of the reference's framework table, checked against PyTorch itself."""
    torch = oracle("torch")
    nn = torch.nn
    inst = nn.InstanceNorm2d(3)
    assert inst.affine is False and inst.track_running_stats is False
    rms = nn.RMSNorm(4)
    assert rms.eps is None and rms.weight is not None and getattr(rms, "bias", None) is None
    bn = nn.BatchNorm1d(1)
    assert bn.momentum == 0.1 and bn.eps == 1e-5 and bn.training  # a fresh module trains
    # momentum=None: a cumulative average, every batch weighing the same
    cumulative = nn.BatchNorm1d(1, momentum=None)
    for batch in ([1.0, 3.0], [5.0, 7.0], [9.0, 11.0]):
        cumulative(torch.tensor(batch, dtype=torch.float64).reshape(2, 1).float())
    assert abs(cumulative.running_mean.item() - 6.0) < 1e-5
    # one image with several pixels trains in BatchNorm2d; one row is refused by BatchNorm1d
    nn.BatchNorm2d(2)(torch.randn(1, 2, 3, 3))
    with pytest.raises(ValueError):
        nn.BatchNorm1d(2)(torch.randn(1, 2))
    # no_grad() does not switch a batch layer to its running statistics; eval() does
    x = torch.randn(4, 2) * 3 + 5
    layer = nn.BatchNorm1d(2)
    with torch.no_grad():
        out = layer(x)
    assert abs(out.mean().item()) < 1e-5  # still the batch's own statistics
    layer.eval()
    assert abs(layer(x).mean().item()) > 1.0  # now the running statistics
    assert "no_grad() only stops gradients" in next(
        r["behaviour"] for r in ref.framework_defaults() if r["setting"].startswith("model.eval")
    )


# rename: off (the old name, which the layers must not take)
def test_eps_is_pytorchs_name_for_epsilon(oracle: Any) -> None:
    """The reference chapter says normcore's ε argument is `eps` because PyTorch's is: every
    normalising layer takes `eps` (and no `epsilon`), as PyTorch's modules do."""
    import inspect

    torch = oracle("torch")
    layers = (nc.BatchNorm, nc.GhostBatchNorm, nc.LayerNorm, nc.RMSNorm, nc.InstanceNorm)
    for cls in layers:
        assert "eps" in inspect.signature(cls.create).parameters, cls.__name__
        assert "epsilon" not in inspect.signature(cls.create).parameters, cls.__name__
        made = cls.create(2, 2) if cls is nc.GhostBatchNorm else cls.create(2)
        assert made.eps > 0, cls.__name__
    for module in (torch.nn.BatchNorm1d, torch.nn.LayerNorm, torch.nn.GroupNorm):
        assert "eps" in inspect.signature(module).parameters, module.__name__


# rename: on
def test_framework_traps_normcore_column_is_what_normcore_does() -> None:
    """The normcore column of the traps' lines, measured on normcore's own layers."""

    def normcore_says(framework: str, start: str) -> str:
        (row,) = [
            r
            for r in ref.framework_defaults()
            if r["framework"] == framework and r["setting"].startswith(start)
        ]
        return row["normcore"]

    ln, gn = nc.LayerNorm.create(4), nc.GroupNorm.create(4, 2)
    assert ln.eps == gn.eps == 1e-5 and gn.scale.shape == gn.shift.shape == (4,)
    assert normcore_says("PyTorch", "LayerNorm(").startswith("same epsilon")
    assert normcore_says("PyTorch", "GroupNorm(") == "same epsilon, scale and shift per channel"
    # evaluation mode always reads the running statistics (a fresh layer: mean 0, variance 1)
    x = np.array([[1.0], [1.0], [7.0], [23.0]])
    fresh = nc.BatchNorm.create(1)
    assert np.allclose(fresh.forward(x).output, x / np.sqrt(1 + 1e-5))
    assert "always reads the running statistics" in normcore_says(
        "PyTorch", "BatchNorm(track_running_stats"
    )
    # running statistics move only in step: a training-mode forward alone leaves them
    fresh.forward(x, "train")
    assert np.array_equal(fresh.running_mean, [0.0])
    assert "only in step" in normcore_says("PyTorch", "bn.requires_grad_")
    # a step still moves scale and shift, whatever mode the statistics are read in
    response = fresh.forward(x, "train")
    stepped = fresh.step(fresh.backward(response, np.cos(np.arange(4.0))[:, None]), 0.1)
    assert not np.array_equal(stepped.scale, fresh.scale)
    assert "a step still" in normcore_says("PyTorch", "torchvision.ops.FrozenBatchNorm2d")
    # Flax's fast variance: normcore subtracts the mean first, so the same rows standardise
    rng = np.random.default_rng(12)
    rows32 = (ref.FAST_VARIANCE_MEAN + rng.standard_normal((4, 256))).astype(np.float32)
    out = nc.LayerNorm.create(256).forward(rows32).output
    assert np.allclose(out.std(axis=-1), 1.0, atol=1e-3)
    assert "subtracts the mean first" in normcore_says("Flax", "nn.LayerNorm(use_fast")
