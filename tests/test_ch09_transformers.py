"""Chapter 9's transformer additions: the DyT stack's backward pass against finite differences and
PyTorch, the depth sweep's shared draw, the QK-norm toy's structural facts, and the written-out
layer and RMS passes against normcore's own layers; typed errors for bad input."""

from __future__ import annotations

import numpy as np
import pytest

from normcore import LayerNorm, RMSNorm, SettingError, finite_difference
from normcore.experiments import attention, prepost, rmscost

pytestmark = [pytest.mark.numeric]


def test_dyt_stack_backward_is_the_oracle_s() -> None:
    p = prepost.gradient_profile("pre-DyT", seeds=(0,), blocks=3)
    firsts, *_ = prepost._draw((0,), 3)
    oracle = finite_difference(
        lambda w: float(prepost.loss("pre-DyT", (0,), 3, w)[0]), firsts[:, 0].copy()
    )
    assert np.max(np.abs(oracle - p.first_grad)) < 1e-8
    assert np.max(np.abs(oracle)) > 1e-3


def test_dyt_stack_agrees_with_pytorch() -> None:
    torch = pytest.importorskip("torch")
    blocks = 4
    firsts, seconds, x, readout, targets = (torch.tensor(a[0]) for a in prepost._draw((1,), blocks))
    w1 = [firsts[b].clone().requires_grad_(True) for b in range(blocks)]

    def dyt(v):
        return torch.tanh(prepost.DYT_ALPHA * v)

    h = x
    for b in range(blocks):
        h = h + torch.relu(dyt(h) @ w1[b]) @ seconds[b]
    (0.5 * ((dyt(h) @ readout - targets) ** 2).sum() / prepost.TOKENS).backward()
    ours = prepost.gradient_profile("pre-DyT", seeds=(1,), blocks=blocks)
    theirs = np.array([w.grad.norm().item() for w in w1])
    np.testing.assert_allclose(ours.norm[0], theirs, rtol=1e-10)


def test_depth_sweep_shares_one_draw() -> None:
    """A shallower stack of the sweep is the deeper one's first blocks: its first block's gradient
    is the one a stack of that depth built from the deepest draw gets."""
    swept = prepost.depth_profiles("pre-LN", depths=(2, 5), seeds=(3,))
    drawn = prepost._draw((3,), 5)
    alone = prepost._profile("pre-LN", drawn, 2)
    np.testing.assert_array_equal(swept[0].norm, alone.norm)
    assert prepost.depth_sweep("pre-LN", (2, 5), (3,)).shape == (2, 1)
    # the chapter's 12-block profile is unchanged by the refactor: same draw as before
    np.testing.assert_array_equal(prepost.gradient_profile("pre-LN", (3,), 5).norm, swept[1].norm)


def test_post_ln_stream_is_one_per_feature_and_pre_ln_grows() -> None:
    post = prepost.gradient_profile("post-LN", (0, 1), 6).stream
    pre = prepost.gradient_profile("pre-LN", (0, 1), 6).stream
    assert np.allclose(post, 1, atol=1e-3)
    assert np.all(pre[:, -1] > pre[:, 0])


def test_qk_norm_toy_facts() -> None:
    plain, normed = attention.logits(False), attention.logits(True)
    c2 = (np.array(attention.SCALES) ** 2)[:, None]
    assert np.allclose(plain.largest / plain.largest[0], c2)
    assert np.all(normed.largest <= np.sqrt(attention.WIDTH) + 1e-9)
    assert np.all(np.diff(plain.entropy, axis=0) < 0)  # sharper as the weights grow
    assert np.all(plain.top[-1] > plain.top[0])


def test_written_out_passes_are_normcore_s() -> None:
    rng = np.random.default_rng(5)
    x, d = rng.normal(size=(7, 9)), rng.normal(size=(7, 9))
    for make, kernel in (
        (LayerNorm.create, rmscost.layer_pass),
        (RMSNorm.create, rmscost.rms_pass),
    ):
        layer = make(9)
        r = layer.forward(x, "train")
        y, dx = kernel(x, d)
        np.testing.assert_allclose(y, r.output, atol=1e-12)
        np.testing.assert_allclose(dx, layer.backward(r, d).grad_input, atol=1e-12)
    assert rmscost.saving(rows=8, features=8, trials=2, repeats=1).shape == (2,)


def test_bad_settings_are_refused() -> None:
    with pytest.raises(SettingError):
        prepost.gradient_profile("pre-tanh")
    with pytest.raises(SettingError):
        prepost.depth_sweep("pre-LN", depths=(0, 4))
    with pytest.raises(SettingError):
        attention.logits(True, scales=(0.0,))
    with pytest.raises(SettingError):
        attention.logits(True, seeds=())
    with pytest.raises(SettingError):
        rmscost.saving(rows=0)
    with pytest.raises(SettingError):
        rmscost.saving(trials=True)


@pytest.mark.parametrize("qk_norm", [False, True])
def test_trained_toy_grads_match_the_oracle(qk_norm: bool) -> None:
    """The written-out gradients of the attention toy's loss, held against central differences."""
    x, wq, wk = attention._draw((3,))
    y = np.zeros((1, attention.TOKENS, attention.TOKENS))
    y[0, np.arange(attention.TOKENS), attention.targets((3,))[0]] = 1.0
    _, _, dwq, dwk = attention.loss_and_grads(x, wq, wk, y, qk_norm)

    def loss_q(w):
        return attention.loss_and_grads(x, w[None], wk, y, qk_norm)[1][0]

    def loss_k(w):
        return attention.loss_and_grads(x, wq, w[None], y, qk_norm)[1][0]

    np.testing.assert_allclose(finite_difference(loss_q, wq[0]), dwq[0], atol=1e-7)
    np.testing.assert_allclose(finite_difference(loss_k, wk[0]), dwk[0], atol=1e-7)


def test_trained_toy_facts() -> None:
    plain, normed = attention.trained(False, steps=20), attention.trained(True, steps=20)
    assert np.all(normed.largest <= np.sqrt(attention.WIDTH) + 1e-9)  # at every step
    assert np.all(plain.largest[-1] > plain.largest[0])
    assert np.all(plain.length[-1] > plain.length[0])
    assert np.all(normed.loss[-1] < normed.loss[0])
    with pytest.raises(SettingError):
        attention.trained(True, steps=0)


def test_bf16_emulation_rounds_as_torch_does() -> None:
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).normal(scale=30, size=10_000).astype(np.float32)
    x[:3] = [1.00390625, 1.01171875, -3.0078125]  # ties, rounded to even
    mine = rmscost.to_bf16(x)
    theirs = torch.from_numpy(x).to(torch.bfloat16).float().numpy()
    np.testing.assert_array_equal(mine, theirs)


@pytest.mark.parametrize("variant", prepost.TRAINED)
def test_trained_stacks_backward_is_the_oracle_s(variant) -> None:
    """`train`'s pass (post-LN, pre-LN, DeepNorm's up-weighted residual, Peri-LN's output
    normaliser): every weight gradient of a two-block stack against a central difference along
    a random direction (the directional derivative is the gradient's inner product with it)."""
    blocks, h = 2, 1e-5
    firsts, seconds, x, readout, targets = prepost._draw((5,), blocks)
    alpha = prepost.deepnorm_constants(blocks)[0] if variant == "deepnorm" else 1.0
    weights = [firsts[:, b] for b in range(blocks)] + [seconds[:, b] for b in range(blocks)]

    def loss(ws):
        return float(
            prepost._step_pass(variant, ws[:blocks], ws[blocks:], x, readout, targets, alpha)[0][0]
        )

    _, gf, gs, _, _ = prepost._step_pass(
        variant, weights[:blocks], weights[blocks:], x, readout, targets, alpha
    )
    rng = np.random.default_rng(7)
    for i, grad in enumerate(gf + gs):
        d = rng.normal(size=weights[i].shape)
        up, down = list(weights), list(weights)
        up[i], down[i] = weights[i] + h * d, weights[i] - h * d
        oracle = (loss(up) - loss(down)) / (2 * h)
        assert abs(oracle - float(np.sum(grad * d))) < 1e-6 * max(1.0, abs(oracle))
        assert abs(oracle) > 1e-4


def test_deepnorm_constants_and_training_runs() -> None:
    # Wang et al.'s encoder-only constants: alpha = (2N)^(1/4), beta = (8N)^(-1/4)
    alpha, beta = prepost.deepnorm_constants(12)
    assert np.isclose(alpha**4, 24) and np.isclose(beta**-4, 96)
    r = prepost.train("peri-LN", seeds=(0, 1), blocks=2, rate=[1e-3, 1e-2], warmup=[0, 5], steps=3)
    assert r.loss.shape == r.stream.shape == (4, 2) and np.all(np.isfinite(r.loss))
    with pytest.raises(SettingError):
        prepost.train("pre-DyT", seeds=(0,), steps=1)
