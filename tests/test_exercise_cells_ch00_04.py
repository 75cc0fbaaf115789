"""Chapters 0 to 4: every cell of each exercise notebook runs from a blank kernel.

`tools/exercise_notebooks.py` lifts a chapter's exercises out with only the cells they need. This
runs every cell of the notebooks of chapters 0 to 4 in a fresh kernel, not only the checkers: an
exercise cell that names something only a hidden cell of the chapter defines (chapter 1's
`crowd_shift`, chapter 4's `nc`, as they once did) fails here with a NameError. The open "try it"
exercises ship their example commented out; it is uncommented and run too, so the example a
reader is offered works as written.
"""

from __future__ import annotations

import exercise_notebooks  # tools/ is on the path (pyproject: pythonpath)
import nbformat
import pytest
import teaching

STEMS = ("00-preface", "01-moving-target", "02-worked-column", "03-backward", "04-rows-columns")
TRY_IT = "# your experiment here: for example"


def with_examples(nb):
    """`nb` with each try-it cell's commented example uncommented."""
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.source.startswith(TRY_IT):
            lines = cell.source.splitlines()[1:]
            cell.source = "\n".join(line[2:] if line.startswith("# ") else line for line in lines)
    return nb


@pytest.mark.notebook
@pytest.mark.parametrize("stem", STEMS)
def test_every_exercise_cell_runs_from_a_blank_kernel(stem: str):
    from nbclient import NotebookClient

    ipynb = teaching.BOOK / f"{stem}.ipynb"
    nb = with_examples(exercise_notebooks.exercise_notebook(ipynb))
    assert any(c.cell_type == "code" for c in nb.cells), f"{stem}: no code cell"
    NotebookClient(
        nb, kernel_name="python3", timeout=300, resources={"metadata": {"path": str(ipynb.parent)}}
    ).execute()  # raises CellExecutionError on the first cell that fails
    errors = [
        o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"
    ]
    assert errors == []


@pytest.mark.parametrize("stem", STEMS[1:])
def test_each_chapter_has_one_open_try_it_exercise(stem: str):
    nb = nbformat.read(teaching.BOOK / f"{stem}.ipynb", as_version=4)
    asked = exercise_notebooks.exercises(nb)
    open_ones = [e for e in asked if ": try it." in e.question]
    assert len(open_ones) == 1, [e.number for e in open_ones]
    assert open_ones[0].solution, "a try-it exercise needs its worked discussion"
