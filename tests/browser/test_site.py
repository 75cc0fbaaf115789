"""The static site in a real browser: every chapter page typeset, its images loaded, no console
error and no failed request (a 404 of any file, the browser's own /favicon.ico included), and
not one request leaving 127.0.0.1. A screenshot of each page goes to _build/screenshots/."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from .conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
from static_server import serve  # noqa: E402  (tools/ is not a package; make_pdf.py serves too)

HTML = ROOT / "_build" / "html"
SHOTS = ROOT / "_build" / "screenshots"
RAW_MATH = re.compile(r"\$[^$\s][^$]*\$|\\\(|\\\[")


def pages() -> list[Path]:
    if not HTML.exists():
        return []
    return sorted(HTML.glob("book/[0-9][0-9]-*.html")) + [HTML / "index.html"]


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    """`_build/html` served from 127.0.0.1 on a free port, in a thread."""
    if not (HTML / "index.html").exists():
        pytest.skip("_build/html does not exist: build the site first (make book)")

    with serve(HTML) as url:
        yield url


@pytest.mark.parametrize("page_path", pages() or [None], ids=lambda p: p.name if p else "none")
def test_page_reads_well_offline(browser: Any, site: str, page_path: Path | None) -> None:
    if page_path is None:
        pytest.skip("_build/html has no chapter pages: build the site first (make book)")
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    requests: list[str] = []
    errors: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on(
        "response", lambda r: errors.append(f"HTTP {r.status} {r.url}") if r.status >= 400 else None
    )
    rel = page_path.relative_to(HTML).as_posix()
    page.goto(f"{site}/{rel}", wait_until="load")
    page.wait_for_load_state("networkidle")
    has_math = (
        page.evaluate(
            "() => document.querySelectorAll('.math, .MathJax, mjx-container,"
            ' script[type^="math/tex"]\').length'
        )
        > 0
    )
    if has_math:
        page.wait_for_function(
            "() => !window.MathJax || !MathJax.startup || !MathJax.startup.promise ? true :"
            " MathJax.startup.promise.then(() => true)",
            timeout=20_000,
        )
        page.wait_for_function(
            "() => document.querySelectorAll('mjx-container').length > 0", timeout=20_000
        )
    text = page.inner_text("main") if page.query_selector("main") else page.inner_text("body")
    broken = page.evaluate(
        "() => Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0)"
        ".map(i => i.src)"
    )
    outside = [
        u
        for u in requests
        if urlparse(u).hostname not in ("127.0.0.1", None)
        and not u.startswith(("data:", "blob:", "about:"))
    ]
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{page_path.stem}.png"), full_page=True)
    context.close()
    problems = [
        f"math left untypeset in the visible text: {RAW_MATH.findall(text)[:5]}"
        if RAW_MATH.search(text)
        else "",
        f"images that did not load: {broken}" if broken else "",
        f"console errors: {errors}" if errors else "",
        f"requests leaving 127.0.0.1: {outside}" if outside else "",
    ]
    problems = [p for p in problems if p]
    assert not problems, f"{rel}:\n  " + "\n  ".join(problems)
