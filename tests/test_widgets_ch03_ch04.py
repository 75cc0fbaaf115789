"""The widgets of chapters 3 and 4, driven without a browser: build, set values, read the
readout. Bad input must appear inside the readout, never as an exception."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from normcore.widgets.axes import axes_readout, axes_widget
from normcore.widgets.routes import parse_block, routes_widget


def is_error(readout: str) -> bool:
    return "Cannot compute" in readout


# -- chapter 3 ------------------------------------------------------------------------------


def test_routes_widget_opens_on_the_worked_four():
    w = routes_widget()
    text = w.readout.value
    assert not is_error(text)
    # seed 000's figures: naive error 2.0370 against a largest true slope of 1.0741
    assert "2.0370" in text and "1.0741" in text and "-0.9259" in text
    assert "wrong sign: <b>5</b> of 8" in text
    assert "Live in JupyterLab" in w.children[0].value


def test_routes_widget_typed_block_and_slope():
    w = routes_widget()
    w.source.value = "typed"
    w.typed.value = "2; 4; 9"
    w.slope.value = "typed"
    w.typed_slope.value = "1\n0\n-1"
    text = w.readout.value
    assert not is_error(text)
    # by hand (see tests/test_routes.py): first cell (3 - z1 * sum(dz)) / (3 s)
    s = np.sqrt(26 / 3 + 1e-5)
    z = (np.array([2.0, 4.0, 9.0]) - 5) / s
    first = (3 - z[0] * (z[0] - z[2])) / (3 * s)
    assert f"{first:.4f}" in text


@pytest.mark.parametrize(
    ("field", "typed", "words"),
    [
        ("typed", "1, x\n2, 3", "not a number"),
        ("typed", "1, 2\n3", "same number of entries"),
        ("typed", "1, nan\n2, 3", "not a finite number"),
        ("typed", "1e999, 2\n2, 3", "not a finite number"),
        ("typed", "", "at least one row"),
        ("typed", "__import__('os')", "not a number"),
        ("typed", "\n".join(["1"] * 20), "at most"),
        ("typed_slope", "1, 2", "shape (4, 2), got (1, 2)"),
    ],
)
def test_routes_widget_shows_bad_input_inside(field, typed, words):
    w = routes_widget()
    w.source.value = "typed"
    if field == "typed_slope":
        w.slope.value = "typed"
    getattr(w, field).value = typed
    assert is_error(w.readout.value)
    assert words in w.readout.value


def test_routes_widget_random_block_follows_size_and_seed():
    w = routes_widget()
    w.source.value = "random"
    w.rows.value, w.columns.value = 5, 3
    first = w.readout.value
    assert first.count("<th>row 5</th>") == 3 and "<th>unit 3</th>" in first
    w.seed.value = 7
    assert w.readout.value != first
    w.seed.value = 0
    assert w.readout.value == first


def test_routes_widget_recovers_after_an_error():
    w = routes_widget()
    w.source.value = "typed"
    w.typed.value = "oops"
    assert is_error(w.readout.value)
    w.typed.value = "1, 7\n1, 9\n7, 1\n23, 7"
    assert "2.0370" in w.readout.value


@settings(max_examples=50, deadline=None)
@given(st.text(max_size=40))
def test_parse_block_only_ever_raises_value_error(text):
    try:
        block = parse_block(text)
    except ValueError:
        return
    assert block.ndim == 2 and np.all(np.isfinite(block))


# -- chapter 4 ------------------------------------------------------------------------------


def test_axes_widget_opens_on_layer_norm_over_the_block():
    w = axes_widget()
    text = w.readout.value
    assert not is_error(text)
    assert "statistics' shape <b>(4,)</b>, 3 values each" in text
    # first row 1, 7, 4: mean 4, variance 6 -> -3 / sqrt(6 + 1e-5)
    assert f"{-3 / np.sqrt(6 + 1e-5):.4f}" in text


@pytest.mark.parametrize(
    ("data", "axis", "shape", "count"),
    [
        ("block", "batch", "(3,)", 4),
        ("block", "rms", "(4,)", 3),
        ("images", "batch", "(4,)", 18),
        ("images", "layer", "(2,)", 36),
        ("images", "instance", "(2, 4)", 9),
        ("images", "group", "(2, 2)", 18),
    ],
)
def test_axes_widget_statistics(data, axis, shape, count):
    w = axes_widget()
    w.data.value = data
    w.axis.value = axis
    text = w.readout.value
    assert not is_error(text)
    assert f"statistics' shape <b>{shape}</b>, {count} values each" in text
    assert ("no centring" in text) == (axis == "rms")


def test_axes_widget_shows_its_errors_inside():
    w = axes_widget()
    w.axis.value = "instance"
    assert is_error(w.readout.value) and "image batch" in w.readout.value
    w.data.value = "images"
    assert not is_error(w.readout.value)
    w.axis.value = "group"
    w.groups.value = 3
    assert is_error(w.readout.value) and "divides the 4 channels" in w.readout.value
    w.groups.value = 4  # one channel per group: instance norm's statistics
    assert "statistics' shape <b>(2, 4)</b>" in w.readout.value


def test_axes_readout_refuses_an_unknown_axis():
    with pytest.raises(ValueError):
        axes_readout("diagonal", np.ones((2, 2)))
