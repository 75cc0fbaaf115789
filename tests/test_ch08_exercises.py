"""Chapter 8's exercise checkers: the worked solutions' answers, worked by hand, are 'right';
near misses are not."""

from __future__ import annotations

import math

import numpy as np
import pytest

from normcore.exercises import Verdict, ch08, ch09

pytestmark = pytest.mark.numeric  # figures from float arithmetic: make test-arith reruns it


def test_gradient_change() -> None:
    change = math.sqrt(0.1**2 + 10**2)
    assert ch08.check_gradient_change(change) == "right"
    assert ch08.check_gradient_change(10.1) != "right"
    # the relative change (divided by |g| = sqrt(101)) is named as that mistake
    assert "divided by the gradient" in ch08.check_gradient_change(change / math.sqrt(101))
    # the gradient's own length, the step's length and the change per distance are named too
    assert "gradient g(w) itself" in ch08.check_gradient_change(math.sqrt(101))
    assert "length of the step" in ch08.check_gradient_change(0.1 * math.sqrt(101))
    assert "per distance" in ch08.check_gradient_change(change / (0.1 * math.sqrt(101)))


def test_parameter_counts() -> None:
    assert ch08.check_parameter_counts(8 * 2 * 32, 8 * 2 * 32) == "right"
    assert "shift" in ch08.check_parameter_counts(8 * 32, 8 * 2 * 32)
    assert "running variance" in ch08.check_parameter_counts(8 * 2 * 32, 8 * 32)
    assert isinstance(ch08.check_parameter_counts(None, None), Verdict)


def test_post_ln_ratio_is_above_one_and_checked() -> None:
    assert ch09.check_post_ln_ratio(1.0) != "right"
    assert "not yet" in ch09.check_post_ln_ratio("two")
    from normcore.experiments import prepost

    norm = prepost.gradient_profile("post-LN", seeds=(0,), blocks=6).norm[0]
    assert ch09.check_post_ln_ratio(norm[-1] / norm[0]) == "right"
    # asked to two decimals: the answer rounded to two decimals is right
    assert ch09.check_post_ln_ratio(round(float(norm[-1] / norm[0]), 2)) == "right"
    assert "block 1's gradient over block 6's" in ch09.check_post_ln_ratio(norm[0] / norm[-1])


def test_folded_names_the_typical_mistakes() -> None:
    k = 0.02 / math.sqrt(0.0004 + 1e-5)
    assert ch09.check_folded(3 * k, (2 - 1) * k + 0.5) == "right"
    assert "eps" in ch09.check_folded(3.0, 1.5)
    assert "swapped" in ch09.check_folded((2 - 1) * k + 0.5, 3 * k)
    assert "running mean" in ch09.check_folded(3 * k, 2 * k + 0.5)
    assert "variance, not by the divisor" in ch09.check_folded(
        3 * 0.02 / (0.0004 + 1e-5), (2 - 1) * 0.02 / (0.0004 + 1e-5) + 0.5
    )
    assert "shift" in ch09.check_folded(3 * k, k)
    assert isinstance(ch09.check_folded(None, None), Verdict)
    assert ch09.check_folded(2.9, 1.4).startswith("not yet")


def test_balancing_decay() -> None:
    assert ch08.check_balancing_decay(0.1 * 0.02 / 8) == "right"
    assert "2 belongs" in ch08.check_balancing_decay(0.1 * 0.02 / 4)
    assert "half" in ch08.check_balancing_decay(0.1 * 0.02 / 16)
    # the lengths, not their squares: eta |g| / (2 |w|)
    assert "squared lengths" in ch08.check_balancing_decay(0.1 * math.sqrt(0.02) / (2 * 2))


def test_balancing_decay_refuses_text() -> None:
    assert ch08.check_balancing_decay("small").startswith("not yet")


def test_figures_draw_what_they_are_given() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import numpy as np

    from normcore.experiments import prepost, scaleinv
    from normcore.plots import ch08 as plots

    profiles = {a: prepost.gradient_profile(a, seeds=(0, 1), blocks=3) for a in prepost.VARIANTS}
    fig = plots.gradient_by_block(profiles)
    lines = fig.axes[0].get_lines()
    assert len(lines) == 3
    np.testing.assert_allclose(lines[0].get_ydata(), profiles["post-LN"].norm.mean(axis=0))
    fig = plots.accuracy_by_group_size(
        (2, 4),
        {"batch": np.array([[0.1, 0.3], [0.4, 0.6]]), "layer": np.array([[0.6, 0.6], [0.6, 0.6]])},
    )
    assert [list(line.get_ydata()) for line in fig.axes[0].get_lines()] == [[0.2, 0.5], [0.6, 0.6]]
    fake = scaleinv.EffectiveRate(
        decays=(0.0, 0.1), length2=np.ones((5, 6)), grad2=np.ones((5, 6)), angle=np.ones((5, 6))
    )
    assert len(plots.effective_rate(fake).axes[0].get_lines()) == 6


def test_qk_bound_names_the_typical_mistakes() -> None:
    d = ch09.QK_WIDTH
    assert ch09.check_qk_bound(None) != "right"
    assert ch09.check_qk_bound(math.sqrt(d)) == "right"
    assert "divides it by sqrt(d)" in ch09.check_qk_bound(d)
    assert "length sqrt(d)" in ch09.check_qk_bound(1)
    assert "instead of dividing" in ch09.check_qk_bound(d**1.5)
    assert "not yet" in ch09.check_qk_bound(3.0)
    # the toy obeys the bound the exercise asks for
    from normcore.experiments import attention

    assert np.all(attention.logits(True).largest <= math.sqrt(attention.WIDTH) + 1e-9)
