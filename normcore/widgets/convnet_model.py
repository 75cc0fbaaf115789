"""Chapter 10's widget as data: the normaliser after the convolutions, the images a device holds,
the group count; normcore's figures for them.

The state (synced with the page; ``js/convnet-model.js`` is its JavaScript twin)::

    normaliser  "batch" | "layer" | "instance" | "group"
    per_device  text: the images each device standardises together (batch norm's B), 1 to 64
    groups      text: group norm's group count, a whole number dividing the 8 channels (read
                only when the normaliser is group norm)

The case (`case_data`) is written into the widget once, from the chapter's own runs, with 12
significant figures, so that the page and the kernel start from the same numbers:

    means, variances  (64, 8): the first convolution's output of the chapter's trained batch
                      network (its first seed) on the first 64 training images, each
                      image's and channel's mean and biased variance over its 8 x 8 pixels
    accuracy          the held-out accuracy of every seed of the chapter's runs: batch norm at
                      each per-device batch it trained (`convnet.SIZES`), the per-image
                      normalisers once (group norm at the chapter's `convnet.GROUPS` groups)

`figures` computes, for the state: how many values each statistic pools after each convolution
(normcore's own `statistic_count`, on the layer the network would hold), how many statistics
one device reads after the first convolution, and, for batch norm, how far one device's
variance of a channel strays from the whole sample's (`convnet.variance_ratios`, from the
stored per-image figures: a group's variance is the mean of its images' variances plus the
variance of their means); and the accuracy the chapter's runs reached, where it trained one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from normcore.batch import GhostBatchNorm
from normcore.errors import SettingError
from normcore.experiments import convnet
from normcore.image import GroupNorm
from normcore.widgets._input import choice_arg, parse_number

State = dict[str, Any]
NORMALISERS = ("batch", "layer", "instance", "group")
#: the images of the sample the widget reads (the largest per-device batch it takes)
IMAGES = 64
CHANNELS = convnet.CHANNELS
SIDES = (convnet.SIDE, convnet.SIDE // 2)


def _round(a: Any) -> list:
    return np.vectorize(lambda v: float(f"{v:.12g}"))(np.asarray(a, dtype=np.float64)).tolist()


def case_data(trained: convnet.ConvNet, x: np.ndarray, accuracy: dict[str, Any]) -> dict[str, Any]:
    """The widget's numbers, from the chapter's run.

    Args:
        trained: the chapter's trained batch network (one per seed; its first network is read).
        x: training images (n >= 64, 1, 8, 8); the first 64 are read.
        accuracy: ``{"batch": {B: (S,) accuracies for each B trained}, "layer": (S,),
            "instance": (S,), "group": (S,)}``.

    Returns:
        ``{"means", "variances"}`` (64, 8) and ``{"accuracy"}`` as above, keys as text.
    """
    if len(x) < IMAGES:
        raise SettingError(f"x: expected at least {IMAGES} images, got {len(x)}")
    a = trained.convs[0].forward(np.broadcast_to(x[:IMAGES], (trained.size, IMAGES, 1, 8, 8)))
    first = a.output[0]  # (64, 8, 8, 8): the first stacked network
    return {
        "means": _round(first.mean(axis=(2, 3))),
        "variances": _round(first.var(axis=(2, 3))),
        "accuracy": {
            "batch": {str(b): _round(v) for b, v in accuracy["batch"].items()},
            **{k: _round(accuracy[k]) for k in ("layer", "instance", "group")},
        },
        "groups": convnet.GROUPS,
    }


def initial() -> State:
    return {"normaliser": "batch", "per_device": "2", "groups": str(convnet.GROUPS)}


def _whole(state: State, key: str, name: str, lowest: int, highest: int) -> int:
    value = parse_number(state[key], name)
    if value != int(value) or not lowest <= value <= highest:
        raise SettingError(
            f"{name}: expected a whole number from {lowest} to {highest}, got {state[key].strip()}"
        )
    return int(value)


def parse(state: State) -> tuple[str, int, int]:
    """The normaliser, the images a device holds and the group count (1 unless group norm); a
    typed NormcoreError for what cannot be used."""
    kind = state["normaliser"]
    if kind not in NORMALISERS:
        raise SettingError(f"normaliser: expected one of {NORMALISERS}, got {kind!r}")
    per_device = _whole(state, "per_device", "images a device holds", 1, IMAGES)
    groups = {"layer": 1, "instance": CHANNELS, "batch": 1}.get(kind)
    if groups is None:
        groups = _whole(state, "groups", "groups", 1, CHANNELS)
        if CHANNELS % groups:
            raise SettingError(
                f"groups: expected a whole number that divides the {CHANNELS} channels, "
                f"got {groups}"
            )
    return kind, per_device, groups


def _layer(kind: str, per_device: int, groups: int, side: int) -> Any:
    """The normaliser the network would hold after a convolution of `side` x `side` pixels."""
    if kind == "batch":
        return GhostBatchNorm.create(CHANNELS, per_device * side * side)
    return GroupNorm.create(CHANNELS, groups)


def _pooled(kind: str, per_device: int, groups: int, side: int) -> int:
    layer = _layer(kind, per_device, groups, side)
    if kind == "batch":  # every pixel of the device's images a row, every channel a feature
        return int(layer.statistic_count(np.zeros((per_device * side * side, CHANNELS))))
    return int(layer.statistic_count(np.zeros((1, CHANNELS, side, side))))


def ratios(case: dict[str, Any], per_device: int) -> np.ndarray:
    """Each device's variance of each channel over the whole sample's, (devices, channels), as
    `convnet.variance_ratios` reads them: the first ``64 // per_device * per_device`` images, cut
    into devices in order."""
    devices = IMAGES // per_device
    used = devices * per_device
    m = np.array(case["means"])[:used]
    v = np.array(case["variances"])[:used]

    def pooled_variance(means: np.ndarray, variances: np.ndarray) -> np.ndarray:
        centre = means.mean(axis=-2, keepdims=True)
        return (variances + (means - centre) ** 2).mean(axis=-2)

    whole = pooled_variance(m, v)  # (channels,)
    each = pooled_variance(
        m.reshape(devices, per_device, CHANNELS), v.reshape(devices, per_device, CHANNELS)
    )
    return each / whole


def figures(state: State, case: dict[str, Any]) -> dict[str, Any]:
    """normcore's figures for `state` (see the module's docstring); raises a NormcoreError for
    input that cannot be used, before any arithmetic."""
    kind, per_device, groups = parse(state)
    pooled = [_pooled(kind, per_device, groups, side) for side in SIDES]
    out: dict[str, Any] = {
        "pooled": pooled,
        "statistics": CHANNELS if kind == "batch" else per_device * groups,
    }
    if kind == "batch":
        r = ratios(case, per_device)
        out["devices"] = int(r.shape[0])
        out["ratio_mean"] = float(r.mean())
        out["ratio_spread"] = float(r.std(axis=0).mean())
        runs = case["accuracy"]["batch"].get(str(per_device))
    else:
        runs = case["accuracy"][kind] if groups == case["groups"] or kind != "group" else None
    if runs is not None:
        out["accuracy"] = [float(np.mean(runs)), float(np.min(runs)), float(np.max(runs))]
    return out


def choose(state: State, key: str, value: str) -> State:
    """The state with `key` set to `value` (a menu's choice or a box's text)."""
    choice_arg(key, "control", state)
    return {**state, key: value}


# ------------------------------------------------------------------ the node differential test
def _plans(rng: np.random.Generator) -> list[dict[str, Any]]:
    """Seeded random sequences of the reader's choices, on a case from untrained copies of
    the chapter's network (the arithmetic is the trained one's) with accuracies drawn here."""
    from normcore.widgets._node import TEXTS, pick

    accuracy = {
        "batch": {b: rng.uniform(0.5, 1, 2) for b in convnet.SIZES},
        **{k: rng.uniform(0.5, 1, 2) for k in ("layer", "instance", "group")},
    }
    context = case_data(convnet.build("batch", seeds=(0, 1)), convnet.digits_images()[0], accuracy)
    plans = []
    for _ in range(6):
        actions = []
        for _ in range(12):
            key = pick(rng, ["normaliser", "per_device", "per_device", "groups"])
            if key == "normaliser":
                value = pick(rng, list(NORMALISERS))
            elif rng.integers(4):
                value = str(int(rng.integers(1, 65 if key == "per_device" else 9)))
            else:
                value = pick(rng, TEXTS)
            actions.append(["choose", key, value])
        plans.append({"context": context, "start": initial(), "actions": actions})
    return plans


def _node() -> Any:
    from normcore.widgets._node import NodeModel

    return NodeModel("convnet-model.js", figures, _plans, actions={"choose": choose})


NODE = _node()
