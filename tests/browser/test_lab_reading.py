"""Every chapter reads in JupyterLab as it does on the site, in a real browser.

The session's JupyterLab serves the working copy that `make lab` serves (tools/lab_book.py, with
jupyterlab-myst rendering the MyST). For each chapter:

* opened and left alone, it is not marked modified, closing it asks nothing, and its file on
  disk is unchanged;
* after Edit > Clear Outputs and Run > Run All Cells, no markdown cell shows a raw role
  (``{glue``, ``{numref``, ``{eval``, ``{doc``, ``{term``) or an unrendered directive, every
  number the site fills in is in the prose, every figure has drawn an image and shows its
  caption under it, and the cells the site hides are folded.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from .live import OPEN_TIMEOUT, Lab, _lab_book, chapter

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted(p.name for p in (ROOT / "book").glob("*.ipynb") if p.with_suffix(".md").exists())
RAW = re.compile(r"\{(glue|numref|eval|doc|term)[:}]|^\s*(:::|```)\s*\{", re.M)
HIDDEN = {"remove-cell", "hide-cell", "remove-input", "hide-input"}

_MARKDOWN = (
    "() => Array.from(document.querySelectorAll("
    "'.jp-NotebookPanel:not(.lm-mod-hidden) .jp-MarkdownCell'))"
    ".map(c => c.innerText)"
)
_MODEL = "() => window.jupyterapp.shell.currentWidget.content.model"


def _cells(lab: Lab, name: str) -> list[dict[str, Any]]:
    return json.loads((lab.root / name).read_text(encoding="utf-8"))["cells"]


def _figures(lab: Lab, name: str) -> list[tuple[int, str]]:
    """(index of the figure's code cell, its caption cell's text) in the working copy."""
    cells = _cells(lab, name)
    return [
        (i, "".join(cells[i + 1]["source"]))
        for i, cell in enumerate(cells)
        if cell["cell_type"] == "code" and "caption" in cell["metadata"].get("mystnb", {}).get(
            "figure", {})
    ]


def _numbers(name: str) -> list[str]:
    """Every figure the chapter's prose glues in, as the site prints it."""
    tool = _lab_book()
    book = ROOT / "book" / name
    glued = tool.glued_values(tool.nbformat.read(book, as_version=4))
    found = []
    for cell in json.loads(book.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "markdown":
            for key, _, spec in (m.partition(":") for m in re.findall(
                    r"\{glue:text\}`([^`]*)`", "".join(cell["source"]))):
                found.append(tool.format_glued(glued[key], spec))
    return found


def _words(markdown: str) -> str:
    """The first words of a caption as the page shows them (no emphasis marks, no math)."""
    plain = re.sub(r"\*\*|\*|`", "", markdown.split("$")[0])
    return " ".join(plain.split()[:8])


@pytest.mark.parametrize("name", CHAPTERS)
def test_untouched_chapter_is_not_modified(browser: Any, lab: Lab, name: str) -> None:
    path = lab.root / name
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        page.goto(lab.url(name))
        page.wait_for_selector(".jp-NotebookPanel .jp-Notebook", timeout=OPEN_TIMEOUT)
        page.wait_for_function(  # the kernel has started and told the page its spec
            "() => document.body.innerText.includes('Idle')", timeout=OPEN_TIMEOUT
        )
        dirty = page.evaluate("() => window.jupyterapp.shell.currentWidget.context.model.dirty")
        assert not dirty, f"{name} opens already marked modified"
        page.locator(".lm-MenuBar-itemLabel", has_text="File").first.click()
        page.locator(".lm-Menu-itemLabel", has_text="Close Tab").first.click()
        page.wait_for_function(
            "() => !document.querySelector('.jp-NotebookPanel')"
            " || document.querySelector('.jp-Dialog')", timeout=OPEN_TIMEOUT,
        )
        assert page.locator(".jp-Dialog").count() == 0, (
            f"closing the untouched {name} asks: {page.locator('.jp-Dialog').inner_text()}"
        )
    finally:
        context.close()
        lab.shut_down_sessions()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before, f"opening {name} changed it"


@pytest.mark.parametrize("name", CHAPTERS)
def test_chapter_reads_like_the_site(browser: Any, lab: Lab, name: str) -> None:
    figures = _figures(lab, name)
    hidden = sum(
        c["cell_type"] == "code" and bool(HIDDEN & set(c["metadata"].get("tags", [])))
        for c in _cells(lab, name)
    )
    with chapter(browser, lab, name) as page:
        shown = page.evaluate(_MARKDOWN)
        raw = [m.group(0) for text in shown for m in RAW.finditer(text)]
        assert not raw, f"{name} shows raw MyST after Run All: {raw[:5]}"
        prose = "\n".join(" ".join(text.split()) for text in shown)
        missing = [n for n in _numbers(name) if n not in prose]
        assert not missing, f"{name}: glued figures missing from the prose: {missing[:5]}"
        for i, caption in figures:
            assert _words(caption) in prose, f"{name}: no caption {_words(caption)!r} on the page"
            kinds = page.evaluate(
                f"() => Array.from(({_MODEL})().cells)[{i}].outputs.toJSON()"
                ".flatMap(o => Object.keys(o.data || {{}}))"
            )
            assert any(k.startswith("image/") for k in kinds), f"{name} cell {i} drew no figure"
        folded = page.locator(
            ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .jp-InputPlaceholder"
        ).count()
        assert folded == hidden, f"{name}: {folded} folded code cells, the site hides {hidden}"
