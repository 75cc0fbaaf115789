"""Chapter 2's conclusions about the running variance, re-run on seeds the chapter never uses."""

from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_limits

from normcore.claims import fresh, record
from normcore.experiments.shift import running_variance_estimate

SEEDS = fresh(20)


def test_a_biased_fold_estimates_three_quarters_of_the_variance() -> None:
    """'the mean of the 200 lies within five of its standard errors of 0.75' (batches of four
    rows, so (n - 1) / n = 0.75), while the unbiased fold and the recomputed statistics estimate
    the data's variance, 1."""
    held = 0
    with threadpool_limits(limits=1, user_api="blas"):
        for seed in SEEDS:
            e = running_variance_estimate(rows=4, streams=200, steps=100, seed=seed)
            error = e.folded.std() / np.sqrt(len(e.folded))
            held += abs(e.folded.mean() - e.expected_folded) < 5 * error
            assert e.folded.mean() < 0.85 < 0.9 < e.precise.mean()
            assert abs(e.unbiased.mean() - 1.0) < 5 * e.unbiased.std() / np.sqrt(200)
    record(
        "ch02",
        "biased_fold_low",
        held=int(held),
        of=len(SEEDS),
        setting="batches of 4 standard-normal rows, 200 layers, 100 steps, fresh seeds 1000-1019",
        resampled=("data draws",),
    )
    assert held == len(SEEDS)


def test_the_shift_learns_from_a_batch_of_one() -> None:
    """'The shift's slope is ... the arriving gradient itself': for any row and any arriving
    gradient, the passed-down gradient and the scale's slope are zero and the shift's slope is
    what arrived."""
    from normcore import BatchNorm

    rng = np.random.default_rng(SEEDS[0])
    for _ in range(20):
        layer = BatchNorm.create(3)
        row = rng.normal(size=(1, 3)) * 10
        arriving = rng.normal(size=(1, 3))
        gradient = layer.backward(layer.forward(row, "training"), arriving)
        assert np.all(gradient.passed_down == 0.0) and np.all(gradient.slopes["scale"] == 0.0)
        np.testing.assert_array_equal(gradient.slopes["shift"], arriving[0])
