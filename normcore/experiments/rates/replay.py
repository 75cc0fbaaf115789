"""The reference program's arithmetic, replayed operation by operation, every sum in one order.

This module exists to measure how much of the reference program's table depends on the order
floats are added in, so its arithmetic order is the point and is kept bit for bit. That is why it
does not use normcore's layers (`trainer` does): a dense layer's matrix product goes through BLAS,
whose order of adding depends on the processor, and the batch layer's sums through numpy's
vectorised loops. Here, instead:

* every sum is taken term after term from a start of 0, in one stated order: ``'sequential'``
  (left to right, as Python 3.11's ``sum()`` adds floats) or ``'compensated'`` (Neumaier's
  compensated sum, as Python 3.12's ``sum()`` adds floats); the program's ``+=`` loops stay
  left to right in both;
* every other step is one elementwise operation, in the program's order;
* ``exp`` and ``log`` come from the C library, one value at a time (numpy's vectorised ones may
  round differently from CPU to CPU).

So no step depends on the machine: the replay gives the same bits everywhere. It runs without
any guard, through overflow and NaN, as the reference program does. Runs sit along a leading
axis; each run's arithmetic is exactly the one it has alone (tested).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...data.subscribers import init_weights
from ...errors import SettingError
from ...mode import EVAL, TRAIN
from .data import BATCH, EPOCHS, EPSILON, HIDDEN, orders, subscribers
from .trainer import Run


def _add_all(terms: np.ndarray, compensated: Any) -> np.ndarray:
    """Sum `terms` along axis 0, one term after another from a start of 0.

    Sequential: s = s + x (Python 3.11's ``sum()`` of floats). Compensated: Neumaier's running
    correction, summed the same way and added once at the end (Python 3.12's ``sum()``). Written
    with ``np.add.accumulate``, which adds in exactly that order (each partial sum is the one
    before plus the next term), so the same bits as the loop, without a Python loop.
    `compensated` is True, False, or one flag a run when axis 1 of `terms` is the runs."""
    start = np.zeros((1, *terms.shape[1:]))
    every = np.concatenate([start, terms])  # 0, x0, x1, ... (a contiguous copy)
    partial = np.add.accumulate(every, axis=0)  # 0, x0, x0 + x1, ...
    flags = np.asarray(compensated, dtype=bool)
    if not flags.any():
        return partial[-1]
    runs = slice(None) if flags.ndim == 0 else np.flatnonzero(flags)  # the compensated runs
    x, before, after = every[1:, runs], partial[:-1, runs], partial[1:, runs]
    first = np.abs(before) >= np.abs(x)  # Neumaier: the larger part loses the rounding error
    lost = (np.where(first, before, x) - after) + np.where(first, x, before)
    c = np.add.accumulate(np.concatenate([start[:, runs], lost]), axis=0)[-1]
    s = partial[-1].copy()
    s[runs] = np.where((c != 0) & np.isfinite(c), s[runs] + c, s[runs])
    return s


def _squash(z: np.ndarray) -> np.ndarray:
    """The reference program's logistic, term by term with the C library's exp."""
    out = []
    for v in np.ravel(z).tolist():
        if v >= 0:
            out.append(1.0 / (1.0 + math.exp(-v)) if v < 700 else 1.0)
        else:
            e = math.exp(v) if v > -700 else 0.0
            out.append(e / (1.0 + e))
    return np.array(out).reshape(np.shape(z))


def _logs(values: np.ndarray) -> np.ndarray:
    """The C library's natural log, one value at a time."""
    return np.array([math.log(v) for v in values.ravel().tolist()]).reshape(values.shape)


@dataclass(frozen=True, eq=False)
class OrderNet:
    """The reference program's weights as plain arrays, for one run or several side by side:
    w1 (..., 16, 12), b1 (..., 16), w2 (..., 16), b2 (...), and the running mean and divisor
    (..., 16) if it normalises; an input x (rows, 12) is shared by every run."""

    w1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: Any
    mean: np.ndarray | None
    divisor: np.ndarray | None
    eps: float
    compensated: Any  # True, False, or one flag a run

    def pre(self, x: np.ndarray) -> np.ndarray:
        """The hidden pre-activations (..., rows, 16): the 12 inputs summed in order, then the
        bias."""
        terms = x[:, None, :] * self.w1[..., None, :, :]  # (..., rows, 16, 12)
        return _add_all(np.moveaxis(terms, -1, 0), self.compensated) + self.b1[..., None, :]

    def forward(self, x: np.ndarray, stats: tuple[np.ndarray, np.ndarray] | None) -> tuple:
        """(pre-activations after the batch layer, batch mean, batch divisor, hidden outputs,
        probabilities); `stats` (mean, divisor) replaces the batch's own figures."""
        z = self.pre(x)
        mu = sd = None
        if self.mean is not None:
            n = z.shape[-2]
            if stats is None:
                mu = _add_all(np.moveaxis(z, -2, 0), self.compensated) / n
                centred = np.moveaxis((z - mu[..., None, :]) ** 2, -2, 0)
                sd = np.sqrt(_add_all(centred, self.compensated) / n + self.eps)
            else:
                mu, sd = stats
            z = (z - mu[..., None, :]) / sd[..., None, :]
        a = np.where(z > 0, z, 0.0)  # the program's rectifier: a NaN becomes 0
        summed = _add_all(np.moveaxis(a * self.w2[..., None, :], -1, 0), self.compensated)
        p = _squash(summed + np.asarray(self.b2)[..., None])
        return z, mu, sd, a, p

    # what `network.predict` and `network.dead_units` ask of a network
    def _answer(self, x: np.ndarray, mode: str) -> tuple:
        stats = None
        if mode != TRAIN and self.mean is not None:
            stats = (self.mean, self.divisor)
        with np.errstate(all="ignore"):
            return self.forward(x, stats)

    def hidden_activity(self, x: np.ndarray, mode: str = EVAL) -> np.ndarray:
        return self._answer(x, mode)[3]

    def probabilities(self, x: np.ndarray, mode: str = EVAL) -> np.ndarray:
        return self._answer(x, mode)[4]

    @property
    def nan_units(self) -> int:
        """Hidden units whose incoming weights or bias hold a NaN."""
        return int(np.sum(np.isnan(self.w1).any(axis=-1) | np.isnan(self.b1)))


def nan_units(run: Run) -> int:
    """Hidden units of a replayed run whose incoming weights hold a NaN."""
    return run.net.nan_units


def train_in_order(
    seed: int,
    rate: float,
    normalised: bool,
    *,
    summation: str = "sequential",
    epochs: int = EPOCHS,
    batch: int = BATCH,
    eps: float = EPSILON,
) -> Run:
    """The reference program's arithmetic for one run, operation by operation, with every sum
    in the order `summation` names ('sequential' or 'compensated'). The returned `Run.net`
    answers `predict` and `dead_units` like a `SubscriberNet`."""
    return train_in_order_many(
        [seed], [rate], normalised, summation=summation, epochs=epochs, batch=batch, eps=eps
    )[0]


def train_in_order_many(
    seeds: Sequence[int],
    rates: Sequence[float],
    normalised: bool,
    *,
    summation: str | Sequence[str] = "sequential",
    epochs: int = EPOCHS,
    batch: int = BATCH,
    eps: float = EPSILON,
) -> list[Run]:
    """`train_in_order` for the runs (seeds[k], rates[k]), side by side along a leading axis;
    `summation` is one order for every run or one a run.

    Every operation is elementwise or a sum in the stated order along one axis, so each run's
    arithmetic is exactly the one it has alone: running them together saves Python loops, not
    bits."""
    orders_of_adding = [summation] * len(seeds) if isinstance(summation, str) else list(summation)
    for order in orders_of_adding:
        if order not in ("sequential", "compensated"):
            raise SettingError(f"summation: expected 'sequential' or 'compensated', got {order!r}")
    if not len(seeds) == len(rates) == len(orders_of_adding):
        raise SettingError(
            f"seeds, rates and summations: expected one of each a run, got "
            f"{len(seeds)}, {len(rates)} and {len(orders_of_adding)}"
        )
    comp = np.array([order == "compensated" for order in orders_of_adding])
    with np.errstate(all="ignore"):  # overflow and NaN are what this replay is for
        return _replay(
            list(seeds),
            np.asarray(rates, dtype=np.float64),
            normalised,
            comp,
            epochs,
            batch,
            eps,
        )


def _replay(
    seeds: list[int],
    rates: np.ndarray,
    normalised: bool,
    comp: np.ndarray,
    epochs: int,
    batch: int,
    eps: float,
) -> list[Run]:
    starts = [init_weights(seed, [(12, HIDDEN), (HIDDEN, 1)]) for seed in seeds]
    w1 = np.stack([a[0][0].T for a in starts])  # (runs, 16, 12)
    b1 = np.stack([a[0][1] for a in starts])  # (runs, 16)
    w2 = np.stack([a[1][0][:, 0] for a in starts])  # (runs, 16)
    b2 = np.array([float(a[1][1][0]) for a in starts])  # (runs,)
    runs = len(seeds)
    run_mean = np.zeros((runs, HIDDEN)) if normalised else None
    run_dev = np.ones((runs, HIDDEN)) if normalised else None
    data = subscribers()
    x, y = np.asarray(data.x_train), np.asarray(data.y_train)
    losses = []
    for order in orders(epochs):
        total = np.zeros(runs)
        for start in range(0, len(order), batch):
            rows = order[start : start + batch]
            xb, yb, n = x[rows], y[rows], len(rows)
            net = OrderNet(w1, b1, w2, b2, run_mean, run_dev, eps, comp)
            z, mu, sd, a, p = net.forward(xb, None)  # z, a (runs, n, 16); p (runs, n)
            pc = np.minimum(np.maximum(p, 1e-12), 1 - 1e-12)
            terms = yb * _logs(pc) + (1 - yb) * _logs(1 - pc)
            # the program's row loop: loss = 0 - t0 - t1 - ..., in that order
            loss = np.subtract.accumulate(
                np.concatenate([np.zeros((runs, 1)), terms], axis=1), axis=1
            )[:, -1]
            d = pc - yb
            g2 = _add_all(((d[:, :, None] * a) / n).transpose(1, 0, 2), False)
            dz = d[:, :, None] * w2[:, None, :] * (z > 0)
            g2b = _add_all((d / n).T, False)
            if normalised:
                s1 = _add_all(dz.transpose(1, 0, 2), comp)[:, None, :]
                s2 = _add_all((dz * z).transpose(1, 0, 2), comp)[:, None, :]
                dz = (n * dz - s1 - z * s2) / (n * sd[:, None, :])
            step1 = dz[:, :, :, None] * xb[None, :, None, :] / n  # (runs, n, 16, 12)
            g1 = _add_all(np.where(dz[:, :, :, None] != 0, step1, 0.0).transpose(1, 0, 2, 3), False)
            g1b = _add_all(np.where(dz != 0, dz / n, 0.0).transpose(1, 0, 2), False)
            w1 = w1 - rates[:, None, None] * g1
            b1 = b1 - rates[:, None] * g1b
            w2 = w2 - rates[:, None] * g2
            b2 = b2 - rates * g2b
            if normalised:
                run_mean = 0.9 * run_mean + 0.1 * mu  # the program's literals (1 - 0.9 is not 0.1)
                run_dev = 0.9 * run_dev + 0.1 * sd
            total = total + (loss / n) * n
        losses.append(total / len(order))
    losses = np.array(losses)  # (epochs, runs)
    out = []
    for k, seed in enumerate(seeds):
        final = OrderNet(
            w1[k],
            b1[k],
            w2[k],
            b2[k],
            None if run_mean is None else run_mean[k],
            None if run_dev is None else run_dev[k],
            eps,
            bool(comp[k]),
        )
        out.append(Run(net=final, epoch_losses=losses[:, k], rate=float(rates[k]), seed=seed))
    return out
