"""The editions (tools/teaching.py, book/_ext/editions.py, tools/check_edition.py).

* Taking the solutions out of a chapter's stored run (``teaching.strip_solutions``) leaves no
  ``Solution`` dropdown and none of its passages, keeps every glued value the rest of the page
  cites and every code cell, and drops the glued values only the solutions cite.
* The built student edition (``make student``): no solution passage in any page, notebook or
  PDF (pdftotext reads the PDF), no dropdown, no booklet; the same check finds them in the
  reader's edition (so it can fail); every sentence about where the solutions are is the
  student edition's; every page's footer names the version, the edition and the licences; the
  exercise notebooks point to no solution.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import check_edition  # tools/ is on the path (pyproject: pythonpath)
import nbformat
import pytest
import teaching

ROOT = Path(__file__).resolve().parent.parent
STUDENT = teaching.build_dir("student") / "html"
READER = teaching.build_dir("reader") / "html"


@pytest.mark.parametrize("ipynb", teaching.chapters(), ids=lambda p: p.stem)
def test_strip_solutions_takes_out_every_solution_and_nothing_else(ipynb: Path):
    nb = nbformat.read(ipynb, as_version=4)
    passages = [teaching.squeeze(p) for p in teaching.solution_passages(nb)]
    dropdowns = sum(c.source.count(teaching.SOLUTION_START) for c in nb.cells)
    code_before = [c.source for c in nb.cells if c.cell_type == "code"]
    assert teaching.strip_solutions(nb) == dropdowns
    text = teaching.squeeze(" ".join(c.source for c in nb.cells if c.cell_type == "markdown"))
    assert teaching.SOLUTION_START not in text
    assert not teaching.FOLDED.search(text), "a sentence still says the solutions are folded"
    outside = set(check_edition.passages()[ipynb.stem])
    assert not [p for p in passages if p in outside and p in text]
    assert [c.source for c in nb.cells if c.cell_type == "code"] == code_before
    cited = set(teaching.GLUE_ROLE.findall(text))
    glued = {
        teaching._glue_name(o)
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if teaching._glue_name(o)
    }
    assert cited <= glued, f"a value the page cites lost its glue: {sorted(cited - glued)}"


def test_chapter_two_loses_its_solution_figures():
    nb = nbformat.read(teaching.BOOK / "02-worked-column.ipynb", as_version=4)
    teaching.strip_solutions(nb)
    glued = {teaching._glue_name(o) for c in nb.cells if c.cell_type == "code" for o in c.outputs}
    assert "ch02_ex1_gap" not in glued and "ch02_ex4" not in glued
    assert "ch02_run_var" in glued  # the solution cites it, and so does the chapter


needs_student = pytest.mark.skipif(
    not (STUDENT / "index.html").is_file(), reason="the student edition is not built: make student"
)


@pytest.mark.site
@needs_student
def test_the_student_edition_holds_no_solution():
    assert shutil.which("pdftotext"), "pdftotext (poppler-utils) reads the PDF"
    assert (STUDENT / "normcore.pdf").is_file(), "the student edition's PDF was not printed"
    assert check_edition.leaks(STUDENT) == []
    notebooks = list(STUDENT.rglob("*.ipynb"))
    assert len(notebooks) >= 20, "the chapter and exercise notebooks were not all checked"


@pytest.mark.site
@pytest.mark.skipif(not (READER / "index.html").is_file(), reason="make book first")
def test_the_check_finds_the_solutions_in_the_readers_edition():
    found = check_edition.leaks(READER)
    kinds = {
        "page": any(f.split(":")[0].endswith(".html") for f in found),
        "notebook": any(f.split(":")[0].endswith(".ipynb") for f in found),
        "pdf": any(f.split(":")[0].endswith(".pdf") for f in found),
    }
    assert all(kinds.values()), kinds


@pytest.mark.site
@needs_student
def test_every_sentence_about_solutions_is_the_student_editions():
    for page in ("book/glossary.html", "book/bibliography.html"):
        raw = (STUDENT / page).read_text(encoding="utf-8")
        text = teaching.squeeze(re.sub(r"<[^>]+>", " ", raw))
        (line,) = re.findall(r'<p class="nc-booklet[^"]*">(.*?)</p>', raw, re.S)
        line = teaching.squeeze(re.sub(r"<[^>]+>", "", line))
        assert line.startswith("This is the student edition: no worked solution"), page
        assert "solutions.html" not in raw and "handed out without them" not in text, page
    for notebook in (STUDENT / teaching.EXERCISES_DIR).glob("*.ipynb"):
        head = nbformat.read(notebook, as_version=4).cells[0].source
        assert "holds none" in head and "folded" not in head and "booklet" not in head, notebook
        assert nbformat.read(notebook, as_version=4).metadata["normcore"]["edition"] == "student"
    for notebook in (STUDENT / "book").glob("*.ipynb"):
        head = nbformat.read(notebook, as_version=4).cells[0].source
        assert "student edition holds no worked solution" in head, notebook


@pytest.mark.site
@needs_student
@pytest.mark.parametrize("html", [READER, STUDENT], ids=["reader", "student"])
def test_every_page_footer_names_version_edition_and_licence(html: Path):
    edition = "student edition" if html == STUDENT else "reader's edition"
    for page in sorted(html.glob("book/*.html")):
        text = teaching.squeeze(page.read_text(encoding="utf-8").replace("&#39;", "'"))
        assert f"normcore {teaching.version()}, {edition}" in text, page
        assert "CC BY 4.0" in text and "MIT" in text and "© 2026" in text, page
