"""Chapter 3's conclusions, re-run on seeds the chapter does not print.

The chapter trains the crowd network five times with the true backward pass and with the naive
one (d / s) and draws its conclusions from it; each is re-run here on fresh seeds (40 for the
training comparisons, 100 for the first step's descent), asserted as the prose states it, and its
frequency recorded for the chapter to glue. The mechanism the chapter gives for the naive pass
ending lower at rate 1 (it inflates the scale-invariant hidden layer's norm and so lowers its
effective rate) is held by an intervention: equalise the norms after every step and the order
flips. The structural checks (the input
gradient sums to zero along the statistics' axes and is orthogonal to z up to epsilon)
are re-run on fresh random blocks.
"""

from __future__ import annotations

import numpy as np
import pytest

from normcore.claims import fresh, record
from normcore.experiments import routes

SEEDS = fresh(20)
#: the training comparisons run on 40 seeds, so that their verdicts have a margin of several runs
TRAINED = fresh(40)
SETTING_1 = "the crowd network, 400 full-batch epochs at learning rate 1, fresh seeds 1000-1039"
SETTING_01 = "the crowd network, 400 full-batch epochs at learning rate 0.1, fresh seeds 1000-1039"


@pytest.fixture(scope="module")
def rough() -> routes.TrainingPair:
    return routes.naive_versus_true(seeds=TRAINED, rate=1.0)


@pytest.fixture(scope="module")
def smooth() -> routes.TrainingPair:
    return routes.naive_versus_true(seeds=TRAINED, rate=0.1)


@pytest.fixture(scope="module")
def equalised() -> routes.TrainingPair:
    return routes.naive_versus_true(seeds=TRAINED, rate=1.0, equalise=True)


@pytest.fixture(scope="module")
def half() -> routes.TrainingPair:
    return routes.naive_versus_true(seeds=TRAINED, rate=0.5)


SEEDS_ONLY = ("initial seeds",)


def test_the_naive_pass_still_trains(rough):
    # "the naive runs more than halve their starting loss", usually: the chapter glues the count
    # (not every seed: at rate 1 a run can end on a spike, as one of the chapter's seeds moved by
    # 113 did, above its start)
    halved = rough.naive_loss[-1] < 0.5 * rough.naive_loss[0]
    h = record(
        "ch03",
        "naive_halves_loss",
        held=int(halved.sum()),
        of=len(TRAINED),
        setting=SETTING_1,
        resampled=SEEDS_ONLY,
    )
    assert h.held > h.of / 2


def test_at_rate_1_the_true_pass_ends_lower_only_on_a_minority(rough):
    # where a run ends: its mean loss over the last 100 epochs (one epoch's loss at rate 1 depends
    # on where a spike fell)
    h = record(
        "ch03",
        "true_lower_rate_1",
        held=int(rough.true_lower.sum()),
        of=len(TRAINED),
        setting=SETTING_1 + "; mean loss of the last 100 epochs",
        resampled=SEEDS_ONLY,
    )
    assert h.held <= 14  # "the naive pass ends lower on most seeds" (about 1 in 6 seen)


def test_the_naive_pass_inflates_the_hidden_norm(rough):
    larger = rough.naive_norm[-1] > rough.true_norm[-1]
    h = record(
        "ch03",
        "naive_norm_larger",
        held=int(larger.sum()),
        of=len(TRAINED),
        setting=SETTING_1 + "; norm of the hidden layer's weights and bias after the last step",
        resampled=SEEDS_ONLY,
    )
    assert h.held >= 36
    # the true pass's gradient is orthogonal to each unit's weights, so its norm grows only by
    # the second-order term of each step: far less than the naive pass's
    growth_true = rough.true_norm[-1] / rough.true_norm[0]
    growth_naive = rough.naive_norm[-1] / rough.naive_norm[0]
    assert np.median(growth_naive - 1) > 1.5 * np.median(growth_true - 1)


def test_equal_norms_flip_the_order(rough, equalised):
    # the intervention: rescale each naive unit to the true run's norm after every step (the batch
    # layer makes this invisible to the outputs). The effective rates are then the same, and the
    # true pass ends lower on most seeds, where without the rescaling it ends lower on few
    assert np.allclose(equalised.naive_norm, equalised.true_norm, rtol=1e-9)
    h = record(
        "ch03",
        "true_lower_equalised",
        held=int(equalised.true_lower.sum()),
        of=len(TRAINED),
        setting=SETTING_1 + "; naive runs' hidden units rescaled to the true runs' norms after "
        "every step; mean loss of the last 100 epochs",
        resampled=SEEDS_ONLY,
    )
    assert h.held >= 26  # "on most seeds" (about 4 in 5 seen)
    assert h.held >= int(rough.true_lower.sum()) + 14  # the order flips


def test_a_smaller_rate_helps_the_true_pass(rough, half):
    # rate 1 is too large for the true pass: at 0.5 it ends lower than itself at 1
    better = half.ending(half.true_loss) < rough.ending(rough.true_loss)
    h = record(
        "ch03",
        "true_half_rate_better",
        held=int(better.sum()),
        of=len(TRAINED),
        setting="the crowd network's true pass, 400 full-batch epochs at learning rate 0.5 "
        "against 1, fresh seeds 1000-1039; mean loss of the last 100 epochs",
        resampled=SEEDS_ONLY,
    )
    assert h.held >= 30


def test_at_rate_01_the_true_pass_ends_lower_on_most_seeds(smooth):
    lower = smooth.true_loss[-1] < smooth.naive_loss[-1]
    h = record(
        "ch03",
        "true_lower_rate_01",
        held=int(lower.sum()),
        of=len(TRAINED),
        setting=SETTING_01,
        resampled=SEEDS_ONLY,
    )
    assert h.held >= 28  # "on most seeds"
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
        of=len(TRAINED),
        setting="largest one-epoch rise above 15% at rate 1, below at rate 0.1; "
        "fresh seeds 1000-1039",
        resampled=SEEDS_ONLY,
    )
    assert h.held >= 32  # "on most seeds"


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
        resampled=SEEDS_ONLY,
    )
    assert h.every  # "correlated": the naive direction is within 90 degrees of the true one
    g = record(
        "ch03",
        "first_gap_over_half",
        held=int(np.sum(gap > 0.5)),
        of=len(SEEDS),
        setting=setting,
        resampled=SEEDS_ONLY,
    )
    assert g.held >= 15  # "on most seeds the difference is more than half the true length"


def test_at_the_first_step_the_naive_direction_descends_no_less():
    # to first order a small step along the naive gradient lowers the loss by <true, naive>,
    # against |true|^2 along the true one. Near a coin toss on 20 seeds (9 of 1000-1019), so the
    # claim is counted on 100: above 1 on most, and the naive gradient is the longer one
    found = [routes.first_hidden_grads(seed=s) for s in fresh(100)]
    descent = np.array([f.descent_ratio for f in found])
    longer = np.array([f.length_ratio for f in found])
    d = record(
        "ch03",
        "first_naive_descends_more",
        held=int(np.sum(descent > 1)),
        of=len(found),
        setting="the crowd network's first step, fresh seeds 1000-1099; "
        "<g_true, g_naive> / |g_true|^2 above 1",
        resampled=SEEDS_ONLY,
    )
    assert d.held >= 58 and np.median(descent) > 1  # "on most seeds", "descends more"
    n = record(
        "ch03",
        "first_naive_longer",
        held=int(np.sum(longer > 1)),
        of=len(found),
        setting="the crowd network's first step, fresh seeds 1000-1099; "
        "|g_naive| / |g_true| above 1",
        resampled=SEEDS_ONLY,
    )
    assert n.held >= 80 and np.median(longer) > 1.2


def test_the_two_structural_checks_on_fresh_blocks():
    # the collected block sums to zero down each column, and its dot product with z is the
    # naive block's shrunk by exactly epsilon / (variance + epsilon): zero but for epsilon
    passed = 0
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        n, m = rng.integers(3, 9), rng.integers(1, 5)
        x = rng.normal(size=(n, m)) * rng.uniform(0.5, 5) + rng.normal(size=m) * 10
        d = rng.normal(size=(n, m))
        c = routes.compare_gradients(x, d)
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
        resampled=("data draws",),
    )
    assert h.every
