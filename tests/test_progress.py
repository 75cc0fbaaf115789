"""The progress bar: text that redraws in place, stored as its finished line, same every run."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from normcore.errors import SettingError
from normcore.progress import WIDTH, bar, progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_bar_fills_in_proportion():
    assert bar("runs", 0, 10) == f"runs  [{'.' * WIDTH}]  0/10"
    assert bar("runs", 10, 10) == f"runs  [{'#' * WIDTH}]  10/10"
    assert bar("runs", 5, 10).count("#") == WIDTH // 2
    assert bar("nothing", 0, 0).endswith("0/0")


def test_progress_hands_back_every_item_and_ends_on_the_full_bar():
    out = Terminal()
    assert list(progress(iter("abc"), "letters", 3, every=0.0, stream=out)) == ["a", "b", "c"]
    text = out.getvalue()
    assert text.startswith("\r") and text.endswith("\r" + bar("letters", 3, 3) + "\n")
    # what is left once the carriage returns are applied: the finished bar alone
    assert text.rsplit("\r", 1)[1] == bar("letters", 3, 3) + "\n"


def test_progress_is_silent_where_nobody_watches():
    out = io.StringIO()  # a log file, a pipe: not a terminal, not a kernel
    assert list(progress(range(4), "runs", stream=out)) == [0, 1, 2, 3]
    assert out.getvalue() == ""


@pytest.mark.parametrize(
    "bad", [dict(label=""), dict(label=3), dict(total=-1), dict(total=2.0), dict(total=True)]
)
def test_progress_refuses_what_it_cannot_draw(bad):
    kwargs = dict(label="runs", total=3) | bad
    with pytest.raises(SettingError):
        list(progress(range(3), **kwargs))
    with pytest.raises(SettingError, match="total"):
        list(progress(iter(range(3)), "runs"))


CELL = """\
import time
from normcore.progress import progress
print("before")
for i in progress(range(25), "training 25 runs", every=0.0):
    time.sleep(0.01)
print("after")
"""


@pytest.mark.notebook
def test_a_stored_run_keeps_the_finished_bar_and_nbval_agrees(tmp_path: Path):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(CELL)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    # the executor's own settings for streams (tools/execute_notebooks.py)
    NotebookClient(nb, kernel_name="python3", coalesce_streams=True).execute()
    (output,) = nb.cells[0].outputs
    assert output.output_type == "stream"
    assert output.text == "before\n" + bar("training 25 runs", 25, 25) + "\nafter\n"
    path = tmp_path / "bar.ipynb"
    nbformat.write(nb, path)
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval", str(path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
