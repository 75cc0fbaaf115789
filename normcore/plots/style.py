"""One matplotlib look for every figure in the book, and deterministic figure files.

``use_book_style()`` is called once near the top of a chapter (and by every plotting helper in
``normcore.plots``). It sets rcParams so that figures are readable at the site's text width, have
labelled axes and a small colour cycle, and come out byte-for-byte the same on every run:

* SVG: a fixed ``svg.hashsalt`` (ids of clip paths and glyphs stop depending on a random salt)
  and a fixed ``svg.id``; the date matplotlib writes into SVG/PDF metadata comes from
  ``SOURCE_DATE_EPOCH``, which is set to 0 unless the caller already chose a value.
* PNG: no metadata (not even the matplotlib version), so a library upgrade alone changes no file.
* Inside IPython/Jupyter, figures are shown inline as PNG with the same metadata rules, so the
  notebooks' stored outputs and the built site do not change from one run to the next.

Nothing here draws; see the other modules of ``normcore.plots`` for that.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

#: The book's colour cycle: blue, red, green, amber, violet, grey. Colour-blind safe in pairs
#: (blue/amber, red/green are never the only distinction in a figure: markers or labels differ).
BOOK_COLOURS: tuple[str, ...] = (
    "#1f6fb2",  # blue: the plain / reference series
    "#d1495b",  # red: the normalised series
    "#2e8b57",  # green
    "#e09f3e",  # amber
    "#6a4c93",  # violet
    "#5f6368",  # grey: guides, running statistics
)

#: Format used for figures shown inline in notebooks (and therefore on the site).
INLINE_FORMAT = "png"

#: Metadata written into saved files: nothing that varies from run to run or between versions.
PNG_METADATA: dict[str, str | None] = {"Software": None}
SVG_METADATA: dict[str, str | None] = {"Date": None, "Creator": None}
PDF_METADATA: dict[str, str | None] = {
    "CreationDate": None,
    "ModDate": None,
    "Creator": None,
    "Producer": None,
}
_METADATA = {"png": PNG_METADATA, "svg": SVG_METADATA, "pdf": PDF_METADATA}


def book_rc() -> dict[str, Any]:
    """The rcParams the book uses, as a plain dict (no side effects)."""
    from cycler import cycler

    return {
        # size: a 6.4 x 3.8 inch figure at 110 dpi is about 700 px wide, the site's text width
        "figure.figsize": (6.4, 3.8),
        "figure.dpi": 110,
        "savefig.dpi": 150,
        "savefig.bbox": "tight",
        "savefig.pad_inches": 0.05,
        "figure.constrained_layout.use": True,
        "figure.facecolor": "white",
        "savefig.facecolor": "white",
        # text: DejaVu Sans ships with matplotlib, so every machine draws the same glyphs
        "font.family": "DejaVu Sans",
        "font.size": 11,
        "axes.titlesize": 12,
        "axes.labelsize": 11,
        "xtick.labelsize": 10,
        "ytick.labelsize": 10,
        "legend.fontsize": 10,
        "legend.frameon": False,
        "mathtext.fontset": "dejavusans",
        # axes: light grid, no top/right frame, colours from the book's cycle
        "axes.prop_cycle": cycler(color=list(BOOK_COLOURS)),
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.grid": True,
        "grid.color": "#d9d9d9",
        "grid.linewidth": 0.6,
        "axes.axisbelow": True,
        "axes.titlelocation": "left",
        "lines.linewidth": 1.8,
        "lines.markersize": 5,
        "image.cmap": "viridis",
        # determinism
        "svg.hashsalt": "normcore",
        "svg.id": "normcore-figure",
        "svg.fonttype": "path",
        "pdf.fonttype": 42,
        "path.simplify": True,
    }


#: Digits and minus sign as superscripts, for exponents written in plain text.
_SUPERSCRIPT = str.maketrans(
    "-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079"
)


def decade_label(value: float, position: int | None = None) -> str:
    """A log axis's tick label: ``10⁻¹²`` for an exact power of ten, nothing otherwise.

    Plain text with superscript digits (DejaVu Sans has them) reads as matplotlib's own
    ``$10^{-12}$`` does, without its mathtext parser, which costs a log-scaled figure a
    noticeable share of its drawing. Use as ``axis.set_major_formatter(decade_label)``.
    """
    if not value > 0:
        return ""
    exponent = math.log10(value)
    whole = round(exponent)
    if abs(exponent - whole) > 1e-9:
        return ""
    return "10" + str(whole).translate(_SUPERSCRIPT)


def use_book_style() -> None:
    """Apply the book's rcParams, and (inside IPython) show figures inline deterministically."""
    import matplotlib as mpl

    os.environ.setdefault("SOURCE_DATE_EPOCH", "0")
    mpl.rcParams.update(book_rc())
    _configure_inline()


def _configure_inline() -> None:
    """Inline PNG without metadata; a no-op outside an IPython kernel."""
    try:
        from IPython import get_ipython
    except ImportError:  # IPython is not installed: nothing is displayed inline anyway
        return
    shell = get_ipython()
    if shell is None or not hasattr(shell, "kernel"):
        return
    from matplotlib_inline.backend_inline import set_matplotlib_formats

    set_matplotlib_formats(INLINE_FORMAT, metadata=dict(PNG_METADATA))
    _skip_redraw()


def _skip_redraw() -> None:
    """Stop pyplot drawing every figure once more after each cell under the inline backend.

    pyplot hooks ``draw_all`` onto IPython's ``post_execute`` event, so at the end of a cell each
    new figure is drawn in full on its canvas; the inline backend then draws it again, twice (a
    layout pass and the PNG), for the image it shows, and closes it. The first drawing is never
    shown: unhooking it leaves the PNG as it was and saves a third of each figure's cost. Only
    under the inline backend (importing it, above, made pyplot switch to it): an interactive
    backend needs the hook, and pyplot hooks it again when a reader switches to one.
    """
    import matplotlib
    import matplotlib.pyplot as plt

    if "inline" in matplotlib.get_backend():
        plt.uninstall_repl_displayhook()


def save_figure(fig: Any, path: str | os.PathLike[str]) -> Path:
    """Save ``fig`` to ``path`` (format from the suffix) with run-independent metadata."""
    target = Path(path)
    fmt = target.suffix.lstrip(".").lower()
    metadata = _METADATA.get(fmt)
    kwargs: dict[str, Any] = {"format": fmt}
    if metadata is not None:
        kwargs["metadata"] = dict(metadata)
    fig.savefig(target, **kwargs)
    return target
