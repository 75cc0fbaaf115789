"""The solutions booklet: every exercise's worked solution, as one HTML page and one PDF.

The reader's edition folds each worked solution under its exercise; its PDF prints them opened.
A teacher who hands out the student edition (no solutions) needs them apart: this collects,
from each chapter's stored run (``book/NN-name.ipynb``), every exercise's question and folded
solution, with the prose's roles written out from that run (as ``tools/lab_book.py`` does: the
glued figures at the digits the page shows), and the chapter's captioned figures the exercises use
(the figures drawn by the chapter cells the exercise notebook keeps, and any figure a question
or solution cites), as their stored PNGs. Nothing runs.

* ``_build/html/solutions.html``: one page beside the site, typeset by the site's own MathJax
  (``_static/mathjax``), offline; not in _toc.yml, so not in the book's PDF or navigation; the
  back matter's pages link it (``book/_ext/take_away.py``).
* ``_build/html/solutions.pdf`` (and ``_build/pdf/solutions.pdf``): that page printed by the
  book's printer (``tools/make_pdf.py``: the same chromium, page size, margins and footer).

    python tools/solutions_booklet.py              # page and PDF (PDF only where chromium is)
    python tools/solutions_booklet.py --no-pdf
"""

from __future__ import annotations

import argparse
import base64
import html
import re
import sys
from pathlib import Path

import exercise_notebooks  # beside this file
import lab_book
import nbformat
import teaching

PAGE = teaching.SITE / teaching.BOOKLET_HTML
PDF = teaching.BUILD / "pdf" / teaching.BOOKLET_PDF
FIGURES = "solutions-figures"  # beside the page
NUMREF = re.compile(r"\{numref\}`(?:[^`<]*<)?(?P<label>[^`>]+)>?`")

STYLE = """
body { font-family: "DejaVu Sans", Arial, sans-serif; max-width: 46rem; margin: 2rem auto;
       padding: 0 1rem; line-height: 1.5; color: #222; }
h1 { font-size: 1.7rem; }
h2 { font-size: 1.35rem; margin-top: 2.2rem; border-bottom: 1px solid #ccc; }
h3 { font-size: 1.1rem; margin-top: 1.6rem; }
.question { color: #444; border-left: 3px solid #bbb; padding-left: 0.8rem; }
.solution { border-left: 3px solid #1f6fb2; padding-left: 0.8rem; }
.label { font-weight: bold; color: #1f6fb2; }
figure { margin: 1rem 0; } figure img { max-width: 100%; }
figcaption { font-size: 0.9rem; color: #444; }
pre { background: #f5f5f5; padding: 0.6rem; overflow-x: auto; font-size: 0.85rem; }
nav ol { columns: 2; }
@media print {
  h2 { break-before: page; } h3, figure { break-inside: avoid; } nav { display: none; }
  body { margin: 0; max-width: none; }
}
"""


def markdown(text: str) -> str:
    """HTML for the book's markdown (CommonMark, tables, dollar math for MathJax)."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    def math(content: str, config: dict) -> str:
        if config.get("display_mode"):
            return f"\\[{html.escape(content)}\\]"
        return f"\\({html.escape(content)}\\)"

    md = MarkdownIt("commonmark").enable("table")
    md.use(dollarmath_plugin, allow_space=True, double_inline=True, renderer=math)
    # a code block that scrolls sideways must be reachable from the keyboard (axe-core's
    # scrollable-region-focusable), as the site's own code blocks are
    return md.render(text).replace("<pre>", '<pre tabindex="0">')


def chapter_section(ipynb: Path, figures_dir: Path) -> tuple[str, str, int]:
    """(HTML of one chapter's solutions, its title, how many figures it shows)."""
    nb = nbformat.read(ipynb, as_version=4)
    asked = exercise_notebooks.exercises(nb)
    if not asked:
        return "", "", 0
    glued = lab_book.glued_values(nb)
    figs = lab_book.figures(nb, ipynb.stem)
    title = exercise_notebooks._chapter_title(nb)
    number = lab_book.chapter_number(ipynb.stem)
    heading = f"Chapter {number}: {title}" if number else title
    anchor = teaching.chapter_tag(ipynb.stem)
    parts = [f'<section id="{anchor}"><h2>{html.escape(heading)}</h2>']
    used = set(exercise_notebooks.needed_cells(nb, asked))
    cited = {m.group("label") for e in asked for m in NUMREF.finditer(e.question + e.solution)}
    shown = [
        (label, entry)
        for label, entry in figs.items()
        if entry[0] in used or label in cited  # entry: (cell index, "Fig. N.k", caption)
    ]
    if shown:
        parts.append("<p>The chapter's figures these exercises use:</p>")
    for label, (index, fig_number, caption) in shown:
        images = [o for o in nb.cells[index].outputs if "image/png" in o.get("data", {})]
        name = f"{anchor}-{label}.png"
        figures_dir.mkdir(parents=True, exist_ok=True)
        (figures_dir / name).write_bytes(base64.b64decode(images[0]["data"]["image/png"]))
        text = exercise_notebooks.render(caption, glued, figs, ipynb.parent, label)
        alt = nb.cells[index].metadata.get("mystnb", {}).get("image", {}).get("alt") or text
        parts.append(
            f'<figure id="{anchor}-{label}"><img src="{FIGURES}/{name}" '
            f'alt="{html.escape(" ".join(alt.split()), quote=True)}">'
            f"<figcaption><strong>{fig_number}.</strong> {markdown(text)}</figcaption></figure>"
        )
    for exercise in asked:
        where = f"{ipynb.name} exercise {exercise.number}"
        question = exercise_notebooks.render(exercise.question, glued, figs, ipynb.parent, where)
        solution = exercise_notebooks.render(exercise.solution, glued, figs, ipynb.parent, where)
        parts.append(
            f'<h3 id="{anchor}-ex{exercise.number}">Exercise {exercise.number}</h3>'
            f'<div class="question">{markdown(question)}</div>'
            f'<div class="solution"><p class="label">Solution</p>{markdown(solution)}</div>'
        )
    parts.append("</section>")
    return "\n".join(parts), heading, len(shown)


def booklet(notebooks: list[Path], page: Path) -> tuple[str, int, int]:
    """The booklet's HTML; the number of exercises and of figures."""
    figures_dir = page.parent / FIGURES
    sections, contents, count, figures = [], [], 0, 0
    for ipynb in notebooks:
        body, heading, shown = chapter_section(ipynb, figures_dir)
        if not body:
            continue
        sections.append(body)
        contents.append(
            f'<li><a href="#{teaching.chapter_tag(ipynb.stem)}">{html.escape(heading)}</a></li>'
        )
        count += len(exercise_notebooks.exercises(nbformat.read(ipynb, as_version=4)))
        figures += shown
    version = teaching.version()
    text = f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>normcore {version}: worked solutions</title>
<link rel="icon" href="_static/favicon.svg" type="image/svg+xml">
<style>{STYLE}</style>
<script>window.MathJax = {{tex: {{inlineMath: [["\\\\(", "\\\\)"]],
  displayMath: [["\\\\[", "\\\\]"]]}}}};</script>
<script defer src="_static/mathjax/tex-chtml.js"></script>
</head>
<body>
<main>
<h1>normcore: worked solutions</h1>
<p class="nc-version">normcore {version}. The worked solution of every exercise in the book
({count} exercises), for teachers. The figures are the ones the book's run computed. The book's
reader's edition folds the same solutions under each exercise and prints them in its PDF; its
student edition (<code>make student</code>) holds none, in its pages, notebooks or PDF, and is the
one to hand out. This booklet is in the instructor bundle (<code>make instructor</code>).
<a href="index.html">The book</a>.</p>
<nav aria-label="Chapters"><ol>
{chr(10).join(contents)}
</ol></nav>
{chr(10).join(sections)}
</main>
</body>
</html>
"""
    return text, count, figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-pdf", action="store_true", help="the page only")
    parser.add_argument("--page", type=Path, default=PAGE, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        text, count, figures = booklet(teaching.chapters(), args.page)
    except (lab_book.RenderError, exercise_notebooks.ExerciseError) as error:
        raise SystemExit(f"solutions_booklet: {error}") from None
    args.page.parent.mkdir(parents=True, exist_ok=True)
    args.page.write_text(text, encoding="utf-8")
    print(f"solutions_booklet: {args.page} ({count} exercises, {figures} figures)")
    if args.no_pdf:
        return 0
    import chromium
    import make_pdf
    from static_server import serve

    if not chromium.can_print():
        print("solutions_booklet: no PDF without chromium and playwright", file=sys.stderr)
        return 0
    with serve(args.page.parent) as site:
        problems = make_pdf.print_pdf(f"{site}/{args.page.name}", PDF)
    if problems:
        print("solutions_booklet: the page reported:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 1
    (args.page.parent / teaching.BOOKLET_PDF).write_bytes(PDF.read_bytes())
    print(f"solutions_booklet: {PDF} ({PDF.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
