"""Chapter 5's widget as data: three direction lengths, a learning rate, one step compared.

The state (synced with the page; ``js/weightnorm-model.js`` is its JavaScript twin)::

    lengths        [str, str, str]   the three directions' lengths, as typed
    learning_rate  str               the learning rate (the step's size), as typed

The case (five people of the crowd, their labels, the three unit directions and the biases) is
chapter 5's `normcore.experiments.weightnorm.make_case`, written into the widget once as
`case_data()` with 12 significant figures, so that the page and the kernel start from the same
numbers on every machine. `figures` rebuilds the case with the lengths typed and takes one step
of each layer with the experiment's own `one_step`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from normcore.dense import Dense, WeightNormDense, direction_length
from normcore.errors import ShapeError, ZeroDirectionError
from normcore.experiments import weightnorm
from normcore.widgets._input import check_index, check_state, parse_number, real_matrix

State = dict[str, Any]
LIMIT = 1000.0  # the largest length or learning rate the widget takes


def _round(a: Any) -> list:
    return np.vectorize(lambda v: float(f"{v:.12g}"))(np.asarray(a, dtype=np.float64)).tolist()


def case_data() -> dict[str, list]:
    """The case's numbers: x (5, 2), y (5,), unit directions (2, 3), bias (3,)."""
    case = weightnorm.make_case(weightnorm.LENGTHS)
    direction = np.asarray(case.weightnorm.direction)
    return {
        "x": _round(case.x),
        "y": _round(case.y),
        "unit": _round(direction / direction_length(direction)),
        "bias": _round(case.weightnorm.bias),
    }


def number_text(value: float) -> str:
    """A number as the widget's box shows it: every digit Python needs to read it back exactly
    (``2.5``, ``1``, ``0.30000000000000004``), so the widget computes with the number given."""
    value = float(value)
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def initial(
    lengths: Any = weightnorm.LENGTHS, learning_rate: Any = weightnorm.LEARNING_RATE
) -> State:
    """The state for three direction `lengths` and a `learning_rate`; a typed error for anything
    else (two or four lengths, NaN, complex, text, a length the widget would refuse)."""
    given = real_matrix(lengths, "lengths")
    if given.shape != (3,):
        raise ShapeError(f"lengths: expected three lengths, got shape {given.shape}")
    rate = real_matrix(learning_rate, "learning rate")
    if rate.shape != ():
        raise ShapeError(f"learning rate: expected one number, got shape {rate.shape}")
    state = {"lengths": [number_text(v) for v in given], "learning_rate": number_text(rate)}
    parse(state)  # refuses a zero length or a number beyond LIMIT before anything is shown
    return state


def parse(state: State) -> tuple[np.ndarray, float]:
    """The lengths and learning rate typed; a typed NormcoreError for what cannot be used."""
    check_state(state, {"lengths": [str], "learning_rate": str})
    if len(state["lengths"]) != 3:
        raise ShapeError(f"lengths: expected three lengths, got {len(state['lengths'])}")
    lengths = np.array(
        [parse_number(t, f"length {i + 1}", LIMIT) for i, t in enumerate(state["lengths"])]
    )
    for i, v in enumerate(lengths):
        if v == 0:
            raise ZeroDirectionError(
                f"length {i + 1} is 0: a direction of length 0 has no unit vector to point along"
            )
    return lengths, parse_number(state["learning_rate"], "learning rate", LIMIT)


def figures(state: State, case: dict[str, list]) -> dict[str, Any]:
    """One step of the weight-normalised layer and of the dense layer, from the same gradient."""
    lengths, rate = parse(state)
    direction = np.array(case["unit"]) * lengths
    bias = np.array(case["bias"])
    layer = WeightNormDense(direction=direction, bias=bias)
    built = weightnorm.Case(
        x=np.array(case["x"]),
        y=np.array(case["y"]),
        weightnorm=layer,
        dense=Dense(weights=layer.effective_weights, bias=bias),
    )
    step = weightnorm.one_step(built, rate)
    return {
        "before": step.length_before.tolist(),
        "weightnorm": step.length_weightnorm.tolist(),
        "dense": step.length_dense.tolist(),
        "distance": step.distance,
    }


def set_length(state: State, i: int, text: str) -> State:
    check_state(state, {"lengths": [str]})
    check_index(i, len(state["lengths"]), "length")
    check_state({"text": text}, {"text": str})
    lengths = list(state["lengths"])
    lengths[i] = text
    return {**state, "lengths": lengths}


def set_learning_rate(state: State, text: str) -> State:
    check_state({"text": text}, {"text": str})
    return {**state, "learning_rate": text}


# ------------------------------------------------------------------ the node differential test
def _plans(rng: np.random.Generator) -> list[dict[str, Any]]:
    from normcore.widgets._node import TEXTS, pick

    context = case_data()
    plans = []
    for _ in range(6):
        actions = []
        for _ in range(12):
            text = f"{rng.uniform(0.1, 5):.4g}" if rng.integers(5) else pick(rng, TEXTS)
            if rng.integers(4):
                actions.append(["setLength", int(rng.integers(3)), text])
            else:
                actions.append(["setLearningRate", text])
        plans.append({"context": context, "start": initial(), "actions": actions})
    return plans


def _node() -> Any:
    from normcore.widgets._node import NodeModel

    python = {"setLength": set_length, "setLearningRate": set_learning_rate}
    return NodeModel("weightnorm-model.js", figures, _plans, actions=python)


NODE = _node()
