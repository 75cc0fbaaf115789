"""Every chapter reads in JupyterLab as it does on the site, in a real browser.

The session's JupyterLab serves the working copy that `make lab` serves (tools/lab_book.py, with
jupyterlab-myst rendering the MyST). For each chapter:

* opened and left alone, it is not marked modified, closing it asks nothing, and its file on
  disk is unchanged;
* after Edit > Clear Outputs and Run > Run All Cells, it reads as on the site (the checks are in
  ``live.reads_like_the_site``, which every live test's ``chapter`` makes; the chapters that no
  widget test opens are run here).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import pytest

from .live import OPEN_TIMEOUT, Lab, chapter

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted(p.name for p in (ROOT / "book").glob("*.ipynb") if p.with_suffix(".md").exists())


def test_untouched_chapters_are_not_modified(browser: Any, lab: Lab) -> None:
    """Each chapter in turn, in one page: opened, its kernel up, then closed from the menu."""
    digests = {
        name: hashlib.sha256((lab.root / name).read_bytes()).hexdigest() for name in CHAPTERS
    }
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        page.goto(lab.url(CHAPTERS[0]))
        for name in CHAPTERS:
            if name != CHAPTERS[0]:
                page.evaluate(
                    "p => { window.jupyterapp.commands.execute('docmanager:open', {path: p}); }",
                    name,
                )
            page.wait_for_function(  # the chapter is open and its kernel has started
                "p => { const a = window.jupyterapp, w = a && a.shell.currentWidget;"
                " return w && w.context && w.context.path === p"
                " && w.sessionContext.session && w.sessionContext.session.kernel"
                " && w.sessionContext.session.kernel.status === 'idle'; }",
                arg=name,
                timeout=OPEN_TIMEOUT,
            )
            dirty = page.evaluate("() => window.jupyterapp.shell.currentWidget.context.model.dirty")
            assert not dirty, f"{name} opens already marked modified"
            page.locator(".lm-MenuBar-itemLabel", has_text="File").first.click()
            page.locator(".lm-Menu-itemLabel", has_text="Close Tab").first.click()
            page.wait_for_function(
                "() => !document.querySelector('.jp-NotebookPanel')"
                " || document.querySelector('.jp-Dialog')",
                timeout=OPEN_TIMEOUT,
            )
            assert page.locator(".jp-Dialog").count() == 0, (
                f"closing the untouched {name} asks: {page.locator('.jp-Dialog').inner_text()}"
            )
    finally:
        context.close()
        lab.shut_down_sessions()
    for name, digest in digests.items():
        now = hashlib.sha256((lab.root / name).read_bytes()).hexdigest()
        assert now == digest, f"opening {name} changed it"


def _opened_elsewhere() -> set[str]:
    """Chapters another live test already opens and runs through `chapter`, which makes the
    same reading checks (so each chapter is run once per session, not twice)."""
    names: set[str] = set()
    for test in Path(__file__).parent.glob("test_live_*.py"):
        names.update(re.findall(r"\"(\d\d-[\w-]+\.ipynb)\"", test.read_text(encoding="utf-8")))
    return names


@pytest.mark.parametrize("name", [c for c in CHAPTERS if c not in _opened_elsewhere()])
def test_chapter_reads_like_the_site(browser: Any, lab: Lab, name: str) -> None:
    with chapter(browser, lab, name):
        pass  # `chapter` checks the page once every cell has run
