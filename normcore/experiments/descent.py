"""Mini-batch gradient descent, written once for every network (independent copies along a leading
axis) the experiments train.

A network type brings two functions: ``gradients(net, x, labels) -> (loss (S,), grads)`` and a
step ``(net, grads, loss) -> net``. `batches` says which rows each step reads and `descend` runs
the loop; the deep digits network (`deepnet.train`) and the convnet (`convnet.train`) both train
through them, so both read their batches in the same way from the same kind of shuffle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

import numpy as np

from ..loss import softmax_cross_entropy
from ..sequential import leaves

Net = TypeVar("Net")


def batches(count: int, batch: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """The rows of each mini-batch in turn, without end.

    Args:
        count: how many training rows there are.
        batch: rows per mini-batch (1 to `count`).
        rng: the shuffle's generator; one permutation of ``range(count)`` is drawn per epoch, only
            when the epoch starts.

    Returns:
        An iterator of index arrays (batch,): the epoch's permutation cut into ``count // batch``
        consecutive pieces (a partial last piece is dropped), then the next epoch's.
    """
    while True:
        order = rng.permutation(count)
        for start in range(0, count - batch + 1, batch):
            yield order[start : start + batch]


def descend(
    net: Net,
    x: np.ndarray,
    labels: np.ndarray,
    rows: Iterable[np.ndarray],
    gradients: Callable[[Net, np.ndarray, np.ndarray], tuple[np.ndarray, Any]],
    step: Callable[[Net, Any, np.ndarray], Net],
) -> tuple[Net, list[np.ndarray]]:
    """One step per batch of `rows`: the loss and gradients of ``x[r], labels[r]``, then `step`.

    Args:
        net: the network to train, S copies along a leading axis (not changed).
        x, labels: the training rows (images or features) and their integer classes.
        rows: the index arrays of the batches, in order (e.g. an ``itertools.islice`` of
            `batches`).
        gradients: ``(net, x, labels) -> (loss, grads)``, the loss (S,) per network.
        step: ``(net, grads, loss) -> new net``.

    Returns:
        The trained network and each step's loss (S,), measured by that step's forward pass.
    """
    losses = []
    for r in rows:
        loss, grads = gradients(net, x[r], labels[r])
        losses.append(loss)
        net = step(net, grads, loss)
    return net, losses


def network_gradients(
    network: Any, x: np.ndarray, labels: np.ndarray, mode: str
) -> tuple[np.ndarray, list]:
    """The loss (S,) of a network's logits (mean softmax cross-entropy over the rows) and every
    layer's gradient, last layer first: the `Sequential` `network`'s forward pass on `x`, then
    its backward pass."""
    response = network.forward(x, mode)
    loss = softmax_cross_entropy(response.output, labels)
    return loss.value, leaves(network.backward(response, loss.grad))[::-1]
