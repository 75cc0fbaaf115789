"""`normcore.batch`: batch norm's running statistics, its modes, ghost batch norm's groups, and the
refusals its constructor and its shared layer (`normcore.normaliser`) make."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import normcore as nc

pytestmark = pytest.mark.numeric  # figures from float arithmetic: make test-arith reruns it


def _step(layer: nc.BatchNorm, x: np.ndarray, d: np.ndarray, rate: float = 0.1) -> nc.BatchNorm:
    return layer.step(layer.backward(layer.forward(x, "train"), d), rate)


def test_a_step_updates_the_running_statistics_by_the_momentum_rule() -> None:
    """running = momentum * running + (1 - momentum) * batch, with the batch's biased variance,
    and the divisor evaluation mode uses worked out from the new running variance."""
    r = np.random.default_rng(0)
    x, d = r.normal(2.0, 3.0, size=(8, 3)), r.normal(size=(8, 3))
    layer = nc.BatchNorm.create(3, momentum=0.8)
    new = _step(layer, x, d)
    np.testing.assert_allclose(new.running_mean, 0.2 * x.mean(axis=0), rtol=1e-14)
    np.testing.assert_allclose(new.running_var, 0.8 + 0.2 * x.var(axis=0), rtol=1e-14)
    np.testing.assert_allclose(new.running_divisor, np.sqrt(new.running_var + 1e-5))
    np.testing.assert_array_equal(layer.running_mean, 0.0)  # the old layer is unchanged


def test_evaluation_mode_reads_the_running_statistics_not_the_input() -> None:
    """A row's output in evaluation mode does not depend on the other rows; in training mode it
    does (the baseline)."""
    r = np.random.default_rng(1)
    layer = _step(nc.BatchNorm.create(2), r.normal(size=(6, 2)), r.normal(size=(6, 2)))
    x = r.normal(size=(5, 2))
    alone = layer.forward(x[:1]).output
    np.testing.assert_array_equal(layer.forward(x).output[:1], alone)
    expect = (x - layer.running_mean) / layer.running_divisor * layer.scale + layer.shift
    np.testing.assert_allclose(layer.forward(x).output, expect, rtol=1e-14)
    trained = layer.forward(x, "train").output[:1]
    assert not np.allclose(trained, layer.forward(x[:2], "train").output[:1])


def test_the_smallest_epsilon_trains_forward_and_backward() -> None:
    """epsilon at the smallest subnormal is accepted, and a constant column (variance 0) still
    goes forward and backward: the divisor sqrt(5e-324) is about 2e-162, not 0."""
    layer = nc.BatchNorm.create(3, eps=5e-324)
    x = np.random.default_rng(2).normal(size=(4, 3))
    x[:, 0] = 1.5  # a constant column
    response = layer.forward(x, "train")
    gradient = layer.backward(response, np.ones((4, 3)))
    assert np.isfinite(gradient.grad_input).all()
    np.testing.assert_array_equal(response.output[:, 0], 0.0)
    assert np.isfinite(_step(layer, x, np.ones((4, 3))).scale).all()


def test_an_overflow_in_a_step_is_refused_naming_the_step() -> None:
    layer = nc.BatchNorm(scale=np.full(2, 1e300), shift=np.zeros(2))
    x = np.random.default_rng(3).normal(size=(4, 2))
    gradient = layer.backward(layer.forward(x, "train"), np.ones((4, 2)))
    with pytest.raises(nc.MagnitudeError, match=r"^BatchNorm\.step: expected results within"):
        layer.step(gradient, -1e308)


def test_ghost_batch_norm_splits_rows_only_in_training_mode() -> None:
    """Training: each group of rows standardised by its own statistics (the baseline of
    BatchNorm on each group); evaluation: any number of rows, as BatchNorm reads them."""
    r = np.random.default_rng(4)
    x = r.normal(size=(6, 2))
    ghost = nc.GhostBatchNorm.create(2, group_rows=3)
    plain = nc.BatchNorm.create(2)
    trained = ghost.forward(x, "train")
    for g in range(2):
        rows = slice(3 * g, 3 * g + 3)
        np.testing.assert_allclose(
            trained.output[rows], plain.forward(x[rows], "train").output, rtol=1e-14
        )
    assert trained.cache.z.shape == (2, 3, 2)
    seen = ghost.forward(x[:5])  # 5 rows: no group, evaluation mode
    assert seen.cache.z.shape == (5, 2)
    np.testing.assert_array_equal(seen.output, plain.forward(x[:5]).output)
    with pytest.raises(nc.ShapeError, match="multiple of group_rows=3"):
        ghost.forward(x[:5], "train")


@pytest.mark.parametrize(
    ("make", "error"),
    [
        (lambda: nc.BatchNorm(scale=np.ones(2), shift=np.zeros(2), affine=1), nc.SettingError),
        (lambda: nc.BatchNorm.create(2, tracks="spread"), nc.SettingError),
        (lambda: nc.GhostBatchNorm.create(2, group_rows=0), nc.SettingError),
        (lambda: nc.BatchNorm.create(2, momentum=1.0), nc.MomentumError),
    ],
)
def test_bad_settings_are_refused_by_kind(make, error) -> None:
    with pytest.raises(error):
        make()


def test_a_read_only_nan_parameter_is_refused_when_handed_in() -> None:
    """Read-only is no proof of finite: a NaN scale made read-only by hand is refused by the
    constructor (NonFiniteError), not misdiagnosed later; a finite read-only one is accepted."""
    scale = np.array([1.0, np.nan])
    scale.setflags(write=False)
    with pytest.raises(nc.NonFiniteError, match="scale"):
        nc.BatchNorm(scale=scale, shift=np.zeros(2))
    fine = np.ones(2)
    fine.setflags(write=False)
    assert nc.BatchNorm(scale=fine, shift=np.zeros(2)).forward(np.ones((3, 2))).output.shape == (
        3,
        2,
    )


def test_one_rate_per_stacked_model_steps_each_model_at_its_rate() -> None:
    """A stacked layer (S models) stepped with S rates moves model k exactly as model k alone
    stepped with rate k (the baseline: S separate layers); rates of the wrong shape are refused."""
    r = np.random.default_rng(6)
    x, d = r.normal(size=(2, 5, 3)), r.normal(size=(2, 5, 3))
    rates = np.array([0.1, 0.5])
    stacked = nc.BatchNorm.create(3, stack=(2,))
    new = stacked.step(stacked.backward(stacked.forward(x, "train"), d), rates)
    for k in range(2):
        alone = _step(nc.BatchNorm.create(3), x[k], d[k], float(rates[k]))
        np.testing.assert_array_equal(new.scale[k], alone.scale)
        np.testing.assert_array_equal(new.shift[k], alone.shift)
    gradient = stacked.backward(stacked.forward(x, "train"), d)
    with pytest.raises(nc.RateError, match="one per model on the leading axes"):
        stacked.step(gradient, np.array([0.1, 0.2, 0.3]))
    with pytest.raises(nc.RateError):
        stacked.step(gradient, np.array([0.1, np.nan]))


def test_a_handed_in_divisor_is_never_silently_replaced() -> None:
    """With tracks='variance' the divisor derives from the running variance: a handed-in
    running_divisor that is not sqrt(running_var + epsilon) is refused (SettingError),
    not replaced; None or the derived value itself is accepted (as dataclasses.replace hands it
    back)."""
    layer = nc.BatchNorm(scale=np.ones(2), shift=np.zeros(2), running_var=np.full(2, 4.0))
    with pytest.raises(nc.SettingError, match="running_divisor"):
        nc.BatchNorm(
            scale=np.ones(2),
            shift=np.zeros(2),
            running_var=np.ones(2),
            running_divisor=np.full(2, 5.0),
        )
    np.testing.assert_array_equal(layer.running_divisor, np.sqrt(4.0 + 1e-5))
    same = dataclasses.replace(layer, momentum=0.5)
    np.testing.assert_array_equal(same.running_divisor, layer.running_divisor)
    with pytest.raises(nc.SettingError, match="running_divisor"):
        dataclasses.replace(layer, running_var=np.ones(2))  # the old divisor no longer fits
    moved = dataclasses.replace(layer, running_var=np.ones(2), running_divisor=None)
    np.testing.assert_array_equal(moved.running_divisor, np.sqrt(1.0 + 1e-5))
