"""Covariate-shift experiments (chapter 1) and the running statistics' lag (chapter 2).

Expected figures come from seed 000's printed numbers, from hand derivations written beside them,
or from a plain-numpy recomputation that shares no code with normcore's layers.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from js.node import run  # tests/js/node.py: the bundle under node, as the page runs it

import normcore as nc
from normcore.experiments import network
from normcore.experiments import shift as sh
from normcore.worked import FOUR_ROWS

pytestmark = pytest.mark.numeric  # figures from float arithmetic: make test-arith reruns it

EPS = 1e-5
WORKED = FOUR_ROWS


# ------------------------------------------------------------------------------ the deep stack


def test_uniform_dense_stays_inside_pytorch_bound() -> None:
    layer = sh.uniform_dense(16, 16, np.random.default_rng(5))
    bound = 1.0 / 4.0  # 1 / sqrt(16)
    assert np.all(np.abs(layer.weights) <= bound)
    assert np.all(np.abs(layer.bias) <= bound)
    # a uniform draw on ±0.25 reaches beyond ±0.2 somewhere among 256 weights
    assert np.max(np.abs(layer.weights)) > 0.2
    assert np.any(layer.bias != 0.0)


def _numpy_stack(normalised: bool, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """The same stack written out in numpy: draw order input, then (weights, bias) per layer."""
    rng = np.random.default_rng(seed)
    h = rng.standard_normal((64, 16))
    params = []
    for _ in range(10):
        w = rng.uniform(-0.25, 0.25, size=(16, 16))
        b = rng.uniform(-0.25, 0.25, size=16)
        params.append((w, b))
    means, devs = [h.mean()], [h.std()]
    for w, b in params:
        h = h @ w + b
        if normalised:
            h = (h - h.mean(axis=0)) / np.sqrt(h.var(axis=0) + EPS)
        h = np.maximum(h, 0.0)
        means.append(h.mean())
        devs.append(h.std())
    return np.array(means), np.array(devs)


@pytest.mark.parametrize("normalised", [False, True])
def test_deep_stack_matches_a_numpy_recomputation(normalised: bool) -> None:
    drift = sh.deep_network(normalised)
    mean, dev = _numpy_stack(normalised)
    assert drift.depth == 10
    np.testing.assert_allclose(drift.mean, mean, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(drift.deviation, dev, rtol=1e-12, atol=1e-14)


def test_plain_stack_shrinks_as_seed_003_reports() -> None:
    # Seed 003: input std 1.028, about a tenth of it by layer 3, near 0.08 at the end.
    drift = sh.deep_network(False)
    assert drift.deviation[3] < 0.2 * drift.deviation[0]
    assert drift.deviation[-1] < 0.2 * drift.deviation[0]


def test_normalised_stack_mean_is_half_the_scores_mean_magnitude() -> None:
    # Each standardised column has mean 0, so relu(z) = (z + |z|) / 2 averages to mean|z| / 2:
    # the block's mean after the ReLU is set by the columns' shape, which the layer does not fix.
    drift = sh.deep_network(True)
    np.testing.assert_allclose(drift.mean[1:], drift.score_magnitude / 2, rtol=1e-12, atol=1e-15)
    assert np.all(drift.score_magnitude <= 1.0)  # mean |z| <= sqrt(mean z^2) = sqrt(v / (v + eps))
    # the stored table of seed 3: every layer's mean below the normal figure 1/sqrt(2 pi)
    assert np.all(drift.mean[1:] < 1 / np.sqrt(2 * np.pi))


def test_stacked_deep_stacks_match_single_ones() -> None:
    for kwargs in ({}, {"init": "he"}, {"bias": False}):
        many = sh.deep_networks(True, [3, 8], **kwargs)
        for seed, drift in zip([3, 8], many, strict=True):
            alone = sh.deep_network(True, seed=seed, **kwargs)
            np.testing.assert_allclose(drift.deviation, alone.deviation, rtol=1e-12, atol=0)
            np.testing.assert_allclose(drift.mean, alone.mean, rtol=1e-12, atol=0)


def test_he_stack_is_the_same_draws_stretched_without_biases() -> None:
    # He-uniform bounds: sqrt(6 / fan_in) = sqrt(6) / sqrt(fan_in); the bias-free He stack is
    # the bias-free default stack with every weight times sqrt(6): positively homogeneous, so
    # layer k's block is sqrt(6)^k times larger.
    he = sh.deep_network(False, init="he")
    free = sh.deep_network(False, bias=False)
    k = np.arange(11)
    np.testing.assert_allclose(he.deviation, free.deviation * np.sqrt(6.0) ** k, rtol=1e-10)
    assert he.bias is False and free.bias is False and sh.deep_network(False).bias is True


def test_bias_free_stack_passes_a_factor_of_ten_exactly() -> None:
    ten = sh.deep_network(False, bias=False, input_scale=10.0)
    one = sh.deep_network(False, bias=False)
    np.testing.assert_allclose(ten.deviation, 10.0 * one.deviation, rtol=1e-12)
    plain = sh.deep_network(False).deviation
    with_bias = sh.deep_network(False, input_scale=10.0).deviation / plain
    assert abs(with_bias[1] - 10.0) > 0.5


def test_mean_square_factor_of_the_default_stack_without_biases() -> None:
    # fan_in Var(w) = 16 (1/4)^2 / 3 = 1/3, and the ReLU halves: about 1/6 a layer (seed 3)
    free = sh.deep_network(False, bias=False)
    assert 1 / 9 < float(np.exp(np.mean(np.log(free.factors)))) < 2 / 9


def test_unknown_init_is_refused() -> None:
    with pytest.raises(nc.NormcoreError, match="init"):
        sh.deep_network(False, init="xavier")


def test_skewness_and_correlations_against_hand_values() -> None:
    block = np.array([[0.0, 1.0, 5.0], [0.0, 2.0, 4.0], [3.0, 3.0, 3.0], [0.0, 4.0, 2.0]])
    skew = sh.skewness(block)
    # column 1: 0, 0, 3, 0 -> mean 0.75, centred -0.75 x3, 2.25; m2 = 1.6875, m3 = 2.53125
    assert skew[0] == pytest.approx(2.53125 / 1.6875**1.5)
    assert skew[1] == pytest.approx(0.0) and skew[2] == pytest.approx(0.0)
    corr = sh.correlations(block)
    assert corr[1, 2] == pytest.approx(-1.0) and corr[1, 1] == pytest.approx(1.0)
    np.testing.assert_allclose(corr, np.corrcoef(block.T), atol=1e-12)
    constant = np.column_stack([np.ones(4), block[:, 1]])
    assert np.isnan(sh.skewness(constant)[0]) and np.isnan(sh.correlations(constant)[0, 1])


# ------------------------------------------------------------------------ the crowd network


def _fake(mean: np.ndarray, shift: np.ndarray | None = None) -> sh.CrowdShift:
    return sh.CrowdShift(
        variant="none",
        seed=0,
        mean=mean,
        deviation=np.ones_like(mean),
        shift=shift,
        loss=np.zeros(mean.shape[0]),
    )


def test_shift_figures_on_a_hand_made_record() -> None:
    # unit 1: 0 -> 0.5 -> 0.2 (travel 0.2, biggest move 0.5); unit 2: 1 -> 0.9 -> 0.3 (travel
    # -0.7, biggest move -0.6 at epoch 2)
    record = _fake(np.array([[0.0, 1.0], [0.5, 0.9], [0.2, 0.3]]))
    assert record.largest_shift == pytest.approx(0.7)
    assert record.shift_unit == 1
    assert record.largest_move == pytest.approx(0.6)
    assert record.largest_move_at == (2, 1)
    assert record.shift_gap is None
    with_shift = _fake(np.zeros((2, 2)), shift=np.array([[0.0, 0.0], [0.0, 0.25]]))
    assert with_shift.shift_gap == pytest.approx(0.25)
    assert record.largest_shift_to(2) == pytest.approx(0.5)  # unit 1: 0 -> 0.5
    # moves: unit 1 +0.5 then -0.3 (a reversal), unit 2 -0.1 then -0.6 (none)
    assert record.reversals == pytest.approx(0.5)


def test_first_epoch_of_the_plain_network_reads_relu_of_the_hidden_layer() -> None:
    record = sh.crowd_shift("none", seed=0, epochs=3)
    net = network.build("none", [0])
    x, _ = sh.crowd_features()
    hidden = np.maximum(x @ net.hidden.weights[0] + net.hidden.bias[0], 0.0)
    np.testing.assert_allclose(record.mean[0], hidden.mean(axis=0), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(record.deviation[0], hidden.std(axis=0), rtol=1e-12, atol=1e-15)


def test_crowd_block_is_in_standard_units() -> None:
    x, y = sh.crowd_features()
    assert x.shape == (25, 2) and y.shape == (25,)
    np.testing.assert_allclose(x.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(x.std(axis=0), 1.0, rtol=1e-12)


def test_under_the_batch_layer_the_read_mean_is_the_shift() -> None:
    # Seed 000: equal to 1.8e-15 at every epoch. The standardised block has column mean zero, so
    # the block read after scale and shift has column mean = shift, up to rounding.
    record = sh.crowd_shift("batch", seed=0)
    assert record.epochs == 400
    assert record.shift_gap < 1e-13
    np.testing.assert_allclose(record.shift[0], 0.0)  # a fresh layer's shift
    assert np.all(record.deviation[0] <= 1.0)  # sqrt(v / (v + eps)) times a scale of 1


def test_under_the_batch_layer_the_read_deviation_is_the_scale() -> None:
    record = sh.crowd_shift("batch", seed=0, epochs=50)
    assert record.scale_gap < 1e-13
    assert np.all(record.scale[0] == 1.0) and record.rate == sh.DRIFT_RATE
    # a positive scale and a shift leave each column's skewness and correlations alone: the
    # read block's are those of the ReLU block the layer standardised
    net = network.build("batch", [0])
    x, _ = sh.crowd_features()
    relu = np.maximum(x @ net.hidden.weights[0] + net.hidden.bias[0], 0.0)
    np.testing.assert_allclose(record.skewness[0], sh.skewness(relu), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(record.correlation[0], sh.correlations(relu), rtol=1e-9, atol=1e-12)


def test_travels_on_a_hand_made_record() -> None:
    # three rows, three units, three epochs. Epoch 1: (0, 1, 2) and (2, 1, 0), symmetric
    # (skewness 0) and opposite (correlation -1), and a unit that is off (constant: NaN, left
    # out). Last epoch: (0, 0, 1) has skewness 1/sqrt(2) and correlation sqrt(3)/2 with (0, 1, 2).
    up, down, off, late = [0.0, 1, 2], [2.0, 1, 0], [0.0, 0, 0], [0.0, 0, 1]
    read = np.array([np.column_stack(e) for e in ([up, down, off], [up, up, up], [late, up, late])])
    mean = np.array([[0.0, 1.0, 0], [0.5, 0.9, 0], [0.2, 0.3, 0]])
    record = sh.CrowdShift(
        variant="none",
        seed=0,
        mean=mean,
        deviation=np.array([[1.0, 2.0, 0], [1, 2, 0], [1.5, 1, 0]]),
        shift=None,
        loss=np.zeros(3),
        read=read,
    )
    want = {"mean": 0.7, "deviation": 1.0, "skewness": 0.5**0.5, "correlation": 1 + 3**0.5 / 2}
    assert record.travels() == pytest.approx(want, rel=1e-12)  # from the two ends alone
    assert np.isnan(record.skewness[0, 2]) and np.isnan(record.correlation[0, 0, 2])
    np.testing.assert_allclose(record.skewness[-1], [0.5**0.5, 0, 0.5**0.5], atol=1e-15)
    assert record.travels() == pytest.approx(want, rel=1e-12)  # from the whole record
    bare = sh.CrowdShift("none", 0, mean, mean, None, np.zeros(3))
    assert bare.skewness is None and bare.correlation is None


def test_the_shape_travels_need_only_the_ends() -> None:
    # the travels computed from the first and last epochs alone are the whole record's, bit for
    # bit (each column's moments run over the rows only)
    alone = sh.crowd_shifts("batch", [0, 1], epochs=40)
    for record in alone:
        ends = record.travels()
        assert record.skewness.shape == (40, 16) and record.correlation.shape == (40, 16, 16)
        assert record.travels() == ends
        whole = sh.skewness(record.read)
        assert np.array_equal(whole[[0, -1]], sh.skewness(record.read[[0, -1]]), equal_nan=True)


def test_crowd_shifts_refuses_other_variants() -> None:
    with pytest.raises(nc.NormcoreError, match="variant"):
        sh.crowd_shifts("layer", [0], epochs=2)


def test_plain_record_has_no_shift_and_moves() -> None:
    record = sh.crowd_shift("none", seed=0)
    assert record.shift is None and record.shift_gap is None
    assert record.largest_shift > 0.1
    assert record.largest_move <= 2 * record.largest_shift + 1.0  # a sanity bound


def test_stacked_runs_match_single_runs() -> None:
    stacked = sh.crowd_shifts("batch", [0, 1], epochs=30)
    alone = sh.crowd_shift("batch", seed=1, epochs=30)
    np.testing.assert_allclose(stacked[1].mean, alone.mean, rtol=1e-12, atol=1e-15)
    assert stacked[1].seed == 1


# ------------------------------------------------------------------- the running statistics' lag


def test_one_zero_grad_step_on_the_worked_block() -> None:
    layer = sh.fold_in(nc.BatchNorm.create(2), WORKED)
    # Seed 000: 0.9 * 0 + 0.1 * 6 = 0.6; 0.9 * 1 + 0.1 * 9 = 1.8. Column 1 by hand: mean 8 and
    # variance 81 give 0.8 and 0.9 + 8.1 = 9.0.
    np.testing.assert_allclose(layer.running_mean, [0.8, 0.6], rtol=1e-15)
    np.testing.assert_allclose(layer.running_var, [9.0, 1.8], rtol=1e-15)
    np.testing.assert_array_equal(layer.scale, [1.0, 1.0])
    np.testing.assert_array_equal(layer.shift, [0.0, 0.0])
    # (7 - 0.6) / sqrt(1.8 + 0.00001) = 4.7702651 (seed 000)
    predicted = layer.forward(WORKED).output
    assert predicted[0, 1] == pytest.approx(4.7702651, abs=5e-8)


def test_a_look_moves_nothing() -> None:
    layer = nc.BatchNorm.create(2)
    layer.forward(WORKED, "train")
    np.testing.assert_array_equal(layer.running_mean, [0.0, 0.0])
    np.testing.assert_array_equal(layer.running_var, [1.0, 1.0])


def test_lag_figures_of_seed_000() -> None:
    # Seed 000: 5.7333 after one step, 1.0433 after ten, 0.0238 after forty-four; under 0.01 at
    # step 53, under 0.001 at step 75; 6.5e-05 after a hundred.
    lag = sh.running_lag(WORKED, steps=100)
    assert lag.after(1) == pytest.approx(5.7333, abs=5e-5)
    assert lag.after(10) == pytest.approx(1.0433, abs=5e-5)
    assert lag.after(44) == pytest.approx(0.0238, abs=5e-5)
    assert lag.first_under(0.01) == 53
    assert lag.first_under(0.001) == 75
    assert lag.after(100) == pytest.approx(6.5e-5, abs=5e-7)
    assert lag.first_under(0.0) is None


def test_after_one_step_the_gap_is_the_hand_worked_one() -> None:
    # Row 4, column 1: predicting (23 - 0.8) / sqrt(9 + eps), training (23 - 8) / sqrt(81 + eps)
    expected = 22.2 / np.sqrt(9 + EPS) - 15 / np.sqrt(81 + EPS)
    assert sh.running_lag(WORKED, steps=1).after(1) == pytest.approx(expected, rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    block=arrays(
        np.float64,
        st.tuples(st.integers(2, 6), st.integers(1, 3)),
        elements=st.floats(-50, 50, allow_nan=False),
    ),
    steps=st.integers(1, 30),
)
def test_running_figures_follow_the_closed_form(block: np.ndarray, steps: int) -> None:
    # k steps on the same batch: running mean (1 - 0.9^k) m, variance 0.9^k + (1 - 0.9^k) v.
    layer = nc.BatchNorm.create(block.shape[1])
    for _ in range(steps):
        layer = sh.fold_in(layer, block)
    kept = 0.9**steps
    m, v = block.mean(axis=0), block.var(axis=0)
    np.testing.assert_allclose(layer.running_mean, (1 - kept) * m, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(layer.running_var, kept + (1 - kept) * v, rtol=1e-9, atol=1e-9)


# ------------------------------------------------------------------------- the chapter-1 switch


def test_shift_chart_switches_between_the_two_networks() -> None:
    from normcore.widgets.shift_chart import shift_chart

    plain = sh.crowd_shift("none", seed=0, epochs=20)
    batch = sh.crowd_shift("batch", seed=0, epochs=20)
    chart = shift_chart(plain, batch)
    assert chart.selected == "none"
    assert chart.results["none"]["src"].startswith("data:image/png;base64,")
    assert chart.results["none"]["src"] != chart.results["batch"]["src"]
    assert chart.figures_for()["largest_shift"] == f"{plain.largest_shift:.4f}"
    assert chart.figures_for()["shift_gap"] is None
    chart.select("batch")
    assert chart.figures_for()["largest_shift"] == f"{batch.largest_shift:.4f}"
    assert chart.figures_for()["shift_gap"] == "1e-14"  # rounding level: shown as its bound
    assert chart.results["batch"]["figures"] == chart.figures_for()
    with pytest.raises(ValueError, match="variant"):
        chart.select("layer")
    assert chart.selected == "batch"


def _gapped(gap: float) -> sh.CrowdShift:
    """A two-epoch record under a batch layer whose block's mean is off its shift by `gap`."""
    shift = np.array([[0.0, 0.5], [0.25, -0.125]])
    mean = shift.copy()
    mean[1, 0] += gap
    return _fake(mean, shift=shift)


@pytest.mark.parametrize("gap", [4.6e-16, 5.1e-16, 3e-15, 1e-14])
def test_the_switch_shows_a_rounding_level_gap_as_its_bound(gap: float) -> None:
    # 4.6e-16 on one processor, 5.1e-16 on another: the readout must not tell them apart
    from normcore.book import bound
    from normcore.widgets.shift_chart import GAP_FLOOR, describe

    record = _gapped(gap)
    assert record.shift_gap == pytest.approx(gap, rel=1e-6)
    assert describe(record)["shift_gap"] == "1e-14" == f"{bound(gap, GAP_FLOOR):.0e}"
    assert describe(_fake(record.mean))["shift_gap"] is None  # no batch layer, no gap


def test_a_gap_above_the_floor_is_shown_as_the_next_power_of_ten() -> None:
    from normcore.widgets.shift_chart import describe

    assert describe(_gapped(2e-14))["shift_gap"] == "1e-13"
    assert describe(_gapped(1e-13))["shift_gap"] == "1e-13"


READOUT = """answer(input.map((figures) => m.readout(figures)));"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_page_shows_the_gap_as_python_describes_it() -> None:
    # the switch's readout, run under node from the page's bundle: the same text for a gap of
    # 4.6e-16 and one of 5.1e-16, and the figure Python stored, after "at most"
    from normcore.widgets.shift_chart import describe

    figures = [describe(_gapped(gap)) for gap in (4.6e-16, 5.1e-16)]
    plain = describe(_fake(np.array([[0.0, 1.0], [0.5, 0.9]])))
    shown = run(shutil.which("node"), "shift-chart.js", READOUT, [*figures, plain])
    assert shown[0] == shown[1]
    assert 'the layer\'s shift: at most <b data-key="shift_gap">1e-14</b>' in shown[0]
    assert "shift_gap" not in shown[2] and "at most" not in shown[2]
    for text, f in zip(shown, [*figures, plain], strict=True):
        for key, value in f.items():
            if value is not None:
                assert f'<b data-key="{key}">{value}</b>' in text


def test_the_switch_charts_fixed_frame_holds_every_label() -> None:
    # the switch's charts are laid out once (CHART_FRAME), not by a layout engine: for the
    # chapter's seeds and for tick labels as wide as "-0.050" (a synthetic record), no panel's
    # labels run into the other and nothing leaves the canvas
    from normcore.plots.ch01 import crowd_shift_figure

    e = np.linspace(0.0, 1.0, 50)[:, None]
    mean = np.hstack([-0.0375 + 0.15 * e, 0.05 * e])
    wide = sh.CrowdShift("batch", 0, mean, 1 + mean, mean, np.zeros(50))
    fig = crowd_shift_figure(wide)
    _laid_out(fig)
    assert "\u22120.050" in [t.get_text() for t in fig.axes[0].get_yticklabels()]
    for record in [*sh.crowd_shifts("none", range(2)), *sh.crowd_shifts("batch", range(2))]:
        _laid_out(crowd_shift_figure(record))


def _laid_out(fig) -> None:
    """No panel's tick labels, axis labels or legend run into another panel, and nothing leaves
    the canvas (a figure laid out by fixed frames, with no layout engine to move its panels). A
    left-set title may run on above the next panel, as it did under constrained layout."""
    import matplotlib.pyplot as plt
    from matplotlib.transforms import Bbox

    assert fig.get_layout_engine() is None
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    whole = fig.get_tightbbox(renderer)  # inches
    width, height = fig.get_size_inches()
    assert 0 <= whole.x0 and whole.x1 <= width and 0 <= whole.y0 and whole.y1 <= height, whole
    for a in fig.axes:
        parts = [a.xaxis.get_tightbbox(renderer), a.yaxis.get_tightbbox(renderer)]
        if a.get_legend() is not None:
            parts.append(a.get_legend().get_window_extent(renderer))
        reach = Bbox.union([p for p in parts if p is not None])
        for b in fig.axes:
            if b is not a:
                assert not reach.overlaps(b.get_window_extent(renderer)), (a, b)
    plt.close(fig)


@pytest.mark.parametrize("seed", [0, 1])
def test_chapter_one_figures_fixed_frames_hold_their_labels(seed: int) -> None:
    from normcore.plots.ch01 import crowd_shift_comparison, network_drift_figure

    stacks = [sh.deep_network(False, seed=seed + 3), sh.deep_network(True, seed=seed + 3)]
    _laid_out(network_drift_figure(*stacks, sh.deep_network(False, seed=seed + 3, init="he")))
    plain, batch = sh.crowd_shift("none", seed=seed), sh.crowd_shift("batch", seed=seed)
    _laid_out(crowd_shift_comparison(plain, batch))
