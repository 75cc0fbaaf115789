"""Print the whole book into one PDF with the chromium the browser tests use; no TeX.

1. ``jupyter-book build . --builder singlehtml``: every page of _toc.yml, in order, on one page
   with the book's section numbers, rendered (like the site) from each chapter's stored run,
   ``book/NN-name.ipynb``: nothing is executed.
2. Serve _build/singlehtml from 127.0.0.1 and open the page in headless chromium (Playwright):
   wait until MathJax has typeset, every image has loaded and every widget shows its built view.
3. ``page.pdf`` under the print style sheet (book/_site/take-away.css): the article alone, each
   chapter on a new page, each widget followed by where to use it live; page numbers in the
   footer; the headings as the PDF's outline.

The PDF goes to _build/pdf/normcore.pdf and, when the site is built, to
_build/html/normcore.pdf, where each chapter page's download line points.

    python tools/make_pdf.py                 # build and print
    python tools/make_pdf.py --no-build      # print the existing _build/singlehtml again
    python tools/make_pdf.py --if-possible   # make book: say so and stop without chromium
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

import chromium  # beside this file: the chromium lookup and flags, whether a PDF can be printed
import teaching  # beside this file: the book's version
from static_server import serve  # beside this file

ROOT = Path(__file__).resolve().parent.parent

BUILD = teaching.BUILD  # the edition's (NORMCORE_EDITION): _build, or _build/student/_build
SINGLE = BUILD / "singlehtml"
PDF = BUILD / "pdf" / "normcore.pdf"
SITE_COPY = teaching.SITE / "normcore.pdf"
TIMEOUT_MS = 120_000

# Ready to print: MathJax has started and typeset (widget labels included), every image has
# decoded, and every widget view script has a rendered view beside it.
READY = """() => {
  const mj = window.MathJax;
  if (mj && mj.startup && mj.startup.promise && !window.__ncTypeset) {
    window.__ncTypeset = 'waiting';
    mj.startup.promise.then(() => mj.typesetPromise ? mj.typesetPromise() : null)
      .then(() => { window.__ncTypeset = 'done'; });
  }
  const typeset = !document.querySelector('.math') || window.__ncTypeset === 'done';
  const images = Array.from(document.images).every(i => i.complete && i.naturalWidth > 0);
  // the site's widget loader (book/_site/widgets.js) puts each view in a div.widget-subarea
  // just before its script
  const views = Array.from(document.querySelectorAll(
    'script[type="application/vnd.jupyter.widget-view+json"]'));
  const rendered = views.every(s => s.previousElementSibling &&
    s.previousElementSibling.classList.contains('widget-subarea') &&
    s.previousElementSibling.childElementCount > 0);
  const state = {typeset, images, widgets: rendered};
  window.__ncWaiting = Object.keys(state).filter(k => !state[k]);
  return typeset && images && rendered;
}"""

# every page's footer: the version of the text (its commit unless a tagged release), the
# edition, the licence and the page number
EDITION_NAME = {"reader": "reader's edition", "student": "student edition"}
FOOTER = (
    '<div style="font-size:8px;width:100%;text-align:center;color:#555;">'
    f"normcore {teaching.version()}, {EDITION_NAME[teaching.edition()]} · "
    f"text and figures {teaching.TEXT_LICENCE}, code {teaching.CODE_LICENCE} · "
    '<span class="pageNumber"></span> / <span class="totalPages"></span></div>'
)


def root_page() -> str:
    """The single page's file: the toc's root document, e.g. book/00-preface.html."""
    for line in (ROOT / "_toc.yml").read_text(encoding="utf-8").splitlines():
        if line.startswith("root:"):
            return line.split(":", 1)[1].strip() + ".html"
    raise SystemExit("make_pdf: _toc.yml names no root page")


def book_title() -> str:
    """The book's title, from _config.yml."""
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    return str(config.get("title", ""))


def build_single_page() -> None:
    jupyter_book = Path(sys.executable).parent / "jupyter-book"
    where = [] if teaching.edition() == "reader" else ["--path-output", str(BUILD.parent)]
    subprocess.run(
        [str(jupyter_book), "build", ".", "--builder", "singlehtml", "-W", "-n", "--keep-going"]
        + where,
        cwd=ROOT,
        check=True,
    )


def print_pdf(url: str, target: Path) -> list[str]:
    """Open ``url``, wait until it is ready to print, print it to ``target``. Returns the page's
    console errors and failed requests (printing goes on; the caller reports them)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    problems: list[str] = []
    with sync_playwright() as p:
        browser = chromium.launch(p)
        try:
            page = browser.new_page(viewport={"width": 1000, "height": 1400})
            page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: problems.append(str(e)))
            page.on(
                "response",
                lambda r: problems.append(f"HTTP {r.status} {r.url}") if r.status >= 400 else None,
            )
            # the theme's search page script names searchindex.js, which singlehtml never writes
            page.route(
                "**/searchindex.js",
                lambda route: route.fulfill(body="", content_type="text/javascript"),
            )
            page.goto(url, wait_until="load", timeout=TIMEOUT_MS)
            page.wait_for_load_state("networkidle", timeout=TIMEOUT_MS)
            try:
                page.wait_for_function(READY, timeout=TIMEOUT_MS, polling=250)
            except PlaywrightTimeout:
                waiting = page.evaluate("() => window.__ncWaiting")
                raise SystemExit(
                    f"make_pdf: the single page never became ready to print; "
                    f"still waiting for {waiting}; it reported {problems}"
                ) from None
            # the theme's print-only heading above the contents names the first page; the
            # book's title belongs there; and every exercise's worked solution is opened (the
            # reader's edition: the student edition's pages have none)
            page.evaluate(
                """title => {
              const heading = document.querySelector('#jb-print-docs-body h1');
              if (heading) heading.textContent = title;
              document.querySelectorAll('details.sd-dropdown').forEach(d => { d.open = true; });
            }""",
                book_title(),
            )
            page.emulate_media(media="print")
            target.parent.mkdir(parents=True, exist_ok=True)
            page.pdf(
                path=str(target),
                format="A4",
                print_background=True,
                margin={"top": "16mm", "bottom": "16mm", "left": "14mm", "right": "14mm"},
                display_header_footer=True,
                header_template="<span></span>",
                footer_template=FOOTER,
                outline=True,
                tagged=True,
            )
        finally:
            browser.close()
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--no-build",
        action="store_true",
        help="print the existing _build/singlehtml without rebuilding it",
    )
    parser.add_argument(
        "--if-possible",
        action="store_true",
        help="without chromium or playwright, say so and exit 0 (the site then links no PDF)",
    )
    args = parser.parse_args(argv)
    if not chromium.can_print():
        print(
            "make_pdf: no PDF without chromium (apt-get install -y chromium) and playwright "
            "(bash tools/ci_prepare.sh)",
            file=sys.stderr,
        )
        return 0 if args.if_possible else 1
    start = time.perf_counter()
    if not args.no_build:
        build_single_page()
    built = time.perf_counter()
    page = SINGLE / root_page()
    if not page.is_file():
        raise SystemExit(f"make_pdf: {page} is missing (build without --no-build)")
    # Sphinx writes the single page under the root document's name (book/00-preface.html) but
    # with links relative to the site's root: print it from there.
    shutil.copyfile(page, SINGLE / "print.html")
    with serve(SINGLE) as site:
        problems = print_pdf(f"{site}/print.html", PDF)
    if problems:
        print("make_pdf: the single page reported:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 1
    if SITE_COPY.parent.joinpath("index.html").is_file():
        shutil.copyfile(PDF, SITE_COPY)
    done = time.perf_counter()
    print(
        f"make_pdf: {PDF.relative_to(ROOT)} ({PDF.stat().st_size / 1e6:.1f} MB); "
        f"single page built in {built - start:.0f} s, printed in {done - built:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
