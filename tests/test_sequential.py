"""`normcore.sequential`: a residual block and a flatten inside a `Sequential`, their gradients
held to central differences of the loss they feed (an independent computation)."""

from __future__ import annotations

import numpy as np
import pytest

import normcore as nc
from normcore.sequential import Flatten, Residual, leaves

pytestmark = pytest.mark.numeric


def _net(rng: np.random.Generator) -> nc.Sequential:
    branch = nc.Sequential((nc.Dense.create(6, 6, rng), nc.LayerNorm.create(6), nc.Tanh()))
    return nc.Sequential((Flatten(1), Residual(branch), nc.Dense.create(6, 1, rng)))


def test_residual_and_flatten_gradients_match_central_differences() -> None:
    rng = np.random.default_rng(0)
    net = _net(rng)
    x = rng.standard_normal((4, 2, 3))
    d = rng.standard_normal((4, 1))

    def loss(net: nc.Sequential, x: np.ndarray) -> float:
        return float(np.sum(net.forward(x, "train").output * d))

    gradient = net.backward(net.forward(x, "train"), d)
    h = 1e-6
    for idx in [(0, 0, 0), (1, 1, 2), (3, 0, 1)]:
        up, down = x.copy(), x.copy()
        up[idx] += h
        down[idx] -= h
        want = (loss(net, up) - loss(net, down)) / (2 * h)
        np.testing.assert_allclose(gradient.grad_input[idx], want, rtol=1e-6, atol=1e-9)
    dense = net.layers[1].branch.layers[0]
    got = next(g for g in leaves(gradient) if g.layer is dense).grads["weights"]
    for idx in [(0, 0), (2, 5), (5, 3)]:
        moved = []
        for sign in (1, -1):
            w = dense.weights.copy()
            w[idx] += sign * h
            branch = nc.Sequential(
                (nc.Dense(weights=w, bias=dense.bias), *net.layers[1].branch.layers[1:])
            )
            moved.append(loss(nc.Sequential((net.layers[0], Residual(branch), net.layers[2])), x))
        np.testing.assert_allclose(got[idx], (moved[0] - moved[1]) / (2 * h), rtol=1e-6, atol=1e-9)


def test_residual_is_the_input_plus_its_branch_and_steps_the_branch() -> None:
    rng = np.random.default_rng(1)
    branch = nc.Sequential((nc.Dense.create(3, 3, rng), nc.ReLU()))
    block = Residual(branch)
    x = rng.standard_normal((5, 3))
    response = block.forward(x, "train")
    np.testing.assert_array_equal(response.output, x + branch.forward(x, "train").output)
    gradient = block.backward(response, np.ones((5, 3)))
    stepped = block.step(gradient, 0.1)
    by_hand = branch.step(branch.backward(response.parts[0], np.ones((5, 3))), 0.1)
    np.testing.assert_array_equal(stepped.branch.layers[0].weights, by_hand.layers[0].weights)
    with pytest.raises(nc.SettingError):
        Residual(object())
    with pytest.raises(nc.SettingError):
        Flatten(-1)
