"""What the BUILT site (``make book``) gives teachers: links that resolve, files that are the
ones the tools make, the version on every page, and the booklet outside the book.

* Each chapter page's take-away line links its exercise notebook (where it has exercises) and its
  figure zip (where it has figures); each link resolves to the file the tools make from the
  stored run, and a chapter without exercises or figures links none.
* Every page of the site shows the version (pyproject.toml) in its footer.
* The back matter's pages link the solutions booklet; the booklet page holds every exercise of
  every chapter with its solution written out (no raw role), is not in the book's table of
  contents, and its PDF is a PDF; the book's single page (the PDF's source) does not hold it.
The browser tests click these links (tests/browser/test_teaching_downloads.py).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin

import exercise_notebooks  # tools/ is on the path (pyproject: pythonpath)
import nbformat
import pytest
import teaching

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "_build" / "html"

pytestmark = [
    pytest.mark.site,
    pytest.mark.skipif(
        not (SITE / "index.html").is_file(),
        reason="the site is not built (_build/html/index.html is missing); run `make book` first",
    ),
]


class Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[dict[str, str]] = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self.links.append({k: v or "" for k, v in attrs})


def links(page: Path, css_class: str) -> list[str]:
    parser = Links()
    parser.feed(page.read_text(encoding="utf-8"))
    return [a["href"] for a in parser.links if css_class in a.get("class", "").split()]


def target(page: Path, href: str) -> Path:
    return SITE / urljoin(page.relative_to(SITE).as_posix(), href)


@pytest.mark.parametrize("ipynb", teaching.chapters(), ids=lambda p: p.stem)
def test_chapter_links_its_exercises_and_figures(ipynb: Path):
    page = SITE / "book" / f"{ipynb.stem}.html"
    nb = nbformat.read(ipynb, as_version=4)
    exercises = links(page, "nc-exercises-download")
    figures = links(page, "nc-figures-download")
    if teaching.has_exercises(nb):
        assert len(exercises) == 1, f"{page.name}: {exercises}"
        built = target(page, exercises[0])
        made = nbformat.writes(exercise_notebooks.exercise_notebook(ipynb)) + "\n"
        assert built.read_text(encoding="utf-8") == made
    else:
        assert exercises == []
    if teaching.has_figures(nb):
        assert len(figures) == 1
        assert target(page, figures[0]).name == teaching.chapter_pack(ipynb.stem)
        assert target(page, figures[0]).read_bytes()[:2] == b"PK"
        (whole,) = links(page, "nc-figures-all")
        assert target(page, whole).is_file()
    else:
        assert figures == []


def site_pages() -> list[Path]:
    """Every page of _toc.yml, the index and search pages, and the booklet (a page an older
    build left in _build/html, under a chapter's former name, is no page of this book)."""
    from test_take_away import toc_documents  # tests/ is on sys.path (rootdir import)

    names = [f"{doc}.html" for doc in toc_documents()] + ["genindex.html", "search.html"]
    return [SITE / name for name in [*names, teaching.BOOKLET_HTML]]


def test_every_page_shows_the_version():
    version = f"normcore {teaching.version()}"
    missing = [
        p.relative_to(SITE).as_posix()
        for p in site_pages()
        if version not in re.sub(r"\s+", " ", p.read_text(encoding="utf-8"))
    ]
    assert not missing, f"pages without {version!r}: {missing}"


def test_back_matter_links_the_booklet():
    for name in ("glossary", "bibliography"):
        page = SITE / "book" / f"{name}.html"
        (href,) = links(page, "nc-booklet-page")
        assert target(page, href) == SITE / teaching.BOOKLET_HTML
        for pdf in links(page, "nc-booklet-pdf"):
            assert target(page, pdf).read_bytes()[:5] == b"%PDF-"
    chapter = SITE / "book" / "02-worked-column.html"
    assert links(chapter, "nc-booklet-page") == [], "a chapter page links the answers"


def test_booklet_holds_every_solution_and_stays_out_of_the_book():
    booklet = (SITE / teaching.BOOKLET_HTML).read_text(encoding="utf-8")
    assert not re.search(r"\{(glue|numref|doc|term)[a-z:]*\}`", booklet), "a raw role"
    for ipynb in teaching.chapters():
        tag = teaching.chapter_tag(ipynb.stem)
        nb = nbformat.read(ipynb, as_version=4)
        for exercise in exercise_notebooks.exercises(nb):
            assert f'id="{tag}-ex{exercise.number}"' in booklet, (ipynb.stem, exercise.number)
    assert teaching.BOOKLET_HTML.removesuffix(".html") not in (ROOT / "_toc.yml").read_text()
    single = ROOT / "_build" / "singlehtml"
    if single.is_dir():
        text = "".join(p.read_text(encoding="utf-8") for p in single.rglob("*.html"))
        assert "normcore: worked solutions" not in text
    pdf = SITE / teaching.BOOKLET_PDF
    if pdf.exists():
        assert pdf.read_bytes()[:5] == b"%PDF-"


@pytest.mark.parametrize("name", ["normcore.pdf", teaching.BOOKLET_PDF])
def test_every_pdf_page_shows_the_version(name: str):
    import shutil
    import subprocess

    pdf = ROOT / "_build" / "pdf" / name
    if not pdf.is_file() or shutil.which("pdftotext") is None:
        pytest.skip(f"no {pdf.name} (printed only with chromium) or no pdftotext (poppler-utils)")
    text = subprocess.run(
        ["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    pages = [p for p in text.split("\f") if p.strip()]
    version = f"normcore {teaching.version()}"
    assert len(pages) > 1
    missing = [i + 1 for i, page in enumerate(pages) if version not in page]
    assert not missing, f"{name}: pages without {version!r}: {missing[:10]}"
