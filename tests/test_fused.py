"""The large-block path (`normcore.fast`) against the book's readable arithmetic.

The slab paths only run on blocks larger than `fused.CHUNK` values; these tests shrink `CHUNK` so
that small random blocks are cut into slabs of a few rows, and hold every path (whole block, slab
by slab, rows, down the slabs) to the readable `standardise` pair plus the affine step written out
by hand: ``y = z * scale + shift``, the slope passed down is the readable backward of
``d * scale``, and the parameter slopes are ``sum(d * z)`` and ``sum(d)``.
"""

from __future__ import annotations

import contextlib
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import normcore as nc
from normcore._checks import _magnitude_limit, all_finite, check_values, own_error_state
from normcore.errors import MagnitudeError, NonFiniteError
from normcore.fast import kernels as fused
from normcore.standardise import standardise, standardise_backward, standardise_by

pytestmark = pytest.mark.numeric  # figures from float arithmetic: make test-arith reruns it

LAYOUTS = {
    # name: (shape given the drawn size r, statistic axes, axes the scale varies along)
    "batch": (lambda r: (r, 5), (0,), (1,)),
    "batch, no scale": (lambda r: (r, 5), (0,), None),
    "row": (lambda r: (r, 7), (1,), (1,)),
    "row, no scale": (lambda r: (r, 7), (1,), None),
    "wide row": (lambda r: (r, 300), (1,), (1,)),  # 2400 bytes a row: the short ufunc buffer
    "stacked batch": (lambda r: (3, r, 4), (1,), (0, 2)),
    "stacked row": (lambda r: (3, r, 4), (2,), (0, 2)),
    "image batch": (lambda r: (r, 3, 4, 5), (0, 2, 3), (1,)),
    "instance": (lambda r: (r, 3, 4, 5), (2, 3), (1,)),
    "group": (lambda r: (r, 2, 3, 4, 5), (2, 3, 4), (1, 2)),
    "one group": (lambda r: (r, 1, 3, 4, 5), (2, 3, 4), (1, 2)),
    "trailing": (lambda r: (r, 3, 4, 5), (2, 3), (2, 3)),
}


def _param(rng: np.random.Generator, shape: tuple[int, ...], along: tuple[int, ...]) -> np.ndarray:
    kept = tuple(s if i in along else 1 for i, s in enumerate(shape))
    return rng.standard_normal(kept)


@settings(max_examples=300, deadline=None, derandomize=os.environ.get("CI") == "true")
@given(
    layout=st.sampled_from(sorted(LAYOUTS)),
    r=st.integers(1, 9),
    chunk=st.integers(1, 200),
    centre=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
    offset=st.sampled_from([0.0, 3.0, -100.0]),
)
def test_every_path_agrees_with_the_readable_arithmetic(
    layout: str,
    r: int,
    chunk: int,
    centre: bool,
    seed: int,
    offset: float,
) -> None:
    make, axes, along = LAYOUTS[layout]
    shape = make(r)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 2.0 + offset
    d = rng.standard_normal(shape)
    scale = None if along is None else _param(rng, shape, along)
    shift = None if along is None else _param(rng, shape, along)
    shared = None if scale is None else tuple(i for i, s in enumerate(scale.shape) if s == 1)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fused, "CHUNK", chunk)
        st_fast, out = fused.standardise_affine(x, axes, 1e-5, centre, scale, shift)
        passed, d_scale, d_shift = fused.standardise_affine_backward(st_fast, d, scale, shared)

    slow = standardise(x, axes, 1e-5, centre)
    want_out = slow.z if scale is None else slow.z * scale + shift
    want_passed = standardise_backward(slow, d if scale is None else d * scale)
    tol = 1e-12
    np.testing.assert_allclose(st_fast.z, slow.z, rtol=tol, atol=tol * np.abs(slow.z).max())
    np.testing.assert_allclose(out, want_out, rtol=tol, atol=tol * np.abs(want_out).max())
    for name in ("variance", "deviation") + (("mean",) if centre else ()):
        a, b = getattr(slow, name), getattr(st_fast, name)
        assert b.shape == a.shape
        np.testing.assert_allclose(b, a, rtol=tol, atol=tol * np.abs(a).max())
    terms = np.abs(want_passed).max() + np.abs(d / slow.deviation).max()
    np.testing.assert_allclose(passed, want_passed, rtol=1e-11, atol=1e-11 * terms)
    if shared is None:
        assert d_scale is None and d_shift is None
    else:
        assert d_scale is not None and d_shift is not None
        np.testing.assert_allclose(
            d_scale,
            np.sum(d * slow.z, axis=shared, keepdims=True),
            rtol=1e-11,
            atol=1e-11 * np.abs(d).sum(),
        )
        np.testing.assert_allclose(
            d_shift,
            np.sum(d, axis=shared, keepdims=True),
            rtol=1e-11,
            atol=1e-11 * np.abs(d).sum(),
        )


SLABBED = {
    # name: (the layer, its block's shape, CHUNK that cuts the block into slabs of two rows)
    "batch": (lambda: nc.BatchNorm.create(6), (40, 6), 12),
    "layer": (lambda: nc.LayerNorm.create(6), (40, 6), 12),
    "RMS": (lambda: nc.RMSNorm.create(6), (40, 6), 12),
    # one scale a row (a channel of an image): the rows path takes it as a column
    "instance": (lambda: nc.InstanceNorm.create(6), (5, 6, 4, 6), 48),
    # one scale a channel, three channels a row, repeating every two rows (the groups)
    "group": (lambda: nc.GroupNorm.create(6, 2), (5, 6, 4, 6), 144),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(SLABBED))
def test_layers_on_a_block_cut_into_slabs(monkeypatch: pytest.MonkeyPatch, name, dtype) -> None:
    """A layer gives the same answer (to rounding) whether its block is one slab or many."""
    make, shape, chunk = SLABBED[name]
    rng = np.random.default_rng(3)
    layer = make()
    layer = type(layer)(
        **{**layer.__dict__, "scale": rng.standard_normal(6) + 1.0, "shift": rng.standard_normal(6)}
    )
    x = (rng.standard_normal(shape) * 3.0 + 1.0).astype(dtype)
    d = rng.standard_normal(shape).astype(dtype)
    whole = layer.forward(x, "training")
    whole_g = layer.backward(whole, d)
    monkeypatch.setattr(fused, "CHUNK", chunk)
    cut = layer.forward(x, "training")
    cut_g = layer.backward(cut, d)
    tol = 1e-12 if dtype == np.float64 else 2e-5
    for a, b in [
        (whole.output, cut.output),
        (whole_g.passed_down, cut_g.passed_down),
        (whole_g.slopes["scale"], cut_g.slopes["scale"]),
        (whole_g.slopes["shift"], cut_g.slopes["shift"]),
    ]:
        assert b.dtype == a.dtype == dtype and b.shape == a.shape
        np.testing.assert_allclose(b, a, rtol=tol, atol=tol * np.abs(a).max())


def test_the_rows_plan_tells_the_layers_apart() -> None:
    plan = fused._rows
    instance = np.ones((1, 6, 1, 1))
    assert plan((5, 6, 4, 6), (2, 3), instance, instance) == fused._RowPlan("row", 2, 2, 1)
    assert plan((5, 6, 4, 6), (2, 3), np.ones((1, 1, 4, 6)), None) == fused._RowPlan(
        "position", 2, 2, 1
    )  # layer norm over the last two axes
    group = np.ones((1, 2, 3, 1, 1))  # two groups of three channels: one scale a channel
    assert plan((5, 2, 3, 4, 4), (2, 3, 4), group, group) == fused._RowPlan("position", 2, 1, 2)
    assert plan((5, 4), (0,), None, None) is None  # batch norm: not rows
    stacked = np.ones((3, 1, 6))  # one scale a model and position: varies before the rows' axis
    assert plan((3, 5, 6), (2,), stacked, None) is None


def test_the_quick_value_check_refuses_what_the_exact_one_does() -> None:
    """One BLAS dot decides the common case; NaN, inf and large values still get their own error,
    contiguous or not."""
    x = np.ones((8, 4))
    assert check_values(x, 8, "x") >= 1.0
    for bad, error in [
        (np.nan, NonFiniteError),
        (np.inf, NonFiniteError),
        (-np.inf, NonFiniteError),
        (1e200, MagnitudeError),
    ]:
        y = x.copy()
        y[3, 2] = bad
        for block in (y, y[:, ::2]):  # contiguous (the dot) and not (the exact reading)
            assert not block.flags.c_contiguous or block is y
            with pytest.raises(error):
                check_values(block, 8, "x")


def test_values_near_the_limit_pass_when_only_their_sum_of_squares_overflows() -> None:
    """The dot product of a float32 block of large (allowed) values overflows; the exact check
    then accepts the block instead of refusing it."""
    limit = _magnitude_limit(np.dtype(np.float32), 64)
    x = np.full((64, 64), 0.9 * limit, dtype=np.float32)
    with np.errstate(over="ignore"):
        assert not np.isfinite(np.dot(x.reshape(-1), x.reshape(-1)))
    assert check_values(x, 64, "x") == pytest.approx(0.9 * limit, rel=1e-6)
    x[0, 0] = 1.1 * limit
    with pytest.raises(MagnitudeError):
        check_values(x, 64, "x")


WIDE = {
    # name: (shape given rows r and run m, statistic axes, axes the scale varies along)
    "row": (lambda r, m: (r, m), (1,), (1,)),
    "batch": (lambda r, m: (r, m), (0,), (1,)),
    "instance": (lambda r, m: (r, 3, 2, m // 2), (2, 3), (1,)),
    "group": (lambda r, m: (r, 2, 2, 2, m // 2), (2, 3, 4), (1, 2)),
    "image batch": (lambda r, m: (r, 3, 2, m // 2), (0, 2, 3), (1,)),
}


@settings(max_examples=60, deadline=None, derandomize=os.environ.get("CI") == "true")
@given(
    layout=st.sampled_from(sorted(WIDE)),
    r=st.integers(1, 5),
    m=st.sampled_from([256, 300, 512, 1000, 1024]),
    dtype=st.sampled_from([np.float32, np.float64]),
    slabs=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_the_short_ufunc_buffer_changes_no_bit(
    layout: str, r: int, m: int, dtype: type, slabs: bool, seed: int
) -> None:
    """Runs of 2 KiB or more go through numpy with its ufunc buffer cut to the run, for speed
    only: every figure matches the default buffer bit for bit, on every path, and the buffer
    size is back to what it was afterwards."""
    make, axes, along = WIDE[layout]
    shape = make(r, m)
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 2.0 + 3.0).astype(dtype)
    d = rng.standard_normal(shape).astype(dtype)
    scale = _param(rng, shape, along).astype(dtype)
    shift = _param(rng, shape, along).astype(dtype)
    shared = tuple(i for i, size in enumerate(scale.shape) if size == 1)

    def run() -> list[np.ndarray]:
        st_, out = fused.standardise_affine(x, axes, 1e-5, True, scale, shift)
        passed, d_scale, d_shift = fused.standardise_affine_backward(st_, d, scale, shared)
        assert d_scale is not None and d_shift is not None
        return [st_.z, out, st_.mean, st_.variance, st_.deviation, passed, d_scale, d_shift]

    before = np.getbufsize()
    with pytest.MonkeyPatch.context() as patch:
        if slabs:
            patch.setattr(fused, "CHUNK", x.size // 3)
        short = run()
        assert np.getbufsize() == before
        patch.setattr(fused, "_row_buffers", lambda n, dtype: contextlib.nullcontext())
        default = run()
    for a, b in zip(short, default, strict=True):
        assert a.dtype == b.dtype == dtype
        assert np.array_equal(a, b)


def test_the_inner_run_is_where_every_operand_keeps_its_layout() -> None:
    run = fused._inner_run
    assert run((64, 1024), [(64, 1), (1, 1024)]) == 1024  # layer norm: stats and scale
    assert run((64, 1024), [(1, 1024)]) == 1024  # batch norm
    assert run((8, 16, 64, 64), [(8, 16, 1, 1), (1, 16, 1, 1)]) == 64 * 64  # instance norm
    assert run((8, 4, 4, 64, 64), [(8, 4, 1, 1, 1), (1, 4, 4, 1, 1)]) == 64 * 64  # group norm
    assert run((8, 1, 5), [(8, 1, 1)]) == 5  # size-1 axes do not cut the run
    assert run((7,), []) == 7
    assert run((2, 1, 3), [(3,), (2, 1, 1)]) == 3  # missing leading axes count as 1
    assert run((), [()]) == 1


def test_the_short_ufunc_buffer_is_undone_when_the_work_inside_fails() -> None:
    before = np.getbufsize()
    with pytest.raises(RuntimeError), fused._row_buffers(4096, np.dtype(np.float32)):
        assert np.getbufsize() == 4096
        raise RuntimeError("inside")
    assert np.getbufsize() == before
    with fused._row_buffers(100, np.dtype(np.float32)):  # 400 bytes a row: left as it was
        assert np.getbufsize() == before


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_quick_finite_test_agrees_with_the_exact_one(dtype: type) -> None:
    """Contiguous blocks of 256 values and more are first read by one dot product; a NaN or
    infinity anywhere is still found, and finite values whose squares overflow still pass."""
    big = np.ones((300, 300), dtype)  # 90,000 values: the quick path
    assert all_finite(big) and all_finite(big[:, ::2])
    huge = np.full((300, 300), np.finfo(dtype).max / 2, dtype)  # finite, the sum of squares not
    assert all_finite(huge)
    for bad in (np.nan, np.inf, -np.inf):
        y = big.copy()
        y[123, 45] = bad
        assert not all_finite(y) and not all_finite(y[:, 1::2])
        assert not all_finite(y[120:125])  # 1,500 values: the quick path
        assert not all_finite(y[123, 40:50])  # under 256 values: the exact test


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_quick_finite_test_inside_a_call_whose_callback_asks_numpy_to_raise(
    dtype: type,
) -> None:
    """Inside a normcore call the quick test's dot product runs without an error-state context of
    its own; a callback there that asks numpy to raise (as a user's function handed to the
    oracle could) still gets the exact answer, never a FloatingPointError."""
    huge = np.full((30, 30), np.finfo(dtype).max / 2, dtype)  # finite, the sum of squares not
    tiny = np.full((30, 30), np.finfo(dtype).smallest_subnormal, dtype)  # squares underflow
    edge = np.full((30, 30), 0.9 * _magnitude_limit(np.dtype(dtype), 1), dtype)  # its sum overflows
    bad = huge.copy()
    bad[3, 4] = np.nan

    @own_error_state
    def call_back() -> tuple[bool, ...]:
        before = np.seterr(all="raise")
        try:
            largest = check_values(edge, 1)
            return all_finite(huge), all_finite(tiny), all_finite(bad), largest == edge[0, 0]
        finally:
            np.seterr(**before)

    assert call_back() == (True, True, False, True)


IMAGE_STATS = {
    # name: (shape given r, shape of the handed-in statistics, shape of scale and shift)
    "batch": (lambda r: (r, 7), (7,), (1, 7)),
    "wide batch": (lambda r: (r, 600), (1, 600), (1, 600)),
    "image batch": (lambda r: (r, 3, 4, 5), (3, 1, 1), (1, 3, 1, 1)),
    "stacked batch": (lambda r: (2, r, 6), (2, 1, 6), (2, 1, 6)),
}


@settings(max_examples=120, deadline=None, derandomize=os.environ.get("CI") == "true")
@given(
    layout=st.sampled_from(sorted(IMAGE_STATS)),
    r=st.integers(1, 9),
    slabs=st.booleans(),
    centred=st.booleans(),
    affine=st.booleans(),
    dtype=st.sampled_from([np.float32, np.float64]),
    seed=st.integers(0, 2**32 - 1),
)
def test_predicting_by_given_figures_matches_the_readable_form_bit_for_bit(
    layout: str, r: int, slabs: bool, centred: bool, affine: bool, dtype: type, seed: int
) -> None:
    """`standardise_by_affine` (the layers' predicting path) makes the same operations as
    `standardise_by` and ``z * scale + shift`` in the same order: the same bits, whole or in
    slabs, whatever the statistics' rank."""
    make, stat_shape, param_shape = IMAGE_STATS[layout]
    shape = make(r)
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 3.0 + 1.0).astype(dtype)
    mean = rng.standard_normal(stat_shape).astype(dtype) if centred else None
    deviation = (rng.random(stat_shape) + 0.5).astype(dtype)
    scale = rng.standard_normal(param_shape).astype(dtype) if affine else None
    shift = rng.standard_normal(param_shape).astype(dtype) if affine else None
    axes = (0,) if layout != "image batch" else (0, 2, 3)
    with pytest.MonkeyPatch.context() as patch:
        if slabs:
            patch.setattr(fused, "CHUNK", max(1, x.size // 4))
        st_fast, out = fused.standardise_by_affine(x, mean, deviation, axes, scale, shift)
    slow = standardise_by(x, mean, deviation, axes)
    want = slow.z if scale is None else slow.z * scale + shift
    assert st_fast.z.dtype == out.dtype == dtype
    assert np.array_equal(st_fast.z, slow.z) and np.array_equal(out, want)
    assert not st_fast.from_block and st_fast.count == slow.count


LAYERS_AT_BOOK_SIZE = {
    # the book's largest block has 8,000 values: each layer on a block of that size
    "batch": (lambda: nc.BatchNorm.create(8), (1000, 8)),
    "layer": (lambda: nc.LayerNorm.create(8), (1000, 8)),
    "RMS": (lambda: nc.RMSNorm.create(8), (1000, 8)),
    "image batch": (lambda: nc.ImageBatchNorm.create(5), (40, 5, 5, 8)),
    "instance": (lambda: nc.InstanceNorm.create(5), (40, 5, 5, 8)),
    "group": (lambda: nc.GroupNorm.create(4, 2), (50, 4, 5, 8)),
}


@pytest.mark.parametrize("name", sorted(LAYERS_AT_BOOK_SIZE))
def test_a_book_sized_block_runs_the_readable_routine(monkeypatch, name) -> None:
    """Below one slab no layer touches normcore.fast: the routine in standardise.py answers,
    value for value as written there."""
    from normcore import _normaliser, fast

    def refuse(*args, **kwargs):
        raise AssertionError("a book-sized block reached normcore.fast")

    calls = []
    readable = _normaliser.standardise
    monkeypatch.setattr(fast, "forward", refuse)
    monkeypatch.setattr(fast, "backward", refuse)
    monkeypatch.setattr(_normaliser, "standardise", lambda *a: calls.append(a) or readable(*a))
    make, shape = LAYERS_AT_BOOK_SIZE[name]
    layer = make()
    x = np.random.default_rng(0).standard_normal(shape)
    response = layer.forward(x, "training")
    layer.backward(response, np.ones(shape))
    assert len(calls) == 1 and response.cache.z is not None
    view, axes = layer.statistics_layout(x)
    np.testing.assert_array_equal(
        response.output,
        readable(view, axes, 1e-5, layer.centred).z.reshape(shape) * layer.aligned(layer.scale, x)
        + layer.aligned(layer.shift, x),
    )


@pytest.mark.parametrize("name", sorted(LAYERS_AT_BOOK_SIZE))
def test_a_block_beyond_one_slab_takes_the_fast_path(monkeypatch, name) -> None:
    from normcore import fast

    taken = []
    forward = fast.forward
    monkeypatch.setattr(fast, "forward", lambda *a: taken.append(1) or forward(*a))
    monkeypatch.setattr(fused, "CHUNK", 4000)  # the 8,000 values are now two slabs
    make, shape = LAYERS_AT_BOOK_SIZE[name]
    make().forward(np.random.default_rng(0).standard_normal(shape), "training")
    assert taken == [1]


FAR = {  # a block beyond one slab, statistics down the rows or over image axes, and a layer
    "batch": ((16385, 4), (0,)),
    "batch, one column": ((65537, 1), (0,)),
    "image batch": ((64, 16, 8, 9), (0, 2, 3)),
    "layer": ((4096, 1024), (1,)),
    "instance": ((64, 16, 8, 9), (2, 3)),
}


@pytest.mark.parametrize("name", sorted(FAR))
def test_float32_far_from_zero_keeps_the_spread(name: str) -> None:
    """Regression (issue 16): float32 values 5,000 spreads from zero (5 +- 0.001) on a block
    beyond one slab. The column sums were taken in float32 and the mean lost the spread's digits
    (z off by 3e-3 to 1.6e-2); summed in float64, z is off by no more than the half-ulp the mean
    is stored to (about 2.4e-4 here), on the fast path and the readable routine alike."""
    shape, axes = FAR[name]
    x = (np.random.default_rng(5).standard_normal(shape) * 1e-3 + 5.0).astype(np.float32)
    assert fused.CHUNK < x.size
    exact = standardise(x.astype(np.float64), axes, 1e-12)
    half_ulp = float(np.spacing(np.float32(5.0))) / 2  # the mean's own rounding
    limit = 1.2 * half_ulp / exact.deviation  # magnified by the deviation, a margin for the rest
    for got in (fused.standardise_fast(x, axes, 1e-12), standardise(x, axes, 1e-12)):
        assert got.z.dtype == np.float32
        assert np.all(np.abs(got.z - exact.z) < limit)
