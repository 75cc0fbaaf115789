"""The deep digits network in four versions, across seeds and learning rates, in one stack each.

For each version (plain, batch, layer, RMS) every pair (rate, seed) of `RATES` x `SEEDS` is one
stacked network: 9 networks trained together for `EPOCHS` epochs of mini-batches of `BATCH`
on the training rows of one split, scored on the held-out rows after every epoch. A rate
"trains" a network when its held-out accuracy at the end reaches `TRAINS`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..data.digits import load_digits, split_digits
from ..errors import SettingError
from . import deepnet

RATES = (0.1, 0.3, 1.0)
SEEDS = (0, 1, 2)
EPOCHS = 2
BATCH = 64
#: held-out accuracy at the end that counts as "trains" (five times chance, 0.1)
TRAINS = 0.5
HELD_OUT = 0.2
SPLIT_SEED = 0


def digits_data(split_seed: int = SPLIT_SEED) -> tuple[np.ndarray, ...]:
    """(x_train, y_train, x_held, y_held): pixels / 16, each pixel put in standard units by the
    training rows' own mean and deviation (a pixel that is always 0 there stays 0)."""
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
    """One version's runs: `accuracy` (len(RATES), len(SEEDS), EPOCHS + 1) held-out accuracy
    after each epoch; `diverged` (len(RATES), len(SEEDS)); `net` the trained stack, network
    ``r * len(SEEDS) + s`` being rate r and seed s (see `network`)."""

    version: str
    accuracy: np.ndarray
    diverged: np.ndarray
    net: deepnet.DeepNet

    def network(self, rate: float, seed: int) -> deepnet.DeepNet:
        """The trained network of one (rate, seed), alone."""
        return deepnet.pick(self.net, RATES.index(rate) * len(SEEDS) + SEEDS.index(seed))

    def networks(self, rate: float) -> deepnet.DeepNet:
        """The trained networks of every seed at one rate, as a stack in SEEDS order."""
        start = RATES.index(rate) * len(SEEDS)
        return deepnet.pick(self.net, slice(start, start + len(SEEDS)))

    @property
    def final(self) -> np.ndarray:
        return self.accuracy[..., -1]

    def largest_rate(self) -> np.ndarray:
        """Per seed, the largest rate in RATES whose run ends at TRAINS or above (0 if none)."""
        ok = (self.final >= TRAINS) & ~self.diverged
        rates = np.array(RATES)[:, None] * ok
        return rates.max(axis=0)

    def cell(self, i: int) -> str:
        """Rate ``RATES[i]`` as the chapter's table shows it: the mean final held-out accuracy
        (two decimals) when every seed trains; that of the seeds that train and how many do when
        some do; 'fails' when none does, 'diverges' when every run diverged. The accuracy of a
        run that fails without diverging is not shown: such a run ends wherever its last steps
        threw it, and a change in the last bit of the arithmetic moves it by hundredths."""
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < len(RATES):
            raise SettingError(f"i: expected a whole number from 0 to {len(RATES) - 1}, got {i!r}")
        ok = (self.final[i] >= TRAINS) & ~self.diverged[i]
        if ok.all():
            return f"{self.final[i].mean():.2f}"
        if ok.any():
            return f"{self.final[i][ok].mean():.2f} ({int(ok.sum())} of {ok.size} train)"
        return "diverges" if self.diverged[i].all() else "fails"

    def best_rate(self) -> float:
        """The rate with the best mean final accuracy over the seeds."""
        return float(RATES[int(np.argmax(self.final.mean(axis=1)))])


def sweep(version: str, data: tuple[np.ndarray, ...] | None = None) -> Sweep:
    """Train one version at every (rate, seed) in one stack."""
    data = digits_data() if data is None else data
    seeds = [s for _ in RATES for s in SEEDS]
    rates = np.repeat(np.array(RATES), len(SEEDS))
    run = deepnet.train(deepnet.build(version, seeds), data, rates, epochs=EPOCHS, batch=BATCH)
    shape = (len(RATES), len(SEEDS))
    return Sweep(
        version=version,
        accuracy=np.moveaxis(run.accuracy, 0, -1).reshape(*shape, EPOCHS + 1),
        diverged=run.diverged.reshape(shape),
        net=run.net,
    )


def sweep_all(data: tuple[np.ndarray, ...] | None = None) -> dict[str, Sweep]:
    """Every version's sweep, keyed by version, trained in turn in this process."""
    data = digits_data() if data is None else data
    return {version: sweep(version, data=data) for version in deepnet.VERSIONS}
