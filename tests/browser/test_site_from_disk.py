"""The built site opened from disk (file://…/index.html, as the README says) works as served:
every widget mounts and answers the same reader action with the same view as over http.

Chromium refuses an ES module's file over file:// (origin null: "blocked by CORS policy"), so a
site that loads its widget loader from _static/widgets.js shows nothing from disk and says
nothing. The build writes the loader into each widget page instead (book/_ext/editions.py); this
holds it: each widget page, opened both ways, mounts every view with no console error, and after
the same first action on each widget (a slider moved, a number typed, a button pressed) the
widget's text is the same from disk as over http. Both editions, where built.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .conftest import ROOT
from .test_site import serve

EDITIONS = {"reader": ROOT / "_build" / "html", "student": ROOT / "_build/student/_build/html"}
VIEW = "application/vnd.jupyter.widget-view+json"

ACT = """() => {
  // the same first action on every widget: its first slider one step up, else its first number
  // box set to 2, else its first button pressed; returns what was done
  const done = [];
  for (const view of document.querySelectorAll('.nc-widget-view')) {
    const slider = view.querySelector('input[type=range]');
    const box = view.querySelector('input[type=number], input[type=text]');
    const button = view.querySelector('button');
    if (slider) {
      const step = Number(slider.step) || 1;
      slider.value = String(Math.min(Number(slider.max), Number(slider.value) + step));
      slider.dispatchEvent(new Event('input', {bubbles: true}));
      slider.dispatchEvent(new Event('change', {bubbles: true}));
      done.push('slider');
    } else if (box) {
      box.value = '2';
      box.dispatchEvent(new Event('input', {bubbles: true}));
      box.dispatchEvent(new Event('change', {bubbles: true}));
      done.push('box');
    } else if (button) {
      button.click();
      done.push('button');
    } else {
      done.push('none');
    }
  }
  return done;
}"""

READ = """() => Array.from(document.querySelectorAll('.nc-widget-view'),
  v => [v.dataset.mounted || '', v.innerText.replace(/\\s+/g, ' ').trim()])"""


def widget_pages(html: Path) -> list[Path]:
    if not html.exists():
        return []
    return [p for p in sorted(html.rglob("*.html")) if VIEW in p.read_text(encoding="utf-8")]


CASES = [(e, p) for e, html in EDITIONS.items() for p in widget_pages(html)]


def views(browser: Any, url: str) -> tuple[list, list, list[str]]:
    """(views before, views after the action, console errors) of the page at `url`."""
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(url, wait_until="load")
        page.wait_for_function(
            "() => document.documentElement.dataset.widgets === 'mounted'", timeout=30_000
        )
        before = page.evaluate(READ)
        page.evaluate(ACT)
        page.wait_for_timeout(300)
        after = page.evaluate(READ)
    finally:
        context.close()
    return before, after, errors


@pytest.mark.parametrize(
    "edition,page_path", CASES or [(None, None)], ids=lambda v: getattr(v, "stem", v) or "none"
)
def test_widgets_answer_from_disk_as_over_http(browser: Any, edition, page_path) -> None:
    if page_path is None:
        pytest.skip("no built site with widgets: make book (and make student)")
    html = EDITIONS[edition]
    rel = page_path.relative_to(html).as_posix()
    disk_before, disk_after, disk_errors = views(browser, page_path.resolve().as_uri())
    with serve(html) as site:
        http_before, http_after, http_errors = views(browser, f"{site}/{rel}")
    assert not disk_errors, f"{rel} from disk: {disk_errors}"
    assert not http_errors, f"{rel} over http: {http_errors}"
    assert disk_before and all(m == "true" for m, _ in disk_before), f"{rel}: not mounted"
    assert all(text for _, text in disk_before), f"{rel}: a blank view from disk"
    assert disk_before == http_before, f"{rel}: the views differ from disk"
    assert disk_after == http_after, f"{rel}: the same action answers differently from disk"


def test_a_loader_from_a_file_does_not_mount_from_disk(browser: Any, tmp_path: Path) -> None:
    """The failure this guards against, shown: the same page loading the loader from
    _static/widgets.js (as before) mounts nothing from disk."""
    html = EDITIONS["reader"]
    pages = widget_pages(html)
    if not pages:
        pytest.skip("no built site with widgets: make book")
    page_path = pages[0]
    text = page_path.read_text(encoding="utf-8")
    start = text.index('<script type="module">')
    end = text.index("</script>", start) + len("</script>")
    depth = page_path.relative_to(html).as_posix().count("/")
    src = "../" * depth + "_static/widgets.js"
    broken = page_path.with_name("from-file-loader.html")
    broken.write_text(
        text[:start] + f'<script type="module" src="{src}"></script>' + text[end:],
        encoding="utf-8",
    )
    try:
        context = browser.new_context()
        page = context.new_page()
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(broken.resolve().as_uri(), wait_until="load")
        page.wait_for_timeout(1500)
        mounted = page.evaluate("() => document.documentElement.dataset.widgets || ''")
        context.close()
    finally:
        broken.unlink()
    assert mounted == "" and any("CORS" in e or "widgets.js" in e for e in errors), errors
