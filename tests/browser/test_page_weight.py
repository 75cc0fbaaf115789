"""How heavy each page of the BUILT site is on first load, and how soon its first widget answers.

Each chapter page (and the front page) is opened in a fresh browser context, so nothing is cached,
from the site served on 127.0.0.1, with every request that would leave the machine blocked (and
recorded: there must be none). Measured per page and written to ``_build/reports/page-weight.md``
(and ``.json``), and printed:

* the bytes transferred until the network is idle (every response's headers and body, MathJax's
  fonts and extensions included) and the number of requests;
* on a page with widgets, how long after the page's load event its first widget answered a
  reader's action: the action (another choice in its first menu, a step of its slider, a tick,
  a press of a button, a number typed) is done as soon as the widget shows it, and the time is
  taken when the widget's view changes. Also when the site's loader had mounted every widget
  (its ``nc-widgets-mounted`` performance mark; negative: before the load event).

Sizes are deterministic, so the limits are asserted: a page with widgets at most 4 MB, a page
without at most 2.6 MB. The answer time depends on the machine and its load, so it is reported,
not asserted (the goal, within 1 s on a 2-core machine, is in the report beside each figure).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from .test_site import HTML, pages
from .test_site import site as site  # the served _build/html (a fixture)

MB = 1_000_000
WIDGET_PAGE_LIMIT = 4 * MB
# a plain page carries the 1.72 MB every page loads (MathJax, the theme's CSS, its icon font)
PLAIN_PAGE_LIMIT = 2.6 * MB
ANSWER_GOAL_MS = 1000.0
REPORT = HTML.parent / "reports" / "page-weight"
VIEW = "application/vnd.jupyter.widget-view+json"

# Runs in the page: resolves with performance.now() when the first widget's view next changes.
WATCH = """() => {
  const view = document.querySelector('.nc-widget-view');
  window.__ncAnswered = new Promise((resolve) => {
    new MutationObserver((_, observer) => {
      observer.disconnect();
      resolve(performance.now());
    }).observe(view, {childList: true, subtree: true, characterData: true, attributes: true});
  });
}"""
#: The controls a reader's action is done on, in order of preference (a button already pressed
#: would change nothing).
CONTROLS = (
    "select",
    "input[type=range]",
    "input[type=checkbox]",
    "button[aria-pressed=false]",
    "button",
    "input[type=text]",
)
LOADED = "() => performance.getEntriesByType('navigation')[0].loadEventEnd"

measured: dict[str, dict[str, Any]] = {}


def has_widgets(path: Path) -> bool:
    return VIEW in path.read_text(encoding="utf-8")


def local(url: str) -> bool:
    return urlparse(url).hostname in ("127.0.0.1", None) or url.startswith(("data:", "blob:"))


def act_on_first_widget(page: Any) -> str:
    """Do one reader's action on the page's first widget (another choice in its first menu, a
    step of its first slider, or a press of its first button); says which."""
    view = page.locator(".nc-widget-view").first
    view.locator(", ".join(CONTROLS)).first.wait_for(timeout=30_000)
    for choice in CONTROLS:
        control = view.locator(choice).first
        if control.count():
            break
    page.evaluate(WATCH)
    kind = control.evaluate("e => e.tagName === 'INPUT' ? e.type : e.tagName.toLowerCase()")
    if kind == "select":
        values = control.evaluate("e => Array.from(e.options, o => o.value)")
        current = control.input_value()
        choice = next(v for v in values if v != current)
        control.select_option(choice)
        return f"chose {choice!r} in its first menu"
    if kind == "range":
        at_top = control.evaluate("e => Number(e.value) >= Number(e.max)")
        key = "ArrowLeft" if at_top else "ArrowRight"
        control.press(key)
        return f"pressed {key} on its first slider"
    if kind == "checkbox":
        control.click()
        return "ticked or cleared its first box"
    if kind == "text":
        text = "2" if control.input_value().strip() != "2" else "3"
        control.fill(text)
        control.press("Enter")
        return f"typed {text!r} into its first box"
    label = control.inner_text().strip()
    control.click()
    return f"pressed {label!r}"


def measure(browser: Any, url: str, widgets: bool) -> dict[str, Any]:
    """Open `url` fresh, offline but for 127.0.0.1; its transfer, requests and answer time."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    blocked: list[str] = []
    errors: list[str] = []

    def block(route: Any) -> None:
        blocked.append(route.request.url)
        route.abort()

    context.route(lambda u: not local(u), block)
    page = context.new_page()
    finished: list[Any] = []
    page.on("requestfinished", lambda r: finished.append(r))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url, wait_until="load")
    out: dict[str, Any] = {}
    if widgets:
        out["action"] = act_on_first_widget(page)
        answered = page.evaluate(
            "() => Promise.race([window.__ncAnswered,"
            " new Promise(r => setTimeout(() => r(null), 30000))])"
        )
        assert answered is not None, f"{url}: the first widget did not answer {out['action']}"
        loaded = page.evaluate(LOADED)
        out["answer_ms"] = round(answered - loaded, 1)
        mounted = page.evaluate(
            "() => performance.getEntriesByName('nc-widgets-mounted').map(e => e.startTime)"
        )
        out["mounted_ms"] = round(mounted[0] - loaded, 1) if mounted else None
        out["views"] = page.locator(".nc-widget-view").count()
        out["mounted"] = page.locator(".nc-widget-view[data-mounted=true]").count()
    page.wait_for_load_state("networkidle")
    page.wait_for_function(
        "() => !window.MathJax || !MathJax.startup || !MathJax.startup.promise ? true :"
        " MathJax.startup.promise.then(() => true)",
        timeout=30_000,
    )
    page.wait_for_load_state("networkidle")
    sizes = [r.sizes() for r in finished]
    out["bytes"] = sum(s["responseBodySize"] + max(s["responseHeadersSize"], 0) for s in sizes)
    out["requests"] = len(finished)
    out["largest"] = sorted(
        (
            (s["responseBodySize"], urlparse(r.url).path)
            for r, s in zip(finished, sizes, strict=True)
        ),
        reverse=True,
    )[:3]
    out["blocked"] = blocked
    out["errors"] = errors
    context.close()
    return out


@pytest.fixture(scope="module", autouse=True)
def report() -> Iterator[None]:
    """Write what the tests measured to _build/reports/page-weight.{md,json} and print it."""
    yield
    if not measured:
        return
    lines = [
        "# Page weight on first load, and the first widget's answer",
        "",
        f"Limits: a page with widgets {WIDGET_PAGE_LIMIT / MB:g} MB, without "
        f"{PLAIN_PAGE_LIMIT / MB:g} MB; goal: the first widget answers within "
        f"{ANSWER_GOAL_MS:g} ms of the load event.",
        "",
        "| page | MB | requests | widgets | mounted after load (ms) | answered after load (ms) "
        "| largest files |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for name, m in sorted(measured.items()):
        largest = ", ".join(f"{p.rsplit('/', 1)[-1]} {b / MB:.2f}" for b, p in m["largest"])
        lines.append(
            f"| {name} | {m['bytes'] / MB:.2f} | {m['requests']} | {m.get('views', 0)} | "
            f"{m.get('mounted_ms', '')} | {m.get('answer_ms', '')} | {largest} |"
        )
    text = "\n".join(lines) + "\n"
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.with_suffix(".md").write_text(text, encoding="utf-8")
    REPORT.with_suffix(".json").write_text(json.dumps(measured, indent=1), encoding="utf-8")
    print("\n" + text)


@pytest.mark.parametrize("page_path", pages() or [None], ids=lambda p: p.name if p else "none")
def test_page_is_light_and_its_first_widget_answers(
    browser: Any, site: str, page_path: Path | None
) -> None:
    if page_path is None:
        pytest.skip("_build/html has no chapter pages: build the site first (make book)")
    rel = page_path.relative_to(HTML).as_posix()
    widgets = has_widgets(page_path)
    m = measure(browser, f"{site}/{rel}", widgets)
    measured[rel] = m
    limit = WIDGET_PAGE_LIMIT if widgets else PLAIN_PAGE_LIMIT
    assert not m["blocked"], f"{rel} asked for addresses off the machine: {m['blocked']}"
    assert not m["errors"], f"{rel}: console errors: {m['errors']}"
    assert m["bytes"] <= limit, (
        f"{rel} transfers {m['bytes'] / MB:.2f} MB on first load, over its "
        f"{limit / MB:g} MB; largest: {m['largest']}"
    )
    if widgets:
        assert m["views"] >= 1 and m["mounted"] == m["views"], (
            f"{rel}: {m['mounted']} of {m['views']} widget views mounted"
        )
