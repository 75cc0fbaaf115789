"""Chapter 3's conclusions, re-run on seeds the chapter does not print.

The chapter trains the crowd network five times with the true backward pass and with the naive
one (d / s) and draws four conclusions from it; each is re-run here on fresh seeds, asserted as the
prose states it, and its frequency recorded for the chapter to glue. The structural checks (the
input gradient sums to zero along the statistics' axes and is orthogonal to z up to epsilon)
are re-run on fresh random blocks.
"""

from __future__ import annotations

import numpy as np
import pytest

from normcore.claims import fresh, record
from normcore.experiments import routes

SEEDS = fresh(20)
SETTING_1 = "the crowd network, 400 full-batch epochs at learning rate 1, fresh seeds 1000-1019"
SETTING_01 = "the crowd network, 400 full-batch epochs at learning rate 0.1, fresh seeds 1000-1019"


@pytest.fixture(scope="module")
def rough() -> routes.TrainingPair:
    return routes.naive_versus_true(seeds=SEEDS, rate=1.0)


@pytest.fixture(scope="module")
def smooth() -> routes.TrainingPair:
    return routes.naive_versus_true(seeds=SEEDS, rate=0.1)


def test_the_naive_pass_still_trains(rough):
    # "the naive runs more than halve their starting loss", usually: the chapter glues the count
    # (not every seed: at rate 1 a run can end on a spike, as one of the chapter's seeds moved by
    # 113 did, above its start)
    halved = rough.naive_loss[-1] < 0.5 * rough.naive_loss[0]
    h = record(
        "ch03", "naive_halves_loss", held=int(halved.sum()), of=len(SEEDS), setting=SETTING_1
    )
    assert h.held > h.of / 2


def test_at_rate_1_the_true_pass_ends_lower_only_on_a_minority(rough):
    lower = rough.true_loss[-1] < rough.naive_loss[-1]
    h = record("ch03", "true_lower_rate_1", held=int(lower.sum()), of=len(SEEDS), setting=SETTING_1)
    assert h.held < h.of / 2  # "only on a minority of seeds"


def test_at_rate_01_the_true_pass_ends_lower_on_most_seeds(smooth):
    lower = smooth.true_loss[-1] < smooth.naive_loss[-1]
    h = record(
        "ch03", "true_lower_rate_01", held=int(lower.sum()), of=len(SEEDS), setting=SETTING_01
    )
    assert h.held >= 15  # "on most seeds"
    # "the naive pass still descends": every run ends below its start
    assert np.all(smooth.naive_loss[-1] < smooth.naive_loss[0])


def largest_rise(loss: np.ndarray) -> np.ndarray:
    """The largest one-epoch ratio loss[t + 1] / loss[t] of each run (column)."""
    return np.max(loss[1:] / loss[:-1], axis=0)


def test_the_spikes_come_from_the_large_rate(rough, smooth):
    # every run at rate 1 (both passes) rises by more than 15% in some epoch; no run at 0.1 does
    spiky = np.minimum(largest_rise(rough.true_loss), largest_rise(rough.naive_loss)) > 1.15
    calm = np.maximum(largest_rise(smooth.true_loss), largest_rise(smooth.naive_loss)) < 1.15
    both = spiky & calm
    h = record(
        "ch03",
        "spikes_from_rate",
        held=int(both.sum()),
        of=len(SEEDS),
        setting="largest one-epoch rise above 15% at rate 1, below at rate 0.1; "
        "fresh seeds 1000-1019",
    )
    assert h.every


def test_the_first_step_gradients_are_correlated_but_far_apart():
    found = [routes.first_hidden_grads(seed=s) for s in SEEDS]
    cosine = np.array([f.cosine for f in found])
    gap = np.array([f.relative_gap for f in found])
    setting = "the crowd network's first step, fresh seeds 1000-1019"
    h = record(
        "ch03",
        "first_cosine_positive",
        held=int(np.sum(cosine > 0)),
        of=len(SEEDS),
        setting=setting,
    )
    assert h.every  # "correlated": the naive direction is within 90 degrees of the true one
    g = record(
        "ch03", "first_gap_over_half", held=int(np.sum(gap > 0.5)), of=len(SEEDS), setting=setting
    )
    assert g.held >= 15  # "on most seeds the difference is more than half the true length"


def test_the_two_structural_checks_on_fresh_blocks():
    # the collected block sums to zero down each column, and its dot product with z is the
    # naive block's shrunk by exactly epsilon / (variance + epsilon): zero but for epsilon
    passed = 0
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        n, m = rng.integers(3, 9), rng.integers(1, 5)
        x = rng.normal(size=(n, m)) * rng.uniform(0.5, 5) + rng.normal(size=m) * 10
        d = rng.normal(size=(n, m))
        c = routes.compare_blocks(x, d)
        shrink = 1e-5 / (x.var(axis=0) + 1e-5)
        scale = np.max(np.abs(c.naive_dots))
        ok = (
            np.max(np.abs(c.true_sums)) < 1e-12 * max(1.0, np.max(np.abs(c.naive)))
            and np.max(np.abs(c.true_dots - shrink * c.naive_dots)) < 1e-12 * max(1.0, scale)
            and c.true_gap < 1e-6 * max(1.0, c.largest_true)
        )
        passed += bool(ok)
    h = record(
        "ch03",
        "structural_checks",
        held=passed,
        of=len(SEEDS),
        setting="random blocks of 3-8 rows and 1-4 columns, fresh seeds 1000-1019",
    )
    assert h.every
