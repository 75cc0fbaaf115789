"""Checks for chapter 3's exercises. Answers are computed with normcore and never printed."""

from __future__ import annotations

from typing import Any

import numpy as np

from normcore.exercises import Verdict, verdict
from normcore.exercises._mistakes import judged
from normcore.experiments.routes import compare_gradients
from normcore.worked import four_rows

#: Exercise 1: the block and the upstream gradient.
X_ONE = np.array([[2.0], [4.0], [9.0]])
GRAD_ONE = np.array([[1.0], [0.0], [-1.0]])
#: Exercises 1 and 6: an upstream gradient that does not sum to zero, so that an answer missing
#: the route through the mean (the sum(d) term) is told apart from the right one.
GRAD_UNEVEN = np.array([[1.0], [0.0], [2.0]])

#: Exercise 2: a block whose upstream gradient is the same in every row of a column.
X_TWO = np.array([[3.0, -1.0], [5.0, 0.0], [10.0, 4.0]])
GRAD_TWO = np.array([[2.0, -0.5], [2.0, -0.5], [2.0, -0.5]])

#: Exercise 5: which cells does the naive block get backwards? (Upstream gradient: counting 1 to 8.)
X_THREE = np.array([[0.0, 3.0], [2.0, 9.0], [5.0, 1.0], [10.0, 4.0]])

#: The standardising epsilon every exercise here uses.
EPSILON = 1e-5


def _route_mistakes(x: np.ndarray, d: np.ndarray) -> list[tuple[np.ndarray, str]]:
    """The naive gradient and the collected line with one route missing, for (x, d), named."""
    n = x.shape[0]
    s = np.sqrt(x.var(axis=0, keepdims=True) + EPSILON)
    return [
        (d / s, "that is the naive d / s: it drops the routes through the mean and the variance"),
        (
            _collected(x, d, s, 0, n, mean_route=False),
            "the route through the mean is missing (the sum(d) term)",
        ),
        (
            _collected(x, d, s, 0, n, variance_route=False),
            "the route through the variance is missing (the z * sum(d z) term)",
        ),
        (
            _collected(x, d, np.sqrt(x.var(axis=0, ddof=1, keepdims=True) + EPSILON), 0, n),
            "that uses the unbiased variance (n - 1); the forward pass here is biased",
        ),
    ]


def check_grad_input(answer: Any) -> Verdict:
    """Exercise 1: the input gradient of X_ONE under GRAD_UNEVEN (a 3 x 1 array), four
    decimals. The naive gradient and a missing route are named (GRAD_UNEVEN does not sum to zero,
    so the route through the mean matters)."""
    return judged(
        answer,
        compare_gradients(X_ONE, GRAD_UNEVEN).true,
        lambda: _route_mistakes(X_ONE, GRAD_UNEVEN),
        tolerance=6e-5,
        mistake_tolerance=6e-5,
    )


def check_naive_sum(answer: Any) -> Verdict:
    """Exercise 1, second part: the naive gradient's column sum for the same input and upstream
    gradient."""
    return verdict(answer, float(compare_gradients(X_ONE, GRAD_ONE).naive_sums[0]))


def check_constant_grad(answer: Any) -> Verdict:
    """Exercise 2: the input gradient of X_TWO under GRAD_TWO (a 3 x 2 array). With a
    constant d the naive gradient and the line without its mean route agree (d / s); both named."""
    x, d = X_TWO, GRAD_TWO
    s = np.sqrt(x.var(axis=0, keepdims=True) + EPSILON)
    mistakes = [
        (
            d / s,
            "that is d / s: the naive gradient, which is also the collected line without the route "
            "through the mean; a gradient the same in every row lies along 1, which that route "
            "removes",
        ),
    ]
    return judged(
        answer, compare_gradients(x, d).true, mistakes, tolerance=1e-6, mistake_tolerance=1e-3
    )


def check_step_gap(answer: Any) -> Verdict:
    """The former exercise 3 (kept for old notebooks): the largest gap between the oracle with
    step 1e-3 and the collected gradient on the worked four under the counting gradient (10%)."""
    expected = compare_gradients(four_rows(), step=1e-3).true_gap
    if answer is None:
        return verdict(None, expected)
    try:
        given = float(answer)
    except (TypeError, ValueError):
        return Verdict("not yet: the answer should be a number")
    if not np.isfinite(given) or given <= 0:
        return Verdict("not yet: a gap is a positive number")
    off = abs(np.log10(given / expected))
    if off < np.log10(1.1):
        return Verdict("right")
    if off < 1.0:
        return Verdict("close: the right order of magnitude, but not within 10% of the gap")
    return Verdict("not yet: that is not the gap this step gives (within 10%)")


#: float32's and float64's unit roundoff.
ROUNDOFF32 = float(np.finfo(np.float32).eps / 2)
ROUNDOFF64 = float(np.finfo(np.float64).eps / 2)


def check_float32_floor(answer: Any) -> Verdict:
    """Exercise 3: by what factor the oracle's floor (its smallest gap) rises when the objective
    is computed in float32 instead of float64, by the balance of truncation (h^2) and rounding
    (u / h): the floor goes as u^(2/3). Within 10 % (a factor on a log scale)."""
    ratio = ROUNDOFF32 / ROUNDOFF64
    expected = ratio ** (2 / 3)
    if answer is None:
        return verdict(None, expected)
    try:
        given = float(answer)
    except (TypeError, ValueError):
        return Verdict("not yet: the answer should be a number")
    if not np.isfinite(given) or given <= 0:
        return Verdict("not yet: a factor is a positive number")
    mistakes = [
        (
            ratio,
            "that is how much larger float32's unit roundoff is; the floor is where the two "
            "errors balance, and it does not rise in proportion to u",
        ),
        (
            ratio ** (1 / 3),
            "that is how far the best step moves (h ~ u^(1/3)); the question asks "
            "for the gap at that step",
        ),
        (ratio**0.5, "that would balance h against u / h; truncation grows like h^2"),
    ]
    for value, hint in mistakes:
        if abs(np.log10(given / value)) < np.log10(1.1):
            return Verdict("not yet: " + hint)
    off = abs(np.log10(given / expected))
    if off < np.log10(1.1):
        return Verdict("right")
    if off < np.log10(3.0):
        return Verdict("close: the right size, but not within 10%; keep the exponent exact")
    return Verdict("not yet: that is not the factor (within 10%)")


def check_backwards_cells(answer: Any) -> Verdict:
    """Exercise 5: a (4, 2) array of booleans, True where the naive gradient d / s and the true
    input gradient of X_THREE under the counting gradient point opposite ways."""
    expected = compare_gradients(X_THREE).wrong_sign
    if answer is None:
        return verdict(None, 0)
    try:
        given = np.asarray(answer)
        given = given.astype(bool) if given.dtype != object else None
    except (TypeError, ValueError):
        given = None
    if given is None or given.shape != expected.shape:
        return Verdict(
            "not yet: the answer should be a 4 x 2 array of True and False, one per "
            "cell of the input"
        )
    if np.array_equal(given, expected):
        return Verdict("right")
    if np.array_equal(given, np.ones_like(expected)) or np.array_equal(given[:, 0], [1, 1, 1, 1]):
        return Verdict(
            "not yet: not a whole column is reversed; work out each cell's collected "
            "value and compare its sign with d's (d counts up from 1, so d / s is "
            "positive everywhere)"
        )
    if np.array_equal(given, ~expected):
        return Verdict("not yet: every cell is the other way round (True marks a reversed cell)")
    extra = int(np.sum(given & ~expected))
    missed = int(np.sum(~given & expected))
    return Verdict(
        f"not yet: {extra} marked cell(s) keep their sign and {missed} reversed "
        "cell(s) are unmarked; compare the sign of each collected entry with d's"
    )


def unbiased_grad_input(x: np.ndarray, d: np.ndarray, eps: float = EPSILON) -> np.ndarray:
    """The input gradient through a column standardised with the unbiased variance
    (divide by n - 1), epsilon under the root: the variance route's weight becomes n / (n - 1)."""
    n = x.shape[0]
    s = np.sqrt(x.var(axis=0, ddof=1) + eps)
    z = (x - x.mean(axis=0)) / s
    return (n * d - d.sum(axis=0) - n / (n - 1) * z * (d * z).sum(axis=0)) / (n * s)


def _unbiased_objective(x: np.ndarray, d: np.ndarray) -> float:
    s = np.sqrt(x.var(axis=0, ddof=1) + EPSILON)
    return float(np.sum(d * (x - x.mean(axis=0)) / s))


def check_unbiased(answer: Any) -> Verdict:
    """Exercise 6: the input gradient of X_ONE under GRAD_UNEVEN when the forward pass
    divides by n - 1 (a 3 x 1 array). The finite difference of that forward pass decides; the
    upstream gradient does not sum to zero, so n - 1 on the mean's route is caught too."""
    from normcore.oracle import finite_difference

    expected = finite_difference(lambda b: _unbiased_objective(b, GRAD_UNEVEN), X_ONE, 1e-4)
    if answer is None:
        return verdict(None, expected)
    result = verdict(answer, expected, tolerance=1e-4)
    if result.right or result.startswith("not yet: expected an answer of shape"):
        return result
    given = np.asarray(answer, dtype=np.float64).reshape(expected.shape)
    n = X_ONE.shape[0]
    s = np.sqrt(X_ONE.var(axis=0, ddof=1) + EPSILON)
    z = (X_ONE - X_ONE.mean(axis=0)) / s
    d = GRAD_UNEVEN
    kept_one_over_n = (n * d - d.sum(axis=0) - z * (d * z).sum(axis=0)) / (n * s)
    every_route = ((n - 1) * d - d.sum(axis=0) - z * (d * z).sum(axis=0)) / ((n - 1) * s)
    mistakes = {
        "you put n - 1 on every route; only the variance's divides by n - 1 (the mean still "
        "averages over n)": every_route,
        "you kept the biased line's 1/n on the variance route; with n - 1 in the forward pass "
        "ds/dx_k is z_k / (n - 1), so that route is weighted n / (n - 1)": kept_one_over_n,
        "that is the biased layer's input gradient; the forward pass now divides by n - 1, "
        "which changes s, z and the variance route": compare_gradients(X_ONE, GRAD_UNEVEN).true,
        "that is the naive d / s": d / s,
    }
    for said, block in mistakes.items():
        if np.allclose(given, block, atol=1e-4, rtol=1e-4):
            return Verdict("not yet: " + said)
    return result


def _standardised_sum(x: np.ndarray, grad_output: np.ndarray, eps: float) -> float:
    """sum(grad_output * z), z the input x standardised down its columns (biased variance)."""
    mean = x.mean(axis=0)
    divisor = np.sqrt(((x - mean) ** 2).mean(axis=0) + eps)
    return float(np.sum(grad_output * (x - mean) / divisor))


def check_backward_function(backward: Any) -> Verdict:
    """Exercise 7, "write it yourself" (the batch layer's own pass; kept for old notebooks): a
    function ``backward(x, d, eps)`` that returns the input
    gradient to a (rows, features) input `x` standardised down its columns, given the
    upstream gradient `d` at the standardised output. The finite-difference oracle judges it on the
    worked four and on three random inputs; the answer itself is never shown."""
    return _judged_backward(
        backward,
        seed=5,
        shapes=((3, 1), (5, 2), (6, 3)),
        offset=0.0,
        loss=_standardised_sum,
        mistakes=_typical_mistakes,
        otherwise="the oracle disagrees, and not in one of the usual ways (naive d / s, a "
        "missing route, the unbiased variance, the wrong axis, epsilon outside the root); check "
        "each sum's axis and the three terms",
    )


def _judged_backward(backward, *, seed, shapes, offset, loss, mistakes, otherwise) -> Verdict:
    """The finite-difference oracle's verdict on a reader's ``backward(x, d, eps)``: on the worked
    four and on random inputs `x` of the given shapes (times 3, plus `offset`), against the
    gradient of ``loss(x, d, eps)``; a wrong function is matched against the usual `mistakes`,
    and `otherwise` is what a verdict says when none matches."""
    from normcore.oracle import finite_difference

    if backward is None:
        return verdict(None, 0.0)
    if not callable(backward):
        return Verdict("not yet: the answer should be a function backward(x, d, eps)")
    rng = np.random.default_rng(seed)
    inputs = [four_rows()]
    inputs += [rng.normal(size=shape) * 3.0 + offset for shape in shapes]
    worst, scale = 0.0, 0.0
    for x in inputs:
        d = rng.normal(size=x.shape)
        try:
            given = np.asarray(backward(x.copy(), d.copy(), 1e-5), dtype=np.float64)
        except Exception as error:  # the reader's code: say what it raised, never crash
            return Verdict(f"not yet: your function raised {type(error).__name__}: {error}")
        if given.shape != x.shape:
            return Verdict(f"not yet: for an input x of shape {x.shape} it returned {given.shape}")
        oracle = finite_difference(lambda b, d=d: loss(b, d, 1e-5), x, 1e-6)
        worst = max(worst, float(np.max(np.abs(given - oracle))))
        scale = max(scale, float(np.max(np.abs(oracle))))
    if worst < 1e-6 * max(1.0, scale):
        return Verdict("right")  # it agrees with the oracle on every input
    x, d = inputs[-1], rng.normal(size=inputs[-1].shape)
    given = np.asarray(backward(x.copy(), d.copy(), 1e-5), dtype=np.float64)
    for said, wrong in mistakes(x, d, 1e-5).items():
        if np.allclose(given, wrong, rtol=1e-7, atol=1e-9):
            return Verdict("not yet: " + said)
    return Verdict("not yet: " + otherwise)


def _collected(
    x: np.ndarray,
    d: np.ndarray,
    s: np.ndarray,
    axis: int,
    n: int,
    mean_route=True,
    variance_route=True,
    weight: float = 1.0,
) -> np.ndarray:
    z = (x - x.mean(axis=axis, keepdims=True)) / s
    total = n * d
    if mean_route:
        total = total - d.sum(axis=axis, keepdims=True)
    if variance_route:
        total = total - weight * z * (d * z).sum(axis=axis, keepdims=True)
    return total / (n * s)


def _typical_mistakes(x: np.ndarray, d: np.ndarray, eps: float) -> dict[str, np.ndarray]:
    """What the usual wrong versions of the backward pass return for (x, d), by name."""
    n, m = x.shape
    s0 = np.sqrt(x.var(axis=0, keepdims=True) + eps)
    su = np.sqrt(x.var(axis=0, ddof=1, keepdims=True) + eps)
    s1 = np.sqrt(x.var(axis=1, keepdims=True) + eps)
    unbiased = "you used the unbiased variance (divided by n - 1); the forward pass here is biased"
    rows = "your sums run along the rows (axis=1); batch statistics run down the columns (axis=0)"
    outside = "epsilon sits outside the root (std + epsilon); it belongs under it, sqrt(v + eps)"
    return {
        "that is the naive d / s, which drops the routes through the mean and the variance": d / s0,
        "the route through the variance is missing (the z * sum(d * z) term)": _collected(
            x, d, s0, 0, n, variance_route=False
        ),
        "the route through the mean is missing (the sum(d) term)": _collected(
            x, d, s0, 0, n, mean_route=False
        ),
        unbiased: _collected(x, d, su, 0, n),
        rows: _collected(x, d, s1, 1, m),
        outside: _collected(x, d, x.std(axis=0, keepdims=True) + eps, 0, n),
    }


def _rms_sum(x: np.ndarray, grad_output: np.ndarray, eps: float) -> float:
    """sum(grad_output * y), y the input x divided by each row's root mean square (eps inside)."""
    r = np.sqrt(np.mean(x * x, axis=1, keepdims=True) + eps)
    return float(np.sum(grad_output * x / r))


def _rms_mistakes(x: np.ndarray, d: np.ndarray, eps: float) -> dict[str, np.ndarray]:
    """What the usual wrong versions of RMS norm's backward pass return for (x, d), by name."""
    m = x.shape[1]
    r = np.sqrt(np.mean(x * x, axis=1, keepdims=True) + eps)
    y = x / r
    rc = np.sqrt(np.mean(x * x, axis=0, keepdims=True) + eps)
    yc = x / rc
    centred = x - x.mean(axis=1, keepdims=True)
    s = np.sqrt(np.mean(centred * centred, axis=1, keepdims=True) + eps)
    z = centred / s
    return {
        "that is the naive d / r: the route through the root mean square is missing": d / r,
        "that is layer norm's pass (with a route through the mean); RMS norm does not centre": (
            m * d - d.sum(axis=1, keepdims=True) - z * (d * z).sum(axis=1, keepdims=True)
        )
        / (m * s),
        "your statistics run down the columns (axis=0); RMS norm's run along each row": (
            d - yc * (d * yc).mean(axis=0, keepdims=True)
        )
        / rc,
        "the route's sum needs dividing by the row's length m (r depends on the mean of x^2, not "
        "the sum)": (d - y * (d * y).sum(axis=1, keepdims=True)) / r,
    }


def check_rms_backward_function(backward: Any) -> Verdict:
    """Exercise 7, "write it yourself": a function ``backward(x, d, eps)`` for RMS norm along
    each row of a (rows, features) input `x`, y = x / sqrt(mean(x^2 over the row) + epsilon),
    given the upstream gradient `d` at y; it returns the input gradient. The finite-difference
    oracle judges it on four inputs; the usual mistakes are named, the answer never shown."""
    return _judged_backward(
        backward,
        seed=11,
        shapes=((3, 4), (5, 2), (2, 6)),
        offset=1.0,
        loss=_rms_sum,
        mistakes=_rms_mistakes,
        otherwise="the oracle disagrees, and not in one of the usual ways (naive d / r, layer "
        "norm's centring, the wrong axis, a sum where the mean belongs); derive dr/dx_k first",
    )
