"""Every sentence of one chapter that speaks of another, and what keeps it true (the audit).

A chapter that restates another chapter's figure or finding can go stale when that chapter
changes. ``docs/claim-audit-cross-chapter.md`` names, for each prose sentence that refers to
another chapter (a ``{doc}`` link to it, "chapter N", "§N.M", or a figure reference into it),
what keeps it true, as a table row ``| chapter | fragment | holder |``. The holder is one of

* ``glue KEY=SOURCE ...``: the sentence restates the other chapter's figure; each KEY is a glue
  role in the sentence, and SOURCE (the other chapter's constant, function or claims record, such
  as ``comparison.EPOCHS`` or ``held("ch01"``) appears in this chapter's code, so the figure is
  computed from what the other chapter computes it from;
* ``claim tests/PATH.py::test_name``: the sentence restates the other chapter's finding in words,
  and that test (a claims test on fresh draws, or a test of the stored runs) holds it;
* ``derivation``: the sentence restates algebra the other chapter derives;
* ``setting``: it restates a setting, a definition or the worked example's given numbers;
* ``pointer``: it only says where something is (derived, shown, measured, coming).

A holder may end with ``; typed N N ...: why``: every number typed in the sentence (outside
maths, code, glue and chapter, section, figure and exercise numbers) must be listed there, so a
typed figure is a choice the audit can see, never a restated result left to go stale.

The fragment is a piece of the sentence, quoted exactly, long enough to be unique.
``python tools/cross_chapter.py`` lists what is out of step; ``tests/test_cross_chapter_audit.py``
fails on it; ``--list`` prints every such sentence.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import causal_sentences as cs

ROOT = cs.ROOT
AUDIT = ROOT / "docs" / "claim-audit-cross-chapter.md"
HOLDERS = ("glue", "claim", "derivation", "setting", "pointer")

_CHAPTER = re.compile(
    r"\{doc\}`(?:[^`<]*<)?(\d\d)-[a-z-]+>?`"  # {doc}`03-backward` or {doc}`text <03-backward>`
    r"|\]\((\d\d)-[a-z-]+\.(?:md|ipynb)"  # [text](03-backward.md#...)
    r"|\b[Cc]hapters? (\d{1,2})\b"  # chapter 3 (the first of "chapters 3 and 4")
    r"|§\s?(\d{1,2})\.\d"  # §3.9
    r"|\{(?:numref|eq)\}`(?:[^`<]*<)?(?:fig|eq|tab)-(\d\d)"  # {numref}`fig-03-...`
)
_GLUE = re.compile(r"\{glue(?::\w+)?\}`([^`]+)`")
# A typed number a pointer may carry: chapter, section, figure, exercise and equation numbers.
_NUMBER = re.compile(r"(?<![\w.§-])\d+(?:\.\d+)?(?![\w.])")
_ALLOWED_BEFORE = re.compile(
    r"\b(chapters?|figures?|exercises?|equations?|sections?)\s+(\d+(\.\d+)?\s*(,|and|to|or)\s*)*$",
    re.I,
)


def referred(sentence: str, own: int) -> set[int]:
    """The other chapters a sentence refers to."""
    found = set()
    for match in _CHAPTER.finditer(sentence):
        number = next(g for g in match.groups() if g is not None)
        found.add(int(number))
    return found - {own}


def sentences(path: Path) -> list[cs.Sentence]:
    """Every prose sentence of the chapter at `path` that refers to another chapter."""
    own = int(path.name[:2])
    out = []
    for line, paragraph in cs.prose_paragraphs(path.read_text(encoding="utf-8")):
        for sentence in cs._SENTENCE_END.split(paragraph):
            if referred(sentence, own):
                out.append(cs.Sentence(path.stem, line, sentence.strip()))
    return out


def typed_numbers(sentence: str) -> list[str]:
    """Numbers typed in a sentence outside links, roles, maths and section/figure numbers."""
    text = re.sub(r"\{[a-z:]+\}`[^`]*`|`[^`]*`|\$[^$]*\$|\]\([^)]*\)|§\s?[\d.]+", " ", sentence)
    out = []
    for match in _NUMBER.finditer(text):
        if not _ALLOWED_BEFORE.search(text[: match.start()]):
            out.append(match.group())
    return out


def problems(audit: Path = AUDIT) -> list[str]:
    """What is out of step: sentences with no row, rows matching nothing, holders that fail."""
    table = cs.rows(audit)
    found = [s for path in cs.chapters() for s in sentences(path)]
    code = {path.stem: _code(path) for path in cs.chapters()}
    out = []
    for s in found:
        covering = [r for r in table if r.chapter == s.chapter and r.fragment in s.text]
        if len(covering) != 1:
            what = "no audit row" if not covering else f"{len(covering)} audit rows"
            out.append(f"book/{s.chapter}.md:{s.line}: {what} for: {s.text}")
    for r in table:
        matched = [s for s in found if s.chapter == r.chapter and r.fragment in s.text]
        holder, _, typed = r.holder.partition(";")
        kind = next((k for k in HOLDERS if holder.startswith(k)), "")
        where = f"{audit.name}: {r.chapter} | {r.fragment!r}"
        if not matched:
            out.append(f"{where}: the row matches no sentence")
            continue
        if not kind:
            out.append(f"{where}: the holder must start with one of {HOLDERS}")
            continue
        declared = typed.strip().removeprefix("typed").partition(":")[0].split()
        for s in matched:
            numbers = typed_numbers(s.text)
            if sorted(numbers) != sorted(declared):
                out.append(f"{where}: typed numbers {numbers}, the row declares {declared}")
        args = holder.removeprefix(kind).split()
        if kind == "glue":
            if not args:
                out.append(f"{where}: glue names no KEY=SOURCE")
            for arg in args:
                key, _, source = arg.partition("=")
                if any(key not in _GLUE_KEYS(s.text) for s in matched):
                    out.append(f"{where}: no glue role {key} in the sentence")
                if not source or source not in code[r.chapter]:
                    out.append(f"{where}: {key}'s source {source!r} is not in the chapter's code")
        elif kind == "claim":
            out += cs.check_test(where, args[0] if args else "")
    return out


def _GLUE_KEYS(sentence: str) -> set[str]:
    return {role.split(":")[0] for role in _GLUE.findall(sentence)}


def _code(path: Path) -> str:
    """The chapter's code cells, joined."""
    text, out, inside = path.read_text(encoding="utf-8"), [], False
    for line in text.splitlines():
        if line.startswith("```{code-cell"):
            inside = True
        elif inside and line.startswith("```"):
            inside = False
        elif inside:
            out.append(line)
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="list every cross-chapter sentence")
    args = parser.parse_args(argv)
    if args.list:
        for path in cs.chapters():
            for s in sentences(path):
                print(f"book/{s.chapter}.md:{s.line}: {s.text}")
        return 0
    found = problems()
    for p in found:
        print(p)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
