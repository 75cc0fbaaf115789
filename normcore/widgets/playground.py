"""Chapter 2's playground: a small mini-batch, a normalising layer, and every number it returns.

    pg = playground()              # opens on the four rows (1, 7), (1, 9), (7, 1), (23, 7)
    pg                             # display it (JupyterLab, or the static site)
    pg.set_cell(0, 1, "8")         # what typing 8 into row 1, feature 2 does
    pg.act(model.set_kind, "layer")
    pg.figures()                   # normcore's figures for the state on show

One widget definition serves both places (anywidget). The view is ``js/playground.js``; it keeps
the state (`normcore.widgets.playground_model`) and computes every figure in the page with
normcore's arithmetic in JavaScript (``js/standardise.js``), so the static site computes with no
kernel. In JupyterLab the kernel also computes: each state the page sends is computed here by
normcore's own layers, and the page shows the largest difference between the two results.
"""

from __future__ import annotations

from typing import Any

from normcore.mode import TRAIN
from normcore.widgets import playground_model as model
from normcore.widgets._esm import bundle, source
from normcore.widgets._page import PageWidget

# names the chapter and older code import from here
LIMIT, MAX_ROWS, MAX_FEATURES, EPSILON = (
    model.LIMIT,
    model.MAX_ROWS,
    model.MAX_FEATURES,
    model.EPSILON,
)


class Playground(PageWidget):
    """The playground widget (see `normcore.widgets._page` for what it syncs)."""

    _esm = bundle("playground.js")
    _css = source("playground.css")
    compute = staticmethod(model.figures)

    def __init__(
        self, x: Any = None, *, kind: str = "batch", mode: str = TRAIN, **kwargs: Any
    ) -> None:
        super().__init__(state=model.initial(x, kind, mode), **kwargs)

    def __repr__(self) -> str:
        s = self.state
        return (
            f"Playground({len(s['texts'])} rows x {len(s['scale'])} features, {s['kind']}, "
            f"{s['mode']}): display it to use it"
        )

    # ---------------------------------------------------------------- driving it from code
    def set_cell(self, row: int, feature: int, text: str) -> None:
        """Type `text` into a cell (as the reader would)."""
        self.act(model.set_cell, row, feature, text)

    def figures(self) -> dict[str, Any]:
        """normcore's figures for the state on show (see playground_model.figures)."""
        return model.figures(self.state)

    def errors(self) -> list[str]:
        return model.errors(self.state)


def playground(x: Any = None, *, kind: str = "batch", mode: str = TRAIN) -> Playground:
    """The chapter-2 playground, opening on the input `x` (default: the four worked rows)."""
    return Playground(x, kind=kind, mode=mode)


def bench_one_change(repeats: int) -> float:
    """The kernel's share of one reader change, in ms (median of `repeats`): a cell typed, and
    normcore's figures for the new state (what the kernel computes for each state a page sends).
    `python -m normcore.bench` reports it; the page's own update is timed by the browser test."""
    import statistics
    import time

    pg = playground()
    pg.request = "bench"
    times = []
    for k in range(repeats):
        started = time.perf_counter()
        pg.set_cell(0, 0, f"{1.0 + k / 7:.3f}")
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)
