"""Chapter 3's explorer as data: the reader's choices and normcore's figures for them.

The state (synced with the page; ``js/routes-model.js`` is its JavaScript twin)::

    source       "worked" | "random" | "typed"     the input x
    rows, columns, seed                            the random input's size and seed (text)
    typed        text: rows on lines (or split by ';'), numbers split by commas or spaces
    gradient        "counting" | "ones" | "random" | "typed"   the upstream gradient at the output
    typed_grad  text, as `typed`

The random input and gradient come from a small generator written the same way in Python and in
JavaScript (`seeded`), so the page and the kernel draw the same numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from normcore.errors import ShapeError
from normcore.experiments.routes import WORKED_X, compare_gradients, counting_grad
from normcore.widgets import _input
from normcore.widgets._input import (
    NotANumberError,
    StateError,
    check_state,
    choice_arg,
    parse_number,
    quoted,
    strip,
)

State = dict[str, Any]

#: The largest block the widget will take (the oracle runs two forward passes per cell).
MAX_ROWS, MAX_COLUMNS = 12, 6
LIMIT = 1e6
#: The largest seed the random block takes.
SEED_HIGH = 10**6


def initial() -> State:
    """The opening view: the worked four under the counting gradient."""
    return {
        "source": "worked",
        "rows": "4",
        "columns": "2",
        "seed": "0",
        "typed": "1, 7\n1, 9\n7, 1\n23, 7",
        "grad": "counting",
        "typed_grad": "1, 2\n3, 4\n5, 6\n7, 8",
    }


def seeded(seed: int, count: int, low: int, high: int) -> np.ndarray:
    """`count` numbers (k - low) / 100 with k drawn from 0..(high + low) by a 32-bit linear
    congruential generator started at `seed` (the same numbers in js/routes-model.js)."""
    s = seed & 0xFFFFFFFF
    out = []
    for _ in range(count):
        s = (1664525 * s + 1013904223) & 0xFFFFFFFF
        out.append(((s >> 8) % (high + low + 1) - low) / 100)
    return np.array(out)


def whole(text: str, name: str, low: int, high: int) -> int:
    """A whole number from `low` to `high` typed into the box `name`."""
    value = parse_number(text, name)
    if value != int(value) or not low <= value <= high:
        raise NotANumberError(
            f"{name}: expected a whole number from {low} to {high}, got {quoted(strip(text))}"
        )
    return int(value)


def parse_matrix(text: object, name: str = "input x") -> np.ndarray:
    """A matrix typed as rows on lines (or split by ';'), numbers split by commas or spaces: the
    one grammar of `normcore.widgets._input.parse_matrix`, within this explorer's limits."""
    return np.array(_input.parse_matrix(text, name, LIMIT, MAX_ROWS, MAX_COLUMNS), dtype=np.float64)


SPEC = {key: str for key in initial()}
SOURCES, GRADS = ("worked", "random", "typed"), ("counting", "ones", "random", "typed")


def check(state: object) -> State:
    """`state` when it is a routes state (every key of `initial`, as text, a source and a gradient
    the explorer offers); else a typed error."""
    s = check_state(state, SPEC)
    if s["source"] not in SOURCES or s["grad"] not in GRADS:
        raise StateError(
            f"state: source {quoted(s['source'])} or gradient {quoted(s['grad'])} is not offered"
        )
    return s


def input_rows(state: State) -> np.ndarray:
    check(state)
    if state["source"] == "worked":
        return WORKED_X.copy()
    if state["source"] == "random":
        rows = whole(state["rows"], "rows", 1, MAX_ROWS)
        columns = whole(state["columns"], "columns", 1, MAX_COLUMNS)
        seed = whole(state["seed"], "seed", 0, SEED_HIGH)
        return seeded(seed, rows * columns, 500, 1000).reshape(rows, columns)
    return parse_matrix(state["typed"])


def arriving(state: State, shape: tuple[int, int]) -> np.ndarray:
    if state["grad"] == "counting":
        return counting_grad(shape)
    if state["grad"] == "ones":
        return np.ones(shape)
    if state["grad"] == "random":
        seed = whole(state["seed"], "seed", 0, SEED_HIGH)
        return seeded(seed + 1, shape[0] * shape[1], 100, 100).reshape(shape)
    grad = parse_matrix(state["typed_grad"], "grad")
    if grad.shape != shape:
        raise ShapeError(
            f"gradient: expected the shape of x, {shape[0]} x {shape[1]}, "
            f"got {grad.shape[0]} x {grad.shape[1]}"
        )
    return grad


def figures(state: State) -> dict[str, Any]:
    """normcore's comparison for the state (batch layer, training): the collected, oracle and
    naive input gradients, and the figures under them. Raises a NormcoreError for unusable input."""
    x = input_rows(check(state))
    c = compare_gradients(x, arriving(state, x.shape), "batch")
    return {
        "true": c.true.tolist(),
        "oracle": c.oracle.tolist(),
        "naive": c.naive.tolist(),
        "true_gap": c.true_gap,
        "naive_error": c.naive_error,
        "largest_true": c.largest_true,
        "wrong_sign": int(np.count_nonzero(c.wrong_sign)),
        "cells": int(c.true.size),
        "true_sums": c.true_sums.tolist(),
        "naive_sums": c.naive_sums.tolist(),
    }


def choose(state: State, key: str, value: str) -> State:
    """The reader sets one control."""
    choice_arg(key, "control", SPEC)
    check_state(state, SPEC)
    return check_state({**state, key: value}, SPEC)


# ------------------------------------------------------------------ the node differential test
def _plans(rng: np.random.Generator) -> list[dict[str, Any]]:
    from normcore.widgets._node import TEXTS, pick

    def typed() -> str:
        rows, columns = int(rng.integers(1, 5)), int(rng.integers(1, 4))
        return "\n".join(
            ", ".join(f"{v:.3g}" for v in rng.normal(0, 5, columns)) for _ in range(rows)
        )

    plans = []
    for _ in range(6):
        actions = []
        for _ in range(12):
            key = pick(rng, list(SPEC))
            value = {
                "source": pick(rng, [*SOURCES, "elsewhere"]),
                "grad": pick(rng, GRADS),
                "typed": pick(rng, [typed(), typed(), *TEXTS[:4], "1 2\n3"]),
                "typed_grad": pick(rng, [typed(), typed(), "1, 2\n3, 4\n5, 6\n7, 8"]),
            }.get(key, pick(rng, ["1", "2", "3", "4", "0", "13", "2.5", *TEXTS[:3]]))
            actions.append(["choose", key, value])
        plans.append({"context": None, "start": initial(), "actions": actions})
    return plans


def _node() -> Any:
    from normcore.widgets._node import NodeModel

    # The oracle column and the gaps against it are finite differences: (up - down) / 2h with
    # h = 1e-6 turns a last-bit difference between two forward passes into ~1e-10 of the scale.
    loose = dict.fromkeys(("oracle", "true_gap", "naive_error"), 1e-8)
    return NodeModel("routes-model.js", lambda s, _c: figures(s), _plans, loose, {"choose": choose})


NODE = _node()
