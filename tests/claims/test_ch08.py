"""Chapter 8's conclusions re-run on fresh seeds: smoothness by Santurkar et al.'s three measures
as they define them (and the book's own variants) through training, what rescaling the
scale-invariant hidden weights does to them, the rate a version tolerates on a grid that
brackets it, speed against where training ends, and the effective learning rate of
scale-invariant weights.

Each test re-runs an experiment of `normcore.experiments` on `normcore.claims.fresh` seeds, records
how often each conclusion held (`normcore.claims.record`; the chapter glues the figures through
`normcore.claims.held`) and asserts the conclusion as the chapter's prose states it.
"""

from __future__ import annotations

import numpy as np
import pytest

from normcore.claims import fresh, record
from normcore.experiments import deepnet, digits_rates, scaleinv, smoothness

SEEDS = fresh(20)
#: every record here resamples the starting weights; the data and the batch order are the
#: chapter's
RESAMPLED = ("initial seeds",)
SEED_WORDS = f"fresh seeds {SEEDS[0]}-{SEEDS[-1]}"
PROBES = smoothness.CLAIMS_PROBES
OTHERS = ("plain", "layer", "rms")
#: the chapter's best rates (its sweep's), used for the ten-epoch runs
BEST = {"plain": 0.1, "batch": 1.0, "layer": 0.1, "rms": 0.1}


@pytest.fixture(scope="module")
def data():
    return digits_rates.digits_data()


@pytest.fixture(scope="module")
def smooth(data):
    return {v: smoothness.measure(v, data, seeds=SEEDS, probes=PROBES) for v in ("plain", "batch")}


def test_smoothness_depends_on_the_measure_and_the_moment(smooth) -> None:
    plain, batch = smooth["plain"], smooth["batch"]
    setting = (
        f"before steps {', '.join(map(str, PROBES))} at rate {smoothness.RATE:g}, {SEED_WORDS}"
    )
    rel = record(
        "ch08",
        "smooth_relative_smaller",
        int(np.sum(batch.gradient_change < plain.gradient_change)),
        batch.gradient_change.size,
        setting,
        resampled=RESAMPLED,
    )
    long = record(
        "ch08",
        "smooth_beta_long_smaller",
        int(np.sum(batch.beta_long < plain.beta_long)),
        batch.beta_long.size,
        setting,
        resampled=RESAMPLED,
    )
    larger = {}
    for field, name in (
        ("loss_variation", "loss_variation_larger"),
        ("gradient_change_absolute", "absolute_larger"),
        ("beta_effective", "beta_effective_larger"),
        ("beta_short", "beta_short_larger"),
        ("loss_variation_equal", "loss_equal_larger"),
        ("gradient_norm", "gradient_longer"),
    ):
        for p, step in enumerate(PROBES):
            more = getattr(batch, field)[p] > getattr(plain, field)[p]
            larger[name, step] = record(
                "ch08",
                f"smooth_{name}_s{step}",
                int(more.sum()),
                more.size,
                f"before step {step} at rate {smoothness.RATE:g}, {SEED_WORDS}",
                resampled=RESAMPLED,
            ).held
    n = len(SEEDS)
    # "the seeds alike": at each probe, the batch network's relative change spreads less over
    # the fresh seeds (standard deviation) than the plain network's
    alike = plain.gradient_change.std(axis=1) > batch.gradient_change.std(axis=1)
    seeds_alike = record(
        "ch08",
        "smooth_seeds_alike",
        int(alike.sum()),
        alike.size,
        f"{setting}, per probe",
        resampled=RESAMPLED,
    )
    assert seeds_alike.held == seeds_alike.of
    # "smaller with the batch layer on k of n pairs ... at every probe"
    assert rel.held >= 0.9 * rel.of and long.held >= 0.9 * long.of
    # "early (steps 8 and 16), on nearly every fresh seed, the gradient is the longer one and
    # changes more per distance over a short chord"
    for step in (8, 16):
        assert larger["gradient_longer", step] >= n - 2
        assert larger["beta_short_larger", step] >= n - 2
    # "its absolute change is larger at step 8 on most seeds, but no longer by step 16"
    assert larger["absolute_larger", 8] >= 0.7 * n
    assert larger["absolute_larger", 16] <= 0.5 * n
    # "by step 44 ... no longer the longer one, absolute and short-chord change below on most"
    for name in ("gradient_longer", "absolute_larger", "beta_short_larger"):
        assert larger[name, 44] <= 0.3 * n
    # "the loss variation at equal length comes out about even"
    assert 0.25 * n <= larger["loss_equal_larger", 44] <= 0.75 * n
    # Santurkar et al.'s three measures as they define them (over the same steps eta g):
    # "at step 8 all three are larger with the batch layer on most seeds"
    assert larger["loss_variation_larger", 8] >= 0.7 * n
    assert larger["beta_effective_larger", 8] >= n - 2
    # "by step 16 the loss variation and the gradient change side with them on most seeds, the
    # effective smoothness does not yet"
    assert larger["loss_variation_larger", 16] <= 0.45 * n
    assert larger["beta_effective_larger", 16] >= 0.6 * n
    # "by step 44 all three do, on nearly every seed"
    for name in ("loss_variation_larger", "absolute_larger", "beta_effective_larger"):
        assert larger[name, 44] <= 0.3 * n


def test_rescaling_the_invariant_weights_sets_the_sharpness_verdict(data, smooth) -> None:
    """The intervention connecting section 8.1 to 8.3: multiply every hidden layer's weights
    and bias of the batch network by 2 and 4 at each probe. The function is the same (the loss
    moves by epsilon's share), but the gradient shrinks as 1 / c and the curvature as 1 / c^2,
    so Santurkar et al.'s gradient change (b) and effective smoothness (c) follow the arbitrary
    scale: at 4 the batch network is the smoother on (nearly) every seed and probe."""
    plain, base = smooth["plain"], smooth["batch"]
    scaled = {1.0: base} | {
        c: smoothness.measure("batch", data, seeds=SEEDS, probes=PROBES, scale=c)
        for c in smoothness.SCALES
    }
    n = len(SEEDS)
    for c in smoothness.SCALES:
        # the function unchanged: the batch's loss moves by epsilon's share
        assert np.max(np.abs(scaled[c].loss / base.loss - 1)) < 1e-4
    counts = {}
    for c, r in scaled.items():
        for field, name in (
            ("beta_effective", "beta_effective_larger"),
            ("gradient_change_absolute", "absolute_larger"),
        ):
            more = getattr(r, field) > getattr(plain, field)  # (probes, seeds)
            counts[name, c] = more.sum(axis=1)
            if c != 1.0:
                record(
                    "ch08",
                    f"rescaled_{c:g}_{name}",
                    int(more.sum()),
                    more.size,
                    f"batch network's hidden weights times {c:g} at the probes before steps "
                    f"{', '.join(map(str, PROBES))}, against the plain network, {SEED_WORDS}",
                    resampled=RESAMPLED,
                )
    for name in ("beta_effective_larger", "absolute_larger"):
        # the verdict follows the scale: fewer "batch sharper" seeds the larger the factor,
        # at every probe, and at 4 on (nearly) none
        assert np.all(counts[name, 2.0] <= counts[name, 1.0] + 1)
        assert np.all(counts[name, 4.0] <= counts[name, 2.0] + 1)
        assert np.all(counts[name, 4.0] <= 2)
    # at step 8 the batch network is the sharper as trained (the chapter's early verdict)
    assert counts["beta_effective_larger", 1.0][0] >= n - 2


def test_rate_grid_brackets_the_batch_network_and_speed(data) -> None:
    grids = {v: (0.1, 0.3, 1.0) for v in OTHERS} | {"batch": (0.1, 0.3, 1.0, 3.0, 10.0)}
    sweeps = {v: digits_rates.sweep(v, data, rates=grid, seeds=SEEDS) for v, grid in grids.items()}
    setting = f"two epochs, rates {', '.join(f'{r:g}' for r in grids['batch'])}, {SEED_WORDS}"
    # the line "trains" is drawn in a gap: no run within the margin of it
    finals = np.concatenate([s.final[~s.diverged] for s in sweeps.values()])
    clear = np.abs(finals - digits_rates.TRAINS) > digits_rates.TRAINS_MARGIN
    margin = record(
        "ch08",
        "trains_margin",
        int(clear.sum()),
        clear.size,
        f"two epochs, every version and rate of the claims grid, {SEED_WORDS}",
        resampled=RESAMPLED,
    )
    assert margin.held == margin.of
    batch = sweeps["batch"]
    trains = batch.trains()
    at3 = record(
        "ch08",
        "batch_trains_at_3",
        int(trains[batch.rates.index(3.0)].sum()),
        len(SEEDS),
        setting,
        resampled=RESAMPLED,
    )
    at10 = record(
        "ch08",
        "batch_fails_at_10",
        int((~trains[batch.rates.index(10.0)]).sum()),
        len(SEEDS),
        setting,
        resampled=RESAMPLED,
    )
    assert at3.held >= 0.8 * at3.of  # "trains at 3 on k of them"
    assert at10.held == at10.of  # "and at 10 on none"
    # scale invariance at the top of the grid: a step too large lengthens the hidden weights, so
    # the effective rate at 10 ends below DAMPED_BELOW times the one at 1 (nominally ten times),
    # and the run fails without diverging
    start = scaleinv.hidden_length2(deepnet.build("batch", list(SEEDS)))
    effective = {r: r * start / scaleinv.hidden_length2(batch.networks(r)) for r in (1.0, 10.0)}
    damped = effective[10.0] < scaleinv.DAMPED_BELOW * effective[1.0]
    eff10 = record(
        "ch08",
        "batch_effective_rate_10_damped",
        int(damped.sum()),
        len(SEEDS),
        setting,
        resampled=RESAMPLED,
    )
    calm = ~batch.diverged[batch.rates.index(10.0)]
    calm10 = record(
        "ch08",
        "batch_no_divergence_at_10",
        int(calm.sum()),
        len(SEEDS),
        setting,
        resampled=RESAMPLED,
    )
    assert eff10.held >= 0.75 * eff10.of  # "on k of n"
    assert calm10.held >= 0.75 * calm10.of  # "did not diverge on k of n"
    largest = {v: s.largest_rate() for v, s in sweeps.items()}
    above = largest["batch"] > np.max([largest[v] for v in OTHERS], axis=0)
    tolerance = record(
        "ch08",
        "batch_largest_rate_above",
        int(above.sum()),
        len(SEEDS),
        setting,
        resampled=RESAMPLED,
    )
    tenfold = largest["batch"] >= digits_rates.TENFOLD * largest["plain"] - 1e-9
    ten = record(
        "ch08", "batch_rate_tenfold", int(tenfold.sum()), len(SEEDS), setting, resampled=RESAMPLED
    )
    assert tolerance.held >= 0.9 * tolerance.of  # "trains ... at larger rates"
    # the row normalisers against the plain network: how often either trains at a larger rate
    rows_above = np.maximum(largest["layer"], largest["rms"]) > largest["plain"]
    rows = record(
        "ch08",
        "rows_rate_above_plain",
        int(rows_above.sum()),
        len(SEEDS),
        setting,
        resampled=RESAMPLED,
    )
    assert rows.held <= 0.5 * rows.of  # "on only k of n"
    assert ten.held >= 0.75 * ten.of
    # speed: after two epochs, each version at its own best rate (mean over all seeds)
    at_best = {v: s.final[s.rates.index(s.best_rate())] for v, s in sweeps.items()}
    ahead = at_best["batch"] > np.max([at_best[v] for v in OTHERS], axis=0)
    fastest = record(
        "ch08",
        "batch_fastest_two_epochs",
        int(ahead.sum()),
        len(SEEDS),
        setting,
        resampled=RESAMPLED,
    )
    assert fastest.held >= 0.9 * fastest.of  # "trains faster"
    # "made its seeds behave alike": at each version's best rate, the other versions' final
    # accuracies spread more over the fresh seeds (standard deviation) than the batch network's
    wider = np.array([at_best[v].std() > at_best["batch"].std() for v in OTHERS])
    alike = record(
        "ch08",
        "batch_seeds_alike",
        int(wider.sum()),
        wider.size,
        f"{setting}, per version",
        resampled=RESAMPLED,
    )
    assert alike.held == alike.of


def test_after_ten_epochs_the_versions_end_close_together(data) -> None:
    epochs = digits_rates.LONG_EPOCHS
    finals = {
        v: digits_rates.sweep(v, data, rates=(BEST[v],), seeds=SEEDS, epochs=epochs).final[0]
        for v in BEST
    }
    # in whole held-out images: accuracies are multiples of 1 / images, so a float difference
    # sitting on the line CLOSE could fall either side of it with the last bit
    images = len(data[3])
    within = int(np.floor(digits_rates.CLOSE * images + 1e-9))
    close = np.array(
        [np.rint(np.abs(finals[v] - finals["batch"]) * images) <= within for v in OTHERS]
    )
    setting = (
        f"ten epochs, each version at the chapter's best rate (plain, layer, RMS 0.1, "
        f"batch 1), {SEED_WORDS}"
    )
    h = record(
        "ch08",
        "ten_epochs_close",
        int(close.sum()),
        close.size,
        setting,
        resampled=RESAMPLED,
    )
    # "the others come within 0.03 ... on k of n pairs", read as "about half" in the summary
    # (it was "the four end close together" until this test found 30 of 60); the margin is
    # wide: a run or two moving by an image under another arithmetic (29 under AVX-512) cannot
    # cross it
    assert 0.3 * h.of <= h.held <= 0.7 * h.of


def test_scale_invariant_weights_turn_at_the_predicted_angle() -> None:
    eff = scaleinv.effective_rate(seeds=SEEDS)
    predicted = scaleinv.equilibrium_angle()
    with_decay = eff.mean_angle(scaleinv.DECAY)
    without = eff.mean_angle(0.0)
    setting = (
        f"rate {scaleinv.RATE:g}, decay {scaleinv.DECAY:g}, {scaleinv.STEPS} steps, "
        f"the last 50, {SEED_WORDS}"
    )
    near = record(
        "ch08",
        "angle_near_equilibrium",
        int(np.sum(np.abs(with_decay / predicted - 1) <= scaleinv.ANGLE_TOLERANCE)),
        len(SEEDS),
        setting,
        resampled=RESAMPLED,
    )
    ratio = record(
        "ch08",
        "angle_ten_times_without_decay",
        int(np.sum(with_decay > scaleinv.ANGLE_RATIO * without)),
        len(SEEDS),
        setting,
        resampled=RESAMPLED,
    )
    falling = record(
        "ch08",
        "decayed_length_still_falling",
        int(np.sum(eff.trend(scaleinv.DECAY) < 1)),
        len(SEEDS),
        setting,
        resampled=RESAMPLED,
    )
    assert near.held >= 0.9 * near.of
    assert ratio.held == ratio.of
    assert falling.held >= 0.9 * falling.of
    # without decay the length only grows, on every seed (g at right angles to w)
    assert np.all(np.diff(eff.length2[:, eff.block(0.0)], axis=0) > 0)
