"""Random sequences of reader events on every widget in normcore.widgets.

Nothing a reader types or clicks may raise; the playground's readout must always match normcore's
own answer for the last valid state; and nothing typed is ever evaluated as code (a cell holding
an import that would plant a module in sys.modules must leave no module behind).
"""

from __future__ import annotations

import html.parser
import importlib
import sys
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("ipywidgets", reason="the widgets need ipywidgets (the book extra)")
import ipywidgets as widgets  # noqa: E402

SENTINEL = "normcore_fuzz_planted"
TEXTS = [
    "", " ", "0", "1", "-3.5", "1e999", "-1e999", "nan", "NaN", "inf", "1,5", "=1+1", "1e9",
    "1e10", "2.5e-300", "５", "0x10", "1_000", "  7  ", "1/3", "__import__(\"os\")",
    f"__import__('sys').modules.setdefault('{SENTINEL}', 1)", "9" * 400, "x" * 100_000,
    "1, 7\n1, 9", "[[1, 2], [3, 4]]", "\x00", "¼", "-0",
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


class Cells(html.parser.HTMLParser):
    """Collects the data-* attributes of every <td> in the playground's readout."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[dict[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "td":
            self.cells.append({k: v or "" for k, v in attrs})


def readout_answer(readout: str, shape: tuple[int, int]) -> np.ndarray:
    parser = Cells()
    parser.feed(readout)
    out = np.full(shape, np.nan)
    for cell in parser.cells:
        if "data-answer" in cell:
            r, j = (int(v) for v in cell["data-answer"].split(","))
            out[r, j] = float(cell["data-value"])
    return out


# ------------------------------------------------------------------------------ playground
EVENTS = st.one_of(
    st.tuples(st.just("cell"), st.integers(0, 7), st.integers(0, 3), st.sampled_from(TEXTS)),
    st.tuples(st.just("check"), st.integers(0, 7), st.booleans()),
    st.tuples(st.just("kind"), st.sampled_from(["batch", "layer", "rms"])),
    st.tuples(st.just("purpose"), st.sampled_from(["training", "predicting"])),
    st.tuples(st.sampled_from(["undo", "step", "reset", "+row", "-row", "+feature",
                               "-feature"])),
    st.tuples(st.just("slider"), st.integers(0, 3), st.floats(-10, 10)),
)


@WIDGET_SETTINGS
@given(events=st.lists(EVENTS, min_size=1, max_size=25))
def test_playground_never_raises_and_reads_true(events: list[tuple]) -> None:
    pg_module = module_or_skip("playground")
    import normcore as nc

    pg = pg_module.playground()
    model = pg.full_block()
    for event in events:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            apply_event(pg, event)
        assert pg.last_exception is None, repr(pg.last_exception)
        # the block on show is each cell's last valid number, parsed by float() alone
        model = track(model, pg, event)
        np.testing.assert_array_equal(pg.full_block(), model)
        block = pg.current_block()
        if block.shape[0] == 0:
            assert "No rows are switched on" in pg.readout.value
            continue
        want = pg.current_layer().forward(block, pg.purpose).output
        got = readout_answer(pg.readout.value, block.shape)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        assert np.array_equal(pg.answer(), want)
        assert isinstance(pg.current_layer(), (nc.BatchNorm, nc.LayerNorm))
    assert SENTINEL not in sys.modules, "typed text was evaluated as code"


def apply_event(pg: Any, event: tuple) -> None:
    name = event[0]
    if name == "cell" and event[1] < pg.rows and event[2] < pg.features:
        pg.set_cell(event[1], event[2], event[3])
    elif name == "check" and event[1] < pg.rows:
        pg.row_checks[event[1]].value = event[2]
    elif name == "kind":
        pg.kind_toggle.value = event[1]
    elif name == "purpose":
        pg.purpose_toggle.value = event[1]
    elif name == "slider" and event[1] < pg.features:
        pg.scale_sliders[event[1]].value = event[2]
    elif name in ("undo", "step", "reset", "+row", "-row", "+feature", "-feature"):
        button = {
            "undo": pg.undo_button, "step": pg.step_button, "reset": pg.reset_button,
            "+row": pg.add_row_button, "-row": pg.remove_row_button,
            "+feature": pg.add_feature_button, "-feature": pg.remove_feature_button,
        }[name]
        button.click()


def track(model: np.ndarray, pg: Any, event: tuple) -> np.ndarray:
    """Our own idea of the block: float() of valid typed text, zeros for new rows/features."""
    if event[0] == "cell" and event[1] < model.shape[0] and event[2] < model.shape[1]:
        try:
            value = float(event[3]) if len(event[3]) <= 40 and event[3].strip() else None
        except ValueError:
            value = None
        if value is not None and np.isfinite(value) and abs(value) <= 1e9:
            model = model.copy()
            model[event[1], event[2]] = value
    if pg.full_block().shape != model.shape:  # a row or feature added or removed
        rows, features = pg.full_block().shape
        grown = np.zeros((rows, features))
        r, f = min(rows, model.shape[0]), min(features, model.shape[1])
        grown[:r, :f] = model[:r, :f]
        model = grown
    return model


def test_playground_all_rows_off_and_back() -> None:
    pg = module_or_skip("playground").playground()
    for check in pg.row_checks:
        check.value = False
    assert pg.answer() is None and "No rows" in pg.readout.value
    pg.undo_button.click()
    pg.step_button.click()
    assert pg.last_exception is None
    pg.row_checks[0].value = True
    assert pg.answer().shape == (1, pg.features)


# ------------------------------------------------------------------------- the other widgets
BUILDERS = {
    "axes": "axes_widget",
    "routes": "routes_widget",
    "shift_chart": "shift_chart",
    "rates": "rate_explorer",
}


def inputs(root: Any) -> list[Any]:
    """Every input widget under `root` (depth first), buttons included."""
    found, stack = [], [root]
    while stack:
        w = stack.pop()
        if isinstance(w, widgets.Box):
            stack.extend(w.children)
        elif isinstance(w, (widgets.ValueWidget, widgets.Button)):
            found.append(w)
        box = getattr(w, "box", None)
        if isinstance(box, widgets.Widget) and box is not w:
            stack.append(box)
    return found


def poke(w: Any, data: st.DataObject) -> None:
    if isinstance(w, widgets.Button):
        if w.description.lower() != "train":  # training a network per event is too slow
            w.click()
    elif isinstance(w, (widgets.Text, widgets.Textarea)):
        w.value = data.draw(st.sampled_from(TEXTS))
    elif isinstance(w, (widgets.Dropdown, widgets.ToggleButtons, widgets.RadioButtons)):
        w.index = data.draw(st.integers(0, len(w.options) - 1))
    elif isinstance(w, widgets.Checkbox):
        w.value = data.draw(st.booleans())
    elif isinstance(w, (widgets.BoundedIntText, widgets.IntSlider)):
        w.value = data.draw(st.integers(w.min, w.max))
    elif isinstance(w, (widgets.FloatSlider, widgets.FloatLogSlider)):
        w.value = data.draw(st.floats(w.min, w.max))


@pytest.mark.parametrize("name", sorted(BUILDERS))
@settings(WIDGET_SETTINGS, max_examples=25)
@given(data=st.data())
def test_widget_random_events(name: str, data: st.DataObject) -> None:
    module = module_or_skip(name)
    build = getattr(module, BUILDERS[name], None)
    if build is None:
        pytest.skip(f"normcore.widgets.{name}.{BUILDERS[name]} does not exist yet")
    w = build()
    targets = inputs(w)
    for _ in range(data.draw(st.integers(1, 8))):
        if not targets:
            break
        target = data.draw(st.sampled_from(targets))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            poke(target, data)
    assert SENTINEL not in sys.modules, "typed text was evaluated as code"
