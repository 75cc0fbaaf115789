"""Every sentence of one chapter that speaks of another is held (tools/cross_chapter.py)."""

from __future__ import annotations

from pathlib import Path

import causal_sentences as cs  # tools/ is on the tests' path (pyproject.toml)
import cross_chapter as cc


def test_every_cross_chapter_sentence_is_held_and_every_row_matches():
    found = cc.problems()
    assert not found, "the cross-chapter audit is out of step:\n" + "\n".join(found)


def test_the_audit_catches_a_restated_figure_nobody_holds(tmp_path: Path, monkeypatch):
    book = tmp_path / "book"
    book.mkdir()
    (book / "97-a.md").write_text("# A\n\nThe network trains at rate 1.\n", encoding="utf-8")
    (book / "98-b.md").write_text(
        "# B\n\nChapter 97 trains at rate 1 for {glue:text}`b_epochs` epochs.\n\n"
        "```{code-cell} ipython3\nglue('b_epochs', comparison.EPOCHS)\n```\n\n"
        "{doc}`97-a` shows the network. Its loss halves on 19 of 20 seeds (chapter 97).\n",
        encoding="utf-8",
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("def test_halves():\n    pass\n", "utf-8")
    audit = tmp_path / "audit.md"
    monkeypatch.setattr(cs, "ROOT", tmp_path)
    monkeypatch.setattr(cc, "ROOT", tmp_path)

    def check(rows: str) -> list[str]:
        audit.write_text("| chapter | fragment | holder |\n|---|---|---|\n" + rows, "utf-8")
        return cc.problems(audit)

    good = (
        "| 98-b | Chapter 97 trains | glue b_epochs=comparison.EPOCHS; typed 1: the rate |\n"
        "| 98-b | shows the network | pointer |\n"
        "| 98-b | Its loss halves | claim tests/test_x.py::test_halves; typed 19 20: counts |\n"
    )
    assert check(good) == []
    found = check(good.replace("; typed 19 20: counts", ""))
    assert len(found) == 1 and "typed numbers ['19', '20']" in found[0]  # a restated count
    found = check(good.replace("comparison.EPOCHS", "digits_rates.EPOCHS"))
    assert len(found) == 1 and "source 'digits_rates.EPOCHS' is not in" in found[0]
    found = check(good.replace("glue b_epochs", "glue a_epochs"))
    assert any("no glue role a_epochs" in p for p in found)
    found = check(good.replace("test_halves", "test_no_such"))
    assert len(found) == 1 and "has no test test_no_such" in found[0]
    found = check(good.replace("| 98-b | shows the network | pointer |\n", ""))
    assert len(found) == 1 and "no audit row for: {doc}`97-a` shows the network." in found[0]
    found = check(good + "| 98-b | a sentence that is gone | pointer |\n")
    assert len(found) == 1 and "matches no sentence" in found[0]
