"""QK-norm on a one-head attention toy: the attention logits as the query and key weights grow.

One head of self-attention over TOKENS tokens of width WIDTH: queries q = x Wq and keys k = x Wk
(one row per token), logits z_ij = q_i . k_j / sqrt(WIDTH), attention weights softmax_j(z_ij).
Training tends to lengthen Wq and Wk (Dehghani et al. 2023 saw the logits of a large vision
transformer grow until the attention weights were nearly one-hot). `logits` imposes the growth,
as a factor c on both weight matrices (c^2 on every logit); `trained` lets gradient descent do it,
on a task that rewards sharp attention (each token to attend to one token, chosen at random,
scored by the cross-entropy of its attention weights). With QK-norm every query and every key is
put through a layer normaliser (no learned scale here) before the product, as in Dehghani et
al., so the weights' length cancels: the logits cannot pass sqrt(WIDTH) however the weights
grow, and the weights, scale-invariant behind the normaliser, receive gradients at right angles to
themselves. Each seed is one run along the leading axis, every draw from
``np.random.default_rng(seed)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import SettingError
from ..layer import LayerNorm

TOKENS = 16
WIDTH = 16
SEEDS = (0, 1, 2, 3, 4)
SCALES = (1.0, 2.0, 4.0, 8.0)
#: a token's largest attention weight above this counts as "peaked" (tests/claims/test_ch09.py)
PEAKED = 0.8
#: `trained`: gradient-descent steps and learning rate on the query and key weights
TRAIN_STEPS = 100
TRAIN_RATE = 1.0
#: the claims suite's reading of `trained` without QK-norm: the largest logit grows by more than
#: this factor over the steps
GROWS_BY = 3


@dataclass(frozen=True, eq=False)
class Logits:
    """Per scale and seed, (len(scales), len(seeds)): `largest` the largest |logit|, `entropy`
    the mean entropy (nats) of a token's attention weights, `top` the mean largest attention
    weight; `scales` the factors on Wq and Wk."""

    scales: tuple[float, ...]
    largest: np.ndarray
    entropy: np.ndarray
    top: np.ndarray


def _draw(seeds) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(S, TOKENS, WIDTH) tokens and (S, WIDTH, WIDTH) Wq and Wk, entries of variance 1/WIDTH."""
    xs, wq, wk = [], [], []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        xs.append(rng.normal(size=(TOKENS, WIDTH)))
        wq.append(rng.normal(size=(WIDTH, WIDTH)) / np.sqrt(WIDTH))
        wk.append(rng.normal(size=(WIDTH, WIDTH)) / np.sqrt(WIDTH))
    return np.array(xs), np.array(wq), np.array(wk)


def logits(qk_norm: bool, scales=SCALES, seeds=SEEDS) -> Logits:
    """The attention logits of the toy with Wq and Wk multiplied by each of `scales`, with or
    without QK-norm."""
    scales = tuple(float(c) for c in scales)
    if not scales or not all(np.isfinite(c) and c > 0 for c in scales):
        raise SettingError(f"scales: expected finite factors > 0, got {scales!r}")
    if not seeds:
        raise SettingError("seeds: expected at least one seed")
    x, wq, wk = _draw(seeds)
    norm = LayerNorm.create(WIDTH, stack=(len(seeds),))
    largest, entropy, top = (np.empty((len(scales), len(seeds))) for _ in range(3))
    for i, c in enumerate(scales):
        q, k = x @ (c * wq), x @ (c * wk)
        if qk_norm:
            q, k = norm.forward(q).output, norm.forward(k).output
        z = q @ np.swapaxes(k, -1, -2) / np.sqrt(WIDTH)
        p = np.exp(z - z.max(axis=-1, keepdims=True))
        p /= p.sum(axis=-1, keepdims=True)
        largest[i] = np.abs(z).max(axis=(1, 2))
        entropy[i] = -(p * np.log(np.maximum(p, 1e-300))).sum(axis=-1).mean(axis=-1)
        top[i] = p.max(axis=-1).mean(axis=-1)
    return Logits(scales=scales, largest=largest, entropy=entropy, top=top)


@dataclass(frozen=True, eq=False)
class Training:
    """Per step (0 to `steps`, before each update and after the last) and seed, arrays of shape
    (steps + 1, len(seeds)): `largest` the largest |logit|, `loss` the mean cross-entropy of a
    token's attention weights against its target, `length` the product of the lengths of Wq and
    Wk (Frobenius), which scales every logit without QK-norm."""

    qk_norm: bool
    largest: np.ndarray
    loss: np.ndarray
    length: np.ndarray


def targets(seeds=SEEDS) -> np.ndarray:
    """(S, TOKENS): the token each token is to attend to, a permutation per seed, drawn after the
    tokens and weights from the seed's own generator."""
    out = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        rng.normal(size=(TOKENS + 2 * WIDTH, WIDTH))  # the draws of `_draw`, in its order
        out.append(rng.permutation(TOKENS))
    return np.array(out)


def loss_and_grads(
    x: np.ndarray, wq: np.ndarray, wk: np.ndarray, y: np.ndarray, qk_norm: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For tokens x (S, T, d) (one run per seed along the leading axis), weights wq, wk
    (S, d, d) and one-hot targets y (S, T, T): per seed the largest |logit| and the mean
    cross-entropy of a token's attention weights, and the gradients of that loss for wq and wk,
    written out: dz = (p - y) / T, dq = dz k / sqrt(d), dk = dz^T q / sqrt(d), through the
    normaliser's own backward pass with QK-norm (a layer normaliser whose scale and shift stay
    at 1 and 0), then dW = x^T d(pre-activation)."""
    s, t, d = x.shape
    q, k = x @ wq, x @ wk
    if qk_norm:
        norm = LayerNorm.create(d, stack=(s,))
        rq, rk = norm.forward(q, "train"), norm.forward(k, "train")
        q, k = rq.output, rk.output
    z = q @ np.swapaxes(k, -1, -2) / np.sqrt(d)
    p = np.exp(z - z.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    largest = np.abs(z).max(axis=(1, 2))
    loss = -(y * np.log(np.maximum(p, 1e-300))).sum(axis=(1, 2)) / t
    dz = (p - y) / t
    dq = dz @ k / np.sqrt(d)
    dk = np.swapaxes(dz, -1, -2) @ q / np.sqrt(d)
    if qk_norm:
        dq = norm.backward(rq, dq).grad_input
        dk = norm.backward(rk, dk).grad_input
    xt = np.swapaxes(x, -1, -2)
    return largest, loss, xt @ dq, xt @ dk


def trained(
    qk_norm: bool, steps: int = TRAIN_STEPS, rate: float = TRAIN_RATE, seeds=SEEDS
) -> Training:
    """Train Wq and Wk of the toy by plain gradient descent for `steps` steps at `rate`, every
    token's attention weights scored by cross-entropy against its target token (`targets`),
    with or without QK-norm (`loss_and_grads`)."""
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise SettingError(f"steps: expected a whole number >= 1, got {steps!r}")
    if not (np.isfinite(rate) and rate > 0):
        raise SettingError(f"rate: expected a finite rate > 0, got {rate!r}")
    if not seeds:
        raise SettingError("seeds: expected at least one seed")
    x, wq, wk = _draw(seeds)
    s, t, _ = x.shape
    y = np.zeros((s, t, t))
    y[np.arange(s)[:, None], np.arange(t)[None, :], targets(seeds)] = 1.0
    largest, loss, length = (np.empty((steps + 1, s)) for _ in range(3))
    for step in range(steps + 1):
        largest[step], loss[step], dwq, dwk = loss_and_grads(x, wq, wk, y, qk_norm)
        length[step] = np.sqrt((wq**2).sum(axis=(1, 2)) * (wk**2).sum(axis=(1, 2)))
        if step < steps:
            wq, wk = wq - rate * dwq, wk - rate * dwk
    return Training(qk_norm=qk_norm, largest=largest, loss=loss, length=length)


@dataclass(frozen=True, eq=False)
class ScaledTraining:
    """`trained` with QK-norm and a learned scalar g per seed on the logits,
    z = g · LN(q) · LN(k) / sqrt(d), g starting at 1 (QK-norm as current models use it, with a
    learned scale; Henry et al. 2020 learn one scalar): `run` as `Training`, `scale` (steps + 1,
    S) the scale g before each update."""

    run: Training
    scale: np.ndarray


def trained_with_scale(
    steps: int = TRAIN_STEPS, rate: float = TRAIN_RATE, seeds=SEEDS
) -> ScaledTraining:
    """Plain gradient descent on Wq, Wk and the scale g, the task of `trained`."""
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise SettingError(f"steps: expected a whole number >= 1, got {steps!r}")
    x, wq, wk = _draw(seeds)
    s, t, d = x.shape
    y = np.zeros((s, t, t))
    y[np.arange(s)[:, None], np.arange(t)[None, :], targets(seeds)] = 1.0
    g = np.ones(s)
    norm = LayerNorm.create(d, stack=(s,))
    largest, loss, length, scale = (np.empty((steps + 1, s)) for _ in range(4))
    for step in range(steps + 1):
        rq, rk = norm.forward(x @ wq, "train"), norm.forward(x @ wk, "train")
        q, k = rq.output, rk.output
        z0 = q @ np.swapaxes(k, -1, -2) / np.sqrt(d)
        z = g[:, None, None] * z0
        p = np.exp(z - z.max(axis=-1, keepdims=True))
        p /= p.sum(axis=-1, keepdims=True)
        largest[step] = np.abs(z).max(axis=(1, 2))
        loss[step] = -(y * np.log(np.maximum(p, 1e-300))).sum(axis=(1, 2)) / t
        length[step] = np.sqrt((wq**2).sum(axis=(1, 2)) * (wk**2).sum(axis=(1, 2)))
        scale[step] = g
        if step == steps:
            break
        dz = (p - y) / t
        dg = (dz * z0).sum(axis=(1, 2))
        dz0 = dz * g[:, None, None]
        dq = norm.backward(rq, dz0 @ k / np.sqrt(d)).grad_input
        dk = norm.backward(rk, np.swapaxes(dz0, -1, -2) @ q / np.sqrt(d)).grad_input
        xt = np.swapaxes(x, -1, -2)
        wq, wk, g = wq - rate * (xt @ dq), wk - rate * (xt @ dk), g - rate * dg
    return ScaledTraining(Training(True, largest, loss, length), scale)
