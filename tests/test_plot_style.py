"""normcore.plots.style in a real kernel: a figure is drawn only for the image the reader sees."""

from __future__ import annotations

import hashlib

import pytest

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


@pytest.mark.notebook  # starts a kernel
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


def test_decade_labels_read_as_matplotlibs_powers_of_ten() -> None:
    """The plain-text label of a decade is the text matplotlib's mathtext label shows; other
    values get none."""
    from matplotlib.ticker import LogFormatterSciNotation

    from normcore.plots.style import decade_label

    assert decade_label(1e-12) == "10\u207b\u00b9\u00b2" and decade_label(1000.0) == "10\u00b3"
    assert decade_label(1.0) == "10\u2070" and decade_label(1e-5) == "10\u207b\u2075"
    assert decade_label(3e-5) == decade_label(0.0) == decade_label(-10.0) == ""
    mathtext = LogFormatterSciNotation()
    for k in (-12, -3, 0, 2):
        text = mathtext(10.0**k)  # '$\\mathdefault{10^{-12}}$'
        assert text.endswith(f"10^{{{k}}}}}$")
        superscripts = decade_label(10.0**k)[2:]
        digits = superscripts.translate(
            str.maketrans(
                "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079", "-0123456789"
            )
        )
        assert digits == str(k)
