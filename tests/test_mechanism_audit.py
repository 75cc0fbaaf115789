"""Every sentence of the book that says why is held by something (tools/causal_sentences.py)."""

from __future__ import annotations

from pathlib import Path

import causal_sentences as cs  # tools/ is on the tests' path (pyproject.toml)


def test_every_causal_sentence_has_a_holder_and_every_row_a_sentence():
    found = cs.problems()
    assert not found, "the mechanism audit is out of step:\n" + "\n".join(found)


def test_the_audit_catches_a_cause_nobody_holds(tmp_path: Path, monkeypatch):
    chapter = tmp_path / "book" / "98-x.md"
    chapter.parent.mkdir()
    chapter.write_text(
        "# A\n\nThe loss falls because the rate is small. It rises.\n\n"
        "```{code-cell} ipython3\n# because code is not prose\n```\n\n"
        "The gap is consistent with a smaller effective rate, which is why we measure it.\n",
        encoding="utf-8",
    )
    audit = tmp_path / "audit.md"
    audit.write_text(
        "| chapter | fragment | holder |\n|---|---|---|\n"
        "| 98-x | consistent with a smaller effective rate | consistent with |\n"
        "| 98-x | a sentence that is gone | derivation |\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(cs, "ROOT", tmp_path)
    found = cs.problems(audit)
    assert any("no audit row for: The loss falls because the rate is small." in p for p in found)
    assert any("matches no causal sentence" in p and "gone" in p for p in found)
    assert len(found) == 2  # the code cell is not prose; the held sentence passes
    audit.write_text(
        "| chapter | fragment | holder |\n|---|---|---|\n"
        "| 98-x | consistent with a smaller effective rate | consistent with |\n"
        "| 98-x | The loss falls | intervention tests/claims/test_ch98.py::test_nothing |\n",
        encoding="utf-8",
    )
    assert any("expected tests/FILE.py::TEST" in p for p in cs.problems(audit))


def test_the_markers_take_since_as_a_cause_not_a_time():
    def caught(sentence: str) -> bool:
        return bool(cs.MARKERS.search(sentence))

    assert caught("The loss falls, since the rate is small.")
    assert caught("Most of it comes from the output layer.")
    assert caught("It diverges for the same reason.")
    assert not caught("RMS norm has since become the usual normaliser.")
    assert not caught("Most language models since GPT-2 normalise the input.")
    assert not caught("It is False since PyTorch 1.12.")
