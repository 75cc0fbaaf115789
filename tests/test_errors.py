"""Bad input gets a typed error, raised before any arithmetic, with the caller's array untouched.

Every error is a `NormcoreError` and a `ValueError`, and its message says what was expected and
what came. Input the arithmetic can answer honestly (tiny and large-but-safe magnitudes, a
near-zero direction) is answered.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import normcore as nc

EXAMPLES = settings(max_examples=40, deadline=None)


def block() -> np.ndarray:
    return np.array([[1.0, 7.0], [1.0, 9.0], [7.0, 1.0], [23.0, 7.0]])


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
    "weight norm": lambda x: nc.WeightNormDense(weights=np.ones((2, 3))).forward(x),
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
    untouched(nc.EmptyBatchError, nc.InstanceNorm.create(3).forward, np.ones((0, 3, 2, 2)),
              "(0, 3, 2, 2)")


def test_ragged_lists() -> None:
    raises(nc.ShapeError, lambda: nc.BatchNorm.create(2).forward([[1.0, 7.0], [1.0]]),
           "rectangular")
    raises(nc.ShapeError, lambda: nc.Dense(weights=np.ones((2, 2))).forward([[1, 2], [3]]),
           "rectangular")


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
    [nc.BatchNorm.create(2), nc.LayerNorm.create(2), nc.Dense(weights=np.ones((2, 2))),
     nc.ReLU(), nc.Sigmoid()],
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
        st.lists(st.tuples(st.integers(0, rows - 1), st.integers(0, features - 1)),
                 min_size=1, max_size=4, unique=True)
    )
    for r, c in positions:
        x[r, c] = draw(st.sampled_from([math.nan, math.inf, -math.inf]))
    return x, len(positions)


@EXAMPLES
@given(with_a_non_finite_cell(), st.sampled_from(["training", "predicting"]))
def test_any_non_finite_cell_is_refused(case, purpose: str) -> None:
    x, count = case
    f = x.shape[1]
    for layer in (nc.BatchNorm.create(f), nc.LayerNorm.create(f), nc.RMSNorm.create(f),
                  nc.Dense(weights=np.ones((f, 2))), nc.Tanh()):
        untouched(nc.NonFiniteError, lambda a, layer=layer: layer.forward(a, purpose), x,
                  f"{count} NaN or infinite")


@EXAMPLES
@given(with_a_non_finite_cell())
def test_any_non_finite_slope_is_refused(case) -> None:
    d, count = case
    layer = nc.BatchNorm.create(d.shape[1])
    response = layer.forward(np.arange(d.size, dtype=float).reshape(d.shape) ** 2, "training")
    untouched(nc.NonFiniteError, lambda a: layer.backward(response, a), d,
              f"{count} NaN or infinite")


def test_non_finite_parameter() -> None:
    raises(nc.NonFiniteError, lambda: nc.BatchNorm(scale=[1.0, math.nan], shift=[0.0, 0.0]),
           "scale")
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


@pytest.mark.parametrize(("epsilon", "shown"), [(0, "0.0"), (0.0, "0.0"), (-1e-5, "-1e-05"),
                                                (math.nan, "nan"), (math.inf, "inf")])
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


@pytest.mark.parametrize(("momentum", "shown"), [(1, "1.0"), (1.0, "1.0"), (-0.1, "-0.1"),
                                                 (math.nan, "nan"), (True, "True")])
def test_momentum_refused(momentum, shown: str) -> None:
    raises(nc.MomentumError, lambda: nc.BatchNorm.create(2, momentum=momentum), "[0, 1)", shown)


def test_momentum_zero_is_answered() -> None:
    # Momentum 0 keeps nothing: the running figures become the batch's (mean 6, variance 9).
    layer = nc.BatchNorm.create(2, momentum=0.0)
    new = layer.step(layer.backward(layer.forward(block(), "training"), np.zeros((4, 2))), 1.0)
    np.testing.assert_array_equal(new.running_mean, [8.0, 6.0])
    np.testing.assert_array_equal(new.running_variance, [81.0, 9.0])


@pytest.mark.parametrize(("purpose", "shown"), [("train", "'train'"), (None, "None"), (1, "1"),
                                                ("Training", "'Training'"), ("eval", "'eval'")])
@pytest.mark.parametrize(
    "layer",
    [nc.BatchNorm.create(2), nc.LayerNorm.create(2), nc.Dense(weights=np.ones((2, 2))),
     nc.ReLU(), nc.WeightNormDense(weights=np.ones((2, 2)))],
    ids=["batch", "layer", "dense", "ReLU", "weight norm"],
)
def test_unknown_purpose(layer, purpose, shown: str) -> None:
    x = block()
    untouched(nc.PurposeError, lambda a: layer.forward(a, purpose), x, "'predicting'", shown)


@pytest.mark.parametrize(("channels", "groups"), [(6, 4), (3, 2), (4, 0), (4, -2), (4, True)])
def test_group_count_must_divide_channels(channels: int, groups) -> None:
    raises(nc.SettingError, lambda: nc.GroupNorm.create(channels, groups), "divides",
           f"{channels} channels", repr(groups))


@pytest.mark.parametrize("rate", [math.nan, math.inf, -math.inf, "fast", None])
def test_non_finite_rate(rate) -> None:
    layer = nc.BatchNorm.create(2)
    gradient = layer.backward(layer.forward(block(), "training"), np.ones((4, 2)))
    raises(nc.RateError, lambda: layer.step(gradient, rate), "finite number", repr(rate)
           if not isinstance(rate, float) else str(rate))
    dense = nc.Dense(weights=np.ones((2, 2)))
    g = dense.backward(dense.forward(block()), np.ones((4, 2)))
    raises(nc.RateError, lambda: dense.step(g, rate), "finite number")


# ----------------------------------------------------------------------------- directions


def test_zero_direction_refused() -> None:
    direction = np.array([[1.0, 0.0, 2.0], [2.0, 0.0, 1.0]])
    copy = direction.copy()
    raises(nc.ZeroDirectionError, lambda: nc.WeightNormDense(weights=direction), "length > 0",
           "length 0", "[[1]]")
    np.testing.assert_array_equal(direction, copy)
    raises(nc.ZeroDirectionError,
           lambda: nc.WeightNormDense(weights=np.zeros((2, 1)), magnitude=[1.0]), "length 0")


def test_zero_direction_in_a_stack_refused() -> None:
    direction = np.ones((3, 2, 2))
    direction[2, :, 1] = 0.0
    raises(nc.ZeroDirectionError, lambda: nc.WeightNormDense(weights=direction), "[[2, 1]]")


def test_near_zero_direction_is_answered() -> None:
    # Direction (1e-300, -1e-300) has length 1e-300 * sqrt(2): its unit vector is
    # (1, -1) / sqrt(2), so with magnitude 2 the effective column is (sqrt(2), -sqrt(2)).
    direction = np.array([[1e-300, 1.0], [-1e-300, 0.0]])
    layer = nc.WeightNormDense(weights=direction, magnitude=np.array([2.0, 3.0]))
    x = np.array([[1.0, 2.0], [3.0, -1.0]])
    out = layer.forward(x).output
    root2 = math.sqrt(2.0)
    expected = np.array([[root2 - 2 * root2, 3.0], [3 * root2 + root2, 9.0]])
    np.testing.assert_allclose(out, expected, rtol=1e-14)


# ----------------------------------------------------------------------------- foreign values


def test_response_handed_to_another_layer() -> None:
    a, b = nc.BatchNorm.create(2), nc.BatchNorm.create(2)  # equal values, different layers
    response = a.forward(block(), "training")
    raises(nc.ForeignResponseError, lambda: b.backward(response, np.ones((4, 2))),
           "another BatchNorm")
    dense = nc.Dense(weights=np.ones((2, 2)))
    raises(nc.ForeignResponseError, lambda: dense.backward(response, np.ones((4, 2))),
           "this Dense", "another BatchNorm")
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
    raises(nc.ForeignResponseError, lambda: nc.Tanh().step(tanh.backward(r, np.ones((4, 2))), 0.1),
           "Tanh")


# ----------------------------------------------------------------------------- magnitudes


@pytest.mark.parametrize("name", ["batch", "layer", "RMS", "dense"])
def test_huge_magnitudes_refused(name: str) -> None:
    x = block() * 1e200
    untouched(nc.MagnitudeError, FORWARDS[name], x, "magnitudes up to", "2.3e+201")


def test_huge_slopes_refused() -> None:
    layer = nc.LayerNorm.create(2)
    response = layer.forward(block(), "training")
    untouched(nc.MagnitudeError, lambda a: layer.backward(response, a), np.full((4, 2), 1e200),
              "1e+200")


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
