"""The teachers' downloads in a real browser: on each chapter page the reader clicks "its
exercises alone" and gets a valid notebook without outputs or solutions, and "its figures" and
gets a zip of SVG and PNG files; the solutions booklet, reached from the back matter, typesets its
math with the site's own MathJax, shows its images, and loads nothing from outside 127.0.0.1 with
no console error. Chapters are those with exercises or figures (tests/test_teaching_site.py
checks the links of every page on disk)."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import nbformat
import pytest
import teaching  # tools/ (pytest's pythonpath)

from .test_site import RAW_MATH, site  # noqa: F401  (the fixture that serves _build/html)

CHAPTERS = [
    p
    for p in teaching.chapters()
    if teaching.has_exercises(nbformat.read(p, as_version=4))
    or teaching.has_figures(nbformat.read(p, as_version=4))
]


@pytest.mark.parametrize("ipynb", CHAPTERS, ids=lambda p: p.stem)
def test_click_exercises_and_figures(browser: Any, site: str, ipynb: Path, tmp_path: Path):  # noqa: F811
    nb = nbformat.read(ipynb, as_version=4)
    context = browser.new_context(accept_downloads=True)
    page = context.new_page()
    saved: dict[str, Path] = {}
    try:
        page.goto(f"{site}/book/{ipynb.stem}.html", wait_until="load")
        for kind, css, wanted in (
            ("exercises", "a.nc-exercises-download", teaching.has_exercises(nb)),
            ("figures", "a.nc-figures-download", teaching.has_figures(nb)),
        ):
            link = page.locator(css)
            assert link.count() == (1 if wanted else 0), f"{ipynb.stem}: {kind} links"
            if not wanted:
                continue
            assert link.is_visible(), f"{ipynb.stem}: the {kind} link is not visible"
            with page.expect_download() as info:
                link.click()
            saved[kind] = tmp_path / info.value.suggested_filename
            info.value.save_as(saved[kind])
    finally:
        context.close()
    if "exercises" in saved:
        assert saved["exercises"].name == teaching.exercise_notebook(ipynb.stem)
        exercises = nbformat.read(saved["exercises"], as_version=4)
        nbformat.validate(exercises)
        code = [c for c in exercises.cells if c.cell_type == "code"]
        assert code and all(c.outputs == [] for c in code)
        assert not any(":::{dropdown}" in c.source for c in exercises.cells)
    if "figures" in saved:
        assert saved["figures"].name == teaching.chapter_pack(ipynb.stem)
        with zipfile.ZipFile(io.BytesIO(saved["figures"].read_bytes())) as archive:
            names = archive.namelist()
        assert any(n.endswith(".svg") for n in names) and any(n.endswith(".png") for n in names)


def test_booklet_from_the_back_matter(browser: Any, site: str) -> None:  # noqa: F811
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on(
        "response", lambda r: errors.append(f"HTTP {r.status} {r.url}") if r.status >= 400 else None
    )
    try:
        page.goto(f"{site}/book/glossary.html", wait_until="load")
        page.locator("a.nc-booklet-page").click()
        page.wait_for_load_state("networkidle")
        assert page.url.endswith("/" + teaching.BOOKLET_HTML)
        page.wait_for_function(
            "() => window.MathJax && MathJax.startup && MathJax.startup.promise"
            " && document.querySelectorAll('mjx-container').length > 0",
            timeout=30_000,
        )
        page.evaluate("() => MathJax.startup.promise")
        text = page.inner_text("main")
        broken = page.evaluate(
            "() => Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0)"
            ".map(i => i.src)"
        )
        pdf = page.request.get(f"{site}/{teaching.BOOKLET_PDF}")
        pdf_status, pdf_head = pdf.status, pdf.body()[:5]
    finally:
        context.close()
    outside = [
        u
        for u in requests
        if urlparse(u).hostname not in ("127.0.0.1", None)
        and not u.startswith(("data:", "blob:", "about:"))
    ]
    assert "Exercise 1" in text and "Solution" in text
    assert not RAW_MATH.findall(text), f"math left untypeset: {RAW_MATH.findall(text)[:5]}"
    assert not broken and not errors and not outside, (broken, errors, outside)
    assert (pdf_status, pdf_head) == (200, b"%PDF-")
