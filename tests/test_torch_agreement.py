"""Where normcore's conventions agree with PyTorch's, the numbers agree (float64, 1e-10).

Where they differ on purpose (the running variance folds in the biased variance here and the
unbiased one there; momentum is named by the other number), the difference is asserted to be
exactly the documented one. PyTorch is an oracle (`tests/conftest.py`): without it these tests
skip on a developer's machine and fail in CI.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import normcore as nc

pytestmark = pytest.mark.numeric  # figures from float arithmetic: make test-arith reruns it

torch: Any = None  # PyTorch and its functional module, set for every test by `_torch`
F: Any = None

TOL = {"rtol": 1e-10, "atol": 1e-10}
SEEDS = [0, 1, 2, 3]


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(1000 + seed)


def t(a: np.ndarray, grad: bool = True):
    return torch.tensor(np.asarray(a, dtype=np.float64), dtype=torch.float64, requires_grad=grad)


def torch_pass(fn, d: np.ndarray, **arrays: np.ndarray):
    """Output of `fn(**tensors)` and the gradients of sum(d * output) for each named array."""
    tensors = {k: t(v) for k, v in arrays.items()}
    out = fn(**tensors)
    (out * torch.tensor(d)).sum().backward()
    return out.detach().numpy(), {k: v.grad.numpy() for k, v in tensors.items()}


def agree(ours: np.ndarray, theirs: np.ndarray) -> None:
    assert np.shape(ours) == np.shape(theirs)
    np.testing.assert_allclose(ours, theirs, **TOL)


def affine(r: np.random.Generator, shape) -> tuple[np.ndarray, np.ndarray]:
    return r.normal(size=shape) + 1.0, r.normal(size=shape)


def block(r: np.random.Generator, shape, spread: float, offset: float = 0.0):
    """A block x drawn with this spread and offset, and a gradient d arriving at its output."""
    x = r.normal(size=shape) * spread + offset
    return x, r.normal(size=x.shape)


@pytest.fixture(autouse=True)
def _torch(oracle: Any) -> None:
    global torch, F
    torch = oracle("torch")
    F = torch.nn.functional


def check_layer(layer, x, d, reference, mode="train", params=("scale", "shift"), **arrays):
    """`layer`'s forward and backward on x against `reference(x, **arrays)` in PyTorch: the
    output, the input gradient, and each parameter's gradient (`params` pair with `arrays`)."""
    response = layer.forward(x, mode)
    gradient = layer.backward(response, d)
    out, grads = torch_pass(reference, d, x=x, **arrays)
    agree(response.output, out)
    agree(gradient.grad_input, grads["x"])
    for ours, theirs in zip(params, arrays, strict=True):
        agree(gradient.grads[ours], grads[theirs])


# ----------------------------------------------------------------------------- batch norm


@pytest.mark.parametrize("seed", SEEDS)
def test_batch_norm_training_agrees(seed: int) -> None:
    r = rng(seed)
    rows, features = int(r.integers(2, 9)), int(r.integers(1, 5))
    x, d = block(r, (rows, features), 3, 2)
    scale, shift = affine(r, features)
    check_layer(
        nc.BatchNorm(scale=scale, shift=shift),
        x,
        d,
        lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True, eps=1e-5),
        w=scale,
        b=shift,
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_running_figures_after_one_step(seed: int) -> None:
    r = rng(seed)
    n, features = int(r.integers(2, 9)), 3
    x = r.normal(size=(n, features)) * 2 - 1
    start_mean, start_var = r.normal(size=features), r.uniform(0.5, 2.0, size=features)
    layer = nc.BatchNorm(
        scale=np.ones(features),
        shift=np.zeros(features),
        running_mean=start_mean,
        running_var=start_var,
        momentum=0.9,
    )
    stepped = layer.step(layer.backward(layer.forward(x, "train"), np.zeros_like(x)), 0.1)

    running_mean = torch.tensor(start_mean.copy())
    running_var = torch.tensor(start_var.copy())
    F.batch_norm(torch.tensor(x), running_mean, running_var, training=True, momentum=0.1, eps=1e-5)

    # Momentum 0.9 here is PyTorch's 0.1: the running means agree.
    agree(stepped.running_mean, running_mean.numpy())
    # The variances differ by the factor n / (n - 1) on the batch's share exactly:
    # ours 0.9 v0 + 0.1 v_biased, PyTorch's 0.9 v0 + 0.1 v_biased n / (n - 1).
    ours_share = stepped.running_var - 0.9 * start_var
    theirs_share = running_var.numpy() - 0.9 * start_var
    agree(theirs_share, ours_share * n / (n - 1))
    assert not np.allclose(stepped.running_var, running_var.numpy(), rtol=1e-6)
    # And the batch's share is a tenth of the biased variance, computed by hand.
    agree(ours_share, 0.1 * x.var(axis=0))


def test_pytorch_momentum_point_nine_is_not_ours() -> None:
    # The naming really is the other number: PyTorch's 0.9 would take nine tenths of the batch.
    x = nc.four_rows()
    layer = nc.BatchNorm.create(2)
    stepped = layer.step(layer.backward(layer.forward(x, "train"), np.zeros_like(x)), 0.1)
    running_mean = torch.zeros(2, dtype=torch.float64)
    F.batch_norm(
        torch.tensor(x),
        running_mean,
        torch.ones(2, dtype=torch.float64),
        training=True,
        momentum=0.9,
    )
    # Seed 000: ours is 0.1 * 6 = 0.6 for column 2; PyTorch's momentum 0.9 gives 0.9 * 6 = 5.4.
    agree(stepped.running_mean, [0.8, 0.6])
    agree(running_mean.numpy(), [7.2, 5.4])


@pytest.mark.parametrize("seed", SEEDS)
def test_predicting_agrees_with_eval_mode(seed: int) -> None:
    r = rng(seed)
    rows, features = int(r.integers(1, 6)), int(r.integers(1, 5))
    x, d = block(r, (rows, features), 2)
    scale, shift = affine(r, features)
    mean, var = r.normal(size=features), r.uniform(0.2, 3.0, size=features)
    layer = nc.BatchNorm(scale=scale, shift=shift, running_mean=mean, running_var=var)
    check_layer(
        layer,
        x,
        d,
        lambda x, w, b: F.batch_norm(
            x, torch.tensor(mean), torch.tensor(var), w, b, training=False, eps=1e-5
        ),
        mode="eval",
        w=scale,
        b=shift,
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_image_batch_norm_agrees_with_batchnorm2d(seed: int) -> None:
    r = rng(seed)
    n, c, h, w = (int(v) for v in r.integers(1, 4, size=4))
    n += 1
    x, d = block(r, (n, c, h, w), 2, 1)
    scale, shift = affine(r, c)
    layer = nc.ImageBatchNorm(scale=scale, shift=shift)
    response = layer.forward(x, "train")
    gradient = layer.backward(response, d)

    module = torch.nn.BatchNorm2d(c, eps=1e-5, momentum=0.1, dtype=torch.float64)
    with torch.no_grad():
        module.weight.copy_(torch.tensor(scale))
        module.bias.copy_(torch.tensor(shift))
    module.train()
    tx = t(x)
    out = module(tx)
    (out * torch.tensor(d)).sum().backward()
    agree(response.output, out.detach().numpy())
    agree(gradient.grad_input, tx.grad.numpy())
    agree(gradient.grads["scale"], module.weight.grad.numpy())
    agree(gradient.grads["shift"], module.bias.grad.numpy())

    # One step: the running mean agrees; the variance's batch share differs by count/(count-1).
    stepped = layer.step(gradient, 0.0)
    count = n * h * w
    agree(stepped.running_mean, module.running_mean.numpy())
    if count > 1:
        agree(module.running_var.numpy() - 0.9, (stepped.running_var - 0.9) * count / (count - 1))

    # Predicting against eval mode with the same running statistics.
    equal = nc.ImageBatchNorm(
        scale=scale,
        shift=shift,
        running_mean=module.running_mean.numpy(),
        running_var=module.running_var.numpy(),
    )
    module.eval()
    with torch.no_grad():
        agree(equal.forward(x).output, module(torch.tensor(x)).numpy())


# ----------------------------------------------------------------------------- row layers


@pytest.mark.parametrize("seed", SEEDS)
def test_layer_norm_agrees(seed: int) -> None:
    r = rng(seed)
    rows, features = int(r.integers(1, 6)), int(r.integers(2, 6))
    x, d = block(r, (rows, features), 3)
    scale, shift = affine(r, features)
    layer = nc.LayerNorm(scale=scale, shift=shift)
    for mode in ("train", "eval"):
        check_layer(
            layer,
            x,
            d,
            lambda x, w, b: F.layer_norm(x, (features,), w, b, eps=1e-5),
            mode=mode,
            w=scale,
            b=shift,
        )


@pytest.mark.parametrize("seed", SEEDS)
def test_layer_norm_trailing_normalized_shape_agrees(seed: int) -> None:
    r = rng(seed)
    a, b, c, e = (int(v) for v in r.integers(1, 4, size=4))
    e += 1
    x, d = block(r, (a, b, c, e), 2, 0.5)
    scale, shift = affine(r, (c, e))
    check_layer(
        nc.LayerNorm(scale=scale, shift=shift, normalized_shape=(c, e)),
        x,
        d,
        lambda x, w, b: F.layer_norm(x, (c, e), w, b, eps=1e-5),
        w=scale,
        b=shift,
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_rms_norm_agrees(seed: int) -> None:
    r = rng(seed)
    rows, features = int(r.integers(1, 6)), int(r.integers(1, 6))
    x, d = block(r, (rows, features), 2)
    scale = r.normal(size=features) + 1.0
    layer = nc.RMSNorm(scale=scale, shift=np.zeros(features))  # shift 0: the conventional model
    check_layer(
        layer,
        x,
        d,
        lambda x, w: F.rms_norm(x, [features], w, eps=1e-5),
        params=("scale",),
        w=scale,
    )


def test_rms_norm_default_eps_differs_from_pytorch() -> None:
    # PyTorch's default eps is float64's machine epsilon, not 1e-5: on a small row the two
    # differ, which is why the agreement above passes eps=1e-5 explicitly.
    x = np.array([[1e-3, -2e-3]])
    ours = nc.RMSNorm.create(2).forward(x).output
    theirs = F.rms_norm(torch.tensor(x), [2]).numpy()
    assert np.max(np.abs(ours - theirs)) > 1e-3


# ----------------------------------------------------------------------------- image axes


@pytest.mark.parametrize("seed", SEEDS)
def test_group_norm_agrees(seed: int) -> None:
    r = rng(seed)
    groups, per_group = int(r.integers(1, 4)), int(r.integers(1, 3))
    c = groups * per_group
    n, h, w = int(r.integers(1, 3)), int(r.integers(1, 4)), int(r.integers(2, 4))
    x, d = block(r, (n, c, h, w), 2, -1)
    scale, shift = affine(r, c)
    check_layer(
        nc.GroupNorm(scale=scale, shift=shift, groups=groups),
        x,
        d,
        lambda x, w, b: F.group_norm(x, groups, w, b, eps=1e-5),
        w=scale,
        b=shift,
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_instance_norm_agrees(seed: int) -> None:
    r = rng(seed)
    n, c = int(r.integers(1, 4)), int(r.integers(1, 4))
    h, w = int(r.integers(1, 4)), int(r.integers(2, 4))
    x, d = block(r, (n, c, h, w), 2, 3)
    scale, shift = affine(r, c)
    layer = nc.InstanceNorm(scale=scale, shift=shift)
    for mode in ("train", "eval"):
        check_layer(
            layer,
            x,
            d,
            lambda x, w, b: F.instance_norm(x, weight=w, bias=b, use_input_stats=True, eps=1e-5),
            mode=mode,
            w=scale,
            b=shift,
        )


@pytest.mark.parametrize(
    ("size", "alpha", "beta", "k"),
    [
        (5, 1e-4, 0.75, 2.0),
        (3, 0.5, 0.75, 1.0),
        (4, 2.0, 0.5, 1.5),
        (1, 1.0, 1.0, 1.0),
        (7, 3.0, 0.9, 0.5),
        (2, 1.0, 0.75, 1.0),
    ],
)
def test_local_response_normalisation_agrees(size: int, alpha: float, beta: float, k: float):
    x = rng(size).normal(size=(2, 6, 3, 2)) * 2
    ours = nc.local_response_normalisation(x, size=size, alpha=alpha, beta=beta, k=k)
    module = torch.nn.LocalResponseNorm(size, alpha=alpha, beta=beta, k=k)
    agree(ours, module(torch.tensor(x)).numpy())


# ----------------------------------------------------------------------------- dense


@pytest.mark.parametrize("seed", SEEDS)
def test_dense_agrees(seed: int) -> None:
    r = rng(seed)
    rows, fan_in, fan_out = (int(v) for v in r.integers(1, 5, size=3))
    x, d = r.normal(size=(rows, fan_in)), r.normal(size=(rows, fan_out))
    weights, bias = r.normal(size=(fan_in, fan_out)), r.normal(size=fan_out)
    check_layer(
        nc.Dense(weights=weights, bias=bias),
        x,
        d,
        lambda x, w, b: F.linear(x, w.T, b),
        mode="eval",
        params=("weights", "bias"),
        w=weights,
        b=bias,
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_weight_norm_dense_agrees(seed: int) -> None:
    # PyTorch's weight (out, in) with dim=0 holds one direction per output row: our columns.
    r = rng(seed)
    rows, fan_in, fan_out = (int(v) for v in r.integers(1, 5, size=3))
    x, d = r.normal(size=(rows, fan_in)), r.normal(size=(rows, fan_out))
    direction, magnitude = r.normal(size=(fan_in, fan_out)), r.normal(size=fan_out)
    bias = r.normal(size=fan_out)
    layer = nc.WeightNormDense(direction=direction, magnitude=magnitude, bias=bias)
    gradient = layer.backward(response := layer.forward(x), d)

    def reference(x, v, g, b):
        return F.linear(x, torch._weight_norm(v, g, 0), b)

    out, grads = torch_pass(reference, d, x=x, v=direction.T, g=magnitude[:, None], b=bias)
    agree(response.output, out)
    agree(gradient.grad_input, grads["x"])
    agree(gradient.grads["direction"], grads["v"].T)
    agree(gradient.grads["magnitude"], grads["g"][:, 0])
    agree(gradient.grads["bias"], grads["b"])


# ----------------------------------------------------------------------------- the loss


@pytest.mark.parametrize("seed", SEEDS)
def test_binary_cross_entropy_agrees(seed: int) -> None:
    r = rng(seed)
    n = int(r.integers(1, 12))
    logits = r.normal(size=n) * 5
    labels = r.uniform(size=n)
    labels[: n // 2] = np.round(labels[: n // 2])
    loss = nc.binary_cross_entropy(logits, labels)
    z = t(logits)
    value = F.binary_cross_entropy_with_logits(z, torch.tensor(labels), reduction="mean")
    value.backward()
    agree(loss.value, value.item())
    agree(loss.grad, z.grad.numpy())


def test_binary_cross_entropy_extreme_logits_agree() -> None:
    logits = np.array([1000.0, -1000.0, 1000.0, -1000.0, 0.0, 40.0])
    labels = np.array([1.0, 0.0, 0.0, 1.0, 0.5, 0.0])
    loss = nc.binary_cross_entropy(logits, labels)
    z = t(logits)
    value = F.binary_cross_entropy_with_logits(z, torch.tensor(labels), reduction="mean")
    value.backward()
    assert np.isfinite(loss.value)
    # By hand: the two wrong-way logits of 1000 cost 1000 each, the right-way ones 0, the zero
    # logit log 2, and 40 with label 0 costs 40 + log1p(exp(-40)): (2000 + log 2 + 40) / 6.
    agree(loss.value, (2000.0 + np.log(2.0) + 40.0 + np.log1p(np.exp(-40.0))) / 6.0)
    agree(loss.value, value.item())
    agree(loss.grad, z.grad.numpy())


def test_binary_cross_entropy_stacked_agrees() -> None:
    r = rng(9)
    logits, labels = r.normal(size=(3, 7)) * 4, r.integers(0, 2, size=(3, 7)).astype(float)
    loss = nc.binary_cross_entropy(logits, labels, stack_axes=1)
    for i in range(3):
        z = t(logits[i])
        value = F.binary_cross_entropy_with_logits(z, torch.tensor(labels[i]))
        value.backward()
        agree(loss.value[i], value.item())
        agree(loss.grad[i], z.grad.numpy())


def test_the_pytorch_column_of_the_reference_is_pytorchs_own():
    """Chapter 9's 'Where normcore and PyTorch differ' computes PyTorch's figures from its
    documented update rule; here PyTorch itself gives them, on the column 1, 1, 7, 23."""
    from normcore import reference as ref

    said = {r["difference"]: r["PyTorch"] for r in ref.pytorch_differences()}
    column = torch.tensor([[1.0], [1.0], [7.0], [23.0]], dtype=torch.float64)
    module = torch.nn.BatchNorm1d(1, dtype=torch.float64)
    assert module.training  # a fresh module is in training mode
    out = module(column)
    assert f"running mean {module.running_mean.item():.4g}" in said["momentum's name"]
    assert said["running variance"].endswith(f": {module.running_var.item():.4g}")  # 11.7
    assert said["default mode"].endswith(f"{out[-1, 0].item():.4f}")  # 1.6667
    mistaken = torch.nn.BatchNorm1d(1, momentum=0.9, dtype=torch.float64)
    mistaken(column)
    assert said["momentum's name"].endswith(f"{mistaken.running_mean.item():.4g}")  # 7.2
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        torch.nn.BatchNorm1d(1, dtype=torch.float64)(column[:1])
    assert said["one-row training batch"].startswith("refused (ValueError")
