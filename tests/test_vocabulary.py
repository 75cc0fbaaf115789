"""The vocabulary lint (issue #41): no retired word in what a reader reads.

The words are in `book/retired-words.txt` (one regular expression a line, with the word to use
instead). Scanned: the prose of every page in `book/` (Markdown outside code cells, and the
captions of a code cell's figure), the strings of `normcore` (docstrings, error messages, plot
and widget labels) and the string literals of the widgets' JavaScript. A line that must keep a
retired word says "retired-ok" on itself. Words marked [judgement] may keep the uses counted in
`book/retired-words-budget.json` for each file, and no more (block, answer and stack among them,
with the field's senses left out of their expressions: a residual block, an exercise's answer,
np.stack); words marked [report] would be listed by the command below and never fail.

    python tests/test_vocabulary.py            # every hit, file:line
    python tests/test_vocabulary.py --budget   # rewrite the budget from the hits of today
"""

from __future__ import annotations

import io
import json
import re
import sys
import tokenize
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORDS = ROOT / "book" / "retired-words.txt"
BUDGET = ROOT / "book" / "retired-words-budget.json"
OK = "retired-ok"


@dataclass(frozen=True)
class Word:
    pattern: re.Pattern
    hint: str
    judgement: bool
    report: bool = False  # listed, never failing

    @property
    def key(self) -> str:
        return self.pattern.pattern


@dataclass(frozen=True)
class Hit:
    path: str
    line: int
    text: str
    word: Word

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.text!r} (use: {self.word.hint})"


def words() -> list[Word]:
    out = []
    for raw in WORDS.read_text(encoding="utf-8").splitlines():
        if not raw.strip() or raw.startswith("#"):
            continue
        judgement = raw.startswith("[judgement] ")
        report = raw.startswith("[report] ")
        body = raw.removeprefix("[judgement] ").removeprefix("[report] ")
        pattern, hint = body.split(" => ", 1)
        out.append(Word(re.compile(pattern, re.IGNORECASE), hint.strip(), judgement, report))
    return out


# -------------------------------------------------------------------------------------------
# what a reader reads, as (line number, text) pieces

FENCE = re.compile(r"^\s*(`{3,}|~{3,})(.*)$")
CODE_INFO = re.compile(r"code-cell|^(python|py|ipython3?|text|bash|sh|console|output|js)?$")
SKIPPED_IN_PROSE = re.compile(r"`[^`\n]*`|\]\([^)]*\)|<!--.*?-->|https?://\S+")
ROLE = re.compile(r"\{(?!term\})[a-z:-]+\}`[^`]*`")
TERM = re.compile(r"\{term\}`([^`<]*)(?:<[^`]*>)?`")  # a glossary link's words are prose


def _prose(line: str) -> str:
    return SKIPPED_IN_PROSE.sub(" ", TERM.sub(r" \1 ", ROLE.sub(" ", line)))


def markdown_pieces(text: str):
    fence, code, caption = None, False, False
    for n, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if fence is None and m:
            fence, code, caption = m.group(1), bool(CODE_INFO.search(m.group(2).strip())), False
            continue
        if fence is not None and line.strip().startswith(fence) and not line.strip()[len(fence) :]:
            fence, code = None, False
            continue
        if code:  # a code cell: only its figure's caption and alt text are prose
            key = re.match(r"\s*([a-z_]+):", line)
            if key:
                caption = key.group(1) in ("caption", "alt")
                if caption:
                    yield n, line.split(":", 1)[1]
            elif caption and line.startswith("    ") and line.strip() != "---":
                yield n, line
            else:
                caption = False
            continue
        yield n, _prose(line)


def python_pieces(text: str):
    for t in tokenize.generate_tokens(io.StringIO(text).readline):
        if t.type != tokenize.STRING:
            continue
        body = re.sub(r"^[A-Za-z]*('''|\"\"\"|'|\")|('''|\"\"\"|'|\")$", "", t.string)
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", body):  # a key or a name, not prose
            continue
        for k, line in enumerate(t.string.splitlines()):
            yield t.start[0] + k, _prose(line)


JS_STRING = re.compile(r"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`", re.DOTALL)


def javascript_pieces(text: str):
    code = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.DOTALL)
    code = re.sub(r"(?m)(?<![:\"'`\\])//.*$", "", code)
    for m in JS_STRING.finditer(code):
        first = code.count("\n", 0, m.start()) + 1
        body = m.group(0)[1:-1]
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", body):
            continue
        for k, piece in enumerate(body.splitlines()):
            yield first + k, re.sub(r"\$\{[^}]*\}", " ", piece)


def sources() -> list[tuple[str, object]]:
    out = [(p, markdown_pieces) for p in sorted((ROOT / "book").glob("*.md"))]
    out += [(p, python_pieces) for p in sorted((ROOT / "normcore").rglob("*.py"))]
    out += [
        (p, javascript_pieces) for p in sorted((ROOT / "normcore" / "widgets" / "js").glob("*.js"))
    ]
    return out


def _paragraphs(pieces):
    """Consecutive lines joined (a phrase may be wrapped across two), each with its first line."""
    start, text, last = None, "", None
    for n, line in pieces:
        if last is not None and n == last + 1 and line.strip():
            text += "\n" + line
        else:
            if text.strip():
                yield start, text
            start, text = n, line
        last = n
    if text.strip():
        yield start, text


def hits() -> list[Hit]:
    found = []
    retired = words()
    for path, pieces in sources():
        rel = path.relative_to(ROOT).as_posix()
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        for n, text in _paragraphs(pieces(source)):
            for w in retired:
                for m in w.pattern.finditer(text):
                    line = n + text.count("\n", 0, m.start())
                    if OK not in lines[line - 1]:
                        found.append(Hit(rel, line, " ".join(m.group(0).split()), w))
    return found


def read_budget() -> dict[str, dict[str, int]]:
    return json.loads(BUDGET.read_text(encoding="utf-8")) if BUDGET.exists() else {}


def over_budget(found: list[Hit], budget: dict[str, dict[str, int]] | None = None) -> list[Hit]:
    """Every hit of a strict word; for a [judgement] word, every hit in a file that has more of
    them than its budget (`budget`, default book/retired-words-budget.json)."""
    budget = read_budget() if budget is None else budget
    counts = Counter((h.word.key, h.path) for h in found if h.word.judgement)
    bad = []
    for h in found:
        if h.word.report:
            continue
        if not h.word.judgement:
            bad.append(h)
        elif counts[h.word.key, h.path] > budget.get(h.word.key, {}).get(h.path, 0):
            bad.append(h)
    return bad


# -------------------------------------------------------------------------------------------


# rename: off (the retired words themselves, as test data)
def test_the_list_reads() -> None:
    retired = words()
    assert len(retired) >= 10 and any(w.judgement for w in retired)
    assert any(w.pattern.search("the arriving slope") for w in retired)


def test_the_lint_finds_what_it_should() -> None:
    """The scanners see prose and labels and skip code: a baseline for the test below."""
    md = "Prose with a slope.\n```{code-cell} ipython3\nslopes = 1\n```\n`slope` in code\n"
    assert [n for n, _ in markdown_pieces(md) if "slope" in _] == [1]
    py = 'x = "a running figure label"\nd = {"slope": 1}  # a key\n'
    assert [n for n, t in python_pieces(py) if "running figure" in t] == [1]
    assert not [t for _, t in python_pieces(py) if "slope" in t]
    js = 'const a = "the arriving slope"; // a comment about slopes\n'
    assert [t for _, t in javascript_pieces(js)] == ["the arriving slope"]
    text = "a slope\nwrapped: arriving\nslope\n"
    joined = list(_paragraphs(markdown_pieces(text)))
    assert joined == [(1, "a slope\nwrapped: arriving\nslope")]


def test_the_field_senses_never_count() -> None:
    """The [judgement] words of issue #41 (block, answer, stack) leave the field's own senses out
    entirely and still catch the book's retired ones (each a phrase the book used to print)."""
    by_word = {}
    for w in words():
        for name in ("block", "answer", "stack"):
            if w.judgement and re.search(name, w.pattern.pattern):
                by_word.setdefault(name, w.pattern)
    block, answer, stack = by_word["block"], by_word["answer"], by_word["stack"]
    field = {
        block: [
            "a residual block",
            "each transformer block",
            "the ConvNeXt block",
            "post-LN block",
            "3 blocks deep",
            "block 6 over block 1",
            "a twelve-block stream",
            "a block of layers",
            "a code block",
            "fresh blocks of five seeds",
        ],
        answer: [
            "your answer",
            "the reader's answer",
            "the answer key",
            "Answer with the exponent",
            "put the answer in place of None",
            "the exercise's answer",
            "an answer with too few digits",
            "not answered yet",
        ],
        stack: [
            "np.stack(rows)",
            "the call stack",
            "a stack trace",
            "shape (*stack, rows, features)",
            "leading axes {stack}",
            "a stack of residual blocks",
            "a stack of ten layers",
        ],
    }
    retired_uses = {
        block: ["the naive block d / s", "the block a layer reads", "a (rows, features) block"],
        answer: [
            "layer norm's answer",
            "the running statistics' answer",
            "both modes answer the same",
            "the layer answers zeros",
            "answered by the running statistics",
            "the training-mode answer",
        ],
        stack: ["the deep stack", "trained as one stack", "per stacked network", "stacked runs"],
    }
    for pattern, phrases in field.items():
        assert not [p for p in phrases if pattern.search(p)], pattern.pattern
    for pattern, phrases in retired_uses.items():
        assert all(pattern.search(p) for p in phrases), pattern.pattern


def test_a_file_that_gains_a_use_fails() -> None:
    """The budget really fails: one more use of a [judgement] word in a file than its count
    fails (naming the file), one fewer or the same does not, and a file with no budget has 0."""
    judged = [w for w in words() if w.judgement]
    budget = {judged[0].key: {"book/somewhere.md": 2}}
    hit = lambda n: Hit("book/somewhere.md", n, "x", judged[0])  # noqa: E731
    assert over_budget([hit(1), hit(2)], budget) == []  # at the count: passes
    assert over_budget([hit(1)], budget) == []  # below it: passes
    bad = over_budget([hit(1), hit(2), hit(3)], budget)  # one more: fails
    assert bad and {h.path for h in bad} == {"book/somewhere.md"}
    elsewhere = Hit("normcore/new.py", 1, "x", judged[0])
    assert over_budget([elsewhere], budget) == [elsewhere]  # no budget there: any use fails
    # and the stored budget holds today's tree exactly: one more use anywhere would fail
    found = hits()
    counts = Counter((h.word.key, h.path) for h in found if h.word.judgement)
    stored = read_budget()
    assert all(stored.get(k, {}).get(p, 0) >= n for (k, p), n in counts.items())
    (key, path), n = next(iter(counts.items()))
    extra = Hit(path, 10**6, "x", next(w for w in judged if w.key == key))
    if stored[key][path] == n:  # a file at its count fails with one more
        assert over_budget([*found, extra]), (key, path)


# rename: on


def test_no_retired_word_where_a_reader_reads() -> None:
    bad = over_budget(hits())
    assert not bad, f"{len(bad)} retired words:\n" + "\n".join(map(str, bad))


def _write_budget() -> None:
    counts: dict[str, dict[str, int]] = {}
    for h in hits():
        if h.word.judgement and not h.word.report:
            per = counts.setdefault(h.word.key, {})
            per[h.path] = per.get(h.path, 0) + 1
    BUDGET.write_text(json.dumps(counts, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    if "--budget" in sys.argv:
        _write_budget()
    everything = hits()
    for h in everything:
        print(h)
    print(f"{len(everything)} hits; over budget: {len(over_budget(everything))}")
