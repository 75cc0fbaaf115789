"""GhostBatchNorm: batch normalisation whose training statistics are read group by group.

The layer is held to what its docstring says it is: `BatchNorm` applied to each group of
`group_rows` consecutive rows separately (a BatchNorm with an extra stack axis over the groups,
its parameter gradients summed over the groups), to `BatchNorm` itself when one group holds every
row, and to `BatchNorm`'s predicting for any number of rows. Its running statistics are checked
against the groups' statistics computed here with numpy; its gradients against central differences
and against PyTorch's autograd run group by group. What every layer promises (read-only values,
the caller's error state, central differences, typed refusals) is tested once for every layer,
this one included, in `tests/test_layer_contract.py`.
"""

from __future__ import annotations

import dataclasses
import tracemalloc
from typing import Any

import numpy as np
import pytest

import normcore as nc

pytestmark = pytest.mark.numeric  # figures from float arithmetic: make test-arith reruns it

EPS = 1e-5


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(4000 + seed)


def params(r: np.random.Generator, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """A scale away from 1 and a shift away from 0, so that both show in every answer."""
    return r.normal(size=shape) + 1.5, r.normal(size=shape)


def ghost_and_block(
    seed: int,
    stack: tuple[int, ...],
    groups: int,
    group_rows: int,
    f: int = 3,
    dtype: type = np.float64,
):
    r = rng(seed)
    scale, shift = params(r, (*stack, f))
    layer = nc.GhostBatchNorm(
        scale=scale.astype(dtype), shift=shift.astype(dtype), group_rows=group_rows
    )
    shape = (*stack, groups * group_rows, f)
    x = (r.normal(size=shape) * 2.0 + 3.0).astype(dtype)
    d = r.normal(size=shape).astype(dtype)
    return layer, x, d


def per_group(layer: nc.GhostBatchNorm, x: np.ndarray, d: np.ndarray):
    """The same block through a plain BatchNorm that holds the groups on an extra stack axis
    (each group a separate layer, sharing the ghost layer's scale and shift): its output and
    input gradient reshaped back, its parameter gradients summed over the groups."""
    g = layer.group_rows
    *stack, rows, f = x.shape
    groups = rows // g
    tiled = {
        name: np.broadcast_to(np.expand_dims(getattr(layer, name), -2), (*stack, groups, f))
        for name in ("scale", "shift", "running_mean", layer.spread_field)
    }
    twin = nc.BatchNorm(**tiled, eps=layer.eps, momentum=layer.momentum, tracks=layer.tracks)
    view = x.reshape(*stack, groups, g, f)
    response = twin.forward(view, "train")
    gradient = twin.backward(response, d.reshape(view.shape))
    return (
        response.output.reshape(x.shape),
        gradient.grad_input.reshape(x.shape),
        gradient.grads["scale"].sum(axis=-2),
        gradient.grads["shift"].sum(axis=-2),
    )


def group_statistics(layer: nc.GhostBatchNorm, x: np.ndarray):
    """Each group's mean, biased variance and deviation, averaged over the groups (numpy)."""
    *stack, rows, f = x.shape
    view = x.astype(np.float64).reshape(*stack, rows // layer.group_rows, layer.group_rows, f)
    mean = view.mean(axis=-2)
    variance = ((view - mean[..., None, :]) ** 2).mean(axis=-2)
    divisor = np.sqrt(variance + layer.eps)
    return mean.mean(axis=-2), variance.mean(axis=-2), divisor.mean(axis=-2)


# ------------------------------------------------------------------ training: BatchNorm per group
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("stack", [(), (2,), (2, 3)])
@pytest.mark.parametrize("groups, group_rows", [(1, 3), (3, 2), (4, 5), (5, 1)])
def test_training_is_batch_norm_per_group(stack, groups, group_rows, dtype) -> None:
    layer, x, d = ghost_and_block(len(stack) + groups, stack, groups, group_rows, dtype=dtype)
    response = layer.forward(x, "train")
    gradient = layer.backward(response, d)
    out, passed, d_scale, d_shift = per_group(layer, x, d)
    tol = {"rtol": 1e-12, "atol": 1e-12} if dtype == np.float64 else {"rtol": 1e-5, "atol": 1e-5}
    for ours, theirs in (
        (response.output, out),
        (gradient.grad_input, passed),
        (gradient.grads["scale"], d_scale),
        (gradient.grads["shift"], d_shift),
    ):
        assert ours.dtype == dtype and ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, **tol)
    # and not BatchNorm over the whole block (unless there is one group, or groups of one row)
    whole = nc.BatchNorm(scale=layer.scale, shift=layer.shift).forward(x, "train").output
    assert np.allclose(response.output, whole, atol=1e-4) == (groups == 1)


def test_each_group_standardised_by_its_own_rows() -> None:
    """By hand, on the book's four rows in groups of two: (1, 7), (1, 9) | (7, 1), (23, 7)."""
    layer = nc.GhostBatchNorm.create(2, 2)
    out = layer.forward(nc.four_rows(), "train").output
    first = np.array([0.0, -1.0]) / np.sqrt(np.array([0.0, 1.0]) + EPS)  # column 2: 7, 9
    second = np.array([-8.0, -3.0]) / np.sqrt(np.array([64.0, 9.0]) + EPS)  # 7, 23 and 1, 7
    np.testing.assert_allclose(out[0], first, rtol=1e-12)
    np.testing.assert_allclose(out[1], -first, rtol=1e-12)
    np.testing.assert_allclose(out[2], second, rtol=1e-12)
    np.testing.assert_allclose(out[3], -second, rtol=1e-12)


@pytest.mark.parametrize("stack, rows, group_rows", [((), 40_000, 8), ((2,), 18_000, 6)])
def test_a_large_block_agrees_with_batch_norm_per_group(stack, rows, group_rows) -> None:
    """A block beyond 64 Ki values answers as BatchNorm applied to each group in turn."""
    r = rng(7)
    features = 2
    scale, shift = params(r, (*stack, features))
    layer = nc.GhostBatchNorm(scale=scale, shift=shift, group_rows=group_rows)
    x = r.normal(size=(*stack, rows, features)) * 3.0 - 1.0
    d = r.normal(size=x.shape)
    assert x.size > 1 << 16
    response = layer.forward(x, "train")
    gradient = layer.backward(response, d)
    out, passed, d_scale, d_shift = per_group(layer, x, d)
    for ours, theirs in (
        (response.output, out),
        (gradient.grad_input, passed),
        (gradient.grads["scale"], d_scale),
        (gradient.grads["shift"], d_shift),
    ):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12 * np.max(np.abs(theirs)))
    mean, variance, divisor = group_statistics(layer, x)
    np.testing.assert_allclose(response.statistics.mean, mean, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(response.statistics.variance, variance, rtol=1e-12)


# ------------------------------------------------------------------ one group: BatchNorm exactly
@pytest.mark.parametrize("tracks", ["variance", "divisor"])
@pytest.mark.parametrize("stack", [(), (3,)])
def test_one_group_is_batch_norm_exactly(stack, tracks) -> None:
    r = rng(11)
    rows, f = 6, 4
    scale, shift = params(r, (*stack, f))
    spread = "running_var" if tracks == "variance" else "running_divisor"
    running = {
        "running_mean": r.normal(size=(*stack, f)),
        spread: r.uniform(0.5, 2.0, size=(*stack, f)),
    }
    plain = nc.BatchNorm(scale=scale, shift=shift, tracks=tracks, **running)
    ghost = nc.GhostBatchNorm(scale=scale, shift=shift, tracks=tracks, group_rows=rows, **running)
    x = r.normal(size=(*stack, rows, f)) * 5.0
    d = r.normal(size=x.shape)
    a, b = plain.forward(x, "train"), ghost.forward(x, "train")
    np.testing.assert_array_equal(b.output, a.output)
    ga, gb = plain.backward(a, d), ghost.backward(b, d)
    np.testing.assert_array_equal(gb.grad_input, ga.grad_input)
    for name in ("scale", "shift"):
        np.testing.assert_array_equal(gb.grads[name], ga.grads[name])
    for name in ("mean", "variance", "divisor"):
        np.testing.assert_array_equal(getattr(gb.statistics, name), getattr(ga.statistics, name))
    sa, sb = plain.step(ga, 0.1), ghost.step(gb, 0.1)
    for name in ("scale", "shift", "running_mean", "running_divisor"):
        np.testing.assert_array_equal(getattr(sb, name), getattr(sa, name))


# ------------------------------------------------------------------ predicting: BatchNorm's
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("rows", [1, 2, 3, 4, 5, 7, 8, 12])
@pytest.mark.parametrize("stack", [(), (2,)])
def test_predicting_is_batch_norm_predicting(stack, rows, dtype) -> None:
    r = rng(rows)
    f = 3
    scale, shift = params(r, (*stack, f))
    running = {
        "running_mean": r.normal(size=(*stack, f)),
        "running_var": r.uniform(0.5, 2.0, size=(*stack, f)),
    }
    plain = nc.BatchNorm(scale=scale, shift=shift, **running)
    ghost = nc.GhostBatchNorm(scale=scale, shift=shift, group_rows=4, **running)
    x = (r.normal(size=(*stack, rows, f)) * 2.0).astype(dtype)
    d = r.normal(size=x.shape).astype(dtype)
    a, b = plain.forward(x), ghost.forward(x)  # evaluation mode is the default
    assert b.mode == "eval" and b.statistics is None
    assert b.output.dtype == dtype
    np.testing.assert_array_equal(b.output, a.output)
    ga, gb = plain.backward(a, d), ghost.backward(b, d)
    np.testing.assert_array_equal(gb.grad_input, ga.grad_input)
    for name in ("scale", "shift"):
        np.testing.assert_allclose(
            gb.grads[name],
            ga.grads[name],
            rtol=1e-12 if dtype == np.float64 else 1e-6,
            atol=1e-12,
        )
    # predicting reads no row's neighbours: each row alone gets the same answer
    alone = np.concatenate([ghost.forward(x[..., i : i + 1, :]).output for i in range(rows)], -2)
    np.testing.assert_array_equal(alone, b.output)


def test_grad_input_columns_sum_to_zero_in_every_group() -> None:
    """Each group's three routes stay inside the group: the input gradient sums to zero down
    each column of every group (BatchNorm's over the whole block would not, group by group)."""
    layer, x, d = ghost_and_block(13, (2,), 4, 3)
    passed = layer.backward(layer.forward(x, "train"), d).grad_input
    sums = passed.reshape(2, 4, 3, 3).sum(axis=-2)
    assert np.max(np.abs(sums)) < 1e-12 * np.max(np.abs(passed))
    plain = nc.BatchNorm(scale=layer.scale, shift=layer.shift)
    whole = plain.backward(plain.forward(x, "train"), d).grad_input
    assert np.max(np.abs(whole.reshape(2, 4, 3, 3).sum(axis=-2))) > 1e-3


@pytest.mark.parametrize("tracks", ["variance", "divisor"])
def test_folds_into_the_dense_layer_before_it_as_batch_norm_does(tracks) -> None:
    """Predicting is BatchNorm's, so folding (chapter 8) holds for the ghost layer too."""
    r = rng(17)
    dense = nc.Dense(weights=r.normal(size=(4, 3)), bias=r.normal(size=3))
    scale, shift = params(r, (3,))
    ghost = nc.GhostBatchNorm(
        scale=scale,
        shift=shift,
        running_mean=r.normal(size=3),
        **{
            "running_var" if tracks == "variance" else "running_divisor": r.uniform(
                0.5, 2.0, size=3
            )
        },
        tracks=tracks,
        group_rows=2,
    )
    x = r.normal(size=(5, 4))
    folded = nc.fold_batch_norm(dense, ghost)
    expected = ghost.forward(dense.forward(x).output).output
    np.testing.assert_allclose(folded.forward(x).output, expected, rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------ step: the running statistics
@pytest.mark.parametrize("tracks", ["variance", "divisor"])
@pytest.mark.parametrize("stack", [(), (2,)])
def test_step_folds_in_the_groups_averaged_statistics(stack, tracks) -> None:
    r = rng(21)
    f, g, groups = 3, 3, 4
    scale, shift = params(r, (*stack, f))
    start_mean, start_spread = r.normal(size=(*stack, f)), r.uniform(0.5, 2.0, size=(*stack, f))
    common = {
        "scale": scale,
        "shift": shift,
        "running_mean": start_mean,
        "running_var" if tracks == "variance" else "running_divisor": start_spread,
        "momentum": 0.8,
        "tracks": tracks,
    }
    ghost = nc.GhostBatchNorm(**common, group_rows=g)
    plain = nc.BatchNorm(**common)
    x = r.normal(size=(*stack, groups * g, f)) * 2.0 + np.arange(groups * g)[:, None]
    d = r.normal(size=x.shape)
    gradient = ghost.backward(ghost.forward(x, "train"), d)
    moved = ghost.step(gradient, 0.25)
    mean, variance, divisor = group_statistics(ghost, x)
    spread = variance if tracks == "variance" else divisor
    np.testing.assert_allclose(moved.running_mean, 0.8 * start_mean + 0.2 * mean, rtol=1e-12)
    held = getattr(moved, moved.spread_field)
    np.testing.assert_allclose(held, 0.8 * start_spread + 0.2 * spread, rtol=1e-12)
    # the groups' average, not the whole block's statistics (the rows drift, so they differ)
    whole = x.var(axis=-2) if tracks == "variance" else np.sqrt(x.var(axis=-2) + EPS)
    assert not np.allclose(held, 0.8 * start_spread + 0.2 * whole, rtol=1e-3)
    # scale and shift move as BatchNorm's would by the same gradients
    expected = plain.step(dataclasses.replace(gradient, layer=plain), 0.25)
    for name in ("scale", "shift"):
        np.testing.assert_array_equal(getattr(moved, name), getattr(expected, name))
        np.testing.assert_allclose(
            getattr(moved, name), common[name] - 0.25 * gradient.grads[name], rtol=1e-15
        )


def test_step_after_predicting_moves_no_running_figure() -> None:
    layer, x, d = ghost_and_block(3, (), 3, 2)
    moved = layer.step(layer.backward(layer.forward(x), d), 0.1)
    np.testing.assert_array_equal(moved.running_mean, layer.running_mean)
    np.testing.assert_array_equal(moved.running_var, layer.running_var)
    assert not np.array_equal(moved.scale, layer.scale)


# ------------------------------------------------------------------ the oracle
def objective(layer, d: np.ndarray):
    return lambda x: float(np.sum(d * layer.forward(x, "train").output))


def test_the_oracle_catches_whole_batch_grads() -> None:
    """The oracle can tell the layers apart (tests/test_layer_contract.py holds the ghost layer's
    gradients to it): BatchNorm's gradient over the whole block (the statistics' routes running
    through every row instead of a group's) is far from the oracle of the ghost layer."""
    layer, x, d = ghost_and_block(1, (), 3, 2, f=2)
    plain = nc.BatchNorm(scale=layer.scale, shift=layer.shift)
    wrong = plain.backward(plain.forward(x, "train"), d).grad_input
    assert nc.check_grad(objective(layer, d), x, wrong).relative_gap > 1e-2


# ------------------------------------------------------------------ PyTorch, group by group
@pytest.mark.parametrize("seed", range(4))
def test_agrees_with_pytorch_batch_norm_per_group(seed, oracle) -> None:
    torch = oracle("torch")
    r = rng(30 + seed)
    g, groups, f = int(r.integers(2, 5)), int(r.integers(1, 5)), int(r.integers(1, 4))
    scale, shift = params(r, (f,))
    layer = nc.GhostBatchNorm(scale=scale, shift=shift, group_rows=g)
    x = r.normal(size=(groups * g, f)) * 3.0 + 2.0
    d = r.normal(size=x.shape)
    response = layer.forward(x, "train")
    gradient = layer.backward(response, d)

    tx = torch.tensor(x, requires_grad=True)
    w = torch.tensor(scale, requires_grad=True)
    b = torch.tensor(shift, requires_grad=True)
    out = torch.cat(
        [
            torch.nn.functional.batch_norm(part, None, None, w, b, training=True, eps=EPS)
            for part in torch.split(tx, g, dim=0)
        ]
    )
    (out * torch.tensor(d)).sum().backward()  # autograd sums the gradients over the groups
    tol = {"rtol": 1e-12, "atol": 1e-12}
    np.testing.assert_allclose(response.output, out.detach().numpy(), **tol)
    np.testing.assert_allclose(gradient.grad_input, tx.grad.numpy(), **tol)
    np.testing.assert_allclose(gradient.grads["scale"], w.grad.numpy(), **tol)
    np.testing.assert_allclose(gradient.grads["shift"], b.grad.numpy(), **tol)


# ------------------------------------------------------------------ typed errors, before arithmetic
BAD_GROUP_ROWS = [0, -1, 2.5, True, "2", None, np.float64(2.0)]


#: rows of the large blocks below: each float64 block takes 1.6 MB
LARGE = 100_000


def allocated_while(call: Any) -> tuple[BaseException | None, int]:
    """What `call` raised (None if it answered) and the most memory it held at once (bytes
    traced by tracemalloc, which numpy reports its arrays' memory to)."""
    tracemalloc.start()
    try:
        try:
            call()
        except BaseException as exc:  # noqa: BLE001 - handed back for the test to judge
            raised: BaseException | None = exc
        else:
            raised = None
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return raised, peak


def refused_before_arithmetic(call: Any, error: type[Exception], x: np.ndarray) -> None:
    """`call` raises `error` having held less than half of the memory of `x` as float64: the
    standardising arithmetic makes whole blocks of that size (x - mean, z), so it never ran."""
    raised, peak = allocated_while(call)
    assert isinstance(raised, error), raised
    assert peak < x.size * 8 / 2, f"{peak} bytes held before the refusal"


def test_the_measure_sees_the_arithmetic() -> None:
    """The measure above can fail: a forward pass that is answered holds more than the block."""
    x = rng(30).standard_normal((LARGE, 2))
    for layer in (nc.BatchNorm.create(2), nc.GhostBatchNorm.create(2, 2)):
        raised, peak = allocated_while(lambda layer=layer: layer.forward(x, "train"))
        assert raised is None and peak > x.nbytes


@pytest.mark.parametrize("bad", BAD_GROUP_ROWS)
def test_bad_group_rows_refused(bad) -> None:
    with pytest.raises(nc.SettingError, match="group_rows: expected a whole number >= 1"):
        nc.GhostBatchNorm.create(2, bad)
    with pytest.raises(nc.SettingError, match="group_rows"):
        nc.GhostBatchNorm(scale=np.ones(2), shift=np.zeros(2), group_rows=bad)


def test_group_rows_left_out_is_refused() -> None:
    with pytest.raises(nc.SettingError, match="group_rows"):
        nc.GhostBatchNorm(scale=np.ones(2), shift=np.zeros(2))


def test_numpy_integer_group_rows_accepted() -> None:
    layer = nc.GhostBatchNorm.create(2, np.int64(3))
    assert layer.group_rows == 3 and type(layer.group_rows) is int


@pytest.mark.parametrize("rows", [1, 3, 5, 7, LARGE + 1])
def test_training_rows_not_a_multiple_refused(rows) -> None:
    layer = nc.GhostBatchNorm.create(2, 2, stack=(2,))
    x = np.arange(2 * rows * 2, dtype=float).reshape(2, rows, 2)
    before = x.copy()
    with pytest.raises(
        nc.ShapeError, match=f"multiple of group_rows=2 rows for training, got {rows}"
    ):
        layer.forward(x, "train")
    np.testing.assert_array_equal(x, before)
    if rows > LARGE:
        refused_before_arithmetic(lambda: layer.forward(x, "train"), nc.ShapeError, x)


def _large() -> np.ndarray:
    return rng(31).standard_normal((LARGE, 2))


def _with(value: float) -> np.ndarray:
    x = _large()
    x[LARGE // 2, 1] = value
    return x


#: blocks BatchNorm refuses, each large enough that the arithmetic would show in the memory held
BAD_BLOCKS = {
    "rank 1": (lambda: _large()[:, 0], nc.ShapeError),
    "rank 3 for an unstacked layer": (lambda: _large()[None], nc.ShapeError),
    "three features": (lambda: np.ones((LARGE, 3)), nc.ShapeError),
    "NaN": (lambda: _with(np.nan), nc.NonFiniteError),
    "inf": (lambda: _with(np.inf), nc.NonFiniteError),
    "1e200": (lambda: _large() * 1e200, nc.MagnitudeError),
    "booleans": (lambda: _large() > 0, nc.DtypeError),
    "text": (lambda: _large().astype(str), nc.DtypeError),
}


@pytest.mark.parametrize("mode", ["train", "eval"])
@pytest.mark.parametrize("case", sorted(BAD_BLOCKS))
def test_bad_blocks_refused_as_batch_norm_refuses_them(case, mode) -> None:
    make, error = BAD_BLOCKS[case]
    x = make()
    for layer in (nc.BatchNorm.create(2), nc.GhostBatchNorm.create(2, 2)):
        refused_before_arithmetic(lambda layer=layer: layer.forward(x, mode), error, x)


@pytest.mark.parametrize("mode", ["train", "eval"])
def test_an_empty_block_refused_as_batch_norm_refuses_it(mode) -> None:
    for layer in (nc.BatchNorm.create(2), nc.GhostBatchNorm.create(2, 2)):
        with pytest.raises(nc.EmptyBatchError):
            layer.forward(np.ones((0, 2)), mode)


def test_bad_mode_and_settings_refused() -> None:
    layer = nc.GhostBatchNorm.create(2, 2)
    x = _large()
    refused_before_arithmetic(lambda: layer.forward(x, "train"), nc.ModeError, x)
    with pytest.raises(nc.EpsilonError):
        nc.GhostBatchNorm.create(2, 2, eps=0.0)
    with pytest.raises(nc.MomentumError):
        nc.GhostBatchNorm.create(2, 2, momentum=1.0)
    with pytest.raises(nc.SettingError):
        nc.GhostBatchNorm.create(2, 2, tracks="std")
    with pytest.raises(nc.ShapeError):
        nc.GhostBatchNorm.create(0, 2)


def test_large_values_answered_as_the_arithmetic_says() -> None:
    """1e150 squares to 1e300, still a float64: answered, as the block at its own scale."""
    layer = nc.GhostBatchNorm.create(2, 2)
    big = layer.forward(nc.four_rows() * 1e150, "train").output
    np.testing.assert_allclose(big, layer.forward(nc.four_rows(), "train").output, atol=1e-5)


@pytest.mark.parametrize("rows", [2, 4, 8, 6, 5])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_predicting_refuses_exactly_what_batch_norm_refuses(rows, dtype) -> None:
    """Values just beyond BatchNorm's magnitude limit for `rows` values (but within the limit
    for a group of 2): BatchNorm refuses them in evaluation mode, and so must the ghost layer,
    whose groups would otherwise let it answer; just inside the limit, both answer alike."""
    limit = np.sqrt(float(np.finfo(dtype).max) / (8.0 * rows))
    for factor, refused in ((1.2, True), (0.8, False)):
        x = np.full((rows, 2), limit * factor, dtype=dtype)
        x[::2] *= -1
        plain, ghost = nc.BatchNorm.create(2), nc.GhostBatchNorm.create(2, 2)
        if refused:
            with pytest.raises(nc.MagnitudeError):
                plain.forward(x)
            with pytest.raises(nc.MagnitudeError):
                ghost.forward(x)
        else:
            np.testing.assert_array_equal(ghost.forward(x).output, plain.forward(x).output)


def test_create_starts_as_batch_norm_starts() -> None:
    layer = nc.GhostBatchNorm.create(3, 4, stack=(2,), eps=1e-3, momentum=0.5, tracks="divisor")
    assert isinstance(layer, nc.BatchNorm) and layer.group_rows == 4
    np.testing.assert_array_equal(layer.scale, np.ones((2, 3)))
    np.testing.assert_array_equal(layer.shift, np.zeros((2, 3)))
    np.testing.assert_array_equal(layer.running_mean, np.zeros((2, 3)))
    np.testing.assert_array_equal(layer.running_divisor, np.ones((2, 3)))
    assert layer.running_var is None  # a deviation-tracking layer holds no variance
    assert (layer.eps, layer.momentum, layer.tracks) == (1e-3, 0.5, "divisor")


def test_the_reference_ghost_row_is_pytorchs_own(oracle) -> None:
    """Chapter 9's PyTorch line for ghost batch norm computes PyTorch's figures from its
    documented update rule; here BatchNorm1d itself, run on each group of the column 1, 1, 7, 23
    in turn, gives them."""
    torch = oracle("torch")
    from normcore import reference as ref

    said = {r["difference"]: r for r in ref.pytorch_differences()}["ghost batch, groups of 2"]
    module = torch.nn.BatchNorm1d(1, dtype=torch.float64)
    column = torch.tensor([[1.0], [1.0], [7.0], [23.0]], dtype=torch.float64)
    for part in torch.split(column, 2, dim=0):
        module(part)
    mean, var = module.running_mean.item(), module.running_var.item()
    assert said["PyTorch"].endswith(f"running mean {mean:.4g}, variance {var:.4g}")
    ours = nc.GhostBatchNorm.create(1, 2)
    x = column.numpy()
    moved = ours.step(ours.backward(ours.forward(x, "train"), np.zeros_like(x)), 0.0)
    assert not np.isclose(moved.running_var[0], var)  # the difference is real
    assert said["normcore"].endswith(
        f"running mean {moved.running_mean[0]:.4g}, variance {moved.running_var[0]:.4g}"
    )
