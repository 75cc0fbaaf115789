"""Evaluating with batch statistics, over many orders of the test rows.

A batch layer in training mode standardises each batch by its own statistics,
so a row's output depends on the rows it shares a batch with. `batch_accuracies` asks one trained
network in consecutive batches of `batch` rows under many orders of the same rows at once: the
network is repeated along a leading axis, one copy per batch (``normcore``'s layers take runs along
a leading axis, one
call per layer), and each copy classifies its own batch. `sorted_orders` gives the orders that make
batches homogeneous: rows sorted by label, or by one feature.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...batch import BatchNorm
from ...dense import Dense
from ...errors import SettingError
from ...mode import TRAIN
from ...sequential import Sequential
from .data import BATCH
from .network import SubscriberNet

# The lines chapter 7's claims about orders are drawn at (the claims suite counts with them and
# the chapter glues them): an average over random orders "near" the running statistics' answer is
# within NEAR_SUBSCRIBERS test rows of it; label-sorted batches are "far below" the random orders
# when more than SORTED_DEVIATIONS of their deviations under their mean; batches of ten "barely
# move" the average when it stays within TEN_NEAR_SUBSCRIBERS rows of batches of twenty.
NEAR_SUBSCRIBERS = 5
SORTED_DEVIATIONS = 2
TEN_NEAR_SUBSCRIBERS = 2


def repeated(net: SubscriberNet, copies: int) -> SubscriberNet:
    """`copies` copies of a single network, side by side along a leading axis."""
    if net.runs is not None:
        raise SettingError("net: expected a single network, not several along a leading axis")

    def copy(layer):
        if isinstance(layer, Dense):
            return Dense(
                np.repeat(layer.weights[None], copies, axis=0),
                np.repeat(layer.bias[None], copies, axis=0),
            )
        if isinstance(layer, BatchNorm):
            fields = ("scale", "shift", "running_mean", layer.spread_field)
            derived = {"running_divisor": None} if layer.tracks == "variance" else {}
            return dataclasses.replace(
                layer,
                **{f: np.repeat(getattr(layer, f)[None], copies, axis=0) for f in fields},
                **derived,
            )
        return layer

    return SubscriberNet(Sequential(tuple(copy(layer) for layer in net.layers.layers)))


def batch_probabilities(
    net: SubscriberNet, x: np.ndarray, orders: np.ndarray, batch: int = BATCH
) -> np.ndarray:
    """Each row's probability when the rows of `x` (rows, 12) are cut, in each order of `orders`
    (orders, rows), into consecutive batches of `batch` (the last one shorter if need be), each
    standardised by its own statistics. Returns (orders, rows), rows in the order of `x`:
    row k of order j is the same as ``predict(net, x, 'batch', batch, orders[j])[k]``."""
    orders = np.asarray(orders)
    if orders.ndim != 2 or orders.shape[1] != len(x):
        raise SettingError(f"orders: expected shape (orders, {len(x)}), got {orders.shape}")
    n, rows = orders.shape
    full = rows // batch * batch
    out = np.empty((n, rows))
    for start, stop in ((0, full), (full, rows)):
        if stop == start:
            continue
        size = batch if start == 0 else stop - start
        idx = orders[:, start:stop].reshape(-1, size)  # one batch a stacked copy
        p = repeated(net, len(idx)).probabilities(x[idx], TRAIN)
        np.put_along_axis(out, orders[:, start:stop], p.reshape(n, -1), axis=1)
    return out


@dataclass(frozen=True)
class OrderSpread:
    """Test accuracy with batch statistics over many random orders of the test rows, with the
    in-order accuracy and the running statistics' accuracy for comparison (accuracies, shares)."""

    accuracies: np.ndarray  # (orders,)
    in_order: float
    running: float

    @property
    def mean(self) -> float:
        return float(self.accuracies.mean())

    @property
    def sd(self) -> float:
        return float(self.accuracies.std(ddof=1))

    @property
    def percentile_of_in_order(self) -> float:
        """Share of random orders (in per cent) scoring below the in-order accuracy, ties half."""
        below = np.mean(self.accuracies < self.in_order)
        ties = np.mean(self.accuracies == self.in_order)
        return float(100 * (below + ties / 2))


def order_spread(
    net: SubscriberNet,
    x: np.ndarray,
    y: np.ndarray,
    orders: int = 1000,
    seed: int = 0,
    batch: int = BATCH,
) -> OrderSpread:
    """Batch-statistics test accuracy under `orders` random orders of the rows (drawn from
    ``np.random.default_rng(seed)``), against the rows as given and the running statistics."""
    rng = np.random.default_rng(seed)
    perms = np.argsort(rng.random((orders, len(x))), axis=1)
    p = batch_probabilities(net, x, perms, batch)
    right = (p > 0.5) == (np.asarray(y) > 0.5)
    in_order = batch_probabilities(net, x, np.arange(len(x))[None], batch)[0]
    running = net.probabilities(x)
    return OrderSpread(
        accuracies=right.mean(axis=1),
        in_order=float(np.mean((in_order > 0.5) == (y > 0.5))),
        running=float(np.mean((running > 0.5) == (y > 0.5))),
    )


def sorted_orders(
    x: np.ndarray, y: np.ndarray, features: Sequence[int] = ()
) -> dict[str, np.ndarray]:
    """Orders that make batches homogeneous: rows by label (ones last, and ones first), and by
    each of `features` (ascending). Stable sorts, so ties keep the rows' own order."""
    y = np.asarray(y)
    out = {
        "label, ones last": np.argsort(y, kind="stable"),
        "label, ones first": np.argsort(-y, kind="stable"),
    }
    for f in features:
        out[f"feature {f}"] = np.argsort(np.asarray(x)[:, f], kind="stable")
    return out


__all__ = [
    "OrderSpread",
    "batch_probabilities",
    "order_spread",
    "repeated",
    "sorted_orders",
]
