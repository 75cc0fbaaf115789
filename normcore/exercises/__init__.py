"""Exercise checks: tell the reader whether an answer is right without printing the answer.

Each chapter's module (``normcore.exercises.ch02`` and so on) computes its answers with normcore
and exposes one checking function per exercise built on `verdict`. Every chapter lays an exercise
out the same way: the question, a cell that starts ``answer = None`` and calls the checker, and a
collapsed worked solution. So the checker's first reply, to ``None``, is a prompt, not a failure.

A reply is a `Verdict`: a string that prints without quotes, and compares equal to ``"right"``
exactly when the answer is right.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

#: What a checker says before the reader has answered (the answer is still ``None``).
PROMPT = "waiting for your answer: put it in place of None and run this cell"

#: An answer whose worst entry is within this many tolerances of the expected one, and within
#: CLOSE_LIMIT (relative), is "close".
CLOSE_FACTOR = 1000.0
CLOSE_LIMIT = 5e-3


class Verdict(str):
    """A checker's reply: plain text that shows without quotes in a notebook."""

    def __repr__(self) -> str:
        return str(self)

    @property
    def right(self) -> bool:
        """True when the answer was right."""
        return self == "right"


def _digits(error: float) -> int:
    """How many decimal digits an answer with this relative error gets right (0 at least)."""
    if error <= 0:
        return 16
    return max(0, math.floor(-math.log10(2.0 * error)))


def relative_error(given: np.ndarray, expected: np.ndarray, relative: bool) -> np.ndarray:
    """How far `given` is from `expected`, entry by entry: relative to the expected entry's size
    when `relative` (an answer of 1e-7 is then as far from 1e-8 as 10 is from 1; an expected 0
    is met only by 0), else relative above one and absolute below it."""
    with np.errstate(all="ignore"):
        if relative:
            size = np.abs(expected)
            scaled = np.abs(given - expected) / np.where(size > 0, size, 1.0)
            return np.where(size > 0, scaled, np.where(given == expected, 0.0, np.inf))
        return np.abs(given - expected) / np.maximum(1.0, np.abs(expected))


def verdict(
    given: Any,
    expected: Any | Callable[[], Any],
    tolerance: float = 5e-4,
    relative: bool = False,
) -> Verdict:
    """Compare a reader's answer with the expected one, without revealing the expected one.

    Args:
        given: the reader's answer: a number, a nested list or an array; ``None`` (or a list
            holding ``None``) means "not answered yet".
        expected: the right answer, same shape as `given` should be; or a function of no
            arguments that computes it, called only once there is an answer to check (so a
            chapter's Run All, with every answer still ``None``, does not pay for training runs
            that only a checker needs).
        tolerance: how far an entry may be from the expected one, absolute or relative to the
            entry's size, whichever is larger (``0`` for whole-number answers).
        relative: measure every distance relative to the expected entry's size, however small
            (`relative_error`): for answers far below one, asked for to a number of significant
            figures.

    Returns:
        ``"right"``; a prompt while `given` is ``None``; ``"close: ..."`` when every entry is
        within ``CLOSE_FACTOR`` tolerances and ``CLOSE_LIMIT`` (with how many digits agree and
        how many are asked for); otherwise ``"not yet: ..."`` naming only what is off (the
        shape, or how many entries), never the expected value itself.
    """
    if given is None or (isinstance(given, (list, tuple)) and any(g is None for g in given)):
        return Verdict(PROMPT)
    if callable(expected):
        expected = expected()
    try:
        g = np.asarray(given, dtype=np.float64)
    except (TypeError, ValueError):
        return Verdict("not yet: the answer should be a number or an array of numbers")
    e = np.asarray(expected, dtype=np.float64)
    if g.shape != e.shape:
        return Verdict(f"not yet: expected an answer of shape {e.shape}, got {g.shape}")
    if not np.all(np.isfinite(g)):
        return Verdict("not yet: the answer holds NaN or infinity")
    error = relative_error(g, e, relative)
    if np.all(error <= tolerance):
        return Verdict("right")
    worst = float(np.max(error))
    if tolerance > 0 and worst <= min(CLOSE_FACTOR * tolerance, CLOSE_LIMIT):
        have, want = _digits(worst), _digits(tolerance)
        if have < want:
            return Verdict(
                f"close: right to about {have} digits, but this answer needs "
                f"{want}; keep more digits in the working"
            )
        return Verdict("close: nearly right, but not within the tolerance; check the rounding")
    wrong = int(np.count_nonzero(error > tolerance))
    if e.size == 1:
        return Verdict("not yet: that is not the answer")
    return Verdict(f"not yet: {wrong} of {e.size} entries are off")
