"""What a reader types into a widget, read one way for every widget: typed errors, then a sentence.

A number is read only if it looks like one: an optional sign, ASCII digits with an optional
decimal point, and an optional exponent (``12``, ``-0.5``, ``.5``, ``1e-3``), with spaces or tabs
around it. Nothing is evaluated, and words that Python's float() would take (``nan``, ``inf``,
``1_000``, full-width ``５``) are not numbers here. A matrix is rows of such numbers. The grammar
(patterns, limits, how a sentence quotes a text) is written down once, below; the bundler writes
the same values into every widget's JavaScript (``CONFIG.input``, see `normcore.widgets._config`),
where ``js/input.js`` compiles the same patterns, so the site and JupyterLab read every text
alike, sentence included (``tests/test_widget_grammar.py`` holds the two to that under node).

Errors are typed (subclasses of `normcore.errors.NormcoreError`); a widget catches
`NormcoreError` and nothing else, and shows `friendly(error)`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from normcore.errors import MagnitudeError, NonFiniteError, NormcoreError, SettingError, ShapeError

# The grammar of a reader's text, written down once: Python compiles these patterns here, and
# the bundler hands the same strings to js/input.js (CONFIG.input), which compiles them there.
# Every character class is spelled out in ASCII, so the two regex engines read them alike
# (no \d or \s, whose Unicode meanings differ between Python and JavaScript).
#: The spaces dropped around a number: ASCII space and tab, nothing else.
SPACE = "[ \t]"
#: A number: optional sign, ASCII digits with an optional point, optional exponent.
NUMBER_PATTERN = "[+-]?(?:[0-9]+[.]?[0-9]*|[.][0-9]+)(?:[eE][+-]?[0-9]+)?"
#: What ends a row of a block: a line break (\n or \r) or a semicolon.
ROW_BREAK = "[\n\r;]"
#: What separates the numbers of a row: commas, spaces and tabs.
CELL_BREAK = "[ \t,]+"
#: The longest text a number box accepts, and a block box, in characters (code points).
LONGEST = 40
MATRIX_LONGEST = 2000
#: How many characters of a refused text its sentence quotes.
QUOTED = 12

NUMBER = re.compile(NUMBER_PATTERN)
_EDGES = re.compile(f"^{SPACE}+|{SPACE}+$")


def grammar() -> dict[str, object]:
    """The grammar as the bundler writes it into every bundle (``CONFIG.input``)."""
    return {
        "SPACE": SPACE,
        "NUMBER": NUMBER_PATTERN,
        "ROW_BREAK": ROW_BREAK,
        "CELL_BREAK": CELL_BREAK,
        "LONGEST": LONGEST,
        "MATRIX_LONGEST": MATRIX_LONGEST,
        "QUOTED": QUOTED,
    }


def strip(text: str) -> str:
    """`text` without the spaces and tabs around it (only those: see `SPACE`)."""
    return _EDGES.sub("", text)


def quoted(text: str) -> str:
    """The first `QUOTED` characters of `text` between single quotes, as a sentence shows them:
    a backslash and a quote escaped, every character outside printable ASCII written as its
    code (``\\u00a0``), and ``…`` when the text goes on."""
    out = []
    for c in text[:QUOTED]:
        code = ord(c)
        if c in "\\'":
            out.append("\\" + c)
        elif 0x20 <= code <= 0x7E:
            out.append(c)
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return "'" + "".join(out) + ("…" if len(text) > QUOTED else "") + "'"


def grouped(limit: float) -> str:
    """A limit as the sentences write it: a whole number with commas (1,000,000)."""
    return f"{limit:,.0f}"


class NotANumberError(NormcoreError):
    """Text typed into a widget that is not a number (empty, a word, an expression)."""


def parse_number(text: object, name: str, limit: float = math.inf) -> float:
    """The number `text` holds, or a typed error naming the box (`name`) and what is wrong.

    Raises NotANumberError (empty, too long, not a number), NonFiniteError (a number too large
    for a float, such as 1e400) or MagnitudeError (beyond ±`limit`).
    """
    if not isinstance(text, str):
        raise NotANumberError(f"{name} is not text")
    if len(text) > LONGEST:
        raise NotANumberError(f"{name}: {quoted(text)} is longer than {LONGEST} characters")
    stripped = strip(text)
    if not stripped:
        raise NotANumberError(f"{name} is empty")
    if not NUMBER.fullmatch(stripped):
        raise NotANumberError(f"{name}: {quoted(text)} is not a number")
    value = float(stripped)
    if not math.isfinite(value):
        raise NonFiniteError(f"{name}: {quoted(text)} is too large to be a number here")
    if abs(value) > limit:
        raise MagnitudeError(f"{name}: {quoted(text)} is beyond ±{grouped(limit)}")
    return value


def parse_matrix(
    text: object, name: str, limit: float, max_rows: int, max_columns: int
) -> list[list[float]]:
    """The rows of numbers typed into a matrix box: rows end at a line break or ';' (`ROW_BREAK`),
    numbers are split by commas, spaces or tabs (`CELL_BREAK`), blank rows are skipped, and each
    number is read by `parse_number` (named "<name>, row k"). Typed errors: NotANumberError (not
    text, too long, no row, a number that is not one), ShapeError (ragged or too large)."""
    if not isinstance(text, str):
        raise NotANumberError(f"{name} is not text")
    if len(text) > MATRIX_LONGEST:
        raise NotANumberError(f"{name} is longer than {MATRIX_LONGEST} characters")
    rows: list[list[float]] = []
    for line in re.split(ROW_BREAK, text):
        cells = [c for c in re.split(CELL_BREAK, line) if c]
        if cells:
            rows.append([parse_number(c, f"{name}, row {len(rows) + 1}", limit) for c in cells])
    if not rows:
        raise NotANumberError(f"{name}: type at least one row of numbers")
    widths = sorted({len(r) for r in rows})
    if len(widths) != 1:
        raise ShapeError(f"{name}: every row needs the same number of entries, got {widths}")
    if len(rows) > max_rows or widths[0] > max_columns:
        raise ShapeError(
            f"{name}: at most {max_rows} rows and {max_columns} columns, "
            f"got {len(rows)} x {widths[0]}"
        )
    return rows


def friendly(error: NormcoreError | str) -> str:
    """An error's message as a sentence for the reader (capital first, full stop)."""
    text = str(error)
    return text[:1].upper() + text[1:] + "."


class StateError(SettingError):
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


def real_matrix(x: object, name: str = "x") -> Any:
    """`x` as a float64 array, refusing what is not real numbers (complex, bool, text, None:
    a DtypeError), a ragged list (ShapeError) and NaN or infinity (NonFiniteError), before any
    arithmetic (`normcore.as_input`, the layers' own check)."""
    import numpy as np

    from normcore import as_input

    return np.asarray(as_input(x, name), dtype=np.float64)


# -- the arguments of a widget's Python calls: one check per kind, shared by every widget -------
def seed_arg(value: object, name: str = "seed") -> int:
    """A seed: a whole number from 0 to 2**32 - 1 (StateError otherwise, naming `name`)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**32:
        raise StateError(f"{name}: expected a whole number from 0 to 2**32 - 1, got {value!r}")
    return value


def flag_arg(value: object, name: str) -> bool:
    """True or False (StateError otherwise: 1, 'yes' and None are not flags)."""
    if not isinstance(value, bool):
        raise StateError(f"{name}: expected True or False, got {value!r}")
    return value


def choice_arg(value: object, name: str, options: Any) -> str:
    """One of `options` (strings), compared as a string (StateError otherwise, listing them)."""
    options = sorted(options)
    if not isinstance(value, str) or value not in options:
        raise StateError(f"{name}: expected one of {options}, got {value!r}")
    return value


def number_arg(value: object, name: str, limit: float) -> float:
    """A finite number (not a bool) within ±`limit` (StateError, NonFiniteError or
    MagnitudeError otherwise)."""
    _check_kind(value, float, name)
    number = float(value)  # type: ignore[arg-type]  # an int or a float: checked just above
    if abs(number) > limit:
        raise MagnitudeError(f"{name}: expected a number within ±{grouped(limit)}, got {value!r}")
    return number


def items_arg(value: object, name: str, kind: Any = object) -> Any:
    """A non-empty list, tuple or mapping whose items (a mapping's values) are of `kind` (a
    type, or a tuple of types); StateError otherwise, naming the argument."""
    if isinstance(value, Mapping):
        items = list(value.values())
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        raise StateError(f"{name}: expected a list or a mapping, got {type(value).__name__}")
    if not items:
        raise StateError(f"{name}: expected at least one entry, got none")
    for item in items:
        if not isinstance(item, kind):
            wanted = (
                kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
            )
            raise StateError(f"{name}: expected entries of {wanted}, got {type(item).__name__}")
    return value
