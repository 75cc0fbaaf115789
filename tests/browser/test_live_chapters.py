"""The widget of chapter 6, live in JupyterLab in a real browser.

Each test opens its chapter in the session's JupyterLab (a temporary copy of book/), clears and
runs every cell from the menus, then works the chapter's widget in the page as a reader would:
picks from a dropdown, types into a box, ticks a box, presses a button, moves a slider with the
keyboard. After each move it reads the readout back from the page (the widget writes every
number it shows, in full, into ``data-*`` attributes) and holds it against the answer computed
here for that state from normcore's public API or its experiment functions, never from the
widget's own rendering code.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import normcore as nc
from normcore.experiments import comparison

from .live import Lab, chapter

EPS = 1e-5
ORACLE_STEP = 1e-6


@pytest.fixture
def clock() -> Iterator[dict[str, float]]:
    """Marks for the report: set 'ran' when the chapter has run; prints the split at the end."""
    marks = {"start": time.monotonic()}
    yield marks
    end = time.monotonic()
    ran = marks.get("ran", end)
    print(f"\nrun all {ran - marks['start']:.1f} s, reader actions {end - ran:.1f} s")


def oracle(objective: Any, x: np.ndarray) -> np.ndarray:
    return nc.finite_difference(objective, x, ORACLE_STEP)


# Chapters 3, 4 and 5: their widgets compute in the page (anywidget); tests/browser/
# test_live_widgets.py works each in JupyterLab against the kernel's answer, and
# tests/browser/test_site_widgets.py drives each through 220 reader actions on the built site.


# ------------------------------------------------------------------------------ chapter 6
# Its widget averages the chapter's runs in the page (anywidget); on the built site
# tests/browser/test_site_comparison_widget.py drives it through 220 reader actions. Here, in
# JupyterLab, the kernel answers too, and its answer must be the page's.
def test_chapter6_comparison_live(browser: Any, lab: Lab, clock: dict[str, float]) -> None:
    from normcore.widgets import comparison_model as cm

    from .live import ANSWER_TIMEOUT, wait_for
    from .test_site_comparison_widget import READ, ROOT, check, expected

    answered = (
        "root => { const w = document.querySelector(root + ' .nc-where');"
        " return w !== null && w.dataset.runs === 'kernel'; }"
    )
    scores = comparison.run_all().scores
    with chapter(browser, lab, "06-comparison.ipynb") as page:
        clock["ran"] = time.monotonic()
        page.wait_for_selector(f"{ROOT} .nc-readout [data-key]", timeout=ANSWER_TIMEOUT)
        state = {"variants": list(cm.LABELS), "seeds": list(comparison.SEEDS)}
        for label, kind, value in (
            (None, None, None),
            ("seed 1", "seed", 1),
            ("plain", "variant", "none"),
            ("seed 4", "seed", 4),
        ):
            if label is not None:
                page.locator(ROOT).get_by_role("checkbox", name=label, exact=True).click()
                toggle = cm.toggle_seed if kind == "seed" else cm.toggle_variant
                state = toggle(state, value, False)
            assert wait_for(page, answered, ROOT, ANSWER_TIMEOUT), f"{label}: no kernel answer"
            check(
                page.evaluate(READ, ROOT), expected(state, scores), state, str(label), runs="kernel"
            )
            gap = page.locator(f"{ROOT} .nc-where [data-key=kernel-gap]")
            assert float(gap.get_attribute("data-value")) <= 1e-12, label


# Chapter 7's widget: tests/browser/test_site_rate_widget.py works it on the site and in Lab.
