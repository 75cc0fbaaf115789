"""Chapter 6's measurement: the crowd network under five variants, five seeds, five folds.

* :func:`deal_folds` deals the 25 people into 5 folds (person i to fold i mod 5).
* :func:`fold_data` builds, for every (seed, fold) run, the training and held-out data, each in
  standard units worked out on that fold's training rows only.
* :func:`compare` trains all 25 seed-by-fold runs of each variant side by side along a leading
  axis (one numpy call per layer serves every run) and reports accuracy and loss, training and held
  out.
* :func:`curves` trains one network per variant on the whole crowd and keeps its loss after
  every epoch; for the batch layer it also asks the network two ways after every step.
* :func:`run_all` does both: the 125 fold runs and the 5 curves, 130 runs in all.
* :func:`compare_one_at_a_time` trains the same runs one network at a time, for the benchmark
  and the tests; :func:`losses_one_at_a_time` keeps only their losses, for the chapter.
* :func:`sensitivities` trains every fold's run twice in one call, once from starting weights
  moved by one unit in the last place, and reports how far each table figure moves, after one
  run length or several.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..batch import BatchNorm
from ..data import load_crowd
from ..errors import SettingError
from ..loss import binary_cross_entropy
from ..mode import EVAL
from ..sequential import Sequential
from . import network

SEEDS = (0, 1, 2, 3, 4)
FOLDS = 5
EPOCHS = 200
RATE = 1.0
TARGET_LOSS = 0.3
CURVE_SEED = 0
SECOND_RATE = 0.3  # the learning rate at which the claims suite checks the verdict again
SPIKE_RISE = 0.1  # a rise of the loss from one epoch to the next that counts as a spike
PEOPLE_DRAWS = 4000  # bootstrap draws over people in `paired_people`
PEOPLE_PERCENTILES = (2.5, 97.5)  # its interval's ends: a 95 % interval
# weight norm's first steps are the dense layer's to first order (chapter 5): its whole-crowd loss
# should track the plain network's at first; "tracks" means within AGREE_LOSS, for AGREE_EPOCHS
AGREE_LOSS = 0.01
AGREE_EPOCHS = 30
# weight norm "holds out within NEAR_PEOPLE people of the plain network" on a seed
NEAR_PEOPLE = 2


def deal_folds(people: int = 25, folds: int = FOLDS) -> np.ndarray:
    """The fold of each person: dealt like cards, person i to fold i mod `folds`."""
    if folds < 2 or people % folds:
        raise SettingError(f"folds: expected a divisor of {people} that is at least 2, got {folds}")
    return np.arange(people) % folds


@dataclass(frozen=True)
class FoldData:
    """The data of every (seed, fold) run along a leading axis, run r = seed index * folds + fold.

    x_train (runs, 20, 2), y_train (runs, 20), x_held (runs, 5, 2), y_held (runs, 5), and the
    seed of each run."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_held: np.ndarray
    y_held: np.ndarray
    run_seeds: tuple[int, ...]
    folds: int


def fold_data(seeds: Sequence[int] = SEEDS, folds: int = FOLDS) -> FoldData:
    crowd = load_crowd()
    x, y = crowd.features, crowd.labels
    fold = deal_folds(len(crowd), folds)
    xt, yt, xh, yh = [], [], [], []
    for k in range(folds):
        train, held = fold != k, fold == k
        a, b = network.standardise_features(x[train], x[held])
        xt.append(a)
        xh.append(b)
        yt.append(y[train])
        yh.append(y[held])
    repeat = len(seeds)
    return FoldData(
        x_train=np.array(xt * repeat),
        y_train=np.array(yt * repeat),
        x_held=np.array(xh * repeat),
        y_held=np.array(yh * repeat),
        run_seeds=tuple(s for s in seeds for _ in range(folds)),
        folds=folds,
    )


@dataclass(frozen=True)
class Scores:
    """One variant's results, one entry per seed (folds averaged: with equal folds the
    held-out figures are counted over every person once).

    train_accuracy, held_accuracy, train_loss, held_loss: shape (seeds,). All four are asked
    in evaluation mode, after the last step. `run_loss` is the per-epoch training loss of every
    run, shape (epochs, runs). `held_correct` (seeds, people), when filled, says for every seed
    whether each person, in the crowd's order, was classified right when held out: the verdicts
    behind `held_accuracy`, for a comparison paired person by person (`paired_people`). `net`
    is the trained networks (run r = seed index * folds + fold), when kept."""

    variant: str
    train_accuracy: np.ndarray
    held_accuracy: np.ndarray
    train_loss: np.ndarray
    held_loss: np.ndarray
    run_loss: np.ndarray
    held_correct: np.ndarray | None = None
    net: network.CrowdNetwork | None = dataclasses.field(default=None, compare=False, repr=False)


def _loss(net: network.CrowdNetwork, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    logits = network.forward(net, x, EVAL).logits
    return binary_cross_entropy(logits, y, stack_axes=1).value


def people_correct(net: network.CrowdNetwork, blocks: FoldData, mode: str = EVAL) -> np.ndarray:
    """Whether each person was classified right when held out, per seed: shape (seeds, people),
    people in the crowd's order (fold k holds persons k, k + folds, ...)."""
    right = (network.forward(net, blocks.x_held, mode).logits > 0) == (blocks.y_held > 0.5)
    seeds = len(blocks.run_seeds) // blocks.folds
    per_fold = right.reshape(seeds, blocks.folds, -1)  # (seeds, fold, k-th person of the fold)
    return np.swapaxes(per_fold, 1, 2).reshape(seeds, -1)  # person i = k-th * folds + fold


def score(
    variant: str, blocks: FoldData, net: network.CrowdNetwork, run_loss: np.ndarray
) -> Scores:
    """Accuracy and loss of trained runs (along a leading axis), averaged over each seed's folds."""
    seeds = len(blocks.run_seeds) // blocks.folds

    def per_seed(values: np.ndarray) -> np.ndarray:
        return values.reshape(seeds, blocks.folds).mean(axis=1)

    return Scores(
        variant=variant,
        train_accuracy=per_seed(network.accuracy(net, blocks.x_train, blocks.y_train)),
        held_accuracy=per_seed(network.accuracy(net, blocks.x_held, blocks.y_held)),
        train_loss=per_seed(_loss(net, blocks.x_train, blocks.y_train)),
        held_loss=per_seed(_loss(net, blocks.x_held, blocks.y_held)),
        run_loss=run_loss,
        held_correct=people_correct(net, blocks),
        net=net,
    )


def compare_variant(
    variant: str,
    blocks: FoldData,
    epochs: int = EPOCHS,
    rate: float = RATE,
) -> Scores:
    """Every (seed, fold) run of one variant, trained side by side along a leading axis."""
    net = network.build(variant, blocks.run_seeds)
    net, history = network.train(net, blocks.x_train, blocks.y_train, epochs, rate)
    return score(variant, blocks, net, history.loss)


def compare(
    variants: Sequence[str] = network.VARIANTS,
    seeds: Sequence[int] = SEEDS,
    epochs: int = EPOCHS,
    rate: float = RATE,
) -> dict[str, Scores]:
    """The fold runs of every variant: len(variants) calls of len(seeds) * 5 runs each."""
    blocks = fold_data(seeds)
    return {a: compare_variant(a, blocks, epochs, rate) for a in variants}


def _one_at_a_time(
    variant: str, blocks: FoldData, epochs: int, rate: float
) -> tuple[list[network.CrowdNetwork], np.ndarray]:
    """Every run of `blocks` trained alone (a leading axis of one each): the trained networks and
    the per-epoch training loss, shape (epochs, runs)."""
    nets, losses = [], []
    for r, seed in enumerate(blocks.run_seeds):
        one = slice(r, r + 1)
        net, history = network.train(
            network.build(variant, [seed]),
            blocks.x_train[one],
            blocks.y_train[one],
            epochs,
            rate,
        )
        nets.append(net)
        losses.append(history.loss)
    return nets, np.concatenate(losses, axis=1)


def losses_one_at_a_time(
    variant: str, seeds: Sequence[int] = SEEDS, epochs: int = EPOCHS, rate: float = RATE
) -> np.ndarray:
    """The per-epoch training loss of the runs `compare_variant` trains side by side, trained
    here one network at a time: shape (epochs, runs), run r = seed index * 5 + fold, as
    `Scores.run_loss`."""
    return _one_at_a_time(variant, fold_data(seeds), epochs, rate)[1]


def compare_one_at_a_time(
    variant: str, seeds: Sequence[int] = SEEDS, epochs: int = EPOCHS, rate: float = RATE
) -> Scores:
    """The same runs as `compare_variant`, trained one network at a time (a leading axis of one
    each), then gathered into the same shapes: the slow route, for the benchmark and tests."""
    blocks = fold_data(seeds)
    nets, run_loss = _one_at_a_time(variant, blocks, epochs, rate)

    def each(measure, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """`measure` of every run alone, on its own rows of `x` and `y`."""
        return np.concatenate([measure(n, x[r : r + 1], y[r : r + 1]) for r, n in enumerate(nets)])

    seeds_n = len(seeds)

    def per_seed(values: np.ndarray) -> np.ndarray:
        return values.reshape(seeds_n, blocks.folds).mean(axis=1)

    return Scores(
        variant=variant,
        train_accuracy=per_seed(each(network.accuracy, blocks.x_train, blocks.y_train)),
        held_accuracy=per_seed(each(network.accuracy, blocks.x_held, blocks.y_held)),
        train_loss=per_seed(each(_loss, blocks.x_train, blocks.y_train)),
        held_loss=per_seed(each(_loss, blocks.x_held, blocks.y_held)),
        run_loss=run_loss,
    )


@dataclass(frozen=True)
class Curve:
    """One whole-crowd run: loss per epoch (before that epoch's step), the first epoch (counted
    from 1) whose loss is under the target (None if never), the final accuracy in evaluation
    mode, and for the batch layer the accuracy asked two ways after every step."""

    variant: str
    loss: np.ndarray
    first_under: int | None
    final_accuracy: float
    accuracy_running: np.ndarray | None = None
    accuracy_batch: np.ndarray | None = None


def first_under(loss: np.ndarray, target: float = TARGET_LOSS) -> int | None:
    """The first epoch (counted from 1) whose loss is below `target`, or None."""
    below = np.flatnonzero(np.asarray(loss) < target)
    return int(below[0]) + 1 if below.size else None


def in_overlap(neighbours: int = 4) -> np.ndarray:
    """Whether each person of the crowd (in its order) sits in its mixed middle: at least half of
    their `neighbours` nearest people, in standard units of height and weight, carry the other
    label. Shape (25,)."""
    crowd = load_crowd()
    (x,) = network.standardise_features(crowd.features)
    labels = np.asarray(crowd.labels).ravel()
    apart = np.linalg.norm(x[:, None] - x[None], axis=-1)
    np.fill_diagonal(apart, np.inf)
    nearest = np.argsort(apart, axis=1, kind="stable")[:, :neighbours]
    return (labels[nearest] != labels[:, None]).mean(axis=1) >= 0.5


def first_apart(a: np.ndarray, b: np.ndarray, tolerance: float = AGREE_LOSS) -> int | None:
    """The first epoch (counted from 1) at which two loss curves differ by more than
    `tolerance`, or None if they never do."""
    apart = np.flatnonzero(np.abs(np.asarray(a) - np.asarray(b)) > tolerance)
    return int(apart[0]) + 1 if apart.size else None


def curves(
    variants: Sequence[str] = network.VARIANTS,
    seed: int = CURVE_SEED,
    epochs: int = EPOCHS,
    rate: float = RATE,
    target: float = TARGET_LOSS,
) -> dict[str, Curve]:
    """One network per variant on the whole crowd (standardised on all 25 rows)."""
    crowd = load_crowd()
    (x,) = network.standardise_features(crowd.features)
    x, y = x[None], crowd.labels[None]
    out = {}
    for variant in variants:
        two_ways = variant == "batch"
        net, history = network.train(
            network.build(variant, [seed]), x, y, epochs, rate, two_ways=two_ways
        )
        out[variant] = Curve(
            variant=variant,
            loss=history.loss[:, 0],
            first_under=first_under(history.loss[:, 0], target),
            final_accuracy=float(network.accuracy(net, x, y, EVAL)[0]),
            accuracy_running=history.accuracy_predicting[:, 0] if two_ways else None,
            accuracy_batch=history.accuracy_batch[:, 0] if two_ways else None,
        )
    return out


@dataclass(frozen=True)
class Comparison:
    scores: dict[str, Scores]
    curves: dict[str, Curve]


def run_all(
    variants: Sequence[str] = network.VARIANTS,
    seeds: Sequence[int] = SEEDS,
    epochs: int = EPOCHS,
    rate: float = RATE,
) -> Comparison:
    """The chapter's 130 runs, in this process: len(seeds) * 5 fold runs per variant (one
    call each), plus one whole-crowd curve per variant."""
    blocks = fold_data(seeds)
    return Comparison(
        scores={a: compare_variant(a, blocks, epochs, rate) for a in variants},
        curves=curves(variants, epochs=epochs, rate=rate),
    )


def _weight_field(layer) -> str:
    """The field holding a hidden layer's weights (a weight-normalised layer's direction)."""
    names = {f.name for f in dataclasses.fields(layer)}
    return "direction" if "direction" in names else "weights"


def nudged(net: network.CrowdNetwork, runs: slice = slice(None)) -> network.CrowdNetwork:
    """The same network with the starting hidden weights of the `runs` on the leading axis (default:
    all) moved by one unit in the last place (``np.nextafter`` towards +inf): a change far below
    anything the prose could show."""
    hidden = net.hidden
    field = _weight_field(hidden)
    moved = np.array(getattr(hidden, field))
    moved[runs] = np.nextafter(moved[runs], np.inf)
    return dataclasses.replace(net, hidden=dataclasses.replace(hidden, **{field: moved}))


@dataclass(frozen=True)
class Sensitivity:
    """How far a last-bit nudge of the starting weights moves each table figure of one
    variant after `epochs` epochs: the largest change, over seeds, of each per-seed figure."""

    variant: str
    epochs: int
    train_accuracy: float
    held_accuracy: float
    train_loss: float
    held_loss: float

    @property
    def largest_loss_change(self) -> float:
        return max(self.train_loss, self.held_loss)


def sensitivities(
    variant: str,
    seeds: Sequence[int] = SEEDS,
    lengths: Sequence[int] = (EPOCHS,),
    rate: float = RATE,
) -> tuple[Sensitivity, ...]:
    """Train every fold run of `variant` twice, side by side along a leading axis: as built, and
    from nudged starting weights (see `nudged`). After each of `lengths` epochs (increasing),
    report how far the nudge has moved each per-seed figure of the table. The longer lengths
    continue the same runs, so (200, 400) costs one run of 400 epochs."""
    if list(lengths) != sorted(set(lengths)) or not lengths or lengths[0] < 1:
        raise SettingError(f"lengths: expected increasing epoch counts from 1, got {lengths}")
    blocks = fold_data(seeds)
    runs = len(blocks.run_seeds)
    twice = FoldData(
        x_train=np.concatenate([blocks.x_train] * 2),
        y_train=np.concatenate([blocks.y_train] * 2),
        x_held=np.concatenate([blocks.x_held] * 2),
        y_held=np.concatenate([blocks.y_held] * 2),
        run_seeds=blocks.run_seeds * 2,
        folds=blocks.folds,
    )
    net = nudged(network.build(variant, twice.run_seeds), slice(runs, None))
    out, done = [], 0
    for epochs in lengths:
        net, history = network.train(net, twice.x_train, twice.y_train, epochs - done, rate)
        done = epochs
        both = score(variant, twice, net, history.loss)

        def change(field: str, both: Scores = both) -> float:
            values = getattr(both, field)
            half = len(values) // 2
            return float(np.max(np.abs(values[:half] - values[half:])))

        out.append(
            Sensitivity(
                variant=variant,
                epochs=epochs,
                train_accuracy=change("train_accuracy"),
                held_accuracy=change("held_accuracy"),
                train_loss=change("train_loss"),
                held_loss=change("held_loss"),
            )
        )
    return tuple(out)


def sensitivity(
    variant: str, seeds: Sequence[int] = SEEDS, epochs: int = EPOCHS, rate: float = RATE
) -> Sensitivity:
    """`sensitivities` after `epochs` epochs only."""
    return sensitivities(variant, seeds, (epochs,), rate)[0]


def spread_verdict(scores: dict[str, Scores], reference: str = "none") -> dict[str, str]:
    """Where each variant's mean held-out accuracy sits against the reference's per-seed range:
    'below', 'inside' or 'above'."""
    low = float(scores[reference].held_accuracy.min())
    high = float(scores[reference].held_accuracy.max())
    out = {}
    for name, s in scores.items():
        mean = float(s.held_accuracy.mean())
        out[name] = "below" if mean < low else "above" if mean > high else "inside"
    return out


def disagreements(curve: Curve) -> int:
    """Epochs on which the batch layer's two outputs (running statistics, batch statistics)
    give different accuracies."""
    if curve.accuracy_running is None:
        raise SettingError("disagreements: this curve did not ask the network two ways")
    return int(np.count_nonzero(curve.accuracy_running != curve.accuracy_batch))


@dataclass(frozen=True)
class Paired:
    """One variant against a reference, person by person, over the same seeds.

    `per_person` (people,): for each person, the share of seeds on which the variant
    classified them right when held out, minus the reference's share. `difference` is its mean,
    the gap in held-out accuracy. `people_interval` is a percentile bootstrap over the people
    (resampling the 25 with replacement, `draws` times): the uncertainty that comes from having
    met only these people. `seed_interval` is mean +- 2 standard errors of the per-seed gaps:
    the uncertainty that comes from the starting weights alone, with the people held fixed.
    `worse`, `better`: people the variant gets right on fewer (more) seeds than the
    reference does."""

    variant: str
    reference: str
    per_person: np.ndarray
    difference: float
    people_interval: tuple[float, float]
    seed_interval: tuple[float, float]
    worse: int
    better: int

    @property
    def people_width(self) -> float:
        return self.people_interval[1] - self.people_interval[0]

    @property
    def seed_width(self) -> float:
        return self.seed_interval[1] - self.seed_interval[0]


def paired_people(
    scores: dict[str, Scores],
    variant: str,
    reference: str = "none",
    draws: int = PEOPLE_DRAWS,
    seed: int = 0,
) -> Paired:
    """Compare `variant` with `reference` person by person (see `Paired`); the bootstrap
    draws come from ``np.random.default_rng(seed)``."""
    a, r = scores[variant].held_correct, scores[reference].held_correct
    if a is None or r is None or a.shape != r.shape:
        raise SettingError("paired_people: both variants need held_correct of one shape")
    per_person = a.mean(axis=0) - r.mean(axis=0)
    people = per_person.size
    rng = np.random.default_rng(seed)
    resampled = per_person[rng.integers(0, people, size=(draws, people))].mean(axis=1)
    low, high = np.percentile(resampled, PEOPLE_PERCENTILES)
    per_seed = a.mean(axis=1) - r.mean(axis=1)
    error = per_seed.std(ddof=1) / np.sqrt(per_seed.size) if per_seed.size > 1 else 0.0
    mean = float(per_person.mean())
    return Paired(
        variant=variant,
        reference=reference,
        per_person=per_person,
        difference=mean,
        people_interval=(float(low), float(high)),
        seed_interval=(mean - 2 * float(error), mean + 2 * float(error)),
        worse=int(np.count_nonzero(per_person < 0)),
        better=int(np.count_nonzero(per_person > 0)),
    )


def recalibrated_held_accuracy(scores: Scores, blocks: FoldData) -> np.ndarray:
    """Held-out accuracy per seed of a trained batch variant after its running statistics are
    replaced by the statistics of its own fold's training rows at the final weights (what
    "recomputing the statistics" means: the lag of the running statistics removed)."""
    net = scores.net
    if net is None or not isinstance(net.norm, BatchNorm):
        raise SettingError("recalibrated_held_accuracy: expects the trained batch variant")
    seen = Sequential((net.hidden, net.relu)).forward(blocks.x_train, EVAL).output
    norm = dataclasses.replace(
        net.norm,
        running_mean=seen.mean(axis=-2),
        running_var=seen.var(axis=-2),
        running_divisor=None,  # worked out from the new running variance
    )
    fixed = dataclasses.replace(net, norm=norm)
    right = network.accuracy(fixed, blocks.x_held, blocks.y_held)
    return right.reshape(-1, blocks.folds).mean(axis=1)


def whole_crowd_losses(
    variant: str, seeds: Sequence[int], epochs: int = EPOCHS, rate: float = RATE
) -> np.ndarray:
    """The whole-crowd curve of `curves` for many seeds at once, along a leading axis: the loss per
    epoch, shape (epochs, seeds) (for the claims suite)."""
    crowd = load_crowd()
    (x,) = network.standardise_features(crowd.features)
    n = len(seeds)
    xs, ys = np.repeat(x[None], n, axis=0), np.repeat(crowd.labels[None], n, axis=0)
    _, history = network.train(network.build(variant, seeds), xs, ys, epochs, rate)
    return history.loss


def spikes(loss: np.ndarray, rise: float = SPIKE_RISE) -> int:
    """How many times the loss rises by more than `rise` from one epoch to the next."""
    return int(np.count_nonzero(np.diff(np.asarray(loss)) > rise))


__all__ = [
    "AGREE_EPOCHS",
    "AGREE_LOSS",
    "NEAR_PEOPLE",
    "PEOPLE_DRAWS",
    "PEOPLE_PERCENTILES",
    "batch_before_relu",
    "Comparison",
    "Curve",
    "FoldData",
    "Paired",
    "Scores",
    "Sensitivity",
    "compare",
    "compare_variant",
    "compare_one_at_a_time",
    "curves",
    "deal_folds",
    "disagreements",
    "first_apart",
    "first_under",
    "in_overlap",
    "fold_data",
    "losses_one_at_a_time",
    "nudged",
    "paired_people",
    "people_correct",
    "recalibrated_held_accuracy",
    "run_all",
    "score",
    "sensitivities",
    "sensitivity",
    "spikes",
    "spread_verdict",
    "whole_crowd_losses",
]


def batch_before_relu(
    seeds: Sequence[int] = SEEDS, epochs: int = EPOCHS, rate: float = RATE
) -> np.ndarray:
    """Held-out accuracy per seed of the batch variant with the batch layer moved before the
    ReLU (dense, batch layer, ReLU, dense: the order of the paper that introduced it), trained
    on the same folds from the same starting weights as `compare`'s 'batch'. Returns (seeds,)."""
    blocks = fold_data(seeds)
    net = network.build("batch", blocks.run_seeds)
    body = Sequential((net.hidden, net.norm, net.relu, net.output))
    stack = len(blocks.run_seeds)
    for _ in range(epochs):
        response = body.forward(blocks.x_train, "train")
        loss = binary_cross_entropy(response.output[..., 0], blocks.y_train, stack_axes=1)
        body = body.step(body.backward(response, loss.grad[..., None]), rate)
    logits = body.forward(blocks.x_held, EVAL).output[..., 0]
    right = (logits > 0) == (blocks.y_held > 0.5)
    return right.reshape(stack // blocks.folds, -1).mean(axis=1)


# Student's t quantiles t(0.975, df) for a two-sided 95 % interval from df + 1 values
# (df 1-10; standard tables, checked against scipy.stats.t in the tests where scipy is present).
T_975 = {
    1: 12.7062047362,
    2: 4.30265272975,
    3: 3.18244630528,
    4: 2.7764451052,
    5: 2.57058183661,
    6: 2.44691185114,
    7: 2.36462425159,
    8: 2.30600413520,
    9: 2.26215716280,
    10: 2.22813885196,
}


def _exact_percentile(sorted_values: Sequence[int], q: Fraction) -> Fraction:
    """numpy's default (linear) percentile of integer values, in exact arithmetic."""
    position = q * (len(sorted_values) - 1) / 100
    below = int(position)
    above = min(below + 1, len(sorted_values) - 1)
    weight = position - below
    return sorted_values[below] + weight * (sorted_values[above] - sorted_values[below])


@dataclass(frozen=True)
class PairedExact:
    """`Paired` in exact arithmetic, for held-out verdicts over a handful of seeds.

    A person's share of seeds classified right is a multiple of 1/seeds, so every per-person
    difference, every resampled mean and the bootstrap interval's ends are fractions:
    `people_interval` holds them as `fractions.Fraction` (no float rounding can put an end on the
    wrong side of zero). The bootstrap resamples the 25 people's held-out verdicts only: each
    fold's twenty training people stay as they are, so the interval leaves out what training on
    other people would change. `share_at_least_zero` is the fraction of resampled means at or
    above zero. `seed_interval` is the mean of the per-seed gaps +- t(0.975, seeds - 1) standard
    errors (a 95 % interval for so few seeds; `seed_interval_2se` the old +- 2)."""

    variant: str
    reference: str
    difference: Fraction
    people_interval: tuple[Fraction, Fraction]
    share_at_least_zero: Fraction
    seed_interval: tuple[float, float]
    seed_interval_2se: tuple[float, float]
    draws: int

    @property
    def people_width(self) -> Fraction:
        return self.people_interval[1] - self.people_interval[0]

    @property
    def seed_width(self) -> float:
        return self.seed_interval[1] - self.seed_interval[0]


def paired_exact(
    scores: dict[str, Scores],
    variant: str,
    reference: str = "none",
    draws: int = PEOPLE_DRAWS,
    seed: int = 0,
) -> PairedExact:
    """`paired_people`'s comparison (the same bootstrap draws) in exact arithmetic, with a t
    multiplier for the seeds (see `PairedExact`)."""
    a, r = scores[variant].held_correct, scores[reference].held_correct
    if a is None or r is None or a.shape != r.shape:
        raise SettingError("paired_exact: both variants need held_correct of one shape")
    seeds, people = a.shape
    counts = a.sum(axis=0).astype(np.int64) - r.sum(axis=0).astype(np.int64)  # seeds x share
    rng = np.random.default_rng(seed)
    sums = np.sort(counts[rng.integers(0, people, size=(draws, people))].sum(axis=1))
    unit = Fraction(1, seeds * people)  # a resampled sum of counts, as a mean of shares
    ends = tuple(_exact_percentile(sums.tolist(), Fraction(q)) * unit for q in PEOPLE_PERCENTILES)
    per_seed = a.mean(axis=1) - r.mean(axis=1)
    mean = float(per_seed.mean())
    error = float(per_seed.std(ddof=1) / np.sqrt(seeds)) if seeds > 1 else 0.0
    t = T_975.get(seeds - 1, 1.96) if seeds > 1 else 0.0
    return PairedExact(
        variant=variant,
        reference=reference,
        difference=Fraction(int(counts.sum())) * unit,
        people_interval=(ends[0], ends[1]),
        share_at_least_zero=Fraction(int(np.count_nonzero(sums >= 0)), draws),
        seed_interval=(mean - t * error, mean + t * error),
        seed_interval_2se=(mean - 2 * error, mean + 2 * error),
        draws=draws,
    )


__all__ += ["T_975", "PairedExact", "paired_exact"]
