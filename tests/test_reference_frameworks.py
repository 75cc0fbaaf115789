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
    # running figures (mean 0, variance 1) used, and left as they were
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
    assert "epsilon 1e-6" in line("Flax", "nn.LayerNorm")["behaviour"]
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
