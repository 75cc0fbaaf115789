"""Every sentence of the book that says why, and what holds it (the mechanism audit).

A sentence that gives a cause ("because", "the reason", "which is why", ...) is a claim about a
mechanism. The book allows four kinds of support, and ``docs/claim-audit-mechanisms.md`` names
one for each such sentence, as a table row ``| chapter | fragment | holder |``:

* ``intervention tests/PATH.py::test_name``: a test that removes, pins or rescales the proposed
  cause and shows the effect change as predicted (a claims test on fresh draws, or a test that
  replays the stored runs with the cause changed);
* ``derivation``: the cause is algebra the page derives (a Jacobian, a sum that is zero), not an
  empirical mechanism;
* ``cited KEY``: the sentence reports a paper's explanation, cited (``{cite}`KEY```) in it or in
  its paragraph;
* ``consistent with``: the sentence itself says "consistent with" (no intervention was made);
* ``not claimed``: the sentence says the cause is not measured ("does not measure").

The fragment is a piece of the sentence, quoted exactly (glue roles and all), long enough to be
unique. ``python tools/causal_sentences.py`` lists the sentences with no row, and the rows whose
fragment no chapter holds any more; ``tests/test_mechanism_audit.py`` fails on either.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
AUDIT = ROOT / "docs" / "claim-audit-mechanisms.md"

MARKERS = re.compile(
    r"\b(because|the reason|which is why|that is why|this is why|explains why|"
    r"this is what lets|is what lets|is what makes|is what sets|due to|owing to|thanks to|"
    r"for the same reason|comes from|(?<!has )since(?! GPT| PyTorch))\b",
    re.IGNORECASE,
)
HOLDERS = ("intervention", "derivation", "cited", "consistent with", "not claimed")

_FENCE = re.compile(r"^(`{3,}|~{3,})")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(*_`$\[])")


@dataclass(frozen=True)
class Sentence:
    """One causal sentence: where it is and its text (lines joined by spaces)."""

    chapter: str
    line: int
    text: str
    paragraph: str = ""  # the paragraph it is in (a citation may sit in the sentence before)


@dataclass(frozen=True)
class Row:
    """One row of the audit: the chapter's file stem, the fragment, and what holds it."""

    chapter: str
    fragment: str
    holder: str

    @property
    def kind(self) -> str:
        return next((k for k in HOLDERS if self.holder.startswith(k)), "")


def prose_paragraphs(text: str) -> list[tuple[int, str]]:
    """The markdown paragraphs of a MyST notebook outside code fences and the front matter, as
    (first line number, paragraph text with its lines joined by spaces)."""
    lines = text.splitlines()
    out: list[tuple[int, str]] = []
    fence: str | None = None
    start, chunk = 0, []
    front = lines[:1] == ["---"]
    for number, line in enumerate(lines, 1):
        if front:
            if number > 1 and line == "---":
                front = False
            continue
        match = _FENCE.match(line.strip())
        if fence is not None:
            if match and line.strip().startswith(fence) and line.strip().strip("`~") == "":
                fence = None
            continue
        if match and line.strip()[len(match.group(1)) :].startswith("{code-cell"):
            fence = match.group(1)
            if chunk:
                out.append((start, " ".join(chunk)))
            chunk = []
            continue
        if not line.strip() or line.lstrip().startswith(("#", ":::", "```", "+++")):
            if chunk:
                out.append((start, " ".join(chunk)))
            chunk = []
            continue
        if not chunk:
            start = number
        chunk.append(line.strip())
    if chunk:
        out.append((start, " ".join(chunk)))
    return out


def causal_sentences(path: Path) -> list[Sentence]:
    """Every sentence of `path`'s prose that contains a causal marker."""
    found = []
    for line, paragraph in prose_paragraphs(path.read_text(encoding="utf-8")):
        for sentence in _SENTENCE_END.split(paragraph):
            if MARKERS.search(sentence):
                found.append(Sentence(path.stem, line, sentence.strip(), paragraph))
    return found


def rows(audit: Path = AUDIT) -> list[Row]:
    """The audit's table rows (lines ``| chapter | fragment | holder |`` after its header)."""
    out = []
    if not audit.exists():
        return out
    for line in audit.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not line.startswith("|") or set(cells[0]) <= {"-", ":"}:
            continue
        if cells[0] == "chapter":
            continue
        fragment = cells[1].strip("`").replace("\\|", "|")
        out.append(Row(cells[0], fragment, cells[2].strip("`")))
    return out


def chapters() -> list[Path]:
    return sorted((ROOT / "book").glob("[0-9][0-9]-*.md"))


def problems(audit: Path = AUDIT) -> list[str]:
    """What is out of step: sentences with no row, rows matching nothing, bad holders."""
    table = rows(audit)
    sentences = [s for path in chapters() for s in causal_sentences(path)]
    out = []
    for s in sentences:
        covering = [r for r in table if r.chapter == s.chapter and r.fragment in s.text]
        if not covering:
            out.append(f"book/{s.chapter}.md:{s.line}: no audit row for: {s.text}")
        elif len(covering) > 1:
            out.append(f"book/{s.chapter}.md:{s.line}: {len(covering)} rows match: {s.text}")
    for r in table:
        matched = [s for s in sentences if s.chapter == r.chapter and r.fragment in s.text]
        if not matched:
            out.append(f"{audit.name}: row matches no causal sentence: {r.chapter} | {r.fragment}")
            continue
        if not r.kind:
            out.append(f"{audit.name}: {r.fragment!r}: holder must start with one of {HOLDERS}")
        elif r.kind == "consistent with":
            out += [
                f"{audit.name}: {r.fragment!r} is held by 'consistent with', which the "
                "sentence does not say"
                for s in matched
                if "consistent with" not in s.text
            ]
        elif r.kind == "cited":
            key = r.holder.removeprefix("cited").strip()
            out += [
                f"{audit.name}: {r.fragment!r}: its paragraph does not cite {key}"
                for s in matched
                if not key or key not in (s.paragraph or s.text)
            ]
        elif r.kind == "not claimed":
            out += [
                f"{audit.name}: {r.fragment!r} is held by 'not claimed', but the sentence does "
                "not say the cause is not measured"
                for s in matched
                if "not measure" not in s.text
            ]
        elif r.kind == "intervention":
            target = r.holder.removeprefix("intervention").strip()
            out += check_test(f"{audit.name}: {r.fragment!r}", target)
    return out


def check_test(where: str, target: str) -> list[str]:
    """What is wrong with a holder's test `target` (``tests/FILE.py::name``): it must exist."""
    file, _, name = target.partition("::")
    path = ROOT / file
    if not file.startswith("tests/") or not name or not path.is_file():
        return [f"{where}: expected tests/FILE.py::TEST, got {target!r}"]
    if not re.search(rf"^def {re.escape(name)}\(", path.read_text(encoding="utf-8"), re.M):
        return [f"{where}: {file} has no test {name}"]
    return []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="list every causal sentence")
    args = parser.parse_args(argv)
    if args.list:
        for path in chapters():
            for s in causal_sentences(path):
                print(f"book/{s.chapter}.md:{s.line}: {s.text}")
        return 0
    found = problems()
    for p in found:
        print(p)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
