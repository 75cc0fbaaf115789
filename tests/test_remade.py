"""Pickling or copying a normcore value keeps it immutable: every array read-only, each layer
rebuilt (and checked) by its constructor, the arithmetic unchanged."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import normcore as nc
from normcore.errors import MomentumError

RNG = np.random.default_rng(7)

LAYERS = {
    "dense": lambda: nc.Dense.create(4, 3, np.random.default_rng(0)),
    "weightnorm": lambda: nc.WeightNormDense.create(4, 3, np.random.default_rng(0)),
    "batch": lambda: nc.BatchNorm.create(4, momentum=0.2),
    "ghost": lambda: nc.GhostBatchNorm.create(4, group_rows=3),
    "layer": lambda: nc.LayerNorm.create(4),
    "rms": lambda: nc.RMSNorm.create(4),
    "instance": lambda: nc.InstanceNorm.create(2),
    "group": lambda: nc.GroupNorm.create(4, 2),
    "relu": lambda: nc.ReLU(),
    "sequential": lambda: nc.Sequential(
        (nc.Dense.create(4, 4, np.random.default_rng(1)), nc.BatchNorm.create(4), nc.ReLU())
    ),
}

COPIES = {
    "pickle": lambda v: pickle.loads(pickle.dumps(v)),
    "deepcopy": copy.deepcopy,
    "copy": copy.copy,
}


def _arrays(value: object) -> dict[str, np.ndarray]:
    """Every array field of a layer (inside a Sequential: of its layers), by a dotted name."""
    if isinstance(value, nc.Sequential):
        return {
            f"{i}.{k}": a for i, layer in enumerate(value.layers) for k, a in _arrays(layer).items()
        }
    return {k: a for k, a in vars(value).items() if isinstance(a, np.ndarray)}


BLOCKS = {"instance": (6, 2, 2, 2), "group": (6, 4, 2, 2)}


def _block(name: str) -> np.ndarray:
    return RNG.normal(size=BLOCKS.get(name, (6, 4)))


@pytest.mark.parametrize("how", COPIES)
@pytest.mark.parametrize("name", LAYERS)
def test_a_copied_layer_is_read_only_and_answers_the_same(name: str, how: str) -> None:
    layer = LAYERS[name]()
    twin = COPIES[how](layer)
    assert type(twin) is type(layer)
    original, copied = _arrays(layer), _arrays(twin)
    assert original.keys() == copied.keys()
    for key, a in copied.items():
        assert np.array_equal(a, original[key]), key
        assert not a.flags.writeable, key
        with pytest.raises(ValueError):
            a.flags.writeable = True  # not even by asking
    x = _block(name)
    assert np.array_equal(twin.forward(x, "train").output, layer.forward(x, "train").output)


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_a_copied_response_and_gradient_stay_read_only_and_belong_to_their_layer(how: str) -> None:
    layer = nc.BatchNorm.create(3)
    x = RNG.normal(size=(5, 3))
    response = layer.forward(x, "train")
    gradient = layer.backward(response, np.ones((5, 3)))
    layer2, response2, gradient2 = COPIES[how]((layer, response, gradient))
    assert response2.layer is layer2 and gradient2.layer is layer2
    for a in (
        response2.output,
        response2.cache.z,
        response2.statistics.mean,
        gradient2.grad_input,
        *gradient2.grads.values(),
    ):
        assert not a.flags.writeable
    # the copied pair still works together, and steps to the original's new layer
    again = layer2.backward(response2, np.ones((5, 3)))
    assert np.array_equal(again.grad_input, gradient.grad_input)
    stepped, stepped2 = layer.step(gradient, 0.1), layer2.step(gradient2, 0.1)
    for key, a in _arrays(stepped).items():
        assert np.array_equal(_arrays(stepped2)[key], a)


def test_a_copy_goes_through_the_constructor_checks() -> None:
    """A copy is made by the constructor: a value it would refuse is refused on the way back."""
    remake, (kind, values) = nc.BatchNorm.create(3).__reduce__()
    assert kind is nc.BatchNorm and set(values) >= {"scale", "shift", "running_mean", "momentum"}
    with pytest.raises(MomentumError):
        remake(kind, dict(values, momentum=1.5))


def test_copying_does_not_touch_the_original() -> None:
    layer = nc.LayerNorm.create(4)
    before = layer.scale
    copy.deepcopy(layer)
    pickle.loads(pickle.dumps(layer))
    assert layer.scale is before and not before.flags.writeable
