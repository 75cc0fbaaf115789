"""Chapter 4's experiment functions (normcore.experiments.axes) and exercise checks.

Expected figures come from seed 000's printed worked rows, from seed 001's shape rule, or from
hand derivations written beside them.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import normcore as nc
from normcore.errors import SettingError, ShapeError
from normcore.exercises import ch04
from normcore.experiments import axes

pytestmark = pytest.mark.numeric  # figures from float arithmetic: make test-arith reruns it

EPS = 1e-5


def test_worked_row_layer_and_rms():
    out = nc.LayerNorm.create(2).forward(axes.WORKED_ROW).output
    assert np.allclose(out, [[-0.9999994, 0.9999994]], atol=5e-8)  # seed 000
    rms = axes.rms_rows(axes.WORKED_ROW)
    assert rms.root[0] == pytest.approx(5.000001, abs=5e-7)  # sqrt(25 + 1e-5), seed 000
    assert np.allclose(rms.output, [[0.2, 1.4]], atol=5e-5)


@settings(max_examples=40, deadline=None)
@given(
    hnp.arrays(
        np.float64,
        st.tuples(st.integers(1, 6), st.just(2)),
        elements=st.floats(-1e3, 1e3, allow_nan=False),
    )
)
def test_two_number_rows_are_plus_and_minus_one(rows):
    gaps = np.abs(rows[:, 0] - rows[:, 1])
    assume(np.all(gaps > 1.0))
    out = nc.LayerNorm.create(2).forward(rows).output
    # a = half the gap, deviation sqrt(a**2 + eps): |z| = a / sqrt(a**2 + eps) >= 1 - eps / (2 a**2)
    assert np.allclose(np.abs(out), 1.0, atol=EPS / (2 * 0.25))
    assert np.all(np.sign(out[:, 0]) == np.sign(rows[:, 0] - rows[:, 1]))


def test_two_number_rows_on_the_crowd():
    two = axes.two_number_rows(20)
    assert two.people.shape == (20, 2)
    assert two.distance_from_one < 1e-8
    assert two.largest_row_grad < 1e-9
    assert two.distinct_rows == 1  # every height (cm) exceeds every weight (kg)
    assert two.distinct_column_rows == 20
    assert np.allclose(two.down_columns.std(axis=0), 1.0, atol=1e-6)


def test_rms_keeps_proportions_and_rows_apart():
    r = axes.rms_rows()
    assert r.proportion_gap < 1e-12
    assert r.distinct_rows == 20
    # by hand for the first person: x / sqrt(mean(x**2) + eps)
    x = r.people[0]
    assert np.allclose(r.output[0], x / np.sqrt(np.mean(x**2) + EPS))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=2, max_size=4), st.integers(1, 3))
def test_trailing_shape_agrees_with_rows(shape, trailing):
    shape = tuple(shape)
    trailing = min(trailing, len(shape) - 1)
    normalized = shape[len(shape) - trailing :]
    assume(int(np.prod(normalized)) > 1)
    t = axes.trailing_shape(shape, normalized)
    assert t.statistics_shape == shape[: len(shape) - trailing]  # seed 001's rule
    assert t.row_gap < 1e-12


def test_trailing_shape_refuses_a_shape_that_does_not_end_the_input():
    with pytest.raises(ShapeError):
        axes.trailing_shape((2, 3, 4, 5), (3, 5))


@pytest.mark.parametrize(
    ("name", "count", "stats"),
    [  # image batch (N, C, H, W) = (2, 4, 3, 3), two groups of two channels
        ("batch", 2 * 3 * 3, (4,)),
        ("layer", 4 * 3 * 3, (2,)),
        ("rms", 4 * 3 * 3, (2,)),
        ("instance", 3 * 3, (2, 4)),
        ("group", 2 * 3 * 3, (2, 2)),
    ],
)
def test_image_axes_statistics_coverage_and_oracle(name, count, stats):
    x = axes.image_batch((2, 4, 3, 3))
    layer = axes.image_layer(name, x.shape, groups=2)
    mask = axes.coverage(layer, x.shape)
    assert mask.sum() == count
    assert np.array_equal(mask, axes.reach(layer, x))
    check = axes.image_check(name, x, groups=2)
    assert check.count == count and check.statistics_shape == stats
    assert check.true_gap < 1e-7
    if name != "rms":
        assert check.largest_sum < 1e-12
    else:
        assert check.largest_sum > 1e-3


def test_coverage_picture_by_hand():
    shape = (4, 6, 2, 2)
    cover = {n: axes.coverage(axes.image_layer(n, shape, 2), shape) for n in axes.IMAGE_AXES}
    expect = {name: np.zeros(shape, dtype=bool) for name in cover}
    expect["batch"][:, 0] = True
    expect["layer"][0] = True
    expect["instance"][0, 0] = True
    expect["group"][0, :3] = True
    for name in cover:
        assert np.array_equal(cover[name], expect[name]), name


def test_image_layer_refuses_what_it_cannot_do():
    with pytest.raises(SettingError):
        axes.image_layer("group", (4, 3))
    with pytest.raises(SettingError):
        axes.image_layer("sideways", (2, 4, 3, 3))
    with pytest.raises(SettingError):
        axes.image_layer("group", (2, 4, 3, 3), groups=3)
    with pytest.raises(ShapeError):
        axes.image_layer("batch", (2, 4, 3))


def test_adain_example_by_hand():
    a = axes.adain_example()
    # style channel 1: 10, 14, 10, 14 -> mean 12, variance 4; channel 2: -1, 1, 3, 5 -> mean 2,
    # variance 5
    assert np.allclose(a.style_mean, [12.0, 2.0])
    assert np.allclose(a.style_deviation, np.sqrt([4 + EPS, 5 + EPS]))
    assert np.allclose(a.output_mean, [12.0, 2.0])
    assert np.allclose(a.output_deviation, [2.0, np.sqrt(5)], atol=1e-5)
    # content channel 1: 1, 2, 3, 6 -> mean 3, variance 3.5; its 6 becomes 12 + 2 * 3 / sqrt(3.5)
    expected = 12 + np.sqrt(4 + EPS) * 3 / np.sqrt(3.5 + EPS)
    assert a.output[0, 0, 1, 1] == pytest.approx(expected)


def test_lrn_example_by_hand():
    lrn = axes.lrn_example()
    assert np.allclose(lrn.window_squares, [1 + 4, 1 + 4 + 9, 4 + 9 + 16, 9 + 16 + 25, 16 + 25])
    assert lrn.output[2] == pytest.approx(3 / (2 + 0.3 / 3 * 29) ** 0.75)
    assert np.allclose(lrn.output, lrn.activations / lrn.divisor)


def test_exercise_checks():
    row = np.array([2.0, 4.0, 9.0])  # mean 5, biased variance 26/3
    assert ch04.check_layer_row([(row - 5) / np.sqrt(26 / 3 + EPS)]) == "right"
    assert ch04.check_rms_row([row / np.sqrt(101 / 3 + EPS)]) == "right"  # mean square 101/3
    assert ch04.check_layer_row([row]).startswith("not yet")
    assert ch04.check_statistics_shape((2,)) == "right"  # seed 001: leading axes remain
    assert ch04.check_statistics_shape((2, 3)).startswith("not yet")
    assert ch04.check_group_count(3 * 5 * 5) == "right"  # 12 channels / 4 groups, 5 x 5 pixels
    assert ch04.check_group_count(74).startswith("not yet")


def test_exercise_checkers_name_the_chapter_4_mistakes():
    row = ch04.ROW
    right = nc.LayerNorm.create(3).forward(row).output
    centred = row - row.mean()
    assert ch04.check_layer_row(right.ravel()) == "right"  # a flat answer is accepted
    assert "without epsilon" in ch04.check_layer_row(centred / np.sqrt(row.var()))
    assert "unbiased" in ch04.check_layer_row(centred / np.sqrt(row.var(ddof=1) + 1e-5))
    assert "outside the root" in ch04.check_layer_row(centred / (row.std() + 1e-5))
    assert "RMS" in ch04.check_layer_row(nc.RMSNorm.create(3).forward(row).output)
    assert ch04.check_layer_row(right.round(4)).startswith("close")
    assert ch04.check_statistics_shape((2,)) == "right"
    assert ch04.check_statistics_shape((2, 1, 1, 1)) == "right"
    assert "normalized_shape itself" in ch04.check_statistics_shape((3, 4, 5))
    assert "(4, 5)" in ch04.check_statistics_shape((2, 3))
    assert ch04.check_statistics_shape(2).startswith("close")
    for wrong in [(3, 4, 5), (2, 3), (1,), (7,)]:
        assert "shape (1,)" not in ch04.check_statistics_shape(wrong)
    good = [[32 * 128, 512], [512, 32 * 128]]
    assert ch04.check_transformer_axes(good) == "right"
    assert "swapped" in ch04.check_transformer_axes(good[::-1])
    assert "B alone" in ch04.check_transformer_axes([[32, 512], [512, 32 * 128]])
    assert ch04.check_one_image(0.0) == "right"
    assert ch04.check_one_image(0.3).startswith("not yet")


def test_geometry_invariances_and_traps():
    g = axes.geometry()
    assert g.rms_radius_gap < 1e-6 and g.layer_sum < 1e-12
    assert np.allclose(g.layer, [[1.0, -1.0]], atol=1e-6)
    t = axes.invariance_table()
    assert t["batch"] == axes.BA_TABLE["batch"] and t["layer"] == axes.BA_TABLE["layer"]
    assert t["RMS"] == (True, False, False, True, False, True)
    assert axes.one_image_gap(axes.image_batch()) < 1e-12
    trap = axes.sequence_trap()
    assert trap.right_gap < 1e-12 < 0.5 < trap.wrong_gap
    names = [row[0] for row in axes.axes_table_rows()]
    assert names == list(axes.PYTORCH_LAYERS)
    with pytest.raises(SettingError):
        axes.axes_table_rows((2, 4, 3, 3), 2)  # N = G: the letters would be ambiguous


def test_rms_row_checker_names_the_mistakes():
    row = ch04.ROW
    right = nc.RMSNorm.create(3).forward(row).output
    square = np.mean(row**2)
    assert ch04.check_rms_row(right.ravel()) == "right"
    assert "without epsilon" in ch04.check_rms_row(row / np.sqrt(square))
    assert "outside the root" in ch04.check_rms_row(row / (np.sqrt(square) + 1e-5))
    assert "sum of squares" in ch04.check_rms_row(row / np.sqrt(np.sum(row**2) + 1e-5))
    assert "layer norm" in ch04.check_rms_row(nc.LayerNorm.create(3).forward(row).output)
    assert ch04.check_rms_row(right.round(4)).startswith("close")
