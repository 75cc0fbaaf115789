"""Chapter 8's exercise checkers: the worked solutions' answers, worked by hand, are 'right';
near misses are not."""

from __future__ import annotations

import math

import pytest

from normcore.exercises import ch08

pytestmark = pytest.mark.numeric  # figures from float arithmetic: make test-arith reruns it


def test_gradient_change() -> None:
    assert ch08.check_gradient_change(math.sqrt(0.1**2 + 10**2)) == "right"
    assert ch08.check_gradient_change(10.1) != "right"


def test_parameter_counts() -> None:
    assert ch08.check_parameter_counts(8 * 2 * 32, 8 * 2 * 32) == "right"
    assert ch08.check_parameter_counts(8 * 32, 8 * 2 * 32) != "right"


def test_post_ln_ratio_is_above_one_and_checked() -> None:
    assert ch08.check_post_ln_ratio(1.0) != "right"
    assert "not yet" in ch08.check_post_ln_ratio("two")


def test_folded() -> None:
    k = 0.5 / math.sqrt(4 + 1e-5)
    assert ch08.check_folded(2 * k, (1 - 3) * k + 1) == "right"
    assert ch08.check_folded(0.5, 0.6) != "right"


def test_balancing_decay() -> None:
    assert ch08.check_balancing_decay(0.1 * 0.02 / 8) == "right"
    assert ch08.check_balancing_decay(0.1 * 0.02 / 4) != "right"


def test_balancing_decay_refuses_text() -> None:
    assert ch08.check_balancing_decay("small").startswith("not yet")


def test_figures_draw_what_they_are_given() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import numpy as np

    from normcore.experiments import prepost, scaleinv
    from normcore.plots import ch08 as plots

    profiles = {
        a: prepost.gradient_profile(a, seeds=(0, 1), blocks=3) for a in prepost.ARRANGEMENTS
    }
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
        decays=(0.0, 0.1), length2=np.ones((5, 6)), slope2=np.ones((5, 6))
    )
    assert len(plots.effective_rate(fake).axes[0].get_lines()) == 6
