"""Chapter 2's playground as data: its state, the reader's actions, and normcore's figures.

No widgets here. The state is a plain dictionary of JSON values, the same one the widget syncs
between the kernel and the page (``js/playground-model.js`` is its JavaScript twin)::

    texts      [[str]]     what each cell shows, as typed
    values     [[float]]   each cell's last valid number (a bad edit never changes the input)
    active     [bool]      which rows are switched on
    kind       "batch" | "layer" | "rms"
    mode    "train" | "eval"
    scale, shift                       one number per feature (the sliders)
    running_mean, running_var     the batch layer's running statistics
    steps      int         running-statistics updates by Step since the layer was fresh
    note       str | None  what the last action has to say (a key; the page words it)

Every action takes a state and returns a new one; the state passed in is never changed.
`figures(state)` is every number the readout shows, computed by normcore's layers with one
forward pass.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from normcore.batch import BatchNorm
from normcore.errors import MagnitudeError, ModeError, NormcoreError, SettingError, ShapeError
from normcore.experiments.shift import fold_in
from normcore.layer import LayerNorm, RMSNorm
from normcore.mode import EVAL, TRAIN
from normcore.standardise import standardise
from normcore.widgets._input import (
    StateError,
    check_index,
    check_state,
    number_arg,
    parse_number,
    real_matrix,
)
from normcore.worked import FOUR_ROWS

State = dict[str, Any]

MAX_ROWS = 8
MAX_FEATURES = 4
LIMIT = 1e9  # the largest magnitude a cell accepts
EPSILON = 1e-5
MOMENTUM = 0.9
KINDS = ("batch", "layer", "rms")
MODES = (TRAIN, EVAL)


def cell_name(i: int, j: int) -> str:
    return f"row {i + 1}, feature {j + 1}"


def parse_cell(text: object, i: int = 0, j: int = 0) -> float:
    """The number typed into cell (i, j); a typed NormcoreError when it is not one we can use."""
    return parse_number(text, cell_name(i, j), LIMIT)


def _cell_text(value: float) -> str:
    return repr(float(value)) if value != int(value) else str(int(value))


def initial(x: Any = None, kind: str = "batch", mode: str = TRAIN) -> State:
    """A fresh layer over the input `x` (default: the four worked rows), every row switched on."""
    values = real_matrix(FOUR_ROWS if x is None else x)
    if (
        values.ndim != 2
        or not (1 <= values.shape[0] <= MAX_ROWS)
        or not (1 <= values.shape[1] <= MAX_FEATURES)
    ):
        raise ShapeError(
            f"x: expected 1 to {MAX_ROWS} rows of 1 to {MAX_FEATURES} numbers, "
            f"got shape {values.shape}"
        )
    if np.max(np.abs(values)) > LIMIT:
        raise MagnitudeError(f"x: expected numbers within ±{LIMIT:.0e}")
    _check_kind(kind)
    _check_mode(mode)
    rows, features = values.shape
    return {
        "texts": [[_cell_text(v) for v in row] for row in values],
        "values": values.tolist(),
        "active": [True] * rows,
        "kind": kind,
        "mode": mode,
        "scale": [1.0] * features,
        "shift": [0.0] * features,
        "running_mean": [0.0] * features,
        "running_var": [1.0] * features,
        "steps": 0,
        "note": None,
    }


# ----------------------------------------------------------------------------- reading a state
SPEC = {
    "texts": [[str]],
    "values": [[float]],
    "active": [bool],
    "kind": str,
    "mode": str,
    "scale": [float],
    "shift": [float],
    "running_mean": [float],
    "running_var": [float],
    "steps": int,
    "note": (str, None),
}


def _check_kind(kind: object) -> None:
    if kind not in KINDS:
        raise SettingError(f"kind: expected one of 'batch', 'layer', 'rms', got {kind!r}")


def _check_mode(mode: object) -> None:
    if mode not in MODES:
        raise ModeError(f"mode: expected 'train' or 'eval', got {mode!r}")


def check(state: object) -> State:
    """`state` when it is a playground state (the keys above, of those kinds, one shape: rows x
    features with 1 to MAX_ROWS rows and 1 to MAX_FEATURES features); else a typed error."""
    s = check_state(state, SPEC)
    rows, features = len(s["texts"]), len(s["scale"])
    if not (1 <= rows <= MAX_ROWS and 1 <= features <= MAX_FEATURES):
        raise ShapeError(f"state: expected 1 to {MAX_ROWS} rows of 1 to {MAX_FEATURES} cells")
    if (
        len(s["values"]) != rows
        or len(s["active"]) != rows
        or any(len(r) != features for r in s["texts"] + s["values"])
        or any(len(s[k]) != features for k in ("shift", "running_mean", "running_var"))
    ):
        raise ShapeError("state: texts, values, active and the per-feature lists disagree in shape")
    if min(s["running_var"]) < 0:
        raise StateError("state: a running variance below zero")
    _check_kind(s["kind"])
    _check_mode(s["mode"])
    return s


def input_rows(state: State) -> np.ndarray:
    """The rows switched on: the input x the layer normalises (possibly with no rows)."""
    check(state)
    values = np.array(state["values"], dtype=np.float64).reshape(len(state["values"]), -1)
    return values[np.array(state["active"], dtype=bool)]


def layer(state: State) -> BatchNorm | LayerNorm | RMSNorm:
    """The normcore layer for the state (its scale, shift and running statistics)."""
    scale, shift = np.array(state["scale"]), np.array(state["shift"])
    if state["kind"] == "batch":
        return BatchNorm(
            scale=scale,
            shift=shift,
            eps=EPSILON,
            momentum=MOMENTUM,
            running_mean=np.array(state["running_mean"]),
            running_var=np.array(state["running_var"]),
        )
    cls = LayerNorm if state["kind"] == "layer" else RMSNorm
    return cls(scale=scale, shift=shift, eps=EPSILON)


def errors(state: State) -> list[str]:
    """Why each cell whose text is not a usable number was set aside, one sentence each."""
    found = []
    for i, row in enumerate(check(state)["texts"]):
        for j, text in enumerate(row):
            try:
                parse_cell(text, i, j)
            except NormcoreError as error:
                found.append(str(error))
    return found


def figures(state: State) -> dict[str, Any]:
    """Every number the readout shows, by normcore, with one forward pass of the layer.

    Keys: ``rows_on`` (the rows switched on), ``output`` (rows on x features, or None when no
    row is on) and ``gap`` (largest |output - input|); for the batch layer ``batch_mean``,
    ``batch_variance``, ``batch_divisor``, ``batch_share`` (variance / (variance + ε)),
    ``running_mean``, ``running_var``, ``running_divisor``; for layer and RMS norm
    ``row_mean`` (layer only), ``row_variance`` (RMS: the mean square), ``row_divisor``.
    """
    x = input_rows(state)
    out: dict[str, Any] = {"rows_on": [i for i, on in enumerate(state["active"]) if on]}
    if x.shape[0] == 0:
        out.update(output=None, gap=None)
        return out
    nl = layer(state)
    response = nl.forward(x, state["mode"])
    out["output"] = response.output.tolist()
    out["gap"] = float(np.max(np.abs(response.output - x)))
    if state["kind"] == "batch":
        # The batch's statistics: handed back by a training pass; read by the routine itself
        # when the pass was a predicting one (it standardised by the running statistics).
        if state["mode"] == TRAIN:
            mean, variance = response.statistics.mean, response.statistics.variance
            divisor = response.statistics.divisor
        else:
            st = standardise(x, (0,), EPSILON)
            mean, variance, divisor = st.mean[0], st.variance[0], st.divisor[0]
        out.update(
            batch_mean=mean.tolist(),
            batch_variance=variance.tolist(),
            batch_divisor=divisor.tolist(),
            batch_share=(variance / (variance + EPSILON)).tolist(),
            running_mean=nl.running_mean.tolist(),
            running_var=nl.running_var.tolist(),
            running_divisor=nl.running_divisor.tolist(),
        )
    else:
        st = standardise(x, (-1,), EPSILON, centre=state["kind"] == "layer")
        if st.mean is not None:
            out["row_mean"] = st.mean[:, 0].tolist()
        out.update(row_variance=st.variance[:, 0].tolist(), row_divisor=st.divisor[:, 0].tolist())
    return out


# ------------------------------------------------------------------------------------- actions
# The page's actions are the JavaScript ones (js/playground-model.js); these are Lab's "drive
# from code" API and the browser tests' oracle of the page's states, held to the JavaScript over
# every node plan (tests/js/test_models.py). Each is a check of its arguments and an edit of the
# state: the numbers Undo and Step put in come from normcore (`figures`, and a step of the
# state's layer), never from arithmetic written here.
FRESH = {"scale": 1.0, "shift": 0.0, "running_mean": 0.0, "running_var": 1.0}


def _edited(state: State, note: str | None = None, **changes: Any) -> State:
    """A copy of `state` (checked) with `changes` made and `note` said."""
    new = copy.deepcopy(check(state))
    new.update(copy.deepcopy(changes), note=note)
    return new


def _batch_only(state: State, action: str) -> str | None:
    """Why the batch-layer action `action` does nothing on `state` (a note), or None."""
    if not any(check(state)["active"]):
        return f"{action}-needs-rows"
    return None if state["kind"] == "batch" else f"{action}-not-batch"


def set_cell(state: State, i: int, j: int, text: str) -> State:
    """Type `text` into cell (i, j): shown as typed; used only if it is a number we can use."""
    check_index(i, len(check(state)["texts"]), "row")
    check_index(j, len(state["scale"]), "feature")
    if not isinstance(text, str):
        raise StateError(f"{cell_name(i, j)}: expected text, got {type(text).__name__}")
    new = _edited(state)
    new["texts"][i][j] = text
    try:
        new["values"][i][j] = parse_cell(text, i, j)
    except NormcoreError:
        pass  # errors(state) says why; the cell keeps its last number
    return new


def set_active(state: State, i: int, on: bool) -> State:
    """Switch row i on or off."""
    check_index(i, len(check(state)["active"]), "row")
    if not isinstance(on, bool):
        raise StateError(f"on: expected True or False, got {on!r}")
    return _edited(state, active=[on if k == i else a for k, a in enumerate(state["active"])])


def set_kind(state: State, kind: str) -> State:
    """Choose the layer: batch, layer or RMS norm."""
    _check_kind(kind)
    return _edited(state, kind=kind)


def set_mode(state: State, mode: str) -> State:
    """Choose the mode: training or evaluation mode."""
    _check_mode(mode)
    return _edited(state, mode=mode)


def set_parameter(state: State, which: str, j: int, value: float) -> State:
    """Move feature j's scale or shift slider to `value`."""
    if which not in ("scale", "shift"):
        raise SettingError(f"which: expected 'scale' or 'shift', got {which!r}")
    check_index(j, len(check(state)["scale"]), "feature")
    value = number_arg(value, which, LIMIT)
    return _edited(state, **{which: [value if k == j else v for k, v in enumerate(state[which])]})


def undo(state: State) -> State:
    """Undo exactly: scale = the divisor √(σ²+ε) and shift = the mean the batch layer standardises
    by (the batch's own while training, the running statistics in evaluation mode), as `figures`
    reports them."""
    why = _batch_only(state, "undo")
    if why:
        return _edited(state, why)
    f = figures(state)
    by = "batch" if state["mode"] == TRAIN else "running"
    return _edited(state, f"undo-{state['mode']}", scale=f[f"{by}_divisor"], shift=f[f"{by}_mean"])


def step(state: State) -> State:
    """One real step with a zero gradient: normcore's step updates the running statistics."""
    why = _batch_only(state, "step")
    if why:
        return _edited(state, why)
    stepped = fold_in(layer(state), input_rows(state))
    return _edited(
        state,
        "step",
        running_mean=stepped.running_mean.tolist(),
        running_var=stepped.running_var.tolist(),
        steps=state["steps"] + 1,
    )


def fresh(state: State) -> State:
    """A fresh layer: scale 1, shift 0, running mean 0, running variance 1."""
    features = len(check(state)["scale"])
    return _edited(state, "fresh", steps=0, **{k: [v] * features for k, v in FRESH.items()})


def resize(state: State, rows: int = 0, features: int = 0) -> State:
    """Add (+1) or drop (-1) the last row or feature; new cells are 0, a new feature fresh."""
    check(state)
    whole = all(isinstance(v, int) and not isinstance(v, bool) for v in (rows, features))
    if not whole or rows not in (-1, 0, 1) or features not in (-1, 0, 1):
        raise StateError(
            f"resize: expected rows and features of -1, 0 or 1, got {rows}, {features}"
        )
    n_rows, n_features = len(state["texts"]) + rows, len(state["scale"]) + features
    if not (1 <= n_rows <= MAX_ROWS and 1 <= n_features <= MAX_FEATURES):
        return _edited(state, "size-limits")

    def fit(row: list, fill: Any) -> list:
        return (row + [fill] * n_features)[:n_features]

    texts = [fit(r, "0") for r in state["texts"]] + [["0"] * n_features]
    values = [fit(r, 0.0) for r in state["values"]] + [[0.0] * n_features]
    active = [*state["active"], True]
    per_feature = {k: fit(state[k], v) for k, v in FRESH.items()}
    return _edited(
        state, texts=texts[:n_rows], values=values[:n_rows], active=active[:n_rows], **per_feature
    )


# ------------------------------------------------------------------ the node differential test
JS_NAMES = {
    "set_cell": "setCell",
    "set_active": "setActive",
    "set_kind": "setKind",
    "set_mode": "setMode",
    "set_parameter": "setParameter",
}


def _plans(rng: np.random.Generator) -> list[dict[str, Any]]:
    """Random action sequences, each index fitted to the input's shape at that point."""
    from normcore.widgets._node import TEXTS, pick

    plans = []
    for _ in range(8):
        state = start = initial()
        actions = []
        for _ in range(30):
            rows, features = len(state["texts"]), len(state["scale"])
            name = pick(rng, list(JS_NAMES) + ["undo", "step", "fresh", "resize"])
            i, j = int(rng.integers(rows)), int(rng.integers(features))
            args: tuple = {
                "set_cell": (i, j, pick(rng, [*TEXTS, f"{rng.normal(0, 30):.4g}"])),
                "set_active": (i, bool(rng.integers(2))),
                "set_kind": (pick(rng, KINDS),),
                "set_mode": (pick(rng, MODES),),
                "set_parameter": (pick(rng, ["scale", "shift"]), j, float(rng.uniform(-10, 10))),
                "resize": pick(rng, [(1, 0), (-1, 0), (0, 1), (0, -1)]),
            }.get(name, ())
            state = globals()[name](state, *args)
            actions.append([JS_NAMES.get(name, name), *args])
        plans.append({"context": None, "start": start, "actions": actions})
    return plans


def _node() -> Any:
    from normcore.widgets._node import NodeModel

    python = {
        JS_NAMES.get(n, n): globals()[n] for n in [*JS_NAMES, "undo", "step", "fresh", "resize"]
    }
    return NodeModel("playground-model.js", lambda s, _c: figures(s), _plans, actions=python)


NODE = _node()
