"""Small helpers that turn a measured figure into the words a chapter prints.

A rounding-level gap is often exactly zero on one machine and 1e-16 on another; printed with a
fixed format it reads "0.0" or "0.0e+00", which says nothing. `gap_words` says "none" for an
exact zero and gives the figure itself otherwise.
"""

from __future__ import annotations


def gap_words(gap: float, zero: str = "none, bit for bit") -> str:
    """`zero` when `gap` is exactly 0, else the gap in scientific notation with two digits.

    Args:
        gap: a non-negative difference, e.g. the largest entry of |a - b|.
        zero: the words for an exact zero.
    Returns:
        the words to glue into the prose.
    """
    gap = float(gap)
    return zero if gap == 0.0 else f"{gap:.1e}"
