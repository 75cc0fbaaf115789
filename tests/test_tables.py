"""normcore.tables: rendered tables that wrap and scroll instead of running off the page."""

from __future__ import annotations

import pytest

from normcore.tables import Table


def test_html_table_scrolls_in_its_own_box_and_escapes():
    t = Table(["layer", "answer"], [["Batch<Norm>", 1.23456], ["Layer", "a & b"]], caption="c")
    out = t._repr_html_()
    assert out.startswith('<div class="normcore-table" role="region" aria-label="c" tabindex="0"')
    assert 'style="overflow-x:auto' in out
    assert "white-space:normal" in out  # cells wrap, nothing is cut off
    assert "Batch&lt;Norm&gt;" in out and "a &amp; b" in out
    assert '<th scope="col"' in out and '<th scope="row"' in out
    assert "1.2346" in out and "<caption>c</caption>" in out


def test_text_twin_lines_up():
    text = repr(Table(["a", "bb"], [["x", 1.0], ["yyy", 22.5]], digits=1))
    assert text.splitlines() == ["a    bb", "x    1.0", "yyy  22.5"]


def test_ragged_rows_are_refused():
    with pytest.raises(ValueError, match="expected rows of 2 cells, got 1"):
        Table(["a", "b"], [["x"]])
