"""Fresh answer blocks for the layers, without fresh pages from the operating system.

Every forward and backward pass hands back new blocks (z, the output, the slope passed down).
For a large block, a new allocation costs more than the arithmetic: the memory comes back from
the operating system as fresh pages, each zeroed and mapped on first touch (measured here at
about three times the time to copy the block). So large blocks are recycled: a block of
``RECYCLE_FROM`` bytes or more is cut from a buffer held here, and a buffer is handed out again
only once nothing else refers to it, that is, once every array made from it has been dropped.
An answer never shares memory with anything still alive.

At most ``HOLD_AT_MOST`` bytes of free buffers are held for reuse; `release` lets them go.
"""

from __future__ import annotations

import math
import sys
import threading

import numpy as np

# 128 KiB, glibc's threshold for taking memory straight from the operating system: the slabs the
# kernels work in (64 Ki values) are recycled too; smaller blocks come from numpy's allocator
RECYCLE_FROM = 1 << 17
HOLD_AT_MOST = 1 << 28  # 256 MiB of buffers at most

_held: list[np.ndarray] = []  # flat byte buffers; arrays handed out refer to them as their base
_lock = threading.Lock()
_UNUSED = 3  # references to a buffer nobody uses: the list, the loop's name, getrefcount's own


def empty(shape: tuple[int, ...], dtype: np.dtype | type) -> np.ndarray:
    """An uninitialised C-ordered block, recycled when it is large (see the module docstring)."""
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes < RECYCLE_FROM:
        return np.empty(shape, dtype)
    with _lock:
        for buffer in _held:
            if buffer.nbytes == nbytes and sys.getrefcount(buffer) == _UNUSED:
                return buffer.view(dtype).reshape(shape)
        buffer = np.empty(nbytes, np.uint8)
        _held.append(buffer)
        _trim()
    return buffer.view(dtype).reshape(shape)


def empty_like(a: np.ndarray) -> np.ndarray:
    return empty(a.shape, a.dtype)


def _trim() -> None:
    """Drop the oldest unused buffers while more than HOLD_AT_MOST bytes are held."""
    total = sum(b.nbytes for b in _held)
    i = 0
    while i < len(_held) and total > HOLD_AT_MOST:
        buffer = _held[i]
        if sys.getrefcount(buffer) == _UNUSED:
            del _held[i]
            total -= buffer.nbytes
        else:  # in use: kept listed, and dropped on a later trim once it is free
            i += 1


def release() -> int:
    """Let go of every unused buffer; returns the bytes released."""
    released = 0
    with _lock:
        i = 0
        while i < len(_held):
            buffer = _held[i]
            if sys.getrefcount(buffer) == _UNUSED:
                del _held[i]
                released += buffer.nbytes
            else:
                i += 1
    return released


def held() -> int:
    """Bytes of buffers held now, in use or not."""
    with _lock:
        return sum(b.nbytes for b in _held)
