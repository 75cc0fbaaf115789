"""Every layer's slopes held against central finite differences (the package's own oracle).

For each layer the objective is sum(d * output) for a random upstream slope d drawn by hypothesis
(never all ones), so its gradient with respect to the input is the passed-down block and with
respect to each parameter that parameter's slope. Agreement is asked to a relative error below
1e-7, relative to max(1, largest oracle slope).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import normcore as nc

pytestmark = pytest.mark.numeric  # figures from float arithmetic: make test-arith reruns it

TOL = 1e-7
EXAMPLES = settings(max_examples=30, deadline=None, derandomize=os.environ.get("CI") == "true")

# ----------------------------------------------------------------------------- strategies


def values(shape: tuple[int, ...], lo: float = -10.0, hi: float = 10.0) -> st.SearchStrategy:
    """A float64 block of `shape`, every cell drawn on its own (no fill value)."""
    return hnp.arrays(
        np.float64,
        shape,
        elements=st.floats(lo, hi, allow_nan=False, allow_subnormal=False, width=64),
        fill=st.nothing(),
    )


def away_from_zero(shape: tuple[int, ...], lo: float = 0.05, hi: float = 10.0):
    """A float64 block whose cells lie in [-hi, -lo] or [lo, hi] (no kinks, no zero lengths)."""
    return hnp.arrays(
        np.float64,
        shape,
        elements=st.one_of(
            st.floats(-hi, -lo, allow_nan=False, width=64), st.floats(lo, hi, width=64)
        ),
        fill=st.nothing(),
    )


def upstream(draw: Callable, shape: tuple[int, ...]) -> np.ndarray:
    """A random upstream slope in [-2, 2], with real variation (never a constant block)."""
    d = draw(values(shape, -2.0, 2.0))
    assume(d.size == 1 or np.std(d) > 0.1)
    assume(np.max(np.abs(d)) > 0.1)
    return d


def spread_ok(x: np.ndarray, axes: tuple[int, ...], minimum: float = 0.2) -> bool:
    """Each statistic's values have a deviation well above epsilon: differences are well
    conditioned."""
    return bool(np.min(np.std(x, axis=axes)) >= minimum)


def rms_ok(x: np.ndarray, axes: tuple[int, ...], minimum: float = 0.2) -> bool:
    return bool(np.min(np.sqrt(np.mean(x * x, axis=axes))) >= minimum)


dims = st.integers


# ----------------------------------------------------------------------------- the oracle


def objective(layer, d: np.ndarray, purpose: str) -> Callable[[np.ndarray], float]:
    return lambda x: float(np.sum(d * layer.forward(x, purpose).output))


def relative_gap(oracle: np.ndarray, claimed: np.ndarray) -> float:
    assert oracle.shape == claimed.shape
    return float(np.max(np.abs(oracle - claimed))) / max(1.0, float(np.max(np.abs(oracle))))


def parameter_slope(layer, name: str, x: np.ndarray, d: np.ndarray, purpose: str, step: float):
    """Central differences of sum(d * output) in one parameter, each nudge made on a copy of
    the layer with that parameter replaced."""

    def f(p: np.ndarray) -> float:
        other = dataclasses.replace(layer, **{name: p})
        return float(np.sum(d * other.forward(x, purpose).output))

    return nc.finite_difference(f, np.array(getattr(layer, name), dtype=np.float64), step)


def assert_agrees(
    layer,
    x: np.ndarray,
    d: np.ndarray,
    purpose: str = "training",
    parameters: tuple[str, ...] = (),
    step: float = 1e-6,
) -> nc.Gradient:
    response = layer.forward(x, purpose)
    gradient = layer.backward(response, d)
    assert gradient.passed_down.shape == x.shape
    check = nc.check_slope(objective(layer, d, purpose), x, gradient.passed_down, step)
    assert check.relative_gap < TOL, ("input", check.relative_gap)
    assert set(parameters) <= set(gradient.slopes)
    for name in parameters:
        oracle = parameter_slope(layer, name, x, d, purpose, step)
        claimed = gradient.slopes[name]
        assert claimed.shape == np.shape(getattr(layer, name))
        gap = relative_gap(oracle, claimed)
        assert gap < TOL, (name, gap)
    return gradient


AFFINE = ("scale", "shift")


# ----------------------------------------------------------------------------- batch norm


@st.composite
def batch_case(draw, stack: tuple[int, ...] = ()):
    rows, features = draw(dims(2, 6)), draw(dims(1, 4))
    x = draw(values((*stack, rows, features)))
    assume(spread_ok(x, (x.ndim - 2,)))
    scale = draw(values((*stack, features), -2.0, 2.0))
    shift = draw(values((*stack, features), -2.0, 2.0))
    d = upstream(draw, x.shape)
    return nc.BatchNorm(scale=scale, shift=shift), x, d


@EXAMPLES
@given(batch_case())
def test_batch_norm_training(case) -> None:
    layer, x, d = case
    assert_agrees(layer, x, d, "training", AFFINE)


@EXAMPLES
@given(batch_case())
def test_batch_norm_predicting_fresh(case) -> None:
    layer, x, d = case
    assert_agrees(layer, x, d, "predicting", AFFINE)


@EXAMPLES
@given(batch_case(), st.integers(1, 4))
def test_batch_norm_predicting_after_steps(case, steps: int) -> None:
    layer, x, d = case
    for _ in range(steps):  # running figures move away from 0 and 1
        layer = layer.step(layer.backward(layer.forward(x, "training"), d), 0.05)
    assert np.any(layer.running_mean != 0.0) or np.any(layer.running_variance != 1.0)
    gradient = assert_agrees(layer, x, d, "predicting", AFFINE)
    # Predicting divides by constants: d * scale / running deviation, and nothing else.
    np.testing.assert_allclose(
        gradient.passed_down, d * layer.scale / layer.running_deviation, rtol=1e-14
    )


@EXAMPLES
@given(batch_case(stack=(3,)))
def test_batch_norm_stacked(case) -> None:
    layer, x, d = case
    assert_agrees(layer, x, d, "training", AFFINE)


@EXAMPLES
@given(batch_case(stack=(2, 2)))
def test_batch_norm_stacked_predicting(case) -> None:
    layer, x, d = case
    layer = dataclasses.replace(
        layer, running_mean=layer.shift, running_variance=layer.scale**2, running_deviation=None
    )
    assert_agrees(layer, x, d, "predicting", AFFINE)


@st.composite
def image_case(draw, lo_hw: int = 1):
    n, c, h, w = draw(dims(1, 3)), draw(dims(1, 3)), draw(dims(lo_hw, 3)), draw(dims(1, 3))
    x = draw(values((n, c, h, w)))
    scale = draw(values((c,), -2.0, 2.0))
    shift = draw(values((c,), -2.0, 2.0))
    d = upstream(draw, x.shape)
    return x, scale, shift, d


@EXAMPLES
@given(image_case())
def test_image_batch_norm(case) -> None:
    x, scale, shift, d = case
    assume(spread_ok(x, (0, 2, 3)))
    layer = nc.ImageBatchNorm(scale=scale, shift=shift)
    assert_agrees(layer, x, d, "training", AFFINE)
    stepped = dataclasses.replace(
        layer, running_mean=shift, running_variance=scale**2 + 0.5, running_deviation=None
    )
    assert_agrees(stepped, x, d, "predicting", AFFINE)


# ----------------------------------------------------------------------------- row layers


@st.composite
def row_case(draw, stack: tuple[int, ...] = (), centred: bool = True):
    rows, features = draw(dims(1, 5)), draw(dims(2, 5))
    x = draw(values((*stack, rows, features)))
    if centred:
        assume(spread_ok(x, (-1,)))
    else:
        assume(rms_ok(x, (-1,)))
    scale = draw(values((*stack, features), -2.0, 2.0))
    shift = draw(values((*stack, features), -2.0, 2.0))
    d = upstream(draw, x.shape)
    return scale, shift, x, d


@EXAMPLES
@given(row_case())
def test_layer_norm(case) -> None:
    scale, shift, x, d = case
    layer = nc.LayerNorm(scale=scale, shift=shift)
    assert_agrees(layer, x, d, "training", AFFINE)
    assert_agrees(layer, x, d, "predicting", AFFINE)


@EXAMPLES
@given(row_case(stack=(3,)))
def test_layer_norm_stacked(case) -> None:
    scale, shift, x, d = case
    assert_agrees(nc.LayerNorm(scale=scale, shift=shift), x, d, "training", AFFINE)


@st.composite
def trailing_case(draw):
    a, b, c, e = draw(dims(1, 3)), draw(dims(1, 3)), draw(dims(1, 3)), draw(dims(2, 3))
    x = draw(values((a, b, c, e)))
    assume(spread_ok(x, (2, 3)))
    scale = draw(values((c, e), -2.0, 2.0))
    shift = draw(values((c, e), -2.0, 2.0))
    d = upstream(draw, x.shape)
    return scale, shift, x, d


@EXAMPLES
@given(trailing_case())
def test_layer_norm_trailing_normalized_shape(case) -> None:
    scale, shift, x, d = case
    layer = nc.LayerNorm(scale=scale, shift=shift, normalized_shape=scale.shape)
    assert layer.normalized_shape == scale.shape
    assert_agrees(layer, x, d, "training", AFFINE)


@EXAMPLES
@given(row_case(centred=False))
def test_rms_norm(case) -> None:
    scale, shift, x, d = case
    assert_agrees(nc.RMSNorm(scale=scale, shift=shift), x, d, "training", AFFINE)


@EXAMPLES
@given(row_case(stack=(2,), centred=False))
def test_rms_norm_stacked(case) -> None:
    scale, shift, x, d = case
    assert_agrees(nc.RMSNorm(scale=scale, shift=shift), x, d, "predicting", AFFINE)


# ----------------------------------------------------------------------------- image axes


@EXAMPLES
@given(image_case(lo_hw=2))
def test_instance_norm(case) -> None:
    x, scale, shift, d = case
    assume(spread_ok(x, (2, 3)))
    assert_agrees(nc.InstanceNorm(scale=scale, shift=shift), x, d, "training", AFFINE)


@st.composite
def group_case(draw):
    groups, per_group = draw(dims(1, 3)), draw(dims(1, 3))
    c = groups * per_group
    n, h, w = draw(dims(1, 2)), draw(dims(1, 3)), draw(dims(2, 3))
    x = draw(values((n, c, h, w)))
    view = x.reshape(n, groups, per_group, h, w)
    assume(spread_ok(view, (2, 3, 4)))
    scale = draw(values((c,), -2.0, 2.0))
    shift = draw(values((c,), -2.0, 2.0))
    d = upstream(draw, x.shape)
    return nc.GroupNorm(scale=scale, shift=shift, groups=groups), x, d


@EXAMPLES
@given(group_case())
def test_group_norm(case) -> None:
    layer, x, d = case
    assert_agrees(layer, x, d, "training", AFFINE)


# ----------------------------------------------------------------------------- dense


@st.composite
def dense_case(draw, stack: tuple[int, ...] = ()):
    rows, fan_in, fan_out = draw(dims(1, 5)), draw(dims(1, 4)), draw(dims(1, 4))
    x = draw(values((*stack, rows, fan_in)))
    weights = draw(values((*stack, fan_in, fan_out), -2.0, 2.0))
    bias = draw(values((*stack, fan_out), -2.0, 2.0))
    d = upstream(draw, (*stack, rows, fan_out))
    return x, weights, bias, d


# The dense layer is linear in its input and its parameters: a wide step loses nothing to
# truncation and keeps rounding small.
LINEAR_STEP = 1e-3


@EXAMPLES
@given(dense_case())
def test_dense(case) -> None:
    x, weights, bias, d = case
    layer = nc.Dense(weights=weights, bias=bias)
    assert_agrees(layer, x, d, "training", ("weights", "bias"), step=LINEAR_STEP)


@EXAMPLES
@given(dense_case(stack=(3,)))
def test_dense_stacked(case) -> None:
    x, weights, bias, d = case
    layer = nc.Dense(weights=weights, bias=bias)
    assert_agrees(layer, x, d, "predicting", ("weights", "bias"), step=LINEAR_STEP)


@st.composite
def weight_norm_case(draw, stack: tuple[int, ...] = ()):
    rows, fan_in, fan_out = draw(dims(1, 5)), draw(dims(1, 4)), draw(dims(1, 3))
    x = draw(values((*stack, rows, fan_in), -5.0, 5.0))
    direction = draw(away_from_zero((*stack, fan_in, fan_out), 0.3, 3.0))
    magnitude = draw(values((*stack, fan_out), -2.0, 2.0))
    bias = draw(values((*stack, fan_out), -2.0, 2.0))
    d = upstream(draw, (*stack, rows, fan_out))
    layer = nc.WeightNormDense(direction=direction, magnitude=magnitude, bias=bias)
    return layer, x, d


WN_PARAMETERS = ("magnitude", "direction", "bias")


@EXAMPLES
@given(weight_norm_case())
def test_weight_norm_dense(case) -> None:
    layer, x, d = case
    assert_agrees(layer, x, d, "training", WN_PARAMETERS, step=1e-5)


@EXAMPLES
@given(weight_norm_case(stack=(2,)))
def test_weight_norm_dense_stacked(case) -> None:
    layer, x, d = case
    assert_agrees(layer, x, d, "training", WN_PARAMETERS, step=1e-5)


@EXAMPLES
@given(weight_norm_case())
def test_weight_norm_unprojected_slope_is_refused_by_the_oracle(case) -> None:
    # The oracle can tell the wrong slope apart: the unprojected direction slope misses it
    # whenever the dense slope has a part along the direction.
    layer, x, d = case
    response = layer.forward(x, "training")
    dense_slope = np.swapaxes(x, -1, -2) @ d
    wrong = layer.slopes_from_dense(dense_slope, project=False)["direction"]
    along = np.sum(dense_slope * layer.unit_direction, axis=-2)
    assume(np.max(np.abs(along * layer.magnitude)) > 0.1)
    oracle = parameter_slope(layer, "direction", x, d, "training", 1e-5)
    assert relative_gap(oracle, wrong) > 1e-3
    right = layer.backward(response, d).slopes["direction"]
    assert relative_gap(oracle, right) < TOL


# ----------------------------------------------------------------------------- activations


@st.composite
def activation_case(draw, kinks: bool = False):
    shape = tuple(draw(st.lists(dims(1, 4), min_size=1, max_size=3)))
    x = draw(away_from_zero(shape, 1e-3, 10.0) if not kinks else values(shape))
    d = upstream(draw, shape)
    return x, d


@EXAMPLES
@given(activation_case())
def test_relu(case) -> None:
    x, d = case
    gradient = assert_agrees(nc.ReLU(), x, d)
    np.testing.assert_array_equal(gradient.passed_down, np.where(x > 0, d, 0.0))


@EXAMPLES
@given(activation_case(kinks=True))
def test_tanh(case) -> None:
    x, d = case
    assert_agrees(nc.Tanh(), x, d)


@EXAMPLES
@given(activation_case(kinks=True))
def test_sigmoid(case) -> None:
    x, d = case
    assert_agrees(nc.Sigmoid(), x, d)


# ----------------------------------------------------------------------------- the loss


@st.composite
def loss_case(draw, stacked: bool):
    shape = (draw(dims(1, 3)), draw(dims(1, 6))) if stacked else (draw(dims(1, 8)),)
    logits = draw(values(shape, -12.0, 12.0))
    labels = draw(values(shape, 0.0, 1.0))
    return logits, labels


@EXAMPLES
@given(loss_case(stacked=False))
def test_binary_cross_entropy_slope(case) -> None:
    logits, labels = case
    loss = nc.binary_cross_entropy(logits, labels)
    assert np.shape(loss.value) == ()

    def f(z: np.ndarray) -> float:
        return float(nc.binary_cross_entropy(z, labels).value)

    check = nc.check_slope(f, logits, loss.slope)
    assert check.relative_gap < TOL


@EXAMPLES
@given(loss_case(stacked=True), st.data())
def test_binary_cross_entropy_stacked_slope(case, data) -> None:
    logits, labels = case
    weights = data.draw(values(logits.shape[:1], -2.0, 2.0))
    loss = nc.binary_cross_entropy(logits, labels, stack_axes=1)
    assert loss.value.shape == logits.shape[:1]

    def f(z: np.ndarray) -> float:
        return float(np.sum(weights * nc.binary_cross_entropy(z, labels, stack_axes=1).value))

    check = nc.check_slope(f, logits, weights[:, None] * loss.slope)
    assert check.relative_gap < TOL


# ----------------------------------------------------------------------------- the oracle itself


def test_oracle_catches_a_wrong_slope() -> None:
    # The checker must be able to fail: the naive batch-norm slope is held against it.
    x = nc.four_rows()
    d = np.arange(1.0, 9.0).reshape(4, 2)
    layer = nc.BatchNorm.create(2)
    naive = nc.naive_backward(nc.standardise(x, (0,), layer.epsilon), d)
    check = nc.check_slope(objective(layer, d, "training"), x, naive)
    assert check.relative_gap > 1.0


def test_finite_difference_of_a_known_function() -> None:
    # d/dx sum(x**3) = 3 x**2, by hand.
    x = np.array([[1.0, -2.0], [0.5, 3.0]])
    x_copy = x.copy()
    slope = nc.finite_difference(lambda a: float(np.sum(a**3)), x, 1e-5)
    np.testing.assert_allclose(slope, 3 * x_copy**2, rtol=1e-9)
    np.testing.assert_array_equal(x, x_copy)
