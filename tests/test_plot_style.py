"""normcore.plots.style in a real kernel: a figure is drawn only for the image the reader sees."""

from __future__ import annotations

import hashlib

import pytest

pytestmark = pytest.mark.notebook  # starts a kernel

COUNT_DRAWS = """
import matplotlib.figure
draws = []
_draw = matplotlib.figure.Figure.draw
def _counted(self, renderer):
    draws.append(1)
    return _draw(self, renderer)
matplotlib.figure.Figure.draw = _counted
"""
FIGURE = "fig, ax = plt.subplots(); ax.plot([1, 2, 3], [3, 1, 2]); ax.set(xlabel='x', ylabel='y')"


def _run(cells: list[str]) -> list:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    return nb.cells


def _draws(cell) -> int:
    (out,) = [o for o in cell.outputs if o.output_type == "stream"]
    return int(out.text.split()[-1])


def _png(cell) -> str:
    (png,) = [o.data["image/png"] for o in cell.outputs if "image/png" in o.get("data", {})]
    return hashlib.sha256(png.encode()).hexdigest()


def test_a_figure_is_drawn_twice_not_three_times() -> None:
    """Under the book's style a cell's figure is drawn for the layout pass and for the PNG only;
    without it pyplot's end-of-cell hook draws it a third time (what the style removes), and the
    image shown is the same either way, run after run."""
    book = _run(
        [
            COUNT_DRAWS
            + "from normcore.plots import use_book_style\nuse_book_style()\n"
            + "import matplotlib.pyplot as plt",
            FIGURE,
            "print(len(draws))",
            FIGURE,
            "print(len(draws))",
        ]
    )
    assert _draws(book[2]) == 2 and _draws(book[4]) == 4
    assert _png(book[1]) == _png(book[3])  # deterministic

    plain = _run([COUNT_DRAWS + "import matplotlib.pyplot as plt", FIGURE, "print(len(draws))"])
    assert _draws(plain[2]) == 3  # the hook the style unhooks, present without it
