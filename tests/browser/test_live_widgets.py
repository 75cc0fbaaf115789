"""Chapter 2's playground, live in JupyterLab in a real browser: one widget, two answers.

JupyterLab runs on 127.0.0.1 with a token, over a temporary copy of book/ (the session's `lab`
fixture). The test opens book/02-worked-column.ipynb, runs every cell, then works the playground
in the page: types into a cell (a bad text, then a number), switches Batch to Layer and RMS, a
row off, presses Undo exactly and Step. After each action the page's figures (computed in the
page) are held to normcore's, computed here by the widget's Python model; the widget must say
that it runs on the kernel, and the kernel's answer, shown beside the page's, must agree with it.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest

from normcore.widgets import playground_model as pm

from .live import ANSWER_TIMEOUT, Lab, chapter, wait_for
from .test_site_widgets import READ, compare

CHAPTER = "02-worked-column.ipynb"
ROOT = ".nc-playground"
# the kernel has answered the state on show (its token and state match the page's)
ANSWERED = (
    "root => { const w = document.querySelector(root + ' .nc-where');"
    " return w !== null && w.dataset.runs === 'kernel'; }"
)


def kernel_gap(page: Any) -> float:
    return float(
        page.locator(f"{ROOT} .nc-where [data-key=kernel-gap]").get_attribute("data-value")
    )


def check(page: Any, state: pm.State, where: str) -> None:
    wait_for(page, ANSWERED, ROOT, ANSWER_TIMEOUT)
    compare(page.evaluate(READ, ROOT), state, where, runs="kernel")
    answer = pm.figures(state)["output"]
    scale = float(np.abs(np.asarray(answer)).max()) if answer else 1.0
    assert kernel_gap(page) <= 1e-12 * max(scale, 1.0), where


def test_playground_live(browser: Any, lab: Lab) -> None:
    started = time.monotonic()
    with chapter(browser, lab, CHAPTER) as page:
        ran = time.monotonic()
        page.wait_for_selector(f"{ROOT} .nc-readout td[data-key]", timeout=ANSWER_TIMEOUT)
        state = pm.initial()
        check(page, state, "the opening view")

        def cell(i: int, j: int, text: str) -> None:
            box = page.locator(f"{ROOT} input.nc-cell[data-row='{i}'][data-feature='{j}']")
            box.fill(text)
            box.press("Enter")

        cell(0, 1, "abc")
        state = pm.set_cell(state, 0, 1, "abc")
        check(page, state, "abc typed")
        cell(0, 1, "8")
        state = pm.set_cell(state, 0, 1, "8")
        check(page, state, "8 typed")
        for kind in ("layer", "rms", "batch"):
            page.locator(f"{ROOT} .nc-toggle button[data-value={kind}]").click()
            state = pm.set_kind(state, kind)
            check(page, state, kind)
        page.locator(f"{ROOT} .nc-grid input[type=checkbox]").nth(2).click()
        state = pm.set_active(state, 2, False)
        check(page, state, "row 3 off")
        for name, action in (("Undo exactly", pm.undo), ("Step", pm.step)):
            page.locator(ROOT).get_by_role("button", name=name, exact=True).click()
            state = action(state)
            check(page, state, name)
        assert max(pm.figures(state)["output"][0]) != 0  # not a trivial state
        print(f"\nchapter 2: run all {ran - started:.1f} s, actions {time.monotonic() - ran:.1f} s")


# (chapter, widget root, a control to change, its new value, how far the kernel's answer may be
# from the page's: the explorers' oracle is a finite difference whose last digits are rounding)
PAGE_WIDGETS = [
    ("03-backward.ipynb", ".nc-routes", "source", "random", 1e-6),
    ("04-rows-columns.ipynb", ".nc-axes", "axis", "batch", 1e-6),
    ("05-weight-norm.ipynb", ".nc-weightnorm", "length:1", "4", 1e-12),
    ("01-moving-target.ipynb", ".nc-shift", "batch", None, 0.0),
]


@pytest.mark.parametrize(
    ("notebook", "root", "key", "value", "tolerance"),
    PAGE_WIDGETS,
    ids=[w[0][:2] for w in PAGE_WIDGETS],
)
def test_page_widgets_answer_on_the_kernel_too(
    browser: Any, lab: Lab, notebook: str, root: str, key: str, value: str | None, tolerance: float
) -> None:
    with chapter(browser, lab, notebook) as page:
        page.wait_for_selector(f"{root} .nc-readout [data-key]", timeout=ANSWER_TIMEOUT)
        for step in range(2):
            assert wait_for(page, ANSWERED, root, ANSWER_TIMEOUT), (
                f"{notebook}: the widget does not say it runs on the kernel"
            )
            gap = page.locator(f"{root} .nc-where [data-key=kernel-gap]")
            if gap.count():
                assert float(gap.get_attribute("data-value")) <= tolerance, notebook
            else:  # figures as shown (chapter 1's), compared as text: equal
                assert "differ by at most" in page.locator(f"{root} .nc-where").inner_text()
            if step == 0:
                if value is None:
                    page.locator(f"{root} button[data-value={key}]").click()
                else:
                    field = page.locator(f"{root} .nc-form [data-key='{key}']")
                    if field.evaluate("e => e.tagName") == "SELECT":
                        field.select_option(value)
                    else:
                        field.fill(value)
                        field.press("Enter")
