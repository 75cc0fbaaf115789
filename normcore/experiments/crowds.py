"""Chapter 6's comparison on other people: fresh crowds and a population from the crowd's generator.

The chapter's 25 people come from a generator, :func:`normcore.data.make_crowd.generate`, whose
seed ``CROWD_SEED`` reproduces the shipped crowd exactly. Other seeds give other crowds of 25
people like these, and many of them together give a population sample. So the comparison can be
re-run where its own uncertainty lies: on other people.

* :func:`crowd` draws one crowd of 25 (features unscaled, labels 0.0/1.0).
* :func:`population` draws a large sample of people from the same generator (crowds of 25 from
  seeds of its own, put together).
* :func:`fresh_crowds` runs the chapter's protocol (the seeds x 5 folds of every variant, 200
  full-batch epochs) on each of many crowds, every crowd's runs along one leading axis
  with the others, and scores every trained run on its held-out people and on the population
  (standardised with the run's own training rows).
* :func:`population_scores` scores the chapter's own trained runs on the population.
* :func:`logistic_yardstick` fits a logistic regression on the same folds: the small model's
  held-out and population accuracy, the comparison's baseline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..data import make_crowd
from ..errors import SettingError
from ..loss import binary_cross_entropy
from ..mode import EVAL
from . import comparison, network

# The people here are data, drawn from the crowd's generator with seeds of their own: the seed
# shift of tools/fresh_seeds.py leaves them alone (the network starts still move).
__fixed_seeds__ = True

POPULATION = 4000  # people in the population sample (160 crowds of 25)
POPULATION_SEED = 3_000_000  # its first crowd's seed; crowds POPULATION_SEED, +1, ...
FRESH_CROWD_SEED = 2_000_000  # the claims suite's fresh crowds: seeds from here on
# "no detectable difference" and "about a point": population gaps measured against these
POPULATION_NEAR = 0.005  # half a point of accuracy
POPULATION_FAR = 0.03  # three points
HELD_FAR = 0.1  # a 25-person held-out accuracy this far from the population's is noise made visible
CHUNK = 250  # population people scored per forward pass (bounds the memory a pass needs)


def crowd(seed: int = make_crowd.CROWD_SEED) -> tuple[np.ndarray, np.ndarray]:
    """One crowd of 25 from the generator: features (25, 2) (height cm, weight kg, unscaled) and
    labels (25,) of 0.0/1.0. The default seed gives the book's crowd."""
    height, weight, label = make_crowd.generate(seed)
    return np.column_stack([height, weight]), label.astype(np.float64)


def population(size: int = POPULATION, first: int = POPULATION_SEED) -> tuple[np.ndarray, ...]:
    """`size` people (a multiple of 25) from the generator: crowds `first`, `first` + 1, ...
    put together. Features (size, 2), labels (size,)."""
    if size < 25 or size % 25:
        raise SettingError(f"size: expected a positive multiple of 25, got {size}")
    parts = [crowd(first + k) for k in range(size // 25)]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


@dataclass(frozen=True)
class CrowdScores:
    """One variant's runs on many crowds: every figure has shape (crowds, seeds), folds averaged.

    `held_accuracy`, `held_loss`: on each crowd's own held-out people (every person once, as in
    the chapter). `population_accuracy`, `population_loss`: the same trained runs scored on the
    population sample, each run standardising it with its own training rows, averaged over the
    five fold runs. `missed_loss`: the mean loss over the population people a run classifies
    wrong (how confidently wrong it is)."""

    variant: str
    crowd_seeds: tuple[int, ...]
    held_accuracy: np.ndarray
    held_loss: np.ndarray
    population_accuracy: np.ndarray
    population_loss: np.ndarray
    missed_loss: np.ndarray


def _fold_statistics(features: np.ndarray, folds: int) -> list[tuple[np.ndarray, np.ndarray]]:
    fold = comparison.deal_folds(len(features), folds)
    out = []
    for k in range(folds):
        rows = features[fold != k]
        out.append((rows.mean(axis=0), rows.std(axis=0)))
    return out


def _blocks(
    crowd_seeds: Sequence[int], seeds: Sequence[int], folds: int
) -> tuple[comparison.FoldData, np.ndarray, np.ndarray]:
    """The runs' data along a leading axis, run r = (crowd index * seeds + seed index) * folds +
    fold, and the mean and standard deviation each run standardises with, shape (runs, 1, 2)."""
    xt, yt, xh, yh, means, devs, run_seeds = [], [], [], [], [], [], []
    for c in crowd_seeds:
        x, y = crowd(c)
        fold = comparison.deal_folds(len(x), folds)
        per_fold = []
        for k in range(folds):
            train, held = fold != k, fold == k
            a, b = network.standardise_features(x[train], x[held])
            mean, dev = x[train].mean(axis=0), x[train].std(axis=0)
            per_fold.append((a, y[train], b, y[held], mean, dev))
        for s in seeds:
            for a, ya, b, yb, mean, dev in per_fold:
                xt.append(a)
                yt.append(ya)
                xh.append(b)
                yh.append(yb)
                means.append(mean)
                devs.append(dev)
                run_seeds.append(s)
    blocks = comparison.FoldData(
        x_train=np.array(xt),
        y_train=np.array(yt),
        x_held=np.array(xh),
        y_held=np.array(yh),
        run_seeds=tuple(run_seeds),
        folds=folds,
    )
    return blocks, np.array(means)[:, None], np.array(devs)[:, None]


def _on_population(
    logits_of, mean: np.ndarray, dev: np.ndarray, people: tuple[np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Accuracy, mean loss and mean loss over the misclassified, per run, of `logits_of` (a
    function of standardised features (runs, rows, 2)) on the population, in chunks."""
    x, y = people
    right = np.zeros(mean.shape[0])
    loss = np.zeros(mean.shape[0])
    missed_loss = np.zeros(mean.shape[0])
    for start in range(0, len(x), CHUNK):
        xs, ys = x[start : start + CHUNK], y[start : start + CHUNK]
        logits = logits_of((xs[None] - mean) / dev)
        # per-person binary cross-entropy, in the stable form the package's loss uses
        each = np.maximum(logits, 0) - logits * ys + np.log1p(np.exp(-np.abs(logits)))
        wrong = (logits > 0) != (ys > 0.5)
        right += np.sum(~wrong, axis=-1)
        loss += np.sum(each, axis=-1)
        missed_loss += np.sum(np.where(wrong, each, 0.0), axis=-1)
    total = len(x)
    return right / total, loss / total, missed_loss / np.maximum(total - right, 1)


def fresh_crowds(
    crowd_seeds: Sequence[int],
    variants: Sequence[str] = network.VARIANTS,
    seeds: Sequence[int] = comparison.SEEDS,
    epochs: int = comparison.EPOCHS,
    rate: float = comparison.RATE,
    people: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict[str, CrowdScores]:
    """The chapter's protocol on every crowd of `crowd_seeds`: per variant one call of
    len(crowd_seeds) * len(seeds) * 5 runs, scored held out and on `people` (default: the
    population sample)."""
    folds = comparison.FOLDS
    people = population() if people is None else people
    blocks, mean, dev = _blocks(crowd_seeds, seeds, folds)
    shape = (len(crowd_seeds), len(seeds), folds)
    out = {}
    for variant in variants:
        net = network.build(variant, blocks.run_seeds)
        net, _ = network.train(net, blocks.x_train, blocks.y_train, epochs, rate)
        held_logits = network.forward(net, blocks.x_held, EVAL).logits
        held_right = (held_logits > 0) == (blocks.y_held > 0.5)
        held_loss = binary_cross_entropy(held_logits, blocks.y_held, stack_axes=1).value
        pop = _on_population(
            lambda z, net=net: network.forward(net, z, EVAL).logits, mean, dev, people
        )

        def per_seed(values: np.ndarray) -> np.ndarray:
            return np.asarray(values).reshape(shape).mean(axis=-1)

        out[variant] = CrowdScores(
            variant=variant,
            crowd_seeds=tuple(crowd_seeds),
            held_accuracy=per_seed(held_right.mean(axis=-1)),
            held_loss=per_seed(held_loss),
            population_accuracy=per_seed(pop[0]),
            population_loss=per_seed(pop[1]),
            missed_loss=per_seed(pop[2]),
        )
    return out


def population_scores(
    scores: comparison.Scores, people: tuple[np.ndarray, np.ndarray] | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The chapter's own trained runs of one variant (`scores.net`, run r = seed index * 5 +
    fold, on the book's crowd) scored on the population: accuracy, mean loss and mean loss over
    the misclassified, per seed, shape (seeds,)."""
    if scores.net is None:
        raise SettingError("population_scores: expects scores with the trained net")
    people = population() if people is None else people
    x, _ = crowd()
    folds = comparison.FOLDS
    stats = _fold_statistics(x, folds)
    runs = scores.net.stack[0]
    mean = np.array([stats[r % folds][0] for r in range(runs)])[:, None]
    dev = np.array([stats[r % folds][1] for r in range(runs)])[:, None]
    pop = _on_population(lambda z: network.forward(scores.net, z, EVAL).logits, mean, dev, people)
    return tuple(v.reshape(-1, folds).mean(axis=1) for v in pop)


@dataclass(frozen=True)
class Yardstick:
    """A logistic regression (two features and an intercept, fitted by Newton's method to the
    maximum of the likelihood) on the chapter's folds of each crowd: `held_accuracy` and
    `population_accuracy`, shape (crowds,), and `majority`, the share of the larger class."""

    held_accuracy: np.ndarray
    population_accuracy: np.ndarray
    majority: np.ndarray


def _logistic_fit(x: np.ndarray, y: np.ndarray, steps: int = 50) -> np.ndarray:
    """Maximum-likelihood logistic regression, runs along a leading axis: x (runs, rows, 2), y
    (runs, rows) -> weights (runs, 3), intercept last. A tiny ridge keeps Newton's matrix
    invertible."""
    design = np.concatenate([x, np.ones(x.shape[:-1] + (1,))], axis=-1)
    w = np.zeros(x.shape[:1] + (3,))
    ridge = 1e-8 * np.eye(3)
    for _ in range(steps):
        p = 0.5 * (1.0 + np.tanh(0.5 * np.einsum("rnk,rk->rn", design, w)))  # the logistic
        grad = np.einsum("rnk,rn->rk", design, p - y)
        hess = np.einsum("rnk,rn,rnl->rkl", design, p * (1 - p), design) + ridge
        w = w - np.linalg.solve(hess, grad[..., None])[..., 0]
    return w


def logistic_yardstick(
    crowd_seeds: Sequence[int] = (make_crowd.CROWD_SEED,),
    people: tuple[np.ndarray, np.ndarray] | None = None,
) -> Yardstick:
    """The logistic regression on the same five folds of every crowd of `crowd_seeds` (default:
    the book's), scored held out and on the population, standardised as the networks are."""
    folds = comparison.FOLDS
    people = population() if people is None else people
    blocks, mean, dev = _blocks(crowd_seeds, (0,), folds)
    w = _logistic_fit(blocks.x_train, blocks.y_train)

    def logits_of(z: np.ndarray) -> np.ndarray:
        return np.einsum("rnk,rk->rn", z, w[:, :2]) + w[:, 2:]

    held = ((logits_of(blocks.x_held) > 0) == (blocks.y_held > 0.5)).mean(axis=-1)
    pop = _on_population(logits_of, mean, dev, people)[0]
    majority = np.array([max(crowd(c)[1].mean(), 1 - crowd(c)[1].mean()) for c in crowd_seeds])
    return Yardstick(
        held_accuracy=held.reshape(-1, folds).mean(axis=1),
        population_accuracy=pop.reshape(-1, folds).mean(axis=1),
        majority=majority,
    )


__all__ = [
    "CHUNK",
    "HELD_FAR",
    "POPULATION_FAR",
    "POPULATION_NEAR",
    "FRESH_CROWD_SEED",
    "POPULATION",
    "POPULATION_SEED",
    "CrowdScores",
    "Yardstick",
    "crowd",
    "fresh_crowds",
    "logistic_yardstick",
    "population",
    "population_scores",
]
