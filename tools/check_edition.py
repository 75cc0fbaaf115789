"""Check a built student edition: no worked solution in any page, notebook or PDF.

From each chapter's stored run (``book/NN-name.ipynb``, with its solutions) this takes every
passage of plain prose in its worked solutions (``teaching.solution_passages``) and looks for
each in every HTML page of the edition's site, every notebook it offers (the chapter notebooks
beside the pages and the exercise notebooks) and its PDF (as ``pdftotext`` reads it). Also
refused: a folded dropdown on any page, a solutions booklet, a ``Solution`` heading in a notebook.

    NORMCORE_EDITION=student python tools/check_edition.py         # make student runs it
    python tools/check_edition.py --site _build/html                 # the reader's: finds them
"""

from __future__ import annotations

import argparse
import html.parser
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import teaching  # beside this file


class _Text(html.parser.HTMLParser):
    """A page's text, without its scripts and style sheets."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self.skip += 1

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self.skip:
            self.skip -= 1

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


def page_text(path: Path) -> str:
    parser = _Text()
    parser.feed(path.read_text(encoding="utf-8"))
    return teaching.squeeze(" ".join(parser.parts))


def notebook_text(path: Path) -> str:
    nb = nbformat.read(path, as_version=4)
    return teaching.squeeze(" ".join(c.source for c in nb.cells if c.cell_type == "markdown"))


def pdf_text(path: Path) -> str | None:
    """The PDF's text as pdftotext reads it, or None without pdftotext."""
    tool = shutil.which("pdftotext")
    if tool is None:
        return None
    done = subprocess.run([tool, "-q", str(path), "-"], capture_output=True, text=True, check=True)
    return teaching.squeeze(done.stdout)


def passages() -> dict[str, list[str]]:
    """Every chapter's solution passages, by chapter; not those the book's text outside the
    solutions also says (a solution that quotes another chapter's question)."""
    found, outside = {}, []
    for path in teaching.chapters():
        nb = nbformat.read(path, as_version=4)
        found[path.stem] = [teaching.squeeze(s) for s in teaching.solution_passages(nb)]
        teaching.strip_solutions(nb)
        outside += [c.source for c in nb.cells if c.cell_type == "markdown"]
    said = teaching.squeeze(" ".join(outside))
    return {stem: [s for s in kept if s not in said] for stem, kept in found.items()}


def leaks(site: Path) -> list[str]:
    """Every solution passage found in the edition built in `site`, as 'file: passage'."""
    wanted = passages()
    texts: dict[str, str] = {}
    problems: list[str] = []
    for page in sorted(site.rglob("*.html")):
        rel = page.relative_to(site).as_posix()
        raw = page.read_text(encoding="utf-8")
        if "sd-dropdown" in raw:
            problems.append(f"{rel}: a folded dropdown (a solution) on the page")
        texts[rel] = page_text(page)
    for notebook in sorted(site.rglob("*.ipynb")):
        texts[notebook.relative_to(site).as_posix()] = notebook_text(notebook)
    pdfs = sorted(site.rglob("*.pdf"))
    for pdf in pdfs:
        text = pdf_text(pdf)
        if text is None:
            print(f"check_edition: no pdftotext: {pdf.name} not read", file=sys.stderr)
        else:
            texts[pdf.relative_to(site).as_posix()] = text
    for name in (teaching.BOOKLET_HTML, teaching.BOOKLET_PDF):
        if (site / name).exists():
            problems.append(f"{name}: the solutions booklet is in the edition")
    for where, text in texts.items():
        if teaching.FOLDED.search(text):
            problems.append(f"{where}: says a solution is folded there")
        for chapter, found in wanted.items():
            for passage in found:
                if passage in text:
                    problems.append(f"{where}: {chapter}'s solution: {passage!r}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=teaching.SITE)
    args = parser.parse_args(argv)
    if not (args.site / "index.html").is_file():
        raise SystemExit(f"check_edition: no site in {args.site} (make student)")
    problems = leaks(args.site)
    count = sum(len(v) for v in passages().values())
    if problems:
        shown = "\n  ".join(problems[:20])
        more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise SystemExit(
            f"check_edition: {len(problems)} solutions in {args.site}:\n  {shown}{more}"
        )
    print(f"check_edition: none of {count} solution passages in {args.site}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
