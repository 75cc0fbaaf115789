"""Every JavaScript model held to normcore without a browser: seeded random action sequences run
through each widget's bundle under node, and every figure the page computes compared with
normcore's answer for the state the page reached (`figures(state)`, the kernel's side).

The models are found, not listed: every module of `normcore.widgets` that declares
``NODE = NodeModel(...)`` (see `normcore.widgets._node`) is tested, so a new widget joins by
declaring its own; and every ``*-model.js`` in ``js/`` must belong to one, so none goes
untested. Under CI=true a missing node fails these tests (the `oracle` fixture).
"""

from __future__ import annotations

import importlib
import math
import pkgutil
from typing import Any

import numpy as np
import pytest

import normcore.widgets
from js.node import run
from normcore.errors import NormcoreError
from normcore.widgets._esm import JS
from normcore.widgets._input import friendly
from normcore.widgets._node import NodeModel

DRIVER = """
const out = input.map(({context, start, actions}) => {
  let state = start;
  return actions.map(([name, ...args]) => {
    if (typeof m[name] !== "function") throw new Error(`no action ${name}`);
    state = m[name](state, ...args);
    try {
      return {state, figures: m.figures(state, context)};
    } catch (error) {
      if (!(error instanceof m.InputError)) throw error;
      return {state, error: error.message};
    }
  });
});
answer(out);
"""


def models() -> dict[str, NodeModel]:
    found = {}
    for info in pkgutil.iter_modules(normcore.widgets.__path__):
        module = importlib.import_module(f"normcore.widgets.{info.name}")
        node = getattr(module, "NODE", None)
        if isinstance(node, NodeModel):
            found[info.name] = node
    return found


MODELS = models()
pytestmark = pytest.mark.numeric  # normcore's side is float arithmetic: the matrix reruns it


def test_every_javascript_model_is_tested() -> None:
    tested = {m.js for m in MODELS.values()}
    for path in JS.glob("*-model.js"):
        assert path.name in tested, f"{path.name} has no NODE = NodeModel(...) in normcore.widgets"
    assert {
        "playground-model.js",
        "routes-model.js",
        "axes-model.js",
        "weightnorm-model.js",
        "comparison-model.js",
        "rates-model.js",
        "epsilon.js",
    } <= tested


def numbers(value: Any) -> list[float]:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return []
    if isinstance(value, (int, float)):
        return [float(value)]
    if isinstance(value, (list, tuple)):
        return [v for item in value for v in numbers(item)]
    if isinstance(value, dict):
        return [v for item in value.values() for v in numbers(item)]
    return []


def same(page: Any, want: Any, tolerance: float, where: str) -> None:
    if isinstance(want, (list, tuple)):
        assert isinstance(page, list) and len(page) == len(want), where
        for k, (p, w) in enumerate(zip(page, want, strict=True)):
            same(p, w, tolerance, f"{where}[{k}]")
    elif isinstance(want, dict):
        assert isinstance(page, dict) and sorted(page) == sorted(want), where
        for key in want:
            same(page[key], want[key], tolerance, f"{where}.{key}")
    elif isinstance(want, bool) or want is None or isinstance(want, str):
        assert page == want, f"{where}: page {page!r}, normcore {want!r}"
    else:
        assert isinstance(page, (int, float)) and not isinstance(page, bool), where
        assert math.isfinite(page) == math.isfinite(want), where
        assert abs(page - want) <= tolerance, f"{where}: page {page!r}, normcore {want!r}"


@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_javascript_model_computes_normcores_figures(oracle, name: str) -> None:
    model = MODELS[name]
    rng = np.random.default_rng(sorted(MODELS).index(name) + 12)
    plans = model.plans(rng)
    seen = run(oracle("node"), model.js, DRIVER, plans)
    checked = refused = 0
    for p, (plan, steps) in enumerate(zip(plans, seen, strict=True)):
        assert len(steps) == len(plan["actions"])
        replayed = plan["start"]
        for n, step in enumerate(steps):
            where = f"{name}, plan {p}, action {n + 1} {plan['actions'][n][:2]}"
            js_name, *args = plan["actions"][n]
            if model.actions:  # the Python "drive from code" actions reach the page's states
                replayed = model.actions[js_name](replayed, *args)
                same(
                    step["state"],
                    replayed,
                    1e-12 * max([1.0, *map(abs, numbers(replayed))]),
                    f"{where}: state",
                )
            try:
                want = model.figures(step["state"], plan["context"])
            except NormcoreError as error:
                assert step.get("error") == str(error), where
                assert friendly(step["error"]) == friendly(error), where
                refused += 1
                continue
            assert "error" not in step, f"{where}: the page refused ({step.get('error')})"
            scale = max([1.0, *map(abs, numbers(want))])
            assert sorted(step["figures"]) == sorted(want), where
            for key, value in want.items():
                tolerance = model.tolerance.get(key, 1e-12) * scale
                same(step["figures"][key], value, tolerance, f"{where}: {key}")
            checked += 1
    assert checked >= 20, f"{name}: only {checked} states had figures"
    return None
