"""Training the subscriber network with normcore's layers: one batch, one run, many runs at once.

Training is `EPOCHS` epochs of plain descent on mini-batches of `BATCH` rows, in the order
`normcore.data.subscribers.batch_order` gives (the same order in every run). The gradients are
means over the batch: normcore's cross-entropy hands back (p - y) / rows, and the dense layers sum
it over the rows. One batch is `train_step`: the network's `Sequential` forward (training),
backward, step.

`train_many` trains several runs side by side (every array with a leading axis, one
entry per run), so one call per layer serves them all. Each run's arithmetic is the one it has
alone (tested: the same bits), so running them together saves time, not accuracy. Finished runs are
kept and
handed out again (a run is an immutable value), so the chapter's cells share them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...dense import Dense
from ...errors import NormcoreError, SettingError
from ...loss import Loss, binary_cross_entropy
from ...mode import TRAIN
from ...sequential import Sequential
from .data import BATCH, CLIP, EPOCHS, EPSILON, orders, subscribers
from .network import SubscriberNet, build_many, clipped_loss


def train_step(
    net: SubscriberNet, xb: np.ndarray, yb: np.ndarray, rate: Any, clip: float | None = CLIP
) -> tuple[SubscriberNet, Any]:
    """One mini-batch of plain descent: forward (training), backward, step.

    Args:
        net: the network (one run, or runs along a leading axis).
        xb: the batch's rows, (rows, 12), or (runs, rows, 12) for several runs.
        yb: their labels, (rows,) or (runs, rows).
        rate: the learning rate; for several runs, one number or one per run.
        clip: the clip of the reported loss (None: normcore's unclipped cross-entropy).

    Returns:
        The new network and the batch's loss before the step (a float, or one per run).
    """
    moved, logits, _ = _descend(net, xb, yb, rate)
    return moved, clipped_loss(logits, yb, clip)


def _descend(
    net: SubscriberNet, xb: np.ndarray, yb: np.ndarray, rate: Any
) -> tuple[SubscriberNet, np.ndarray, Loss]:
    """`train_step`, returning the batch's logits and normcore's (unclipped) loss instead."""
    layers = net.layers
    response = layers.forward(xb, TRAIN)
    logits = response.output[..., 0]
    loss = binary_cross_entropy(logits, yb, stack_axes=logits.ndim - 1)
    gradient = layers.backward(response, loss.grad[..., None])
    rates = np.asarray(rate, dtype=np.float64)
    # one rate for the stack, or one a run: `step` lines each up with its run's parameters
    return (
        SubscriberNet(layers.step(gradient, float(rates) if rates.ndim == 0 else rates)),
        logits,
        loss,
    )


@dataclass(frozen=True, eq=False)
class Run:
    """A trained network and its loss: `epoch_losses[t]` is epoch t's mean of batch losses
    weighted by batch size; `loss` the last of them."""

    net: Any
    epoch_losses: np.ndarray
    rate: float
    seed: int
    refused: str | None = None
    refused_at: tuple[int, int] | None = None
    unclipped_losses: np.ndarray | None = None  # the same epochs' losses without the clip

    def __post_init__(self) -> None:
        """Keep a read-only copy of each loss array (the trainer's table goes on changing)."""
        for name in ("epoch_losses", "unclipped_losses"):
            value = getattr(self, name)
            if value is not None:
                kept = np.array(value, dtype=np.float64)
                kept.setflags(write=False)
                object.__setattr__(self, name, kept)

    @property
    def unclipped_loss(self) -> float:
        """The last epoch's loss without the clip (NaN if refused or not recorded)."""
        if self.refused is not None or self.unclipped_losses is None:
            return float("nan")
        return float(self.unclipped_losses[-1])

    @property
    def loss(self) -> float:
        """The last epoch's loss; NaN if normcore refused to go on (see `refused`)."""
        if self.refused is not None:
            return float("nan")
        return float(self.epoch_losses[-1])


def train(
    seed: int,
    rate: float,
    normalised: bool,
    *,
    epochs: int = EPOCHS,
    batch: int = BATCH,
    eps: float = EPSILON,
    clip: float | None = CLIP,
    nudge: int = 0,
    pinned: bool = False,
) -> Run:
    """Train one network with normcore's layers (`nudge`: see `network.build`; `pinned`: see
    `train_many`).

    The loss reported is clipped at `clip` as the reference program reports it; the run also
    records each epoch's loss without the clip (`unclipped_losses`), from the same forward
    passes. If a layer refuses its input on the way (values so large their squares could
    overflow, or a step that overflows), training stops there: the returned run keeps the
    network as it was before that batch, `refused` holds the error's type and message and
    `refused_at` the (epoch, batch) it happened in, both counted from 0.
    """
    return train_many(
        [seed],
        [rate],
        normalised,
        nudges=[nudge],
        epochs=epochs,
        batch=batch,
        eps=eps,
        clip=clip,
        pinned=pinned,
    )[0]


# Runs already trained, by their settings: a Run is immutable, so it can be handed out again.
_TRAINED: dict[tuple, Run] = {}
_KEPT = 256


def train_many(
    seeds: Sequence[int],
    rates: Sequence[float],
    normalised: bool,
    *,
    nudges: Sequence[int] | None = None,
    epochs: int = EPOCHS,
    batch: int = BATCH,
    eps: float = EPSILON,
    clip: float | None = CLIP,
    pinned: bool = False,
) -> list[Run]:
    """`train` for the runs (seeds[k], rates[k], nudges[k]), side by side along a leading axis.

    Every run of one call has the batch layer or none does (`normalised`), and they share
    epsilon and clip; each has its own seed, learning rate and nudge. A run normcore refuses
    leaves the set of runs at the batch it is refused on, with what `train` would report for it
    alone;
    the others go on. Runs trained before with the same settings are not trained again.

    `pinned` (an intervention, for a normalised network only): after every step each hidden
    unit's incoming weights are rescaled to the length they started with, and the unit's bias
    and running statistics by the same factor (`pin_lengths`). Behind the batch layer that
    changes nothing the network computes (up to epsilon), in either mode; it removes only the
    growth of the weights, and with it the shrinking of the effective learning rate.
    """
    if pinned and not normalised:
        raise SettingError("pinned: the lengths are pinned only behind a batch layer")
    if len(seeds) != len(rates):
        raise SettingError(
            f"seeds and rates: expected one rate a seed, got {len(seeds)} and {len(rates)}"
        )
    nudges = [0] * len(seeds) if nudges is None else list(nudges)
    if len(nudges) != len(seeds):
        raise SettingError(f"nudges: expected one a seed, got {len(nudges)} for {len(seeds)}")
    keys = [
        (int(s), float(r), bool(normalised), int(k), epochs, batch, float(eps), clip)
        + ((True,) if pinned else ())
        for s, r, k in zip(seeds, rates, nudges, strict=True)
    ]
    runs = {k: _TRAINED[k] for k in keys if k in _TRAINED}
    missing = [k for k in dict.fromkeys(keys) if k not in runs]
    if missing:
        trained = _train_stack(
            [k[0] for k in missing],
            [k[1] for k in missing],
            normalised,
            [k[3] for k in missing],
            epochs,
            batch,
            eps,
            clip,
            pinned,
        )
        runs.update(zip(missing, trained, strict=True))
        if len(_TRAINED) + len(missing) > _KEPT:
            _TRAINED.clear()
        _TRAINED.update(zip(missing, trained, strict=True))
    return [runs[k] for k in keys]


def _train_stack(
    seeds: list[int],
    rates: list[float],
    normalised: bool,
    nudges: list[int],
    epochs: int,
    batch: int,
    eps: float,
    clip: float | None,
    pinned: bool = False,
) -> list[Run]:
    """The runs of `train_many`, trained together along a leading axis."""
    data = subscribers()
    x, y = data.x_train, data.y_train
    net = build_many(seeds, normalised, eps, nudges)
    start_lengths = np.sqrt(np.sum(np.asarray(net.hidden.weights) ** 2, axis=-2))
    rate = np.asarray(rates, dtype=np.float64)
    alive = list(range(len(seeds)))  # the runs still training, in the stack's order
    losses = np.zeros((epochs, len(seeds)))
    unclipped = np.zeros((epochs, len(seeds)))
    done: dict[int, Run] = {}
    for epoch, order in enumerate(orders(epochs)):
        total, total_unclipped = np.zeros(len(seeds)), np.zeros(len(seeds))
        for start in range(0, len(order), batch):
            rows = order[start : start + batch]
            xb, yb = x[rows], y[rows]
            while alive:  # the runs normcore refuses leave the stack, the others try again
                shape = (len(alive), *xb.shape)
                try:
                    moved, logits, loss = _descend(
                        net, np.broadcast_to(xb, shape), np.broadcast_to(yb, shape[:2]), rate[alive]
                    )
                    break
                except NormcoreError as exc:
                    refused = _refusals(net, xb, yb, rate[alive], exc)
                for p, message in refused.items():
                    k = alive[p]
                    done[k] = Run(
                        net=net.member(p),
                        epoch_losses=losses[:epoch, k],
                        rate=float(rates[k]),
                        seed=seeds[k],
                        refused=message,
                        refused_at=(epoch, start // batch),
                    )
                keep = [p for p in range(len(alive)) if p not in refused]
                alive = [alive[p] for p in keep]
                net = net.members(keep) if alive else net
            if not alive:
                return [done[k] for k in range(len(seeds))]
            net = pin_lengths(moved, start_lengths[alive]) if pinned else moved
            labels = np.broadcast_to(yb, (len(alive), len(yb)))
            total[alive] = total[alive] + clipped_loss(logits, labels, clip) * len(rows)
            total_unclipped[alive] = total_unclipped[alive] + loss.value * len(rows)
        losses[epoch] = total / len(order)
        unclipped[epoch] = total_unclipped / len(order)
    for p, k in enumerate(alive):
        done[k] = Run(
            net=net.member(p),
            epoch_losses=losses[:, k],
            rate=float(rates[k]),
            seed=seeds[k],
            unclipped_losses=unclipped[:, k],
        )
    return [done[k] for k in range(len(seeds))]


def pin_lengths(net: SubscriberNet, lengths: np.ndarray) -> SubscriberNet:
    """`net` (runs along a leading axis, normalised) with each hidden unit's incoming weights
    rescaled to
    `lengths` (runs, 16), and the unit's bias, running mean and running divisor multiplied by
    the same factor: behind the batch layer the same function, in training and evaluation mode
    (up to epsilon), with the weights' length held where `lengths` puts it."""
    if net.norm is None:
        raise SettingError("net: the lengths are pinned only behind a batch layer")
    hidden, norm = net.hidden, net.norm
    w = np.asarray(hidden.weights)
    factor = lengths / np.sqrt(np.sum(w**2, axis=-2))
    moved = Dense(w * factor[..., None, :], np.asarray(hidden.bias) * factor)
    spread = norm.spread_field
    rescaled = dataclasses.replace(
        norm,
        running_mean=np.asarray(norm.running_mean) * factor,
        **{spread: np.asarray(getattr(norm, spread)) * factor},
    )
    return SubscriberNet(Sequential((moved, rescaled, *net.layers.layers[2:])))


def _refusals(
    net: SubscriberNet, xb: np.ndarray, yb: np.ndarray, rates: np.ndarray, error: NormcoreError
) -> dict[int, str]:
    """Which runs refuse this batch when each takes it alone, with what error."""
    refused = {}
    for p, rate in enumerate(rates.tolist()):
        try:
            _descend(net.member(p), xb, yb, rate)
        except NormcoreError as exc:
            refused[p] = f"{type(exc).__name__}: {exc}"
    if not refused:  # the stack refused what no run refuses alone: not expected, so say so
        raise error
    return refused
