"""The one mini-batch loop (normcore.experiments.descent) reads the batches the two loops it
replaced read: one permutation per epoch from the order seed, cut into whole batches, the partial
last one dropped; and both trainers built on it train as those loops did."""

from __future__ import annotations

from itertools import islice

import numpy as np
import pytest

from normcore.experiments import convnet, deepnet, digits_rates
from normcore.experiments.descent import batches, descend

pytestmark = pytest.mark.numeric  # figures from float arithmetic: make test-arith reruns it


def written_out(count: int, batch: int, seed: int, epochs: int) -> list[np.ndarray]:
    """The batches as the replaced loops wrote them, epoch by epoch."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(epochs):
        order = rng.permutation(count)
        out += [order[s : s + batch] for s in range(0, count - batch + 1, batch)]
    return out


@pytest.mark.parametrize(("count", "batch"), [(10, 3), (12, 4), (7, 7), (100, 32)])
def test_batches_are_the_written_out_loops(count: int, batch: int) -> None:
    per_epoch = count // batch
    got = list(islice(batches(count, batch, np.random.default_rng(5)), 3 * per_epoch))
    want = written_out(count, batch, 5, 3)
    assert len(got) == len(want) == 3 * per_epoch
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


def test_deepnet_trains_as_its_written_out_loop() -> None:
    data = digits_rates.digits_data()
    x, y = data[0][:200], data[1][:200]
    small = (x, y, data[2], data[3])
    net = deepnet.build("batch", [0, 1], depth=2, width=8)
    run = deepnet.train(net, small, [0.1, 0.05], epochs=2, batch=32, order_seed=3)
    rates = np.array([0.1, 0.05])
    want, losses = net, []
    for rows in written_out(len(y), 32, 3, 2):
        loss, grads = deepnet.gradients(want, x[rows], y[rows])
        losses.append(loss)
        want = deepnet.step(want, grads, rates)
    np.testing.assert_array_equal(run.loss, np.array(losses))
    np.testing.assert_array_equal(run.net.output.weights, want.output.weights)


def test_convnet_trains_as_its_written_out_loop() -> None:
    data = convnet.digits_images()
    net = convnet.build("batch", seeds=(0,))
    run = convnet.train(net, data, steps=3, order_seed=2)
    x, y = data[0], data[1]
    want, losses = net, []
    for rows in written_out(len(y), convnet.BATCH, 2, 1)[:3]:
        loss, grads = convnet.gradients(want, x[rows], y[rows])
        losses.append(loss)
        want = convnet.step(want, grads, convnet.RATE)
    np.testing.assert_array_equal(run.loss, np.array(losses))
    np.testing.assert_array_equal(run.net.output.weights, want.output.weights)


def test_descend_steps_once_per_batch_and_leaves_the_network() -> None:
    seen = []

    def gradients(net: int, x: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, int]:
        seen.append(labels.tolist())
        return np.array([float(net)]), 1

    net, losses = descend(
        0, np.arange(6), np.arange(6), [[0, 1], [4, 5]], gradients, lambda n, g, _loss: n + g
    )
    assert net == 2 and seen == [[0, 1], [4, 5]] and [v[0] for v in losses] == [0.0, 1.0]
