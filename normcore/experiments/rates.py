"""Seed 004 rebuilt with normcore: the rate sweep, dead units and the three ways to predict.

The network is 12 inputs, 16 hidden units, 1 output. The hidden pre-activations are optionally
standardised by a batch layer with nothing learned (``affine=False``), epsilon 1e-8 under the
root, and running figures that follow the mean and the *deviation* (``tracks='deviation'``) with
momentum 0.9. Training is 30 epochs of plain descent on mini-batches of 20 rows, in the order
`normcore.data.subscribers.batch_order` gives (the same order in every run); slopes are means
over the batch, as the seed's are.

Two trainers live here:

* `train` uses normcore's layers (`Dense`, `BatchNorm`, `ReLU`) and numpy's sums (matrix products
  through BLAS, pairwise or row-after-row reductions). This is the chapter's run.
* `train_in_order` redoes the seed's arithmetic operation by operation, with every sum taken in
  one stated order: ``'sequential'`` (left to right, as Python 3.11's ``sum()`` adds floats) or
  ``'compensated'`` (Neumaier's compensated sum, as Python 3.12's ``sum()`` adds floats). It
  exists to measure how much of the seed's table depends on the order floats are added in.

`SEED_004_TABLE` and `SEED_004_THREE_WAYS` are the figures seed 004 prints, typed in once, as
data: they are the oracle the chapter and the tests hold the runs against.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._checks import PREDICTING, TRAINING
from ..activations import ReLU, sigmoid
from ..batch import BatchNorm
from ..dense import Dense
from ..errors import NormcoreError, SettingError
from ..loss import binary_cross_entropy

__all__ = [
    "BATCH",
    "CLIP",
    "EPOCHS",
    "EPSILON",
    "HIDDEN",
    "MOMENTUM",
    "RATES",
    "RUN_SEEDS",
    "SEED_004_SETUP",
    "SEED_004_TABLE",
    "SEED_004_THREE_WAYS",
    "SENSITIVE",
    "Cell",
    "Run",
    "SubscriberNet",
    "SweepRow",
    "ThreeWays",
    "accuracy",
    "build",
    "clipped_loss",
    "compare_with_seed",
    "comparison_table",
    "dead_units",
    "largest_stable_rate",
    "predict",
    "sweep",
    "sweep_table",
    "three_ways",
    "train",
    "train_in_order",
    "train_in_order_many",
]

HIDDEN = 16
EPOCHS = 30
BATCH = 20
EPSILON = 1e-8
MOMENTUM = 0.9
CLIP = 1e-12
RATES: tuple[float, ...] = (0.05, 5.0, 20.0, 60.0)
RUN_SEEDS: tuple[int, int] = (20260218 + 1, 20260218 + 2)

# ------------------------------------------------------------------------------ the oracle
# Quoted from seed 004's printed output, cell by cell. Keys: (normalised, rate).
# Each value: (final training loss of run 1, of run 2), (test accuracy 1, 2), (dead units 1, 2).
SEED_004_TABLE: dict[tuple[bool, float], tuple[tuple[float, float], ...]] = {
    (False, 0.05): ((0.3740, 0.3671), (0.7659, 0.7817), (0, 0)),
    (False, 5.0): ((0.3841, 0.3717), (0.6905, 0.5992), (1, 2)),
    (False, 20.0): ((8.6577, 8.1051), (0.6270, 0.6190), (0, 0)),
    (False, 60.0): ((6.0788, 6.0788), (0.7579, 0.7579), (14, 16)),
    (True, 0.05): ((0.4020, 0.3922), (0.7698, 0.7857), (0, 0)),
    (True, 5.0): ((0.3809, 0.4014), (0.7381, 0.7579), (0, 0)),
    (True, 20.0): ((0.7206, 0.6698), (0.6984, 0.6865), (0, 0)),
    (True, 60.0): ((2.3263, 1.9161), (0.6429, 0.6587), (0, 0)),
}
# The block on the three ways to predict (normalised network, first seed, rate 0.05).
SEED_004_THREE_WAYS: dict[str, float] = {
    "running": 0.7698,
    "batch": 0.7937,
    "inflation": 0.0238,
    "inflated_subscribers": 6,
    "shuffled": 0.7817,
    "changed_running_vs_batch": 6,
    "changed_by_order": 7,
    "largest_move": 0.2273,
}
# The set-up line the seed prints before the table.
SEED_004_SETUP: dict[str, float] = {
    "parameters": 225,
    "train": 300,
    "test": 252,
    "baseline": 0.7579,
    "linear": 0.8016,
    "tree": 0.7857,
}
COLUMNS = ("loss", "test", "dead")
# Settings whose final losses and test accuracies are chaotic: a last-bit change anywhere (the
# order a sum is added in, which differs between CPUs; a nudge of one starting weight by one
# unit in the last place) changes them in the first or second decimal. Measured: chapter 7
# computes the spread, tests/test_rates.py checks it. Their dead-unit counts are stable.
SENSITIVE: frozenset[tuple[bool, float]] = frozenset({(True, 60.0)})
DECIMALS = {"loss": 4, "test": 4, "dead": 0}


def _data():
    from ..data.subscribers import load_subscribers

    return load_subscribers()


def _orders(epochs: int) -> list[np.ndarray]:
    from ..data.subscribers import batch_order

    return [batch_order(t) for t in range(epochs)]


# ------------------------------------------------------------------------------ the network
@dataclass(frozen=True, eq=False)
class SubscriberNet:
    """Dense 12→16, optional batch layer, ReLU, dense 16→1 (a logit)."""

    hidden: Dense
    norm: BatchNorm | None
    output: Dense
    relu: ReLU = dataclasses.field(default_factory=ReLU)

    @property
    def parameters(self) -> int:
        return int(sum(a.size for a in (self.hidden.weights, self.hidden.bias,
                                        self.output.weights, self.output.bias)))

    def hidden_activity(self, x: np.ndarray, purpose: str = PREDICTING) -> np.ndarray:
        """The hidden units' outputs after the ReLU."""
        z = self.hidden.forward(x, purpose).output
        if self.norm is not None:
            z = self.norm.forward(z, purpose).output
        return self.relu.forward(z, purpose).output

    def logits(self, x: np.ndarray, purpose: str = PREDICTING) -> np.ndarray:
        return self.output.forward(self.hidden_activity(x, purpose), purpose).output[:, 0]

    def probabilities(self, x: np.ndarray, purpose: str = PREDICTING) -> np.ndarray:
        return sigmoid(self.logits(x, purpose))


def build(seed: int, normalised: bool, epsilon: float = EPSILON, nudge: int = 0) -> SubscriberNet:
    """The seed's starting weights for `seed`; a batch layer as seed 004 configures it if
    `normalised` (no scale or shift, `epsilon` under the root, running mean and deviation).
    `nudge` moves every starting hidden weight by that many units in the last place (up if
    positive, down if negative): a deliberate perturbation far below any printed digit."""
    from ..data.subscribers import init_weights

    (w1, b1), (w2, b2) = init_weights(seed, [(12, HIDDEN), (HIDDEN, 1)])
    for _ in range(abs(nudge)):
        w1 = np.nextafter(w1, np.inf if nudge > 0 else -np.inf)
    norm = (
        BatchNorm.create(HIDDEN, epsilon=epsilon, momentum=MOMENTUM, affine=False,
                         tracks="deviation")
        if normalised
        else None
    )
    return SubscriberNet(hidden=Dense(w1, b1), norm=norm, output=Dense(w2, b2))


def clipped_loss(logits: np.ndarray, labels: np.ndarray, clip: float | None = CLIP) -> float:
    """Mean cross-entropy with the probability clipped to [clip, 1 - clip], as the seed reports
    it; ``clip=None`` gives normcore's unclipped `binary_cross_entropy` instead."""
    if clip is None:
        return float(binary_cross_entropy(logits, labels).value)
    p = np.clip(sigmoid(np.asarray(logits, dtype=np.float64)), clip, 1 - clip)
    return float(-np.mean(labels * np.log(p) + (1 - labels) * np.log(1 - p)))


def train_step(
    net: SubscriberNet, xb: np.ndarray, yb: np.ndarray, rate: float, clip: float | None = CLIP
) -> tuple[SubscriberNet, float]:
    """One mini-batch of plain descent: forward (training), backward, step. Returns the new
    network and the batch's loss (before the step)."""
    moved, logits = _step(net, xb, yb, rate)
    return moved, clipped_loss(logits, yb, clip)


def _step(
    net: SubscriberNet, xb: np.ndarray, yb: np.ndarray, rate: float
) -> tuple[SubscriberNet, np.ndarray]:
    """`train_step`, returning the batch's logits (before the step) instead of its loss."""
    h = net.hidden.forward(xb, TRAINING)
    n = net.norm.forward(h.output, TRAINING) if net.norm is not None else None
    r = net.relu.forward(n.output if n is not None else h.output, TRAINING)
    o = net.output.forward(r.output, TRAINING)
    logits = o.output[:, 0]
    slope = binary_cross_entropy(logits, yb).slope[:, None]  # (p - y) / rows
    go = net.output.backward(o, slope)
    gr = net.relu.backward(r, go.passed_down)
    gn = net.norm.backward(n, gr.passed_down) if n is not None else None
    gh = net.hidden.backward(h, gn.passed_down if gn is not None else gr.passed_down)
    moved = SubscriberNet(
        hidden=net.hidden.step(gh, rate),
        norm=net.norm.step(gn, rate) if gn is not None else None,
        output=net.output.step(go, rate),
    )
    return moved, logits


@dataclass(frozen=True, eq=False)
class Run:
    """A trained network and its loss: `epoch_losses[t]` is epoch t's mean of batch losses
    weighted by batch size; `loss` the last of them."""

    net: SubscriberNet
    epoch_losses: np.ndarray
    rate: float
    seed: int
    refused: str | None = None
    refused_at: tuple[int, int] | None = None
    unclipped_losses: np.ndarray | None = None  # the same epochs' losses without the clip

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
    epsilon: float = EPSILON,
    clip: float | None = CLIP,
    nudge: int = 0,
) -> Run:
    """Train one network of seed 004 with normcore's layers (`nudge`: see `build`).

    The loss reported is clipped at `clip` as the seed reports it; the run also records each
    epoch's loss without the clip (`unclipped_losses`), from the same forward passes.
    If a layer refuses a block on the way (values so large their squares would overflow, or a
    step that overflows), training stops there: the returned run keeps the network as it was
    before that batch, `refused` holds the error's type and message and `refused_at` the
    (epoch, batch) it happened in, both counted from 0.
    """
    data = _data()
    net = build(seed, normalised, epsilon, nudge)
    x, y = data.x_train, data.y_train
    losses, unclipped = [], []
    for epoch, order in enumerate(_orders(epochs)):
        total = total_unclipped = 0.0
        for start in range(0, len(order), batch):
            rows = order[start : start + batch]
            try:
                net, logits = _step(net, x[rows], y[rows], rate)
            except NormcoreError as exc:
                return Run(net=net, epoch_losses=np.array(losses), rate=float(rate), seed=seed,
                           refused=f"{type(exc).__name__}: {exc}",
                           refused_at=(epoch, start // batch))
            total += clipped_loss(logits, y[rows], clip) * len(rows)
            total_unclipped += clipped_loss(logits, y[rows], None) * len(rows)
        losses.append(total / len(order))
        unclipped.append(total_unclipped / len(order))
    return Run(net=net, epoch_losses=np.array(losses), rate=float(rate), seed=seed,
               unclipped_losses=np.array(unclipped))


# ------------------------------------------------------------------------------ asking it
def predict(
    net: SubscriberNet, x: np.ndarray, way: str = "running", batch: int = BATCH,
    order: np.ndarray | None = None,
) -> np.ndarray:
    """Probabilities for the rows of `x`.

    ``way='running'``: the batch layer divides by its running figures (the right way).
    ``way='batch'``: the rows are cut into consecutive batches of `batch` (in `order`, if given,
    and put back afterwards) and each batch is standardised by its own statistics, so one row's
    answer depends on the rows it happens to share a batch with.
    """
    if way == "running":
        return net.probabilities(x, PREDICTING)
    if way != "batch":
        raise SettingError(f"way: expected 'running' or 'batch', got {way!r}")
    order = np.arange(len(x)) if order is None else np.asarray(order)
    out = np.empty(len(x))
    for start in range(0, len(order), batch):
        rows = order[start : start + batch]
        out[rows] = net.probabilities(x[rows], TRAINING)
    return out


def accuracy(p: np.ndarray, y: np.ndarray) -> float:
    """Share of rows where p > 0.5 agrees with y > 0.5."""
    return float(np.mean((np.asarray(p) > 0.5) == (np.asarray(y) > 0.5)))


def dead_units(net: SubscriberNet, x: np.ndarray | None = None) -> int:
    """Hidden units that are zero on every training row (asked with the running figures)."""
    x = _data().x_train if x is None else x
    return int(np.sum(np.all(net.hidden_activity(x, PREDICTING) <= 0, axis=0)))


# ------------------------------------------------------------------------------ the sweep
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

    @property
    def sensitive(self) -> bool:
        """A row whose losses and test accuracies change with the last bit of any sum
        (see `SENSITIVE`)."""
        return (self.normalised, self.rate) in SENSITIVE

    def column(self, name: str) -> tuple[float, ...]:
        return getattr(self, name)


def sweep(
    rates: Sequence[float] = RATES,
    seeds: Sequence[int] = RUN_SEEDS,
    *,
    epsilon: float = EPSILON,
    clip: float | None = CLIP,
    trainer: str = "normcore",
) -> list[SweepRow]:
    """Every (normalisation, rate) of seed 004, two runs each: final loss, test accuracy, dead
    units. ``trainer='sequential'`` or ``'compensated'`` uses `train_in_order` instead."""
    data = _data()
    rows = []
    for normalised in (False, True):
        if trainer == "normcore":
            by_rate = [[train(s, rate, normalised, epsilon=epsilon, clip=clip) for s in seeds]
                       for rate in rates]
        else:  # the replays, every run of this family side by side (the same bits as alone)
            flat = train_in_order_many([s for _ in rates for s in seeds],
                                       [r for r in rates for _ in seeds], normalised,
                                       summation=trainer, epsilon=epsilon)
            by_rate = [flat[k * len(seeds):(k + 1) * len(seeds)] for k in range(len(rates))]
        for rate, runs in zip(rates, by_rate, strict=True):
            rows.append(
                SweepRow(
                    normalised=normalised,
                    rate=float(rate),
                    loss=tuple(r.loss for r in runs),
                    test=tuple(
                        float("nan") if r.refused else
                        accuracy(predict(r.net, data.x_test), data.y_test) for r in runs
                    ),
                    dead=tuple(-1 if r.refused else dead_units(r.net) for r in runs),
                    refused=tuple(r.refused for r in runs),
                    runs=tuple(runs),
                )
            )
    return rows


def largest_stable_rate(rows: Sequence[SweepRow], normalised: bool, limit: float = 1.0) -> float:
    """The largest rate whose runs all end with a training loss under `limit`."""
    ok = [r.rate for r in rows if r.normalised == normalised and max(r.loss) < limit]
    return max(ok) if ok else float("nan")


@dataclass(frozen=True)
class Cell:
    """One cell of the table held against the seed's: agrees when equal at the shown digits."""

    normalised: bool
    rate: float
    column: str
    run: int
    ours: float
    seed: float
    sensitive: bool = False

    @property
    def refused(self) -> bool:
        return math.isnan(self.ours) or (self.column == "dead" and self.ours < 0)

    @property
    def agrees(self) -> bool:
        """Equal at the digits the seed printed: ours lies within half a unit of the seed's
        last printed digit (a dead-unit count must be equal). A refused run, or a cell of a
        chaotic setting (whose digits change with the machine), is not compared."""
        if self.refused or self.sensitive:
            return False
        half = 0.5 * 10.0 ** -DECIMALS[self.column]
        return abs(self.ours - self.seed) <= half + 1e-9

    @property
    def status(self) -> str:
        """'agrees', 'differs', 'refused' (normcore stopped the run) or 'chaotic'."""
        if self.refused:
            return "refused"
        if self.sensitive:
            return "chaotic"
        return "agrees" if self.agrees else "differs"


def compare_with_seed(rows: Sequence[SweepRow]) -> list[Cell]:
    """Every cell of `rows` beside the seed's printed value (48 cells for the full sweep)."""
    cells = []
    for row in rows:
        quoted = SEED_004_TABLE[(row.normalised, row.rate)]
        for c, name in enumerate(COLUMNS):
            for k in range(2):
                cells.append(Cell(row.normalised, row.rate, name, k + 1,
                                  float(row.column(name)[k]), float(quoted[c][k]),
                                  sensitive=row.sensitive and name != "dead"))
    return cells


# ------------------------------------------------------------------------------ three ways
@dataclass(frozen=True)
class ThreeWays:
    """The normalised network (first seed, rate 0.05) asked three ways on the test rows."""

    running: np.ndarray
    batch: np.ndarray
    shuffled: np.ndarray
    labels: np.ndarray

    def accuracy(self, way: str) -> float:
        return accuracy(getattr(self, way), self.labels)

    @property
    def inflation(self) -> float:
        return self.accuracy("batch") - self.accuracy("running")

    @property
    def inflated_subscribers(self) -> int:
        return int(round(self.inflation * len(self.labels)))

    @property
    def changed_running_vs_batch(self) -> int:
        return int(np.sum((self.running > 0.5) != (self.batch > 0.5)))

    @property
    def changed_by_order(self) -> int:
        return int(np.sum((self.batch > 0.5) != (self.shuffled > 0.5)))

    @property
    def largest_move(self) -> float:
        return float(np.max(np.abs(self.batch - self.shuffled)))

    def summary(self) -> dict[str, float]:
        """The same figures, under the keys of `SEED_004_THREE_WAYS`."""
        return {
            "running": self.accuracy("running"),
            "batch": self.accuracy("batch"),
            "inflation": self.inflation,
            "inflated_subscribers": self.inflated_subscribers,
            "shuffled": self.accuracy("shuffled"),
            "changed_running_vs_batch": self.changed_running_vs_batch,
            "changed_by_order": self.changed_by_order,
            "largest_move": self.largest_move,
        }


def three_ways(net: SubscriberNet | None = None) -> ThreeWays:
    """Ask a normalised network (default: seed 004's, first seed, rate 0.05) three ways."""
    from ..data.subscribers import shuffled_test_order

    if net is None:
        net = train(RUN_SEEDS[0], 0.05, True).net
    data = _data()
    x = data.x_test
    return ThreeWays(
        running=predict(net, x, "running"),
        batch=predict(net, x, "batch"),
        shuffled=predict(net, x, "batch", order=shuffled_test_order()),
        labels=np.asarray(data.y_test),
    )


# ------------------------------------------------------------------------------ sum orders
def _add_all(terms: np.ndarray, compensated: bool) -> np.ndarray:
    """Sum `terms` along axis 0, one term after another from a start of 0.

    Sequential: s = s + x (Python 3.11's ``sum()`` of floats). Compensated: Neumaier's running
    correction, added once at the end (Python 3.12's ``sum()`` of floats)."""
    s = np.zeros(terms.shape[1:])
    c = np.zeros(terms.shape[1:])
    for x in terms:
        t = s + x
        if compensated:
            c = c + np.where(np.abs(s) >= np.abs(x), (s - t) + x, (x - t) + s)
        s = t
    if compensated:
        s = np.where((c != 0) & np.isfinite(c), s + c, s)
    return s


def _squash(z: np.ndarray) -> np.ndarray:
    """The seed's logistic, term by term with the C library's exp (not numpy's)."""
    out = []
    for v in np.ravel(z).tolist():
        if v >= 0:
            out.append(1.0 / (1.0 + math.exp(-v)) if v < 700 else 1.0)
        else:
            e = math.exp(v) if v > -700 else 0.0
            out.append(e / (1.0 + e))
    return np.array(out).reshape(np.shape(z))


@dataclass(frozen=True, eq=False)
class _OrderNet:
    """The seed's weights as plain arrays, for one run or several side by side: w1 (..., 16, 12),
    b1 (..., 16), w2 (..., 16), b2 (...); a block x (rows, 12) is shared by every run."""

    w1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: np.ndarray | float
    mean: np.ndarray | None
    deviation: np.ndarray | None
    epsilon: float
    compensated: bool

    def pre(self, x: np.ndarray) -> np.ndarray:
        # (..., rows, 16): sum over the 12 inputs in order, then the bias
        terms = x[:, None, :] * self.w1[..., None, :, :]            # (..., rows, 16, 12)
        return _add_all(np.moveaxis(terms, -1, 0), self.compensated) + self.b1[..., None, :]

    def forward(self, x: np.ndarray, stats: tuple[np.ndarray, np.ndarray] | None):
        z = self.pre(x)
        mu = sd = None
        if self.mean is not None:
            n = z.shape[-2]
            if stats is None:
                mu = _add_all(np.moveaxis(z, -2, 0), self.compensated) / n
                centred = np.moveaxis((z - mu[..., None, :]) ** 2, -2, 0)
                sd = np.sqrt(_add_all(centred, self.compensated) / n + self.epsilon)
            else:
                mu, sd = stats
            z = (z - mu[..., None, :]) / sd[..., None, :]
        a = np.where(z > 0, z, 0.0)
        summed = _add_all(np.moveaxis(a * self.w2[..., None, :], -1, 0), self.compensated)
        p = _squash(summed + np.asarray(self.b2)[..., None])
        return z, mu, sd, a, p


@dataclass(frozen=True, eq=False)
class _OrderFace:
    """Adapts an `_OrderNet` to what `predict` and `dead_units` ask of a network."""

    net: _OrderNet

    @property
    def norm(self):
        return self.net.mean

    def _forward(self, x: np.ndarray, purpose: str) -> tuple:
        """The network's forward pass: training reads the block's own statistics, predicting the
        running ones (if the network normalises at all)."""
        stats = None
        if purpose != TRAINING and self.net.mean is not None:
            stats = (self.net.mean, self.net.deviation)
        with np.errstate(all="ignore"):
            return self.net.forward(x, stats)

    def hidden_activity(self, x: np.ndarray, purpose: str = PREDICTING) -> np.ndarray:
        return self._forward(x, purpose)[3]

    def probabilities(self, x: np.ndarray, purpose: str = PREDICTING) -> np.ndarray:
        return self._forward(x, purpose)[4]


def train_in_order(
    seed: int,
    rate: float,
    normalised: bool,
    *,
    summation: str = "sequential",
    epochs: int = EPOCHS,
    batch: int = BATCH,
    epsilon: float = EPSILON,
) -> Run:
    """Seed 004's arithmetic, operation by operation, with every sum in one stated order.

    ``summation='sequential'`` adds left to right; ``'compensated'`` uses Neumaier's sum where the
    seed calls ``sum()`` (loops that add with ``+=`` stay sequential, as they do in the seed).
    The returned `Run.net` answers `predict` and `dead_units` like a `SubscriberNet`.
    """
    return train_in_order_many([seed], [rate], normalised, summation=summation, epochs=epochs,
                               batch=batch, epsilon=epsilon)[0]


def train_in_order_many(
    seeds: Sequence[int],
    rates: Sequence[float],
    normalised: bool,
    *,
    summation: str = "sequential",
    epochs: int = EPOCHS,
    batch: int = BATCH,
    epsilon: float = EPSILON,
) -> list[Run]:
    """`train_in_order` for the runs (seeds[k], rates[k]), side by side along a leading axis.

    Every operation is elementwise or a sum in the stated order along one axis, so each run's
    arithmetic is exactly the one it has alone (tested): stacking saves Python loops, not bits.
    No step of the replay depends on the machine (no BLAS, no SIMD reduction; `exp` and `log`
    come from the C library one value at a time)."""
    if summation not in ("sequential", "compensated"):
        raise SettingError(
            f"summation: expected 'sequential' or 'compensated', got {summation!r}"
        )
    if len(seeds) != len(rates):
        raise SettingError(f"seeds and rates: expected one rate a seed, got {len(seeds)} and "
                           f"{len(rates)}")
    with np.errstate(all="ignore"):  # overflow and NaN are what this replay is for
        return _replay(list(seeds), np.asarray(rates, dtype=np.float64), normalised,
                       summation == "compensated", epochs, batch, epsilon)


def _logs(values: np.ndarray) -> np.ndarray:
    """The C library's natural log, one value at a time (numpy's vectorised log may round
    differently from CPU to CPU)."""
    return np.array([math.log(v) for v in values.ravel().tolist()]).reshape(values.shape)


def _replay(seeds: list[int], rates: np.ndarray, normalised: bool, comp: bool, epochs: int,
            batch: int, epsilon: float) -> list[Run]:
    from ..data.subscribers import init_weights

    starts = [init_weights(seed, [(12, HIDDEN), (HIDDEN, 1)]) for seed in seeds]
    w1 = np.stack([a[0][0].T for a in starts])          # (runs, 16, 12)
    b1 = np.stack([a[0][1] for a in starts])            # (runs, 16)
    w2 = np.stack([a[1][0][:, 0] for a in starts])      # (runs, 16)
    b2 = np.array([float(a[1][1][0]) for a in starts])  # (runs,)
    runs = len(seeds)
    run_mean = np.zeros((runs, HIDDEN)) if normalised else None
    run_dev = np.ones((runs, HIDDEN)) if normalised else None
    data = _data()
    x, y = np.asarray(data.x_train), np.asarray(data.y_train)
    losses = []
    for order in _orders(epochs):
        total = np.zeros(runs)
        for start in range(0, len(order), batch):
            rows = order[start : start + batch]
            xb, yb, n = x[rows], y[rows], len(rows)
            net = _OrderNet(w1, b1, w2, b2, run_mean, run_dev, epsilon, comp)
            z, mu, sd, a, p = net.forward(xb, None)           # z, a (runs, n, 16); p (runs, n)
            pc = np.minimum(np.maximum(p, 1e-12), 1 - 1e-12)
            terms = yb * _logs(pc) + (1 - yb) * _logs(1 - pc)  # the seed's row loop, term by term
            loss = np.zeros(runs)
            for i in range(n):
                loss = loss - terms[:, i]
            d = pc - yb
            g2 = _add_all(((d[:, :, None] * a) / n).transpose(1, 0, 2), False)
            dz = d[:, :, None] * w2[:, None, :] * (z > 0)
            g2b = np.zeros(runs)
            for i in range(n):
                g2b = g2b + d[:, i] / n
            if normalised:
                s1 = _add_all(dz.transpose(1, 0, 2), comp)[:, None, :]
                s2 = _add_all((dz * z).transpose(1, 0, 2), comp)[:, None, :]
                dz = (n * dz - s1 - z * s2) / (n * sd[:, None, :])
            step1 = dz[:, :, :, None] * xb[None, :, None, :] / n      # (runs, n, 16, 12)
            g1 = _add_all(np.where(dz[:, :, :, None] != 0, step1, 0.0).transpose(1, 0, 2, 3),
                          False)
            g1b = _add_all(np.where(dz != 0, dz / n, 0.0).transpose(1, 0, 2), False)
            w1 = w1 - rates[:, None, None] * g1
            b1 = b1 - rates[:, None] * g1b
            w2 = w2 - rates[:, None] * g2
            b2 = b2 - rates * g2b
            if normalised:
                run_mean = 0.9 * run_mean + 0.1 * mu
                run_dev = 0.9 * run_dev + 0.1 * sd
            total = total + (loss / n) * n
        losses.append(total / len(order))
    losses = np.array(losses)  # (epochs, runs)
    out = []
    for k, seed in enumerate(seeds):
        final = _OrderNet(w1[k], b1[k], w2[k], b2[k],
                          None if run_mean is None else run_mean[k],
                          None if run_dev is None else run_dev[k], epsilon, comp)
        out.append(Run(net=_OrderFace(final), epoch_losses=losses[:, k], rate=float(rates[k]),
                       seed=seed))
    return out


# ------------------------------------------------------------------------------ tables
CHAOTIC = "chaotic"


def _cell(column: str, value: float, sensitive: bool = False) -> str:
    if sensitive and column != "dead":
        return CHAOTIC
    if column == "dead":
        return "—" if value < 0 else f"{int(value)}/16"
    return "—" if math.isnan(value) else f"{value:.{DECIMALS[column]}f}"


def sweep_table(rows: Sequence[SweepRow]):
    """The sweep as a table: — marks a run normcore refused to finish, 'chaotic' a figure whose
    digits change with the machine's arithmetic (see `SENSITIVE`)."""
    from ..book import table

    header = ["batch layer", "rate", "loss 1", "loss 2", "test 1", "test 2", "dead 1", "dead 2"]
    body = [["yes" if r.normalised else "no", f"{r.rate:g}",
             *[_cell(c, v, r.sensitive) for c in COLUMNS for v in r.column(c)]] for r in rows]
    return table(header, body)


def comparison_table(rows: Sequence[SweepRow]):
    """Each cell beside the reference program's printed value: ✓ where they agree at the printed
    digits, ✗ where they do not; 'refused' and 'chaotic' cells are not compared."""
    from ..book import table

    marks = {"agrees": "✓", "differs": "✗", "refused": "refused", "chaotic": "not compared"}
    body = [["yes" if c.normalised else "no", f"{c.rate:g}", c.column, c.run,
             _cell(c.column, c.seed), _cell(c.column, c.ours, c.sensitive), marks[c.status]]
            for c in compare_with_seed(rows)]
    return table(["batch layer", "rate", "column", "run", "printed", "normcore", "agrees"], body)


def nan_units(run: Run) -> int:
    """Hidden units of a `train_in_order` run whose incoming weights hold a NaN."""
    net = run.net.net
    return int(np.sum(np.isnan(net.w1).any(axis=1) | np.isnan(net.b1)))


# The names the chapter shows its reader: the reference program's printed figures.
REFERENCE_TABLE = SEED_004_TABLE
REFERENCE_SETUP = SEED_004_SETUP
REFERENCE_THREE_WAYS = SEED_004_THREE_WAYS
