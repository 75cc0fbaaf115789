"""Random sequences of reader events on the widgets' models (normcore.widgets.*_model).

Every widget is page-computed now (anywidget): its Python model is what the kernel answers
with, and the browser tests (tests/browser/test_site_*) drive the pages themselves.

Nothing a reader types or clicks may raise; the playground's readout must always match normcore's
own answer for the last valid state; and nothing typed is ever evaluated as code (a cell holding
an import that would plant a module in sys.modules must leave no module behind).
"""

from __future__ import annotations

import importlib
import re
import sys
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("ipywidgets", reason="the widgets need ipywidgets (the book extra)")

SENTINEL = "normcore_fuzz_planted"
TEXTS = [
    "",
    " ",
    "0",
    "1",
    "-3.5",
    "1e999",
    "-1e999",
    "nan",
    "NaN",
    "inf",
    "1,5",
    "=1+1",
    "1e9",
    "1e10",
    "2.5e-300",
    "５",
    "0x10",
    "1_000",
    "  7  ",
    "1/3",
    '__import__("os")',
    f"__import__('sys').modules.setdefault('{SENTINEL}', 1)",
    "9" * 400,
    "x" * 100_000,
    "1, 7\n1, 9",
    "[[1, 2], [3, 4]]",
    "\x00",
    "¼",
    "-0",
]
WIDGET_SETTINGS = settings(
    max_examples=60,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def module_or_skip(name: str) -> Any:
    try:
        return importlib.import_module(f"normcore.widgets.{name}")
    except ModuleNotFoundError as exc:
        pytest.skip(f"normcore.widgets.{name} does not exist yet ({exc})")


# ------------------------------------------------------------------------------ playground
EVENTS = st.one_of(
    st.tuples(
        st.just("cell"),
        st.integers(0, 7),
        st.integers(0, 3),
        st.one_of(st.sampled_from(TEXTS), st.floats(-2e9, 2e9).map(repr), st.text(max_size=12)),
    ),
    st.tuples(st.just("check"), st.integers(0, 7), st.booleans()),
    st.tuples(st.just("kind"), st.sampled_from(["batch", "layer", "rms"])),
    st.tuples(st.just("mode"), st.sampled_from(["train", "eval"])),
    st.tuples(st.sampled_from(["undo", "step", "fresh", "+row", "-row", "+feature", "-feature"])),
    st.tuples(
        st.just("slider"),
        st.sampled_from(["scale", "shift"]),
        st.integers(0, 3),
        st.floats(-10, 10),
    ),
)
# ASCII digits only, and only spaces and tabs around them: the grammar the page and Python share
# (normcore.widgets._input). Python's own \d and str.strip() would also take '５' or '٣' and
# other Unicode spaces, which both readers refuse.
NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def usable(text: str) -> float | None:
    """Our own reading of a cell: a plain decimal number, finite, within ±1e9, else None."""
    if len(text) > 40 or not NUMBER.fullmatch(text.strip(" \t")):
        return None
    value = float(text.strip(" \t"))
    return value if np.isfinite(value) and abs(value) <= 1e9 else None


@WIDGET_SETTINGS
@given(events=st.lists(EVENTS, min_size=1, max_size=25))
def test_playground_never_raises_and_reads_true(events: list[tuple]) -> None:
    pm = module_or_skip("playground_model")
    import normcore as nc

    state = pm.initial()
    block = np.array(state["values"])
    for event in events:
        rows, features = block.shape
        name = event[0]
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            if name == "cell" and event[1] < rows and event[2] < features:
                state = pm.set_cell(state, event[1], event[2], event[3])
                value = usable(event[3])
                if value is not None:  # every usable number is taken, nothing else
                    block = block.copy()
                    block[event[1], event[2]] = value
                assert (value is None) == any(
                    e.startswith(f"row {event[1] + 1}, feature {event[2] + 1}")
                    for e in pm.errors(state)
                )
            elif name == "check" and event[1] < rows:
                state = pm.set_active(state, event[1], event[2])
            elif name in ("kind", "mode"):
                state = (pm.set_kind if name == "kind" else pm.set_mode)(state, event[1])
            elif name == "slider" and event[2] < features:
                state = pm.set_parameter(state, event[1], event[2], event[3])
            elif name in ("undo", "step", "fresh"):
                state = getattr(pm, name)(state)
            elif name[1:] in ("row", "feature"):
                sign = 1 if name[0] == "+" else -1
                state = pm.resize(
                    state, sign if name[1:] == "row" else 0, sign if name[1:] == "feature" else 0
                )
                n_rows, n_features = len(state["texts"]), len(state["scale"])
                grown = np.zeros((n_rows, n_features))
                r, f = min(n_rows, rows), min(n_features, features)
                grown[:r, :f] = block[:r, :f]
                block = grown
            figures = pm.figures(state)
        np.testing.assert_array_equal(np.array(state["values"]), block)
        on = block[np.array(state["active"], dtype=bool)]
        if on.shape[0] == 0:
            assert figures["output"] is None
            continue
        layer = pm.layer(state)
        assert isinstance(layer, (nc.BatchNorm, nc.LayerNorm, nc.RMSNorm))
        want = layer.forward(on, state["mode"]).output
        np.testing.assert_array_equal(np.array(figures["output"]), want)
    assert SENTINEL not in sys.modules, "typed text was evaluated as code"


def test_playground_all_rows_off_and_back() -> None:
    pm = module_or_skip("playground_model")
    state = pm.initial()
    for i in range(4):
        state = pm.set_active(state, i, False)
    assert pm.figures(state)["output"] is None
    state = pm.step(pm.undo(state))
    assert state["steps"] == 0 and state["note"] == "step-needs-rows"
    state = pm.set_active(state, 0, True)
    assert np.array(pm.figures(state)["output"]).shape == (1, 2)


# ------------------------------------------------------------- the page-computed widgets' models
@WIDGET_SETTINGS
@given(
    choices=st.lists(
        st.tuples(
            st.sampled_from(["source", "rows", "columns", "seed", "typed", "grad", "typed_grad"]),
            st.one_of(
                st.sampled_from(TEXTS + ["worked", "random", "typed", "counting", "ones"]),
                st.integers(-3, 20).map(str),
            ),
        ),
        max_size=8,
    )
)
def test_routes_model_answers_or_says_why(choices: list[tuple[str, str]]) -> None:
    from normcore.errors import NormcoreError
    from normcore.widgets import routes_model as rm

    state = rm.initial()
    for key, value in choices:
        state = rm.choose(state, key, value)
    try:
        f = rm.figures(state)
    except NormcoreError as error:
        assert str(error)  # a sentence, never a bare exception
    else:
        assert np.all(np.isfinite(f["true"])) and np.all(np.isfinite(f["oracle"]))
    assert SENTINEL not in sys.modules, "typed text was evaluated as code"


@WIDGET_SETTINGS
@given(rows=st.integers(1, 12), columns=st.integers(1, 6), data=st.data())
def test_routes_model_takes_every_valid_block(rows: int, columns: int, data) -> None:
    from normcore.widgets import routes_model as rm

    block = data.draw(
        st.lists(
            st.lists(st.floats(-1e3, 1e3), min_size=columns, max_size=columns),
            min_size=rows,
            max_size=rows,
        )
    )
    typed = "\n".join(", ".join(repr(v) for v in row) for row in block)
    f = rm.figures(rm.choose(rm.choose(rm.initial(), "source", "typed"), "typed", typed))
    assert np.array(f["true"]).shape == (rows, columns)


@WIDGET_SETTINGS
@given(
    lengths=st.lists(
        st.one_of(st.sampled_from(TEXTS), st.floats(-1e3, 1e3).map(repr)), min_size=3, max_size=3
    ),
    rate=st.one_of(st.sampled_from(TEXTS), st.floats(-10, 10).map(repr)),
)
def test_weightnorm_model_answers_or_says_why(lengths: list[str], rate: str) -> None:
    from normcore.errors import NormcoreError
    from normcore.widgets import weightnorm_model as wm

    state = {"lengths": lengths, "learning_rate": rate}
    valid = (
        all(usable(t) is not None and usable(t) != 0 for t in lengths)
        and usable(rate) is not None
        and all(abs(usable(t)) <= 1e3 for t in (*lengths, rate))
    )
    try:
        f = wm.figures(state, wm.case_data())
    except NormcoreError:
        assert not valid, f"valid input refused: {state}"
    else:
        assert valid and np.isfinite(f["distance"])


@WIDGET_SETTINGS
@given(
    data=st.sampled_from(["rows", "images"]),
    axis=st.sampled_from(["batch", "layer", "rms", "instance", "group"]),
    groups=st.one_of(st.sampled_from(TEXTS), st.integers(-2, 9).map(str)),
)
def test_axes_model_answers_or_says_why(data: str, axis: str, groups: str) -> None:
    from normcore.errors import NormcoreError
    from normcore.widgets import axes_model as am

    state = {"data": data, "axis": axis, "groups": groups}
    count = usable(groups)
    valid = not (data == "rows" and axis in ("instance", "group")) and (
        axis != "group"
        or (count is not None and count == int(count) and count >= 1 and 4 % int(count) == 0)
    )
    try:
        f = am.figures(state, am.data_values())
    except NormcoreError:
        assert not valid, f"valid choice refused: {state}"
    else:
        assert valid and np.all(np.isfinite(f["output"]))
