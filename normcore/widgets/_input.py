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
from typing import Any

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


class StateError(NormcoreError):
    """A widget state (or an argument of a widget's action) of the wrong kind or shape."""


def check_state(state: object, spec: dict[str, Any], name: str = "state") -> dict[str, Any]:
    """`state` itself when it is a dictionary holding every key of `spec` with a value of the kind
    `spec` names; otherwise a StateError naming the first key that is wrong.

    A kind is a type (``str``, ``bool``, ``int``, ``float``: an int or a float, not a bool;
    ``object``: anything), a one-item list ``[kind]`` (a list of that kind, any length), or a
    tuple of kinds (any one of them; ``None`` for None). Extra keys are allowed.
    """
    if not isinstance(state, dict):
        raise StateError(f"{name}: expected a dictionary, got {type(state).__name__}")
    for key, kind in spec.items():
        if key not in state:
            raise StateError(f"{name}: expected a value for {key!r}, found none")
        _check_kind(state[key], kind, f"{name}[{key!r}]")
    return state


def _check_kind(value: object, kind: Any, where: str) -> None:
    if isinstance(kind, tuple):
        for option in kind:
            try:
                _check_kind(value, option, where)
                return
            except StateError:
                continue
        raise StateError(f"{where}: got {type(value).__name__}, which it cannot be")
    if kind is None:
        if value is not None:
            raise StateError(f"{where}: expected None, got {type(value).__name__}")
    elif isinstance(kind, list):
        if not isinstance(value, list):
            raise StateError(f"{where}: expected a list, got {type(value).__name__}")
        for i, item in enumerate(value):
            _check_kind(item, kind[0], f"{where}[{i}]")
    elif kind is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise StateError(f"{where}: expected a number, got {type(value).__name__}")
        if not math.isfinite(value):
            raise NonFiniteError(f"{where}: expected a finite number, got {value!r}")
    elif kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise StateError(f"{where}: expected a whole number, got {type(value).__name__}")
    elif kind is not object and not isinstance(value, kind):
        raise StateError(f"{where}: expected {kind.__name__}, got {type(value).__name__}")


def check_index(value: object, size: int, name: str) -> int:
    """`value` when it is a whole number from 0 to `size` - 1; a StateError otherwise."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < size:
        raise StateError(f"{name}: expected a whole number from 0 to {size - 1}, got {value!r}")
    return value


def real_block(block: object, name: str = "block") -> Any:
    """`block` as a float64 array, refusing what is not real numbers (complex, bool, text, None:
    a DtypeError), a ragged list (ShapeError) and NaN or infinity (NonFiniteError), before any
    arithmetic (`normcore._checks.as_block`, the layers' own check)."""
    import numpy as np

    from normcore._checks import as_block

    return np.asarray(as_block(block, name), dtype=np.float64)
