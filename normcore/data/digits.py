"""The 8 x 8 handwritten digits: 1,797 images of the digits 0 to 9, each 64 pixel counts 0..16.

Provenance: the test set of the UCI "Optical Recognition of Handwritten Digits" data set
(E. Alpaydin and C. Kaynak, 1998; https://archive.ics.uci.edu/dataset/80), licensed under
Creative Commons Attribution 4.0 (CC BY 4.0). Each image is a 32 x 32 bitmap from NIST's
preprocessing, cut into 4 x 4 tiles whose "on" pixels are counted, so each of the 64 values is a
whole number from 0 to 16. The file ``digits.csv.gz`` shipped beside this module is byte for
byte the copy scikit-learn 1.9.1 ships as ``sklearn/datasets/data/digits.csv.gz`` (SHA-256 in
`SHA256`): one image a line, 64 pixels (row by row) then the label, no header.
"""

from __future__ import annotations

import gzip
import hashlib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np

from ..errors import DtypeError, SettingError, ShapeError

__all__ = ["Digits", "SHA256", "load_digits", "parse_digits", "split_digits"]

_RESOURCE = "digits.csv.gz"
#: SHA-256 of the shipped gzip file (the same bytes as scikit-learn's copy)
SHA256 = "09f66e6debdee2cd2b5ae59e0d6abbb73fc2b0e0185d2e1957e9ebb51e23aa22"
PIXELS = 64
LARGEST = 16


@dataclass(frozen=True, eq=False)
class Digits:
    """The images and their labels, in file order.

    ``images``: float64, shape (n, 64), whole numbers 0..16 (row-major 8 x 8); ``labels``: int64,
    shape (n,), 0..9. Both read-only.
    """

    images: np.ndarray
    labels: np.ndarray

    def __len__(self) -> int:
        return int(self.labels.shape[0])

    @property
    def scaled(self) -> np.ndarray:
        """The pixels divided by 16, so each lies in [0, 1]; shape (n, 64)."""
        return self.images / LARGEST


def parse_digits(text: str) -> Digits:
    """Parse the CSV text: one image a line, 64 pixel counts then the label.

    Raises ShapeError for a line without 65 values or an empty file, DtypeError for a value that is
    not a whole number, and SettingError for a pixel outside 0..16 or a label outside 0..9.
    """
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise ShapeError("digits: expected at least one line of 65 values, got none")
    rows = []
    for number, line in enumerate(lines, start=1):
        fields = line.split(",")
        if len(fields) != PIXELS + 1:
            raise ShapeError(
                f"digits line {number}: expected {PIXELS + 1} values, got {len(fields)}"
            )
        try:
            rows.append([int(f) for f in fields])
        except ValueError:
            raise DtypeError(
                f"digits line {number}: expected whole numbers, got {line[:40]!r}"
            ) from None
    table = np.array(rows, dtype=np.int64)
    images, labels = table[:, :PIXELS], table[:, PIXELS]
    if images.min() < 0 or images.max() > LARGEST:
        raise SettingError(f"digits: expected pixel counts 0 to {LARGEST}")
    if labels.min() < 0 or labels.max() > 9:
        raise SettingError("digits: expected labels 0 to 9")
    images = images.astype(np.float64)
    for array in (images, labels):
        array.setflags(write=False)
    return Digits(images=images, labels=labels)


def _raw() -> bytes:
    return resources.files(__package__).joinpath(_RESOURCE).read_bytes()


@lru_cache(maxsize=1)
def load_digits() -> Digits:
    """The shipped 1,797 digits (cached; the arrays are read-only and shared)."""
    return parse_digits(gzip.decompress(_raw()).decode("ascii"))


def checksum() -> str:
    """SHA-256 of the shipped file, to hold against `SHA256`."""
    return hashlib.sha256(_raw()).hexdigest()


def split_digits(held_out: Any = 0.2, seed: Any = 0) -> tuple[np.ndarray, np.ndarray]:
    """Row indices (training, held out): a shuffle by ``np.random.default_rng(seed)``, the last
    ``round(held_out * 1797)`` rows held out. Raises SettingError for a share outside (0, 1) or a
    seed that is not a whole number >= 0."""
    if (
        isinstance(held_out, bool)
        or not isinstance(held_out, (int, float, np.floating))
        or not (0 < float(held_out) < 1)
    ):
        raise SettingError(f"held_out: expected a share between 0 and 1, got {held_out!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise SettingError(f"seed: expected a whole number >= 0, got {seed!r}")
    n = len(load_digits())
    order = np.random.default_rng(int(seed)).permutation(n)
    cut = n - round(float(held_out) * n)
    if cut < 1 or cut >= n:
        raise SettingError(f"held_out: {held_out!r} leaves an empty side of the split")
    return np.sort(order[:cut]), np.sort(order[cut:])
