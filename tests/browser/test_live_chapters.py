"""The widgets of chapters 6 and 7, live in JupyterLab in a real browser.

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
from normcore.data.subscribers import load_subscribers
from normcore.experiments import comparison
from normcore.experiments import rates as R

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
# Its widget averages the chapter's runs in the page (anywidget); on the built site
# tests/browser/test_site_comparison_widget.py drives it through 220 reader actions. Here, in
# JupyterLab, the kernel answers too, and its answer must be the page's.
def test_chapter6_comparison_live(browser: Any, lab: Lab, clock: dict[str, float]) -> None:
    from normcore.widgets import comparison_model as cm

    from .live import ANSWER_TIMEOUT, wait_for
    from .test_site_comparison_widget import READ, ROOT, check, expected

    answered = ("root => { const w = document.querySelector(root + ' .nc-where');"
                " return w !== null && w.dataset.runs === 'kernel'; }")
    scores = comparison.run_all().scores
    with chapter(browser, lab, "06-comparison.ipynb") as page:
        clock["ran"] = time.monotonic()
        page.wait_for_selector(f"{ROOT} .nc-readout [data-key]", timeout=ANSWER_TIMEOUT)
        state = {"arrangements": list(cm.LABELS), "seeds": list(comparison.SEEDS)}
        for label, kind, value in ((None, None, None), ("seed 1", "seed", 1),
                                   ("plain", "arrangement", "none"), ("seed 4", "seed", 4)):
            if label is not None:
                page.locator(ROOT).get_by_role("checkbox", name=label, exact=True).click()
                toggle = cm.toggle_seed if kind == "seed" else cm.toggle_arrangement
                state = toggle(state, value, False)
            assert wait_for(page, answered, ROOT, ANSWER_TIMEOUT), f"{label}: no kernel answer"
            check(page.evaluate(READ, ROOT), expected(state, scores), state, str(label),
                  runs="kernel")
            gap = page.locator(f"{ROOT} .nc-where [data-key=kernel-gap]")
            assert float(gap.get_attribute("data-value")) <= 1e-12, label


# ------------------------------------------------------------------------------ chapter 7
RATES = ".normcore-rates"


def rates_answer(rate: float, normalised: bool) -> dict[str, Any]:
    seed = R.RUN_SEEDS[0]
    run = R.train(seed, rate, normalised)
    want: dict[str, Any] = {"rate": rate, "normalised": "true" if normalised else "false",
                            "seed": seed}
    if run.refused:
        epoch, batch = run.refused_at
        return want | {"refused-epoch": epoch + 1, "refused-batch": batch + 1}
    test = load_subscribers()
    want |= {"loss": run.loss, "dead-units": R.dead_units(run.net),
             "accuracy": R.accuracy(R.predict(run.net, test.x_test), test.y_test)}
    if normalised:
        ways = R.three_ways(run.net)
        want |= {"batch-accuracy": ways.accuracy("batch"),
                 "shuffled-accuracy": ways.accuracy("shuffled"),
                 "changed-by-order": ways.changed_by_order}
    return want


def test_chapter7_rates_live(browser: Any, lab: Lab, clock: dict[str, float]) -> None:
    with chapter(browser, lab, "07-rates-and-leaks.ipynb") as page:
        clock["ran"] = time.monotonic()
        root = page.locator(RATES)
        expect(page, RATES, rates_answer(20.0, True))
        train = root.get_by_role("button", name="train", exact=True)

        # 1. without the batch layer, slider untouched: it shows 20, so it must train at 20
        # (the browser snaps 20 to the slider's grid, 10^1.3 = 19.95, and sends that back).
        # The plain network's values grow until normcore refuses them; the readout says where.
        root.get_by_label("batch layer", exact=True).uncheck()
        train.click()
        want = rates_answer(20.0, False)
        assert "refused-epoch" in want
        expect(page, RATES, want)

        # 2. one notch (0.05 in log10) down the slider with the keyboard, batch layer back on;
        # the network trains at the rate the slider sent, which the readout states in full
        root.locator(".noUi-handle").first.press("ArrowLeft")
        root.get_by_label("batch layer", exact=True).check()
        train.click()
        got = expect(page, RATES, {"rate": 10.0**1.25, "normalised": "true"}, rtol=1e-9)
        expect(page, RATES, rates_answer(float(got["rate"]), True))
