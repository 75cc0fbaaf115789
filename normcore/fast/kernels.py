"""The large-block kernels: standardise, scale and shift in as few passes as numpy allows.

`normcore.standardise` holds the arithmetic as the book shows it, one whole-block operation a
line, and the layers run it for every block up to `normcore.fast.FROM` values. The functions here
compute the same figures for larger blocks, with four savings:

* **No needless blocks.** The centred block becomes z in place; sums of products are read with
  `einsum` or `vecdot`, so no squared or product block is made; the answer is built in one fresh
  block that it owns (nothing is recycled: every answer and scratch block is a new array).
* **Slabs that stay in cache.** A block of more than `CHUNK` values is worked a slab at a time
  along its first axis, and every temporary is one slab, small enough to stay in a core's cache.
  When the first axis is not a statistic axis (layer, RMS, instance and group norm, stacked
  models), each slab holds whole statistics and is finished in one visit: x is read once, z and
  the output written once. When it is (batch norm), the forward pass reads x three times (mean,
  variance, answer) and the backward pass reads the slope and z twice.
* **A ufunc buffer no longer than a row.** Layer and RMS norm apply one value a row (mean,
  inverse deviation, the backward sums) across rows of 2 KiB and more; numpy 2 would copy that
  value into its buffer a row at a time before each such operation, so those loops run with the
  buffer cut to a row (`_row_buffers`), which halves their time and changes no bit.
* **Scale folded into constants.** For batch norm the scale is constant along the statistic's
  axis, so the backward sums are taken of the raw slope (they are the parameter slopes too), and
  the answer is ``d * k + z * a + c`` with per-feature constants ``k``, ``a`` and ``c``.

Same conventions as `normcore.standardise`, whose means are summed in float64 here too (a float32
block thousands of spreads from zero keeps its spread's digits: `_sums64`); the figures agree
with the readable pair to rounding (about 1e-15 relative in float64), held to 1e-12 by
``tests/test_fused.py`` (which shrinks `CHUNK` to force every slab path on small blocks) and by
``tests/test_fuzz_api.py`` (which draws blocks beyond `CHUNK`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import overload

import numpy as np

from ..standardise import Standardised, _count

#: values per slab: 256 KiB of float32 or 512 KiB of float64, inside a core's level-2 cache
CHUNK = 1 << 16

_LETTERS = "abcdefghijklmnopqrstuvwxyz"

Sums = tuple[np.ndarray | None, np.ndarray | None]


def _empty_like(a: np.ndarray) -> np.ndarray:
    """A fresh C-ordered block of `a`'s shape and dtype (each answer owns its memory)."""
    return np.empty(a.shape, a.dtype)


def _sum_products(a: np.ndarray, b: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """sum(a * b) along `axes`, keeping them (size 1), without making the product block."""
    subs = _LETTERS[: a.ndim]
    kept = "".join(s for i, s in enumerate(subs) if i not in axes)
    total = np.einsum(f"{subs},{subs}->{kept}", a, b)
    return total.reshape([1 if i in axes else n for i, n in enumerate(a.shape)])


def _slabs(shape: tuple[int, ...]) -> list[slice]:
    """Slices along axis 0 that cut a block of `shape` into slabs of about `CHUNK` values."""
    per_row = 1
    for n in shape[1:]:
        per_row *= n
    rows = max(1, CHUNK // max(per_row, 1))
    return [slice(i, min(i + rows, shape[0])) for i in range(0, shape[0], rows)]


@overload
def _part(a: np.ndarray, cut: slice) -> np.ndarray: ...
@overload
def _part(a: None, cut: slice) -> None: ...
def _part(a: np.ndarray | None, cut: slice) -> np.ndarray | None:
    """The slab `cut` of `a` (same rank as the block), or `a` itself where it broadcasts."""
    if a is None or a.shape[0] == 1:
        return a
    return a[cut]


def _gather(total: np.ndarray, part: np.ndarray, cut: slice, first: bool) -> None:
    """Fold a slab's reduction into `total`: added when slabs are summed over, else placed."""
    if total.shape[0] == 1:
        if first:
            total[...] = part
        else:
            total += part
    else:
        total[cut] = part


def _tiled(a: np.ndarray, like: np.ndarray) -> np.ndarray:
    """`a`, which broadcasts along the slab axis, written out to a whole slab shaped as `like`.

    numpy runs a broadcast operand one inner loop per row; against a written-out slab the same
    operation is one contiguous loop, measured here at about half the time. Slice ``[:rows]``
    for a shorter last slab.
    """
    tile = _empty_like(like)
    np.copyto(tile, np.broadcast_to(a, like.shape))
    return tile


def _tiled_or_none(a: np.ndarray | None, like: np.ndarray) -> np.ndarray | None:
    return None if a is None else _tiled(a, like)


def _inner_run(shape: tuple[int, ...], kept: list[tuple[int, ...]]) -> int:
    """How many values numpy can run through in one inner loop when every array shaped as in
    `kept` (1 where it broadcasts; missing leading axes count as 1) meets a block of `shape`: the
    trailing axes over which each array stays either whole or broadcast, multiplied together."""
    ndim = len(shape)
    kept = [(1,) * (ndim - len(k)) + tuple(k[-ndim:] if ndim else ()) for k in kept]
    run, pattern = 1, None
    for i in reversed(range(ndim)):
        if shape[i] == 1:
            continue
        here = tuple(k[i] == 1 for k in kept)
        if pattern is not None and here != pattern:
            break
        pattern = here
        run *= shape[i]
    return run


@contextmanager
def _row_buffers(n: int, dtype: np.dtype) -> Iterator[None]:
    """Run the block inside with numpy's ufunc buffer no longer than `n`, the values one inner
    loop covers (`_inner_run`: a row of layer norm, an image of instance norm).

    With a buffer longer than that, numpy 2 copies an operand that broadcasts (one value a row,
    as a row's mean or inverse deviation, or one a column, as a scale) into the buffer, one run
    at a time, before every operation (numpy issue 13307). With the buffer cut to the run,
    nothing is copied: measured here, a per-row multiply of 64 rows of 1024 float32 goes from
    about 10 to 5 us, the time of a plain two-block multiply. Runs under 2 KiB keep the default:
    there the shorter loops cost more than the copy. The setting is numpy's context-local error
    state, restored on leaving, and changes no figure (``tests/test_fused.py`` holds every path
    to the default buffer bit for bit).
    """
    with np.errstate():
        if 2048 <= n * dtype.itemsize and n < np.getbufsize():
            np.setbufsize(n - n % 16)  # numpy takes multiples of 16 only
        yield


def _kept(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(1 if i in axes else s for i, s in enumerate(shape))


def _down_sum(a: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """Sum along `axes` (keeping them); a sum down the first axis alone goes to BLAS, which reads
    the block once at full speed (a vector of ones times the block)."""
    if axes == (0,) and a.flags.c_contiguous:
        flat = a.reshape(a.shape[0], -1)
        return _column_sums(flat).reshape(_kept(a.shape, axes))
    return np.add.reduce(a, axis=axes, keepdims=True)


def _mean(x: np.ndarray, axes: tuple[int, ...], n: int) -> np.ndarray:
    """The mean along `axes` (kept), summed in float64 as `normcore.standardise` sums it, and
    stored in x's type. Down the first axis alone the sums go to BLAS, a slab at a time."""
    if axes == (0,) and x.flags.c_contiguous:
        flat = x.reshape(x.shape[0], -1)
        total = _sums64(flat, 0).reshape(_kept(x.shape, axes))
    else:
        total = np.add.reduce(x, axis=axes, keepdims=True, dtype=np.float64)
    total /= n  # as ndarray.mean does: the same bits
    return total.astype(x.dtype, copy=False)


def _sums64(a: np.ndarray, axis: int) -> np.ndarray:
    """The sums of the 2-D block `a` down its columns (`axis` 0) or along its rows (1), taken
    in float64 by BLAS. A float32 block is copied into float64 a slab at a time: its own sums
    would lose the digits of values that sit far from zero (thousands of spreads)."""
    ones = np.ones(a.shape[axis], np.float64)
    if a.dtype == np.float64:
        return _column_sums(a) if axis == 0 else a @ ones
    per = max(1, CHUNK // max(a.shape[1], 1))
    scratch = np.empty((min(per, len(a)), a.shape[1]), np.float64)
    total = np.zeros(a.shape[1]) if axis == 0 else np.empty(len(a))
    for i in range(0, len(a), per):
        j = min(i + per, len(a))
        part = scratch[: j - i]
        np.copyto(part, a[i:j])
        if axis == 0:
            total += ones[i:j] @ part
        else:
            np.matmul(part, ones, out=total[i:j])
    return total


def _column_sums(a: np.ndarray) -> np.ndarray:
    """The sums down the columns of the 2-D block `a`, by BLAS (a vector of ones times it). One
    row is its own sum: numpy runs a one-row product as a slow loop (75 us for 64 Ki values)."""
    return a[0].copy() if len(a) == 1 else np.ones(len(a), a.dtype) @ a


@dataclass(frozen=True)
class _RowPlan:
    """How a block is a stack of rows, each one statistic (the trailing axes).

    kind "position": the parameters hold one value a position in the row, the same for every
    row (layer and RMS norm: `cycle` is 1) or repeating every `cycle` rows, the product of the
    leading axes from `cycle_from` on (group norm: one scale a channel, repeating every G rows,
    one row a group). kind "row": they hold one value a row (instance norm: one a channel).
    """

    kind: str
    lead: int
    cycle_from: int
    cycle: int


def _rows(
    shape: tuple[int, ...],
    axes: tuple[int, ...],
    scale: np.ndarray | None,
    shift: np.ndarray | None,
) -> _RowPlan | None:
    """The plan for a stack of rows (see `_RowPlan`), or None when the block is not one or the
    parameters fit neither kind. Row sums that involve a parameter held a position are then
    dot products with it (BLAS); a parameter held a row is one more figure a row."""
    lead = len(shape) - len(axes)
    if lead < 1 or axes != tuple(range(lead, len(shape))):
        return None
    given = [
        p.reshape((1,) * (len(shape) - p.ndim) + p.shape) for p in (scale, shift) if p is not None
    ]
    varying = [i for i in range(lead) if any(p.shape[i] != 1 for p in given)]
    if not varying:  # the same for every row
        return _RowPlan("position", lead, lead, 1)
    if all(all(size == 1 for size in p.shape[lead:]) for p in given):
        return _RowPlan("row", lead, lead, 1)
    # the leading axes a parameter varies along must come last, so that it repeats with the rows
    start = varying[0]
    cycle = math.prod(shape[start:lead])
    rows_in_chunk = max(1, CHUNK // math.prod(shape[lead:]))
    if varying != list(range(start, lead)) or cycle > 4 * rows_in_chunk:
        return None  # a cycle so long that its tile would not stay in cache
    return _RowPlan("position", lead, start, cycle)


def _slab_rows(plan: _RowPlan, n: int) -> int:
    """Rows a slab: about `CHUNK` values, and a whole number of cycles."""
    rows = max(1, CHUNK // n)
    return max(plan.cycle, rows - rows % plan.cycle)


def _cycle_tile(p: np.ndarray, shape: tuple[int, ...], plan: _RowPlan, per: int) -> np.ndarray:
    """A parameter held a position, written out for `per` rows (a whole number of cycles)."""
    p = p.reshape((1,) * (len(shape) - p.ndim) + p.shape)
    one_cycle = np.broadcast_to(p[(0,) * plan.cycle_from], shape[plan.cycle_from :])
    n = math.prod(shape[plan.lead :])
    tile = np.empty((per, n), p.dtype)
    np.copyto(tile.reshape(per // plan.cycle, plan.cycle, n), one_cycle.reshape(plan.cycle, n))
    return tile


def _per_row(p: np.ndarray | None, shape: tuple[int, ...], lead: int) -> np.ndarray | None:
    """A parameter that is one value a row (trailing axes of size 1), as a column: one a row."""
    if p is None:
        return None
    return np.ascontiguousarray(np.broadcast_to(p.reshape(p.shape[:lead]), shape[:lead])).reshape(
        -1, 1
    )


# -- forward ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Pass:
    """One forward pass: the block, where its statistics run, and the blocks it writes into
    (`out` is `z` itself when there is no scale)."""

    x: np.ndarray
    axes: tuple[int, ...]
    n: int
    epsilon: float
    centre: bool
    scale: np.ndarray | None
    shift: np.ndarray | None
    z: np.ndarray
    out: np.ndarray

    def slab(self, cut: slice) -> _Pass:
        return _Pass(
            self.x[cut],
            self.axes,
            self.n,
            self.epsilon,
            self.centre,
            _part(self.scale, cut),
            _part(self.shift, cut),
            self.z[cut],
            self.out[cut],
        )


Stats = tuple[np.ndarray | None, np.ndarray, np.ndarray]  # mean (None: not centred), variance,
# deviation, with the statistic's axes kept


def standardise_affine(
    x: np.ndarray,
    axes: tuple[int, ...],
    epsilon: float,
    centre: bool = True,
    scale: np.ndarray | None = None,
    shift: np.ndarray | None = None,
) -> tuple[Standardised, np.ndarray]:
    """Standardise `x` along `axes` and apply ``z * scale + shift``; return (standardised, output).

    `scale` and `shift` have x's rank and broadcast against it, in x's dtype; with no scale the
    output is z itself. The caller has checked x (finite, not empty) and epsilon (> 0).
    """
    axes = tuple(sorted(a % x.ndim for a in axes))
    n = _count(x.shape, axes)
    z = _empty_like(x)
    out = z if scale is None else _empty_like(x)
    job = _Pass(x, axes, n, epsilon, centre, scale, shift, z, out)
    kept = [_kept(x.shape, axes)] + [p.shape for p in (scale, shift) if p is not None]
    with _row_buffers(_inner_run(x.shape, kept), x.dtype):
        if x.ndim == 0 or x.size <= CHUNK:
            mean, variance, deviation = _forward_into(job)
        elif (plan := _rows(x.shape, axes, scale, shift)) is not None:
            mean, variance, deviation = _forward_rows(job, plan)
        elif 0 not in axes:
            mean, variance, deviation = _forward_slab_by_slab(job)
        else:
            mean, variance, deviation = _forward_down_slabs(job)
    st = Standardised(
        z=z, mean=mean, variance=variance, deviation=deviation, axes=axes, count=n, from_block=True
    )
    return st, out


def _forward_into(job: _Pass) -> Stats:
    """A block that holds its whole statistics: z and out written in place, statistics returned."""
    x, z, out, axes, n = job.x, job.z, job.out, job.axes, job.n
    if job.centre:
        mean = np.add.reduce(x, axis=axes, keepdims=True, dtype=np.float64)
        mean /= n  # as the readable routine's ndarray.mean does: the same bits
        mean = mean.astype(x.dtype, copy=False)
        np.subtract(x, mean, out=z)
    else:
        mean = None
        np.copyto(z, x)
    variance = _sum_products(z, z, axes)
    variance *= 1.0 / n
    deviation = np.sqrt(variance + job.epsilon)
    z *= 1.0 / deviation
    if job.scale is not None:
        np.multiply(z, job.scale, out=out)
        if job.shift is not None:
            out += job.shift
    return mean, variance, deviation


def _forward_slab_by_slab(job: _Pass) -> Stats:
    """The first axis is not a statistic axis: each slab is finished in one visit."""
    shape, dtype = _kept(job.x.shape, job.axes), job.x.dtype
    mean = np.empty(shape, dtype) if job.centre else None
    variance, deviation = np.empty(shape, dtype), np.empty(shape, dtype)
    for cut in _slabs(job.x.shape):
        m, v, s = _forward_into(job.slab(cut))
        if mean is not None:
            mean[cut] = m
        variance[cut], deviation[cut] = v, s
    return mean, variance, deviation


def _forward_down_slabs(job: _Pass) -> Stats:
    """The first axis is a statistic axis (batch norm): the statistics gather over all slabs.

    Two visits: the first writes the centred block into z and sums its squares; the second
    scales z in place and writes the output.
    """
    x, z, out, axes, n = job.x, job.z, job.out, job.axes, job.n
    cuts = _slabs(x.shape)
    slab = x[cuts[0]]
    mean = _mean(x, axes, n) if job.centre else None
    mean_t = _tiled_or_none(mean, slab)
    variance = np.empty(_kept(x.shape, axes), x.dtype)
    for i, cut in enumerate(cuts):
        zc = z[cut]
        if mean_t is None:
            np.copyto(zc, x[cut])
        else:
            np.subtract(x[cut], mean_t[: zc.shape[0]], out=zc)
        _gather(variance, _sum_products(zc, zc, axes), cut, i == 0)
    variance *= 1.0 / n
    deviation = np.sqrt(variance + job.epsilon)
    inverse_t = _tiled(1.0 / deviation, slab)
    scale_t, shift_t = _tiled_or_none(job.scale, slab), _tiled_or_none(job.shift, slab)
    for cut in cuts:
        zc = z[cut]
        rows = zc.shape[0]
        zc *= inverse_t[:rows]
        if scale_t is not None:
            oc = out[cut]
            np.multiply(zc, scale_t[:rows], out=oc)
            if shift_t is not None:
                oc += shift_t[:rows]
    return mean, variance, deviation


def _forward_rows(job: _Pass, plan: _RowPlan) -> Stats:
    """A stack of rows, each one statistic: each slab of rows is finished in one visit.

    The slab loop holds as few numpy calls as it can (each costs about a microsecond, and a
    4096-row block has 64 slabs): the sums of squares go into one column, each slab's inverse
    deviation is made in place, and the variance and deviation of every row are made after the
    loop from the same sums, by the same operations, so they carry the same bits.
    """
    n, dtype = job.n, job.x.dtype
    x2, z2, out2 = job.x.reshape(-1, n), job.z.reshape(-1, n), job.out.reshape(-1, n)
    rows = x2.shape[0]
    mean = None
    if job.centre:  # every row's sum at once, by BLAS (a matrix-vector product with ones)
        mean = _sums64(x2, 1).reshape(rows, 1)
        mean /= n
        mean = mean.astype(dtype, copy=False)
    squares, inverse = np.empty(rows, dtype), np.empty((rows, 1), dtype)
    per = _slab_rows(plan, n)
    if plan.kind == "position":
        # one value a position: written out to a whole slab once, sliced for each slab
        s2, b2 = (
            None if p is None else _cycle_tile(p, job.x.shape, plan, per)
            for p in (job.scale, job.shift)
        )
        slab_of = _same_tile
    else:  # one value a row: a column, sliced with the rows
        s2, b2 = (_per_row(p, job.x.shape, plan.lead) for p in (job.scale, job.shift))
        slab_of = _rows_of
    for i in range(0, rows, per):
        j = min(i + per, rows)
        zc, inv = z2[i:j], inverse[i:j]
        if mean is not None:
            np.subtract(x2[i:j], mean[i:j], out=zc)
        else:
            np.copyto(zc, x2[i:j])
        np.vecdot(zc, zc, out=squares[i:j])  # a BLAS dot a row: twice einsum's speed here
        np.multiply(squares[i:j, None], 1.0 / n, out=inv)  # variance, deviation, 1 / it
        inv += job.epsilon
        np.sqrt(inv, out=inv)
        np.divide(1.0, inv, out=inv)
        zc *= inv
        if s2 is not None:
            oc = out2[i:j]
            np.multiply(zc, slab_of(s2, i, j), out=oc)
            if b2 is not None:
                oc += slab_of(b2, i, j)
    variance = squares.reshape(rows, 1) * (1.0 / n)
    deviation = np.sqrt(variance + job.epsilon)
    stat = _kept(job.x.shape, job.axes)
    return (
        None if mean is None else mean.reshape(stat),
        variance.reshape(stat),
        deviation.reshape(stat),
    )


# -- backward ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Back:
    """One backward pass: the forward pass's statistics, the slope arriving at the output, the
    scale, the axes the parameter slopes sum along (None: no parameters), the answer block."""

    st: Standardised
    d: np.ndarray
    scale: np.ndarray | None
    param_axes: tuple[int, ...] | None
    out: np.ndarray

    def slab(self, cut: slice) -> _Back:
        st = self.st
        part = Standardised(
            z=st.z[cut],
            mean=_part(st.mean, cut),
            variance=_part(st.variance, cut),
            deviation=_part(st.deviation, cut),
            axes=st.axes,
            count=st.count,
            from_block=st.from_block,
        )
        return _Back(part, self.d[cut], _part(self.scale, cut), self.param_axes, self.out[cut])


def standardise_affine_backward(
    st: Standardised,
    d: np.ndarray,
    scale: np.ndarray | None = None,
    param_axes: tuple[int, ...] | None = None,
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """The slope passed down through ``z * scale + shift``, and the parameter slopes.

    `d` is the slope arriving at the output (the block's shape); `scale` as in
    `standardise_affine`. Returns (passed_down, sum of d * z, sum of d), the two sums along
    `param_axes` with those axes kept (size 1); both sums are None when `param_axes` is None.
    """
    out = _empty_like(d)
    job = _Back(st, d, scale, param_axes, out)
    kept = [st.deviation.shape] + ([] if scale is None else [scale.shape])
    with _row_buffers(_inner_run(d.shape, kept), d.dtype):
        if not st.from_block or d.ndim == 0 or d.size <= CHUNK:
            sums = _backward_into(job)
        elif (plan := _rows(d.shape, st.axes, scale, None)) is not None:
            rows_pass = _backward_rows if plan.kind == "position" else _backward_rows_per_row
            sums = rows_pass(job, plan)
        elif 0 not in st.axes:
            sums = _backward_slab_by_slab(job)
        elif scale is None or all(scale.shape[a] == 1 for a in st.axes):
            sums = _backward_down_slabs(job)
        else:  # a scale varying down the statistic's first axis: no layer has one; whole block
            sums = _backward_into(job)
    return out, *sums


def _backward_into(job: _Back) -> Sums:
    """A block that holds its whole statistics: the answer written into `out`, sums returned."""
    st, d, scale, param_axes, out = job.st, job.d, job.scale, job.param_axes, job.out
    g = d if scale is None else d * scale  # the slope arriving at z
    if param_axes is None:
        sums: Sums = (None, None)
    else:
        sums = (
            np.add.reduce(d * st.z, axis=param_axes, keepdims=True),
            np.add.reduce(d, axis=param_axes, keepdims=True),
        )
    if not st.from_block:  # statistics handed in are constants
        np.divide(g, st.deviation, out=out)
        return sums
    n = st.count
    # passed = (g - mean(g) - z * mean(g z)) / s, built in `out`: -z·mean(gz), + g, - mean(g)
    np.multiply(st.z, _sum_products(g, st.z, st.axes) * (-1.0 / n), out=out)
    out += g
    if st.mean is not None:
        out -= np.add.reduce(g, axis=st.axes, keepdims=True) * (1.0 / n)
    out *= 1.0 / st.deviation
    return sums


def _backward_slab_by_slab(job: _Back) -> Sums:
    """The first axis is not a statistic axis: each slab is one whole-block backward pass."""
    d, param_axes = job.d, job.param_axes
    totals: list[np.ndarray] = []
    if param_axes is not None:
        shape = _kept(d.shape, param_axes)
        totals = [np.empty(shape, d.dtype), np.empty(shape, d.dtype)]
    for i, cut in enumerate(_slabs(d.shape)):
        sums = _backward_into(job.slab(cut))
        for total, value in zip(totals, sums, strict=False):
            assert value is not None
            _gather(total, value, cut, i == 0)
    return (totals[0], totals[1]) if totals else (None, None)


def _backward_rows(job: _Back, plan: _RowPlan) -> Sums:
    """A stack of rows, each one statistic, with the scale held a position (layer and RMS norm;
    group norm, whose scale repeats every `plan.cycle` rows): the row sums of ``d * scale`` and
    ``d * scale * z`` are dot products with the scale (BLAS), slab by slab."""
    st, d, scale, param_axes, out = job.st, job.d, job.scale, job.param_axes, job.out
    n, dtype, cycle = st.count, d.dtype, plan.cycle
    d2, z2, out2 = d.reshape(-1, n), st.z.reshape(-1, n), out.reshape(-1, n)
    rows = d2.shape[0]
    inverse = (1.0 / st.deviation).reshape(rows, 1)
    per = _slab_rows(plan, n)
    spare = _empty_like(d2[:per])
    if scale is None:
        s_cycle = np.ones((1, n), dtype)
        s_t = _tiled(s_cycle, spare)
    else:  # the scale for one cycle of rows, and for a slab
        s_cycle = _cycle_tile(scale, d.shape, plan, cycle)
        s_t = _cycle_tile(scale, d.shape, plan, per)
    s_over_n = s_cycle * dtype.type(-1.0 / n)
    d_scale = np.zeros(cycle * n, dtype) if param_axes is not None else None
    mean_gz = np.empty(rows, dtype)  # minus the row means of g z
    mean_g = None  # every row's mean of g = d * scale at once, by BLAS
    if st.mean is not None:
        by_cycle = d2 @ s_cycle[0] if cycle == 1 else np.vecdot(d2.reshape(-1, cycle, n), s_cycle)
        mean_g = by_cycle.reshape(rows, 1) * (1.0 / n)
    for i in range(0, rows, per):
        j = min(i + per, rows)
        dc, zc, oc = d2[i:j], z2[i:j], out2[i:j]
        dz = np.multiply(dc, zc, out=oc)  # oc holds d z until its row sums are read
        if cycle == 1:
            np.matmul(dz, s_over_n[0], out=mean_gz[i:j])
        else:
            np.vecdot(dz.reshape(-1, cycle, n), s_over_n, out=mean_gz[i:j].reshape(-1, cycle))
        if d_scale is not None:
            d_scale += _column_sums(dz.reshape(-1, cycle * n))
        # passed = (g - mean(g) - z * mean(g z)) / s, g = d * scale: -z mean(gz), +g, -mean(g)
        np.multiply(zc, mean_gz[i:j, None], out=oc)
        oc += np.multiply(dc, s_t[: j - i], out=spare[: j - i])
        if mean_g is not None:
            oc -= mean_g[i:j]
        oc *= inverse[i:j]
    if param_axes is None or d_scale is None:
        return None, None
    d_shift = _column_sums(d2.reshape(-1, cycle * n))
    # from one cycle of rows to the parameter's shape: add what it shares inside the cycle
    inside = d.shape[plan.cycle_from :]
    shared = tuple(a - plan.cycle_from for a in param_axes if a >= plan.cycle_from)
    shape = _kept(d.shape, param_axes)

    def gathered(total: np.ndarray) -> np.ndarray:
        if not shared:
            return total.reshape(shape)
        return np.add.reduce(total.reshape(inside), axis=shared, keepdims=True).reshape(shape)

    return gathered(d_scale), gathered(d_shift)


def _backward_rows_per_row(job: _Back, plan: _RowPlan) -> Sums:
    """A stack of rows, each one statistic, with one scale a row (instance norm on large blocks).

    With g = d * s_r, passed = (s_r / dev_r) * (d - mean(d) - z * mean(d z)) row by row: the
    row sums of d and of d z come from BLAS (a matrix-vector product, a dot a row), and the
    answer is ``d * k + z * a + c`` with one k, a and c a row. The parameter slopes are the same
    row sums, added over the rows that share a parameter.
    """
    st, d, scale, param_axes, out = job.st, job.d, job.scale, job.param_axes, job.out
    n, dtype = st.count, d.dtype
    d2, z2, out2 = d.reshape(-1, n), st.z.reshape(-1, n), out.reshape(-1, n)
    rows = d2.shape[0]
    lead = plan.lead
    k = (1.0 / st.deviation).reshape(rows, 1)
    s = _per_row(scale, d.shape, lead)
    if s is not None:
        k = k * s
    sum_d = (d2 @ np.ones(n, dtype)).reshape(rows, 1)
    sum_dz = np.empty((rows, 1), dtype)
    c = None if st.mean is None else k * sum_d * (-1.0 / n)
    a = np.empty((rows, 1), dtype)
    per = _slabs(d2.shape)[0].stop
    spare = _empty_like(d2[:per])
    for i in range(0, rows, per):
        j = min(i + per, rows)
        dc, zc, oc, ac = d2[i:j], z2[i:j], out2[i:j], a[i:j]
        np.vecdot(dc, zc, out=sum_dz[i:j, 0])
        np.multiply(sum_dz[i:j], -1.0 / n, out=ac)
        ac *= k[i:j]
        np.multiply(zc, ac, out=oc)
        oc += np.multiply(dc, k[i:j], out=spare[: j - i])
        if c is not None:
            oc += c[i:j]
    if param_axes is None:
        return None, None
    shared = tuple(i for i in param_axes if i < lead)  # the trailing axes are summed already

    def gathered(total: np.ndarray) -> np.ndarray:
        by_row = total.reshape(d.shape[:lead])
        return np.add.reduce(by_row, axis=shared, keepdims=True).reshape(_kept(d.shape, param_axes))

    return gathered(sum_dz), gathered(sum_d)


def _same_tile(tile: np.ndarray, i: int, j: int) -> np.ndarray:
    """A slab's share of a tile that is the same for every slab: its first j - i rows."""
    return tile[: j - i]


def _rows_of(column: np.ndarray, i: int, j: int) -> np.ndarray:
    """A slab's share of a column with one value a row: rows i to j."""
    return column[i:j]


def _backward_down_slabs(job: _Back) -> Sums:
    """Batch norm on a large block: the scale is constant down the statistic's axes, so the sums
    are of the raw slope, and the answer is ``d * k + z * a + c`` slab by slab."""
    st, d, scale, param_axes, out = job.st, job.d, job.scale, job.param_axes, job.out
    axes, n, z = st.axes, st.count, st.z
    cuts = _slabs(d.shape)
    sum_dz = np.empty(st.deviation.shape, d.dtype)
    for i, cut in enumerate(cuts):
        _gather(sum_dz, _sum_products(d[cut], z[cut], axes), cut, i == 0)
    sum_d = _down_sum(d, axes)
    # passed = k * (d - sum_d / n - z * sum_dz / n), with k = scale / deviation
    k = 1.0 / st.deviation if scale is None else scale / st.deviation
    a = k * sum_dz * (-1.0 / n)
    c = k * sum_d * (-1.0 / n) if st.mean is not None else None
    slab = d[cuts[0]]
    spare = _empty_like(slab)
    a_t, k_t, c_t = _tiled(a, slab), _tiled(k, slab), _tiled_or_none(c, slab)
    for cut in cuts:
        oc = out[cut]
        rows = oc.shape[0]
        np.multiply(z[cut], a_t[:rows], out=oc)
        oc += np.multiply(d[cut], k_t[:rows], out=spare[:rows])
        if c_t is not None:
            oc += c_t[:rows]
    if param_axes is None:
        return None, None
    rest = tuple(i for i in param_axes if i not in axes)  # the statistic's axes are summed already
    return (
        np.add.reduce(sum_dz, axis=rest, keepdims=True),
        np.add.reduce(sum_d, axis=rest, keepdims=True),
    )


# -- predicting: statistics handed in ---------------------------------------------------------


def standardise_by_affine(
    x: np.ndarray,
    mean: np.ndarray | None,
    deviation: np.ndarray,
    axes: tuple[int, ...],
    scale: np.ndarray | None = None,
    shift: np.ndarray | None = None,
) -> tuple[Standardised, np.ndarray]:
    """`normcore.standardise.standardise_by` followed by ``z * scale + shift``.

    The same operations in the same order as the readable form (subtract, divide, multiply, add),
    so the same bits, but into fresh owned blocks, a slab at a time when the block is larger than
    `CHUNK`, and with the ufunc buffer cut to the inner run. `mean`, `deviation`, `scale` and
    `shift` broadcast against `x` (running figures, per feature); shift goes with scale.
    """
    axes = tuple(a % x.ndim for a in axes)

    def lined_up(p: np.ndarray) -> np.ndarray:
        """p with x's rank, so that a slab's share of it is a slice of its first axis."""
        return p.reshape((1,) * (x.ndim - p.ndim) + p.shape)

    s = lined_up(deviation)
    m, a, b = (None if p is None else lined_up(p) for p in (mean, scale, shift))
    z = _empty_like(x)
    out = z if a is None else _empty_like(x)
    kept = [p.shape for p in (m, s, a, b) if p is not None]
    with _row_buffers(_inner_run(x.shape, kept), x.dtype):
        if x.ndim == 0 or x.size <= CHUNK:
            _by_into(x, m, s, a, b, z, out)
        else:
            for cut in _slabs(x.shape):
                _by_into(
                    x[cut],
                    _part(m, cut),
                    _part(s, cut),
                    _part(a, cut),
                    _part(b, cut),
                    z[cut],
                    out[cut],
                )
    n = _count(x.shape, axes)
    st = Standardised(
        z=z, mean=mean, variance=None, deviation=deviation, axes=axes, count=n, from_block=False
    )
    return st, out


def _by_into(
    x: np.ndarray,
    mean: np.ndarray | None,
    deviation: np.ndarray,
    scale: np.ndarray | None,
    shift: np.ndarray | None,
    z: np.ndarray,
    out: np.ndarray,
) -> None:
    """z = (x - mean) / deviation and out = z * scale + shift, written in place."""
    if mean is None:
        np.divide(x, deviation, out=z)
    else:
        np.subtract(x, mean, out=z)
        np.divide(z, deviation, out=z)
    if scale is not None:
        np.multiply(z, scale, out=out)
        if shift is not None:
            out += shift


# -- the plain pair, for the benchmark and the tests ------------------------------------------


def standardise_fast(
    x: np.ndarray, axes: tuple[int, ...], epsilon: float, centre: bool = True
) -> Standardised:
    """`normcore.standardise.standardise`, computed as the layers compute it."""
    return standardise_affine(x, axes, epsilon, centre)[0]


def standardise_backward_fast(st: Standardised, d: np.ndarray) -> np.ndarray:
    """`normcore.standardise.standardise_backward`, computed as the layers compute it."""
    return standardise_affine_backward(st, d)[0]
