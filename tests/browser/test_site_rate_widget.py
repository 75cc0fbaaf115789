"""Chapter 7's rate widget on the BUILT site and live in JupyterLab, held to normcore's runs.

The widget offers every run of the chapter's sweep (four learning rates, plain or with the batch
layer, two runs each) and shows the figures stored for it when the chapter ran. On the site
(served from 127.0.0.1, no kernel, nothing may leave the machine) the test works it through 220
seeded random reader actions, with the slider's keys, its value, the checkbox and the run
buttons. After each, every figure on show is held to normcore's own answer for that choice,
computed here from the sweep's runs with the experiment's public functions (never the widget's
code), at the precision it is shown at; the controls must show the choice, and no console error
is allowed. In JupyterLab the kernel answers each choice too, and the gap it reports must be 0.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from normcore.experiments import rates as R

from .live import ANSWER_TIMEOUT, Lab, chapter, wait_for
from .test_site import site  # noqa: F401  (the served _build/html)
from .test_site_widgets import ACTIONS, Watched, page_or_skip

ROOT = ".nc-rates"
RATES = [f"{r:g}" for r in R.RATES]
READ = """root => {
  const box = document.querySelector(root);
  const figures = {};
  for (const e of box.querySelectorAll('.nc-readout [data-key]')) {
    figures[e.dataset.key] = e.textContent.trim();
  }
  const slider = box.querySelector('input[type=range]');
  const error = box.querySelector('.nc-message .nc-error');
  return {
    figures,
    hint: Array.from(box.querySelectorAll('.nc-readout .nc-hint'), e => e.textContent.trim()),
    where: box.querySelector('.nc-where').dataset.runs,
    error: error ? error.textContent.trim() : null,
    slider: {value: slider.value, label: slider.getAttribute('aria-label'),
             text: slider.getAttribute('aria-valuetext'),
             shown: box.querySelector('output').textContent.trim()},
    normalised: box.querySelector('input[type=checkbox]').checked,
    pressed: Array.from(box.querySelectorAll('.nc-toggle button[aria-pressed=true]'),
                        e => e.dataset.value),
  };
}"""


@cache
def sweep() -> dict[tuple[str, bool], R.SweepRow]:
    return {(f"{r.rate:g}", r.normalised): r for r in R.sweep()}


@cache
def expected(rate: str, normalised: bool, run: int) -> dict[str, Any]:
    """normcore's answer for one choice: key -> a number (shown to 4 decimals), a whole count,
    a text, or None for a figure of a chaotic setting (its digits depend on the computer)."""
    row = sweep()[(rate, normalised)]
    trained = row.runs[run - 1]
    if trained.refused:
        epoch, batch = trained.refused_at
        return {"refused_epoch": epoch + 1, "refused_batch": batch + 1}
    data = R.subscribers()
    chaotic = (normalised, float(rate)) in R.SENSITIVE
    figures: dict[str, Any] = {
        "loss": None if chaotic else trained.loss,
        "dead": f"{R.dead_units(trained.net)}/16",
        "accuracy": None
        if chaotic
        else R.accuracy(R.predict(trained.net, data.x_test), data.y_test),
    }
    if normalised:
        ways = R.three_ways(trained.net)
        figures |= {
            "batch_accuracy": None if chaotic else ways.accuracy("batch"),
            "shuffled_accuracy": None if chaotic else ways.accuracy("shuffled"),
            "changed_by_order": None if chaotic else ways.changed_by_order,
        }
    return figures


def check(got: dict[str, Any], state: dict[str, Any], where: str, runs: str = "page") -> None:
    rate, normalised, run = state["rate"], state["normalised"], state["run"]
    want = expected(rate, normalised, run)
    assert sorted(got["figures"]) == sorted(want), f"{where}: the page shows other figures"
    for key, value in want.items():
        text = got["figures"][key]
        if value is None:
            assert text == "chaotic", f"{where}: {key} shows {text!r}, not 'chaotic'"
        elif isinstance(value, str) or isinstance(value, (int, np.integer)):
            assert text == str(value), f"{where}: {key} shows {text!r}, normcore {value!r}"
        else:  # shown to 4 decimals: within half a unit of the last digit
            assert len(text.split(".")[-1]) == 4, f"{where}: {key} shows {text!r}"
            assert abs(float(text) - value) <= 5e-5 + 1e-12, (
                f"{where}: {key} shows {text!r}, normcore {value!r}"
            )
    chaotic = (normalised, float(rate)) in R.SENSITIVE
    assert bool(got["hint"]) == chaotic, f"{where}: the chaotic note is wrong"
    assert got["slider"] == {
        "value": str(RATES.index(rate)),
        "label": "learning rate",
        "text": rate,
        "shown": rate,
    }, where
    assert got["normalised"] == normalised and got["pressed"] == [str(run)], where
    assert got["error"] is None, where
    assert got["where"] == runs, f"{where}: the widget says it runs on {got['where']!r}"


def test_rate_widget_answers_in_the_page(browser: Any, site: str) -> None:  # noqa: F811
    page_or_skip("07-rates-and-leaks.html")
    watched = Watched(browser, f"{site}/book/07-rates-and-leaks.html")
    page = watched.page
    page.wait_for_selector(f"{ROOT} .nc-readout [data-key]", timeout=30_000)
    read = lambda: page.evaluate(READ, ROOT)  # noqa: E731
    state = {"rate": "20", "normalised": True, "run": 1}
    check(read(), state, "the opening view")
    where_line = page.locator(f"{ROOT} .nc-where").text_content()
    assert where_line.startswith("Runs in this page") and "no kernel" in where_line

    slider = page.locator(f"{ROOT} input[type=range]")
    rng = np.random.default_rng(7)
    keys = {"ArrowRight": 1, "ArrowUp": 1, "ArrowLeft": -1, "ArrowDown": -1}
    seen = set()
    for n in range(ACTIONS):
        kind = str(rng.choice(["key", "key", "set", "box", "run"]))
        index = RATES.index(state["rate"])
        if kind == "key":
            key = str(rng.choice([*keys, "Home", "End"]))
            slider.press(key)
            index = {"Home": 0, "End": len(RATES) - 1}.get(
                key, min(max(index + keys.get(key, 0), 0), len(RATES) - 1)
            )
            action = f"key {key}"
        elif kind == "set":
            index = int(rng.integers(len(RATES)))
            slider.fill(str(index))
            action = f"slider to {RATES[index]}"
        elif kind == "box":
            page.locator(ROOT).get_by_label("batch layer", exact=True).click()
            state = {**state, "normalised": not state["normalised"]}
            action = "batch layer box"
        else:
            run = int(rng.integers(1, 3))
            page.locator(ROOT).get_by_role("button", name=f"run {run}", exact=True).click()
            state = {**state, "run": run}
            action = f"run {run}"
        state = {**state, "rate": RATES[index]}
        seen.add((state["rate"], state["normalised"], state["run"]))
        check(read(), state, f"action {n + 1} ({action})")
    # every choice the widget offers was shown and checked at least once
    assert len(seen) == 2 * 2 * len(RATES), sorted(seen)
    errors, outside = watched.errors, watched.outside
    watched.close()
    assert not errors, f"console errors: {errors}"
    assert not outside, f"requests leaving 127.0.0.1: {outside}"


# the kernel has answered the state on show (its token and state match the page's)
ANSWERED = (
    "root => { const w = document.querySelector(root + ' .nc-where');"
    " return w !== null && w.dataset.runs === 'kernel'; }"
)


def test_rate_widget_live_in_lab(browser: Any, lab: Lab) -> None:
    """In JupyterLab: the same view; the kernel answers every choice from the runs themselves,
    and the page shows that its answer and the kernel's do not differ."""
    with chapter(browser, lab, "07-rates-and-leaks.ipynb") as page:
        page.wait_for_selector(f"{ROOT} .nc-readout [data-key]", timeout=ANSWER_TIMEOUT)
        state = {"rate": "20", "normalised": True, "run": 1}
        root = page.locator(ROOT)
        slider = root.locator("input[type=range]")
        moves = [
            ("box", None),  # plain at 20: refused, the readout says where
            ("key", "ArrowRight"),  # plain at 60
            ("run", 2),
            ("box", None),  # normalised at 60: chaotic
            ("key", "Home"),  # normalised at 0.05: the three ways
            ("key", "ArrowRight"),
        ]
        for n, (kind, value) in enumerate([(None, None), *moves]):
            if kind == "box":
                root.get_by_label("batch layer", exact=True).click()
                state = {**state, "normalised": not state["normalised"]}
            elif kind == "key":
                slider.press(value)
                index = 0 if value == "Home" else RATES.index(state["rate"]) + 1
                state = {**state, "rate": RATES[index]}
            elif kind == "run":
                root.get_by_role("button", name=f"run {value}", exact=True).click()
                state = {**state, "run": value}
            where = f"move {n} ({kind} {value})"
            assert wait_for(page, ANSWERED, ROOT, ANSWER_TIMEOUT), where
            check(page.evaluate(READ, ROOT), state, where, runs="kernel")
            gap = root.locator(".nc-where [data-key=kernel-gap]").get_attribute("data-value")
            assert float(gap) == 0.0, where
