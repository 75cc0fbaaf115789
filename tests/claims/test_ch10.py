"""The convnet chapter's conclusions at convergence, on 20 fresh seeds (network starts).

One call of `resconv.converged` trains everything, the chapter's two seeds stacked beside the
fresh ones: the two-layer convnet for `resconv.SMALL_EPOCHS` epochs with and without batch norm,
the residual network for `resconv.EPOCHS` epochs in each version of `resconv.RUNS`, and the
fine-tunes of the warmed two-layer network. The fresh seeds' frequencies are recorded under
"ch10"; the chapter seeds' figures are stored for the chapter (`precomputed.check`, read by the
chapter with `precomputed.load("ch10_converged")`). A few minutes on one core.
"""

from __future__ import annotations

import numpy as np
import pytest

from normcore.claims import fresh, record
from normcore.experiments import convnet as cn
from normcore.experiments import precomputed
from normcore.experiments import resconv as rc

CHAPTER = "ch10"
SEEDS = fresh(20)
N = len(SEEDS)
SHOWN = len(rc.SEEDS)
SEEDS_WORDS = f"fresh seeds {SEEDS[0]}-{SEEDS[-1]}"
SMALL = (
    f"two-layer convnet on the digits, rate {rc.RATE:g}, {rc.SMALL_EPOCHS} epochs of "
    f"{cn.BATCH}-image steps, {SEEDS_WORDS}"
)
RESIDUAL = (
    f"residual convnet of {rc.BLOCKS} blocks on the digits, rate {rc.RATE:g}, {rc.EPOCHS} "
    f"epochs of {cn.BATCH}-image steps, {SEEDS_WORDS}"
)
TUNE = (
    f"the two-layer batch convnet after {rc.SMALL_EPOCHS} epochs, then {cn.TUNE_STEPS} steps "
    f"of {cn.TUNE_BATCH} images at rate {cn.TUNE_RATE:g}, {SEEDS_WORDS}"
)
#: "stopped improving": held-out accuracy moved by at most this over the last three epochs
SETTLED = 0.01
#: no normaliser's two-layer convnet "saturates" when it reaches this at convergence
SATURATED = 0.97
SEEDS_ONLY = ("initial seeds",)


@pytest.fixture(scope="module")
def conv() -> dict:
    out = rc.converged(rc.SEEDS + SEEDS)
    precomputed.check(
        "ch10_converged",
        {k: v[..., :SHOWN] for k, v in out.items()},
        made_by="normcore.experiments.resconv.converged",
        setting=f"the chapter's seeds {rc.SEEDS}; " + RESIDUAL.split(", fresh")[0],
    )
    return {k: v[..., SHOWN:] for k, v in out.items()}


def count(mask: np.ndarray) -> int:
    return int(np.sum(mask))


def test_the_two_layer_network_saturates(conv: dict) -> None:
    near = record(
        CHAPTER,
        "small_batch_near_none",
        count(np.abs(conv["small_batch"] - conv["small_none"]) <= cn.NEAR),
        N,
        SMALL,
        resampled=SEEDS_ONLY,
    )
    high = record(
        CHAPTER,
        "small_none_saturates",
        count(conv["small_none"] >= SATURATED),
        N,
        SMALL,
        resampled=SEEDS_ONLY,
    )
    short = record(
        CHAPTER,
        "small_short_below_converged",
        count(conv["small_batch_short"] < conv["small_batch"] - cn.NEAR),
        N,
        SMALL + f"; against {cn.STEPS} steps",
        resampled=(*SEEDS_ONLY, "training length"),
    )
    assert near.held >= 0.75 * N  # "within two points on most seeds"
    assert high.held >= 0.75 * N  # "without a normaliser it reaches 0.97 on most seeds"
    assert short.every  # "the first steps are far from the end"


def test_the_residual_network_needs_its_normaliser(conv: dict) -> None:
    beats = record(
        CHAPTER,
        "res_batch_beats_none",
        count(conv["res_batch"] > conv["res_none"]),
        N,
        RESIDUAL,
        resampled=SEEDS_ONLY,
    )
    diverged = record(
        CHAPTER,
        "res_none_diverged",
        count(conv["res_none_diverged"] > 0),
        N,
        RESIDUAL,
        resampled=SEEDS_ONLY,
    )
    batch_diverged = count(conv["res_batch_diverged"] > 0)
    settled = record(
        CHAPTER,
        "res_batch_settled",
        count(np.abs(conv["res_batch"] - conv["res_batch_earlier"]) <= SETTLED),
        N,
        RESIDUAL + ", three epochs before the end against the end",
        resampled=(*SEEDS_ONLY, "training length"),
    )
    assert batch_diverged == 0
    assert diverged.held >= 1  # "some unnormalised runs diverge at this rate"
    assert beats.held >= 0.75 * N
    assert settled.held >= 0.75 * N  # "the batch runs had stopped improving"


def test_shrinking_the_branch_by_hand_stands_in_for_the_normaliser(conv: dict) -> None:
    """The intervention: no normaliser, every branch's last convolution zeroed at the start."""
    near = record(
        CHAPTER,
        "res_skip_near_batch",
        count(np.abs(conv["res_skip"] - conv["res_batch"]) <= cn.NEAR),
        N,
        RESIDUAL,
        resampled=SEEDS_ONLY,
    )
    beats = record(
        CHAPTER,
        "res_skip_beats_none",
        count(conv["res_skip"] > conv["res_none"]),
        N,
        RESIDUAL,
        resampled=SEEDS_ONLY,
    )
    assert count(conv["res_skip_diverged"] > 0) == 0
    assert near.held >= 0.75 * N and beats.held >= 0.75 * N


def test_batch_norm_shrinks_the_branch_at_the_start(conv: dict) -> None:
    shrinks = record(
        CHAPTER,
        "branch_batch_below_none",
        count(conv["branch_batch"][-1] < conv["branch_none"][-1]),
        N,
        RESIDUAL.split(", rate")[0] + f" at initialisation, {SEEDS_WORDS}",
        resampled=SEEDS_ONLY,
    )
    assert shrinks.held >= 0.9 * N


def test_small_batches_recomputed_statistics_and_folding(conv: dict) -> None:
    near = record(
        CHAPTER,
        "res_two_near_64",
        count(np.abs(conv["res_batch_2"] - conv["res_batch"]) <= cn.NEAR),
        N,
        RESIDUAL + ", 2 images a device against 64",
        resampled=SEEDS_ONLY,
    )
    gain2 = conv["res_batch_2_precise"] - conv["res_batch_2"]
    gain64 = conv["res_batch_precise"] - conv["res_batch"]
    small = record(
        CHAPTER,
        "res_precise_within_point",
        count((np.abs(gain2) <= cn.NEAR / 2) & (np.abs(gain64) <= cn.NEAR / 2)),
        N,
        RESIDUAL + f", statistics recomputed on {cn.SAMPLE} training images",
        resampled=SEEDS_ONLY,
    )
    assert near.held >= 0.75 * N
    assert small.held >= 0.75 * N  # "recomputing moves either by less than a point"
    assert np.all(conv["res_batch_fold"] < 1e-12) and np.all(conv["res_batch_2_fold"] < 1e-12)


def test_weight_standardisation_at_convergence(conv: dict) -> None:
    near = record(
        CHAPTER,
        "res_ws_near_batch",
        count(np.abs(conv["res_ws"] - conv["res_batch"]) <= cn.NEAR),
        N,
        RESIDUAL + ", group norm after weight-standardised convolutions",
        resampled=SEEDS_ONLY,
    )
    assert near.held >= 0.75 * N


def test_fine_tuning_with_the_adabn_control(conv: dict) -> None:
    c = conv
    undone = record(
        CHAPTER,
        "adabn_undoes_fainter",
        count(c["tune_fainter_adabn"] > c["tune_fainter_before"]),
        N,
        TUNE + ", digits at half their contrast",
        resampled=SEEDS_ONLY,
    )
    beats = record(
        CHAPTER,
        "adabn_beats_fine_tunes_fainter",
        count(
            (c["tune_fainter_adabn"] > c["tune_fainter_train"])
            & (c["tune_fainter_adabn"] > c["tune_fainter_eval"])
        ),
        N,
        TUNE + ", digits at half their contrast",
        resampled=SEEDS_ONLY,
    )
    cannot = record(
        CHAPTER,
        "adabn_cannot_undo_inverted",
        count(c["tune_inverted_adabn"] < 0.2),
        N,
        TUNE + ", digits inverted",
        resampled=SEEDS_ONLY,
    )
    learns = record(
        CHAPTER,
        "fine_tune_learns_inverted",
        count(np.minimum(c["tune_inverted_train"], c["tune_inverted_eval"]) > 0.2),
        N,
        TUNE + ", digits inverted",
        resampled=SEEDS_ONLY,
    )
    train_beats_eval = record(
        CHAPTER,
        "inverted_train_beats_eval",
        count(c["tune_inverted_train"] > c["tune_inverted_eval"]),
        N,
        TUNE + ", digits inverted",
        resampled=SEEDS_ONLY,
    )
    damage = record(
        CHAPTER,
        "fine_tune_damages_unshifted",
        count(
            (c["tune_none_train"] < c["tune_none_before"])
            & (c["tune_none_eval"] < c["tune_none_before"])
        ),
        N,
        TUNE + ", the original digits (no shift)",
        resampled=SEEDS_ONLY,
    )
    assert undone.held >= 0.9 * N and beats.held >= 0.75 * N
    assert cannot.every and learns.held >= 0.75 * N
    assert damage.held >= 0.7 * N  # "most": 16 of 20 here
    assert 0 <= train_beats_eval.held <= N  # the count is quoted, no direction claimed


def test_the_statistics_noise_shrinks_with_the_batch() -> None:
    """At the weights of the chapter's 8-step batch network: as B doubles from 2 to 64, the
    spread of a device's variance ratio shrinks and their mean rises toward 1, seed by seed."""
    data = cn.digits_images()
    net = cn.train(cn.build("batch", SEEDS), data, order_seed=SEEDS[0]).net
    ratios = cn.variance_ratios_by_size(net, data[0][: cn.SAMPLE], cn.SIZES)
    spread = np.array([ratios[b].std(axis=0).mean(axis=-1) for b in cn.SIZES])  # (sizes, S)
    mean = np.array([ratios[b].mean(axis=(0, 2)) for b in cn.SIZES])
    ok = np.all(np.diff(spread, axis=0) < 0, axis=0) & np.all(np.diff(mean, axis=0) > 0, axis=0)
    ok &= np.all(mean < 1, axis=0)
    held = record(
        CHAPTER,
        "spread_shrinks_with_batch",
        count(ok),
        N,
        f"the two-layer batch convnet after {cn.STEPS} steps, {SEEDS_WORDS}, row order {SEEDS[0]}",
        resampled=(*SEEDS_ONLY, "row orders"),
    )
    assert held.every
