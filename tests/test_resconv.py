"""The residual convnet of chapter 10: its backward pass against central differences, and the
stacking helpers (`join`, `hold`, per-network rates) against separate runs."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from normcore.experiments import convnet as cn
from normcore.experiments import resconv as rc
from normcore.loss import softmax_cross_entropy

pytestmark = pytest.mark.numeric  # figures from float arithmetic: make test-arith reruns it


@pytest.fixture(scope="module")
def data():
    return cn.digits_images()


def _loss(net, x, y):
    _, logits = rc.forward(net, x, "train")
    return float(softmax_cross_entropy(logits, y).value[0])


@pytest.mark.parametrize("version", ["none", "batch", "group"])
def test_gradient_matches_central_differences(data, version) -> None:
    x, y = data[0][:4], data[1][:4]
    net = rc.build(version, seeds=(3,), blocks=2, per_device=4)
    _, grads = rc.gradients(net, x, y)
    by_layer = {id(g.layer): g for g in grads}
    rng = np.random.default_rng(0)
    for i in (0, 3, 5):  # a stem convolution, a branch's last, the last block's
        conv = net.convs[i]
        g = by_layer[id(conv)].grads["weights"]
        for _ in range(3):
            idx = tuple(int(rng.integers(n)) for n in conv.weights.shape)
            h = 1e-6
            moved = []
            for sign in (1, -1):
                w = conv.weights.copy()
                w[idx] += sign * h
                convs = list(net.convs)
                convs[i] = dataclasses.replace(conv, weights=w)
                moved.append(_loss(dataclasses.replace(net, convs=tuple(convs)), x, y))
            np.testing.assert_allclose(g[idx], (moved[0] - moved[1]) / (2 * h), atol=1e-6)


def test_joined_and_per_network_rates_match_separate_runs(data) -> None:
    small = (data[0][:128], data[1][:128], data[2][:32], data[3][:32])
    a = rc.train(rc.build("none", (1,), blocks=1), small, 0.1, epochs=1)
    b = rc.train(rc.build("none-skip", (2,), blocks=1), small, 0.3, epochs=1)
    joined = rc.join([rc.build("none", (1,), blocks=1), rc.build("none-skip", (2,), blocks=1)])
    both = rc.train(joined, small, np.array([0.1, 0.3]), epochs=1)
    np.testing.assert_allclose(both.loss[:, 0], a.loss[:, 0], rtol=1e-12)
    np.testing.assert_allclose(both.loss[:, 1], b.loss[:, 0], rtol=1e-12)


def test_hold_keeps_a_diverged_network_where_it_was(data) -> None:
    x, y = data[0][:64], data[1][:64]
    net = rc.build("group", (1, 2), blocks=1)
    _, grads = rc.gradients(net, x, y)
    new = rc.step(net, grads, 0.1)
    held = rc.hold(new, net, np.array([True, False]))
    np.testing.assert_array_equal(held.convs[2].weights[1], net.convs[2].weights[1])
    np.testing.assert_array_equal(held.convs[2].weights[0], new.convs[2].weights[0])
    c = cn.CHANNELS
    np.testing.assert_array_equal(held.norms[2].scale[c:], net.norms[2].scale[c:])


def test_precise_statistics_are_the_layers_own(data) -> None:
    x = data[0][:32]
    net = rc.build("batch", (0,), blocks=1)
    again = rc.precise(net, x)
    rows = cn._batch_rows(net.convs[0].forward(np.broadcast_to(x, (1, *x.shape))).output)
    np.testing.assert_allclose(again.norms[0].running_mean, rows.mean(axis=1))
    # folded, the evaluation-mode logits are the same to rounding
    assert rc.fold_gap(again, x).max() < 1e-12
