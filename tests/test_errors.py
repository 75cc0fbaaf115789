"""Bad input gets a typed error, raised before any arithmetic, with the caller's array untouched.

Every error is a `NormcoreError` and a `ValueError`, and its message says what was expected and
what came. Input the arithmetic can answer honestly (tiny and large-but-safe magnitudes, a
near-zero direction) is answered.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import normcore as nc

pytestmark = pytest.mark.numeric  # figures from float arithmetic: make test-arith reruns it

EXAMPLES = settings(max_examples=40, deadline=None, derandomize=os.environ.get("CI") == "true")


block = nc.four_rows  # the worked four rows, a fresh copy each call


def raises(error: type[nc.NormcoreError], call: Callable[[], object], *fragments: str) -> str:
    """`call()` raises `error`, which is a NormcoreError and a ValueError, with a message
    naming what was expected and each of `fragments` (what came)."""
    with pytest.raises(error) as caught:
        call()
    assert isinstance(caught.value, nc.NormcoreError)
    assert isinstance(caught.value, ValueError)
    message = str(caught.value)
    assert "expected" in message
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    return message


def untouched(error, call: Callable[[np.ndarray], object], x: np.ndarray, *fragments) -> None:
    """As `raises`, and `x` (the array handed in) is byte-for-byte what it was."""
    copy = x.copy()
    raises(error, lambda: call(x), *fragments)
    assert x.dtype == copy.dtype and x.shape == copy.shape
    if x.dtype.kind in "fiucb":
        np.testing.assert_array_equal(x, copy)
    else:
        assert x.tolist() == copy.tolist()


def test_the_hierarchy() -> None:
    for name in nc.__all__:
        thing = getattr(nc, name)
        if isinstance(thing, type) and name.endswith("Error"):
            assert issubclass(thing, nc.NormcoreError)
            assert issubclass(thing, ValueError)


# ----------------------------------------------------------------------------- shapes


FORWARDS = {
    "batch": lambda x: nc.BatchNorm.create(2).forward(x, "training"),
    "layer": lambda x: nc.LayerNorm.create(2).forward(x),
    "RMS": lambda x: nc.RMSNorm.create(2).forward(x),
    "dense": lambda x: nc.Dense(weights=np.ones((2, 3))).forward(x),
    "weight norm": lambda x: nc.WeightNormDense(direction=np.ones((2, 3))).forward(x),
}


@pytest.mark.parametrize("name", ["batch", "dense", "weight norm"])
@pytest.mark.parametrize("shape", [(2,), (1, 4, 2), (1, 1, 4, 2)])
def test_wrong_rank(name: str, shape) -> None:
    untouched(nc.ShapeError, FORWARDS[name], np.ones(shape), "rank", str(shape))


@pytest.mark.parametrize("name", ["batch", "layer", "RMS", "dense", "weight norm"])
def test_wrong_feature_count(name: str) -> None:
    untouched(nc.ShapeError, FORWARDS[name], np.ones((4, 3)), "(4, 3)")


def test_layer_norm_rank_too_small_for_normalized_shape() -> None:
    layer = nc.LayerNorm.create((2, 3))
    untouched(nc.ShapeError, layer.forward, np.ones(3), "(3,)")
    untouched(nc.ShapeError, layer.forward, np.ones((4, 3, 2)), "(2, 3)", "(4, 3, 2)")


@pytest.mark.parametrize(
    "layer",
    [
        nc.ImageBatchNorm.create(3),
        nc.InstanceNorm.create(3),
        nc.GroupNorm.create(3, 3),
    ],
    ids=["image batch", "instance", "group"],
)
def test_image_layers_want_four_axes_and_their_channels(layer) -> None:
    untouched(nc.ShapeError, layer.forward, np.ones((2, 3, 4)), "rank 4", "(2, 3, 4)")
    untouched(nc.ShapeError, layer.forward, np.ones((2, 4, 2, 2)), "3", "(2, 4, 2, 2)")


def test_stacked_layer_wants_its_stack() -> None:
    layer = nc.BatchNorm.create(2, stack=(3,))
    untouched(nc.ShapeError, layer.forward, np.ones((4, 2, 2)), "(4, 2, 2)")
    untouched(nc.ShapeError, layer.forward, np.ones((4, 2)), "rank 3", "(4, 2)")


@pytest.mark.parametrize("name", list(FORWARDS))
def test_empty_batch(name: str) -> None:
    untouched(nc.EmptyBatchError, FORWARDS[name], np.ones((0, 2)), "(0, 2)")


def test_empty_images() -> None:
    untouched(
        nc.EmptyBatchError, nc.InstanceNorm.create(3).forward, np.ones((0, 3, 2, 2)), "(0, 3, 2, 2)"
    )


def test_ragged_lists() -> None:
    raises(
        nc.ShapeError, lambda: nc.BatchNorm.create(2).forward([[1.0, 7.0], [1.0]]), "rectangular"
    )
    raises(
        nc.ShapeError,
        lambda: nc.Dense(weights=np.ones((2, 2))).forward([[1, 2], [3]]),
        "rectangular",
    )


def test_d_out_of_the_wrong_shape() -> None:
    layer = nc.BatchNorm.create(2)
    response = layer.forward(block(), "training")
    d = np.ones((4, 3))
    untouched(nc.ShapeError, lambda a: layer.backward(response, a), d, "(4, 2)", "(4, 3)")
    untouched(nc.ShapeError, lambda a: layer.backward(response, a), np.ones((2, 4)), "(2, 4)")
    dense = nc.Dense(weights=np.ones((2, 3)))
    r = dense.forward(block())
    untouched(nc.ShapeError, lambda a: dense.backward(r, a), np.ones((4, 2)), "(4, 3)")


# ----------------------------------------------------------------------------- non-finite


BAD = {"nan": math.nan, "+inf": math.inf, "-inf": -math.inf}


@pytest.mark.parametrize("bad", list(BAD))
@pytest.mark.parametrize("name", list(FORWARDS))
def test_non_finite_x(name: str, bad: str) -> None:
    x = block()
    x[2, 1] = BAD[bad]
    untouched(nc.NonFiniteError, FORWARDS[name], x, "finite", "1 NaN or infinite")


@pytest.mark.parametrize("bad", list(BAD))
@pytest.mark.parametrize(
    "layer",
    [
        nc.BatchNorm.create(2),
        nc.LayerNorm.create(2),
        nc.Dense(weights=np.ones((2, 2))),
        nc.ReLU(),
        nc.Sigmoid(),
    ],
    ids=["batch", "layer", "dense", "ReLU", "sigmoid"],
)
def test_non_finite_d_out(layer, bad: str) -> None:
    response = layer.forward(block(), "training")
    d = np.ones((4, 2))
    d[0, 0] = d[3, 1] = BAD[bad]
    untouched(nc.NonFiniteError, lambda a: layer.backward(response, a), d, "2 NaN or infinite")


@st.composite
def with_a_non_finite_cell(draw):
    rows, features = draw(st.integers(1, 6)), draw(st.integers(1, 5))
    x = draw(hnp.arrays(np.float64, (rows, features), elements=st.floats(-1e3, 1e3)))
    positions = draw(
        st.lists(
            st.tuples(st.integers(0, rows - 1), st.integers(0, features - 1)),
            min_size=1,
            max_size=4,
            unique=True,
        )
    )
    for r, c in positions:
        x[r, c] = draw(st.sampled_from([math.nan, math.inf, -math.inf]))
    return x, len(positions)


@EXAMPLES
@given(with_a_non_finite_cell(), st.sampled_from(["training", "predicting"]))
def test_any_non_finite_cell_is_refused(case, purpose: str) -> None:
    x, count = case
    f = x.shape[1]
    for layer in (
        nc.BatchNorm.create(f),
        nc.LayerNorm.create(f),
        nc.RMSNorm.create(f),
        nc.Dense(weights=np.ones((f, 2))),
        nc.Tanh(),
    ):
        untouched(
            nc.NonFiniteError,
            lambda a, layer=layer: layer.forward(a, purpose),
            x,
            f"{count} NaN or infinite",
        )


@EXAMPLES
@given(with_a_non_finite_cell())
def test_any_non_finite_slope_is_refused(case) -> None:
    d, count = case
    layer = nc.BatchNorm.create(d.shape[1])
    response = layer.forward(np.arange(d.size, dtype=float).reshape(d.shape) ** 2, "training")
    untouched(
        nc.NonFiniteError, lambda a: layer.backward(response, a), d, f"{count} NaN or infinite"
    )


def test_non_finite_parameter() -> None:
    raises(
        nc.NonFiniteError, lambda: nc.BatchNorm(scale=[1.0, math.nan], shift=[0.0, 0.0]), "scale"
    )
    raises(nc.NonFiniteError, lambda: nc.Dense(weights=[[math.inf]]), "weights")


# ----------------------------------------------------------------------------- dtypes


DTYPE_BLOCKS = {
    "bool": np.array([[True, False], [False, True]]),
    "object": np.array([[1.0, 2.0], [3.0, None]], dtype=object),
    "complex": np.array([[1 + 2j, 2], [3, 4]]),
    "str": np.array([["1", "2"], ["3", "4"]]),
}


@pytest.mark.parametrize("kind", list(DTYPE_BLOCKS))
@pytest.mark.parametrize("name", list(FORWARDS))
def test_dtype_refused(name: str, kind: str) -> None:
    x = DTYPE_BLOCKS[kind]
    untouched(nc.DtypeError, FORWARDS[name], x, str(x.dtype))


@pytest.mark.parametrize("kind", list(DTYPE_BLOCKS))
def test_dtype_refused_in_d_out_and_activations(kind: str) -> None:
    layer = nc.BatchNorm.create(2)
    response = layer.forward(np.array([[1.0, 2.0], [3.0, 5.0]]), "training")
    x = DTYPE_BLOCKS[kind]
    untouched(nc.DtypeError, lambda a: layer.backward(response, a), x, "d_out", str(x.dtype))
    untouched(nc.DtypeError, nc.ReLU().forward, x, str(x.dtype))


# ----------------------------------------------------------------------------- settings


@pytest.mark.parametrize(
    ("epsilon", "shown"),
    [(0, "0.0"), (0.0, "0.0"), (-1e-5, "-1e-05"), (math.nan, "nan"), (math.inf, "inf")],
)
@pytest.mark.parametrize(
    "make",
    [
        lambda e: nc.BatchNorm.create(2, epsilon=e),
        lambda e: nc.LayerNorm.create(2, epsilon=e),
        lambda e: nc.RMSNorm.create(2, epsilon=e),
        lambda e: nc.InstanceNorm.create(2, epsilon=e),
        lambda e: nc.GroupNorm.create(2, 1, epsilon=e),
        lambda e: nc.adain(np.ones((1, 1, 2, 2)), np.ones((1, 1, 2, 2)), epsilon=e),
    ],
    ids=["batch", "layer", "RMS", "instance", "group", "adain"],
)
def test_epsilon_refused(make, epsilon, shown: str) -> None:
    raises(nc.EpsilonError, lambda: make(epsilon), "greater than 0", shown)


@pytest.mark.parametrize(
    ("momentum", "shown"),
    [(1, "1.0"), (1.0, "1.0"), (-0.1, "-0.1"), (math.nan, "nan"), (True, "True")],
)
def test_momentum_refused(momentum, shown: str) -> None:
    raises(nc.MomentumError, lambda: nc.BatchNorm.create(2, momentum=momentum), "[0, 1)", shown)


def test_momentum_zero_is_answered() -> None:
    # Momentum 0 keeps nothing: the running figures become the batch's (mean 6, variance 9).
    layer = nc.BatchNorm.create(2, momentum=0.0)
    new = layer.step(layer.backward(layer.forward(block(), "training"), np.zeros((4, 2))), 1.0)
    np.testing.assert_array_equal(new.running_mean, [8.0, 6.0])
    np.testing.assert_array_equal(new.running_variance, [81.0, 9.0])


@pytest.mark.parametrize(
    ("purpose", "shown"),
    [
        ("train", "'train'"),
        (None, "None"),
        (1, "1"),
        ("Training", "'Training'"),
        ("eval", "'eval'"),
    ],
)
@pytest.mark.parametrize(
    "layer",
    [
        nc.BatchNorm.create(2),
        nc.LayerNorm.create(2),
        nc.Dense(weights=np.ones((2, 2))),
        nc.ReLU(),
        nc.WeightNormDense(direction=np.ones((2, 2))),
    ],
    ids=["batch", "layer", "dense", "ReLU", "weight norm"],
)
def test_unknown_purpose(layer, purpose, shown: str) -> None:
    x = block()
    untouched(nc.PurposeError, lambda a: layer.forward(a, purpose), x, "'predicting'", shown)


@pytest.mark.parametrize(("channels", "groups"), [(6, 4), (3, 2), (4, 0), (4, -2), (4, True)])
def test_group_count_must_divide_channels(channels: int, groups) -> None:
    raises(
        nc.SettingError,
        lambda: nc.GroupNorm.create(channels, groups),
        "divides",
        f"{channels} channels",
        repr(groups),
    )


@pytest.mark.parametrize("rate", [math.nan, math.inf, -math.inf, "fast", None])
def test_non_finite_rate(rate) -> None:
    layer = nc.BatchNorm.create(2)
    gradient = layer.backward(layer.forward(block(), "training"), np.ones((4, 2)))
    raises(
        nc.RateError,
        lambda: layer.step(gradient, rate),
        "finite number",
        repr(rate) if not isinstance(rate, float) else str(rate),
    )
    dense = nc.Dense(weights=np.ones((2, 2)))
    g = dense.backward(dense.forward(block()), np.ones((4, 2)))
    raises(nc.RateError, lambda: dense.step(g, rate), "finite number")


# ----------------------------------------------------------------------------- directions


def test_zero_direction_refused() -> None:
    direction = np.array([[1.0, 0.0, 2.0], [2.0, 0.0, 1.0]])
    copy = direction.copy()
    raises(
        nc.ZeroDirectionError,
        lambda: nc.WeightNormDense(direction=direction),
        "length > 0",
        "length 0",
        "[[1]]",
    )
    np.testing.assert_array_equal(direction, copy)
    raises(
        nc.ZeroDirectionError,
        lambda: nc.WeightNormDense(direction=np.zeros((2, 1)), magnitude=[1.0]),
        "length 0",
    )


def test_zero_direction_in_a_stack_refused() -> None:
    direction = np.ones((3, 2, 2))
    direction[2, :, 1] = 0.0
    raises(nc.ZeroDirectionError, lambda: nc.WeightNormDense(direction=direction), "[[2, 1]]")


def test_near_zero_direction_is_answered() -> None:
    # Direction (1e-300, -1e-300) has length 1e-300 * sqrt(2): its unit vector is
    # (1, -1) / sqrt(2), so with magnitude 2 the effective column is (sqrt(2), -sqrt(2)).
    direction = np.array([[1e-300, 1.0], [-1e-300, 0.0]])
    layer = nc.WeightNormDense(direction=direction, magnitude=np.array([2.0, 3.0]))
    x = np.array([[1.0, 2.0], [3.0, -1.0]])
    out = layer.forward(x).output
    root2 = math.sqrt(2.0)
    expected = np.array([[root2 - 2 * root2, 3.0], [3 * root2 + root2, 9.0]])
    np.testing.assert_allclose(out, expected, rtol=1e-14)


# ----------------------------------------------------------------------------- foreign values


def test_response_handed_to_another_layer() -> None:
    a, b = nc.BatchNorm.create(2), nc.BatchNorm.create(2)  # equal values, different layers
    response = a.forward(block(), "training")
    raises(
        nc.ForeignResponseError, lambda: b.backward(response, np.ones((4, 2))), "another BatchNorm"
    )
    dense = nc.Dense(weights=np.ones((2, 2)))
    raises(
        nc.ForeignResponseError,
        lambda: dense.backward(response, np.ones((4, 2))),
        "this Dense",
        "another BatchNorm",
    )
    raises(nc.ForeignResponseError, lambda: a.backward(block(), np.ones((4, 2))), "ndarray")
    r1 = nc.ReLU().forward(block())
    raises(nc.ForeignResponseError, lambda: nc.ReLU().backward(r1, np.ones((4, 2))), "ReLU")


def test_response_of_a_stepped_layer_is_foreign_to_the_new_layer() -> None:
    old = nc.BatchNorm.create(2)
    response = old.forward(block(), "training")
    new = old.step(old.backward(response, np.ones((4, 2))), 0.1)
    raises(nc.ForeignResponseError, lambda: new.backward(response, np.ones((4, 2))), "another")


def test_gradient_handed_to_another_layer() -> None:
    a, b = nc.BatchNorm.create(2), nc.BatchNorm.create(2)
    gradient = a.backward(a.forward(block(), "training"), np.ones((4, 2)))
    raises(nc.ForeignResponseError, lambda: b.step(gradient, 0.1), "gradient", "another")
    dense = nc.Dense(weights=np.ones((2, 2)))
    raises(nc.ForeignResponseError, lambda: dense.step(gradient, 0.1), "Dense")
    raises(nc.ForeignResponseError, lambda: a.step({"scale": np.ones(2)}, 0.1), "dict")
    tanh = nc.Tanh()
    r = tanh.forward(block())
    raises(
        nc.ForeignResponseError,
        lambda: nc.Tanh().step(tanh.backward(r, np.ones((4, 2))), 0.1),
        "Tanh",
    )


# ----------------------------------------------------------------------------- magnitudes


@pytest.mark.parametrize("name", ["batch", "layer", "RMS", "dense"])
def test_huge_magnitudes_refused(name: str) -> None:
    x = block() * 1e200
    untouched(nc.MagnitudeError, FORWARDS[name], x, "magnitudes up to", "2.3e+201")


def test_huge_slopes_refused() -> None:
    layer = nc.LayerNorm.create(2)
    response = layer.forward(block(), "training")
    untouched(
        nc.MagnitudeError, lambda a: layer.backward(response, a), np.full((4, 2), 1e200), "1e+200"
    )


def test_huge_float32_refused() -> None:
    x = (block() * 1e19).astype(np.float32)
    untouched(nc.MagnitudeError, FORWARDS["batch"], x, "float32")


@pytest.mark.parametrize("size", [1e150, 1e-150])
@pytest.mark.parametrize("name", ["batch", "layer", "RMS", "dense"])
def test_large_and_tiny_magnitudes_answered(name: str, size: float) -> None:
    x = block() * size
    out = FORWARDS[name](x).output
    assert np.all(np.isfinite(out))
    if name == "batch":
        # Standardising is scale-free once the variance dwarfs epsilon: the worked column's
        # 0.3333, 1.0000, -1.6667, 0.3333 (seed 000). At 1e-150 the variance is far below
        # epsilon, so the answer is (x - m) / sqrt(eps), tiny.
        if size > 1:
            np.testing.assert_allclose(out[:, 1], [1 / 3, 1.0, -5 / 3, 1 / 3], atol=1e-12)
        else:
            assert np.max(np.abs(out)) < 1e-140


def test_image_helpers_refuse_huge_magnitudes() -> None:
    a = np.full((1, 3, 2, 2), 1e200)
    untouched(nc.MagnitudeError, nc.local_response_normalisation, a, "1e+200")
    untouched(nc.MagnitudeError, lambda c: nc.adain(c, np.ones((1, 3, 2, 2))), a, "1e+200")
    untouched(nc.MagnitudeError, lambda s: nc.adain(np.ones((1, 3, 2, 2)), s), a, "1e+200")


def test_dense_backward_refuses_an_overflowing_slope_without_a_warning() -> None:
    """Found by the API fuzz: an input of 1.3e17 times a slope of 1.3e299 overflows the weights'
    slope; it is refused as a MagnitudeError, not a RuntimeWarning."""
    layer = nc.Dense(weights=np.array([[0.6709725]]))
    response = layer.forward(np.array([[1.2573022e17]]), "training")
    with pytest.raises(nc.MagnitudeError):
        layer.backward(response, np.array([[1.25730221e299]]))


# ------------------------------------------------------- found by an adversarial test (issue 16)
# Each was found by an independent test of the public API; each is fixed where it started.


def _lrn_by_hand(a: np.ndarray, size: int, alpha: float, beta: float, k: float) -> np.ndarray:
    """Local response normalisation from its definition, one channel and one window at a time,
    in exact Python floats (math.fsum)."""
    out = np.empty(a.shape)
    channels = a.shape[1]
    for index in np.ndindex(a.shape):
        n, c, h, w = index
        lo, hi = max(0, c - size // 2), min(channels - 1, c + (size - 1) // 2)
        window = math.fsum(float(a[n, j, h, w]) ** 2 for j in range(lo, hi + 1))
        out[index] = float(a[index]) / (k + alpha / size * window) ** beta
    return out


@pytest.mark.parametrize(
    ("a", "size", "alpha", "beta", "k"),
    [
        (np.array([1e10, 1.0, 1.0]).reshape(1, 3, 1, 1), 1, 1.0, 1.0, 1.0),
        (np.array([1.0, 1e10, 1.0, 2.0]).reshape(1, 4, 1, 1), 3, 1.0, 1.0, 1.0),
        (np.float32([1e8, 0, 0, 0, 0, -2709]).reshape(1, 6, 1, 1), 3, 0.01, 2.0, 2.0),
        (np.array([3.0, -1.0, 2.0, 1e-5, 7.0]).reshape(1, 5, 1, 1), 4, 0.5, 0.75, 2.0),
    ],
)
def test_lrn_window_sums_keep_small_channels_after_a_large_one(a, size, alpha, beta, k) -> None:
    """Window sums were differences of a running total: one large channel wiped out the small
    ones after it ([1e-10, 1, 1] where the formula gives [1e-10, 0.5, 0.5])."""
    got = nc.local_response_normalisation(a, size, alpha, beta, k)
    want = _lrn_by_hand(a, size, alpha, beta, k)
    assert got.dtype == a.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6 if a.dtype == np.float32 else 1e-13)


def test_lrn_size_beyond_the_channels_allocates_nothing_large() -> None:
    a = np.array([1.0, 2.0, 3.0]).reshape(1, 3, 1, 1)
    got = nc.local_response_normalisation(a, 10**15, 1.0, 1.0, 1.0)
    np.testing.assert_allclose(got, _lrn_by_hand(a, 10**15, 1.0, 1.0, 1.0), rtol=1e-13)
    raises(nc.SettingError, lambda: nc.local_response_normalisation(a, 10**400), "size")
    for name in ("k", "alpha", "beta"):
        raises(
            nc.SettingError, lambda n=name: nc.local_response_normalisation(a, **{n: 10**400}), name
        )


def test_lrn_k_too_small_for_float32_is_refused_without_a_warning() -> None:
    a = np.zeros((1, 2, 1, 1), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        raises(nc.SettingError, lambda: nc.local_response_normalisation(a, k=1e-300), "k")


FLOAT32_LAYERS = {
    "batch": lambda eps: nc.BatchNorm.create(2, epsilon=eps),
    "layer": lambda eps: nc.LayerNorm.create(2, epsilon=eps),
    "RMS": lambda eps: nc.RMSNorm.create(2, epsilon=eps),
}


@pytest.mark.parametrize("epsilon", [1e-50, 1e39])
@pytest.mark.parametrize("name", list(FLOAT32_LAYERS))
def test_epsilon_outside_float32s_range_is_refused_on_a_float32_block(name, epsilon) -> None:
    """1e-50 rounds to 0 in float32 (a constant column then gave NaN); 1e39 to infinity."""
    layer = FLOAT32_LAYERS[name](epsilon)
    x = np.float32([[5, 1], [5, 2], [5, 4]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        raises(nc.EpsilonError, lambda: layer.forward(x, "training"), "float32", repr(epsilon))
    assert np.all(np.isfinite(layer.forward(x.astype(np.float64), "training").output))


def test_epsilon_outside_float32s_range_is_refused_by_the_image_layers_and_adain() -> None:
    x = np.ones((2, 2, 2, 2), np.float32)
    for layer in (
        nc.InstanceNorm.create(2, epsilon=1e-50),
        nc.GroupNorm.create(2, 1, epsilon=1e-50),
    ):
        raises(nc.EpsilonError, lambda la=layer: la.forward(x, "training"), "float32")
    raises(nc.EpsilonError, lambda: nc.adain(x, x, epsilon=1e-50), "float32")


def test_binary_cross_entropy_is_finite_for_every_finite_logit() -> None:
    top = np.finfo(np.float64).max
    logits = np.array([top, top, -top, 1e308])
    loss = nc.binary_cross_entropy(logits, np.array([0.0, 0.5, 1.0, 0.0]))
    assert np.isfinite(loss.value) and np.all(np.isfinite(loss.slope))
    np.testing.assert_allclose(loss.value, top / 4 + top / 8 + top / 4 + 1e308 / 4, rtol=1e-12)


def test_bce_refusals_are_typed() -> None:
    z = np.zeros((2, 3))
    raises(nc.LabelError, lambda: nc.binary_cross_entropy(z, z + 2), "between 0 and 1")
    for axes in (1.5, "1", None, True):
        raises(
            nc.ShapeError, lambda a=axes: nc.binary_cross_entropy(z, z, stack_axes=a), "stack_axes"
        )


def test_layer_arrays_are_read_only_and_cannot_be_made_writable() -> None:
    layer = nc.BatchNorm.create(2)
    response = layer.forward(block(), "training")
    gradient = layer.backward(response, np.ones((4, 2)))
    stepped = layer.step(gradient, 0.1)
    arrays = [
        layer.scale,
        layer.shift,
        layer.running_mean,
        layer.running_variance,
        response.output,
        gradient.passed_down,
        *gradient.slopes.values(),
        stepped.scale,
        stepped.running_mean,
    ]
    for a in arrays:
        assert not a.flags.writeable
        with pytest.raises(ValueError):
            a.setflags(write=True)
    for old, new in [
        (layer.scale, stepped.scale),
        (layer.shift, stepped.shift),
        (layer.running_variance, stepped.running_variance),
    ]:
        assert not np.shares_memory(old, new)


def test_a_stepped_layer_shares_the_read_only_arrays_it_did_not_change() -> None:
    layer = nc.BatchNorm.create(2, affine=False)
    predicted = layer.step(layer.backward(layer.forward(block()), np.ones((4, 2))), 0.1)
    trained = layer.step(layer.backward(layer.forward(block(), "training"), np.ones((4, 2))), 0.1)
    for name in ("scale", "shift", "running_mean", "running_variance"):
        assert getattr(predicted, name) is getattr(layer, name)  # nothing moved: all shared
    for name in ("scale", "shift"):  # not learned: the same read-only arrays
        assert getattr(trained, name) is getattr(layer, name)
    for name in ("running_mean", "running_variance"):  # moved: new arrays
        assert not np.shares_memory(getattr(layer, name), getattr(trained, name))


@pytest.mark.parametrize(
    "make",
    [
        lambda: nc.Dense(weights=np.arange(6.0).reshape(2, 3)),
        lambda: nc.WeightNormDense(direction=np.arange(1.0, 7.0).reshape(2, 3)),
        nc.ReLU,
        nc.Tanh,
        nc.Sigmoid,
    ],
)
def test_editing_the_input_after_forward_changes_no_slope(make) -> None:
    layer = make()
    x = block()
    d = np.arange(1.0, 1.0 + 4 * (3 if hasattr(layer, "bias") else 2)).reshape(4, -1)
    want = layer.backward(layer.forward(x, "training"), d)
    response = layer.forward(x, "training")
    x[...] = -99.0  # the caller edits their own array between forward and backward
    got = layer.backward(response, d)
    np.testing.assert_array_equal(got.passed_down, want.passed_down)
    for key in want.slopes:
        np.testing.assert_array_equal(got.slopes[key], want.slopes[key])


@pytest.mark.parametrize(
    "before",
    [nc.ReLU(), nc.Dense(weights=np.arange(4.0).reshape(2, 2)), nc.LayerNorm.create(2)],
)
def test_a_dense_layer_keeps_another_layers_answer_without_a_copy(before) -> None:
    """A block a layer handed back is sealed (read-only, and so is the memory it views): the
    dense layer after it keeps that block itself as its input, and answers exactly as for a
    copy."""
    layer = nc.Dense(weights=np.arange(6.0).reshape(2, 3))
    x = before.forward(block(), "training").output
    response = layer.forward(x, "training")
    assert response.input is x and not response.input.flags.writeable
    with pytest.raises(ValueError):
        response.input.setflags(write=True)
    copied = layer.forward(np.array(x), "training")
    assert not np.shares_memory(copied.input, x)
    d = np.arange(1.0, 13.0).reshape(4, 3)
    got, want = layer.backward(response, d), layer.backward(copied, d)
    np.testing.assert_array_equal(got.passed_down, want.passed_down)
    for key in want.slopes:
        np.testing.assert_array_equal(got.slopes[key], want.slopes[key])


def test_a_callers_read_only_view_is_still_copied() -> None:
    """A read-only view the caller made of an array they can still write is no layer's answer:
    the dense layer keeps a copy, so editing the array after forward changes no slope."""
    layer = nc.Dense(weights=np.arange(6.0).reshape(2, 3))
    owner = block()
    view = owner.view()
    view.setflags(write=False)
    d = np.arange(1.0, 13.0).reshape(4, 3)
    want = layer.backward(layer.forward(owner.copy(), "training"), d)
    response = layer.forward(view, "training")
    assert not np.shares_memory(response.input, owner)
    owner[...] = -99.0
    got = layer.backward(response, d)
    np.testing.assert_array_equal(got.slopes["weights"], want.slopes["weights"])


def test_weight_norm_direction_cannot_be_edited_so_no_cache_goes_stale() -> None:
    layer = nc.WeightNormDense(direction=np.array([[3.0], [4.0]]))
    with pytest.raises(ValueError):
        layer.direction[0, 0] = 0.0
    np.testing.assert_allclose(layer.unit_direction, [[0.6], [0.8]])


def test_huge_python_integers_are_refused_with_typed_errors() -> None:
    huge = 10**400
    layer = nc.BatchNorm.create(2)
    gradient = layer.backward(layer.forward(block(), "training"), np.ones((4, 2)))
    raises(nc.RateError, lambda: layer.step(gradient, huge), "digits")
    raises(nc.EpsilonError, lambda: nc.BatchNorm.create(2, epsilon=huge), "digits")
    raises(nc.MomentumError, lambda: nc.BatchNorm.create(2, momentum=huge), "digits")
    raises(nc.DtypeError, lambda: nc.BatchNorm.create(2).forward([[huge, 1]]), "object")


@pytest.mark.parametrize(
    "call",
    [
        lambda: nc.BatchNorm.create("2"),
        lambda: nc.BatchNorm.create(2.0),
        lambda: nc.BatchNorm.create(2, stack=("a",)),
        lambda: nc.BatchNorm.create(2, stack=3),
        lambda: nc.LayerNorm.create("12"),
        lambda: nc.LayerNorm.create((2.5,)),
        lambda: nc.LayerNorm.create((True,)),
        lambda: nc.InstanceNorm.create(-1),
        lambda: nc.GroupNorm.create("4", 2),
        lambda: nc.Dense.create(0, 2, np.random.default_rng(0)),
        lambda: nc.Dense.create(2, 2, "rng"),
        lambda: nc.WeightNormDense.create(2, 2.5, np.random.default_rng(0)),
        lambda: nc.BatchNorm.create(2, tracks=["variance"]),
        lambda: nc.BatchNorm.create(2, affine="yes"),
        lambda: nc.InstanceNorm(scale=np.ones((2, 2)), shift=np.zeros((2, 2))),
    ],
)
def test_bad_create_arguments_are_refused_with_typed_errors(call) -> None:
    with pytest.raises(nc.NormcoreError) as caught:
        call()
    assert type(caught.value) is not nc.NormcoreError and "expected" in str(caught.value)


def test_shapes_too_large_for_memory_are_refused_before_allocating() -> None:
    raises(nc.ShapeError, lambda: nc.BatchNorm.create(10**15), "fits in")
    raises(nc.ShapeError, lambda: nc.LayerNorm.create((10**8, 10**8)), "fits in")
    raises(
        nc.ShapeError, lambda: nc.Dense.create(10**8, 10**8, np.random.default_rng(0)), "fits in"
    )


def test_public_helpers_refuse_bad_input_with_typed_errors() -> None:
    layer = nc.GroupNorm.create(4, 2)
    raises(nc.ShapeError, lambda: layer.statistic_count(np.zeros((2, 3))), "rank 4")
    raises(nc.ShapeError, lambda: layer.statistics_layout(np.zeros((2, 5, 2, 2))), "4")
    raises(nc.DtypeError, lambda: layer.statistics_layout("abc"), "dtype")
    raises(nc.ShapeError, lambda: layer.aligned(np.ones(3), np.zeros((1, 4, 2, 2))), "(4,)")
    wn = nc.WeightNormDense(direction=np.ones((2, 3)))
    raises(nc.ShapeError, lambda: wn.slopes_from_dense(np.ones((3, 2))), "(2, 3)")
    raises(nc.DtypeError, lambda: nc.sigmoid(np.array(["a"])), "dtype")
    assert nc.sigmoid([0.0]).tolist() == [0.5]


def test_hand_made_responses_and_gradients_are_checked() -> None:
    layer = nc.BatchNorm.create(2)
    response = layer.forward(block(), "training")
    gradient = layer.backward(response, np.ones((4, 2)))
    bad_stats = nc.Statistics(mean=np.zeros(2), variance=-np.ones(2), deviation=np.ones(2))
    raises(
        nc.SettingError,
        lambda: layer.step(
            nc.Gradient(gradient.passed_down, layer, gradient.slopes, bad_stats), 0.1
        ),
        "variance >= 0",
    )
    raises(
        nc.ForeignResponseError,
        lambda: layer.step(nc.Gradient(gradient.passed_down, layer, {"scale": np.ones(2)}), 0.1),
        "slopes named",
    )
    raises(
        nc.ShapeError,
        lambda: layer.step(
            nc.Gradient(gradient.passed_down, layer, {"scale": np.ones(3), "shift": np.ones(2)}),
            0.1,
        ),
        "(2,)",
    )
    raises(
        nc.ForeignResponseError,
        lambda: layer.backward(nc.Response(np.ones((4, 2)), layer, "training"), np.ones((4, 2))),
        "standardised input",
    )
    dense = nc.Dense(weights=np.ones((2, 2)))
    raises(
        nc.ForeignResponseError,
        lambda: dense.backward(nc.Response(np.ones((4, 2)), dense, "training"), np.ones((4, 2))),
        "response.input",
    )


def test_the_oracle_refuses_a_zero_step_and_a_nan_slope() -> None:
    f = lambda b: float(np.sum(b**2))  # noqa: E731
    raises(nc.SettingError, lambda: nc.finite_difference(f, np.ones(2), step=0), "step")
    raises(nc.SettingError, lambda: nc.finite_difference(f, np.ones(2), step=math.nan), "step")
    raises(
        nc.NonFiniteError,
        lambda: nc.check_slope(f, np.ones(2), np.array([2.0, math.nan])),
        "finite",
    )


def test_no_warning_comes_before_a_typed_refusal() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # float64 parameters beyond float32's range on a float32 block
        layer = nc.BatchNorm(scale=np.full(2, 1e300), shift=np.zeros(2))
        raises(nc.MagnitudeError, lambda: layer.forward(np.ones((3, 2), np.float32)), "float32")
        # a tiny running deviation
        tiny = nc.BatchNorm(
            scale=np.ones(2),
            shift=np.zeros(2),
            running_mean=np.zeros(2),
            running_deviation=np.full(2, 1e-300),
            tracks="deviation",
        )
        raises(nc.MagnitudeError, lambda: tiny.forward(np.full((3, 2), 1e10)), "range")
        # an overflowing weight-norm direction length
        raises(
            nc.MagnitudeError,
            lambda: nc.WeightNormDense(direction=np.full((4, 1), 1.7e308)),
            "range",
        )


def _benign_calls() -> None:
    """Ordinary calls, including tiny values whose squares underflow."""
    x = block() * 1e-160
    for layer in (
        nc.BatchNorm.create(2),
        nc.LayerNorm.create(2),
        nc.RMSNorm.create(2),
        nc.Dense.create(2, 3, np.random.default_rng(0)),
        nc.WeightNormDense.create(2, 3, np.random.default_rng(0)),
        nc.ReLU(),
        nc.Tanh(),
        nc.Sigmoid(),
    ):
        for purpose in ("training", "predicting"):
            response = layer.forward(x, purpose)
            gradient = layer.backward(response, np.ones_like(response.output) * 1e-200)
            layer.step(gradient, 0.1)
    images = np.arange(16.0).reshape(1, 4, 2, 2) * 1e-170
    for layer in (
        nc.InstanceNorm.create(4),
        nc.GroupNorm.create(4, 2),
        nc.ImageBatchNorm.create(4),
    ):
        layer.backward(layer.forward(images, "training"), np.ones_like(images))
    nc.local_response_normalisation(images)
    nc.adain(images, images + 1.0)
    nc.binary_cross_entropy(np.array([-800.0, 0.0, 800.0]), np.array([0.0, 1.0, 1.0]))
    nc.sigmoid(np.array([-800.0, 800.0]))
    nc.finite_difference(lambda b: float(np.sum(b * b)), np.ones(2) * 1e-160)


def test_the_callers_numpy_error_state_never_matters() -> None:
    before = np.geterr()
    try:
        np.seterr(all="raise")
        _benign_calls()
    finally:
        np.seterr(**before)
    assert np.geterr() == before


def test_own_error_state_raises_inside_and_restores_the_callers_state() -> None:
    """Inside a wrapped call numpy raises on overflow, invalid operations and division by zero
    and ignores underflow, whatever the caller set; the caller's state comes back after an
    answer and after an exception; a FloatingPointError becomes a MagnitudeError naming the
    call; the wrapper keeps the call's signature, and no traceback frame comes from generated
    code."""
    import inspect
    import traceback

    from normcore._checks import own_error_state

    def call(a: float, b: float = 2.0, *, c: float = 3.0) -> tuple[float, float, float, dict]:
        return a, b, c, np.geterr()

    wrapped = own_error_state(call)
    assert inspect.signature(wrapped) == inspect.signature(call)
    assert wrapped.__name__ == "call" and wrapped.__wrapped__ is call
    with np.errstate(all="ignore"):
        before = np.geterr()
        assert wrapped(1.0, c=5.0, b=4.0)[:3] == (1.0, 4.0, 5.0)
        inside = wrapped(1.0)[3]
        assert np.geterr() == before  # outside: the caller's own, again
    assert inside == {"over": "raise", "invalid": "raise", "divide": "raise", "under": "ignore"}
    with pytest.raises(TypeError):
        wrapped(1.0, 2.0, 3.0)  # c is keyword-only, as in the call itself

    @own_error_state
    def overflows() -> np.ndarray:
        return np.full(2, 1e308) * 10.0

    with pytest.raises(nc.MagnitudeError, match="overflows: expected results within") as caught:
        overflows()
    frames = traceback.extract_tb(caught.value.__traceback__)
    assert all(f.filename != "<string>" for f in frames)

    @own_error_state
    def fails() -> None:
        raise ValueError("inside")

    before = np.geterr()
    with pytest.raises(ValueError, match="inside"):
        fails()
    assert np.geterr() == before
    layer = nc.LayerNorm.create(2)
    with pytest.raises(nc.MagnitudeError, match=r"^LayerNorm\.forward: expected results"):
        nc.LayerNorm(scale=np.full(2, 1e308), shift=np.full(2, 1e308)).forward([[0.0, 3.0]])
    assert layer.forward([[1.0, 2.0]]).output.shape == (1, 2)
