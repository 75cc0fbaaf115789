"""A progress bar for a chapter's long cells: live in JupyterLab, one clean line when stored.

A cell that runs for more than two seconds shows how far it has got. The bar is plain text on the
cell's standard output: each update starts with a carriage return, so JupyterLab (and a terminal)
redraw the line in place, and the notebook's stored output, which keeps only what is left once
the carriage returns are applied (``tools/execute_notebooks.py`` applies them; nbval does the
same before it compares), is the finished bar alone. Nothing in it depends on time, so a re-run
stores the same line. Outside a kernel and away from a terminal (the test suite, CI logs) it
prints nothing.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from typing import TextIO, TypeVar

from .errors import SettingError

__all__ = ["bar", "progress"]

T = TypeVar("T")

WIDTH = 24
"""Characters of the bar itself."""


def bar(label: str, done: int, total: int) -> str:
    """The bar's text after `done` of `total` steps: ``"label  [#####.....]  5/10"``."""
    filled = WIDTH * done // total if total else WIDTH
    return f"{label}  [{'#' * filled}{'.' * (WIDTH - filled)}]  {done}/{total}"


def _live(stream: TextIO) -> bool:
    """Whether anyone sees `stream` as it is written: a Jupyter kernel's output, or a terminal."""
    if "ipykernel" in sys.modules and type(stream).__module__.startswith("ipykernel"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def progress(
    items: Iterable[T],
    label: str,
    total: int | None = None,
    *,
    every: float = 0.2,
    stream: TextIO | None = None,
) -> Iterator[T]:
    """Yield `items` one by one, drawing a bar of how many have been handed out.

    Args:
        items: what to iterate over (epochs, seeds, settings).
        label: what is being done, in the reader's words (``"training 40 runs"``).
        total: how many items there are; ``len(items)`` when omitted.
        every: the least time, in seconds, between two redraws (the last one is always drawn).
        stream: where to draw; the standard output (the cell's output) when omitted.

    Yields:
        Each item of `items`, unchanged.

    Raises:
        SettingError: `label` is not a non-empty string, or `total` is unknown or negative.
    """
    if not isinstance(label, str) or not label.strip():
        raise SettingError(f"label: expected what is being done, in words, got {label!r}")
    if total is None:
        try:
            total = len(items)  # type: ignore[arg-type]
        except TypeError:
            raise SettingError("total: expected the number of items (items has no len)") from None
    if not isinstance(total, int) or isinstance(total, bool) or total < 0:
        raise SettingError(f"total: expected a whole number >= 0, got {total!r}")
    out = sys.stdout if stream is None else stream
    live = _live(out)
    drawn = time.monotonic()
    done = 0
    if live:
        out.write("\r" + bar(label, 0, total))
        out.flush()
    for item in items:
        yield item
        done += 1
        now = time.monotonic()
        if live and now - drawn >= every and done < total:
            out.write("\r" + bar(label, done, total))
            out.flush()
            drawn = now
    if live:
        out.write("\r" + bar(label, done, total) + "\n")
        out.flush()
