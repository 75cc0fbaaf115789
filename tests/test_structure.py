"""Structural facts every correct implementation must show, without any oracle.

Centring layers cannot see a constant added along their statistic's axis, so their input
gradients sum to zero along it; weight norm cannot see a direction's length, so its direction
gradient has no part along the direction; layers are values, so answering never changes them;
stacked models are the same arithmetic as separate ones.
"""

from __future__ import annotations

import dataclasses
import os
import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import normcore as nc

pytestmark = pytest.mark.numeric  # figures from float arithmetic: make test-arith reruns it

EXAMPLES = settings(max_examples=30, deadline=None, derandomize=os.environ.get("CI") == "true")


def values(shape, lo: float = -10.0, hi: float = 10.0) -> st.SearchStrategy:
    return hnp.arrays(
        np.float64,
        shape,
        elements=st.floats(lo, hi, allow_nan=False, allow_subnormal=False, width=64),
        fill=st.nothing(),
    )


@st.composite
def affine_case(draw, min_rows: int = 2, min_features: int = 1):
    rows, features = draw(st.integers(min_rows, 6)), draw(st.integers(min_features, 5))
    x = draw(values((rows, features)))
    d = draw(values((rows, features), -2.0, 2.0))
    scale = draw(values((features,), -2.0, 2.0))
    shift = draw(values((features,), -2.0, 2.0))
    return x, d, scale, shift


def fields(layer) -> dict[str, bytes]:
    """Every array field of a layer as bytes (with dtype and shape), for byte-identity checks."""
    out = {}
    for f in dataclasses.fields(layer):
        value = getattr(layer, f.name)
        if isinstance(value, np.ndarray):
            out[f.name] = (value.dtype.str, value.shape, value.tobytes())
        else:
            out[f.name] = repr(value)
    return out


def rng() -> np.random.Generator:
    return np.random.default_rng(20240607)


# ----------------------------------------------------------------------------- sums to zero


@EXAMPLES
@given(affine_case())
def test_batch_norm_grad_input_columns_sum_to_zero(case) -> None:
    x, d, scale, shift = case
    layer = nc.BatchNorm(scale=scale, shift=shift)
    passed = layer.backward(layer.forward(x, "train"), d).grad_input
    size = max(1.0, float(np.max(np.abs(passed))))
    np.testing.assert_allclose(passed.sum(axis=0), 0.0, rtol=0, atol=1e-12 * size)


@EXAMPLES
@given(affine_case(min_rows=1, min_features=2))
def test_layer_norm_grad_input_rows_sum_to_zero(case) -> None:
    x, d, scale, shift = case
    layer = nc.LayerNorm(scale=scale, shift=shift)
    passed = layer.backward(layer.forward(x, "train"), d).grad_input
    size = max(1.0, float(np.max(np.abs(passed))))
    np.testing.assert_allclose(passed.sum(axis=1), 0.0, rtol=0, atol=1e-12 * size)


def test_the_sum_to_zero_check_can_fail() -> None:
    # The naive gradient d / s does not sum to zero down a column (seed 000: 1.7778 and 6.6667).
    x = nc.four_rows()
    naive = nc.naive_backward(nc.standardise(x, (0,), 1e-5), np.arange(1.0, 9.0).reshape(4, 2))
    assert np.all(np.abs(naive.sum(axis=0)) > 1.0)


# ----------------------------------------------------------------------------- weight norm


@st.composite
def weight_norm_case(draw):
    rows, fan_in = draw(st.integers(1, 5)), draw(st.integers(2, 4))
    fan_out = draw(st.integers(1, 3))
    x = draw(values((rows, fan_in), -5.0, 5.0))
    direction = draw(values((fan_in, fan_out), -3.0, 3.0))
    assume(np.min(np.linalg.norm(direction, axis=0)) > 0.3)
    magnitude = draw(values((fan_out,), -2.0, 2.0))
    assume(np.min(np.abs(magnitude)) > 0.1)
    d = draw(values((rows, fan_out), -2.0, 2.0))
    return nc.WeightNormDense(direction=direction, magnitude=magnitude), x, d


@EXAMPLES
@given(weight_norm_case())
def test_weight_norm_direction_grad_is_orthogonal_to_direction(case) -> None:
    layer, x, d = case
    gradient = layer.backward(layer.forward(x, "train"), d)
    grad = gradient.grads["direction"]
    lengths = np.linalg.norm(layer.direction, axis=0) * np.linalg.norm(grad, axis=0)
    dots = np.sum(grad * layer.direction, axis=0)
    np.testing.assert_allclose(dots, 0.0, rtol=0, atol=1e-13 * max(1.0, float(lengths.max())))

    # The unprojected gradient keeps its radial part: its dot with the direction is the dense
    # gradient's part along u, scaled, which is not zero unless that part is.
    dense = x.T @ d
    along = np.sum(dense * layer.unit_direction, axis=0)
    assume(np.max(np.abs(along)) > 1e-3)
    wrong = layer.grads_from_dense(dense, project=False)["direction"]
    wrong_dots = np.sum(wrong * layer.direction, axis=0)
    # By hand: (m / |v|) * (∇w · v) = m * (∇w · u).
    np.testing.assert_allclose(wrong_dots, layer.magnitude * along, rtol=1e-10, atol=1e-12)
    assert np.max(np.abs(wrong_dots)) > 1e-4


@EXAMPLES
@given(weight_norm_case(), st.floats(1e-3, 1e3))
def test_weight_norm_answer_ignores_direction_length(case, factor: float) -> None:
    layer, x, _ = case
    longer = dataclasses.replace(layer, direction=layer.direction * factor)
    a = layer.forward(x).output
    b = longer.forward(x).output
    np.testing.assert_allclose(b, a, rtol=1e-13, atol=1e-13 * max(1.0, float(np.abs(a).max())))
    # ...while a dense layer with those weights does see the length (the check can fail).
    if factor > 1.01 or factor < 0.99:
        dense = nc.Dense(weights=layer.direction * factor, bias=layer.bias)
        plain = nc.Dense(weights=layer.direction, bias=layer.bias)
        assume(np.max(np.abs(plain.forward(x).output)) > 1e-3)
        assert not np.allclose(dense.forward(x).output, plain.forward(x).output)


def test_weight_norm_fresh_layer_answers_as_dense() -> None:
    dense = nc.Dense.create(3, 2, rng())
    weight_norm = nc.WeightNormDense.create(3, 2, rng())
    x = rng().normal(size=(5, 3))
    np.testing.assert_allclose(
        weight_norm.forward(x).output, dense.forward(x).output, rtol=1e-14, atol=1e-14
    )


# ----------------------------------------------------------------------------- invariances


@EXAMPLES
@given(affine_case(), st.data())
def test_shifting_a_column_leaves_batch_norm_unchanged(case, data) -> None:
    x, _, scale, shift = case
    constants = data.draw(values((x.shape[1],), -10.0, 10.0))
    assume(np.min(np.std(x, axis=0)) > 0.2)
    layer = nc.BatchNorm(scale=scale, shift=shift)
    a = layer.forward(x, "train").output
    b = layer.forward(x + constants, "train").output
    np.testing.assert_allclose(b, a, rtol=0, atol=1e-9)


@EXAMPLES
@given(affine_case(min_rows=1, min_features=2), st.data())
def test_shifting_a_row_leaves_layer_norm_unchanged(case, data) -> None:
    x, _, scale, shift = case
    constants = data.draw(values((x.shape[0], 1), -10.0, 10.0))
    assume(np.min(np.std(x, axis=1)) > 0.2)
    layer = nc.LayerNorm(scale=scale, shift=shift)
    a = layer.forward(x).output
    b = layer.forward(x + constants).output
    np.testing.assert_allclose(b, a, rtol=0, atol=1e-9)


def test_shifting_a_row_does_change_batch_norm() -> None:
    # The invariance is about the axis: batch norm does see a constant added along a row.
    x = nc.four_rows()
    moved = x.copy()
    moved[0] += 5.0
    layer = nc.BatchNorm.create(2)
    a = layer.forward(x, "train").output
    assert not np.allclose(a, layer.forward(moved, "train").output)


# ----------------------------------------------------------------------------- layers are values


def every_layer() -> list[tuple[object, np.ndarray]]:
    """One of each layer, with parameters that are not their starting values, and an input."""
    r = rng()
    block = r.normal(size=(5, 3)) * 3 + 1
    images = r.normal(size=(2, 4, 3, 3))
    stepped = nc.BatchNorm(
        scale=r.normal(size=3),
        shift=r.normal(size=3),
        running_mean=r.normal(size=3),
        running_var=r.uniform(0.5, 2, size=3),
    )
    return [
        (stepped, block),
        (nc.ImageBatchNorm(scale=r.normal(size=4), shift=r.normal(size=4)), images),
        (nc.LayerNorm(scale=r.normal(size=3), shift=r.normal(size=3)), block),
        (nc.RMSNorm(scale=r.normal(size=3), shift=r.normal(size=3)), block),
        (nc.InstanceNorm(scale=r.normal(size=4), shift=r.normal(size=4)), images),
        (nc.GroupNorm(scale=r.normal(size=4), shift=r.normal(size=4), groups=2), images),
        (nc.Dense(weights=r.normal(size=(3, 2)), bias=r.normal(size=2)), block),
        (nc.WeightNormDense(direction=r.normal(size=(3, 2)), magnitude=r.normal(size=2)), block),
        (nc.ReLU(), block),
        (nc.Tanh(), block),
        (nc.Sigmoid(), block),
    ]


LAYERS = every_layer()
IDS = [type(layer).__name__ for layer, _ in LAYERS]


@pytest.mark.parametrize(("layer", "x"), LAYERS, ids=IDS)
@pytest.mark.parametrize("mode", ["train", "eval"])
def test_forward_never_changes_the_layer_or_the_input(layer, x, mode) -> None:
    before, x_before = fields(layer), x.copy()
    response = layer.forward(x, mode)
    layer.backward(response, np.ones_like(response.output) * 0.5 + response.output)
    assert fields(layer) == before
    np.testing.assert_array_equal(x, x_before)


def test_training_passes_without_a_step_leave_prediction_where_it_was() -> None:
    layer, x = LAYERS[0]
    before = layer.forward(x).output
    layer.forward(x, "train")
    layer.forward(x * 3 + 7, "train")
    np.testing.assert_array_equal(layer.forward(x).output, before)


@pytest.mark.parametrize(
    ("layer", "x"),
    [c for c in LAYERS if dataclasses.fields(c[0])],
    ids=[i for c, i in zip(LAYERS, IDS, strict=True) if dataclasses.fields(c[0])],
)
def test_step_returns_a_new_layer_and_leaves_the_old_one(layer, x) -> None:
    before = fields(layer)
    response = layer.forward(x, "train")
    gradient = layer.backward(response, rng().normal(size=response.output.shape))
    new = layer.step(gradient, 0.1)
    assert new is not layer
    assert type(new) is type(layer)
    assert fields(layer) == before
    assert fields(new) != before
    # The old layer still answers as before; the new one answers differently.
    np.testing.assert_array_equal(layer.forward(x, "train").output, response.output)
    assert not np.array_equal(new.forward(x, "train").output, response.output)


def test_batch_norm_step_moves_running_figures_only_from_training() -> None:
    layer, x = LAYERS[0]
    predicted = layer.forward(x, "eval")
    new = layer.step(layer.backward(predicted, np.zeros_like(x)), 0.1)
    np.testing.assert_array_equal(new.running_mean, layer.running_mean)
    np.testing.assert_array_equal(new.running_var, layer.running_var)


# ----------------------------------------------------------------------------- stacks


S = 3


def stacked_cases():
    r = rng()
    x = r.normal(size=(S, 5, 3)) * 2 + 0.5
    d = r.normal(size=(S, 5, 3))
    d2 = r.normal(size=(S, 5, 2))
    scale, shift = r.normal(size=(S, 3)), r.normal(size=(S, 3))
    weights, bias = r.normal(size=(S, 3, 2)), r.normal(size=(S, 2))
    magnitude = r.normal(size=(S, 2))
    return [
        (
            "batch",
            lambda i: nc.BatchNorm(
                scale=scale if i is None else scale[i],
                shift=shift if i is None else shift[i],
                running_mean=(shift if i is None else shift[i]) * 0.3,
                running_var=(scale if i is None else scale[i]) ** 2,
            ),
            x,
            d,
        ),
        (
            "layer",
            lambda i: nc.LayerNorm(
                scale=scale if i is None else scale[i], shift=shift if i is None else shift[i]
            ),
            x,
            d,
        ),
        (
            "RMS",
            lambda i: nc.RMSNorm(
                scale=scale if i is None else scale[i], shift=shift if i is None else shift[i]
            ),
            x,
            d,
        ),
        (
            "dense",
            lambda i: nc.Dense(
                weights=weights if i is None else weights[i], bias=bias if i is None else bias[i]
            ),
            x,
            d2,
        ),
        (
            "weight norm",
            lambda i: nc.WeightNormDense(
                direction=weights if i is None else weights[i],
                magnitude=magnitude if i is None else magnitude[i],
                bias=bias if i is None else bias[i],
            ),
            x,
            d2,
        ),
    ]


def close(a: np.ndarray, b: np.ndarray) -> None:
    np.testing.assert_allclose(a, b, rtol=1e-15, atol=1e-15)


@pytest.mark.parametrize("case", stacked_cases(), ids=lambda c: c[0])
@pytest.mark.parametrize("mode", ["train", "eval"])
def test_stack_equals_the_loop(case, mode) -> None:
    _, make, x, d = case
    stacked = make(None)
    response = stacked.forward(x, mode)
    gradient = stacked.backward(response, d)
    moved = stacked.step(gradient, 0.1)
    for i in range(S):
        alone = make(i)
        r = alone.forward(x[i], mode)
        g = alone.backward(r, d[i])
        m = alone.step(g, 0.1)
        close(response.output[i], r.output)
        close(gradient.grad_input[i], g.grad_input)
        assert set(gradient.grads) == set(g.grads)
        for key in g.grads:
            close(gradient.grads[key][i], g.grads[key])
        for f in dataclasses.fields(m):
            value = getattr(m, f.name)
            if isinstance(value, np.ndarray):
                close(getattr(moved, f.name)[i], value)
        close(moved.forward(x, mode).output[i], m.forward(x[i], mode).output)


def test_stacked_models_do_not_share_rows() -> None:
    # Changing model 0's rows leaves model 1's training answer alone.
    x = rng().normal(size=(2, 4, 3))
    layer = nc.BatchNorm.create(3, stack=(2,))
    a = layer.forward(x, "train").output
    x2 = x.copy()
    x2[0] *= 5
    b = layer.forward(x2, "train").output
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.allclose(a[0], b[0])


# ----------------------------------------------------------------------------- dtypes


@pytest.mark.parametrize(("layer", "x"), LAYERS, ids=IDS)
def test_float32_in_float32_out(layer, x) -> None:
    x32 = x.astype(np.float32)
    response = layer.forward(x32, "train")
    assert response.output.dtype == np.float32
    gradient = layer.backward(response, np.ones_like(response.output))
    assert gradient.grad_input.dtype == np.float32
    # And the float32 answer is the float64 answer to float32 precision.
    np.testing.assert_allclose(
        response.output, layer.forward(x, "train").output, rtol=1e-4, atol=1e-4
    )


@pytest.mark.parametrize(("layer", "x"), LAYERS, ids=IDS)
def test_integers_are_answered_as_float64(layer, x) -> None:
    xi = np.round(x * 3).astype(np.int64)
    response = layer.forward(xi, "train")
    assert response.output.dtype == np.float64
    np.testing.assert_array_equal(
        response.output, layer.forward(xi.astype(np.float64), "train").output
    )


def test_integer_list_is_answered_as_float64() -> None:
    out = nc.BatchNorm.create(2).forward(nc.four_rows().astype(int).tolist(), "train").output
    assert out.dtype == np.float64
    # Column 2 standardised: (7 - 6) / sqrt(9 + 1e-5) ≈ 0.3333 (seed 000).
    np.testing.assert_allclose(out[0, 1], 0.3333, atol=5e-5)


# ----------------------------------------------------------------------------- edge answers


def test_constant_column_of_fives_answers_the_shift() -> None:
    # Seed 000: five in every cell of a column standardises to zero; the shift still applies.
    x = np.array([[5.0, 1.0], [5.0, 2.0], [5.0, 4.0]])
    layer = nc.BatchNorm(scale=np.array([3.0, 1.0]), shift=np.array([-0.25, 0.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = layer.forward(x, "train").output
    np.testing.assert_array_equal(out[:, 0], [-0.25, -0.25, -0.25])


@EXAMPLES
@given(
    st.integers(1, 8),
    st.floats(-100, 100, allow_subnormal=False),
    st.floats(-2, 2),
    st.floats(-2, 2),
)
def test_constant_column_answers_zeros_plus_shift(rows, constant, scale, shift) -> None:
    x = np.full((rows, 1), constant)
    layer = nc.BatchNorm(scale=np.array([scale]), shift=np.array([shift]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = layer.forward(x, "train").output
    # The mean of equal numbers can round by an ulp of the constant; divided by sqrt(eps).
    np.testing.assert_allclose(out, shift, rtol=0, atol=1e-11)


@EXAMPLES
@given(st.integers(1, 5).flatmap(lambda f: st.tuples(values((1, f)), values((1, f), -2, 2))))
def test_one_row_while_training_answers_zeros_without_warnings(case) -> None:
    x, d = case
    layer = nc.BatchNorm.create(x.shape[1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        response = layer.forward(x, "train")
        gradient = layer.backward(response, d)
        new = layer.step(gradient, 0.1)
    np.testing.assert_array_equal(response.output, np.zeros_like(x))
    np.testing.assert_array_equal(gradient.grad_input, np.zeros_like(x))
    np.testing.assert_array_equal(gradient.grads["scale"], np.zeros(x.shape[1]))
    # The running mean still folds in the row: 0.1 * x.
    np.testing.assert_allclose(new.running_mean, 0.1 * x[0], rtol=1e-15)


def test_sequential_is_its_layers_one_after_another() -> None:
    """forward first to last, backward last to first, step every layer with its own gradient:
    the same figures as calling the layers by hand."""
    rng = np.random.default_rng(0)
    layers = (
        nc.Dense.create(2, 3, rng),
        nc.ReLU(),
        nc.BatchNorm.create(3),
        nc.Dense.create(3, 1, rng),
    )
    net = nc.Sequential(layers)
    x = nc.four_rows()
    d = np.array([[1.0], [-2.0], [0.5], [3.0]])
    response = net.forward(x, "train")
    gradient = net.backward(response, d)
    stepped = net.step(gradient, 0.1)

    h, responses = x, []
    for layer in layers:
        responses.append(layer.forward(h, "train"))
        h = responses[-1].output
    np.testing.assert_array_equal(response.output, h)
    grad, gradients = d, []
    for layer, r in zip(reversed(layers), reversed(responses), strict=True):
        gradients.insert(0, layer.backward(r, grad))
        grad = gradients[0].grad_input
    np.testing.assert_array_equal(gradient.grad_input, grad)
    by_hand = [layer.step(g, 0.1) for layer, g in zip(layers, gradients, strict=True)]
    np.testing.assert_array_equal(stepped.layers[0].weights, by_hand[0].weights)
    np.testing.assert_array_equal(stepped.layers[2].running_mean, by_hand[2].running_mean)
    np.testing.assert_array_equal(stepped.layers[3].bias, by_hand[3].bias)
    assert net.layers[2].running_mean.tolist() == [0.0, 0.0, 0.0]  # the old one is unchanged


def test_sequential_refuses_what_is_not_a_stack_of_layers() -> None:
    for bad in ((), [1, 2], "layers", (nc.ReLU(), object())):
        with pytest.raises(nc.SettingError):
            nc.Sequential(bad)
    net, other = nc.Sequential((nc.ReLU(),)), nc.Sequential((nc.ReLU(),))
    response = net.forward(nc.four_rows())
    with pytest.raises(nc.ForeignResponseError):
        other.backward(response, np.ones((4, 2)))
    with pytest.raises(nc.ForeignResponseError):
        other.step(net.backward(response, np.ones((4, 2))), 0.1)
