"""Chapter 3's experiment functions (normcore.experiments.routes) and exercise checks.

Expected figures come from seed 000's printed worked numbers or from hand derivations written
beside them, and the property tests hold the code against an independent numpy formula.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from normcore.errors import SettingError, ShapeError
from normcore.exercises import ch03
from normcore.experiments import routes

pytestmark = pytest.mark.numeric  # figures from float arithmetic: make test-arith reruns it

EPS = 1e-5


def collected_by_hand(x: np.ndarray, d: np.ndarray, axis: int) -> np.ndarray:
    """The three-route line written out independently, statistics along `axis`."""
    n = x.shape[axis]
    mean = x.mean(axis=axis, keepdims=True)
    s = np.sqrt(((x - mean) ** 2).mean(axis=axis, keepdims=True) + EPS)
    z = (x - mean) / s
    return (n * d - d.sum(axis=axis, keepdims=True) - z * (d * z).sum(axis=axis, keepdims=True)) / (
        n * s
    )


def test_worked_four_matches_the_seeds_printed_figures():
    c = routes.compare_gradients(routes.WORKED_X)
    # seed 000, second unit: -0.9259, -0.1111, -0.0370, 1.0741
    assert np.allclose(c.true[:, 1], [-0.9259, -0.1111, -0.0370, 1.0741], atol=5e-5)
    # first unit by hand: mean 8, s = 9, z = (-7, -7, -1, 15)/9, d = 1, 3, 5, 7,
    # sum d = 16, sum dz = 8, n s = 36 -> (4 d - 16 - 8 z) / 36
    z = np.array([-7.0, -7.0, -1.0, 15.0]) / 9
    hand = (4 * np.array([1.0, 3.0, 5.0, 7.0]) - 16 - 8 * z) / 36
    assert np.allclose(c.true[:, 0], hand, atol=1e-6)
    assert c.naive_error == pytest.approx(2.0370, abs=5e-5)  # seed: misses by 2.0370
    assert c.largest_true == pytest.approx(1.0741, abs=5e-5)
    assert np.allclose(c.naive_sums, [1.7778, 6.6667], atol=5e-5)  # seed: 1.7778 and 6.6667
    assert np.allclose(c.scale_grad, [8.0, -2.6667], atol=5e-5)
    assert np.allclose(c.shift_grad, [16.0, 20.0])
    assert c.true_gap < 1e-7


def test_wrong_sign_cells_on_the_worked_four():
    # true signs from the hand derivation above (column 1) and the seed (column 2);
    # the naive block d / s is positive everywhere.
    c = routes.compare_gradients(routes.WORKED_X)
    expected = np.array([[True, True], [False, True], [False, True], [True, False]])
    assert np.array_equal(c.wrong_sign, expected)


def test_route_terms_add_up_to_the_layers_block():
    terms = routes.route_terms()
    assert np.allclose(terms.sum_d, [16.0, 20.0])
    assert np.allclose(terms.sum_dz, [8.0, -8 / 3], atol=1e-5)
    assert np.allclose(terms.own, routes.worked_grad() / terms.divisor)
    assert np.allclose(terms.total, routes.compare_gradients(routes.WORKED_X).true)


blocks = hnp.arrays(
    np.float64,
    st.tuples(st.integers(2, 5), st.integers(2, 4)),
    elements=st.floats(-50, 50, allow_nan=False, allow_infinity=False),
)


@settings(max_examples=40, deadline=None)
@given(blocks, st.sampled_from(["batch", "layer"]), st.integers(0, 2**16))
def test_collected_block_matches_an_independent_formula_and_the_oracle(x, axis, seed):
    stat_axis = 0 if axis == "batch" else 1
    assume(np.all(x.std(axis=stat_axis) > 0.5))
    d = np.random.default_rng(seed).normal(size=x.shape)
    c = routes.compare_gradients(x, d, axis)
    assert np.allclose(c.true, collected_by_hand(x, d, stat_axis), atol=1e-10)
    scale = max(1.0, float(np.max(np.abs(c.oracle))))
    assert c.true_gap < 1e-5 * scale
    assert np.max(np.abs(c.true_sums)) < 1e-9 * scale  # centring: sums along the statistic vanish
    # the second check: sum of g * z is the naive figure shrunk by exactly eps / (variance + eps)
    shrink = EPS / (x.var(axis=stat_axis) + EPS)
    dots_scale = max(1.0, float(np.max(np.abs(c.naive_dots))))
    assert np.max(np.abs(c.true_dots - shrink * c.naive_dots)) < 1e-10 * dots_scale


def test_rms_block_has_two_routes_and_no_zero_sum():
    x = np.array([[1.0, 7.0, 4.0], [2.0, -3.0, 5.0]])
    d = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    c = routes.compare_gradients(x, d, "rms")
    root = np.sqrt((x**2).mean(axis=1, keepdims=True) + EPS)
    z = x / root
    hand = (3 * d - z * (d * z).sum(axis=1, keepdims=True)) / (3 * root)
    assert np.allclose(c.true, hand)
    assert c.true_gap < 1e-6
    assert np.max(np.abs(c.true_sums)) > 0.1


def test_compare_blocks_refuses_bad_shapes_and_axes():
    with pytest.raises(ShapeError):
        routes.compare_gradients(np.ones(3))
    with pytest.raises(ShapeError):
        routes.compare_gradients(np.ones((2, 2)), np.ones((2, 3)))
    with pytest.raises(SettingError):
        routes.compare_gradients(np.ones((2, 2)), axis="diagonal")


def test_gap_against_step_has_a_floor_between_truncation_and_rounding():
    sweep = routes.gap_against_step()
    assert sweep.gaps.shape == (12,)
    assert sweep.steps[0] == pytest.approx(0.1) and sweep.steps[-1] == pytest.approx(1e-12)
    # truncation: the gap at 0.1 over the gap at 0.01 is close to 100 (error ~ h**2)
    assert 50 < sweep.gaps[0] / sweep.gaps[1] < 200
    # rounding: smaller steps past the floor make things worse
    assert sweep.gaps[-1] > 1e3 * sweep.best_gap
    assert 1e-6 <= sweep.best_step <= 1e-3


def test_naive_training_starts_level_and_still_trains():
    pair = routes.naive_versus_true(seeds=(0, 1), epochs=60)
    assert pair.true_loss.shape == pair.naive_loss.shape == (60, 2)
    assert np.allclose(pair.true_loss[0], pair.naive_loss[0])
    assert np.all(pair.naive_loss[-1] < pair.naive_loss[0])
    assert not np.allclose(pair.true_loss[-1], pair.naive_loss[-1])


def test_the_stacked_pair_is_each_run_on_its_own():
    """The true and the naive passes train side by side (`PartlyNaive`): each network's losses
    are bit for bit those of the same network trained alone, with the true or the naive pass."""
    from normcore.data import load_crowd
    from normcore.experiments import network

    seeds, epochs = (3, 5), 40
    pair = routes.naive_versus_true(seeds=seeds, epochs=epochs, rate=1.0)
    (x,) = network.standardise_features(load_crowd().features)
    xs, ys = np.stack([x, x]), np.stack([load_crowd().labels] * 2)
    for naive, losses in ((False, pair.true_loss), (True, pair.naive_loss)):
        alone = network.build("batch", list(seeds))
        alone, history = network.train(alone, xs, ys, epochs=epochs, rate=1.0, naive=naive)
        np.testing.assert_array_equal(losses, history.loss)
        np.testing.assert_array_equal(
            pair.naive_accuracy if naive else pair.true_accuracy, network.accuracy(alone, xs, ys)
        )
    assert not np.array_equal(pair.true_loss, pair.naive_loss)  # the two passes do differ


def test_rescaling_a_hidden_unit_below_the_batch_layer_changes_no_output():
    """The hidden units are scale-invariant (a ReLU and a batch layer follow them): rescaling a
    unit's weights and bias leaves the outputs unchanged up to epsilon, and the true gradient is
    at right angles to each unit's weights while the naive one is not."""
    from normcore.data import load_crowd
    from normcore.experiments import network

    (x,) = network.standardise_features(load_crowd().features)
    net = network.build("batch", [0, 1])
    factor = np.random.default_rng(7).uniform(0.5, 4.0, size=(2, 16))
    moved = routes.rescaled_hidden(net, factor)
    np.testing.assert_allclose(routes.unit_norms(moved), factor * routes.unit_norms(net))
    xs = np.stack([x, x])
    before = network.forward(net, xs, "train").logits
    after = network.forward(moved, xs, "train").logits
    assert np.max(np.abs(after - before)) < 1e-3 * np.max(np.abs(before))
    first = routes.first_hidden_grads(seed=0)
    w = net.hidden.weights[0]
    # per unit, <gradient, weights> (the bias part is left out: only the weights' gradient is
    # compared here, and the bias starts at zero, so the weights are the whole unit)
    along_true = np.abs(np.sum(first.true * w, axis=0)).max()
    along_naive = np.abs(np.sum(first.naive * w, axis=0)).max()
    assert along_true < 1e-3 * along_naive


def test_equalised_training_keeps_the_norms_equal():
    pair = routes.naive_versus_true(seeds=(0, 1), epochs=30, equalise=True)
    np.testing.assert_allclose(pair.naive_norm, pair.true_norm, rtol=1e-9)
    plain = routes.naive_versus_true(seeds=(0, 1), epochs=30)
    assert np.all(plain.naive_norm[-1] > plain.true_norm[-1])
    with pytest.raises(SettingError):
        routes.naive_versus_true(seeds=(0,), epochs=2, variant="layer", equalise=True)


def test_first_hidden_grads_differ_but_are_correlated():
    first = routes.first_hidden_grads(seed=0)
    assert first.true.shape == first.naive.shape == (2, 16)
    assert -1.0 <= first.cosine < 0.999
    assert first.relative_gap > 0.1


def test_exercise_checks_accept_the_right_answer_and_hide_it():
    # exercise 1 by hand: x = 2, 4, 9 (mean 5, variance 26/3), d = 1, 0, 2: sum d = 3, so the
    # mean's route takes 3 / (3 s) from every row
    x = np.array([2.0, 4.0, 9.0])
    s = np.sqrt(26 / 3 + EPS)
    z = (x - 5) / s
    d = np.array([1.0, 0.0, 2.0])
    hand = (3 * d - 3 - z * (d * z).sum()) / (3 * s)
    assert ch03.check_grad_input(hand[:, None]) == "right"
    assert ch03.check_grad_input(hand[:, None].round(4)) == "right"  # four decimals, as asked
    assert ch03.check_naive_sum(0.0) == "right"  # the naive block d / s sums to 0 here
    wrong = ch03.check_grad_input(np.zeros((3, 1)))
    assert wrong.startswith("not yet") and f"{hand[0]:.3f}" not in wrong
    assert ch03.check_constant_grad(np.zeros((3, 2))) == "right"  # constant d: all routes cancel
    naive_two = ch03.GRAD_TWO / np.sqrt(ch03.X_TWO.var(axis=0) + EPS)
    assert "naive" in ch03.check_constant_grad(naive_two.round(4))
    assert ch03.check_step_gap("many").startswith("not yet")
    assert ch03.check_step_gap(-1).startswith("not yet")


def test_jacobian_is_the_collected_line_and_a_projection():
    x = routes.WORKED_X[:, 0]
    J = routes.jacobian(x)
    s = np.sqrt(x.var() + EPS)
    z = (x - x.mean()) / s
    d = np.array([0.3, -1.0, 2.0, 0.5])
    assert np.allclose(J @ d, collected_by_hand(x[:, None], d[:, None], 0)[:, 0], atol=1e-12)
    assert np.allclose(J @ np.ones(4), 0.0, atol=1e-12)
    assert np.allclose(J @ z, EPS / (x.var() + EPS) * z / s, atol=1e-15)


def test_second_structural_check_catches_the_naive_block():
    c = routes.compare_gradients(routes.WORKED_X)
    # review's figures: collected 1.1e-7 and -9.9e-7, naive +-0.889 (8/9 and -(8/3)/3)
    assert np.allclose(c.naive_dots, [8 / 9, -8 / 9], atol=1e-5)
    assert np.allclose(c.true_dots, [1e-5 / 81 * 8 / 9, -1e-5 / 9 * 8 / 9], rtol=1e-4)
    r = routes.compare_gradients(np.array([[1.0, 2, 3], [4, -1, 2]]), axis="rms")
    assert np.max(np.abs(r.true_dots)) < 1e-4 < np.min(np.abs(r.naive_dots))


def test_rule_step_is_the_cube_root_of_eps_times_the_scale():
    assert routes.rule_step([[0.5]]) == pytest.approx(np.finfo(float).eps ** (1 / 3))
    assert routes.rule_step(routes.WORKED_X) == pytest.approx(23 * 6.055454e-6, rel=1e-5)


def test_new_exercise_checks_name_the_mistakes():
    wrong = routes.compare_gradients(ch03.X_THREE).wrong_sign
    assert ch03.check_backwards_cells(wrong) == "right"
    assert ch03.check_backwards_cells(~wrong).startswith("not yet: every cell is the other way")
    assert "whole column" in ch03.check_backwards_cells(np.ones((4, 2), bool))
    assert ch03.check_backwards_cells([1, 2]).startswith("not yet: the answer should be a 4 x 2")
    x, d = ch03.X_ONE, ch03.GRAD_UNEVEN
    assert ch03.check_unbiased(ch03.unbiased_grad_input(x, d)) == "right"
    assert ch03.check_unbiased(ch03.unbiased_grad_input(x, d).round(4)) == "right"
    assert "biased layer" in ch03.check_unbiased(routes.compare_gradients(x, d).true)
    assert "1/n" in ch03.check_unbiased(_kept_one_over_n(x, d))


def _derivations(x, d, ddof=0):
    """The wrong derivations of the batch layer's input gradient a reader may write, by name:
    each leaves out a route, or puts n - 1 where it does not belong."""
    n = x.shape[0]
    s = np.sqrt(x.var(axis=0, ddof=ddof) + EPS)
    z = (x - x.mean(axis=0)) / s
    return {
        "naive": d / s,
        "missing mean": (n * d - z * (d * z).sum(axis=0)) / (n * s),
        "missing variance": (n * d - d.sum(axis=0)) / (n * s),
        "n - 1 everywhere": ((n - 1) * d - d.sum(axis=0) - z * (d * z).sum(axis=0)) / ((n - 1) * s),
    }


@pytest.mark.parametrize("name", ["naive", "missing mean", "missing variance"])
def test_the_input_gradient_checker_catches_each_wrong_derivation(name):
    """D3: under an upstream gradient that sums to zero a missing mean route is invisible; the
    exercise's gradient does not sum to zero, and each wrong derivation is refused and named,
    also rounded to the four decimals the question asks for."""
    x, d = ch03.X_ONE, ch03.GRAD_UNEVEN
    assert d.sum() != 0
    wrong = _derivations(x, d)[name]
    for answer in (wrong, wrong.round(4)):
        reply = ch03.check_grad_input(answer)
        assert reply.startswith("not yet: ") and reply != "not yet: that is not the answer"
        word = {"naive": "naive", "missing mean": "mean is missing"}.get(name, "variance")
        assert word in reply
    # the old gradient could not tell the missing mean route from the right answer
    old = _derivations(x, ch03.GRAD_ONE)["missing mean"]
    assert np.allclose(old, routes.compare_gradients(x, ch03.GRAD_ONE).true)


@pytest.mark.parametrize("name", ["naive", "missing mean", "n - 1 everywhere"])
def test_the_unbiased_checker_catches_each_wrong_derivation(name):
    x, d = ch03.X_ONE, ch03.GRAD_UNEVEN
    wrong = _derivations(x, d, ddof=1)[name]
    reply = ch03.check_unbiased(wrong.round(4))
    assert reply.startswith("not yet")
    if name == "n - 1 everywhere":
        assert "every route" in reply


def test_the_float32_floor_checker():
    ratio = 2.0**29
    assert ch03.check_float32_floor(ratio ** (2 / 3)) == "right"
    assert ch03.check_float32_floor(float(f"{ratio ** (2 / 3):.2g}")) == "right"  # two figures
    assert "unit roundoff" in ch03.check_float32_floor(ratio)
    assert "best step" in ch03.check_float32_floor(ratio ** (1 / 3))
    assert ch03.check_float32_floor(-1).startswith("not yet")


@pytest.mark.parametrize("mistake", [0, 1, 2, 3])
def test_the_rms_backward_checker_names_each_mistake(mistake):
    def right(x, d, e):
        r = np.sqrt((x * x).mean(axis=1, keepdims=True) + e)
        y = x / r
        return (d - y * (d * y).mean(axis=1, keepdims=True)) / r

    assert ch03.check_rms_backward_function(right) == "right"

    def wrong(x, d, e):
        return list(ch03._rms_mistakes(x, d, e).values())[mistake]

    reply = ch03.check_rms_backward_function(wrong)
    assert reply.startswith("not yet") and "usual ways" not in reply


def _kept_one_over_n(x, d):
    n = x.shape[0]
    s = np.sqrt(x.var(axis=0, ddof=1) + EPS)
    z = (x - x.mean(axis=0)) / s
    return (n * d - d.sum(axis=0) - z * (d * z).sum(axis=0)) / (n * s)


@pytest.mark.parametrize(
    "mistake, said",
    [
        (0, "naive"),
        (1, "variance is missing"),
        (2, "mean is missing"),
        (3, "unbiased"),
        (4, "axis=1"),
        (5, "outside the root"),
    ],
)
def test_write_it_yourself_checker_names_each_mistake(mistake, said):
    def wrong(x, d, e):
        return list(ch03._typical_mistakes(x, d, e).values())[mistake]

    reply = ch03.check_backward_function(wrong)
    assert reply.startswith("not yet") and said in reply
