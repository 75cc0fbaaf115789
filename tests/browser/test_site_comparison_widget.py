"""Chapter 6's comparison widget on the BUILT static site answers in the page, with normcore's
numbers.

The widget holds the chapter's per-seed results and averages them over the seeds ticked, in the
page, and pairs each variant with the plain network person by person (bootstrap over
people, the chapter's draws). This test serves _build/html from 127.0.0.1 with no kernel, ticks
and unticks its boxes through seeded random reader actions (an opening that reaches both of its
refusals: no seed and no variant), and after each action holds every figure on show to
normcore's answer worked out here in Python: the chapter's runs trained again
(`comparison.run_all`), averaged with numpy over the same seeds, and paired by
`comparison.paired_people` on those seeds' verdicts. Under the reference arithmetic (the one the
page's figures were computed under) each ``data-value`` is held to 1e-10 relative (the widget
stores 12 significant figures) and each number as shown to the digits it is shown with. Under any
other arithmetic the training is chaotic in its last bits (a loss moves by about 1e-8): each
figure is then held to half a unit of the last digit it is shown with, the precision the chapter
claims for it and the arithmetic matrix checks. Every control is found by its accessible name,
the ticks on show must be the reader's, axe-core finds no violation inside the widget, and no
console error or off-machine request is allowed.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from normcore.claims import reference_arithmetic
from normcore.experiments import comparison
from normcore.widgets import comparison_model as cm
from normcore.widgets._input import friendly

from .test_axe import axe_script
from .test_site import site  # noqa: F401  (the served _build/html)
from .test_site_widgets import ACTIONS, Watched, page_or_skip

ROOT = ".nc-comparison"
PAGE = "06-comparison.html"
#: digits each column is shown with (the chapter's table prints the same)
SHOWN = {
    "train_accuracy": 3,
    "held_accuracy": 3,
    "held_low": 2,
    "held_high": 2,
    "train_loss": 4,
    "held_loss": 3,
    "paired_gap": 3,
    "paired_people_low": 2,
    "paired_people_high": 2,
    "paired_seed_low": 2,
    "paired_seed_high": 2,
    "paired_worse": 0,
    "paired_better": 0,
}
PAIRED = ("gap", "people_low", "people_high", "seed_low", "seed_high", "worse", "better")
READ = """root => {
  const box = document.querySelector(root);
  const error = box.querySelector('.nc-message .nc-error');
  return {
    figures: Object.fromEntries(Array.from(box.querySelectorAll('.nc-readout [data-key]'),
                                           e => [e.dataset.key, [Number(e.dataset.value),
                                                                 e.textContent.trim()]])),
    rows: Array.from(box.querySelectorAll('.nc-readout tbody th'), e => e.textContent.trim()),
    ticked: Array.from(box.querySelectorAll('input[type=checkbox]:checked'),
                       e => e.dataset.key),
    error: error ? error.textContent.trim() : null,
    where: box.querySelector('.nc-where').dataset.runs,
    whereText: box.querySelector('.nc-where').textContent,
  };
}"""


@pytest.fixture(scope="module")
def scores() -> dict[str, comparison.Scores]:
    """normcore's per-seed figures for the chapter's runs, trained here in Python."""
    return comparison.run_all().scores


def expected(state: cm.State, scores: dict[str, comparison.Scores]) -> dict[str, Any]:
    """The table for `state`, worked out with numpy from `scores`: key -> value."""
    at = [comparison.SEEDS.index(s) for s in state["seeds"]]
    out: dict[str, Any] = {"seeds": float(len(at))}
    for key in (k for k in scores if k in state["variants"]):
        s = scores[key]
        for field in cm.FIELDS:
            out[f"{key}:{field}"] = float(np.mean(getattr(s, field)[at]))
        out[f"{key}:held_low"] = float(np.min(s.held_accuracy[at]))
        out[f"{key}:held_high"] = float(np.max(s.held_accuracy[at]))
    # the paired table: each variant ticked but plain against plain, over the seeds ticked,
    # by the chapter's own function on those seeds' verdicts
    subset = {k: dataclasses.replace(v, held_correct=v.held_correct[at]) for k, v in scores.items()}
    for key in (k for k in scores if k in state["variants"] and k != "none"):
        p = comparison.paired_people(subset, key)
        # the seeds' interval with the t multiplier the chapter prints (paired_exact's)
        seed_interval = comparison.paired_exact(subset, key).seed_interval
        values = (p.difference, *p.people_interval, *seed_interval, p.worse, p.better)
        for name, value in zip(PAIRED, values, strict=True):
            out[f"{key}:paired_{name}"] = float(value)
    return out


def refusal(state: cm.State) -> str | None:
    """The sentence the widget must show for `state`, or None (worked out here)."""
    if not state["variants"]:
        return "tick at least one variant to see its row of the table"
    if not state["seeds"]:
        return "tick at least one seed: every figure is a mean over the seeds ticked"
    return None


def check(
    got: dict[str, Any], want: dict[str, Any], state: cm.State, where: str, runs: str = "page"
) -> None:
    assert sorted(got["figures"]) == sorted(want), f"{where}: the page shows other figures"
    exact = reference_arithmetic()
    for key, value in want.items():
        page_value, text = got["figures"][key]
        digits = 0 if key == "seeds" else SHOWN[key.split(":")[1]]
        close = 1e-10 * max(abs(value), 1e-3) + 1e-14 if exact else 0.5 * 10.0**-digits
        assert abs(page_value - value) <= close, (
            f"{where}: {key} is {page_value!r} in the page, {value!r} by normcore"
        )
        if key == "seeds":
            assert text == f"{int(value)} seed{'s' if value != 1 else ''}", where
            continue
        if digits == 0:
            assert text == str(int(value)), f"{where}: {key} shows {text!r}"
            continue
        assert len(text.split(".")[1]) == digits, f"{where}: {key} shows {text!r}"
        # the text rounds the page's value: within half a unit of normcore's here, one unit
        # where the value itself may have moved by up to half a unit
        shown_close = (0.5 if exact else 1.0) * 10.0**-digits + 1e-9
        assert abs(float(text) - value) <= shown_close, (
            f"{where}: {key} shows {text!r}, normcore {value!r}"
        )
    shown = [label for k, label in cm.LABELS.items() if f"{k}:held_accuracy" in want]
    paired = [label for k, label in cm.LABELS.items() if f"{k}:paired_gap" in want]
    assert got["rows"] == shown + paired, where
    ticked = [f"variant:{k}" for k in cm.LABELS if k in state["variants"]]
    ticked += [f"seed:{s}" for s in comparison.SEEDS if s in state["seeds"]]
    assert got["ticked"] == ticked, f"{where}: the boxes ticked are not the reader's"
    assert got["where"] == runs and got["whereText"].startswith("Runs in this page"), where


def test_comparison_widget_answers_in_the_page(browser: Any, site: str, scores) -> None:  # noqa: F811
    page_or_skip(PAGE)
    watched = Watched(browser, f"{site}/book/{PAGE}")
    page = watched.page
    failed: list[str] = []  # named in the report if a console error is a failed request
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.wait_for_selector(f"{ROOT} .nc-readout [data-key]", timeout=30_000)
    read = lambda: page.evaluate(READ, ROOT)  # noqa: E731
    state = {"variants": list(cm.LABELS), "seeds": list(comparison.SEEDS)}
    good = expected(state, scores)
    check(read(), good, state, "the opening view (the chapter's table)")

    boxes = [("variant", k, label) for k, label in cm.LABELS.items()]
    boxes += [("seed", s, f"seed {s}") for s in comparison.SEEDS]
    rng = np.random.default_rng(6)
    # untick every seed (the last one is refused), tick two back, untick every variant
    opening = [boxes[5 + i] for i in range(5)] + [boxes[7], boxes[9]] + boxes[:5]
    refused = set()
    for n in range(ACTIONS):
        kind, value, label = opening[n] if n < len(opening) else boxes[rng.integers(len(boxes))]
        box = page.locator(ROOT).get_by_role("checkbox", name=label, exact=True)
        box.click()
        group = "variants" if kind == "variant" else "seeds"
        on = value not in state[group]
        state = (cm.toggle_variant if kind == "variant" else cm.toggle_seed)(state, value, on)
        where = f"action {n + 1} ({'tick' if on else 'untick'} {label})"
        got = read()
        sentence = refusal(state)
        if sentence is None:
            good = expected(state, scores)
            assert got["error"] is None, where
        else:
            refused.add(sentence)
            assert got["error"] == (
                f"{friendly(sentence)} The table below is for the last choice that had one."
            ), where
        # a refused choice leaves the last table on show, with the boxes as the reader left them
        check(got, good, state, where)
    assert len(refused) == 2, "the actions never reached both refusals"

    # the reader's session ends here: axe-core, run next, reads the theme's stylesheets and asks
    # for one it names relative to the site root (basic.css, a 404 of the scan, not the page's)
    errors, outside = list(watched.errors), list(watched.outside)
    # axe-core inside the widget: every box named, nothing serious or critical
    script = axe_script()
    if script is not None:
        page.add_script_tag(path=str(script))
        result = page.evaluate(
            f"() => axe.run({{include: [['{ROOT}']]}}, {{resultTypes: ['violations']}})"
        )
        serious = [
            (v["id"], [n["target"] for n in v["nodes"]])
            for v in result["violations"]
            if v.get("impact") in ("serious", "critical")
        ]
        assert not serious, f"accessibility violations in the widget: {serious}"
    watched.close()
    assert not errors, f"console errors: {errors} (failed requests: {failed})"
    assert not outside, f"requests leaving 127.0.0.1: {outside}"
