"""Chapter 6 on other people (normcore.experiments.crowds) and its exact paired comparison."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from normcore.data import load_crowd, make_crowd
from normcore.errors import SettingError
from normcore.experiments import comparison, crowds
from normcore.experiments.crowds import _logistic_fit

pytestmark = pytest.mark.numeric  # figures from float arithmetic: make test-arith reruns it

EPOCHS = 20  # short runs: the agreement asserted here does not depend on the length


def test_the_default_crowd_is_the_books():
    x, y = crowds.crowd()
    shipped = load_crowd()
    assert np.array_equal(x, shipped.features) and np.array_equal(y, shipped.labels)


def test_population_is_crowds_put_together():
    x, y = crowds.population(50, first=7)
    a, b = crowds.crowd(7), crowds.crowd(8)
    assert np.array_equal(x, np.concatenate([a[0], b[0]]))
    assert np.array_equal(y, np.concatenate([a[1], b[1]]))
    with pytest.raises(SettingError):
        crowds.population(30)


@pytest.fixture(scope="module")
def people():
    return crowds.population(500)


def test_fresh_crowds_on_the_book_crowd_is_the_chapters_protocol(people):
    """Run on the book's own crowd, the stacked protocol gives the chapter's held-out figures,
    and its population scores are those of the chapter's own trained runs."""
    mine = crowds.fresh_crowds(
        [make_crowd.CROWD_SEED], ("none", "batch"), epochs=EPOCHS, people=people
    )
    chapter = comparison.compare(("none", "batch"), epochs=EPOCHS)
    for key in ("none", "batch"):
        np.testing.assert_allclose(mine[key].held_accuracy[0], chapter[key].held_accuracy)
        np.testing.assert_allclose(mine[key].held_loss[0], chapter[key].held_loss, rtol=1e-9)
        acc, loss, missed = crowds.population_scores(chapter[key], people)
        np.testing.assert_allclose(mine[key].population_accuracy[0], acc, rtol=1e-12)
        np.testing.assert_allclose(mine[key].population_loss[0], loss, rtol=1e-9)
        assert np.all(missed >= loss)  # the misclassified cost more than the average person
        assert np.all((0 <= acc) & (acc <= 1))


def test_population_standardised_with_each_runs_training_rows(people):
    """Every crowd's runs standardise with their own fold's training rows: two crowds' scores
    differ, and a crowd's scores do not depend on which other crowds share its stack."""
    both = crowds.fresh_crowds([11, 12], ("none",), seeds=(0,), epochs=EPOCHS, people=people)
    alone = crowds.fresh_crowds([12], ("none",), seeds=(0,), epochs=EPOCHS, people=people)
    np.testing.assert_allclose(
        both["none"].population_accuracy[1], alone["none"].population_accuracy[0], rtol=1e-12
    )
    assert both["none"].held_accuracy.shape == (2, 1)


def test_logistic_fit_solves_the_likelihood_equations():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(4, 30, 2))
    y = (x[..., 0] + rng.normal(size=(4, 30)) > 0).astype(float)
    w = _logistic_fit(x, y)
    design = np.concatenate([x, np.ones((4, 30, 1))], axis=-1)
    p = 1 / (1 + np.exp(-np.einsum("rnk,rk->rn", design, w)))
    np.testing.assert_allclose(np.einsum("rnk,rn->rk", design, p - y), 0, atol=1e-9)


def test_logistic_yardstick_on_the_book_crowd(people):
    y = crowds.logistic_yardstick(people=people)
    assert y.held_accuracy.shape == (1,) and y.majority[0] == pytest.approx(13 / 25)
    assert 0 <= y.held_accuracy[0] <= 1 and 0 <= y.population_accuracy[0] <= 1
    # held-out accuracy over five folds of five people is a multiple of 1/25
    assert (y.held_accuracy[0] * 25) == pytest.approx(round(y.held_accuracy[0] * 25))


@pytest.fixture(scope="module")
def short_scores():
    return comparison.compare(epochs=EPOCHS)


@pytest.mark.parametrize("key", ["batch", "layer", "rms", "weight"])
def test_paired_exact_is_paired_people_in_fractions(short_scores, key):
    e = comparison.paired_exact(short_scores, key)
    p = comparison.paired_people(short_scores, key)
    assert float(e.difference) == pytest.approx(p.difference, abs=1e-12)
    for exact, rounded in zip(e.people_interval, p.people_interval, strict=True):
        assert isinstance(exact, Fraction)
        assert float(exact) == pytest.approx(rounded, abs=1e-12)
    # every per-person difference is a multiple of 1/5, their mean a multiple of 1/125; numpy's
    # linear percentile of 4000 draws lands between two such values, at weight 39/40
    assert (e.difference * 125).denominator == 1
    assert (e.people_interval[0] * 125 * 40).denominator == 1
    # t(0.975, 4) widens the +-2 standard errors by 2.776 / 2
    mid = sum(e.seed_interval) / 2
    half, half_2se = e.seed_interval[1] - mid, e.seed_interval_2se[1] - mid
    assert half == pytest.approx(half_2se * comparison.T_975[4] / 2, rel=1e-12, abs=1e-15)
    assert 0 <= e.share_at_least_zero <= 1


def test_t_quantiles_match_scipy():
    stats = pytest.importorskip("scipy.stats")
    for df, t in comparison.T_975.items():
        assert t == pytest.approx(stats.t.ppf(0.975, df), rel=1e-9)


def test_logistic_exercise_checker():
    from normcore.exercises import ch06

    gap = ch06._logistic_population_minus_held()
    assert ch06.check_logistic_population_minus_held(round(gap, 2)) == "right"
    assert "sign" in ch06.check_logistic_population_minus_held(round(-gap, 2))
    assert ch06.check_logistic_population_minus_held(None).startswith("waiting")
