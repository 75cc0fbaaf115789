"""Chapter 10's widget in a real browser, held to normcore after every one of 220 seeded reader
actions (tests/browser/test_site_widgets.py's `drive`), and in JupyterLab, where the kernel
answers too.

Two pages: a bare page served from 127.0.0.1 that renders the widget's bundle with a stand-in
for anywidget's model (so the view and its arithmetic are tested without building the site),
and, once the site is built, the chapter's own page. The opening types every kind of bad input
("abc", "1e400", "nan", empty) into both boxes; the page must show normcore's sentence for it and
keep the last figures that could be computed. Every figure on show is held to the Python model's
answer (`normcore.widgets.convnet_model.figures`) for the same state: counts exactly, the rest to
1e-12 relative and as shown to the digits shown.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_convnet_widget import make_case  # tests/ is on the path of the browser package

from normcore.widgets import convnet_model as cm
from normcore.widgets._esm import bundle, source

from .live import ANSWER_TIMEOUT, Lab, chapter, wait_for
from .test_site import HTML, serve, site  # noqa: F401  (the served _build/html)
from .test_site_widgets import BAD_TEXTS, Keyed, Watched, drive, page_or_skip, seeded

ROOT = ".nc-convnet"
KEPT = "The figures below are for the last choice that could be computed."
LABELS = ["normaliser", "images a device holds", "groups (group norm)"]
OPENING = [
    ("per_device", "abc"),
    ("per_device", "1e400"),
    ("per_device", "nan"),
    ("per_device", ""),
    ("per_device", "8"),
    ("normaliser", "group"),
    ("groups", "abc"),
    ("groups", "1e400"),
    ("groups", "nan"),
    ("groups", ""),
    ("groups", "3"),
    ("groups", "4"),
    ("normaliser", "instance"),
    ("normaliser", "batch"),
    ("per_device", "32"),
]
HARNESS = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Chapter 10's widget</title>
<link rel="icon" href="data:,"><style>{css}</style></head>
<body><main><h1>Chapter 10's widget</h1><div id="widget"></div></main>
<script type="module">
import widget from "./convnet.js";
const values = {{state: {state}, request: "", kernel: {{}}, case: {case}}};
const listeners = {{}};
const model = {{
  get: (key) => values[key],
  set(key, value) {{
    values[key] = value;
    (listeners["change:" + key] || []).forEach((f) => f());
  }},
  on(event, f) {{ (listeners[event] = listeners[event] || []).push(f); }},
  off(event, f) {{ listeners[event] = (listeners[event] || []).filter((g) => g !== f); }},
  save_changes() {{}},
}};
widget.render({{model, el: document.getElementById("widget")}});
</script></body></html>
"""


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, Any]]]:
    """The bare page (and its case), served from 127.0.0.1."""
    where = tmp_path_factory.mktemp("convnet-widget")
    case, _, _ = make_case(10)  # tests/test_convnet_widget.py's: an untrained stack
    (where / "convnet.js").write_text(bundle("convnet.js"), encoding="utf-8")
    page = HARNESS.format(
        css=source("widgets.css"), state=json.dumps(cm.initial()), case=json.dumps(case)
    )
    (where / "index.html").write_text(page, encoding="utf-8")
    with serve(Path(where)) as url:
        yield f"{url}/index.html", case


def compare(got: dict[str, Any], f: dict[str, Any], where: str) -> None:
    """The page's readout against normcore's figures `f`."""
    want: dict[str, tuple[float, str]] = {
        "pooled:0": (f["pooled"][0], "int"),
        "pooled:1": (f["pooled"][1], "int"),
        "statistics": (f["statistics"], "int"),
    }
    if "ratio_mean" in f:
        want["devices"] = (f["devices"], "int")
        want["ratio_mean"] = (f["ratio_mean"], ".3f")
        want["ratio_spread"] = (f["ratio_spread"], ".3f")
    for i, v in enumerate(f.get("accuracy", [])):
        want[f"accuracy:{i}"] = (v, ".3f")
    assert sorted(got["figures"]) == sorted(want), f"{where}: the page shows other figures"
    for key, (value, shown_as) in want.items():
        page_value, text = got["figures"][key]
        assert abs(page_value - value) <= 1e-12 * max(abs(value), 1e-3), (
            f"{where}: {key} is {page_value!r} in the page, {value!r} by normcore"
        )
        if shown_as == "int":
            assert int(text) == value, f"{where}: {key} shows {text!r}"
        else:
            assert abs(float(text) - value) <= 5e-4 + 1e-12, f"{where}: {key} shows {text!r}"


def random_actions(seed: int) -> Any:
    rng = np.random.default_rng(seed)

    def random() -> tuple[str, str]:
        key = str(rng.choice(["normaliser", "per_device", "per_device", "groups"]))
        if key == "normaliser":
            return key, str(rng.choice(cm.NORMALISERS))
        if rng.random() < 0.2:
            return key, str(rng.choice(BAD_TEXTS + ["0", "65", "2.5", "3", "-4"]))
        return key, str(int(rng.integers(1, 65 if key == "per_device" else 9)))

    return seeded(OPENING, random)


def work(page: Any, case: dict[str, Any], seed: int) -> None:
    """Check the form's accessible names, then 220 seeded actions, each held to normcore."""
    widget = Keyed(
        page,
        ROOT,
        figures=lambda state: cm.figures(state, case),
        compare=compare,
        kept=KEPT,
        apply=cm.choose,
        fields=dict,
    )
    labels = page.locator(f"{ROOT} .nc-form .nc-label").all_inner_texts()
    assert labels == LABELS, labels
    for name, role in zip(LABELS, ("combobox", "textbox", "textbox"), strict=True):
        assert page.locator(ROOT).get_by_role(role, name=name, exact=True).count() == 1, name
    assert page.locator(f"{ROOT} .nc-message").get_attribute("role") == "status"
    assert page.locator(f"{ROOT} table caption").count() == 1
    last = drive(cm.initial(), random_actions(seed), widget.act, widget.check)
    assert last != cm.initial()


def test_the_widget_answers_in_a_bare_page(browser: Any, harness: tuple) -> None:
    url, case = harness
    with Watched(browser, url) as page:
        work(page, case, seed=10)


def test_the_widget_answers_on_the_chapters_page(browser: Any, site: str) -> None:  # noqa: F811
    page_or_skip("10-convnets.html")
    with Watched(browser, f"{site}/book/10-convnets.html") as page:
        page.wait_for_selector(f"{ROOT} .nc-readout td[data-key]", timeout=30_000)
        case = page.evaluate(
            "() => { const s = document.querySelector("
            "'script[type=\"application/vnd.jupyter.widget-state+json\"]');"
            " for (const m of Object.values(JSON.parse(s.textContent).state)) {"
            "   if (m.state && m.state.case) return m.state.case; } return null; }"
        )
        assert case is not None, "the page stores no case for the widget"
        work(page, case, seed=11)


ANSWERED = (
    "root => { const w = document.querySelector(root + ' .nc-where');"
    " return w !== null && w.dataset.runs === 'kernel'; }"
)


def test_the_widget_answers_on_the_kernel_too(browser: Any, lab: Lab) -> None:
    with chapter(browser, lab, "10-convnets.ipynb") as page:
        page.wait_for_selector(f"{ROOT} .nc-readout [data-key]", timeout=ANSWER_TIMEOUT)
        for step in range(2):
            assert wait_for(page, ANSWERED, ROOT, ANSWER_TIMEOUT), "it does not say it runs there"
            gap = page.locator(f"{ROOT} .nc-where [data-key=kernel-gap]")
            assert float(gap.get_attribute("data-value")) <= 1e-12
            if step == 0:
                field = page.locator(f"{ROOT} .nc-form [data-key='per_device']")
                field.fill("8")
                field.press("Enter")


def test_the_widget_passes_an_accessibility_scan(browser: Any, harness: tuple) -> None:
    """axe-core (tests/browser/test_axe.py's local copy) finds nothing serious or critical in
    the widget, opening and showing an error sentence."""
    from .test_axe import BLOCKING, axe_script

    script = axe_script()
    if script is None:
        pytest.skip("axe-playwright-python is not installed (it carries axe-core's axe.min.js)")
    url, _ = harness
    with Watched(browser, url) as page:
        page.wait_for_selector(f"{ROOT} .nc-readout td[data-key]", timeout=30_000)
        page.add_script_tag(path=str(script))
        for where in ("opening", "an error shown"):
            result = page.evaluate(
                "root => axe.run(document.querySelector(root), {resultTypes: ['violations']})",
                ROOT,
            )
            serious = [
                f"{v['impact']} {v['id']}: {v['help']}"
                for v in result["violations"]
                if v.get("impact") in BLOCKING
            ]
            assert not serious, f"{where}: {serious}"
            box = page.locator(f"{ROOT} .nc-form [data-key='per_device']")
            box.fill("abc")
            box.press("Enter")
