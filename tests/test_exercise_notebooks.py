"""The exercise notebooks (tools/exercise_notebooks.py): every exercise, no answer, and they run.

* Made from each chapter's stored run: every question of the chapter, in order; every answer
  cell as the chapter has it (starting at None); no output, no solution, no hidden cell, no
  unfilled role.
* The worked answers (tests/worked_answers.py) are the solutions' own: every glued figure and
  every passage they rely on is in that exercise's folded solution; every checker has one.
* Run top to bottom in a fresh kernel, every checker prompts for an answer; with the worked
  solution's answer filled in (the digits the page shows), every checker says right. This runs
  each chapter's exercise notebook (marked notebook: not part of make check).
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import exercise_notebooks  # tools/ is on the path (pyproject: pythonpath)
import lab_book
import nbformat
import pytest
import teaching
from worked_answers import ANSWERS

from normcore.exercises import PROMPT

CHAPTERS = [
    p for p in teaching.chapters() if teaching.has_exercises(nbformat.read(p, as_version=4))
]
CHECKER = re.compile(r"\b\w+\.(check_\w+)\(")
ANSWER_LINE = re.compile(r"^\w+(, \w+)* = None(, None)*\b.*$", re.MULTILINE)
ROLE = re.compile(r"\{[a-z:]+\}`[^`]*`")


def squeeze(text: str) -> str:
    return " ".join(text.split())


def checkers(nb) -> list[tuple[int, str]]:
    """(cell index, checker name) for every answer cell of a notebook."""
    found = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            match = CHECKER.search(cell.source)
            if match and ANSWER_LINE.search(cell.source):
                found.append((index, match.group(1)))
    return found


def test_chapters_with_exercises_are_found():
    assert len(CHAPTERS) >= 10, [p.name for p in CHAPTERS]


@pytest.mark.parametrize("ipynb", CHAPTERS, ids=lambda p: p.stem)
def test_every_exercise_and_no_answer(ipynb: Path):
    chapter = nbformat.read(ipynb, as_version=4)
    asked = exercise_notebooks.exercises(chapter)
    nb = exercise_notebooks.exercise_notebook(ipynb)
    nbformat.validate(nb)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    numbers = [int(n) for n in teaching.EXERCISE.findall(text)]
    assert numbers == [e.number for e in asked] == list(range(1, len(asked) + 1))
    for cell in nb.cells:
        assert "remove-cell" not in cell.metadata.get("tags", [])
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None
    assert ":::{dropdown}" not in text and not ROLE.search(text), "a solution or a raw role"
    for exercise in asked:
        assert exercise.solution, f"exercise {exercise.number}: no folded solution found"
        # the solution's first sentence appears nowhere in the notebook
        first = squeeze(exercise.solution).split(". ")[0]
        assert first not in squeeze(text), f"exercise {exercise.number}'s solution leaked"
    chapter_checks = [name for cell in chapter.cells for name in _checks_of(cell)]
    assert [name for _, name in checkers(nb)] == chapter_checks


def _checks_of(cell) -> list[str]:
    if cell.cell_type != "code" or "remove-cell" in cell.metadata.get("tags", []):
        return []
    match = CHECKER.search(cell.source)
    return [match.group(1)] if match and ANSWER_LINE.search(cell.source) else []


@pytest.mark.parametrize("ipynb", CHAPTERS, ids=lambda p: p.stem)
def test_worked_answers_are_the_solutions_own(ipynb: Path):
    chapter = nbformat.read(ipynb, as_version=4)
    table = ANSWERS.get(ipynb.stem, {})
    seen = []
    for exercise in exercise_notebooks.exercises(chapter):
        solution = squeeze(exercise.solution)
        for index in exercise.cells:
            for name in _checks_of(chapter.cells[index]):
                seen.append(name)
                assert name in table, f"{ipynb.stem}: no worked answer for {name}"
                entry = table[name]
                for role in ROLE.findall(str(entry["fill"])):
                    assert role in solution, f"{name}: {role} is not in the worked solution"
                for passage in entry["shown"]:
                    assert squeeze(passage) in solution, f"{name}: {passage!r} not in solution"
                assert ROLE.search(str(entry["fill"])) or entry["shown"], (
                    f"{name}: the answer is tied to nothing the solution shows"
                )
    assert sorted(seen) == sorted(table), f"{ipynb.stem}: answers for checkers it lacks"


def filled(nb, glued: dict[str, str], stem: str):
    """`nb` followed by a copy of each answer cell with its worked answer filled in."""
    out = copy.deepcopy(nb)
    added = []
    for index, name in checkers(nb):
        fill = lab_book.render_prose(str(ANSWERS[stem][name]["fill"]), glued, {}, Path(), name)
        source = ANSWER_LINE.sub(lambda _, f=fill: f, nb.cells[index].source)
        cell = nbformat.v4.new_code_cell(source)
        cell["id"] = f"filled-{len(added)}"
        out.cells.append(cell)
        added.append((len(out.cells) - 1, name))
    return out, added


def reply(cell) -> str:
    texts = [
        o["data"]["text/plain"]
        for o in cell.outputs
        if o.output_type == "execute_result" and "text/plain" in o.get("data", {})
    ]
    return texts[-1] if texts else ""


@pytest.mark.notebook
@pytest.mark.parametrize("ipynb", CHAPTERS, ids=lambda p: p.stem)
def test_runs_blank_then_right_with_the_worked_answers(ipynb: Path):
    from nbclient import NotebookClient

    nb = exercise_notebooks.exercise_notebook(ipynb)
    glued = lab_book.glued_values(nbformat.read(ipynb, as_version=4))
    run, added = filled(nb, glued, ipynb.stem)
    NotebookClient(
        run, kernel_name="python3", timeout=300, resources={"metadata": {"path": str(ipynb.parent)}}
    ).execute()
    for index, name in checkers(nb):
        assert reply(run.cells[index]) == PROMPT, f"{name} blank: {reply(run.cells[index])!r}"
    for index, name in added:
        answer = reply(run.cells[index])
        assert answer == "right" or answer.startswith("right"), f"{name} filled: {answer!r}"


def test_lab_copy_keeps_a_notebook_the_reader_edited(tmp_path: Path):
    """``make lab`` (postBuild) writes lab/exercises with --lab: a notebook the reader has
    answered in is kept when it runs again; one only opened is refreshed."""
    chapter = teaching.BOOK / "02-worked-column.ipynb"
    (written,) = exercise_notebooks.build([chapter], tmp_path, keep_edits=True)
    nb = nbformat.read(written, as_version=4)
    index, _ = checkers(nb)[0]
    nb.cells[index].source = nb.cells[index].source.replace("= None", "= 1.0", 1)
    nbformat.write(nb, written)
    assert exercise_notebooks.build([chapter], tmp_path, keep_edits=True) == []
    assert "= 1.0" in written.read_text()
    written.unlink()
    assert exercise_notebooks.build([chapter], tmp_path, keep_edits=True) == [written]
    assert "answer = None" in written.read_text()
