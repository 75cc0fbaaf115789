"""The convnet chapter's conclusions, re-run on 20 fresh seeds (network starts) and a fresh row
order, in the chapter's own setting (the digits, 8 channels, rate 0.3, 8 steps of 64 images), and
the small-batch sweep (2 to 64 images a device) also after three epochs, a training length the
chapter cannot afford.

Recorded under "ch10" (the chapter's number is settled when the book is merged; the prose reads
the figures with `normcore.claims.held("ch10", ...)`).
"""

from __future__ import annotations

import numpy as np
import pytest

from normcore.claims import fresh, record
from normcore.experiments import convnet as cn

CHAPTER = "ch10"
SEEDS = fresh(20)
ORDER = SEEDS[0]
SETTING = (
    f"{cn.CHANNELS}-channel convnet on the digits, rate {cn.RATE:g}, {cn.STEPS} steps of "
    f"{cn.BATCH} images, fresh seeds {SEEDS[0]}-{SEEDS[-1]}, row order {ORDER}"
)


@pytest.fixture(scope="module")
def runs() -> dict:
    data = cn.digits_images()
    out: dict = {"data": data}
    for version in cn.VERSIONS:
        out[version] = cn.train(cn.build(version, SEEDS), data, order_seed=ORDER)
    for b in cn.SIZES[:-1]:
        out[b] = cn.train(cn.build("batch", SEEDS, per_device=b), data, order_seed=ORDER)
    out[cn.SIZES[-1]] = out["batch"]
    return out


@pytest.fixture(scope="module")
def long_runs(runs: dict) -> dict:
    """Batch norm at 2 and 64 images a device and group norm, trained for cn.LONG_EPOCHS epochs."""
    data = runs["data"]
    steps = cn.LONG_EPOCHS * (len(data[1]) // cn.BATCH)
    out: dict = {"steps": steps}
    out["group"] = cn.train(cn.build("group", SEEDS), data, steps=steps, order_seed=ORDER)
    for b in (2, cn.BATCH):
        net = cn.build("batch", SEEDS, per_device=b)
        out[b] = cn.train(net, data, steps=steps, order_seed=ORDER)
    return out


def beats(runs: dict, a: str, b: str) -> int:
    return int(np.sum(runs[a].accuracy > runs[b].accuracy))


def test_every_normaliser_against_none(runs: dict) -> None:
    n = len(SEEDS)
    k = {v: beats(runs, v, "none") for v in ("batch", "layer", "instance", "group", "ws-group")}
    for version, held in k.items():
        record(CHAPTER, f"{version.replace('-', '_')}_beats_none", held, n, SETTING)
    # the prose: every normaliser beats no normaliser on most seeds
    assert all(held >= 15 for held in k.values())


def test_batch_beats_group(runs: dict) -> None:
    held = record(CHAPTER, "batch_beats_group", beats(runs, "batch", "group"), len(SEEDS), SETTING)
    assert held.held > held.of // 2  # "more often than not"


def test_weight_standardisation_lifts_group_norm(runs: dict) -> None:
    held = record(CHAPTER, "ws_beats_group", beats(runs, "ws-group", "group"), len(SEEDS), SETTING)
    assert held.held > held.of // 2  # "more often than not"


def test_small_per_device_batches_cost_little(runs: dict) -> None:
    """At 2 images a device, the batch layer's accuracy against its accuracy at 64 (the whole step
    on one device): within cn.NEAR on most seeds, below it on some (the count is stated), and the
    mean over the seeds within cn.NEAR of the 64-image mean at every size of the sweep."""
    top = runs[cn.BATCH].accuracy
    gap = runs[2].accuracy - top
    n = len(SEEDS)
    within = record(CHAPTER, "two_within_two_points", int(np.sum(gap >= -cn.NEAR)), n, SETTING)
    below = record(CHAPTER, "two_below_largest", int(np.sum(gap < 0)), n, SETTING)
    assert within.held >= 15  # "on most seeds"
    assert not below.every  # "below it on some seeds", not a fall on every one
    means = np.array([runs[b].accuracy.mean() for b in cn.SIZES])
    close = int(np.sum(np.abs(means - top.mean()) < cn.NEAR))
    sizes = record(CHAPTER, "mean_near_at_every_size", close, len(cn.SIZES), SETTING)
    assert sizes.every


def test_small_batches_after_longer_training(long_runs: dict) -> None:
    """After three epochs: batch norm at 2 images a device within cn.NEAR of 64 images on every seed
    or nearly, below it about as often as not; group norm below batch norm at 2 images on
    most seeds."""
    setting = f"{SETTING}; trained {long_runs['steps']} steps ({cn.LONG_EPOCHS} epochs) instead"
    top = long_runs[cn.BATCH].accuracy
    n = len(SEEDS)
    gap = long_runs[2].accuracy - top
    within = record(CHAPTER, "long_two_within_two_points", int(np.sum(gap >= -cn.NEAR)), n, setting)
    below = record(CHAPTER, "long_two_below_largest", int(np.sum(gap < 0)), n, setting)
    group = record(
        CHAPTER,
        "long_group_below_two",
        int(np.sum(long_runs["group"].accuracy < long_runs[2].accuracy)),
        n,
        setting,
    )
    assert within.held >= n - 2  # "on every seed or nearly"
    assert abs(below.held - n / 2) <= n / 5  # "about as often as not"
    assert group.held > n // 2  # "group norm below batch norm at 2 images more often than not"
    # longer training raised every seed's accuracy: the short runs are not converged
    assert np.all(top > 0.9)


def test_group_norm_is_the_same_run_for_every_batch_size(runs: dict) -> None:
    """Group norm reads no other image: its training does not depend on the per-device batch."""
    data = runs["data"]
    short = cn.train(cn.build("group", SEEDS[:2]), data, steps=3, order_seed=ORDER)
    again = cn.train(cn.build("group", SEEDS[:2]), data, steps=3, order_seed=ORDER)
    np.testing.assert_array_equal(short.loss, again.loss)


def test_the_statistics_spread_more_as_the_batch_shrinks(runs: dict) -> None:
    x = runs["data"][0][: cn.SAMPLE]
    net = runs["batch"].net
    spread = np.array([cn.variance_ratios(net, x, b).std(axis=0).mean(axis=-1) for b in cn.SIZES])
    shrink = np.array([cn.variance_ratios(net, x, b).mean(axis=0).mean(axis=-1) for b in cn.SIZES])
    # per seed: the spread falls and the mean ratio rises toward 1 with every doubling
    falls = np.all(np.diff(spread, axis=0) < 0, axis=0)
    rises = np.all(np.diff(shrink, axis=0) > 0, axis=0) & np.all(shrink < 1, axis=0)
    held = record(
        CHAPTER, "spread_shrinks_with_batch", int(np.sum(falls & rises)), len(SEEDS), SETTING
    )
    assert held.every


def test_precise_statistics(runs: dict) -> None:
    """Recomputed statistics against the running statistics at 2 images a device: at least as good
    more often than not, and worse by cn.NEAR or more on at most a quarter of the seeds (not never:
    a chapter seed moved by 3 lost more)."""
    data = runs["data"]
    net = runs[2].net
    precise = cn.precise(net, data[0][: cn.SAMPLE])
    change = cn.accuracy(precise, data[2], data[3]) - runs[2].accuracy
    n = len(SEEDS)
    held = record(CHAPTER, "precise_at_least_running", int(np.sum(change >= 0)), n, SETTING)
    small = record(
        CHAPTER, "precise_costs_under_two_points", int(np.sum(change > -cn.NEAR)), n, SETTING
    )
    assert held.held > held.of // 2
    assert small.held >= 3 * small.of // 4


def test_folding_is_exact_up_to_rounding(runs: dict) -> None:
    data = runs["data"]
    gaps = cn.fold_gap(runs[2].net, data[2])
    held = record(
        CHAPTER,
        "fold_below_1e_12",
        int(np.sum(gaps < 1e-12)),
        len(SEEDS),
        f"{SETTING}; 2 images a device, every held-out image",
    )
    assert held.every


def test_fine_tuning_on_fainter_digits(runs: dict) -> None:
    """Fine-tuning the trained batch network on fainter digits in pairs: with the batch layers
    training (statistics of each pair) against frozen (running statistics), on the fainter
    held-out images."""
    x, y, x_held, y_held = runs["data"]
    net = runs["batch"].net
    faint, faint_held = cn.fainter(x), cn.fainter(x_held)
    before = cn.accuracy(net, faint_held, y_held)
    after = {
        mode: cn.accuracy(cn.fine_tune(net, faint, y, mode, seed=ORDER), faint_held, y_held)
        for mode in ("train", "eval")
    }
    setting = (
        f"{SETTING}; then {cn.TUNE_STEPS} steps of {cn.TUNE_BATCH} images at rate "
        f"{cn.TUNE_RATE:g} on the digits at {cn.FAINT:g} of their contrast"
    )
    n = len(SEEDS)
    wins = record(
        CHAPTER,
        "tuned_training_beats_frozen",
        int(np.sum(after["train"] > after["eval"])),
        n,
        setting,
    )
    helps = {
        mode: record(CHAPTER, f"tuning_{mode}_helps", int(np.sum(after[mode] > before)), n, setting)
        for mode in after
    }
    assert wins.every  # "on every one of the fresh seeds"
    # training-mode fine-tuning improved on the untuned network on nearly every seed, frozen on
    # fewer
    assert helps["train"].held >= n - 2
    assert helps["eval"].held < helps["train"].held
