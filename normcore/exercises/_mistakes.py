"""Checkers that know the mistakes a chapter expects, and name them.

`verdict` says right, close or not yet without printing the answer. `judged` asks it first and,
when the answer is not right, compares the answer with each expected mistake: an answer that
matches one is told which mistake it looks like (a hint, never the right value).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from normcore.exercises import Verdict, verdict


def judged(
    given: Any,
    expected: Any | Callable[[], Any],
    mistakes: Callable[[], Sequence[tuple[Any, str]]] | Sequence[tuple[Any, str]] = (),
    tolerance: float = 5e-4,
    mistake_tolerance: float | None = None,
) -> Verdict:
    """`verdict`, with the expected mistakes named.

    Args:
        given, expected, tolerance: as for `verdict`.
        mistakes: pairs (the answer a mistake gives, the hint that names it), or a function of no
            arguments returning them (called only when an answer is not right).
        mistake_tolerance: how close (relative, or absolute below 1) an answer must be to a
            mistake's value to be told about it; `tolerance` if None.

    Returns:
        A `Verdict`: "right", the prompt, "not yet: <hint>" for a recognised mistake (checked
        before "close", so a mistake that lands near the answer is still named), or what
        `verdict` says.
    """
    first = verdict(given, expected, tolerance)
    if first.right or given is None or first.startswith("waiting"):
        return first
    try:
        g = np.asarray(given, dtype=np.float64)
    except (TypeError, ValueError):
        return first
    near = tolerance if mistake_tolerance is None else mistake_tolerance
    for value, hint in mistakes() if callable(mistakes) else mistakes:
        m = np.asarray(value, dtype=np.float64)
        if m.shape != g.shape:
            continue
        error = np.abs(g - m) / np.maximum(1.0, np.abs(m))
        if np.all(error <= near):
            return Verdict(f"not yet: {hint}")
    return first
