"""Exercise checks: tell the reader whether an answer is right without printing the answer.

Each chapter's module (``normcore.exercises.ch02`` and so on) computes its answers with normcore
and exposes one checking function per exercise built on `verdict`.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def verdict(given: Any, expected: Any, tolerance: float = 5e-4) -> str:
    """'right' when `given` matches `expected` (same shape, every entry within `tolerance`,
    absolute or relative to the entry's size), otherwise a hint that names only what is off
    (shape, or how many entries), never the expected value itself."""
    try:
        g = np.asarray(given, dtype=np.float64)
    except (TypeError, ValueError):
        return "not yet: the answer should be a number or an array of numbers"
    e = np.asarray(expected, dtype=np.float64)
    if g.shape != e.shape:
        return f"not yet: expected an answer of shape {e.shape}, got {g.shape}"
    if not np.all(np.isfinite(g)):
        return "not yet: the answer holds NaN or infinity"
    close = np.abs(g - e) <= tolerance * np.maximum(1.0, np.abs(e))
    if np.all(close):
        return "right"
    wrong = int(np.size(close) - np.count_nonzero(close))
    return f"not yet: {wrong} of {np.size(close)} entries are off"
