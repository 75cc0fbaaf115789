"""tools/lab_book.py: the reader's working copy that `make lab` serves (no browser needed)."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
CHAPTERS = sorted(p for p in BOOK.glob("*.ipynb") if p.with_suffix(".md").exists())
RAW = re.compile(r"\{(glue|glue:text|numref|eval|doc)\}`")


def _load():
    path = ROOT / "tools" / "lab_book.py"
    spec = importlib.util.spec_from_file_location("lab_book", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


lab_book = _load()


def test_glued_text_is_formatted_as_myst_nb_formats_it():
    from myst_nb.core.variables import format_plain_text

    for text, spec in [
        ("24.0", ".0f"),
        ("2.0370123", ".4f"),
        ("4", ""),
        ("7", "d"),
        ("1e-16", ".1e"),
        ("'not one loss'", ""),
        ("0.615", ".3f"),
        ("3", "s"),
    ]:
        assert lab_book.format_glued(text, spec) == format_plain_text(text, spec), (text, spec)


def test_roles_are_written_out():
    figs = {"fig-a": (3, "Fig. 2.1", "A caption.")}
    glued = {"x": "2.5", "n": "4"}
    text = (
        "x is {glue:text}`x:.2f` of {glue:text}`n`; see {numref}`fig-a` and "
        "{numref}`Figure %s <fig-a>`, the {doc}`words <glossary>` and {term}`running figures`."
    )
    out = lab_book.render_prose(text, glued, figs, BOOK, "here")
    assert out == (
        "x is 2.50 of 4; see Fig. 2.1 and Figure 2.1, the [words](glossary.md) and running figures."
    )


@pytest.mark.parametrize("role", ["{glue:text}`missing:.2f`", "{numref}`fig-missing`"])
def test_a_role_that_names_nothing_is_an_error(role):
    with pytest.raises(lab_book.RenderError, match="here"):
        lab_book.render_prose(role, {}, {}, BOOK, "here")


@pytest.mark.parametrize("ipynb", CHAPTERS, ids=lambda p: p.stem)
def test_every_chapter_renders_without_a_raw_role(ipynb):
    nb = lab_book.lab_notebook(ipynb, BOOK)
    book = nbformat.read(ipynb, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            assert not RAW.search(cell.source), f"{ipynb.name}: {RAW.search(cell.source)[0]}"
    assert "jupytext" not in nb.metadata  # saving in Lab writes the copy alone
    # one caption cell under each figure, folded cells where the site hides them
    figures = [c for c in book.cells if "caption" in c.metadata.get("mystnb", {}).get("figure", {})]
    captions = [c for c in nb.cells if c.metadata.get("normcore", {}).get("caption_of")]
    assert len(captions) == len(figures)
    for cell in nb.cells:
        if "remove-cell" in cell.metadata.get("tags", []):
            assert cell.metadata["jupyter"] == {"source_hidden": True, "outputs_hidden": True}
    assert len(nb.cells) == len(book.cells) + len(figures)


@pytest.fixture
def small_book(tmp_path):
    """The preface alone, in a scratch book/."""
    book = tmp_path / "book"
    book.mkdir()
    for suffix in (".md", ".ipynb"):
        shutil.copy(BOOK / f"00-preface{suffix}", book / f"00-preface{suffix}")
    return book


def test_copy_is_refreshed_unless_the_reader_edited_it(small_book, tmp_path):
    into = tmp_path / "lab"
    assert lab_book.build(small_book, into, quiet=True) == []
    copy = into / "00-preface.ipynb"
    fresh = copy.read_text()
    assert not list(into.glob("*.md")) or all(
        not p.with_suffix(".ipynb").exists() for p in into.glob("*.md")
    )  # no .md twin beside a chapter

    nb = json.loads(fresh)  # the reader ran it: outputs change, cells' text does not
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["execution_count"] = 99
    copy.write_text(json.dumps(nb))
    assert lab_book.build(small_book, into, quiet=True) == []
    assert copy.read_text() == fresh

    nb["cells"][0]["source"] = "my own notes\n"  # the reader edited it: it is kept
    copy.write_text(json.dumps(nb))
    assert lab_book.build(small_book, into, quiet=True) == ["00-preface.ipynb"]
    assert "my own notes" in copy.read_text()
    copy.unlink()  # and comes back from the book once removed
    assert lab_book.build(small_book, into, quiet=True) == []
    assert copy.read_text() == fresh


HIDES = {"remove-cell", "hide-cell", "remove-input", "hide-input"}
MACHINERY = re.compile(r"\b(glue|below)\(|^\s*assert\b|except ImportError", re.M)
# exercise checkers in hidden cells now hold the worked solutions the chapters show collapsed
GIVES_AWAY = re.compile(r"\.readout\b|\bexplorer\b")


def _code_cells(ipynb: Path):
    import jupytext

    for cell in jupytext.read(ipynb.with_suffix(".md")).cells:
        if cell.cell_type == "code":
            yield cell, bool(HIDES & set(cell.metadata.get("tags", [])))


@pytest.mark.parametrize("ipynb", CHAPTERS, ids=lambda p: p.stem)
def test_reader_cells_hold_no_machinery(ipynb):
    cells = _code_cells(ipynb)
    shown = [c.source for c, hidden in cells if not hidden and MACHINERY.search(c.source)]
    assert not shown, f"{ipynb.stem}: glue, asserts or optional imports in view: {shown[0][:200]}"


@pytest.mark.parametrize("ipynb", CHAPTERS, ids=lambda p: p.stem)
def test_hidden_cells_give_no_answer_away_and_read_no_widget(ipynb):
    """A folded cell can be unfolded (and re-run after the reader moved a widget): it calls no
    exercise checker (that would show an answer) and reads no widget the reader can move; those
    checks live in tests/ on a fresh widget."""
    found = [c.source for c, hidden in _code_cells(ipynb) if hidden and GIVES_AWAY.search(c.source)]
    assert not found, f"{ipynb.stem}: a hidden cell gives away or reads a widget: {found[0][:200]}"


def test_the_machinery_checks_can_fail():
    assert MACHINERY.search('x = 1\nglue("a", x, display=False)')
    assert MACHINERY.search("assert x == 1")
    assert GIVES_AWAY.search('assert "2.0370" in explorer.readout.value')
    assert not MACHINERY.search("print(np.round(x, 4))")


@pytest.mark.slow  # runs postBuild over the whole book (about 25 s)
def test_binder_postbuild_makes_the_working_copy(tmp_path):
    """Binder runs postBuild (and `make lab` runs it too): it must leave lab/ with every chapter,
    its prose free of raw roles, and JupyterLab's settings overrides in place."""
    import os
    import subprocess
    import sys

    shutil.copytree(
        ROOT / "tools", tmp_path / "tools", ignore=shutil.ignore_patterns("__pycache__")
    )
    (tmp_path / "book").mkdir()
    for source in BOOK.iterdir():
        if source.suffix in {".ipynb", ".md", ".bib"} and source.is_file():
            shutil.copy2(source, tmp_path / "book" / source.name)
    shutil.copy2(ROOT / "postBuild", tmp_path / "postBuild")
    settings = tmp_path / "settings"
    env = {
        **os.environ,
        "LAB_SETTINGS": str(settings),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    subprocess.run(
        ["bash", str(tmp_path / "postBuild")],
        check=True,
        env=env,
        capture_output=True,
        cwd=tmp_path,
    )
    made = sorted(p.name for p in (tmp_path / "lab").glob("*.ipynb"))
    assert made == sorted(p.name for p in CHAPTERS)
    for name in made:
        prose = "".join(
            "".join(c["source"])
            for c in json.loads((tmp_path / "lab" / name).read_text())["cells"]
            if c["cell_type"] == "markdown"
        )
        assert "{glue" not in prose and "{numref" not in prose, name
    assert json.loads((settings / "overrides.json").read_text()) == json.loads(
        (ROOT / "tools" / "jupyter" / "overrides.json").read_text()
    )
