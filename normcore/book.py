"""What the chapters share to put computed figures into their prose (myst-nb `glue`).

A chapter computes a figure, glues it under a name, and the prose quotes the name. The last bits
of a float sum can change from run to run (numpy's vectorised sums depend on memory alignment),
so a figure is glued rounded to the digits that are stable: `keep` for a figure, `below` for a
rounding-level one, whose digits are noise and whose size is the finding.
"""

from __future__ import annotations

import math


def keep(name: str, value: float, digits: int = 9) -> None:
    """Glue `value` under `name`, rounded to `digits` significant digits, without displaying it."""
    from myst_nb import glue  # imported here: the package itself does not need myst-nb

    glue(name, float(f"{value:.{digits}g}"), display=False)


def below(name: str, value: float, floor: float = 1e-16) -> None:
    """Glue the power of ten just above `value` (at least `floor`) under `name`."""
    from myst_nb import glue

    glue(name, 10.0 ** math.ceil(math.log10(max(float(value), floor))), display=False)
