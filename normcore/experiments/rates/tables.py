"""The sweep as the chapter shows it: its own table, and each cell beside the printed one."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...book import table
from .data import COLUMNS, DECIMALS, REFERENCE_TABLE
from .results import SweepRow

CHAOTIC = "chaotic"


@dataclass(frozen=True)
class Cell:
    """One cell of the sweep beside the reference program's printed value."""

    normalised: bool
    rate: float
    column: str
    run: int
    ours: float
    printed: float
    sensitive: bool = False

    @property
    def refused(self) -> bool:
        return math.isnan(self.ours) or (self.column == "dead" and self.ours < 0)

    @property
    def agrees(self) -> bool:
        """Equal at the digits the reference program printed: ours lies within half a unit of
        its last printed digit (a dead-unit count must be equal). A refused run, or a cell of a
        chaotic setting (whose digits change with the machine), is not compared."""
        if self.refused or self.sensitive:
            return False
        half = 0.5 * 10.0 ** -DECIMALS[self.column]
        return abs(self.ours - self.printed) <= half + 1e-9

    @property
    def status(self) -> str:
        """'agrees', 'differs', 'refused' (normcore stopped the run) or 'chaotic'."""
        if self.refused:
            return "refused"
        if self.sensitive:
            return "chaotic"
        return "agrees" if self.agrees else "differs"


def compare_with_reference(rows: Sequence[SweepRow]) -> list[Cell]:
    """Every cell of `rows` beside the printed value (48 cells for the full sweep)."""
    cells = []
    for row in rows:
        quoted = REFERENCE_TABLE[(row.normalised, row.rate)]
        for c, name in enumerate(COLUMNS):
            for k in range(2):
                cells.append(
                    Cell(
                        row.normalised,
                        row.rate,
                        name,
                        k + 1,
                        float(row.column(name)[k]),
                        float(quoted[c][k]),
                        sensitive=row.sensitive and name != "dead",
                    )
                )
    return cells


def shown(column: str, value: float, sensitive: bool = False) -> str:
    """A figure of the sweep as the tables show it: 4 decimals, dead units out of 16, — for a
    run normcore refused, 'chaotic' for a loss or accuracy of a chaotic setting."""
    if sensitive and column != "dead":
        return CHAOTIC
    if column == "dead":
        return "—" if value < 0 else f"{int(value)}/16"
    return "—" if math.isnan(value) else f"{value:.{DECIMALS[column]}f}"


def sweep_table(rows: Sequence[SweepRow]) -> Any:
    """The sweep as a table: — marks a run normcore refused to finish, 'chaotic' a figure whose
    digits change with the machine's arithmetic (see `SENSITIVE`)."""
    header = ["batch layer", "rate", "loss 1", "loss 2", "test 1", "test 2", "dead 1", "dead 2"]
    body = [
        [
            "yes" if r.normalised else "no",
            f"{r.rate:g}",
            *[shown(c, v, r.sensitive) for c in COLUMNS for v in r.column(c)],
        ]
        for r in rows
    ]
    return table(header, body)


def comparison_table(rows: Sequence[SweepRow]) -> Any:
    """Each cell beside the reference program's printed value: ✓ where they agree at the printed
    digits, ✗ where they do not; 'refused' and 'chaotic' cells are not compared."""
    marks = {"agrees": "✓", "differs": "✗", "refused": "refused", "chaotic": "not compared"}
    body = [
        [
            "yes" if c.normalised else "no",
            f"{c.rate:g}",
            c.column,
            c.run,
            shown(c.column, c.printed),
            shown(c.column, c.ours, c.sensitive),
            marks[c.status],
        ]
        for c in compare_with_reference(rows)
    ]
    return table(["batch layer", "rate", "column", "run", "printed", "normcore", "agrees"], body)
