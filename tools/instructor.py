"""The instructor bundle: everything a lecturer needs and students should not have, one zip.

From the reader's build (``make book``: the booklet, the guide, the figure pack) and the slides
(``tools/slides.py``), into ``_build/instructor/normcore-instructor-<version>.zip``:

    normcore-instructor-<version>/
        README.txt                  what is here, the licence and the attribution line
        LICENSE
        solutions.pdf               the solutions booklet (every worked solution)
        solutions/                  the booklet as a page, with its figures and the MathJax it
                                    typesets with (open solutions/solutions.html)
        answer-keys/                each chapter's exercise notebook, with the worked solution
                                    after each question (tools/exercise_notebooks.py)
        teaching-guide.html, .pdf   objectives, prerequisites and time per chapter, course maps,
                                    exercises by use, the student setup (tools/teaching_guide.py)
        slides/                     a starter deck per chapter, PDF (16:9)
        figures/normcore-figures.zip  the figure pack

    python tools/instructor.py
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import exercise_notebooks  # beside this file
import teaching

README = """normcore instructor bundle, version {version}

For teachers of "normcore: normalisation layers, computed". Keep it from students: it holds
every worked solution. Hand students the student edition (make student; student/ in the
release archive), whose pages, notebooks and PDF hold none.

solutions.pdf          every exercise's worked solution ({count} exercises)
solutions/             the same as a page (solutions/solutions.html), offline
answer-keys/           each exercise notebook with the worked solutions after its questions
teaching-guide.html    objectives, prerequisites, time per chapter, 2/3/4-week course maps,
teaching-guide.pdf     which exercises suit class, homework or assessment, student setup
slides/                a starter deck per chapter (title, objectives, key equations, figures)
figures/               the figure pack: SVG and PDF (text as text), PNG and 220-dpi PNG

Licences: {licence}
Attribution: {attribution}
"""


class BundleError(RuntimeError):
    pass


def bundle(site: Path = teaching.SITE, into: Path = teaching.INSTRUCTOR) -> Path:
    version = teaching.version()
    needed = {
        "solutions PDF": site / teaching.BOOKLET_PDF,
        "solutions page": site / teaching.BOOKLET_HTML,
        "teaching guide": site / teaching.GUIDE_HTML,
        "figure pack": site / teaching.FIGURES_DIR / teaching.WHOLE_PACK,
    }
    missing = [f"{k} ({v})" for k, v in needed.items() if not v.is_file()]
    slides = sorted((into / "slides").glob("*.pdf"))
    if not slides:
        missing.append(f"slides ({into / 'slides'}: python tools/slides.py)")
    if missing:
        raise BundleError("no " + "; no ".join(missing) + " (make book, then make instructor)")
    top = f"normcore-instructor-{version}"
    files: list[tuple[str, bytes]] = []
    add = files.append
    add((f"{top}/solutions.pdf", needed["solutions PDF"].read_bytes()))
    add((f"{top}/solutions/solutions.html", needed["solutions page"].read_bytes()))
    for extra in sorted((site / "solutions-figures").rglob("*")):
        if extra.is_file():
            add((f"{top}/solutions/{extra.relative_to(site).as_posix()}", extra.read_bytes()))
    for static in ("mathjax", "favicon.svg"):
        base = site / "_static" / static
        for path in sorted(base.rglob("*")) if base.is_dir() else [base]:
            if path.is_file():
                rel = path.relative_to(site).as_posix()
                add((f"{top}/solutions/{rel}", path.read_bytes()))
    keys = exercise_notebooks.build_keys(teaching.chapters(), into / "answer-keys")
    for key in keys:
        add((f"{top}/answer-keys/{key.name}", key.read_bytes()))
    add((f"{top}/teaching-guide.html", needed["teaching guide"].read_bytes()))
    guide_pdf = into / "teaching-guide.pdf"
    if _print(needed["teaching guide"], site, guide_pdf):
        add((f"{top}/teaching-guide.pdf", guide_pdf.read_bytes()))
    for pdf in slides:
        add((f"{top}/slides/{pdf.name}", pdf.read_bytes()))
    add((f"{top}/figures/{teaching.WHOLE_PACK}", needed["figure pack"].read_bytes()))
    count = sum(
        len(exercise_notebooks.exercises(exercise_notebooks.nbformat.read(p, as_version=4)))
        for p in teaching.chapters()
    )
    add(
        (
            f"{top}/README.txt",
            README.format(
                version=version,
                count=count,
                licence=teaching.licence_note(),
                attribution=teaching.attribution(),
            ).encode(),
        )
    )
    add((f"{top}/LICENSE", (teaching.ROOT / "LICENSE").read_bytes()))
    return teaching.write_zip(into / f"{top}.zip", files, licence=False)


def _print(page: Path, site: Path, target: Path) -> bool:
    import chromium

    if not chromium.can_print():
        print("instructor: no guide PDF without chromium and playwright", file=sys.stderr)
        return False
    import make_pdf
    from static_server import serve

    with serve(site) as url:
        problems = make_pdf.print_pdf(f"{url}/{page.relative_to(site).as_posix()}", target)
    if problems:
        raise BundleError(f"the guide reported {problems}")
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    try:
        target = bundle()
    except BundleError as error:
        raise SystemExit(f"instructor: {error}") from None
    print(f"instructor: {target} ({target.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
