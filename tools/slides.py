"""A starter slide deck per chapter, from the book's own sources, as HTML and PDF.

Each deck: a title slide (chapter number and title, the book's version, the licence), the
chapter's objectives (``book/teaching.yml``), its key equations (the display equations of its
prose, solutions left out, typeset by the site's own MathJax) and one slide per figure (the
figure pack's 220-dpi PNG where ``tools/figure_pack.py`` has made it, else the page's PNG, with
its short title and caption from ``book/figures.yml`` and the stored run). Printed to PDF, 16:9,
by the chromium the book's PDF uses (``tools/chromium.py``): no new dependency, no TeX.

    _build/html/slides/chNN.html       the deck (beside the site: it loads _static/mathjax)
    _build/instructor/slides/normcore-chNN-slides.pdf

    python tools/slides.py                     # every chapter
    python tools/slides.py --no-pdf book/02-worked-column.ipynb
"""

from __future__ import annotations

import argparse
import base64
import html
import json
import re
import sys
from pathlib import Path

import figure_pack  # beside this file
import nbformat
import teaching

HTML_DIR = teaching.SITE / teaching.SLIDES_DIR
PDF_DIR = teaching.INSTRUCTOR / "slides"
TREE = teaching.BUILD / "figures"  # the figure pack's unzipped tree
DISPLAY = re.compile(r"\$\$(.+?)\$\$|```\{math\}\n(.+?)```", re.S)
MAX_EQUATIONS = 6
PER_SLIDE = 3  # equations a slide holds

STYLE = """
@page { size: 13.333in 7.5in; margin: 0; }
html, body { margin: 0; padding: 0; }
body { font-family: "DejaVu Sans", Arial, sans-serif; color: #1b1b1b; }
section.slide { width: 13.333in; height: 7.5in; box-sizing: border-box; padding: 0.55in 0.8in;
  position: relative; overflow: hidden; break-after: page; page-break-after: always;
  border-bottom: 1px solid #ddd; }
section.slide:last-child { break-after: auto; page-break-after: auto; }
h1 { font-size: 40pt; margin: 1.6in 0 0.2in; color: #1f5f99; }
h2 { font-size: 28pt; margin: 0 0 0.25in; color: #1f5f99; }
p, li { font-size: 20pt; line-height: 1.35; }
.sub { font-size: 18pt; color: #555; }
.eq { font-size: 20pt; margin: 0.1in 0; }
figure { margin: 0; text-align: center; }
figure img { max-width: 100%; max-height: 4.3in; }
figcaption { font-size: 11pt; color: #444; text-align: left; margin-top: 0.08in;
  max-height: 0.9in; overflow: hidden; }
.foot { position: absolute; left: 0.8in; right: 0.8in; bottom: 0.22in; font-size: 9pt;
  color: #555; }
.foot a { color: #1f4f80; }
"""


def equations(nb) -> list[str]:
    """The chapter's display equations (not the solutions'), first MAX_EQUATIONS, once each."""
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    teaching.strip_solutions(nb)
    found: list[str] = []
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for match in DISPLAY.finditer(cell.source):
            tex = " ".join((match.group(1) or match.group(2) or "").split())
            tex = re.sub(r"^:label:\s*\S+\s*", "", tex)
            if tex and tex not in found and len(tex) < 320:
                found.append(tex)
    return found[:MAX_EQUATIONS]


def figure_image(fig, png: bytes) -> tuple[str, str]:
    """(data URI, which) for a figure: the pack's 2x PNG if built, else the page's."""
    big = TREE / fig.png2x
    data, which = (big.read_bytes(), "220 dpi") if big.is_file() else (png, "page PNG")
    return "data:image/png;base64," + base64.b64encode(data).decode(), which


def deck(ipynb: Path, guide: dict) -> str:
    nb = nbformat.read(ipynb, as_version=4)
    import exercise_notebooks

    title = exercise_notebooks._chapter_title(nb)
    number = int(ipynb.stem[:2])
    label = f"Chapter {number}" if number else "Preface"
    version = teaching.version()
    foot = (
        f'<div class="foot">normcore {html.escape(version)} · {html.escape(label)} · '
        f"{teaching.attribution_html()}</div>"
    )
    slides = [
        f'<section class="slide"><h1>{html.escape(title)}</h1>'
        f'<p class="sub">{html.escape(label)} of <i>normcore: normalisation layers, '
        f"computed</i></p>{foot}</section>"
    ]
    objectives = guide.get(ipynb.stem, {}).get("objectives", [])
    if objectives:
        items = "".join(f"<li>{html.escape(o)}</li>" for o in objectives)
        slides.append(
            f'<section class="slide"><h2>After this chapter you can</h2><ul>{items}</ul>'
            f"{foot}</section>"
        )
    eqs = equations(nb)
    for start in range(0, len(eqs), PER_SLIDE):
        body = "".join(
            f'<div class="eq">\\[{html.escape(t)}\\]</div>' for t in eqs[start : start + PER_SLIDE]
        )
        slides.append(f'<section class="slide"><h2>Key equations</h2>{body}{foot}</section>')
    for _, fig, png in figure_pack.stored_figures(ipynb):
        uri, _which = figure_image(fig, png)
        heading = f"{fig.number}: {fig.title}" if fig.title else fig.number
        slides.append(
            f'<section class="slide"><h2>{html.escape(heading)}</h2><figure>'
            f'<img src="{uri}" alt="{html.escape(fig.alt)}">'
            f"<figcaption>{html.escape(fig.caption)}</figcaption></figure>{foot}</section>"
        )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>normcore {html.escape(version)}: {html.escape(label)} slides</title>
<link rel="icon" href="../_static/favicon.svg" type="image/svg+xml">
<style>{STYLE}</style>
<script>window.MathJax = {{tex: {{inlineMath: [["\\\\(", "\\\\)"]],
  displayMath: [["\\\\[", "\\\\]"]]}}}};</script>
<script defer src="../_static/mathjax/tex-chtml.js"></script>
</head><body>
{chr(10).join(slides)}
</body></html>
"""


def print_decks(pages: list[Path], site: Path) -> list[Path]:
    """Print each deck to PDF (16:9), served from the site (for its MathJax)."""
    import chromium
    import make_pdf
    from playwright.sync_api import sync_playwright
    from static_server import serve

    PDF_DIR.mkdir(parents=True, exist_ok=True)
    written = []
    with serve(site) as url, sync_playwright() as p:
        browser = chromium.launch(p)
        try:
            for deck_page in pages:
                page = browser.new_page(viewport={"width": 1280, "height": 720})
                rel = deck_page.relative_to(site).as_posix()
                page.goto(f"{url}/{rel}", wait_until="load")
                page.wait_for_function(make_pdf.READY, timeout=120_000, polling=250)
                target = PDF_DIR / f"normcore-{deck_page.stem}-slides.pdf"
                page.pdf(
                    path=str(target),
                    width="13.333in",
                    height="7.5in",
                    print_background=True,
                    prefer_css_page_size=True,
                )
                page.close()
                written.append(target)
        finally:
            browser.close()
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--no-pdf", action="store_true")
    args = parser.parse_args(argv)
    import yaml

    guide = yaml.safe_load((teaching.BOOK / "teaching.yml").read_text(encoding="utf-8"))
    notebooks = [p.resolve().with_suffix(".ipynb") for p in args.notebooks] or teaching.chapters()
    HTML_DIR.mkdir(parents=True, exist_ok=True)
    pages = []
    for ipynb in notebooks:
        target = HTML_DIR / f"{teaching.chapter_tag(ipynb.stem)}.html"
        target.write_text(deck(ipynb, guide), encoding="utf-8")
        pages.append(target)
    print(f"slides: {len(pages)} decks into {HTML_DIR}")
    if args.no_pdf:
        return 0
    import chromium

    if not chromium.can_print():
        print("slides: no PDF without chromium and playwright", file=sys.stderr)
        return 1
    for pdf in print_decks(pages, teaching.SITE):
        print(f"slides: {pdf} ({pdf.stat().st_size / 1e3:.0f} kB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
