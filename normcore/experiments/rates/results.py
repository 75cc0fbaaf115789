"""The rate sweep: every (batch layer or none, learning rate) setting, two runs each.

For each run: the last epoch's training loss, the test accuracy in evaluation mode by the running
statistics, and the dead units (hidden units at zero on every training row). `sweep` trains each
family (plain, normalised) as independent runs along a leading axis with normcore's layers
(`trainer.train_many`), or replays
it in a stated order of adding (`replay.train_in_order_many`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ...errors import SettingError
from .data import CLIP, EPSILON, RATES, RUN_SEEDS, SENSITIVE, subscribers
from .network import accuracy, dead_units, predict
from .replay import train_in_order_many
from .trainer import Run, train_many

TRAINERS = ("normcore", "sequential", "compensated")
NUDGES = (-1, 1)


@dataclass(frozen=True)
class SweepRow:
    """One (normalisation, rate) setting, one entry per run. A run normcore refused to finish
    has NaN loss and test accuracy, dead units -1, and its error in `refused`."""

    normalised: bool
    rate: float
    loss: tuple[float, ...]
    test: tuple[float, ...]
    dead: tuple[int, ...]
    refused: tuple[str | None, ...] = ()
    runs: tuple[Run, ...] = dataclasses.field(default=(), compare=False, repr=False)
    # for a chaotic setting: each run again from starting weights nudged by each of `NUDGES`
    # units in the last place (run 1 nudged down, up, then run 2 ...); empty otherwise
    nudged: tuple[Run, ...] = dataclasses.field(default=(), compare=False, repr=False)

    @property
    def sensitive(self) -> bool:
        """A row whose losses and test accuracies change with the last bit of any sum
        (see `SENSITIVE`)."""
        return (self.normalised, self.rate) in SENSITIVE

    def column(self, name: str) -> tuple[float, ...]:
        """'loss', 'test' or 'dead', one entry per run."""
        return getattr(self, name)


def sweep(
    rates: Sequence[float] = RATES,
    seeds: Sequence[int] = RUN_SEEDS,
    *,
    normalised: Sequence[bool] = (False, True),
    eps: float = EPSILON,
    clip: float | None = CLIP,
    trainer: str = "normcore",
    extra_rates: Mapping[bool, Sequence[float]] | None = None,
) -> list[SweepRow]:
    """Every (normalisation, rate) setting, one run a seed: final loss, test accuracy, dead
    units; the families in the order of `normalised` (plain first by default), rates in the
    order given.

    ``trainer='normcore'`` trains with normcore's layers, each family as one set of runs along a
    leading axis, and in the
    same set each run of a chaotic setting (`SENSITIVE`) twice more, from starting weights
    nudged down and up by one unit in the last place (`SweepRow.nudged`: its spread);
    ``'sequential'`` or ``'compensated'`` replays the reference program's arithmetic in that
    order of adding (`replay.train_in_order_many`; the clip is then the program's own).

    `extra_rates` (normcore's layers only) names, per family, further rates to train in the
    same set, one run a seed each, without reporting them in the rows: a set costs about
    the same whatever its size, so a later `stable_bracket` or `train` asking for those runs
    finds them already trained (`train_many` keeps finished runs) instead of training a set
    of its own."""
    if trainer not in TRAINERS:
        raise SettingError(f"trainer: expected one of {TRAINERS}, got {trainer!r}")
    extra = dict(extra_rates or {})
    if extra and trainer != "normcore":
        raise SettingError(
            f"extra_rates: only normcore's layers keep trained runs, got trainer {trainer!r}"
        )
    for more in extra.values():
        if any(not float(r) > 0 for r in more):
            raise SettingError(f"extra_rates: expected positive rates, got {list(more)}")
    data = subscribers()
    rows = []
    for family in normalised:
        settings = [(s, r, 0) for r in rates for s in seeds]
        if trainer == "normcore":  # each run of a chaotic setting again, nudged down and up
            chaotic = [r for r in rates if (bool(family), float(r)) in SENSITIVE]
            settings += [(s, r, k) for r in chaotic for s in seeds for k in NUDGES]
            settings += [(s, float(r), 0) for r in extra.get(bool(family), ()) for s in seeds]
        all_seeds, all_rates, nudges = (list(column) for column in zip(*settings, strict=True))
        if trainer == "normcore":
            flat = train_many(all_seeds, all_rates, family, nudges=nudges, eps=eps, clip=clip)
        else:
            flat = train_in_order_many(all_seeds, all_rates, family, summation=trainer, eps=eps)
        for k, rate in enumerate(rates):
            runs = flat[k * len(seeds) : (k + 1) * len(seeds)]
            nudged = [
                run for (_, r, n), run in zip(settings, flat, strict=True) if n != 0 and r == rate
            ]
            rows.append(
                SweepRow(
                    normalised=bool(family),
                    rate=float(rate),
                    loss=tuple(r.loss for r in runs),
                    test=tuple(
                        float("nan")
                        if r.refused
                        else accuracy(predict(r.net, data.x_test), data.y_test)
                        for r in runs
                    ),
                    dead=tuple(-1 if r.refused else dead_units(r.net) for r in runs),
                    refused=tuple(r.refused for r in runs),
                    runs=tuple(runs),
                    nudged=tuple(nudged),
                )
            )
    return rows


def largest_stable_rate(rows: Sequence[SweepRow], normalised: bool, limit: float = 1.0) -> float:
    """The largest rate whose runs all end with a training loss under `limit`."""
    ok = [r.rate for r in rows if r.normalised == normalised and max(r.loss) < limit]
    return max(ok) if ok else float("nan")


@dataclass(frozen=True)
class Bracket:
    """Where the largest stable rate of one family lies on a grid: `last_stable` is the largest
    grid rate below which every grid rate (and itself) had all runs end under `limit`;
    `first_unstable` the next grid rate (None if every rate was stable). `losses` (rates, runs):
    the final losses, NaN for a run normcore refused to finish."""

    normalised: bool
    rates: tuple[float, ...]
    losses: np.ndarray
    limit: float
    last_stable: float | None
    first_unstable: float | None


def stable_bracket(
    rates: Sequence[float],
    normalised: bool,
    seeds: Sequence[int] = RUN_SEEDS,
    limit: float = 1.0,
) -> Bracket:
    """Train every (rate, seed) pair of an increasing grid along one leading axis and bracket the
    largest
    stable rate: stable means every run of that rate ends with a training loss under `limit`."""
    rates = tuple(float(r) for r in rates)
    if list(rates) != sorted(set(rates)) or not rates or rates[0] <= 0:
        raise SettingError(f"rates: expected an increasing grid of positive rates, got {rates}")
    pairs = [(s, r) for r in rates for s in seeds]
    runs = train_many([s for s, _ in pairs], [r for _, r in pairs], normalised)
    losses = np.array([r.loss for r in runs], dtype=float).reshape(len(rates), len(seeds))
    stable = np.all(losses < limit, axis=1)  # NaN (refused) counts as unstable
    first_bad = int(np.argmin(stable)) if not stable.all() else len(rates)
    return Bracket(
        normalised=bool(normalised),
        rates=rates,
        losses=losses,
        limit=float(limit),
        last_stable=rates[first_bad - 1] if first_bad > 0 else None,
        first_unstable=rates[first_bad] if first_bad < len(rates) else None,
    )
