"""Pre-LN against post-LN: the gradient each block's weights receive at initialisation.

A small residual stack in the transformer's shape, without attention: `BLOCKS` blocks, each a
two-layer feed-forward sublayer F (dense WIDTH -> 2 WIDTH, ReLU, dense 2 WIDTH -> WIDTH) on every
token (row). The two arrangements (Xiong et al. 2020):

    post-LN:  x <- LN(x + F(x))                  (the original transformer)
    pre-LN:   x <- x + F(LN(x)), one LN at the end (GPT-2 and most models since)
    pre-RMS:  as pre-LN with RMSNorm (LLaMA and most current language models)

The loss is half the mean squared distance between a fixed random read-out of the last block's
output and random targets. Seeds stack along the leading axis.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..activations import ReLU
from ..dense import Dense, starting_weights
from ..errors import SettingError
from ..layer import LayerNorm, RMSNorm

ARRANGEMENTS = ("post-LN", "pre-LN", "pre-RMS")
BLOCKS = 12
WIDTH = 32
TOKENS = 64
SEEDS = (0, 1, 2, 3, 4)


@dataclass(frozen=True, eq=False)
class Profile:
    """`norm` (len(SEEDS), BLOCKS): the length of each block's first dense layer's weight slope,
    block 1 (nearest the input) first; `passed` the length of the slope arriving at each block's
    input, same shape; `first_slope` (len(SEEDS), WIDTH, 2 WIDTH) block 1's first weight slope
    itself (for the finite-difference check)."""

    arrangement: str
    norm: np.ndarray
    passed: np.ndarray
    first_slope: np.ndarray


def _norm(stack: int, arrangement: str):
    make = RMSNorm.create if arrangement == "pre-RMS" else LayerNorm.create
    return make(WIDTH, stack=(stack,))


def _draw(seeds, blocks: int) -> tuple[np.ndarray, ...]:
    """Per seed from ``default_rng(seed)``: every block's two weight blocks, the tokens, the
    read-out and the targets, stacked: (S, blocks, WIDTH, 2 WIDTH), (S, blocks, 2 WIDTH, WIDTH),
    (S, TOKENS, WIDTH), (S, WIDTH, 1), (S, TOKENS, 1)."""
    firsts, seconds, xs, readouts, targets = [], [], [], [], []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        firsts.append([starting_weights(WIDTH, 2 * WIDTH, rng) for _ in range(blocks)])
        seconds.append([starting_weights(2 * WIDTH, WIDTH, rng) for _ in range(blocks)])
        xs.append(rng.normal(size=(TOKENS, WIDTH)))
        readouts.append(rng.normal(size=(WIDTH, 1)) / np.sqrt(WIDTH))
        targets.append(rng.normal(size=(TOKENS, 1)))
    return tuple(np.array(a) for a in (firsts, seconds, xs, readouts, targets))


def _check(arrangement: str, blocks: int) -> None:
    if arrangement not in ARRANGEMENTS:
        raise SettingError(f"arrangement: expected one of {ARRANGEMENTS}, got {arrangement!r}")
    if isinstance(blocks, bool) or not isinstance(blocks, int) or blocks < 1:
        raise SettingError(f"blocks: expected a whole number >= 1, got {blocks!r}")


def gradient_profile(arrangement: str, seeds=SEEDS, blocks: int = BLOCKS) -> Profile:
    """Build the stack from each seed (same weights, inputs and targets for every arrangement),
    run one forward and backward pass, and measure every block's weight slope."""
    _check(arrangement, blocks)
    s = len(seeds)
    firsts, seconds, x, readout, targets = _draw(seeds, blocks)
    first = [Dense(weights=firsts[:, b]) for b in range(blocks)]
    second = [Dense(weights=seconds[:, b]) for b in range(blocks)]
    norms = [_norm(s, arrangement) for _ in range(blocks + 1)]
    relu = ReLU()
    tape = []
    for b in range(blocks):
        if arrangement == "post-LN":
            r1 = first[b].forward(x)
            r2 = relu.forward(r1.output)
            r3 = second[b].forward(r2.output)
            rn = norms[b].forward(x + r3.output)
            tape.append((rn, r3, r2, r1))
            x = rn.output
        else:
            rn = norms[b].forward(x)
            r1 = first[b].forward(rn.output)
            r2 = relu.forward(r1.output)
            r3 = second[b].forward(r2.output)
            tape.append((rn, r3, r2, r1))
            x = x + r3.output
    final = norms[blocks].forward(x) if arrangement != "post-LN" else None
    out = final.output if final is not None else x
    error = out @ readout - targets
    d = (error @ np.swapaxes(readout, -1, -2)) / TOKENS
    if final is not None:
        d = final.layer.backward(final, d).passed_down
    norm, passed = np.empty((s, blocks)), np.empty((s, blocks))
    for b in reversed(range(blocks)):
        rn, r3, r2, r1 = tape[b]
        if arrangement == "post-LN":
            d_sum = rn.layer.backward(rn, d).passed_down
            g3 = r3.layer.backward(r3, d_sum)
            g1 = r1.layer.backward(r1, relu.backward(r2, g3.passed_down).passed_down)
            d = d_sum + g1.passed_down
        else:
            g3 = r3.layer.backward(r3, d)
            g1 = r1.layer.backward(r1, relu.backward(r2, g3.passed_down).passed_down)
            d = d + rn.layer.backward(rn, g1.passed_down).passed_down
        w = g1.slopes["weights"]
        norm[:, b] = np.sqrt((w.reshape(s, -1) ** 2).sum(axis=1))
        passed[:, b] = np.sqrt((d.reshape(s, -1) ** 2).sum(axis=1))
    return Profile(arrangement=arrangement, norm=norm, passed=passed, first_slope=w)


def loss(arrangement: str, seeds=SEEDS, blocks: int = BLOCKS, first_weights=None) -> np.ndarray:
    """The loss per seed, written out with plain numpy (the finite-difference oracle for
    `gradient_profile`'s backward pass); `first_weights`, if given, replaces block 1's first
    dense weights (shape (S, WIDTH, 2 WIDTH))."""
    _check(arrangement, blocks)
    firsts, seconds, x, readout, targets = _draw(seeds, blocks)
    if first_weights is not None:
        firsts = firsts.copy()
        firsts[:, 0] = first_weights
    norms = [_norm(len(seeds), arrangement) for _ in range(blocks + 1)]
    for b in range(blocks):
        w1, w2 = firsts[:, b], seconds[:, b]
        if arrangement == "post-LN":
            x = norms[b].forward(x + np.maximum(x @ w1, 0) @ w2).output
        else:
            x = x + np.maximum(norms[b].forward(x).output @ w1, 0) @ w2
    if arrangement != "post-LN":
        x = norms[blocks].forward(x).output
    error = x @ readout - targets
    return 0.5 * (error**2).sum(axis=(1, 2)) / TOKENS
