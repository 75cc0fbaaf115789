"""Chapter 7's experiment held against seed 004's printed table (the independent oracle)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from normcore.experiments import rates as R

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
    # the chapter quotes R.SEED_004_TABLE; it must be the table in tests/data, cell for cell
    assert len(PRINTED_ROWS) == len(R.SEED_004_TABLE) == 8
    for key, (loss, test, dead) in R.SEED_004_TABLE.items():
        row = PRINTED_ROWS[key]
        assert (list(loss), list(test), list(dead)) == (row["loss"], row["test_accuracy"],
                                                        row["dead_units"])
    assert R.SEED_004_THREE_WAYS == PRINTED["three_ways"]


def test_robust_rows_agree_with_the_printed_table_within_its_last_digit(rows):
    by = {(r.normalised, r.rate): r for r in rows}
    for key in ROBUST:
        printed = PRINTED_ROWS[key]
        for column, name in (("loss", "loss"), ("test", "test_accuracy")):
            for ours, seed in zip(by[key].column(column), printed[name], strict=True):
                assert abs(ours - seed) <= HALF_LAST_DIGIT + OWN_ROUNDING, (key, column)
        assert list(by[key].dead) == printed["dead_units"], key
    cells = [c for c in R.compare_with_seed(rows) if (c.normalised, c.rate) in ROBUST]
    assert len(cells) == 30 and all(c.status == "agrees" for c in cells)


def test_cells_are_refused_or_chaotic_only_where_the_chapter_says(rows):
    status = {(c.normalised, c.rate, c.column): c.status for c in R.compare_with_seed(rows)}
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
    stacked = R.train_in_order_many([R.RUN_SEEDS[0], R.RUN_SEEDS[1]], [5.0, 60.0], True,
                                    summation="compensated")[1]
    assert np.array_equal(alone.epoch_losses, stacked.epoch_losses)
    assert np.array_equal(alone.net.net.w1, stacked.net.net.w1)


def test_the_two_orders_of_adding_differ_only_in_the_chaotic_row():
    seq = R.sweep(trainer="sequential")
    com = R.sweep(trainer="compensated")
    for a, b in zip(seq, com, strict=True):
        same = [round(x, 4) for x in a.loss] == [round(y, 4) for y in b.loss]
        assert same == ((a.normalised, a.rate) not in R.SENSITIVE), (a.normalised, a.rate)


def test_plain_high_rates_are_refused():
    for rate in (20.0, 60.0):
        run = R.train(R.RUN_SEEDS[0], rate, False)
        assert run.refused.startswith("MagnitudeError") and math.isnan(run.loss)


def test_three_ways_match_the_seed():
    got = R.three_ways().summary()
    for key, value in PRINTED["three_ways"].items():
        assert abs(got[key] - value) <= HALF_LAST_DIGIT + OWN_ROUNDING, key


def test_replays_reproduce_the_plain_rows():
    for trainer in ("sequential", "compensated"):
        for key in [(False, 20.0), (False, 60.0)]:
            row = R.sweep(rates=[key[1]], trainer=trainer)[0]
            for c, name in enumerate(R.COLUMNS):
                assert [round(v, 4) for v in row.column(name)] == list(R.SEED_004_TABLE[key][c])


def test_plain_60_loss_is_the_clip_times_the_share():
    share = float(R._data().y_train.mean())
    assert round(share * -math.log(R.CLIP), 4) == R.SEED_004_TABLE[(False, 60.0)][0][0]


def test_unclipped_loss_is_recorded_from_the_same_passes():
    run = R.train(R.RUN_SEEDS[0], 0.05, True)
    again = R.train(R.RUN_SEEDS[0], 0.05, True, clip=None)
    assert run.unclipped_loss == again.loss


def test_epsilon_moves_rate_60_but_not_rate_005():
    a = [round(R.train(s, 0.05, True, epsilon=e).loss, 4) for e in (1e-8, 1e-14)
         for s in R.RUN_SEEDS[:1]]
    b = [round(R.train(s, 60.0, True, epsilon=e).loss, 4) for e in (1e-8, 1e-14)
         for s in R.RUN_SEEDS]
    assert a[0] == a[1]
    assert b[:2] != b[2:]


def test_largest_stable_rates(rows):
    assert R.largest_stable_rate(rows, False) == 5.0
    assert R.largest_stable_rate(rows, True) == 20.0


def test_predict_by_batch_puts_rows_back():
    net = R.build(R.RUN_SEEDS[0], True)
    x = R._data().x_test[:40]
    order = np.arange(40)[::-1]
    a = R.predict(net, x, "batch", order=order)
    b = R.predict(net, x[order], "batch")
    assert np.array_equal(a[order], b)


def test_widget_reads_out_without_raising():
    from normcore.widgets.rates import rate_explorer, readout

    assert "refused" in readout(60.0, False)
    box = rate_explorer(rate=0.05, normalised=False)
    box.rate.value = 5.0
    box.train()
    assert "dead units 1/16" in box.out.value


def test_widget_trains_at_its_rate_whatever_the_browser_slider_snaps_it_to():
    from normcore.widgets.rates import rate_explorer

    box = rate_explorer(rate=20.0, normalised=False)
    box.rate.set_state({"value": 10.0**1.3})  # a browser shows 20 as 10^1.3 and sends that
    box.train()
    assert 'data-rate="20.0"' in box.out.value
    box.rate.set_state({"value": 10.0**1.25})  # one notch down: a reader's move
    box.train()
    assert f'data-rate="{10.0**1.25!r}"' in box.out.value


def test_exercise_checks_say_right_to_right_answers():
    from normcore.exercises import ch07

    share = float(R._data().y_train.mean())
    assert ch07.check_clip_loss(share * -math.log(1e-12)) == "right"
    assert ch07.check_clip_loss(1.0) != "right"
