"""The fictional subscriber table of chapter 7's reference program, rebuilt exactly.

The reference program (on the learning rate that batch norm allows, and on the leak of batch
statistics at inference) is a complete program with a printed output. This module regenerates its
data with the same arithmetic, so that chapter 7 can be held against the printed table digit for
digit:

* a 32-bit stream: the integer seed is scrambled by a multiply-xorshift hash, then advanced by a
  linear congruential step ``s <- (1664525 s + 1013904223) mod 2**32``; each draw is ``s / 2**32``;
* 1400 candidate subscribers, some of which drop out (a 4.6 % random drop, and anyone with no
  consumption readings), leaving 1260 rows;
* a Fisher-Yates shuffle seeded with ``SEED + 90000``; the first 300 shuffled rows train, rows
  1008 onward (252 rows) are the test set;
* every field standardised with the training rows' mean (``statistics.fmean``) and
  population standard deviation (``statistics.pstdev``, floored at 1e-9).

All of it is done with plain Python floats in the same order of operations as the program, and
only converted to numpy (exactly) at the end, so the arrays are bit-identical to its lists.

Conventions: rows are samples, columns are the 12 ``FIELDS`` in the program's order; labels are
float64 0.0/1.0 with 1.0 meaning "suspicious".
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

__all__ = [
    "FIELDS",
    "RAW",
    "SEED",
    "TEST_START",
    "TRAIN_SIZE",
    "SubscriberRow",
    "Subscribers",
    "batch_order",
    "init_weights",
    "load_subscribers",
    "shuffled_indices",
    "stream",
    "shuffled_test_order",
]

SEED: int = 20260218

# The seeds in this module make the book's data, which stay what the page describes when
# tools/fresh_seeds.py moves every other seed (network starts, folds, shuffles).
__fixed_seeds__ = True
"""The seed every random choice of the program is derived from (by adding an offset)."""

RAW: int = 1400
"""Number of candidate subscribers generated before dropouts."""

TRAIN_SIZE: int = 300
"""Training rows: the first 300 of the shuffled table (the program reduced it from 756)."""

TEST_START: int = 1008
"""The test set is the shuffled table from this row to the end (252 rows)."""


_MASK = 0xFFFFFFFF

# (name, probability, typical monthly consumption, shift of the suspicion score)
_AREAS: tuple[tuple[str, float, float, float], ...] = (
    ("north", 0.28, 21, 0.00),
    ("south", 0.22, 17, -0.10),
    ("east", 0.18, 26, 0.30),
    ("west", 0.14, 14, -0.05),
    ("central", 0.18, 23, 0.05),
)
_HOUSEHOLD_WEIGHTS = (0.06, 0.24, 0.30, 0.24, 0.11, 0.05)  # 1 to 6 people
_SATISFACTION_WEIGHTS = (0.08, 0.14, 0.27, 0.34, 0.17)  # rating 1 to 5
_PERIOD_WEIGHTS = (0.05, 0.12, 0.21, 0.62)  # 0 to 3 readings

FIELDS: tuple[str, ...] = (
    "mean_consumption",  # average of the readings, 2 decimals
    "volatility",  # largest minus smallest reading, 2 decimals
    "household",  # people in the household, 1 to 6
    "satisfaction",  # rating 1 to 5
    "period",  # number of readings, 1 to 3
    "zero_readings",  # 1 if any reading is 0.0
    "per_person",  # mean_consumption / household, 3 decimals
    *(f"area_{area[0]}" for area in _AREAS),  # one 0/1 indicator per area, in _AREAS order
)
"""The 12 input columns, in the order the seed feeds them to the network."""


# --------------------------------------------------------------------------- the random stream


def stream(seed: int) -> Callable[[], float]:
    """Return the program's uniform generator for ``seed``: each call gives a float in [0, 1).

    The seed is hashed (two multiply-xorshift rounds, as in a 32-bit finaliser) into the
    starting state of a 32-bit linear congruential generator; each call advances the state
    once and returns ``state / 2**32``.
    """
    h = ((seed ^ (seed >> 16)) * 2246822507) & _MASK
    h = ((h ^ (h >> 13)) * 3266489909) & _MASK
    state = (h ^ (h >> 16)) & _MASK

    def draw() -> float:
        nonlocal state
        state = (state * 1664525 + 1013904223) & _MASK
        return state / 4294967296

    return draw


def _weighted_pick(u: float, weights: Sequence[float]) -> int:
    """Index of the first running total of ``weights`` that exceeds ``u`` (last index if none)."""
    running = 0.0
    for index, weight in enumerate(weights):
        running += weight
        if u < running:
            return index
    return len(weights) - 1


def shuffled_indices(seed: int, n: int) -> list[int]:
    """Fisher-Yates shuffle of ``range(n)`` driven by ``stream(seed)``, as the seed does it.

    Walks ``i`` from ``n - 1`` down to 1 and swaps position ``i`` with ``int(u * (i + 1))``.
    """
    draw = stream(seed)
    order = list(range(n))
    for i in range(n - 1, 0, -1):
        j = int(draw() * (i + 1))
        order[i], order[j] = order[j], order[i]
    return order


# --------------------------------------------------------------------------- the raw table


@dataclass(frozen=True, slots=True)
class SubscriberRow:
    """One subscriber, unscaled, with the same Python types the seed uses.

    ``mean_consumption``, ``volatility`` and ``per_person`` are floats (rounded to 2, 2 and 3
    decimals); every other field is an int (the area fields are 0/1 indicators).
    """

    subscriber_id: int
    area: str
    household: int
    satisfaction: int
    period: int
    mean_consumption: float
    volatility: float
    zero_readings: int
    per_person: float
    suspicious: int

    def value(self, field: str) -> int | float:
        """The value of one of ``FIELDS`` (area indicators are derived from ``area``)."""
        if field.startswith("area_"):
            return int(self.area == field[len("area_") :])
        return getattr(self, field)


def _readings(area_level: float, subscriber_id: int) -> list[float]:
    """The subscriber's monthly consumption readings (0 to 3 of them); 0.0 marks a zero reading."""
    draw = stream(SEED + 7000 + subscriber_id)
    readings: list[float] = []
    for month in range(_weighted_pick(draw(), _PERIOD_WEIGHTS)):
        if draw() < 0.038:
            readings.append(0.0)
        else:
            noise = draw() + draw() + draw() - 1.5
            amount = area_level * math.exp(noise * 0.62) * (1 - month * 0.05) * 100 + 0.5
            readings.append(math.floor(amount) / 100)
        draw()  # the seed spends one more draw per month
    return readings


def _build_row(index: int) -> SubscriberRow | None:
    """Candidate ``index`` (0..RAW-1), or None when it drops out of the table."""
    draw = stream(SEED + index)
    area = _AREAS[_weighted_pick(draw(), [a[1] for a in _AREAS])]
    household = 1 + _weighted_pick(draw(), _HOUSEHOLD_WEIGHTS)
    satisfaction = 1 + _weighted_pick(draw(), _SATISFACTION_WEIGHTS)
    if draw() < 0.046:
        return None
    subscriber_id = 10001 + index
    readings = _readings(area[2], subscriber_id)
    if not readings:
        return None

    average = sum(readings) / len(readings)
    spread = max(readings) - min(readings)
    has_zero = min(readings) == 0.0
    draw = stream(SEED + 51000 + subscriber_id)
    # Left-to-right sum in the program's order: the float result depends on it.
    score = (
        0.052 * (average - 20)
        + 0.85 * has_zero
        + 0.026 * spread
        + 0.24 * (household >= 5)
        - 0.20 * (satisfaction >= 4)
        + area[3]
        + 0.9 * (subscriber_id - 10001) / 1399
        + (draw() + draw() + draw() - 1.5) * 1.30
    )
    mean_consumption = round(average, 2)
    return SubscriberRow(
        subscriber_id=subscriber_id,
        area=area[0],
        household=household,
        satisfaction=satisfaction,
        period=len(readings),
        mean_consumption=mean_consumption,
        volatility=round(spread, 2),
        zero_readings=int(has_zero),
        per_person=round(mean_consumption / household, 3),
        suspicious=int(score > 1.35),
    )


def _raw_rows() -> list[SubscriberRow]:
    """All surviving rows in generation order (1260 of the 1400 candidates)."""
    return [row for row in map(_build_row, range(RAW)) if row is not None]


# --------------------------------------------------------------------------- orders and weights


def batch_order(epoch: int) -> np.ndarray:
    """The program's order of the 300 training rows in ``epoch`` (0-based), shape (300,), int64.

    Shuffled with ``stream(SEED + 500 + epoch)``; the same in every run, whatever the model.
    Consecutive slices of 20 are the mini-batches.
    """
    return np.array(shuffled_indices(SEED + 500 + epoch, TRAIN_SIZE), dtype=np.int64)


def shuffled_test_order() -> np.ndarray:
    """The program's reordering of the 252 test rows (``SEED + 4242``), shape (252,), int64.

    The program uses it for "same path, test order changed": predict
    ``x_test[shuffled_test_order()]`` in batches of 20 and put prediction ``k`` back at row
    ``shuffled_test_order()[k]``.
    """
    n_test = len(load_subscribers().y_test)
    return np.array(shuffled_indices(SEED + 4242, n_test), dtype=np.int64)


def init_weights(
    seed: int, shape: Sequence[tuple[int, int]], gain: float = 1.0
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The program's weight initialiser, returned as ``[(W, b), ...]``, one pair per layer.

    ``shape`` lists ``(fan_in, fan_out)`` per layer, e.g. ``[(12, 16), (16, 1)]``. Weights are
    uniform on ``(-limit, limit)`` with ``limit = sqrt(6 * gain / fan_in)``; biases start at 0.

    Layout: ``W`` has shape (fan_in, fan_out) so a layer computes ``x @ W + b`` for rows ``x``;
    ``b`` has shape (fan_out,). One ``stream(seed)`` runs through all layers in order. Within a
    layer the program draws output unit by output unit (its weight row ``j`` holds unit ``j``'s
    ``fan_in`` incoming weights, then the bias), so draw number ``j * fan_in + k`` of the layer
    lands in ``W[k, j]``: the program's row-major list is ``W.T`` with the bias column dropped.
    The bias uses no draw.
    """
    draw = stream(seed)
    layers: list[tuple[np.ndarray, np.ndarray]] = []
    for n_in, n_out in shape:
        bound = math.sqrt(6.0 * gain / n_in)
        by_unit = [[(draw() * 2 - 1) * bound for _ in range(n_in)] for _ in range(n_out)]
        weights = np.array(by_unit, dtype=np.float64).reshape(n_out, n_in).T.copy()
        layers.append((weights, np.zeros(n_out, dtype=np.float64)))
    return layers


# --------------------------------------------------------------------------- the loaded table


def _frozen(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


@dataclass(frozen=True)
class Subscribers:
    """The subscriber table, split and standardised exactly as the reference program does it.

    Arrays are float64 and read-only (the object is cached and shared).

    * ``x_train`` (300, 12), ``y_train`` (300,): standardised features and 0/1 labels.
    * ``x_test`` (252, 12), ``y_test`` (252,): the test rows, scaled with the training figures.
    * ``fields``: the 12 column names, in column order.
    * ``mean``, ``std`` (12,): the training rows' mean and population standard deviation (floored at
      1e-9) used for the scaling.
    * ``baseline``: share of test rows with label 0 (always saying "not suspicious").
    * ``linear_line`` = 202/252 and ``tree_line`` = 198/252: quoted by the program from another
      course (a linear model and a decision tree on the same split); they are not computed here.
    * ``rows``: every surviving raw row, in shuffled order, so ``rows[:300]`` are the training
      rows and ``rows[1008:]`` the test rows.
    """

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    fields: tuple[str, ...]
    mean: np.ndarray
    std: np.ndarray
    baseline: float
    linear_line: float
    tree_line: float
    rows: tuple[SubscriberRow, ...]

    @property
    def train_rows(self) -> tuple[SubscriberRow, ...]:
        """The 300 unscaled training rows."""
        return self.rows[:TRAIN_SIZE]

    @property
    def test_rows(self) -> tuple[SubscriberRow, ...]:
        """The 252 unscaled test rows."""
        return self.rows[TEST_START:]


@lru_cache(maxsize=1)
def load_subscribers() -> Subscribers:
    """Build (once) and return the subscriber table; see :class:`Subscribers`."""
    raw = _raw_rows()
    shuffled = [raw[i] for i in shuffled_indices(SEED + 90000, len(raw))]
    train, test = shuffled[:TRAIN_SIZE], shuffled[TEST_START:]

    means = [statistics.fmean(row.value(f) for row in train) for f in FIELDS]
    stds = [max(1e-9, statistics.pstdev([row.value(f) for row in train])) for f in FIELDS]

    def standardise(rows: list[SubscriberRow]) -> tuple[np.ndarray, np.ndarray]:
        scaling = list(zip(FIELDS, means, stds, strict=True))
        x = [[(row.value(f) - m) / s for f, m, s in scaling] for row in rows]
        y = [float(row.suspicious) for row in rows]
        return _frozen(np.array(x, dtype=np.float64)), _frozen(np.array(y, dtype=np.float64))

    x_train, y_train = standardise(train)
    x_test, y_test = standardise(test)
    negatives = sum(label == 0.0 for label in y_test.tolist())
    return Subscribers(
        x_train=x_train,
        y_train=y_train,
        x_test=x_test,
        y_test=y_test,
        fields=FIELDS,
        mean=_frozen(np.array(means, dtype=np.float64)),
        std=_frozen(np.array(stds, dtype=np.float64)),
        baseline=negatives / len(test),
        linear_line=202 / len(test),
        tree_line=198 / len(test),
        rows=tuple(shuffled),
    )
