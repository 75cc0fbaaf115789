"""Folding a batch layer into the dense layer before it: same answers in evaluation mode, typed
refusals for pairs that cannot fold, and agreement with PyTorch's own folding."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import normcore as nc
from normcore import FoldError, ShapeError, fold_batch_norm

pytestmark = pytest.mark.numeric  # figures from float arithmetic: make test-arith reruns it


def pair(seed: int, stack: tuple[int, ...] = (), tracks: str = "variance"):
    r = np.random.default_rng(seed)
    dense = nc.Dense(weights=r.normal(size=(*stack, 6, 4)), bias=r.normal(size=(*stack, 4)))
    spread = r.uniform(0.2, 3.0, size=(*stack, 4))
    batch = nc.BatchNorm(
        scale=r.normal(size=(*stack, 4)),
        shift=r.normal(size=(*stack, 4)),
        running_mean=r.normal(size=(*stack, 4)) * 5,
        **{"running_var" if tracks == "variance" else "running_divisor": spread},
        tracks=tracks,
    )
    return dense, batch, r.normal(size=(*stack, 9, 6)) * 3


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("stack", [(), (3,)])
@pytest.mark.parametrize("tracks", ["variance", "divisor"])
def test_folded_layer_answers_as_the_pair(seed: int, stack: tuple, tracks: str) -> None:
    dense, batch, x = pair(seed, stack, tracks)
    expected = batch.forward(dense.forward(x).output).output  # predicting, the default
    got = fold_batch_norm(dense, batch).forward(x).output
    assert np.max(np.abs(got - expected)) < 1e-12
    # and not the training answer: folding is for predicting only
    trained = batch.forward(dense.forward(x).output, "train").output
    assert np.max(np.abs(got - trained)) > 1e-3


def test_weight_normalised_dense_folds_its_effective_weights() -> None:
    dense, batch, x = pair(7)
    wn = nc.WeightNormDense(
        direction=dense.weights * 2.5, magnitude=np.array([1.0, 2, 3, 4]), bias=dense.bias
    )
    expected = batch.forward(wn.forward(x).output).output
    assert np.max(np.abs(fold_batch_norm(wn, batch).forward(x).output - expected)) < 1e-12


def test_folding_after_training_steps() -> None:
    # running statistics that came from real batches, not drawn ones
    dense, batch, x = pair(1)
    for k in range(5):
        response = batch.forward(dense.forward(x[k : k + 5]).output, "train")
        batch = batch.step(batch.backward(response, np.ones_like(response.output)), 0.1)
    expected = batch.forward(dense.forward(x).output).output
    assert np.max(np.abs(fold_batch_norm(dense, batch).forward(x).output - expected)) < 1e-12


@pytest.mark.parametrize(
    "other",
    [
        nc.LayerNorm.create(4),
        nc.RMSNorm.create(4),
        nc.GroupNorm.create(4, 2),
        nc.InstanceNorm.create(4),
        nc.ImageBatchNorm.create(4),
        nc.ReLU(),
        None,
        "batch",
    ],
    ids=lambda o: type(o).__name__,
)
def test_layers_that_cannot_fold_are_refused(other: object) -> None:
    dense, _, _ = pair(0)
    with pytest.raises(FoldError):
        fold_batch_norm(dense, other)


def test_a_first_layer_that_is_not_dense_is_refused() -> None:
    _, batch, _ = pair(0)
    with pytest.raises(FoldError):
        fold_batch_norm(nc.ReLU(), batch)
    with pytest.raises(FoldError):
        fold_batch_norm(np.ones((6, 4)), batch)


@pytest.mark.parametrize("batch", [nc.BatchNorm.create(5), nc.BatchNorm.create(4, stack=(2,))])
def test_mismatched_features_or_stack_are_refused(batch: nc.BatchNorm) -> None:
    dense, _, _ = pair(0)
    with pytest.raises(ShapeError):
        fold_batch_norm(dense, batch)


def test_pytorch_folds_the_same_way(oracle: Any) -> None:
    torch = oracle("torch")
    from torch.nn.utils.fusion import fuse_linear_bn_eval

    dense, batch, x = pair(3)
    linear = torch.nn.Linear(6, 4).double().eval()
    bn = torch.nn.BatchNorm1d(4, eps=batch.eps).double().eval()
    with torch.no_grad():
        linear.weight.copy_(torch.tensor(dense.weights.T))
        linear.bias.copy_(torch.tensor(dense.bias))
        bn.weight.copy_(torch.tensor(batch.scale))
        bn.bias.copy_(torch.tensor(batch.shift))
        bn.running_mean.copy_(torch.tensor(batch.running_mean))
        bn.running_var.copy_(torch.tensor(batch.running_var))
    fused = fuse_linear_bn_eval(linear, bn)
    ours = fold_batch_norm(dense, batch)
    np.testing.assert_allclose(
        ours.weights, fused.weight.detach().numpy().T, rtol=1e-12, atol=1e-12
    )
    np.testing.assert_allclose(ours.bias, fused.bias.detach().numpy(), rtol=1e-12, atol=1e-12)
