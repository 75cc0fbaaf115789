"""What the chapters share to put computed figures into their prose (myst-nb `glue`) and tables.

The one rounding rule: a float reaches the page (glued into the prose, printed, or set in a table)
only as the prose shows it, rounded by the same format spec the prose uses (``".4f"``,
``".1e"``, ``".3g"``...). The last bits of a float change with the machine: BLAS picks its
kernels by CPU (``OPENBLAS_CORETYPE``), numpy picks its SIMD loops by CPU
(``NPY_DISABLE_CPU_FEATURES``), and both change the order in which sums are added and how
``exp``, ``log`` and ``tanh`` round. A figure stored at full precision would differ from machine
to machine; a figure stored at the digits the prose shows does not, as long as those digits are
stable (CI runs the book under a matrix of those settings to check that they are).

* :func:`shown` is the rule itself: the value as the prose shows it, back as a float.
* :func:`glue` glues a figure under a name, rounded by :func:`shown`; a float without a format
  spec is refused, so no full-precision float reaches a stored output.
* :func:`below` glues the power of ten just above a rounding-level figure, whose digits are
  noise and whose size is the finding.
* :func:`table` sets rows of figures as a `normcore.tables.Table`, each float formatted by its
  column's spec.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

from .tables import Table

__all__ = ["GLUE_PREFIX", "below", "bound", "glue", "keep", "shown", "table"]

# myst-nb reads a glued figure from a display output whose mime types carry this prefix and whose
# metadata names it ("scrapbook"), exactly what `myst_nb.glue(name, value, display=False)` emits.
# The output is written here with IPython alone: importing myst_nb inside a kernel pulls in
# nbformat, jsonschema and docutils, over a second of a chapter's run for nothing (tested to give
# the same output as myst_nb.glue).
GLUE_PREFIX = "application/papermill.record/"


def _emit(name: str, value: Any) -> None:
    """Display `value` as a glued, undisplayed figure named `name` (myst-nb's glue format)."""
    from IPython.core.formatters import format_display_data
    from IPython.display import display

    bundle, metadata = format_display_data(value)
    metadata["scrapbook"] = {"name": name, "mime_prefix": GLUE_PREFIX}
    display({GLUE_PREFIX + k: v for k, v in bundle.items()}, raw=True, metadata=metadata)


def shown(value: float, spec: str) -> float:
    """`value` rounded as the format spec `spec` shows it (e.g. ``".4f"``), back as a float.

    ``format(shown(v, spec), spec) == format(v, spec)``, and the float's own repr has no more
    digits than that text: ``shown(1.8756186212015271, ".4f") == 1.8756``.
    """
    return float(format(float(value), spec))


def _is_float(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral | bool)


def glue(name: str, value: Any, spec: str | None = None) -> None:
    """Glue `value` under `name` for the prose, without displaying it.

    A float (Python or numpy) is rounded by :func:`shown` with `spec`, the format spec the prose
    uses for it (``{glue:text}`name:.4f``` is glued with ``".4f"``); a float with no `spec`
    raises TypeError. Integers (numpy's too) are glued as Python ints, strings as they are.
    """
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        value = int(value)
    elif _is_float(value):
        if spec is None:
            raise TypeError(f"glue {name!r}: a float needs the format spec the prose shows it in")
        value = shown(value, spec)
    _emit(name, value)


def keep(name: str, value: float, digits: int = 9) -> None:
    """Glue `value` under `name` at `digits` significant digits (`glue` with ``.{digits}g``)."""
    glue(name, value, f".{digits}g")


def bound(value: float, floor: float = 1e-16) -> float:
    """The smallest power of ten at or above ``|value|``, and at least `floor`.

    A gap at the level of rounding differs in its first digit from one machine's arithmetic to
    another's (4e-16 here, 6e-16 there); shown as this bound with a `floor` above that level, it
    reads the same everywhere: ``bound(4e-16, 1e-14) == bound(6e-16, 1e-14) == 1e-14``.
    """
    return 10.0 ** math.ceil(math.log10(max(abs(float(value)), floor)))


def below(name: str, value: float, floor: float = 1e-16) -> None:
    """Glue :func:`bound` of `value` (the power of ten just above it, at least `floor`) under
    `name`."""
    _emit(name, bound(value, floor))


def table(
    header: Sequence[str],
    rows: Sequence[Sequence[Any]],
    specs: Sequence[str | None] | None = None,
    caption: str = "",
) -> Table:
    """An HTML table of `rows` under `header`. Column k's floats are formatted with ``specs[k]``
    (the rounding rule of :func:`shown`; a float in a column without a spec raises TypeError),
    NaN as an em dash; other cells as ``str``."""
    specs = list(specs) if specs is not None else [None] * len(header)

    def cell(value: Any, spec: str | None) -> str:
        if _is_float(value):
            if math.isnan(value):
                return "—"
            if spec is None:
                raise TypeError("table: a column of floats needs a format spec")
            return format(float(value), spec)
        return str(value)

    cells = [[cell(v, s) for v, s in zip(row, specs, strict=True)] for row in rows]
    return Table(header, cells, caption, digits=None)
