"""QK-norm on a one-head attention toy: the attention logits as the query and key weights grow.

One head of self-attention over TOKENS tokens of width WIDTH: queries q = x Wq and keys k = x Wk
(one row per token), logits z_ij = q_i . k_j / sqrt(WIDTH), attention weights softmax_j(z_ij).
Training tends to lengthen Wq and Wk (Dehghani et al. 2023 saw the logits of a large vision
transformer grow until the attention weights were nearly one-hot); here the growth is imposed, as
a factor c on both weight blocks (c^2 on every logit), not trained. With QK-norm every query and
every key is put through a layer normaliser (no learned scale here) before the product, as in
Dehghani et al., so c cancels: the logits cannot grow with the weights. Seeds stack along the
leading axis, every draw from ``np.random.default_rng(seed)``.
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
