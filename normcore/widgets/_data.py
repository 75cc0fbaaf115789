"""``data-*`` attributes that let tests read a widget's numbers back from its HTML.

A readout rounds its numbers for the reader; the same numbers go in full (``repr``) into
attributes, which change nothing on screen. Arrays are written as their values joined by commas.
"""

from __future__ import annotations

import html
from typing import Any

import numpy as np


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (tuple, list, np.ndarray)):
        return ",".join(_text(v) for v in np.asarray(value, dtype=object).ravel())
    return str(value)


def data(**values: Any) -> str:
    """Attributes ``data-name="value"`` for each keyword (underscores become hyphens), with a
    leading space: ``f"<li{data(true_gap=gap)}>"``."""
    return "".join(
        f' data-{name.replace("_", "-")}="{html.escape(_text(value))}"'
        for name, value in values.items()
    )


def keyed(key: str, value: float) -> str:
    """The attributes of one number in a table: ``data-key`` names it, ``data-value`` holds it."""
    return f' data-key="{html.escape(key)}" data-value="{float(value)!r}"'
