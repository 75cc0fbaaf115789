"""Chapter 7's experiment held against seed 004's printed table (the independent oracle)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from normcore.errors import NormcoreError
from normcore.exercises import PROMPT
from normcore.experiments import rates as R

# numeric: figures from float arithmetic (make test-arith reruns it); slow: long re-runs, left out
# of make check's inner loop (make test runs them)
pytestmark = [pytest.mark.numeric, pytest.mark.slow]

# Rows any correct implementation reproduces (measured on the seed's own program).
ROBUST = {(False, 0.05), (False, 5.0), (True, 0.05), (True, 5.0), (True, 20.0)}
# The seed printed 4 decimals: a printed figure stands for every value within half a unit of its
# last digit. Ours must lie in that interval; 1e-9 more allows for the last bits of our own sums
# (which differ between CPUs) and is far below anything the table could show.
HALF_LAST_DIGIT = 0.5e-4
OWN_ROUNDING = 1e-9


@pytest.fixture(scope="module")
def rows():
    return R.sweep()


# The printed table, with its provenance, kept apart from the package that is tested against it.
PRINTED = json.loads((Path(__file__).parent / "data" / "seed004_table.json").read_text("utf-8"))
PRINTED_ROWS = {(r["normalised"], r["rate"]): r for r in PRINTED["rows"]}


def test_the_package_quotes_the_printed_table():
    # the chapter quotes R.REFERENCE_TABLE; it must be the table in tests/data, cell for cell
    assert len(PRINTED_ROWS) == len(R.REFERENCE_TABLE) == 8
    for key, (loss, test, dead) in R.REFERENCE_TABLE.items():
        row = PRINTED_ROWS[key]
        assert (list(loss), list(test), list(dead)) == (
            row["loss"],
            row["test_accuracy"],
            row["dead_units"],
        )
    assert R.REFERENCE_THREE_WAYS == PRINTED["three_ways"]


def test_robust_rows_agree_with_the_printed_table_within_its_last_digit(rows):
    by = {(r.normalised, r.rate): r for r in rows}
    for key in ROBUST:
        printed = PRINTED_ROWS[key]
        for column, name in (("loss", "loss"), ("test", "test_accuracy")):
            for ours, seed in zip(by[key].column(column), printed[name], strict=True):
                assert abs(ours - seed) <= HALF_LAST_DIGIT + OWN_ROUNDING, (key, column)
        assert list(by[key].dead) == printed["dead_units"], key
    cells = [c for c in R.compare_with_reference(rows) if (c.normalised, c.rate) in ROBUST]
    assert len(cells) == 30 and all(c.status == "agrees" for c in cells)


def test_cells_are_refused_or_chaotic_only_where_the_chapter_says(rows):
    status = {(c.normalised, c.rate, c.column): c.status for c in R.compare_with_reference(rows)}
    for (normalised, rate, column), state in status.items():
        if not normalised and rate in (20.0, 60.0):
            assert state == "refused"
        elif (normalised, rate) in R.SENSITIVE and column != "dead":
            assert state == "chaotic"
        else:
            assert state == "agrees"


def test_the_chaotic_row_is_chaotic_and_its_stable_facts_hold(rows):
    """A one-ulp nudge of the starting weights moves the rate-60 normalised losses (so the
    chapter prints no digit of them), while the facts it does print hold for every version:
    one of the two runs above the loss-1 line, no dead unit. The rows the chapter prints
    survive the same nudge."""
    by = {(r.normalised, r.rate): r for r in rows}
    # the sweep trained the nudged runs of this row in its stack; train() hands the same ones out
    nudged = by[(True, 60.0)].nudged
    assert [(run.seed, run.rate) for run in nudged] == [
        (s, 60.0) for s in R.RUN_SEEDS for _ in "du"
    ]
    assert all(not r.nudged for r in rows if not r.sensitive)
    assert nudged[1] is R.train(R.RUN_SEEDS[0], 60.0, True, nudge=1)
    versions = {k: [R.train(seed, 60.0, True, nudge=k) for seed in R.RUN_SEEDS] for k in (-1, 0, 1)}
    for seed in range(2):
        assert len({round(versions[k][seed].loss, 4) for k in versions}) == 3
    for pair in versions.values():
        assert max(run.loss for run in pair) > 1.0  # the fact the chapter prints
        assert all(R.dead_units(run.net) == 0 for run in pair)
    for seed, built in zip(R.RUN_SEEDS, by[(True, 20.0)].runs, strict=True):
        moved = R.train(seed, 20.0, True, nudge=1)
        assert moved.loss != built.loss and round(moved.loss, 4) == round(built.loss, 4)


def test_stacked_replay_gives_each_run_its_own_bits():
    alone = R.train_in_order(R.RUN_SEEDS[1], 60.0, True, summation="compensated")
    stacked = R.train_in_order_many(
        [R.RUN_SEEDS[0], R.RUN_SEEDS[1]], [5.0, 60.0], True, summation="compensated"
    )[1]
    assert np.array_equal(alone.epoch_losses, stacked.epoch_losses)
    assert np.array_equal(alone.net.w1, stacked.net.w1)
    # one order of adding a run: each run still gets exactly its own bits
    adding = ["compensated", "sequential"]
    mixed = R.train_in_order_many(R.RUN_SEEDS, [60.0, 60.0], True, summation=adding)
    for seed, order, run in zip(R.RUN_SEEDS, adding, mixed, strict=True):
        own = R.train_in_order(seed, 60.0, True, summation=order)
        assert np.array_equal(own.epoch_losses, run.epoch_losses), order
        assert np.array_equal(own.net.mean, run.net.mean), order
    assert mixed[0].loss != mixed[1].loss  # the orders differ here, so a mix-up would show


def _net_arrays(net):
    return [
        np.asarray(layer_array)
        for layer_array in (
            net.hidden.weights,
            net.hidden.bias,
            net.output.weights,
            net.output.bias,
            *((net.norm.running_mean, net.norm.running_var) if net.norm is not None else ()),
        )
    ]


@pytest.mark.parametrize("normalised", [False, True])
def test_a_stack_trains_each_run_exactly_as_alone(normalised):
    """Each run of a stack, at its own rate (refused ones included), has the bits, the losses,
    the refusal and the final network it has when trained alone (not handed out from memory)."""
    from normcore.experiments.rates import trainer

    seeds, rates = list(R.RUN_SEEDS) * 4, [0.05, 0.05, 5.0, 5.0, 20.0, 20.0, 60.0, 60.0]
    nudges = [0, 1, 0, -1, 0, 0, 0, 2]
    stacked = trainer._train_stack(
        seeds, rates, normalised, nudges, R.EPOCHS, R.BATCH, R.EPSILON, R.CLIP
    )
    refusals = 0
    for seed, rate, nudge, run in zip(seeds, rates, nudges, stacked, strict=True):
        alone = trainer._train_stack(
            [seed], [rate], normalised, [nudge], R.EPOCHS, R.BATCH, R.EPSILON, R.CLIP
        )[0]
        assert (run.refused, run.refused_at) == (alone.refused, alone.refused_at), rate
        assert np.array_equal(run.epoch_losses, alone.epoch_losses), rate
        if run.refused is None:
            assert np.array_equal(run.unclipped_losses, alone.unclipped_losses), rate
        for a, b in zip(_net_arrays(run.net), _net_arrays(alone.net), strict=True):
            assert np.array_equal(a, b), rate
        refusals += run.refused is not None
    assert refusals == (0 if normalised else 4)  # the plain runs at 20 and 60 are refused


def test_a_stack_steps_each_run_at_its_own_rate():
    # one batch by hand: a stack of two runs at rates 0.5 and 3 against each alone
    data = R.subscribers()
    xb, yb = data.x_train[:20], data.y_train[:20]
    both = R.build_many(list(R.RUN_SEEDS), True)
    stepped, loss = R.train_step(both, np.stack([xb, xb]), np.stack([yb, yb]), [0.5, 3.0])
    for k, rate in enumerate((0.5, 3.0)):
        one, one_loss = R.train_step(both.member(k), xb, yb, rate)
        assert one_loss == loss[k]
        for a, b in zip(_net_arrays(stepped.member(k)), _net_arrays(one), strict=True):
            assert np.array_equal(a, b)


def test_trained_runs_are_shared_not_retrained():
    first = R.train(R.RUN_SEEDS[0], 0.05, True)
    assert R.train(R.RUN_SEEDS[0], 0.05, True) is first
    assert R.train_many([R.RUN_SEEDS[0]], [0.05], True)[0] is first
    assert R.train(R.RUN_SEEDS[0], 0.05, True, nudge=1) is not first
    assert not first.epoch_losses.flags.writeable  # shared, so nobody may change it


def test_extra_rates_ride_in_the_sweeps_stack(monkeypatch):
    """`extra_rates` trains further rates in the sweep's own stack, leaves them out of the rows,
    and a later bracket or `train` finds them trained (no stack of their own)."""
    from normcore.errors import SettingError
    from normcore.experiments.rates import trainer

    monkeypatch.setattr(trainer, "_TRAINED", {})
    stacks = []
    real = trainer._train_stack

    def counted(seeds, *args):
        stacks.append(list(seeds))
        return real(seeds, *args)

    monkeypatch.setattr(trainer, "_train_stack", counted)
    rows = R.sweep(rates=[0.05], normalised=[True], extra_rates={True: [2.5, 5.0]})
    assert [(r.normalised, r.rate) for r in rows] == [(True, 0.05)]
    assert stacks == [list(R.RUN_SEEDS) * 3]  # one stack: the swept rate and both extra rates
    bracket = R.stable_bracket([2.5, 5.0], normalised=True)
    again = R.train(R.RUN_SEEDS[1], 5.0, True)
    assert len(stacks) == 1  # nothing trained again
    assert again.loss == bracket.losses[1, 1] and again.rate == 5.0
    with pytest.raises(SettingError, match="extra_rates"):
        R.sweep(trainer="sequential", extra_rates={False: [10.0]})
    with pytest.raises(SettingError, match="extra_rates"):
        R.sweep(extra_rates={True: [-1.0]})


def test_the_two_orders_of_adding_differ_only_in_the_chaotic_row():
    seq = R.sweep(trainer="sequential")
    com = R.sweep(trainer="compensated")
    # chapter 11: "every other row of the table, loss, test accuracy and dead units, is the same"
    for a, b in zip(seq, com, strict=True):
        key = (a.normalised, a.rate)
        if key in R.SENSITIVE:
            assert [round(x, 4) for x in a.loss] != [round(y, 4) for y in b.loss], key
            continue
        for name in R.COLUMNS:
            assert [round(v, 4) for v in a.column(name)] == [round(v, 4) for v in b.column(name)], (
                key,
                name,
            )


def test_plain_high_rates_are_refused():
    for rate in (20.0, 60.0):
        run = R.train(R.RUN_SEEDS[0], rate, False)
        assert run.refused.startswith("MagnitudeError") and math.isnan(run.loss)


def test_three_ways_match_the_seed():
    got = R.three_ways(R.train(R.RUN_SEEDS[0], 0.05, True).net).summary()
    for key, value in PRINTED["three_ways"].items():
        assert abs(got[key] - value) <= HALF_LAST_DIGIT + OWN_ROUNDING, key


def test_replays_reproduce_the_plain_rows():
    for trainer in ("sequential", "compensated"):
        for key in [(False, 20.0), (False, 60.0)]:
            row = R.sweep(rates=[key[1]], trainer=trainer)[0]
            for c, name in enumerate(R.COLUMNS):
                assert [round(v, 4) for v in row.column(name)] == list(R.REFERENCE_TABLE[key][c])


def test_plain_60_loss_is_the_clip_times_the_share():
    share = float(R.subscribers().y_train.mean())
    assert round(share * -math.log(R.CLIP), 4) == R.REFERENCE_TABLE[(False, 60.0)][0][0]


def test_unclipped_loss_is_recorded_from_the_same_passes():
    run = R.train(R.RUN_SEEDS[0], 0.05, True)
    again = R.train(R.RUN_SEEDS[0], 0.05, True, clip=None)
    assert run.unclipped_loss == again.loss


def test_epsilon_moves_rate_60_but_not_rate_005():
    a = [
        round(R.train(s, 0.05, True, eps=e).loss, 4) for e in (1e-8, 1e-14) for s in R.RUN_SEEDS[:1]
    ]
    b = [round(R.train(s, 60.0, True, eps=e).loss, 4) for e in (1e-8, 1e-14) for s in R.RUN_SEEDS]
    assert a[0] == a[1]
    assert b[:2] != b[2:]


def test_largest_stable_rates(rows):
    assert R.largest_stable_rate(rows, False) == 5.0
    assert R.largest_stable_rate(rows, True) == 20.0


def test_predict_by_batch_puts_rows_back():
    net = R.build(R.RUN_SEEDS[0], True)
    x = R.subscribers().x_test[:40]
    order = np.arange(40)[::-1]
    a = R.predict(net, x, "batch", order=order)
    b = R.predict(net, x[order], "batch")
    assert np.array_equal(a[order], b)


@pytest.fixture(scope="module")
def explorer(rows):
    from normcore.widgets.rates import rate_explorer

    brackets = [
        R.stable_bracket([10.0, 12.5], normalised=False),
        R.stable_bracket([25.0, 30.0, 35.0], normalised=True),
    ]
    return rate_explorer(rows, brackets), brackets


def test_widget_opens_on_the_chapters_bracket_and_order_spread(rows, explorer):
    """At the chapter's loss limit of 1 and all 200 orders the widget shows the chapter's figures,
    computed here with the experiment's own functions."""
    w, (plain, norm) = explorer
    assert w.state == {"limit": "1", "run": 1, "orders": 200}
    f = w.figures_for()
    assert (f["plain_last"], f["plain_first"]) == (
        f"{plain.last_stable:g}",
        f"{plain.first_unstable:g}",
    )
    assert (f["normalised_last"], f["normalised_first"]) == (
        f"{norm.last_stable:g}",
        f"{norm.first_unstable:g}",
    )
    assert f["factor"] == pytest.approx(norm.last_stable / plain.last_stable, rel=1e-12)
    assert f["factor_low"] == pytest.approx(norm.last_stable / plain.first_unstable, rel=1e-12)
    data = R.subscribers()
    by = {(r.normalised, r.rate): r for r in rows}
    for run in (1, 2):
        w.choose(run=run)
        f = w.figures_for()
        net = by[(True, 0.05)].runs[run - 1].net
        spread = R.order_spread(net, data.x_test, data.y_test, orders=200, seed=run - 1)
        assert f["mean"] == pytest.approx(spread.mean, rel=1e-12)
        assert f["sd"] == pytest.approx(spread.sd, rel=1e-12)
        assert f["percentile"] == pytest.approx(spread.percentile_of_in_order, rel=1e-12)
        assert f["running"] == spread.running and f["in_order"] == spread.in_order
        order = R.sorted_orders(data.x_test, data.y_test)["label, ones last"]
        p = R.batch_probabilities(net, data.x_test, order[None])[0]
        assert f["sorted_last"] == R.accuracy(p, data.y_test)
    w.choose(run=1)


def test_widget_bracket_follows_the_loss_limit(explorer):
    w, _ = explorer
    fam = w.results["families"]
    for text in ("0.3", "1", "2.5", "100"):
        f = w.figures_for({**w.state, "limit": text})
        for family in ("plain", "normalised"):
            stable = [
                all(v is not None and v < float(text) for v in losses)
                for losses in fam[family]["losses"]
            ]
            assert f[f"{family}_stable"] == stable
            first_bad = stable.index(False) if False in stable else len(stable)
            want = fam[family]["rates"][first_bad - 1] if first_bad else None
            assert f[f"{family}_last"] == want
    # a larger limit never makes a rate unstable
    low, high = w.figures_for({**w.state, "limit": "0.5"}), w.figures_for({**w.state, "limit": "2"})
    assert all(h or not lo for lo, h in zip(low["plain_stable"], high["plain_stable"], strict=True))


@pytest.mark.parametrize("text", ["abc", "1e400", "nan", "", "0", "-1"])
def test_widget_refuses_a_limit_it_cannot_use(explorer, text):
    w, _ = explorer
    answer = w.figures_for({**w.state, "limit": text})
    assert answer["error"].startswith("Loss limit") and answer["error"].endswith(".")


def test_widget_refuses_choices_it_does_not_offer(explorer):
    from normcore.errors import SettingError

    w, _ = explorer
    before = dict(w.state)
    for bad in ({"run": 3}, {"orders": 7}, {"orders": 10**400}, {"run": True}, {"stride": 1}):
        with pytest.raises(SettingError):
            w.choose(**bad)
        assert w.state == before


def test_widget_kernel_answers_the_page_when_asked(explorer):
    from normcore.widgets.rates import RateExplorer

    w, _ = explorer
    fresh = RateExplorer(state=dict(w.state), results=w.results)
    assert fresh.kernel == {}  # nothing but the state is stored before a page asks
    fresh.request = "token"
    fresh.choose(orders=10)
    assert fresh.kernel["state"] == fresh.state
    assert fresh.kernel["figures"] == fresh.figures_for()


def test_exercise_checks_say_right_to_right_answers():
    from normcore.exercises import ch07

    share = float(R.subscribers().y_test.mean())
    assert ch07.check_clip_loss(share * -math.log(1e-12)) == "right"
    assert ch07.check_clip_loss(1.0) != "right"
    ten = R.train(R.RUN_SEEDS[0], 10.0, True).loss
    assert ch07.check_rate_ten(ten) == "right" and ch07.check_rate_ten(ten + 0.01) != "right"
    for check in (ch07.check_clip_loss, ch07.check_rate_ten, ch07.check_batch_of_ten):
        assert check(None) == PROMPT


# --------------------------------------------------------------- the brake behind the batch layer
def _first_batch():
    data = R.subscribers()
    from normcore.experiments.rates.data import orders

    rows = orders(1)[0][: R.BATCH]
    return data.x_train[rows], data.y_train[rows]


def test_a_step_behind_the_batch_layer_only_lengthens_the_hidden_weights():
    """The chapter's prediction on its own network: the step is at right angles to each unit's
    weights, so ||w'||^2 = ||w||^2 + ||w' - w||^2 (eta^2 ||g||^2); the plain network's is not."""
    xb, yb = _first_batch()
    for normalised in (True, False):
        net = R.build(R.RUN_SEEDS[0], normalised)
        moved, _ = R.train_step(net, xb, yb, 5.0)
        w, w2 = np.asarray(net.hidden.weights), np.asarray(moved.hidden.weights)
        gain = R.unit_lengths(moved) - R.unit_lengths(net)
        step = np.sum((w2 - w) ** 2, axis=0)
        cosine = np.sum(w * (w2 - w), axis=0) / np.sqrt(np.sum(w**2, axis=0) * step)
        if normalised:
            np.testing.assert_allclose(gain, step, rtol=1e-6)
            assert np.all(np.abs(cosine) < 1e-6)
        else:
            assert np.max(np.abs(cosine)) > 0.1


def test_lengths_read_the_runs_start_and_end(rows):
    row = next(r for r in rows if r.normalised and r.rate == 5.0)
    brake = R.lengths(row.runs)
    for k, run in enumerate(row.runs):
        np.testing.assert_array_equal(brake.start[k], R.unit_lengths(R.build(run.seed, True)))
        np.testing.assert_array_equal(brake.end[k], R.unit_lengths(run.net))
    assert brake.start.shape == brake.end.shape == (2, R.HIDDEN)
    np.testing.assert_allclose(brake.effective, np.mean(5.0 / brake.end, axis=-1))
    np.testing.assert_allclose(brake.brake * brake.effective, 5.0)
    assert np.all(brake.growth > 1) and np.all(brake.largest_effective >= brake.effective)
    assert np.all(brake.effective_start > brake.effective)
    table = R.length_table([brake])
    assert len(table.rows) == 1 and table.rows[0][0] == "5"


def test_lengths_refuse_runs_of_different_settings(rows):
    from normcore.errors import SettingError

    mixed = [r.runs[0] for r in rows if r.normalised and r.rate in (0.05, 5.0)]
    with pytest.raises(SettingError, match="one rate"):
        R.lengths(mixed)
    with pytest.raises(SettingError, match="at least one"):
        R.lengths([])


def test_the_batch_layer_makes_the_loss_blind_to_the_hidden_length():
    for seed in R.RUN_SEEDS:
        normalised, plain = R.build(seed, True), R.build(seed, False)
        for factor in (0.5, 2.0, 10.0):
            assert R.scale_change(normalised, factor) < R.BLIND_BELOW
            assert R.scale_change(plain, factor) > R.SEES_LENGTH
        doubled = R.scaled(normalised, 2.0)
        np.testing.assert_array_equal(doubled.hidden.weights, 2 * normalised.hidden.weights)
        assert doubled.layers.layers[1:] == normalised.layers.layers[1:]


def test_rate_ten_checker_names_another_run_not_rounding():
    """Exercise 2: a final loss from another seed is named as another run, and an answer near
    the right one is never told to keep more digits (two runs end a few hundredths apart)."""
    from normcore.exercises import ch07

    other = R.train(0, 10.0, True).loss
    said = ch07.check_rate_ten(other)
    assert said.startswith("not yet") and "seed 0" in said
    right = R.train(R.RUN_SEEDS[0], 10.0, True).loss
    near = ch07.check_rate_ten(right + 0.003)
    assert near.startswith("not yet") and "more digits" not in near
    assert ch07.check_rate_ten(round(right, 4)) == "right"


def test_pinned_training_keeps_the_lengths_and_the_function():
    """`train_many(..., pinned=True)`: every unit ends at its starting length; pinning a trained
    network changes what it computes (both modes) by epsilon's share only; a plain network
    cannot be pinned."""
    from normcore.errors import SettingError
    from normcore.mode import EVAL, TRAIN

    seed = R.RUN_SEEDS[0]
    start = R.unit_lengths(R.build(seed, True))
    run = R.train(seed, 5.0, True, pinned=True)
    assert np.allclose(R.unit_lengths(run.net), start)
    free = R.train(seed, 5.0, True).net
    assert not np.allclose(R.unit_lengths(free), start)  # the lengths grew
    pinned = R.pin_lengths(free, np.sqrt(start))
    assert np.allclose(R.unit_lengths(pinned), start)
    x = R.subscribers().x_train[:40]
    for mode in (TRAIN, EVAL):
        assert np.allclose(pinned.logits(x, mode), free.logits(x, mode), rtol=1e-6)
    with pytest.raises(SettingError):
        R.train_many([seed], [5.0], False, pinned=True)


def test_batch_probabilities_agree_with_predict_in_any_order():
    data = R.subscribers()
    net = R.train(R.RUN_SEEDS[0], 0.05, True).net
    orders = np.stack([np.random.default_rng(k).permutation(len(data.y_test)) for k in range(3)])
    stacked = R.batch_probabilities(net, data.x_test, orders)
    for order, row in zip(orders, stacked, strict=True):
        np.testing.assert_allclose(
            row, R.predict(net, data.x_test, "batch", order=order), rtol=1e-12, atol=1e-15
        )
    spread = R.order_spread(net, data.x_test, data.y_test, orders=20, seed=0)
    assert spread.accuracies.shape == (20,) and 0 <= spread.percentile_of_in_order <= 100
    sorted_by = R.sorted_orders(data.x_test, data.y_test, features=[0])
    labels = np.asarray(data.y_test)[sorted_by["label, ones last"]]
    assert np.all(np.diff(labels) >= 0)
    with pytest.raises(NormcoreError):
        R.batch_probabilities(net, data.x_test, orders[:, :10])


def test_stable_bracket_brackets():
    b = R.stable_bracket([5.0, 10.0, 12.5], False)
    assert (b.last_stable, b.first_unstable) == (10.0, 12.5)
    assert np.all(b.losses[:2] < 1) and not np.all(b.losses[2] < 1)
    with pytest.raises(NormcoreError):
        R.stable_bracket([10.0, 5.0], False)
