"""Every book/*.md notebook and its .ipynb hold the same cells, and the .ipynb has been run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import check_pairing  # tools/check_pairing.py (tools/ is on pytest's path, pyproject.toml)
import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_book_notebooks_are_paired_and_executed():
    problems = check_pairing.check()
    assert not problems, "\n".join(problems)


def test_main_exit_code_is_zero_when_in_step(capsys):
    assert check_pairing.main([]) == 0
    assert "in step" in capsys.readouterr().out


@pytest.fixture
def preface_copy(tmp_path, monkeypatch):
    """A copy of the preface pair in a scratch book/ that the checker is pointed at."""
    md = ROOT / "book" / "00-preface.md"
    if not md.exists():
        pytest.skip("book/00-preface.md is not present")
    book = tmp_path / "book"
    book.mkdir()
    shutil.copy(md, book / md.name)
    shutil.copy(md.with_suffix(".ipynb"), book / "00-preface.ipynb")
    monkeypatch.setattr(check_pairing, "ROOT", tmp_path)
    monkeypatch.setattr(check_pairing, "BOOK", book)
    return book


def test_edited_source_is_reported(preface_copy, capsys):
    ipynb = preface_copy / "00-preface.ipynb"
    nb = json.loads(ipynb.read_text(encoding="utf-8"))
    code = next(c for c in nb["cells"] if c["cell_type"] == "code")
    code["source"] = "print('changed in the ipynb only')\n"
    ipynb.write_text(json.dumps(nb), encoding="utf-8")
    assert check_pairing.main([]) == 1
    assert "source differs" in capsys.readouterr().err


def test_unexecuted_cell_is_reported(preface_copy):
    ipynb = preface_copy / "00-preface.ipynb"
    nb = json.loads(ipynb.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["execution_count"] = None
    ipynb.write_text(json.dumps(nb), encoding="utf-8")
    problems = check_pairing.check()
    assert any("never run" in p for p in problems)


def test_missing_twin_and_orphan_are_reported(preface_copy):
    (preface_copy / "00-preface.ipynb").rename(preface_copy / "99-orphan.ipynb")
    problems = check_pairing.check()
    assert any("no book/00-preface.ipynb" in p for p in problems)
    assert any("99-orphan.ipynb has no paired .md" in p for p in problems)
