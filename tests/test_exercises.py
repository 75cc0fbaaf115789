"""The exercise checkers' replies: a prompt before any answer, "right", "close" with how many
digits agree, and "not yet" that never reveals the answer."""

from __future__ import annotations

import numpy as np
import pytest

from normcore.exercises import PROMPT, Verdict, ch02, ch03, ch04, ch05, ch12, verdict


def test_none_is_a_prompt_not_a_failure():
    reply = verdict(None, 1.2345)
    assert reply == PROMPT and not reply.startswith("not yet") and not reply.right
    assert verdict([None, None], [1.0, 2.0]) == PROMPT


@pytest.mark.parametrize(
    "check",
    [
        ch02.check_standardised_23,
        ch02.check_steps_to_one_percent,
        ch03.check_grad_input,
        ch03.check_step_gap,
        ch04.check_statistics_shape,
        ch04.check_group_count,
        ch05.check_magnitude_grad,
        ch12.check_tiny_scale,
    ],
)
def test_every_checker_prompts_before_an_answer(check):
    assert check(None) == PROMPT


def test_right_and_wrong():
    assert verdict(2.0, 2.0) == "right" and verdict(2.0, 2.0).right
    assert verdict([1.0, 2.0], [1.0, 2.5]) == "not yet: 1 of 2 entries are off"
    assert verdict(3.0, 2.0) == "not yet: that is not the answer"
    assert verdict([1.0], [[1.0]]).startswith("not yet: expected an answer of shape")
    assert verdict("abc", 1.0).startswith("not yet: the answer should be a number")
    assert verdict(np.nan, 1.0) == "not yet: the answer holds NaN or infinity"


def test_close_says_how_many_digits_agree():
    expected = 1.23456789
    # right to four digits but not six, checked at 1e-7
    reply = verdict(1.2346, expected, tolerance=1e-7)
    assert reply.startswith("close: right to about 4 digits, but this answer needs 6"), reply
    assert verdict(1.234568, expected, tolerance=1e-7) == "right"
    # far off is not close
    assert verdict(1.3, expected, tolerance=1e-7).startswith("not yet")
    # whole-number answers (tolerance 0) are never "close"
    assert verdict(5, 6, tolerance=0).startswith("not yet")
    # a nearby number that is not a rounding of the answer (another seed's run) is not "close":
    # keeping more digits would not fix it
    assert verdict(0.4409, 0.4391, tolerance=5e-5).startswith("not yet")
    assert verdict(0.439, 0.4391, tolerance=5e-5).startswith("close: right to about")


def test_reply_never_shows_the_expected_value():
    expected = 0.7071067
    for given in (0.7, 0.70711, 3.0, [0.7, 0.7]):
        reply = verdict(given, expected, tolerance=1e-7)
        assert "0.707" not in reply and "7071" not in reply


def test_verdict_prints_without_quotes():
    assert repr(Verdict("right")) == "right"


def test_real_checker_close_and_right():
    from normcore import BatchNorm

    exact = BatchNorm.create(2).forward(ch02.WORKED, "train").output[3, 0]
    assert ch02.check_standardised_23(exact) == "right"
    assert ch02.check_standardised_23(round(exact, 3)).startswith("close:")
    assert ch02.check_standardised_23(-exact).startswith("not yet")


def test_write_it_yourself_is_judged_by_the_oracle():
    def right(x, d, eps):
        n = x.shape[0]
        z = (x - x.mean(axis=0)) / np.sqrt(x.var(axis=0) + eps)
        s = np.sqrt(x.var(axis=0) + eps)
        return (n * d - d.sum(axis=0) - z * (d * z).sum(axis=0)) / (n * s)

    def naive(x, d, eps):
        return d / np.sqrt(x.var(axis=0) + eps)

    def broken(x, d, eps):
        raise ValueError("oops")

    assert ch03.check_backward_function(None) == PROMPT
    assert ch03.check_backward_function(right).startswith("right")
    assert ch03.check_backward_function(naive).startswith("not yet")
    assert "ValueError" in ch03.check_backward_function(broken)
    assert ch03.check_backward_function(lambda x, d, e: d[:1]).startswith(
        "not yet: for an input x of shape"
    )


def test_expected_is_computed_only_once_there_is_an_answer():
    """A checker may pass its expected answer as a function: Run All (every answer None) then
    pays nothing for it, and an answer is still judged against it."""
    calls = []

    def expected():
        calls.append(1)
        return 2.5

    assert verdict(None, expected) == PROMPT and calls == []
    assert verdict(2.5, expected) == "right" and calls == [1]
    assert verdict(3.5, expected).startswith("not yet") and calls == [1, 1]


def test_chapter_one_exercise_one_is_positive_homogeneity():
    """A bias-free stack passes a factor of ten exactly; the stack with biases is named."""
    from normcore.exercises import ch01
    from normcore.experiments.shift import deep_network

    ten = deep_network(False, input_scale=10.0, bias=False).deviation[10]
    one = deep_network(False, bias=False).deviation[10]
    assert ch01.check_bias_free_ratio(ten / one) == "right"
    assert ch01.check_bias_free_ratio(10) == "right"
    plain = deep_network(False).deviation[10]
    with_bias = deep_network(False, input_scale=10.0).deviation[10] / plain
    assert "biases" in ch01.check_bias_free_ratio(with_bias)
    assert "biases" in ch01.check_bias_free_ratio(round(float(with_bias), 3))  # named, rounded
    assert ch01.check_bias_free_ratio(100.0).startswith("not yet: σ scales")
    assert ch01.check_bias_free_ratio(7.0) == "not yet: that is not the answer"


def test_chapter_one_exercise_two_floor_and_its_mistakes():
    """The fixed point q_s = q_s / 6 + 1/48 gives q_s = 1/40; the deviation is sqrt(q_s) c."""
    from normcore.exercises import ch01

    c = np.sqrt(0.5 - 1 / (2 * np.pi))
    assert ch01.check_floor_deviation(np.sqrt(1 / 40) * c) == "right"
    assert ch01.check_floor_deviation(0.0923) == "right"  # three significant figures
    assert "root mean square" in ch01.check_floor_deviation(np.sqrt(1 / 80))
    assert "before the ReLU" in ch01.check_floor_deviation(np.sqrt(1 / 40))
    no_half = (1 / 48) / (1 - 1 / 3)  # q_s = q_s / 3 + 1/48: the halving lost
    assert "half" in ch01.check_floor_deviation(np.sqrt(no_half) * c)
    from normcore.experiments.shift import deep_networks

    measured = float(np.median([s.deviation[5:] for s in deep_networks(False, list(range(200)))]))
    assert "floor the chapter measured" in ch01.check_floor_deviation(measured)
    assert "floor the chapter measured" in ch01.check_floor_deviation(round(measured, 4))
    assert ch01.check_floor_deviation(0.5).startswith("not yet")
    # relative: an answer ten times too small is not "close" (D2)
    assert ch01.check_floor_deviation(0.00923) == "not yet: that is not the answer"


def test_chapter_one_exercise_three_the_wide_block_mean():
    """More rows move the batch stack's block mean away from 1/sqrt(2 pi); the checker takes
    three significant figures and names the normal figure, the 64-row run and the input."""
    from normcore.exercises import ch01
    from normcore.experiments.shift import deep_network

    wide = float(deep_network(True, rows=4096).mean[1:].mean())
    assert wide < ch01.RELU_NORMAL_MEAN
    assert ch01.check_wide_batch_mean(wide) == "right"
    assert ch01.check_wide_batch_mean(float(f"{wide:.3g}")) == "right"
    assert "normal column" in ch01.check_wide_batch_mean(0.399)
    narrow = float(deep_network(True).mean[1:].mean())
    assert "64 rows" in ch01.check_wide_batch_mean(float(f"{narrow:.3g}"))
    whole = float(deep_network(True, rows=4096).mean.mean())
    assert "input" in ch01.check_wide_batch_mean(float(f"{whole:.3g}"))


def test_chapter_one_exercise_three_backs_out_the_variance():
    from normcore.exercises import ch01
    from normcore.experiments.shift import crowd_shift

    first = crowd_shift("batch", seed=0, epochs=1)
    unit = int(np.argmin(first.deviation[0]))
    d = first.deviation[0, unit]
    assert ch01.check_first_epoch_variance(1e-5 * d**2 / (1 - d**2)) == "right"
    assert ch01.check_first_epoch_variance(first.source_variance[0, unit]) == "right"
    assert "deviation of the standardised column" in ch01.check_first_epoch_variance(d)
    assert "square" in ch01.check_first_epoch_variance(1e-5 * d / (1 - d))
    # the misconception "standardised means deviation one" has no finite v: 1.0 is not close
    assert ch01.check_first_epoch_variance(1.0).startswith("not yet")


def test_chapter_two_checkers_accept_the_worked_answers():
    """Chapter 2's solutions, held here rather than in a hidden cell of the chapter."""
    from normcore import BatchNorm
    from normcore.exercises import ch02
    from normcore.experiments.shift import fold_in

    three = BatchNorm.create(2)
    for _ in range(3):
        three = fold_in(three, ch02.WORKED)
    assert ch02.check_running_after_three(three.running_mean, three.running_var) == "right"
    assert ch02.check_running_after_three(three.running_mean, three.running_mean) != "right"
    assert ch02.check_steps_to_one_percent(44) == "right"  # ln 0.01 / ln 0.9 = 43.7
    assert ch02.check_steps_to_one_percent(43).startswith("not yet")
    assert ch02.check_pytorch_running_var(0.9 + 0.1 * 12.0) == "right"  # 36 / 3 = 12
    assert ch02.check_pytorch_running_var(0.9 + 0.1 * 9.0).startswith("not yet")  # biased


def test_chapter_two_checkers_name_the_expected_mistakes():
    """Exercise 1 asks for the gap below 5/3, where epsilon shows; forgetting it is named."""
    from normcore.exercises import ch02

    gap = 5 / 3 - 15 / np.sqrt(81 + 1e-5)
    assert ch02.check_gap_below_five_thirds(gap) == "right"
    assert ch02.check_gap_below_five_thirds(1.0e-7) == "right"  # two figures
    assert "without epsilon" in ch02.check_gap_below_five_thirds(0.0)
    assert "outside the square root" in ch02.check_gap_below_five_thirds(5 / 3 - 15 / (9 + 1e-5))
    assert "positive" in ch02.check_gap_below_five_thirds(-gap)
    assert "unbiased" in ch02.check_gap_below_five_thirds(5 / 3 - 15 / np.sqrt(108 + 1e-5))
    assert "round" not in ch02.check_gap_below_five_thirds(0.0)
    # D2: named at the two figures the question asks for, and "close" is relative
    assert "outside the square root" in ch02.check_gap_below_five_thirds(1.9e-6)
    assert "unbiased" in ch02.check_gap_below_five_thirds(0.22)
    assert "5/3" in ch02.check_gap_below_five_thirds(6.2e-8)  # the factor 5/3 forgotten
    for far in (1e-8, 1e-6, 5e-6):  # ten times off is not "close"
        assert not ch02.check_gap_below_five_thirds(far).startswith("close")
    assert ch02.check_steps_keras(459) == "right"  # ln 0.01 / ln 0.99 = 458.2
    assert "0.9" in ch02.check_steps_keras(44)
    assert "whole step" in ch02.check_steps_keras(458)
    assert "share kept" in ch02.check_steps_keras(1)
    kept = 0.9**3
    mean = (1 - kept) * np.array([8.0, 6.0])
    assert "biased" in ch02.check_running_after_three(mean, kept + (1 - kept) * np.array([108, 12]))
    assert "one step" in ch02.check_running_after_three([0.8, 0.6], [9.0, 1.8])
    assert "whole step" in ch02.check_steps_to_one_percent(43)
    assert "whole" in ch02.check_steps_to_one_percent(np.log(0.01) / np.log(0.9))
    assert "biased" in ch02.check_pytorch_running_var(1.8)
    assert "share taken" in ch02.check_pytorch_running_var(0.1 + 0.9 * 12)


def test_chapter_four_new_checkers_name_the_expected_mistakes():
    """Exercises 3, 4 and 6 of chapter 4, which replaced ones the page answered."""
    from normcore.exercises import ch04

    assert ch04.check_layer_counts([6, 20, 20]) == "right"
    assert "(3, 4, 5)" in ch04.check_layer_counts([2, 60, 60])
    assert "one entry per normed position" in ch04.check_layer_counts([6, 20, 1])
    assert ch04.check_group_counts([75, 32]) == "right"
    assert "per image" in ch04.check_group_counts([75, 4])
    assert "across the batch" in ch04.check_group_counts([600, 4])
    gap = ch04._pair_gap(ch04.InstanceNorm.create(3))
    assert 1e-6 < gap < 1e-4  # epsilon's first-order effect, not zero and not order one
    assert ch04.check_rescaled_gap(float(f"{gap:.2g}")) == "right"  # two figures
    assert "eps = 0" in ch04.check_rescaled_gap(0.0)
    batch = ch04._pair_gap(ch04.ImageBatchNorm.create(3))
    assert "image batch layer" in ch04.check_rescaled_gap(float(f"{batch:.2g}"))
    assert not ch04.check_rescaled_gap(10 * gap).startswith("close")
