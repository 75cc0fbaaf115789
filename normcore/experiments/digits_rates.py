"""The deep digits network in four versions, across seeds and learning rates, each version in one
call.

For each version (plain, batch, layer, RMS) every pair (rate, seed) of `RATES` x `SEEDS` is one
network on a leading axis of runs: 9 networks trained together for `EPOCHS` epochs of mini-batches
of `BATCH` on the training rows of one split, scored on the held-out rows after every epoch. A rate
"trains" a network when its held-out accuracy at the end reaches `TRAINS`. Two epochs measure the
speed of training, not where it ends (tests/claims/test_ch08.py trains for ten as well).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..data.digits import load_digits, split_digits
from ..errors import SettingError
from . import deepnet

RATES = (0.1, 0.3, 1.0)
SEEDS = (0, 1)
EPOCHS = 2
BATCH = 64
#: held-out accuracy after the epochs that counts as "trains". The final accuracies of the claims
#: suite's fresh runs (four versions, rates 0.1 to 10) spread continuously from chance up; the
#: widest gap between 0.2 and 0.65 runs from about 0.42 to 0.46, and the line sits in it, so that
#: no fresh run lies within TRAINS_MARGIN of it (tests/claims/test_ch08.py holds this).
TRAINS = 0.44
TRAINS_MARGIN = 0.02
#: the claims suite's long runs (tests/claims/test_ch08.py): epochs, and how close to the batch
#: network's accuracy counts as "close"; and the factor by which the batch network's largest rate
#: is compared with the plain network's
LONG_EPOCHS = 10
CLOSE = 0.03
TENFOLD = 10
HELD_OUT = 0.2
SPLIT_SEED = 0


def digits_data(split_seed: int = SPLIT_SEED) -> tuple[np.ndarray, ...]:
    """(x_train, y_train, x_held, y_held): pixels / 16, each pixel put in standard units by the
    training rows' own mean and standard deviation (a pixel that is always 0 there stays 0)."""
    digits = load_digits()
    train, held = split_digits(HELD_OUT, split_seed)
    x = digits.scaled
    mean = x[train].mean(axis=0)
    deviation = x[train].std(axis=0)
    deviation = np.where(deviation > 0, deviation, 1.0)
    x = (x - mean) / deviation
    return x[train], digits.labels[train], x[held], digits.labels[held]


@dataclass(frozen=True, eq=False)
class Sweep:
    """One version's runs: `accuracy` (len(rates), len(seeds), epochs + 1) held-out accuracy
    after each epoch (index 0 before training); `diverged` (len(rates), len(seeds)); `net` the
    trained networks, network ``r * len(seeds) + s`` being rate r and seed s (see `network`).
    `rates` and `seeds` default to the chapter's RATES and SEEDS; `kept` holds every network
    before each step asked for, with that step's rows (`deepnet.Training.kept`)."""

    version: str
    accuracy: np.ndarray
    diverged: np.ndarray
    net: deepnet.DeepNet
    rates: tuple[float, ...] = RATES
    seeds: tuple[int, ...] = SEEDS
    kept: dict[int, tuple[deepnet.DeepNet, np.ndarray]] = field(default_factory=dict)

    def network(self, rate: float, seed: int) -> deepnet.DeepNet:
        """The trained network of one (rate, seed), alone."""
        return deepnet.pick(
            self.net, self.rates.index(rate) * len(self.seeds) + self.seeds.index(seed)
        )

    def networks(self, rate: float) -> deepnet.DeepNet:
        """The trained networks of every seed at one rate, along a leading axis in seeds order."""
        start = self.rates.index(rate) * len(self.seeds)
        return deepnet.pick(self.net, slice(start, start + len(self.seeds)))

    @property
    def final(self) -> np.ndarray:
        return self.accuracy[..., -1]

    def trains(self) -> np.ndarray:
        """(len(rates), len(seeds)): True where a run ends at TRAINS or above without
        diverging."""
        return (self.final >= TRAINS) & ~self.diverged

    def largest_rate(self) -> np.ndarray:
        """Per seed, the largest rate in `rates` whose run ends at TRAINS or above (0 if none)."""
        rates = np.array(self.rates)[:, None] * self.trains()
        return rates.max(axis=0)

    def cell(self, i: int) -> str:
        """Rate ``rates[i]`` as the chapter's table shows it: the mean final held-out accuracy
        over every seed (two decimals) when every seed trains; how many seeds train ('2 of 3
        train') when only some do; 'fails' when none does, 'diverges' when every run diverged.
        No accuracy is shown unless every seed trains: a run that fails without diverging ends
        wherever its last steps threw it, and a change in the last bit of the arithmetic moves it
        by hundredths, so a mean that includes one would not hold on another machine."""
        n = len(self.rates)
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < n:
            raise SettingError(f"i: expected a whole number from 0 to {n - 1}, got {i!r}")
        ok = self.trains()[i]
        if ok.all():
            return f"{self.final[i].mean():.2f}"
        if ok.any():
            return f"{int(ok.sum())} of {ok.size} train"
        return "diverges" if self.diverged[i].all() else "fails"

    def best_rate(self) -> float:
        """The rate with the best mean final accuracy over every seed (the one definition of
        "best rate" the chapter uses)."""
        return float(self.rates[int(np.argmax(self.final.mean(axis=1)))])


def sweep(
    version: str,
    data: tuple[np.ndarray, ...] | None = None,
    rates: tuple[float, ...] = RATES,
    seeds: tuple[int, ...] = SEEDS,
    epochs: int = EPOCHS,
    order_seed: int = 0,
    keep: tuple[int, ...] = (),
) -> Sweep:
    """Train one version at every (rate, seed) in one call, keeping the networks before each step
    of `keep` (0 = before the first)."""
    data = digits_data() if data is None else data
    rates, seeds = tuple(float(r) for r in rates), tuple(int(s) for s in seeds)
    if not rates or not seeds:
        raise SettingError("rates, seeds: expected at least one of each")
    stacked_seeds = [s for _ in rates for s in seeds]
    stacked_rates = np.repeat(np.array(rates), len(seeds))
    run = deepnet.train(
        deepnet.build(version, stacked_seeds),
        data,
        stacked_rates,
        epochs=epochs,
        batch=BATCH,
        order_seed=order_seed,
        keep=keep,
    )
    shape = (len(rates), len(seeds))
    return Sweep(
        version=version,
        accuracy=np.moveaxis(run.accuracy, 0, -1).reshape(*shape, epochs + 1),
        diverged=run.diverged.reshape(shape),
        net=run.net,
        rates=rates,
        seeds=seeds,
        kept=run.kept,
    )


def sweep_all(
    data: tuple[np.ndarray, ...] | None = None, keep: tuple[int, ...] = ()
) -> dict[str, Sweep]:
    """Every version's sweep, keyed by version, trained in turn in this process (each keeping
    the steps of `keep`, as `sweep`)."""
    data = digits_data() if data is None else data
    sweeps = [sweep(v, data, keep=keep) for v in deepnet.VERSIONS]
    return dict(zip(deepnet.VERSIONS, sweeps, strict=True))
