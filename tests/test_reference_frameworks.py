"""The Keras and Flax lines of the reference's framework table (`normcore.reference.
framework_defaults`), held against the frameworks themselves: every default the table states,
and the behaviour it describes, measured on one column.

Both come through the `oracle` fixture (tests/conftest.py): written against Keras 3.15.1 on the
torch backend and Flax 0.12.8 with jax 0.10.2, which tools/ci_prepare.sh installs; a missing one
skips on a developer's machine and fails under CI=true."""

from __future__ import annotations

import numpy as np
import pytest

from normcore import reference as ref

pytestmark = [pytest.mark.numeric, pytest.mark.slow]  # imports Keras and Flax (about 25 s)

COLUMN = np.array([[2.0], [4.0], [4.0], [10.0]], dtype="float32")  # mean 5, biased variance 9


def line(framework: str, setting_start: str) -> dict[str, str]:
    rows = [
        d
        for d in ref.framework_defaults()
        if d["framework"] == framework and d["setting"].startswith(setting_start)
    ]
    assert len(rows) == 1, (framework, setting_start)
    return rows[0]


@pytest.fixture
def keras(oracle):
    return oracle("keras")


def test_keras_batch_norm_defaults_and_running_figures(keras) -> None:
    row = line("Keras", "BatchNormalization(momentum")
    assert "momentum=0.99, epsilon=1e-3" in row["setting"] and "biased" in row["behaviour"]
    bn = keras.layers.BatchNormalization()
    assert (bn.momentum, bn.epsilon, bn.axis) == (0.99, 1e-3, -1)
    bn.build((None, 1))
    bn(COLUMN, training=True)
    # the share kept is momentum; the variance folded in is the biased one (9, not 12)
    assert np.allclose(bn.moving_mean.numpy(), 0.99 * 0 + 0.01 * 5)
    assert np.allclose(bn.moving_variance.numpy(), 0.99 * 1 + 0.01 * 9)
    assert "axis names the kept" in line("Keras", "BatchNormalization(axis")["behaviour"]


def test_keras_frozen_batch_norm_predicts(keras) -> None:
    assert "training=True" in line("Keras", "layer.trainable")["behaviour"]
    bn = keras.layers.BatchNormalization()
    bn.build((None, 1))
    bn.trainable = False
    out = np.asarray(bn(COLUMN, training=True))
    # running statistics (mean 0, variance 1) used, and left as they were
    assert np.allclose(out, COLUMN / np.sqrt(1 + 1e-3), rtol=1e-6)
    assert np.allclose(bn.moving_mean.numpy(), 0) and np.allclose(bn.moving_variance.numpy(), 1)


def test_keras_layer_and_rms_norm_defaults(keras) -> None:
    assert "epsilon 1e-3" in line("Keras", "LayerNormalization")["behaviour"]
    ln = keras.layers.LayerNormalization()
    assert (ln.epsilon, ln.axis, ln.rms_scaling) == (1e-3, -1, False)
    assert "epsilon 1e-6" in line("Keras", "RMSNormalization")["behaviour"]
    rms = keras.layers.RMSNormalization()
    assert rms.epsilon == 1e-6
    rms.build((None, 4))
    assert len(rms.trainable_weights) == 1  # a scale, no shift


@pytest.fixture
def linen(oracle):
    return oracle("flax")


def test_flax_batch_norm_defaults_and_running_figures(linen) -> None:
    import jax
    import jax.numpy as jnp

    row = line("Flax", "nn.BatchNorm")
    assert "momentum=0.99, epsilon=1e-5" in row["setting"] and "biased" in row["behaviour"]
    bn = linen.BatchNorm(use_running_average=False)
    assert (bn.momentum, bn.epsilon) == (0.99, 1e-5)
    variables = bn.init(jax.random.PRNGKey(0), jnp.asarray(COLUMN))
    _, updated = bn.apply(variables, jnp.asarray(COLUMN), mutable=["batch_stats"])
    stats = updated["batch_stats"]
    assert np.allclose(np.asarray(stats["mean"]), 0.99 * 0 + 0.01 * 5, rtol=1e-6)
    assert np.allclose(np.asarray(stats["var"]), 0.99 * 1 + 0.01 * 9, rtol=1e-6)


def test_flax_layer_and_rms_norm_defaults(linen) -> None:
    assert "epsilon 1e-6" in line("Flax", "nn.LayerNorm(epsilon")["behaviour"]
    assert linen.LayerNorm().epsilon == 1e-6
    assert "epsilon 1e-6" in line("Flax", "nn.RMSNorm")["behaviour"]
    assert linen.RMSNorm().epsilon == 1e-6


def test_pytorch_eval_turns_dropout_off(oracle) -> None:
    """The reference's "`eval()` also turns dropout off": a model-wide eval() switches dropout
    to the identity along with the batch layers, so freezing the batch layers that way drops
    dropout too; calling eval() on the batch layer alone leaves dropout training."""
    torch = oracle("torch")
    assert "turns dropout off" in line("PyTorch", "model.eval()")["behaviour"]
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.BatchNorm1d(4), torch.nn.Dropout(0.5))
    x = torch.randn(8, 4)
    model.train()
    assert (model(x) == 0).any()  # dropout zeroes some values while training
    model.eval()
    bn = model[0]
    assert torch.equal(model(x), bn(x))  # eval(): dropout is the identity
    model.train()
    bn.eval()  # freezing only the batch layer
    assert model[1].training and (model(x) == 0).any()


# ------------------------------------------------------------------ the PyTorch traps
FOUR_COLUMN = [[1.0], [1.0], [7.0], [23.0]]  # the book's worked column: mean 8, unbiased 108


def test_pytorch_model_train_undoes_a_per_module_eval(oracle) -> None:
    """bn.eval() on one batch layer, then the usual model.train(): the layer trains again."""
    torch = oracle("torch")
    assert "undoes them" in line("PyTorch", "bn.eval(), then model.train()")["behaviour"]
    model = torch.nn.Sequential(torch.nn.Linear(1, 1), torch.nn.BatchNorm1d(1))
    model[1].eval()
    assert model[1].training is False
    model.train()
    assert model[1].training is True
    x = torch.tensor(FOUR_COLUMN)
    model[1](x)  # and so it moves its running statistics again
    assert model[1].running_mean.item() != 0.0


def test_pytorch_requires_grad_false_leaves_running_statistics_moving(oracle) -> None:
    torch = oracle("torch")
    row = line("PyTorch", "bn.requires_grad_(False)")
    bn = torch.nn.BatchNorm1d(1)
    bn.requires_grad_(False)
    assert not any(p.requires_grad for p in bn.parameters()) and bn.training
    bn(torch.tensor(FOUR_COLUMN))
    mean, var = bn.running_mean.item(), bn.running_var.item()
    assert abs(mean - 0.8) < 1e-6 and abs(var - 11.7) < 1e-5
    assert f"running mean {mean:.4g} and running variance {var:.4g}" in row["behaviour"]


def test_pytorch_without_running_statistics_eval_uses_the_batch(oracle) -> None:
    torch = oracle("torch")
    row = line("PyTorch", "BatchNorm(track_running_stats=False)")
    bn = torch.nn.BatchNorm1d(1, track_running_stats=False)
    assert bn.running_mean is None and bn.running_var is None
    x = torch.tensor(FOUR_COLUMN)
    trained = bn(x)
    bn.eval()
    evaluated = bn(x)
    assert torch.equal(trained, evaluated)
    assert abs(evaluated.mean().item()) < 1e-6  # the batch's own mean, removed
    assert f"gives {evaluated[-1, 0].item():.4f} in both modes" in row["behaviour"]


def frozen_batch_norm(x, weight, bias, running_mean, running_var, eps=1e-5):
    """torchvision.ops.FrozenBatchNorm2d's forward as its source defines it (torchvision is not
    installed here): one scale and one offset per channel, from four fixed buffers."""
    scale = weight * (running_var + eps).rsqrt()
    return x * scale.reshape(1, -1, 1, 1) + (bias - running_mean * scale).reshape(1, -1, 1, 1)


def test_pytorch_frozen_batch_norm_is_batch_norm_in_eval_with_nothing_to_learn(oracle) -> None:
    """What PyTorch itself shows of the fetched definition: with the same four buffers,
    FrozenBatchNorm2d's arithmetic is BatchNorm2d's in eval mode, whatever the mode; where a
    BatchNorm2d in training mode would standardise by the batch and move its statistics, the
    frozen layer has neither parameters for an optimiser nor statistics that move."""
    torch = oracle("torch")
    row = line("PyTorch", "torchvision.ops.FrozenBatchNorm2d")
    assert "eps=1e-5" in row["setting"] and "train() changes nothing" in row["behaviour"]
    torch.manual_seed(0)
    bn = torch.nn.BatchNorm2d(3)
    with torch.no_grad():
        for buffer in (bn.weight, bn.bias, bn.running_mean):
            buffer.normal_()
        bn.running_var.uniform_(0.5, 2.0)
    x = torch.randn(2, 3, 4, 4)
    weight, bias = bn.weight.detach().clone(), bn.bias.detach().clone()
    mean, var = bn.running_mean.clone(), bn.running_var.clone()
    frozen = frozen_batch_norm(x, weight, bias, mean, var)
    bn.eval()
    assert torch.allclose(frozen, bn(x), atol=1e-6)
    bn.train()
    assert not torch.allclose(frozen, bn(x), atol=1e-3)  # training mode: the batch's statistics
    assert not torch.equal(bn.running_mean, mean)  # and the running statistics moved


def test_pytorch_sync_batch_norm_and_ddp_buffers(oracle) -> None:
    """SyncBatchNorm in one process is BatchNorm (the same outputs and running statistics);
    DDP's forward_sync_buffers, None by default, means True, and its buffer sync takes rank 0's
    copy (the installed source says so)."""
    import inspect

    torch = oracle("torch")
    row = line("PyTorch", "SyncBatchNorm")
    assert "rank 0's buffers" in row["behaviour"] and "broadcast_buffers" in row["behaviour"]
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 1), torch.nn.BatchNorm2d(2))
    plain = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 1), torch.nn.BatchNorm2d(2))
    plain.load_state_dict(model.state_dict())
    synced = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    assert isinstance(synced[1], torch.nn.SyncBatchNorm)
    x = torch.randn(4, 1, 3, 3)
    assert torch.allclose(synced(x), plain(x), atol=1e-6)
    assert torch.allclose(synced[1].running_var, plain[1].running_var)
    ddp = torch.nn.parallel.DistributedDataParallel
    parameters = inspect.signature(ddp.__init__).parameters
    assert parameters["forward_sync_buffers"].default is None
    assert parameters["broadcast_buffers"].default is None
    doc = ddp.__doc__
    assert "When ``None``, defaults\n                    to ``True``" in doc or (
        "defaults" in doc and "to ``True``" in doc
    )
    assert "deprecated:: 2.13" in doc
    assert "authoritative_rank = 0" in inspect.getsource(ddp._sync_buffers)


def test_pytorch_layer_and_group_norm_defaults(oracle) -> None:
    torch = oracle("torch")
    assert "eps 1e-5" in line("PyTorch", "LayerNorm(")["behaviour"]
    ln = torch.nn.LayerNorm(4)
    assert ln.eps == 1e-5 and ln.elementwise_affine and ln.bias is not None
    no_shift = torch.nn.LayerNorm(4, bias=False)
    assert no_shift.bias is None and no_shift.weight is not None
    gn = torch.nn.GroupNorm(2, 4)
    assert gn.eps == 1e-5 and gn.affine and gn.weight.shape == gn.bias.shape == (4,)
    assert torch.nn.GroupNorm(2, 4, bias=False).bias is None


def test_flax_fast_variance_default_loses_the_variance(linen) -> None:
    """float32 rows of mean 3000 and unit spread: with the default one-pass variance the
    outputs' spread is far from 1 (hundreds on some rows); subtracting the mean first gives 1."""
    import jax
    import jax.numpy as jnp

    row = line("Flax", "nn.LayerNorm(use_fast_variance")
    assert "far from 1" in row["behaviour"] and "1 apart" in row["behaviour"]
    for layer in (linen.LayerNorm(), linen.BatchNorm(), linen.GroupNorm()):
        assert layer.use_fast_variance is True
    rng = np.random.default_rng(12)
    x = jnp.asarray((ref.FAST_VARIANCE_MEAN + rng.standard_normal((16, 256))).astype("float32"))
    spread = {}
    for fast in (True, False):
        layer = linen.LayerNorm(use_fast_variance=fast)
        out = np.asarray(layer.apply(layer.init(jax.random.PRNGKey(0), x), x))
        spread[fast] = out.std(axis=-1)
    assert np.max(spread[True]) > 100 and np.min(spread[True]) < 0.9
    assert np.allclose(spread[False], 1.0, atol=1e-3)
    assert np.spacing(np.float32(ref.FAST_VARIANCE_MEAN**2)) == 1.0
