"""Chapter 5's weight-norm case: gradients against independent arithmetic, and the step's claims."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from normcore import Dense, WeightNormDense, ZeroDirectionError
from normcore.errors import NormcoreError
from normcore.exercises import ch05
from normcore.experiments import weightnorm

pytestmark = pytest.mark.numeric  # figures from float arithmetic: make test-arith reruns it

lengths = st.lists(st.floats(0.2, 4.0), min_size=1, max_size=4)


def test_forward_is_a_dense_layer_exactly():
    checks = weightnorm.grad_checks(weightnorm.make_case())
    assert checks.forward_gap == 0.0


def test_grads_match_finite_differences_and_shortcut_does_not():
    checks = weightnorm.grad_checks(weightnorm.make_case())
    assert checks.direction_gap < 1e-8
    assert checks.magnitude_gap < 1e-8
    assert checks.unprojected_gap > 0.1 * checks.largest_direction_grad


@settings(max_examples=25, deadline=None)
@given(lengths, st.integers(0, 1000))
def test_projected_grad_is_orthogonal_to_the_direction(ls, seed):
    checks = weightnorm.grad_checks(weightnorm.make_case(ls, seed), step=1e-5)
    assert np.all(np.abs(checks.projected_dot) < 1e-9)


def test_grad_formula_by_hand():
    # one neuron, direction (3, 4), length 2, dense gradient (0.6, -0.2): u = (0.6, 0.8),
    # along = 0.36 - 0.16 = 0.2; rest = (0.6, -0.2) - 0.2 (0.6, 0.8) = (0.48, -0.36); g/|v| = 0.4
    layer = WeightNormDense(direction=np.array([[3.0], [4.0]]), magnitude=np.array([2.0]))
    grads = layer.grads_from_dense(np.array([[0.6], [-0.2]]))
    np.testing.assert_allclose(grads["magnitude"], [0.2], atol=1e-15)
    np.testing.assert_allclose(grads["direction"], [[0.192], [-0.144]], atol=1e-15)
    assert ch05.check_magnitude_grad(0.2) == "right"
    assert ch05.check_direction_grad([[0.192], [-0.144]]) == "right"
    # unprojected: 0.4 (0.6, -0.2) . (3, 4) = 0.4 * 1.0
    assert ch05.check_unprojected_dot(0.4) == "right"
    assert ch05.check_unprojected_dot(0.0) != "right"


@settings(max_examples=25, deadline=None)
@given(lengths, st.floats(0.01, 2.0))
def test_a_step_never_shrinks_a_direction(ls, stride):
    case = weightnorm.make_case(ls)
    response, d = weightnorm.arriving_grad(case.weightnorm, case.x, case.y)
    moved = case.weightnorm.step(case.weightnorm.backward(response, d), stride)
    before = np.linalg.norm(case.weightnorm.direction, axis=0)
    after = np.linalg.norm(moved.direction, axis=0)
    assert np.all(after >= before * (1 - 1e-12))


def test_step_is_not_a_renaming():
    step = weightnorm.one_step(weightnorm.make_case())
    assert step.distance > 1e-4
    np.testing.assert_allclose(step.length_before, weightnorm.LENGTHS)
    # the dense layer's own step, worked independently: w - stride * x^T d
    case = weightnorm.make_case()
    response, d = weightnorm.arriving_grad(case.dense, case.x, case.y)
    expected = case.dense.weights - 0.1 * case.x.T @ d
    np.testing.assert_allclose(step.weights_dense, expected, atol=1e-14)


def test_zero_length_is_refused():
    with pytest.raises(ZeroDirectionError):
        weightnorm.make_case((1.0, 0.0, 0.5))


def test_widget_says_what_is_wrong_and_answers_as_the_experiment():
    from normcore.widgets import weightnorm_model as wm
    from normcore.widgets.weightnorm import weightnorm_step_widget

    w = weightnorm_step_widget()
    step = weightnorm.one_step(weightnorm.make_case())
    f = w.figures_for()
    np.testing.assert_allclose(f["weightnorm"], step.length_weightnorm, rtol=1e-9)
    np.testing.assert_allclose(f["dense"], step.length_dense, rtol=1e-9)
    assert f["distance"] == pytest.approx(step.distance, rel=1e-9)
    w.act(wm.set_length, 1, "0")
    assert w.figures_for()["error"].startswith("Length 2 is 0")
    w.act(wm.set_length, 0, "abc")
    assert w.figures_for()["error"] == "Length 1: 'abc' is not a number."
    w.act(wm.set_learning_rate, "1e400")
    w.act(wm.set_length, 0, "2")
    w.act(wm.set_length, 1, "2")
    assert w.figures_for()["error"] == "Learning rate: '1e400' is too large to be a number here."


def test_dense_and_weightnorm_answer_alike_for_random_layers():
    rng = np.random.default_rng(3)
    v = rng.normal(size=(4, 3))
    x = rng.normal(size=(6, 4))
    a = WeightNormDense(direction=v).forward(x).output
    b = Dense(weights=v).forward(x).output
    np.testing.assert_allclose(a, b, rtol=1e-14, atol=1e-14)


def test_length_gap_and_second_order_constant_against_the_steps():
    case = weightnorm.make_case(seed=11)
    for rate in (0.01, 0.1, 0.3):
        step = weightnorm.one_step(case, rate)
        np.testing.assert_allclose(
            step.length_dense - step.length_weightnorm,
            weightnorm.length_gap(case, rate),
            rtol=1e-7,
            atol=1e-15,
        )
    c = weightnorm.second_order_constant(case)
    ratio = weightnorm.one_step(case, 1e-3).distance / 1e-6
    assert abs(ratio / c - 1) < 5e-3
    np.testing.assert_allclose(weightnorm.turning_factor(case.weightnorm), 1.0, rtol=1e-12)


def test_data_dependent_start_standardises_the_batch():
    x = np.random.default_rng(3).normal(size=(30, 2)) * [1.0, 5.0] + [2.0, -1.0]
    layer = weightnorm.make_case().weightnorm
    started = weightnorm.data_dependent_start(layer, x)
    t = started.forward(x).output
    np.testing.assert_allclose(t.mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(t.std(axis=0), 1, rtol=1e-12)
    np.testing.assert_array_equal(started.direction, layer.direction)
    with pytest.raises(NormcoreError):
        weightnorm.data_dependent_start(layer, np.ones((4, 2)))
