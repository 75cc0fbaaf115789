"""Pre-LN against post-LN: the gradient each block's weights receive at initialisation.

A small residual network in the transformer's shape, without attention: `BLOCKS` blocks, each a
two-layer feed-forward sublayer F (dense WIDTH -> 2 WIDTH, ReLU, dense 2 WIDTH -> WIDTH) on every
token (row). The two variants (Xiong et al. 2020):

    post-LN:  x <- LN(x + F(x))                  (the original transformer)
    pre-LN:   x <- x + F(LN(x)), one LN at the end (GPT-2 and most models since)
    pre-RMS:  as pre-LN with RMSNorm (LLaMA and most current language models)
    pre-DyT:  as pre-LN with Dynamic Tanh, DyT(x) = tanh(alpha x), in place of every normaliser
              (Zhu et al. 2025): an element-wise squashing with no statistics at all, the
              normaliser-free control (`NORM_FREE`)

The loss is half the mean squared distance between a fixed random read-out of the last block's
output and random targets. Each seed is one run along the leading axis.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..activations import ReLU
from ..dense import Dense, starting_weights
from ..errors import SettingError
from ..layer import LayerNorm, RMSNorm

VARIANTS = ("post-LN", "pre-LN", "pre-RMS")
NORM_FREE = ("pre-DyT",)
#: DyT's starting alpha, the default of Zhu et al.'s code (its scale starts at 1, its shift at 0)
DYT_ALPHA = 0.5
BLOCKS = 12
WIDTH = 32
TOKENS = 64
SEEDS = (0, 1, 2, 3, 4)
#: the deepest pre-LN stack's stream, E||x||^2 / d per block, that counts as "about two per block"
#: (tests/claims/test_ch09.py)
STREAM_RANGE = (1.5, 2.5)


@dataclass(frozen=True, eq=False)
class Profile:
    """`norm` (len(SEEDS), BLOCKS): the length of each block's first dense layer's weight gradient,
    block 1 (nearest the input) first; `passed` the length of the upstream gradient at each block's
    input, same shape; `first_grad` (len(SEEDS), WIDTH, 2 WIDTH) block 1's first weight gradient
    itself (for the finite-difference check)."""

    variant: str
    norm: np.ndarray
    passed: np.ndarray
    first_grad: np.ndarray
    #: (len(SEEDS), BLOCKS) the residual stream's mean squared size per feature, E||x||^2 / WIDTH
    #: over the tokens, after each block (before any final normaliser); None if not recorded
    stream: np.ndarray | None = None


@dataclass(frozen=True, eq=False)
class _Squashed:
    """DyT's forward response: its output and the layer (for the backward pass)."""

    output: np.ndarray
    layer: DyT


@dataclass(frozen=True, eq=False)
class _Passed:
    grad_input: np.ndarray


@dataclass(frozen=True, eq=False)
class DyT:
    """Dynamic Tanh at initialisation (scale 1, shift 0): y = tanh(alpha x), element-wise, no
    statistics. Forward and backward for `gradient_profile` only (alpha is not learned here)."""

    alpha: float = DYT_ALPHA

    def forward(self, x: np.ndarray) -> _Squashed:
        """tanh(alpha x), any shape."""
        return _Squashed(output=np.tanh(self.alpha * x), layer=self)

    def backward(self, response: _Squashed, grad_output: np.ndarray) -> _Passed:
        """The input gradient: grad_output * alpha * (1 - tanh(alpha x)^2)."""
        return _Passed(grad_input=grad_output * self.alpha * (1.0 - response.output**2))


def _norm(stack: int, variant: str):
    if variant == "pre-DyT":
        return DyT()
    make = RMSNorm.create if variant == "pre-RMS" else LayerNorm.create
    return make(WIDTH, stack=(stack,))


def _draw(seeds, blocks: int) -> tuple[np.ndarray, ...]:
    """Per seed from ``default_rng(seed)``: every block's two weight matrices, the tokens,
    the read-out and the targets, one run per seed along the leading axis: (S, blocks, WIDTH,
    2 WIDTH), (S, blocks, 2 WIDTH, WIDTH), (S, TOKENS, WIDTH), (S, WIDTH, 1), (S, TOKENS, 1)."""
    firsts, seconds, xs, readouts, targets = [], [], [], [], []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        firsts.append([starting_weights(WIDTH, 2 * WIDTH, rng) for _ in range(blocks)])
        seconds.append([starting_weights(2 * WIDTH, WIDTH, rng) for _ in range(blocks)])
        xs.append(rng.normal(size=(TOKENS, WIDTH)))
        readouts.append(rng.normal(size=(WIDTH, 1)) / np.sqrt(WIDTH))
        targets.append(rng.normal(size=(TOKENS, 1)))
    return tuple(np.array(a) for a in (firsts, seconds, xs, readouts, targets))


def _check(variant: str, blocks: int) -> None:
    if variant not in VARIANTS + NORM_FREE:
        raise SettingError(f"variant: expected one of {VARIANTS + NORM_FREE}, got {variant!r}")
    if isinstance(blocks, bool) or not isinstance(blocks, int) or blocks < 1:
        raise SettingError(f"blocks: expected a whole number >= 1, got {blocks!r}")


def gradient_profile(variant: str, seeds=SEEDS, blocks: int = BLOCKS) -> Profile:
    """Build the network from each seed (same weights, inputs and targets for every variant),
    run one forward and backward pass, and measure every block's weight gradient."""
    _check(variant, blocks)
    return _profile(variant, _draw(seeds, blocks), blocks)


def _profile(variant: str, drawn: tuple[np.ndarray, ...], blocks: int) -> Profile:
    """`gradient_profile` on drawn weights, tokens, read-out and targets (see `_draw`); only the
    first `blocks` blocks of the drawn weights are used."""
    firsts, seconds, x, readout, targets = drawn
    s = len(x)
    first = [Dense(weights=firsts[:, b]) for b in range(blocks)]
    second = [Dense(weights=seconds[:, b]) for b in range(blocks)]
    norms = [_norm(s, variant) for _ in range(blocks + 1)]
    relu = ReLU()
    tape = []
    stream = np.empty((s, blocks))
    for b in range(blocks):
        if variant == "post-LN":
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
        stream[:, b] = (x**2).mean(axis=(1, 2))
    final = norms[blocks].forward(x) if variant != "post-LN" else None
    out = final.output if final is not None else x
    error = out @ readout - targets
    d = (error @ np.swapaxes(readout, -1, -2)) / TOKENS
    if final is not None:
        d = final.layer.backward(final, d).grad_input
    norm, passed = np.empty((s, blocks)), np.empty((s, blocks))
    for b in reversed(range(blocks)):
        rn, r3, r2, r1 = tape[b]
        if variant == "post-LN":
            d_sum = rn.layer.backward(rn, d).grad_input
            g3 = r3.layer.backward(r3, d_sum)
            g1 = r1.layer.backward(r1, relu.backward(r2, g3.grad_input).grad_input)
            d = d_sum + g1.grad_input
        else:
            g3 = r3.layer.backward(r3, d)
            g1 = r1.layer.backward(r1, relu.backward(r2, g3.grad_input).grad_input)
            d = d + rn.layer.backward(rn, g1.grad_input).grad_input
        w = g1.grads["weights"]
        norm[:, b] = np.sqrt((w.reshape(s, -1) ** 2).sum(axis=1))
        passed[:, b] = np.sqrt((d.reshape(s, -1) ** 2).sum(axis=1))
    return Profile(variant=variant, norm=norm, passed=passed, first_grad=w, stream=stream)


def depth_profiles(variant: str, depths=(4, 8, 16, 32), seeds=SEEDS) -> list[Profile]:
    """`gradient_profile` at each depth in `depths`, every depth on the same draw (that of the
    deepest network), so that a shallower network is the deeper one's first blocks, with the same
    tokens, read-out and targets."""
    for L in depths:
        _check(variant, L)
    drawn = _draw(seeds, max(depths))
    return [_profile(variant, drawn, int(L)) for L in depths]


def depth_sweep(variant: str, depths=(4, 8, 16, 32), seeds=SEEDS) -> np.ndarray:
    """(len(depths), len(seeds)): the length of the LAST block's first weight gradient at
    initialisation, for networks of each depth (`depth_profiles`). Xiong et al. 2020's Theorem 1
    bounds it by O(d sqrt(ln d / L)) under pre-LN and by a bound that does not fall with L under
    post-LN."""
    return np.array([p.norm[:, -1] for p in depth_profiles(variant, depths, seeds)])


def loss(variant: str, seeds=SEEDS, blocks: int = BLOCKS, first_weights=None) -> np.ndarray:
    """The loss per seed, written out with plain numpy (the finite-difference oracle for
    `gradient_profile`'s backward pass); `first_weights`, if given, replaces block 1's first
    dense weights (shape (S, WIDTH, 2 WIDTH))."""
    _check(variant, blocks)
    firsts, seconds, x, readout, targets = _draw(seeds, blocks)
    if first_weights is not None:
        firsts = firsts.copy()
        firsts[:, 0] = first_weights
    norms = [_norm(len(seeds), variant) for _ in range(blocks + 1)]
    for b in range(blocks):
        w1, w2 = firsts[:, b], seconds[:, b]
        if variant == "post-LN":
            x = norms[b].forward(x + np.maximum(x @ w1, 0) @ w2).output
        else:
            x = x + np.maximum(norms[b].forward(x).output @ w1, 0) @ w2
    if variant != "post-LN":
        x = norms[blocks].forward(x).output
    error = x @ readout - targets
    return 0.5 * (error**2).sum(axis=(1, 2)) / TOKENS


# --- Training the stacks: warm-up, DeepNorm and the output-normalised placements -------------

#: placements beyond `VARIANTS` that only `train` builds (each with layer norm, scale 1, shift 0)
#:   deepnorm: x <- LN(alpha x + F(x)), alpha = (2L)^(1/4), both dense layers of F scaled by
#:             beta = (8L)^(-1/4) at the start (Wang et al. 2022, the encoder-only constants of
#:             their released code, torchscale's `deepnorm` option)
#:   peri-LN:  x <- x + LN(F(LN(x))), one LN at the end (Kim et al. 2025; Gemma 2 and 3)
TRAINED = VARIANTS[:2] + ("deepnorm", "peri-LN")
#: Adam's constants (Vaswani et al. 2017's beta_2 = 0.98, as Xiong et al. trained)
ADAM = (0.9, 0.98, 1e-8)
#: the trained comparison's setting (tests/claims/test_ch09.py): Adam at TRAIN_RATE for
#: TRAIN_STEPS full-batch steps, with a linear warm-up over WARMUP steps where one is used
TRAIN_RATE = 1e-2
TRAIN_STEPS = 120
WARMUP = 50
#: a run "fits" when its last loss is below this fraction of its first
FITS = 0.1


def deepnorm_constants(blocks: int) -> tuple[float, float]:
    """DeepNorm's (alpha, beta) for a network of `blocks` residual blocks: alpha = (2L)^(1/4) scales
    the residual path, beta = (8L)^(-1/4) the sublayer's starting weights."""
    return (2.0 * blocks) ** 0.25, (8.0 * blocks) ** -0.25


@dataclass(frozen=True, eq=False)
class Training:
    """`loss` (steps + 1, S): the loss before each step and after the last; `stream` (steps + 1,
    S): the residual stream's mean squared size per feature after the last block, before the
    final normaliser (post-LN and DeepNorm: after the last block's LN); `largest` (steps + 1, S)
    the largest squared entry of that stream over the tokens, divided by the width's mean square
    (how far one feature stands out)."""

    variant: str
    loss: np.ndarray
    stream: np.ndarray
    largest: np.ndarray


def _step_pass(variant, firsts, seconds, x, readout, targets, alpha):
    """One forward and backward pass through the layers' own arithmetic: the loss (S,), the two
    weight gradients per block (lists), and the stream's size after the last block."""
    s, blocks = len(x), len(firsts)
    first = [Dense(weights=w) for w in firsts]
    second = [Dense(weights=w) for w in seconds]
    norms = [LayerNorm.create(WIDTH, stack=(s,)) for _ in range(2 * blocks + 1)]
    relu = ReLU()
    tape = []
    for b in range(blocks):
        if variant in ("post-LN", "deepnorm"):
            r1 = first[b].forward(x)
            r2 = relu.forward(r1.output)
            r3 = second[b].forward(r2.output)
            rn = norms[b].forward(alpha * x + r3.output)
            tape.append((rn, r3, r2, r1, None))
            x = rn.output
        else:
            rn = norms[b].forward(x)
            r1 = first[b].forward(rn.output)
            r2 = relu.forward(r1.output)
            r3 = second[b].forward(r2.output)
            ro = norms[blocks + 1 + b].forward(r3.output) if variant == "peri-LN" else None
            tape.append((rn, r3, r2, r1, ro))
            x = x + (ro.output if ro is not None else r3.output)
    stream = (x**2).mean(axis=(1, 2))
    largest = (x**2).max(axis=(1, 2)) / stream
    final = norms[blocks].forward(x) if variant in ("pre-LN", "peri-LN") else None
    out = final.output if final is not None else x
    error = out @ readout - targets
    loss = 0.5 * (error**2).sum(axis=(1, 2)) / TOKENS
    d = (error @ np.swapaxes(readout, -1, -2)) / TOKENS
    if final is not None:
        d = final.layer.backward(final, d).grad_input
    g_first, g_second = [None] * blocks, [None] * blocks
    for b in reversed(range(blocks)):
        rn, r3, r2, r1, ro = tape[b]
        if variant in ("post-LN", "deepnorm"):
            d_sum = rn.layer.backward(rn, d).grad_input
            g3 = r3.layer.backward(r3, d_sum)
            g1 = r1.layer.backward(r1, relu.backward(r2, g3.grad_input).grad_input)
            d = alpha * d_sum + g1.grad_input
        else:
            d_out = ro.layer.backward(ro, d).grad_input if ro is not None else d
            g3 = r3.layer.backward(r3, d_out)
            g1 = r1.layer.backward(r1, relu.backward(r2, g3.grad_input).grad_input)
            d = d + rn.layer.backward(rn, g1.grad_input).grad_input
        g_first[b], g_second[b] = g1.grads["weights"], g3.grads["weights"]
    return loss, g_first, g_second, stream, largest


def train(
    variant: str,
    seeds=SEEDS,
    blocks: int = BLOCKS,
    rate=TRAIN_RATE,
    warmup=0,
    steps: int = TRAIN_STEPS,
) -> Training:
    """Train every dense weight of the network with Adam (`ADAM`), full batch, to fit each seed's
    random targets through its fixed read-out (`_draw`; the normalisers' scale and shift stay 1
    and 0). `rate` and `warmup` may be one number or one per seed (runs with different settings
    side by side along the seed axis): the learning rate rises linearly from rate/warmup to `rate`
    over the first `warmup` steps, then stays. A run whose loss stops being finite keeps the
    infinite loss from then on."""
    if variant not in TRAINED:
        raise SettingError(f"variant: expected one of {TRAINED}, got {variant!r}")
    _check("pre-LN", blocks)
    firsts, seconds, x, readout, targets = _draw(seeds, blocks)
    s = len(x)
    alpha = 1.0
    if variant == "deepnorm":
        alpha, beta = deepnorm_constants(blocks)
        firsts, seconds = beta * firsts, beta * seconds
    rate = np.broadcast_to(np.asarray(rate, dtype=float), (s,))
    warmup = np.broadcast_to(np.asarray(warmup, dtype=float), (s,))
    params = [firsts[:, b] for b in range(blocks)] + [seconds[:, b] for b in range(blocks)]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    b1, b2, eps = ADAM
    losses, streams, largests = [], [], []
    alive = np.ones(s, dtype=bool)
    for t in range(steps + 1):
        with np.errstate(all="ignore"):
            loss, gf, gs, stream, largest = _step_pass(
                variant, params[:blocks], params[blocks:], x, readout, targets, alpha
            )
        alive &= np.isfinite(loss) & (loss < 1e6)
        losses.append(np.where(alive, loss, np.inf))
        streams.append(np.where(alive, stream, np.inf))
        largests.append(np.where(alive, largest, np.inf))
        if t == steps:
            break
        lr = rate * np.minimum(1.0, (t + 1) / np.maximum(warmup, 1.0))
        lr = np.where(alive, lr, 0.0)[:, None, None]
        for i, g in enumerate(gf + gs):
            g = np.where(alive[:, None, None], g, 0.0)
            m[i] = b1 * m[i] + (1 - b1) * g
            v[i] = b2 * v[i] + (1 - b2) * g**2
            hat = (m[i] / (1 - b1 ** (t + 1))) / (np.sqrt(v[i] / (1 - b2 ** (t + 1))) + eps)
            params[i] = params[i] - lr * hat
    return Training(
        variant=variant,
        loss=np.array(losses),
        stream=np.array(streams),
        largest=np.array(largests),
    )
