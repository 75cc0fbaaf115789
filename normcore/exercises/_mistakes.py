"""Checkers that know the mistakes a chapter expects, and name them.

`verdict` says right, close or not yet without printing the answer. `judged` asks it first and,
when the answer is not right, compares the answer with each expected mistake: an answer that
matches one is told which mistake it looks like (a hint, never the right value).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from normcore.exercises import Verdict, relative_error, verdict


def judged(
    given: Any,
    expected: Any | Callable[[], Any],
    mistakes: Callable[[], Sequence[tuple[Any, str]]] | Sequence[tuple[Any, str]] = (),
    tolerance: float = 5e-4,
    mistake_tolerance: float | None = None,
    relative: bool = False,
) -> Verdict:
    """`verdict`, with the expected mistakes named.

    Args:
        given, expected, tolerance: as for `verdict`.
        mistakes: pairs (the answer a mistake gives, the hint that names it), or a function of no
            arguments returning them (called only when an answer is not right).
        mistake_tolerance: how close (relative, or absolute below 1) an answer must be to a
            mistake's value to be told about it; `tolerance` if None. Give it as wide as the
            rounding the question asks for, so that a mistake rounded as asked is still named.
        relative: measure both distances relative to the value's size (`relative_error`).

    Returns:
        A `Verdict`: "right", the prompt, "not yet: <hint>" for a recognised mistake (checked
        before "close", so a mistake that lands near the answer is still named), or what
        `verdict` says.
    """
    first = verdict(given, expected, tolerance, relative)
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
        error = relative_error(g, m, relative)
        if np.all(error <= near):
            return Verdict(f"not yet: {hint}")
    return first


def pytorch_running_var(
    given: Any,
    biased: float,
    rows: int,
    tolerance: float = 5e-4,
    mistake_tolerance: float | None = None,
) -> Verdict:
    """A checker for PyTorch's running variance after one training batch from its start of 1:
    momentum 0.1 in PyTorch's naming (the share taken from the batch), the running variance
    updated with the batch's *unbiased* variance. `biased` is the batch's biased variance, `rows`
    its number of rows.

    The mistakes it names: an update with the biased variance (normcore's and this book's rule),
    momentum read as the share kept, the start of 1 forgotten, and the batch's variance taken
    whole.
    """
    unbiased = biased * rows / (rows - 1)
    mistakes = [
        (
            0.9 + 0.1 * biased,
            "that updates with the biased variance, as normcore does; PyTorch updates with the "
            "unbiased one (the squared offsets divided by n - 1)",
        ),
        (
            0.1 + 0.9 * unbiased,
            "PyTorch's momentum 0.1 is the share taken from the batch, not the share kept",
        ),
        (
            0.1 * unbiased,
            "the running variance starts at 1, not 0: nine tenths of that start are kept",
        ),
        (
            unbiased,
            "that is the batch's unbiased variance itself; the running statistic moves only "
            "a tenth of the way to it",
        ),
    ]
    return judged(given, 0.9 * 1.0 + 0.1 * unbiased, mistakes, tolerance, mistake_tolerance)
