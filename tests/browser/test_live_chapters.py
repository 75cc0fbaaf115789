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

from .live import Lab, chapter, expect

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
COMPARISON = ".normcore-comparison"


def comparison_answer(arrangements: list[str], seeds: list[int], stride: float
                      ) -> dict[str, Any]:
    scores = comparison.compare(arrangements, seeds, comparison.EPOCHS, stride)
    want: dict[str, Any] = {"arrangements": ",".join(arrangements),
                            "seeds": [float(s) for s in seeds], "stride": stride}
    for name, s in scores.items():
        want |= {f"{name}:train_accuracy": s.train_accuracy.mean(),
                 f"{name}:held_accuracy": s.held_accuracy.mean(),
                 f"{name}:held_min": s.held_accuracy.min(),
                 f"{name}:held_max": s.held_accuracy.max(),
                 f"{name}:train_loss": s.train_loss.mean(),
                 f"{name}:held_loss": s.held_loss.mean()}
    return want


def test_chapter6_comparison_live(browser: Any, lab: Lab, clock: dict[str, float]) -> None:
    with chapter(browser, lab, "06-comparison.ipynb") as page:
        clock["ran"] = time.monotonic()
        root = page.locator(COMPARISON)
        expect(page, COMPARISON, comparison_answer(["none", "batch"], [0, 1], comparison.RATE))

        # 1. one other seed and five times the stride, then run
        root.get_by_label("seeds", exact=True).fill("2")
        root.get_by_label("stride", exact=True).fill("5")
        root.get_by_role("button", name="run", exact=True).click()
        expect(page, COMPARISON, comparison_answer(["none", "batch"], [2], 5.0))

        # 2. two other arrangements at that stride: the RMS network's values grow until
        # normcore refuses them, and the widget says so instead of a table
        root.get_by_label("arrangements", exact=True).select_option(["layer", "rms"])
        root.get_by_role("button", name="run", exact=True).click()
        with pytest.raises(nc.NormcoreError) as refused:
            comparison.compare(["layer", "rms"], [2], comparison.EPOCHS, 5.0)
        expect(page, COMPARISON, {"error": str(refused.value), "#text": "Cannot run that"})

        # 3. a tenth of that stride: both train
        root.get_by_label("stride", exact=True).fill("0.5")
        root.get_by_role("button", name="run", exact=True).click()
        got = expect(page, COMPARISON, comparison_answer(["layer", "rms"], [2], 0.5))
        assert "none:held_loss" not in got and "error" not in got


# Chapter 7's widget: tests/browser/test_site_rate_widget.py works it on the site and in Lab.
