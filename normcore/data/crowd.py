"""The crowd: 25 fictional people with height, weight and a 0/1 label.

The data ship as ``crowd.csv`` inside the package; ``make_crowd.py`` says how they were made and
regenerates the file. Label 1 marks a group that is on average taller and heavier; the two labels
overlap in the middle, so no model separates them perfectly.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import numpy as np

__all__ = ["Crowd", "load_crowd"]

_RESOURCE = "crowd.csv"


@dataclass(frozen=True)
class Crowd:
    """The crowd, one entry per person, in file order.

    ``height`` (cm) and ``weight`` (kg) are float64 arrays of shape (25,); ``label`` is an int64
    array of 0/1 of shape (25,). The arrays are read-only (the loaded crowd is cached and shared).
    """

    height: np.ndarray
    weight: np.ndarray
    label: np.ndarray

    @property
    def features(self) -> np.ndarray:
        """Shape (25, 2) float64: column 0 is height (cm), column 1 weight (kg); unscaled."""
        return np.column_stack([self.height, self.weight]).astype(np.float64)

    @property
    def labels(self) -> np.ndarray:
        """Shape (25,) float64 of 0.0/1.0, ready for a binary cross-entropy."""
        return self.label.astype(np.float64)

    def __len__(self) -> int:
        return int(self.label.shape[0])


def parse_crowd(text: str) -> Crowd:
    """Parse the crowd CSV text: ``#`` comment lines, a header line, then height,weight,label."""
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
    reader = csv.DictReader(io.StringIO("\n".join(lines)))
    records = list(reader)
    height = np.array([float(r["height_cm"]) for r in records], dtype=np.float64)
    weight = np.array([float(r["weight_kg"]) for r in records], dtype=np.float64)
    label = np.array([int(r["label"]) for r in records], dtype=np.int64)
    for array in (height, weight, label):
        array.setflags(write=False)
    return Crowd(height=height, weight=weight, label=label)


@lru_cache(maxsize=1)
def load_crowd() -> Crowd:
    """Load the shipped crowd (25 people) from the package's ``crowd.csv``."""
    text = resources.files(__package__).joinpath(_RESOURCE).read_text(encoding="utf-8")
    return parse_crowd(text)
