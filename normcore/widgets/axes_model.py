"""Chapter 4's explorer as data: the data, the normaliser and the group count, and normcore's
figures for them.

The state (synced with the page; ``js/axes-model.js`` is its JavaScript twin)::

    data     "rows" (an input of 4 rows, 3 features) | "images" (2 images, 4 channels, 3 x 3)
    axis     "batch" | "layer" | "rms" | "instance" | "group"
    groups   text: the group count (group norm only)

The image batch is chapter 4's `image_batch`, written into the widget once by `data_values` with
12 significant figures, so the page and the kernel read the same numbers on every machine.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from normcore.errors import SettingError
from normcore.experiments.axes import THREE_FEATURE_X, image_batch, image_check
from normcore.widgets._input import StateError, check_state, choice_arg, parse_number, strip

State = dict[str, Any]
IMAGE_SHAPE = (2, 4, 3, 3)
AXES = ("batch", "layer", "rms", "instance", "group")


def data_values() -> dict[str, list]:
    """The (rows, features) input and the image batch the explorer reads."""
    images = np.vectorize(lambda v: float(f"{v:.12g}"))(image_batch(IMAGE_SHAPE))
    return {"rows": THREE_FEATURE_X.tolist(), "images": images.tolist()}


def initial() -> State:
    return {"data": "rows", "axis": "layer", "groups": "2"}


def groups(state: State) -> int:
    """The group count typed; a typed error unless it is a whole number that divides 4."""
    value = parse_number(state["groups"], "groups")
    channels = IMAGE_SHAPE[1]
    if value != int(value) or value < 1 or channels % int(value):
        raise SettingError(
            f"groups: expected a whole number >= 1 that divides the {channels} "
            f"channels, got {strip(state['groups'])}"
        )
    return int(value)


def check(state: object) -> State:
    """`state` when it is an axes state (data, axis and groups as text, a data set and an axis
    the explorer offers); else a typed error."""
    s = check_state(state, {"data": str, "axis": str, "groups": str})
    if s["data"] not in ("rows", "images") or s["axis"] not in AXES:
        raise StateError(f"state: data {s['data']!r} or axis {s['axis']!r} is not offered")
    return s


def figures(state: State, values: dict[str, list]) -> dict[str, Any]:
    """The statistics' shape and count, the output on show, and the input gradient against
    the oracle (chapter 4's `image_check`). Raises a NormcoreError for what cannot be computed."""
    check(state)
    x = np.array(values[state["data"]], dtype=np.float64)
    count = groups(state) if state["axis"] == "group" else 2
    found = image_check(state["axis"], x, count)
    shown = found.output if x.ndim == 2 else found.output[0, 0]
    return {
        "output": shown.tolist(),
        "statistics_shape": list(found.statistics_shape),
        "count": found.count,
        "true_gap": found.true_gap,
        "largest_true": found.largest_true,
        "largest_sum": found.largest_sum,
        "centred": found.centred,
    }


def choose(state: State, key: str, value: str) -> State:
    choice_arg(key, "control", ("data", "axis", "groups"))
    return check({**check(state), key: value})


# ------------------------------------------------------------------ the node differential test
def _plans(rng: np.random.Generator) -> list[dict[str, Any]]:
    from normcore.widgets._node import TEXTS, pick

    context = data_values()
    plans = []
    for _ in range(6):
        actions = []
        for _ in range(12):
            key = pick(rng, ["data", "axis", "axis", "groups"])
            value = {
                "data": pick(rng, ["rows", "images"]),
                "axis": pick(rng, AXES),
            }.get(key, pick(rng, ["1", "2", "4", "3", *TEXTS[:4]]))
            actions.append(["choose", key, value])
        plans.append({"context": context, "start": initial(), "actions": actions})
    return plans


def _node() -> Any:
    from normcore.widgets._node import NodeModel

    # the input gradient's gap to the oracle is a finite difference's rounding error
    loose = dict.fromkeys(("true_gap",), 1e-8)
    return NodeModel("axes-model.js", figures, _plans, loose, {"choose": choose})


NODE = _node()
