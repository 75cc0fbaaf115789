"""normcore.book: the one rounding rule chapters apply before a figure reaches the page."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

import normcore.book
from normcore.book import below, bound, glue, keep, shown, table

pytestmark = pytest.mark.numeric  # figures from float arithmetic: make test-arith reruns it

BOOK = Path(__file__).resolve().parent.parent / "book"
ROLE = re.compile(r"\{glue:text\}`([A-Za-z0-9_]+)(?::([^`]+))?`")
GLUED = "application/papermill.record/text/plain"


@pytest.fixture
def glued(monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    seen: dict[str, object] = {}

    def fake_emit(name: str, value: object) -> None:
        seen[name] = value

    monkeypatch.setattr(normcore.book, "_emit", fake_emit)
    return seen


def test_glue_emits_what_myst_nb_glue_emits(monkeypatch: pytest.MonkeyPatch) -> None:
    """The output normcore.book writes is the one myst-nb's own glue writes (display=False)."""
    import IPython.display
    import myst_nb.ext.glue

    shown_outputs: list[tuple] = []

    def fake_display(*args, **kwargs) -> None:
        shown_outputs.append((args, kwargs))

    monkeypatch.setattr(IPython.display, "display", fake_display)
    monkeypatch.setattr(myst_nb.ext.glue, "ipy_display", fake_display)
    myst_nb.ext.glue.glue("x", 0.25, display=False)
    glue("x", 0.25, ".2f")
    assert len(shown_outputs) == 2 and shown_outputs[0] == shown_outputs[1]


def test_shown_is_the_value_as_the_prose_shows_it() -> None:
    assert shown(1.8756186212015271, ".4f") == 1.8756
    assert shown(1.875618621201526, ".4f") == 1.8756  # the last bits no longer matter
    assert repr(shown(2 / 3, ".3f")) == "0.667"
    assert repr(shown(3.3e-15, ".1e")) == "3.3e-15"
    assert shown(123456.0, ".3g") == 123000.0


def test_glue_rounds_floats_by_the_prose_spec(glued: dict[str, object]) -> None:
    glue("a", 0.1 + 0.2, ".4f")
    glue("b", np.float64(2 / 3), ".3f")
    glue("c", np.int64(7))
    glue("d", "words")
    assert glued == {"a": 0.3, "b": 0.667, "c": 7, "d": "words"}
    assert type(glued["b"]) is float and type(glued["c"]) is int


def test_glue_refuses_a_float_without_a_spec(glued: dict[str, object]) -> None:
    with pytest.raises(TypeError, match="format spec"):
        glue("a", 0.5)
    with pytest.raises(TypeError, match="format spec"):
        glue("b", np.float32(0.5))
    assert glued == {}


def test_keep_is_the_same_rule_in_significant_digits(glued: dict[str, object]) -> None:
    keep("a", 0.1 + 0.2)
    keep("b", 2 / 3, digits=3)
    assert glued == {"a": 0.3, "b": 0.667}


@pytest.mark.parametrize(
    ("value", "floor", "want"),
    [
        (3.3e-16, 1e-16, 1e-15),
        (1e-15, 1e-16, 1e-15),
        (0.0, 1e-16, 1e-16),
        (2e-17, 1e-15, 1e-15),
    ],
)
def test_below_gives_the_power_of_ten_just_above(glued, value, floor, want) -> None:
    below("gap", value, floor)
    assert glued["gap"] == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("value", [4e-16, 6e-16, -9e-16, 1e-14, 0.0])
def test_bound_shows_rounding_level_gaps_alike_above_the_floor(value) -> None:
    assert f"{bound(value, 1e-14):.0e}" == "1e-14"


def test_bound_keeps_the_power_of_ten_of_a_gap_above_the_floor() -> None:
    assert f"{bound(2.5e-9, 1e-12):.0e}" == "1e-08"


def test_table_formats_each_column_by_its_spec() -> None:
    t = table(
        ["name", "loss", "count"],
        [("plain", 0.123456, 3), ("batch", float("nan"), 4)],
        [None, ".4f", None],
    )
    html = t._repr_html_()
    assert ">loss</th>" in html and ">0.1235</td>" in html and ">—</td>" in html
    assert "0.123456" not in html and "0.1235" in repr(t)
    with pytest.raises(TypeError, match="format spec"):
        table(["x"], [(0.5,)])


def _stored_glue(path: Path) -> dict[str, str]:
    """Every figure a stored notebook glued: name -> the text stored for it."""
    out: dict[str, str] = {}
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if GLUED in data:
                name = output.get("metadata", {}).get("scrapbook", {}).get("name")
                text = data[GLUED]
                out[name] = "".join(text) if isinstance(text, list) else text
    return out


CHAPTERS = sorted(BOOK.glob("[0-9][0-9]-*.ipynb"))


@pytest.mark.parametrize("notebook", CHAPTERS, ids=lambda p: p.stem)
def test_every_stored_figure_has_no_more_digits_than_the_prose_shows(notebook: Path) -> None:
    """A glued float is stored exactly as the prose's finest format spec for it shows it: no
    full-precision float reaches a stored output that nbval compares."""
    prose = notebook.with_suffix(".md").read_text(encoding="utf-8")
    specs: dict[str, set[str]] = {}
    for name, spec in ROLE.findall(prose):
        specs.setdefault(name, set()).add(spec)
    for name, text in _stored_glue(notebook).items():
        try:
            value = float(text)
        except ValueError:
            continue  # a string figure
        if math.isfinite(value) and value == int(value) and "." not in text and "e" not in text:
            continue  # an integer
        if name not in specs:
            continue  # glued (through the rounding rule) but not quoted
        used = {s for s in specs[name] if s}
        assert used, f"{name} = {text}: a float the prose shows without a format spec"
        assert any(shown(value, s) == value for s in used), (name, text, used)
