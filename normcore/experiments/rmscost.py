"""What RMS normalisation saves over layer normalisation: the arithmetic of one forward and
backward pass over a matrix of token activations, written out and timed.

Per token of n features, layer normalisation's forward pass makes two reductions over the
features (the mean, then the mean square of the departures from it) and one extra pass to subtract
the mean; its backward pass two reductions (the mean of the upstream gradient and the mean of its
product with the output). RMS normalisation makes one reduction forward (the mean square) and one
backward, and has no mean to subtract or carry. `REDUCTIONS` counts them; `saving` times both
passes, written out in numpy exactly as normcore's layers define them (no scale, no shift; the
tests hold them against `normcore.LayerNorm` and `normcore.RMSNorm`).

A time is a fact about the computer that measured it: the chapter prints the saving of the
machine that built the page, and the claims suite asserts only its sign.
"""

from __future__ import annotations

import time

import numpy as np

from ..errors import SettingError

EPS = 1e-5
#: reductions over the features per token, (forward, backward)
REDUCTIONS = {"layer": (2, 2), "rms": (1, 1)}
#: the claims suite asserts only that the median saving over its trials passes this share
CLAIMED_SAVING = 0.1
#: the chapter's timed block is PAGE_ROWS by PAGE_ROWS (smaller than `saving`'s default, which
#: the claims suite times, to keep the page's Run All short)
PAGE_ROWS = 256


def layer_pass(x: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Layer normalisation over the last axis, forward and backward: (output, input gradient)
    for upstream gradient `d` (same shape as `x`)."""
    centred = x - x.mean(axis=-1, keepdims=True)
    inv = 1.0 / np.sqrt((centred * centred).mean(axis=-1, keepdims=True) + EPS)
    y = centred * inv
    dx = inv * (d - d.mean(axis=-1, keepdims=True) - y * (d * y).mean(axis=-1, keepdims=True))
    return y, dx


def rms_pass(x: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """RMS normalisation over the last axis, forward and backward: (output, input gradient)."""
    inv = 1.0 / np.sqrt((x * x).mean(axis=-1, keepdims=True) + EPS)
    y = x * inv
    dx = inv * (d - y * (d * y).mean(axis=-1, keepdims=True))
    return y, dx


def _best(kernel, x: np.ndarray, d: np.ndarray, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        kernel(x, d)
        best = min(best, time.perf_counter() - start)
    return best


def saving(
    rows: int = 512, features: int = 512, trials: int = 5, repeats: int = 3, seed: int = 0
) -> np.ndarray:
    """(trials,) the share of layer normalisation's time that RMS normalisation saves,
    1 - t_rms / t_layer, each trial timing both kernels (the shortest of `repeats` runs each) in
    turn on the same (rows, features) input drawn from ``default_rng(seed)``."""
    for name, v in (
        ("rows", rows),
        ("features", features),
        ("trials", trials),
        ("repeats", repeats),
    ):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise SettingError(f"{name}: expected a whole number >= 1, got {v!r}")
    rng = np.random.default_rng(seed)
    x, d = rng.normal(size=(rows, features)), rng.normal(size=(rows, features))
    out = np.empty(trials)
    for t in range(trials):
        layer = _best(layer_pass, x, d, repeats)
        rms = _best(rms_pass, x, d, repeats)
        out[t] = 1.0 - rms / layer
    return out


# -- why frameworks upcast RMS norm under bf16 ---------------------------------------------------
def to_bf16(x: np.ndarray) -> np.ndarray:
    """`x` rounded to bfloat16 (8 significant bits, float32's exponent), round to nearest even,
    returned as float32: the top 16 bits of each float32."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return rounded.astype(np.uint32).view(np.float32)


def bf16_mean_square(x: np.ndarray) -> float:
    """The mean square of the vector `x` with every value, product and running sum kept in
    bfloat16, the squares added one by one (the naive accumulation a kernel without an upcast
    would make)."""
    v = to_bf16(np.asarray(x, dtype=np.float32))
    squares = to_bf16(v * v)
    total = np.float32(0.0)
    for s in squares:
        total = to_bf16(np.float32(total + s))
    return float(to_bf16(np.float32(total / np.float32(len(v)))))


#: the token width of the bf16 emulation (a width of current language models)
BF16_FEATURES = 4096


def upcast_error(features: int = BF16_FEATURES, seed: int = 0) -> tuple[float, float]:
    """(relative error of the bf16 mean square, relative error with the values upcast to float32
    before squaring and summing), for one token of `features` standard normal values drawn from
    ``default_rng(seed)`` and rounded to bf16 (the activations as a bf16 model holds them)."""
    x = to_bf16(np.random.default_rng(seed).normal(size=features).astype(np.float32))
    exact = float(np.mean(x.astype(np.float64) ** 2))
    upcast = float(np.mean(x.astype(np.float32) ** 2, dtype=np.float32))
    return abs(bf16_mean_square(x) - exact) / exact, abs(upcast - exact) / exact
