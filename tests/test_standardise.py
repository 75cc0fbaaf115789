"""`normcore.standardise`: the one routine every normaliser runs, held to its definitions (biased
variance, epsilon under the root, the three routes of the backward pass) and to a finite-difference
oracle, with a property suite over shapes, axes and magnitudes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import normcore as nc
from normcore.standardise import standardise, standardise_backward, standardise_by

pytestmark = pytest.mark.numeric  # figures from float arithmetic: make test-arith reruns it


def test_the_statistics_are_the_biased_ones_with_epsilon_under_the_root() -> None:
    x = np.random.default_rng(0).normal(3.0, 2.0, size=(7, 4))
    s = standardise(x, (0,), 1e-3)
    np.testing.assert_allclose(s.mean[0], x.mean(axis=0), rtol=1e-14)
    np.testing.assert_allclose(s.variance[0], x.var(axis=0), rtol=1e-13)  # ddof=0: biased
    np.testing.assert_allclose(s.divisor[0], np.sqrt(x.var(axis=0) + 1e-3), rtol=1e-13)
    np.testing.assert_allclose(s.z, (x - x.mean(axis=0)) / np.sqrt(x.var(axis=0) + 1e-3))
    assert s.count == 7 and s.from_input and s.axes == (0,)


def test_without_centring_the_divisor_is_the_root_mean_square() -> None:
    x = np.random.default_rng(1).normal(size=(3, 5))
    s = standardise(x, (-1,), 1e-5, centre=False)
    assert s.mean is None and s.axes == (1,)
    np.testing.assert_allclose(s.divisor[:, 0], np.sqrt((x**2).mean(axis=1) + 1e-5))


def test_a_constant_column_standardises_to_zeros() -> None:
    s = standardise(np.full((4, 2), 7.0), (0,), 1e-5)
    np.testing.assert_array_equal(s.z, 0.0)


def test_handed_in_statistics_are_constants_in_the_backward_pass() -> None:
    x = np.random.default_rng(2).normal(size=(5, 3))
    mean, divisor = np.zeros((1, 3)), np.full((1, 3), 2.0)
    s = standardise_by(x, mean, divisor, (0,))
    assert not s.from_input
    d = np.random.default_rng(3).normal(size=(5, 3))
    np.testing.assert_array_equal(standardise_backward(s, d), d / 2.0)


def test_the_naive_backward_misses_the_routes_through_the_statistics() -> None:
    """A check that can fail: d / divisor is not the gradient (its columns do not sum to zero),
    while the routine's is, against the finite-difference oracle."""
    r = np.random.default_rng(4)
    x, d = r.normal(size=(6, 2)), r.normal(size=(6, 2))
    s = standardise(x, (0,), 1e-5)

    def loss(v: np.ndarray) -> float:
        return float(np.sum(standardise(v, (0,), 1e-5).z * d))

    oracle = nc.finite_difference(loss, x)
    right, naive = standardise_backward(s, d), nc.naive_backward(s, d)
    assert np.max(np.abs(right - oracle)) < 1e-6
    assert np.max(np.abs(naive - oracle)) > 1e-2
    np.testing.assert_allclose(right.sum(axis=0), 0.0, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    rows=st.integers(1, 6),
    features=st.integers(1, 4),
    size=st.floats(-6, 6),
    centre=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_the_backward_pass_matches_finite_differences(
    rows: int, features: int, size: float, centre: bool, seed: int
) -> None:
    """Over shapes, magnitudes from 1e-6 to 1e6 and both centrings, the input gradient matches
    the oracle (relative to the size of the upstream gradient over the divisor), and the routes
    leave what the statistics remove: a centred input gradient sums to zero along the
    statistic's axis."""
    r = np.random.default_rng(seed)
    x = 10.0**size * r.normal(size=(rows, features)) + r.normal()
    d = r.normal(size=(rows, features))
    s = standardise(x, (0,), 1e-5, centre)

    def loss(v: np.ndarray) -> float:
        return float(np.sum(standardise(v, (0,), 1e-5, centre).z * d))

    got = standardise_backward(s, d)
    oracle = nc.finite_difference(loss, x, step=1e-6 * max(np.abs(x).max(), 1e-3))
    scale = np.abs(d).max() / s.divisor.min()
    assert np.max(np.abs(got - oracle)) / scale < 1e-4
    if centre:
        np.testing.assert_allclose(got.sum(axis=0), 0.0, atol=1e-9 * scale * rows)
