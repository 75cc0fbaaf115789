"""Seed 000's worked numbers on the block (1, 7), (1, 9), (7, 1), (23, 7).

Every expected figure below is one the seed prints (at the precision it prints it), or follows
from a hand derivation written next to it. None was copied from normcore's own output.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import normcore as nc

pytestmark = pytest.mark.numeric  # figures from float arithmetic: make test-arith reruns it

EPS = 1e-5


def block() -> np.ndarray:
    return nc.four_rows()


def arriving() -> np.ndarray:
    # The gradient "counting up from one across the block", row by row.
    return np.arange(1.0, 9.0).reshape(4, 2)


def printed(actual, expected, decimals: int) -> None:
    """`actual` shows as `expected` when printed with `decimals` places (half a unit of slack)."""
    np.testing.assert_allclose(
        np.asarray(actual, dtype=np.float64), expected, rtol=0, atol=0.5 * 10.0**-decimals
    )


def trained_response(layer: nc.BatchNorm | None = None) -> nc.Response:
    layer = nc.BatchNorm.create(2) if layer is None else layer
    return layer.forward(block(), "train")


# --------------------------------------------------------------------------- the worked column


def test_column_two_mean_is_six() -> None:
    # 7 + 9 + 1 + 7 = 24, 24 / 4 = 6 (seed 000, step 3).
    stats = trained_response().statistics
    assert stats.mean[1] == 6.0
    # Hand derivation for column 1: 1 + 1 + 7 + 23 = 32, 32 / 4 = 8.
    assert stats.mean[0] == 8.0


def test_column_two_biased_variance_is_nine() -> None:
    # Deviations 1, 3, -5, 1; squares 1, 9, 25, 1; 36 / 4 = 9 (divided by n, not n - 1).
    stats = trained_response().statistics
    assert stats.variance[1] == 9.0
    # Column 1 by hand: deviations -7, -7, -1, 15; squares 49 + 49 + 1 + 225 = 324; 324 / 4 = 81.
    assert stats.variance[0] == 81.0


def test_column_two_deviation_has_epsilon_under_the_root() -> None:
    # sqrt(9 + 0.00001) = 3.0000017 (seed 000).
    stats = trained_response().statistics
    printed(stats.divisor[1], 3.0000017, 7)
    assert stats.divisor[1] > 3.0  # epsilon is under the root, not outside it


def test_column_two_standardised() -> None:
    # (7 - 6)/3, (9 - 6)/3, (1 - 6)/3, (7 - 6)/3 printed as 0.3333, 1.0000, -1.6667, 0.3333,
    # and the 1.0000 is 0.9999994 when epsilon is inside the root.
    out = trained_response().output[:, 1]
    printed(out, [0.3333, 1.0, -1.6667, 0.3333], 4)
    printed(out[1], 0.9999994, 7)
    assert out[1] < 1.0


def test_first_row_among_four() -> None:
    # The seed: the first row answered -0.7778 and 0.3333 among the four.
    printed(trained_response().output[0], [-0.7778, 0.3333], 4)


def test_normalised_variance_is_a_little_below_one() -> None:
    # v / (v + eps) = 9 / (9 + 0.00001) ≈ 0.9999989 (seed 000): the mean square of the
    # standardised column (its mean is zero).
    z = nc.standardise(block(), (0,), EPS).z[:, 1]
    printed(np.mean(z * z), 0.9999989, 7)


# --------------------------------------------------------------------------- scale and shift


def test_undo_exactly_returns_the_block() -> None:
    # gamma = sqrt(v + eps), beta = m per feature gives gamma (x - m) / sqrt(v + eps) + beta = x.
    # Seed: largest gap 8.9e-16, the first row's 1 back as 0.9999999999999991.
    stats = trained_response().statistics
    undo = nc.BatchNorm(scale=stats.divisor, shift=stats.mean)
    out = undo.forward(block(), "train").output
    assert np.max(np.abs(out - block())) <= 1e-15


def test_undo_exactly_needs_the_deviation_not_the_variance() -> None:
    # A test that could fail: using the variance as the scale does not give the block back.
    stats = trained_response().statistics
    wrong = nc.BatchNorm(scale=stats.variance, shift=stats.mean)
    out = wrong.forward(block(), "train").output
    assert np.max(np.abs(out - block())) > 1.0


# --------------------------------------------------------------------------- the batch matters


def test_first_row_among_the_first_two_rows() -> None:
    # Rows (1, 7), (1, 9): column 1 is constant -> 0; column 2 has mean 8, variance 1,
    # (7 - 8) / sqrt(1 + eps) -> -1.0000 at the seed's four places.
    out = nc.BatchNorm.create(2).forward(block()[:2], "train").output
    printed(out[0], [0.0, -1.0], 4)
    assert out[0, 0] == 0.0


def test_batch_of_one_answers_zeros_while_training_without_warnings() -> None:
    layer = nc.BatchNorm.create(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        response = layer.forward(block()[:1], "train")
        gradient = layer.backward(response, np.array([[3.0, -2.0]]))
    np.testing.assert_array_equal(response.output, np.zeros((1, 2)))
    # One row has no spread: nothing reaches the row through the batch statistics.
    np.testing.assert_array_equal(gradient.grad_input, np.zeros((1, 2)))


def test_fresh_layer_predicting_row_one() -> None:
    # Running mean 0, running variance 1: 1 / sqrt(1.00001) = 0.999995, 7 / sqrt(1.00001)
    # = 6.999965 (seed 000).
    out = nc.BatchNorm.create(2).forward(block()[:1]).output
    printed(out[0], [0.999995, 6.999965], 6)


def test_predicting_is_the_default_mode() -> None:
    layer = nc.BatchNorm.create(2)
    np.testing.assert_array_equal(
        layer.forward(block()).output, layer.forward(block(), "eval").output
    )


# --------------------------------------------------------------------------- running statistics


def one_step(layer: nc.BatchNorm, rate: float) -> nc.BatchNorm:
    response = layer.forward(block(), "train")
    gradient = layer.backward(response, np.zeros((4, 2)))
    return layer.step(gradient, rate)


@pytest.mark.parametrize("rate", [0.0, 0.1, 7.5])
def test_running_figures_after_one_step(rate: float) -> None:
    # running = 0.9 * running + 0.1 * batch: mean 0.9 * 0 + 0.1 * 6 = 0.6,
    # variance 0.9 * 1 + 0.1 * 9 = 1.8 (seed 000). A zero gradient moves neither scale nor shift.
    layer = one_step(nc.BatchNorm.create(2), rate)
    printed(layer.running_mean[1], 0.6, 12)
    printed(layer.running_var[1], 1.8, 12)
    # Column 1 by hand: 0.1 * 8 = 0.8 and 0.9 + 0.1 * 81 = 9.0.
    printed(layer.running_mean[0], 0.8, 12)
    printed(layer.running_var[0], 9.0, 12)
    np.testing.assert_array_equal(layer.scale, [1.0, 1.0])
    np.testing.assert_array_equal(layer.shift, [0.0, 0.0])


def test_row_one_predicted_after_one_step() -> None:
    # (7 - 0.6) / sqrt(1.8 + 0.00001) = 6.4 / 1.3416445 = 4.7702651 (seed 000).
    layer = one_step(nc.BatchNorm.create(2), 0.3)
    printed(np.sqrt(1.8 + EPS), 1.3416445, 7)
    printed(layer.forward(block()[:1]).output[0, 1], 4.7702651, 7)


def gaps_over_steps(steps: int) -> list[float]:
    """Largest |predicting - training| over the block after each of `steps` steps."""
    layer = nc.BatchNorm.create(2)
    gaps = []
    for _ in range(steps):
        layer = one_step(layer, 0.5)
        predicting = layer.forward(block()).output
        training = layer.forward(block(), "train").output
        gaps.append(float(np.max(np.abs(predicting - training))))
    return gaps


def test_gap_between_modes_over_a_hundred_steps() -> None:
    # Seed 000: 5.7333 after one step, 1.0433 after ten, 0.0238 after forty-four, first under
    # 0.01 at step 53 and under 0.001 at step 75, 6.5e-05 after a hundred.
    # Step 1 by hand: column 1 running mean 0.8, variance 9.0; row 4 predicts
    # (23 - 0.8) / sqrt(9.00001) ≈ 7.4 against 15 / 9 ≈ 1.6667 while training: 5.7333.
    gaps = gaps_over_steps(100)
    printed(gaps[0], 5.7333, 4)
    printed(gaps[9], 1.0433, 4)
    printed(gaps[43], 0.0238, 4)
    assert next(i for i, g in enumerate(gaps, 1) if g < 0.01) == 53
    assert next(i for i, g in enumerate(gaps, 1) if g < 0.001) == 75
    printed(gaps[99], 6.5e-05, 6)


def test_stepped_hundred_times_predicts_like_the_batch() -> None:
    # Seed: a layer stepped a hundred times answers -0.7778 and 0.3334 for the first row.
    layer = nc.BatchNorm.create(2)
    for _ in range(100):
        layer = one_step(layer, 0.5)
    printed(layer.forward(block()[:1]).output[0], [-0.7778, 0.3334], 4)


# --------------------------------------------------------------------------- backward


def worked_gradient() -> nc.Gradient:
    layer = nc.BatchNorm.create(2)
    return layer.backward(layer.forward(block(), "train"), arriving())


def test_column_two_grad_input() -> None:
    # (n d - sum d - z sum(d z)) / (n s) with sum d = 20, sum(d z) = -2.6667, n s ≈ 12:
    # -0.9259, -0.1111, -0.0370, 1.0741 (seed 000).
    printed(worked_gradient().grad_input[:, 1], [-0.9259, -0.1111, -0.0370, 1.0741], 4)


def test_grad_input_columns_sum_to_zero() -> None:
    np.testing.assert_allclose(worked_gradient().grad_input.sum(axis=0), 0.0, atol=1e-12)


def test_scale_grads() -> None:
    # Column 2: sum(d z) ≈ 2(1/3) + 4(1) + 6(-5/3) + 8(1/3) = -2.6667 (seed).
    # Column 1 printed by the seed as 8.0: z = (-7, -7, -1, 15)/9, d = 1, 3, 5, 7,
    # (-7 - 21 - 5 + 105) / 9 = 72 / 9 = 8.
    grads = worked_gradient().grads
    printed(grads["scale"][0], 8.0, 1)
    printed(grads["scale"][1], -2.6667, 4)


def test_shift_grads() -> None:
    # 1 + 3 + 5 + 7 = 16 and 2 + 4 + 6 + 8 = 20, exact sums of whole numbers.
    np.testing.assert_array_equal(worked_gradient().grads["shift"], [16.0, 20.0])


def test_naive_form_column_two() -> None:
    # d / s for column 2: 2/3, 4/3, 6/3, 8/3 = (0.6667, 1.3333, 2, 2.6667), summing to 6.6667.
    naive = nc.naive_backward(nc.standardise(block(), (0,), EPS), arriving())
    printed(naive[:, 1], [0.6667, 1.3333, 2.0, 2.6667], 4)
    printed(naive[:, 1].sum(), 6.6667, 4)


def test_naive_form_column_sums() -> None:
    # Column 1: (1 + 3 + 5 + 7) / 9 = 16 / 9 = 1.7778; column 2: 20 / 3 = 6.6667 (seed).
    naive = nc.naive_backward(nc.standardise(block(), (0,), EPS), arriving())
    printed(naive.sum(axis=0), [1.7778, 6.6667], 4)
    # And the naive block is not what the layer passes down.
    assert np.max(np.abs(naive - worked_gradient().grad_input)) > 1.0


def test_finite_difference_agrees_with_grad_input_not_naive() -> None:
    # The seed's oracle: objective sum(d * output); the true block agrees to ~2e-10,
    # the naive form misses by 2.0370 (more than the largest true gradient, 1.0741).
    layer = nc.BatchNorm.create(2)

    def objective(x: np.ndarray) -> float:
        return float(np.sum(arriving() * layer.forward(x, "train").output))

    check = nc.check_grad(objective, block(), worked_gradient().grad_input)
    assert check.largest_gap < 1e-8
    naive = nc.naive_backward(nc.standardise(block(), (0,), EPS), arriving())
    printed(np.max(np.abs(check.oracle - naive)), 2.0370, 4)


# --------------------------------------------------------------------------- along the row


def test_layer_norm_row_is_plus_minus_one() -> None:
    # Row (1, 7): mean 4, variance 9, (1 - 4)/3.0000017 = -0.9999994, (7 - 4)/3.0000017.
    out = nc.LayerNorm.create(2).forward(block()[:1], "train").output
    printed(out[0], [-0.9999994, 0.9999994], 7)


def test_layer_norm_any_two_number_row_is_plus_minus_one() -> None:
    # Every row of two distinct numbers standardises to -1 and +1 (to within epsilon).
    out = nc.LayerNorm.create(2).forward(block()).output
    np.testing.assert_allclose(np.abs(out), 1.0, atol=1e-5)


def test_rms_row_one() -> None:
    # (1 + 49) / 2 = 25, sqrt(25 + 0.00001) = 5.000001, 1/5.000001 = 0.2000, 7/5.000001 = 1.4000.
    row = block()[:1]
    out = nc.RMSNorm.create(2).forward(row).output
    printed(out[0], [0.2, 1.4], 4)
    root = nc.standardise(row, (1,), EPS, centre=False).divisor
    printed(root[0, 0], 5.000001, 6)
    # 1/5.000001 and 7/5.000001 lie a little below 0.2 and 1.4.
    assert out[0, 0] < 0.2 and out[0, 1] < 1.4


def test_the_worked_block_is_the_books_four_rows() -> None:
    """The one definition (normcore.worked) holds the rows the book works by hand, read-only."""
    assert nc.FOUR_ROWS.tolist() == [[1.0, 7.0], [1.0, 9.0], [7.0, 1.0], [23.0, 7.0]]
    assert not nc.FOUR_ROWS.flags.writeable and nc.four_rows().flags.writeable
