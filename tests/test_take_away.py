"""The book to take away, checked on the BUILT site (``make book`` builds both):

- each chapter page (every document in _toc.yml with a paired ``.ipynb``) links to its notebook,
  and the linked file is that notebook, byte for byte;
- every link to the PDF resolves to a file in the site, which is a PDF (the link never 404s);
- the PDF (``_build/pdf/normcore.pdf``, printed by tools/make_pdf.py) has a sensible number of
  pages, every chapter title in toc order, a glued figure from each chapter, every chapter image
  embedded and each widget's built view with its note; read with poppler's pdftotext, pdfinfo
  and pdfimages.

The browser test that clicks each download is tests/browser/test_downloads.py.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import shutil
import struct
import subprocess
from functools import cache
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
import teaching  # tools/ (pyproject: pythonpath)

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "_build" / "html"
PDF = ROOT / "_build" / "pdf" / "normcore.pdf"
TOC = ROOT / "_toc.yml"
GLUE_ROLE = re.compile(r"\{glue(?::text)?\}`([A-Za-z0-9_]+)(?::([^`]+))?`")
RECORD = "application/papermill.record/text/plain"

pytestmark = [
    pytest.mark.site,  # reads the built site: not part of make check
    pytest.mark.skipif(
        not (SITE / "index.html").is_file(),
        reason="the site is not built (_build/html/index.html is missing); run `make book` first",
    ),
]


def can_print() -> bool:
    """The site's own rule (book/_ext/take_away.py): a PDF is printed and linked only where
    playwright and a chromium are installed."""
    spec = importlib.util.spec_from_file_location("take_away", ROOT / "book/_ext/take_away.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.can_print()


def toc_documents() -> list[str]:
    """Every document of _toc.yml in reading order, the root first."""
    import yaml

    toc = yaml.safe_load(TOC.read_text(encoding="utf-8"))
    docs = [toc["root"]]

    def walk(entries: list | None) -> None:
        for entry in entries or []:
            if "file" in entry:
                docs.append(entry["file"])
            walk(entry.get("sections"))

    walk(toc.get("chapters"))
    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    return docs


def notebook_chapters() -> list[str]:
    """The documents whose .md has a paired .ipynb: the chapters with a notebook to download."""
    return [
        d
        for d in toc_documents()
        if (ROOT / f"{d}.md").is_file() and (ROOT / f"{d}.ipynb").is_file()
    ]


class Links(HTMLParser):
    """The href of every <a> with one of ``classes``."""

    def __init__(self, *classes: str) -> None:
        super().__init__()
        self.classes = set(classes)
        self.found: dict[str, list[str]] = {c: [] for c in classes}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        for cls in set((values.get("class") or "").split()) & self.classes:
            self.found[cls].append(values.get("href") or "")


def links(page: Path, *classes: str) -> dict[str, list[str]]:
    parser = Links(*classes)
    parser.feed(page.read_text(encoding="utf-8"))
    return parser.found


def site_target(page: Path, href: str) -> Path:
    """The file under _build/html that ``href`` on ``page`` points to."""
    base = "http://site/" + page.relative_to(SITE).as_posix()
    return SITE / urlsplit(urljoin(base, href)).path.lstrip("/")


# ---------------------------------------------------------------- notebook download links


def test_every_chapter_with_a_notebook_is_found():
    chapters = notebook_chapters()
    numbered = [d for d in toc_documents() if re.match(r"book/\d\d-", d)]
    assert chapters, "no document in _toc.yml has a paired .ipynb"
    assert set(numbered) <= set(chapters), (
        f"numbered chapters without a paired notebook: {sorted(set(numbered) - set(chapters))}"
    )


@pytest.mark.parametrize("doc", notebook_chapters())
def test_chapter_page_links_its_own_notebook(doc: str):
    page = SITE / f"{doc}.html"
    found = links(page, "nc-notebook-download")["nc-notebook-download"]
    assert len(found) == 1, f"{page.name}: expected one notebook download link, got {found}"
    target = site_target(page, found[0])
    assert target.is_file(), f"{page.name} links {found[0]}, which is not in the site"
    # the stored run, cell for cell, under a header cell naming the text's version and edition
    got = json.loads(target.read_text(encoding="utf-8"))
    stored = json.loads((ROOT / f"{doc}.ipynb").read_text(encoding="utf-8"))
    assert got["cells"][0]["id"] == "normcore-edition", f"{target}: no header cell"
    assert teaching.version() in "".join(got["cells"][0]["source"])
    assert got["cells"][1:] == stored["cells"], f"{target} is not the stored run {doc}.ipynb"


def test_pages_without_a_notebook_offer_none():
    others = [d for d in toc_documents() if d not in notebook_chapters()]
    for doc in others:
        found = links(SITE / f"{doc}.html", "nc-notebook-download")["nc-notebook-download"]
        assert not found, f"{doc} has no paired notebook but links {found}"


def test_every_pdf_link_resolves_to_the_pdf():
    pages = sorted(SITE.rglob("*.html"))
    checked = 0
    for page in pages:
        for href in links(page, "nc-pdf-download")["nc-pdf-download"]:
            target = site_target(page, href)
            assert target.is_file(), (
                f"{page.relative_to(SITE)} links {href}, which is missing: `make book` prints "
                "the PDF after the pages (tools/make_pdf.py)"
            )
            assert target.read_bytes()[:5] == b"%PDF-", f"{target} is not a PDF"
            checked += 1
    if can_print():
        assert checked >= len(notebook_chapters()), "fewer PDF links than chapter pages"
    else:
        assert checked == 0, "a page links a PDF that this machine cannot print"


def test_widget_notes_follow_every_widget_view():
    for doc in notebook_chapters():
        html = (SITE / f"{doc}.html").read_text(encoding="utf-8")
        views = html.count('type="application/vnd.jupyter.widget-view+json"')
        notes = html.count("nc-widget-live")
        assert notes == views, f"{doc}: {views} widget views but {notes} print notes"


# ---------------------------------------------------------------- the PDF


def need(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        pytest.skip(f"{tool} is not installed (apt-get install -y poppler-utils)")
    return path


@cache
def pdf_text() -> str:
    if not can_print():
        pytest.skip("no PDF without chromium and playwright (bash tools/ci_prepare.sh)")
    if not PDF.is_file():
        pytest.fail(f"{PDF.relative_to(ROOT)} is missing: `make book` (or `make pdf`) prints it")
    out = subprocess.run(
        [need("pdftotext"), "-enc", "UTF-8", str(PDF), "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return " ".join(out.replace("\u2212", "-").split())


def pdf_pages() -> int:
    pdf_text()  # skips or fails as it does
    info = subprocess.run(
        [need("pdfinfo"), str(PDF)], capture_output=True, text=True, check=True
    ).stdout
    return int(re.search(r"^Pages:\s+(\d+)", info, re.M).group(1))


def title(doc: str) -> str:
    """The first level-1 heading of the document's .md, outside code fences."""
    fenced = False
    for line in (ROOT / f"{doc}.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("# "):
            return line[2:].strip()
    raise AssertionError(f"{doc}.md has no '# ' title")


def glued_figure(doc: str) -> str | None:
    """The most telling number (most non-zero digits) that the chapter's prose glues at a stated
    precision ({glue:text}`name:.4f`), formatted so, with its value from the chapter's stored
    notebook; None if there is none. Formatted figures hold on every machine; a repr might not."""
    values: dict[str, str] = {}
    for cell in json.loads((ROOT / f"{doc}.ipynb").read_text(encoding="utf-8"))["cells"]:
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            if name and RECORD in output.get("data", {}):
                values[name] = output["data"][RECORD]
    shown = []
    for name, spec in GLUE_ROLE.findall((ROOT / f"{doc}.md").read_text(encoding="utf-8")):
        if spec and name in values:
            value = ast.literal_eval(values[name])
            if isinstance(value, (int, float)):
                shown.append(format(value, spec))
    return max(shown, key=lambda t: (sum(c in "123456789" for c in t), len(t))) if shown else None


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's header (IHDR)."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


def test_pdf_page_count_is_sensible():
    pages = pdf_pages()
    chapters = len(notebook_chapters())
    assert 3 * chapters <= pages <= 60 * chapters, (
        f"{pages} pages for {chapters} chapters: expected 3 to 60 a chapter"
    )


def test_pdf_has_every_title_in_toc_order_with_section_numbers():
    """After the contents (which list the chapters too), the root page's title, then every
    chapter's, in toc order and numbered as on the site (N. title, then N.1. first section)."""
    text = pdf_text()
    docs = [d for d in toc_documents() if (ROOT / f"{d}.md").is_file()]
    chapters = [d for d in docs[1:] if re.match(r"book/\d\d-", d)]
    contents_end = max(text.find(f"{n}. {title(d)}") for n, d in enumerate(chapters, start=1))
    at = contents_end
    for doc in docs:
        number = chapters.index(doc) + 1 if doc in chapters else None
        heading = f"{number}. {title(doc)}" if number else title(doc)
        found = text.find(heading, at + 1)
        assert found > at, f"{doc}: heading {heading!r} not found after the previous one"
        if number:
            assert f"{number}.1. " in text[found:], f"{doc}: no numbered section {number}.1."
        at = found


def test_pdf_has_a_glued_figure_from_each_chapter():
    text = pdf_text()
    figures = {doc: glued_figure(doc) for doc in notebook_chapters()}
    assert sum(f is not None for f in figures.values()) >= len(figures) - 1
    missing = {doc: f for doc, f in figures.items() if f is not None and f not in text}
    assert not missing, f"glued figures not in the PDF's text: {missing}"


def test_pdf_math_is_typeset_not_raw():
    text = pdf_text()
    raw = re.findall(r"\\(?:frac|sum|sqrt|mathbf|partial)\b|\$\$", text)
    assert not raw, f"untypeset TeX in the PDF: {raw[:5]}"


def test_pdf_embeds_every_chapter_image():
    """Every figure a chapter page shows is in the PDF as an image of the same pixel size."""
    pdf_text()  # skips or fails as it does
    rows = subprocess.run(
        [need("pdfimages"), "-list", str(PDF)], capture_output=True, text=True, check=True
    ).stdout.splitlines()[2:]
    embedded = {(int(r.split()[3]), int(r.split()[4])) for r in rows if r.split()[2] == "image"}
    shown: dict[str, tuple[int, int]] = {}
    for doc in toc_documents():
        page = SITE / f"{doc}.html"
        for src in re.findall(r'<img[^>]+src="([^"]+\.png)"', page.read_text(encoding="utf-8")):
            shown[src] = png_size(site_target(page, src))
    assert shown, "the chapters show no PNG figure"
    missing = {src: size for src, size in shown.items() if size not in embedded}
    assert not missing, f"figures not embedded in the PDF (by pixel size): {missing}"


def test_pdf_shows_each_widget_with_where_to_use_it_live():
    text = pdf_text()
    views = sum(
        (SITE / f"{d}.html")
        .read_text(encoding="utf-8")
        .count('type="application/vnd.jupyter.widget-view+json"')
        for d in notebook_chapters()
    )
    assert views, "no chapter shows a widget"
    assert text.count("Live widget.") == views, (
        f"{text.count('Live widget.')} widget notes in the PDF for {views} widgets"
    )
