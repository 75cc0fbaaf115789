"""The large-block path: an optimisation of the routine in `normcore.standardise`, nothing more.

Every layer runs the readable routine (`standardise`, `standardise_by`, `standardise_backward`,
then ``z * scale + shift``) for blocks of up to `kernels.CHUNK` values (64 Ki: the book's largest
block has 8,000). Larger blocks come here, and only here, chosen by `serves`: the same figures,
computed a cache-sized slab at a time in fewer passes (see `normcore.fast.kernels`). The tests hold
every path here to the readable routine at 1e-12 (``tests/test_fused.py``,
``tests/test_fuzz_api.py``).

This path also skips the scan of its answer for overflow where the answer is provably bounded:
statistics read from a block keep every ``|z| <= sqrt(count)``, so the output is at most
``sqrt(count) * max|scale| + max|shift|``, and the slope passed down at most
``max|d| * max|scale| / min(deviation) * (2 + sqrt(count))`` (the three routes, each bounded).
Only answers whose bound comes within a quarter of the float type's largest value are scanned.
"""

from __future__ import annotations

import math

import numpy as np

from .._checks import check_finite_result
from ..standardise import Standardised
from . import kernels

__all__ = ["backward", "forward", "serves"]

#: answers provably below this share of the float type's largest value skip the overflow scan
_SAFE = 0.25


def serves(block: np.ndarray) -> bool:
    """Whether `block` goes the large-block way: more values than one slab (`kernels.CHUNK`)."""
    return block.size > kernels.CHUNK


def _largest(a: np.ndarray | None, default: float) -> float:
    return default if a is None else float(np.max(np.abs(a)))


def _guard(answer: np.ndarray, bound: float, what: str) -> np.ndarray:
    """`answer`, scanned for overflow only when `bound` does not keep it well inside its type."""
    if not bound < _SAFE * float(np.finfo(answer.dtype).max):
        check_finite_result(answer, what)
    return answer


def forward(
    view: np.ndarray,
    axes: tuple[int, ...],
    epsilon: float,
    centre: bool,
    scale: np.ndarray | None,
    shift: np.ndarray | None,
    given: tuple[np.ndarray | None, np.ndarray] | None,
    what: str,
) -> tuple[Standardised, np.ndarray]:
    """As the readable forward pass: standardise `view` along `axes` (by its own statistics, or by
    `given` = (mean, deviation)), then ``z * scale + shift``; the output checked for overflow."""
    if given is None:
        st, out = kernels.standardise_affine(view, axes, epsilon, centre, scale, shift)
        count = st.count
        bound = math.sqrt(count) * _largest(scale, 1.0) + _largest(shift, 0.0)
    else:
        st, out = kernels.standardise_by_affine(view, given[0], given[1], axes, scale, shift)
        bound = math.inf
    return st, _guard(out, bound, what)


def backward(
    st: Standardised,
    d: np.ndarray,
    scale: np.ndarray | None,
    shared: tuple[int, ...] | None,
    largest_d: float,
    what: str,
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """As the readable backward pass: the slope passed down through ``z * scale + shift`` and the
    sums of ``d * z`` and ``d`` along `shared`; the slope passed down checked for overflow.
    `largest_d` bounds ``|d|``."""
    passed, d_scale, d_shift = kernels.standardise_affine_backward(st, d, scale, shared)
    routes = 2.0 + math.sqrt(st.count) if st.from_block else 1.0
    bound = largest_d * _largest(scale, 1.0) * float(np.max(1.0 / st.deviation)) * routes
    return _guard(passed, bound, what), d_scale, d_shift
