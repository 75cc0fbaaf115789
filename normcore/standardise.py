"""The one standardising routine every normaliser in normcore is built on.

The normalisers differ only in the axes their statistics run along: batch norm reads down the rows,
layer norm along the row (or over trailing axes), instance and group norm over image axes. RMS norm
is the same routine without centring.

Conventions, for every layer that uses this routine:

* the variance is the biased one (divide by the count, not the count minus one), both forward and
  backward, because the backward pass differentiates the quantity the forward pass computed;
* epsilon sits under the square root: the divisor is ``sqrt(variance + eps)`` (the field
  ``divisor``), so a constant stretch of values (zero variance) standardises to zeros instead
  of dividing by zero;
* the backward pass adds up three routes from an input to the loss: its z, the mean it helped
  make, and the variance it helped make. With ``n`` values per statistic, ``z`` the standardised
  input, ``s`` the divisor and ``d`` the upstream gradient at ``z``, the input gradient is::

      grad_input = (n * d - sum(d) - z * sum(d * z)) / (n * s)

  with both sums along the statistic's axes. Without centring (RMS) the mean's route is absent::

      grad_input = (n * d - z * sum(d * z)) / (n * s)

This module is the arithmetic as the book shows it, and the only arithmetic the normalisers run:
every input, of any size, goes through these functions and ``z * scale + shift``
(`normcore.normaliser`). The value they hand back, `Standardised`, is defined with the other
values in `normcore.responses`.
"""

from __future__ import annotations

import numpy as np

from ._checks import statistic_count
from .responses import Standardised


def standardise(
    x: np.ndarray,
    axes: tuple[int, ...],
    eps: float,
    centre: bool = True,
) -> Standardised:
    """Standardise `x` by its own statistics along `axes` (biased variance,
    epsilon under the root).

    The caller has checked `x` (finite float array) and `eps` (> 0).
    """
    axes = tuple(a % x.ndim for a in axes)
    n = statistic_count(x.shape, axes)
    if centre:
        # summed in float64 (as numpy sums a float64 block anyway), so that
        # a float32 block far from zero keeps the digits of its spread; then
        # stored in the block's own type
        total = x.sum(axis=axes, keepdims=True, dtype=np.float64)
        mean = (total / n).astype(x.dtype, copy=False)
        centred = x - mean
    else:
        mean = None
        centred = x
    variance = (centred * centred).sum(axis=axes, keepdims=True) / n
    divisor = np.sqrt(variance + eps)
    return Standardised(
        z=centred / divisor,
        mean=mean,
        variance=variance,
        divisor=divisor,
        axes=axes,
        count=n,
        from_input=True,
    )


def standardise_by(
    x: np.ndarray, mean: np.ndarray | None, divisor: np.ndarray, axes: tuple[int, ...]
) -> Standardised:
    """Standardise `x` by statistics handed in (broadcastable), e.g. a layer's running
    statistics."""
    axes = tuple(a % x.ndim for a in axes)
    centred = x if mean is None else x - mean
    return Standardised(
        z=centred / divisor,
        mean=mean,
        variance=None,
        divisor=divisor,
        axes=axes,
        count=statistic_count(x.shape, axes),
        from_input=False,
    )


def standardise_backward(st: Standardised, d: np.ndarray) -> np.ndarray:
    """The input gradient ∂L/∂x, given the upstream gradient `d` at the
    standardised output.

    Statistics read from the input contribute their routes (three when
    centred, two for RMS); statistics handed in are constants and contribute
    none.
    """
    if not st.from_input:
        return d / st.divisor
    n = st.count
    sum_dz = (d * st.z).sum(axis=st.axes, keepdims=True)
    total = n * d - st.z * sum_dz
    if st.mean is not None:
        total = total - d.sum(axis=st.axes, keepdims=True)
    return total / (n * st.divisor)


def naive_backward(st: Standardised, d: np.ndarray) -> np.ndarray:
    """The tempting wrong gradient, d / divisor, that ignores the routes through the statistics.

    Kept so the book can show how far it lands from the oracle; no layer uses it.
    """
    return d / st.divisor
