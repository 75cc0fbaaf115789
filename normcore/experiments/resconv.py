"""A deeper residual convnet on the 8 x 8 digits: where a normaliser matters at convergence.

The network (per run; independent runs along a leading axis)::

    image (1, 8, 8)
    -> Conv2d 1 -> C, 3 x 3, padding 1             -> (C, 8, 8) -> normaliser -> ReLU
    -> Conv2d C -> C, 3 x 3, stride 2, padding 1   -> (C, 4, 4) -> normaliser -> ReLU
    -> BLOCKS residual blocks at 4 x 4, each  h -> ReLU(h + branch(h)) with
       branch = Conv -> normaliser -> ReLU -> Conv -> normaliser  (the original ResNet's block)
    -> flatten (C * 16) -> Dense -> 10 -> softmax cross-entropy

Versions (`VERSIONS`): the normalisers of `convnet` ('none', 'batch', 'layer', 'group',
'ws-group'), and two that change only the start:

    'batch-zero'  batch norm whose scale γ starts at 0 in the last batch layer of every branch
                  (Goyal et al. 2017): every block starts as the identity
    'none-skip'   no normaliser, the last convolution of every branch starts at 0 (Fixup's zero
                  initialisation; SkipInit's α = 0 has the same effect at the start, De & Smith
                  2020): the unnormalised network with its residual branches shrunk by hand

Independent networks (seeds) run along one leading axis, laid out for the normalisers as in
`convnet`; each block is a `normcore.sequential.Residual` in the network's `Sequential`
(`ResNet.as_sequential`), and `convnet`'s `forward`, `gradients` and `step` serve it. A network
whose training loss passes `DIVERGED` is marked diverged and its parameters are held where they
were from that step on (the others keep training); `Training.diverged` says which.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any

import numpy as np

from ..conv import Conv2d, StandardisedConv2d
from ..dense import Dense
from ..errors import SettingError
from ..fold import fold_into_conv
from ..mode import EVAL, TRAIN
from ..sequential import Flatten, Residual, Sequential
from . import convnet as cn
from .descent import batches

VERSIONS = ("none", "none-skip", "batch", "batch-zero", "layer", "group", "ws-group")
CHANNELS = cn.CHANNELS
#: residual blocks at 4 x 4 (each two convolutions): with the stem, 2 + 2 * BLOCKS convolutions
BLOCKS = 3
BATCH = cn.BATCH
#: the rates a user would pick for plain SGD on a small image network
RATES = (0.03, 0.1, 0.3)
#: the training budget: EPOCHS passes over the 1,438 training images (22 steps of 64 each, 176 in
#: all); the batch versions stop improving within it (`converged` scores three epochs earlier too)
EPOCHS = 10
#: a training loss above this (ten times chance, 10 * ln 10) marks a run diverged
DIVERGED = 10 * np.log(10)
SEEDS = (0, 1)


def _norm(version: str, stack: int, per_device: int, side: int) -> Any:
    base = {"batch-zero": "batch", "none-skip": "none"}.get(version, version)
    return cn.make_norm(base, stack, per_device, side)


@dataclass(frozen=True, eq=False)
class ResNet(cn.ConvNet):
    """The residual networks (independent runs along a leading axis): `convs` (two stem
    convolutions, then two per residual block), `norms`
    aligned with them (None without a normaliser), the output layer and the setting (the
    fields of `convnet.ConvNet`)."""

    @property
    def blocks(self) -> int:
        return (len(self.convs) - 2) // 2

    def as_sequential(self) -> Sequential:
        """The network as one `Sequential`: the stem (convolution, normaliser in its layout if
        any, ReLU; twice), each block's `Residual` and ReLU, then `Flatten` and the output
        layer."""

        def unit(i: int) -> tuple[Any, ...]:
            return (self.convs[i], *cn.laid_out(self.norms[i]))

        stem = (*unit(0), self.relu, *unit(1), self.relu)
        blocks = (
            layer
            for b in range(self.blocks)
            for layer in (
                Residual(Sequential((*unit(2 + 2 * b), self.relu, *unit(3 + 2 * b)))),
                self.relu,
            )
        )
        return Sequential((*stem, *blocks, Flatten(2), self.output))


def build(
    version: str,
    seeds: Sequence[int] = SEEDS,
    per_device: int = BATCH,
    blocks: int = BLOCKS,
) -> ResNet:
    """One network per seed, along a leading axis in the order given; He-uniform kernels and output
    weights
    from ``np.random.default_rng(seed)`` (so a seed starts every version from the same weights,
    but for the zeroed ones), biases 0."""
    if version not in VERSIONS:
        raise SettingError(f"version: expected one of {VERSIONS}, got {version!r}")
    if not seeds:
        raise SettingError("seeds: expected at least one seed")
    if not isinstance(per_device, int) or per_device < 1 or BATCH % per_device:
        raise SettingError(f"per_device: expected a whole number dividing {BATCH}")
    if not isinstance(blocks, int) or blocks < 0:
        raise SettingError(f"blocks: expected a whole number >= 0, got {blocks!r}")
    n_convs = 2 + 2 * blocks
    kernels: list[list[np.ndarray]] = [[] for _ in range(n_convs)]
    out = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        for i in range(n_convs):
            c_in = 1 if i == 0 else CHANNELS
            kernels[i].append(Conv2d.create(c_in, CHANNELS, 3, rng, padding=1).weights)
        out.append(Dense.create(CHANNELS * 16, cn.CLASSES, rng).weights)
    kind = StandardisedConv2d if version == "ws-group" else Conv2d
    s = len(seeds)
    convs, norms = [], []
    for i in range(n_convs):
        w = np.stack(kernels[i])
        last_of_branch = i >= 2 and i % 2 == 1
        if version == "none-skip" and last_of_branch:
            w = np.zeros_like(w)
        convs.append(kind(weights=w, padding=1, stride=2 if i == 1 else 1))
        norm = _norm(version, s, per_device, cn.SIDE if i == 0 else cn.SIDE // 2)
        if version == "batch-zero" and last_of_branch:
            norm = dataclasses.replace(norm, scale=np.zeros_like(norm.scale))
        norms.append(norm)
    return ResNet(tuple(convs), tuple(norms), Dense(weights=np.stack(out)), version, per_device)


#: a network's forward pass, its gradients and its step are `convnet`'s (through `as_sequential`)
forward = cn.forward
gradients = cn.gradients
step = cn.step


def join(nets: Sequence[ResNet]) -> ResNet:
    """Networks without normalisers (versions 'none' and 'none-skip') side by side along one
    leading axis,
    in the order given: the same networks, trained in one pass per step."""
    if any(n is not None for net in nets for n in net.norms):
        raise SettingError("nets: expected networks without normalisers")

    def cat(layers: list[Any]) -> Any:
        return dataclasses.replace(
            layers[0],
            weights=np.concatenate([c.weights for c in layers]),
            bias=np.concatenate([c.bias for c in layers]),
        )

    first = nets[0]
    convs = tuple(cat([n.convs[i] for n in nets]) for i in range(len(first.convs)))
    return dataclasses.replace(
        first, convs=convs, output=cat([n.output for n in nets]), version="none"
    )


def _held(new: Any, old: Any, alive: np.ndarray) -> Any:
    """`new` where `alive` (S,), `old` elsewhere, field by field (a GroupNorm's parameters run
    over S * C channels)."""
    if new is None:
        return None
    s = alive.shape[0]
    changes = {}
    for f in dataclasses.fields(new):
        a, b = getattr(new, f.name), getattr(old, f.name)
        if not isinstance(a, np.ndarray) or a.ndim == 0:
            continue
        if a.shape[0] == s:
            mask = alive.reshape((s,) + (1,) * (a.ndim - 1))
            changes[f.name] = np.where(mask, a, b)
        elif a.shape[0] % s == 0:
            mask = np.repeat(alive, a.shape[0] // s).reshape((-1,) + (1,) * (a.ndim - 1))
            changes[f.name] = np.where(mask, a, b)
    return dataclasses.replace(new, **changes)


def hold(new: ResNet, old: ResNet, alive: np.ndarray) -> ResNet:
    """`new` for the networks that are `alive`, `old` for the others."""
    return dataclasses.replace(
        new,
        convs=tuple(_held(a, b, alive) for a, b in zip(new.convs, old.convs, strict=True)),
        norms=tuple(_held(a, b, alive) for a, b in zip(new.norms, old.norms, strict=True)),
        output=_held(new.output, old.output, alive),
    )


def accuracy(net: ResNet, x: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Share of images classified right in evaluation mode, per network (S,)."""
    _, logits = forward(net, x, EVAL)
    return np.mean(np.argmax(logits, axis=-1) == labels, axis=-1)


@dataclass(frozen=True, eq=False)
class Training:
    """What `train` recorded: the trained networks, `loss` (steps, S), `accuracy` (scored epochs, S)
    on the held-out images (evaluation mode), and `diverged` (S,)."""

    net: ResNet
    loss: np.ndarray
    accuracy: np.ndarray
    diverged: np.ndarray

    @property
    def final(self) -> np.ndarray:
        """Held-out accuracy at the end of training (S,)."""
        return self.accuracy[-1]


def train(
    net: ResNet,
    data: tuple[np.ndarray, ...],
    rate: Any,
    epochs: int = EPOCHS,
    order_seed: int = 0,
    progress: Any = None,
    scored: Sequence[int] | None = None,
) -> Training:
    """Mini-batch SGD, BATCH images a step, for `epochs` passes over ``data = (x_train, y_train,
    x_held, y_held)`` (the batches as `convnet.train` draws them); `rate` one number or one per
    network. Held-out accuracy is measured after each epoch of `scored` (default every
    epoch; the last is always scored). `progress`, if given, is called with the number of epochs
    done after each one."""
    scored = set(range(1, epochs + 1) if scored is None else scored) | {epochs}
    x, y, x_held, y_held = data
    per_epoch = len(y) // BATCH
    rows = islice(batches(len(y), BATCH, np.random.default_rng(order_seed)), epochs * per_epoch)
    alive = np.ones(net.size, dtype=bool)
    losses, accuracies = [], []
    for k, r in enumerate(rows, start=1):
        loss, grads = gradients(net, x[r], y[r])
        losses.append(loss)
        alive &= np.isfinite(loss) & (loss < DIVERGED)
        new = step(net, grads, rate)
        net = new if alive.all() else hold(new, net, alive)
        if k % per_epoch == 0:
            if k // per_epoch in scored:
                accuracies.append(accuracy(net, x_held, y_held))
            if progress is not None:
                progress(k // per_epoch)
    return Training(net, np.array(losses), np.array(accuracies), ~alive)


# -- after training --------------------------------------------------------------------------
def precise(net: ResNet, x: np.ndarray) -> ResNet:
    """`net` (a batch version) with every batch layer's running statistics replaced by the
    statistics of the images `x` at the final weights, layer by layer (Wu & Johnson 2021's precise
    statistics; with the weights untouched, AdaBN's re-estimation, Li et al. 2016, when `x` comes
    from a new domain)."""
    if not net.version.startswith("batch"):
        raise SettingError(f"net: expected a batch version, got {net.version!r}")
    rebuilt = list(net.norms)
    probe = dataclasses.replace(net)

    def unit(i: int, a: np.ndarray) -> np.ndarray:
        a = net.convs[i].forward(a).output
        rows = cn._batch_rows(a)
        norm = dataclasses.replace(
            net.norms[i],
            running_mean=rows.mean(axis=1),
            running_var=rows.var(axis=1),
            running_divisor=None,
        )
        rebuilt[i] = norm
        return cn.from_layout(norm, norm.forward(rows).output, a.shape)

    relu = probe.relu
    a = np.broadcast_to(x, (net.size, *x.shape))
    for i in (0, 1):
        a = relu.forward(unit(i, a)).output
    for b in range(net.blocks):
        h = relu.forward(unit(2 + 2 * b, a)).output
        a = relu.forward(a + unit(3 + 2 * b, h)).output
    return dataclasses.replace(net, norms=tuple(rebuilt))


def folded(net: ResNet) -> ResNet:
    """`net` (a batch version) with each batch layer folded into the convolution before it."""
    if not net.version.startswith("batch"):
        raise SettingError(f"net: expected a batch version, got {net.version!r}")
    convs = tuple(fold_into_conv(c, n) for c, n in zip(net.convs, net.norms, strict=True))
    return dataclasses.replace(net, convs=convs, norms=(None,) * len(convs), version="none")


def fold_gap(net: ResNet, x: np.ndarray) -> np.ndarray:
    """Per network, the largest difference of the logits between `net` and its folded
    form over the images `x`."""
    gap = np.abs(forward(folded(net), x)[1] - forward(net, x)[1])
    return gap.max(axis=(1, 2))


def branch_ratio(net: ResNet, x: np.ndarray) -> np.ndarray:
    """At the current weights, training mode on the images `x`: for each block, the branch's
    output size over the skip's, root mean square over everything (blocks, S)."""
    response = net.as_sequential().forward(np.broadcast_to(x, (net.size, *x.shape)), TRAIN)
    out = []
    for block in (r for r in response.parts if isinstance(r.layer, Residual)):
        h, a = block.parts[0].output, block.input
        out.append(np.sqrt(np.mean(h**2, axis=(1, 2, 3, 4)) / np.mean(a**2, axis=(1, 2, 3, 4))))
    return np.array(out)


# -- the chapter's runs to convergence ------------------------------------------------------
#: the two-layer convnet's budget when trained to convergence (220 steps of 64 images)
SMALL_EPOCHS = 10
#: the rate of every run here: the chapter's (and a user's usual pick for plain SGD)
RATE = cn.RATE
#: the two-layer convnet's versions trained to convergence
SMALL_VERSIONS = ("none", "batch")
#: a lower rate, at which the unnormalised residual network also trains
LOW_RATE = 0.1
#: the shifted tasks of the fine-tune: the digits fainter (an affine change of every pixel, which
#: per-channel statistics can undo) and inverted (every pixel negated: the sign of each
#: channel's response flips, which dividing by a positive deviation cannot undo)
SHIFTS = ("fainter", "inverted")


def shifted(x: np.ndarray, shift: str) -> np.ndarray:
    """The images `x` under one of SHIFTS."""
    if shift == "fainter":
        return cn.fainter(x)
    if shift == "inverted":
        return -x
    if shift == "none":
        return x
    raise SettingError(f"shift: expected one of {SHIFTS} or 'none', got {shift!r}")


#: the residual runs of `converged`: (name, version, images a device, rate); the unnormalised
#: ones train side by side in one stack
RUNS = (
    ("none", "none", BATCH, RATE),
    ("skip", "none-skip", BATCH, RATE),
    ("batch", "batch", BATCH, RATE),
    ("batch_2", "batch", 2, RATE),
    ("ws", "ws-group", BATCH, RATE),
)
#: the epochs scored: three before the end (is it still improving?) and the end
SCORED = (EPOCHS - 3, EPOCHS)


def _residual_runs(data: tuple, seeds: tuple, say: Any) -> dict[str, Training]:
    s = len(seeds)
    plain = [r for r in RUNS if r[1].startswith("none")]
    joined = join([build(v, seeds) for _, v, _, _ in plain])
    rates = np.concatenate([np.full(s, rate) for *_, rate in plain])
    run = train(joined, data, rates, scored=SCORED)
    out = {}
    for k, (name, *_rest) in enumerate(plain):
        part = slice(k * s, (k + 1) * s)
        out[name] = Training(None, run.loss[:, part], run.accuracy[:, part], run.diverged[part])
    say("residual, no normaliser")
    for name, version, per_device, rate in RUNS:
        if not version.startswith("none"):
            out[name] = train(
                build(version, seeds, per_device=per_device), data, rate, scored=SCORED
            )
            say(f"residual {name}")
    return out


def converged(seeds: Sequence[int] = SEEDS, progress: Any = None) -> dict[str, np.ndarray]:
    """Every figure chapter 10 reports at convergence, one entry per seed (S,) unless named:

    - ``small_{none,batch}``: the chapter's two-layer convnet after SMALL_EPOCHS epochs at
      RATE, held-out accuracy; ``small_batch_short`` after the chapter's 8 steps (speed);
    - ``res_{name}`` for each of RUNS: the residual network after EPOCHS epochs, held-out
      accuracy at the end; ``res_{name}_earlier`` three epochs before the end;
      ``res_{name}_diverged`` 1 where the run diverged;
    - ``res_batch_precise``, ``res_batch_2_precise``: those runs with their running statistics
      recomputed on the first `convnet.SAMPLE` training images; ``res_batch_fold``,
      ``res_batch_2_fold``: the largest logit change from folding every batch layer;
    - ``branch_{none,batch}`` (BLOCKS, S): each block's branch over its skip at the start;
    - ``tune_{shift}_{way}`` for shift in ('none', *SHIFTS) and way in ('before', 'adabn',
      'train', 'eval'): the two-layer batch convnet (the SMALL_EPOCHS run) on the shifted
      held-out images before fine-tuning, with its running statistics recomputed on the shifted
      training images and no weight step (AdaBN), and after `convnet.fine_tune` with its batch
      layers in training mode or in evaluation mode (running statistics held fixed).

    Several minutes on one core for 22 seeds; `progress` (if given) is called with a word after
    each run."""
    seeds = tuple(seeds)
    data = cn.digits_images()
    x, y, x_held, y_held = data
    per_epoch = len(y) // BATCH
    say = progress or (lambda _word: None)
    out: dict[str, np.ndarray] = {}
    small_net = None
    for v in SMALL_VERSIONS:
        run = cn.train(cn.build(v, seeds), data, steps=SMALL_EPOCHS * per_epoch)
        out[f"small_{v}"] = run.accuracy
        if v == "batch":
            small_net = run.net
            out["small_batch_short"] = cn.train(cn.build(v, seeds), data).accuracy
        say(f"small {v}")
    sample = x[: cn.SAMPLE]
    runs = _residual_runs(data, seeds, say)
    for name, version, _, _ in RUNS:
        run = runs[name]
        out[f"res_{name}"] = run.final
        out[f"res_{name}_earlier"] = run.accuracy[0]
        out[f"res_{name}_diverged"] = run.diverged.astype(float)
        if version == "batch":
            out[f"res_{name}_precise"] = accuracy(precise(run.net, sample), x_held, y_held)
            out[f"res_{name}_fold"] = fold_gap(run.net, x_held)
    for v in ("none", "batch"):
        out[f"branch_{v}"] = branch_ratio(build(v, seeds), x[:BATCH])
    assert small_net is not None
    for shift in ("none", *SHIFTS):
        xs, held = shifted(x, shift), shifted(x_held, shift)
        out[f"tune_{shift}_before"] = cn.accuracy(small_net, held, y_held)
        out[f"tune_{shift}_adabn"] = cn.accuracy(
            cn.precise(small_net, xs[: cn.SAMPLE]), held, y_held
        )
        for way, mode in (("train", TRAIN), ("eval", EVAL)):
            tuned = cn.fine_tune(small_net, xs, y, mode)
            out[f"tune_{shift}_{way}"] = cn.accuracy(tuned, held, y_held)
        say(f"fine-tune {shift}")
    return out


__all__ = [
    "BLOCKS",
    "EPOCHS",
    "RATES",
    "VERSIONS",
    "ResNet",
    "Training",
    "accuracy",
    "branch_ratio",
    "build",
    "converged",
    "fold_gap",
    "folded",
    "forward",
    "gradients",
    "hold",
    "precise",
    "step",
    "train",
]
