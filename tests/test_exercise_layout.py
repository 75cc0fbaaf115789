"""Every chapter lays its exercises out the same way: the question, a cell to answer in (the
answer starts as None, so the checker's first reply is a prompt), the checker, and a collapsed
worked solution."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parent.parent / "book"
CHAPTERS = sorted(
    p for p in BOOK.glob("[0-9][0-9]-*.md") if "## Exercises" in p.read_text(encoding="utf-8")
)
QUESTION = re.compile(r"^\*\*Exercise (\d+)[.:]", re.MULTILINE)
CELL = re.compile(r"```\{code-cell\}[^\n]*\n(.*?)```", re.DOTALL)


def exercises(path: Path) -> list[str]:
    section = path.read_text(encoding="utf-8").split("## Exercises", 1)[1]
    starts = [m.start() for m in QUESTION.finditer(section)] + [len(section)]
    return [section[a:b] for a, b in zip(starts, starts[1:], strict=False)]


def test_every_chapter_with_exercises_is_checked():
    assert len(CHAPTERS) >= 7


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_exercises_share_one_layout(path: Path):
    found = exercises(path)
    assert found, f"{path.name}: no '**Exercise N.**' questions under ## Exercises"
    numbers = [int(QUESTION.match(text).group(1)) for text in found]
    assert numbers == list(range(1, len(found) + 1)), f"{path.name}: numbered {numbers}"
    for number, text in zip(numbers, found, strict=True):
        where = f"{path.name}, exercise {number}"
        assert ":::{dropdown} Solution" in text, f"{where}: no collapsed worked solution"
        for cell in CELL.findall(text):
            if "check_" not in cell or "remove-cell" in cell:
                continue
            assert re.search(r"^\w+(, \w+)* = None(, None)*\s", cell, re.MULTILINE), (
                f"{where}: the answer cell should start from None, so the checker prompts"
            )
            assert "0.0" not in cell.split("check_")[1].split(")")[0], (
                f"{where}: the checker is called on a placeholder number, not on None"
            )
