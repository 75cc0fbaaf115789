"""What a reader types into a widget, read one way for every widget: typed errors, then a sentence.

A number is read only if it looks like one: an optional sign, digits with an optional decimal
point, and an optional exponent (``12``, ``-0.5``, ``.5``, ``1e-3``). Nothing is evaluated, and
words that Python's float() would take (``nan``, ``inf``, ``1_000``) are not numbers here. The
JavaScript twin (``js/input.js``) applies the same pattern, so the site and JupyterLab refuse the
same texts with the same sentences.

Errors are typed (subclasses of `normcore.errors.NormcoreError`); a widget catches
`NormcoreError` and nothing else, and shows `friendly(error)`.
"""

from __future__ import annotations

import math
import re

from normcore.errors import MagnitudeError, NonFiniteError, NormcoreError

#: A number as a reader types it (after surrounding spaces are dropped).
NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
#: The longest text a box accepts.
LONGEST = 40


class NotANumberError(NormcoreError):
    """Text typed into a widget that is not a number (empty, a word, an expression)."""


def parse_number(text: object, name: str, limit: float = math.inf) -> float:
    """The number `text` holds, or a typed error naming the box (`name`) and what is wrong.

    Raises NotANumberError (empty, too long, not a number), NonFiniteError (a number too large
    for a float, such as 1e400) or MagnitudeError (beyond ±`limit`).
    """
    if not isinstance(text, str):
        raise NotANumberError(f"{name} is not text")
    shown = text if len(text) <= 12 else text[:12] + "…"
    if len(text) > LONGEST:
        raise NotANumberError(f"{name}: {shown!r} is longer than {LONGEST} characters")
    stripped = text.strip()
    if not stripped:
        raise NotANumberError(f"{name} is empty")
    if not NUMBER.fullmatch(stripped):
        raise NotANumberError(f"{name}: {shown!r} is not a number")
    value = float(stripped)
    if not math.isfinite(value):
        raise NonFiniteError(f"{name}: {shown!r} is too large to be a number here")
    if abs(value) > limit:
        raise MagnitudeError(f"{name}: {shown!r} is beyond ±{limit:,.0f}")
    return value


def friendly(error: NormcoreError | str) -> str:
    """An error's message as a sentence for the reader (capital first, full stop)."""
    text = str(error)
    return text[:1].upper() + text[1:] + "."
