"""Chapters 5 to 7's checkers name the mistakes their exercises expect, and still say "right"
to the right answer (computed here independently of the checkers)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from normcore.exercises import PROMPT, ch05, ch06, ch07
from normcore.experiments import comparison
from normcore.experiments import rates as R

pytestmark = pytest.mark.numeric  # figures from float arithmetic: make test-arith reruns it


def test_chapter_5_checkers_name_the_expected_mistakes():
    u = np.array([[0.6], [0.8]])
    across = np.array([[0.6], [-0.2]]) - 0.2 * u
    assert ch05.check_magnitude_slope(0.2) == "right"
    assert "unit direction" in ch05.check_magnitude_slope(1.0)  # dotted with v
    assert "no g" in ch05.check_magnitude_slope(0.4)  # times g
    assert ch05.check_direction_slope(0.4 * across) == "right"
    assert "shortcut" in ch05.check_direction_slope([[0.24], [-0.08]])
    assert "still needs the factor" in ch05.check_direction_slope(across)
    assert "scales by g" in ch05.check_direction_slope(2 * across)
    assert "leaves out g" in ch05.check_direction_slope(across / 5)
    assert ch05.check_unprojected_dot(0.4) == "right"
    assert "projected gradient gives" in ch05.check_unprojected_dot(0.0)
    assert "factor g/|v|" in ch05.check_unprojected_dot(1.0)
    assert "unit direction" in ch05.check_unprojected_dot(0.08)
    for check in (ch05.check_magnitude_slope, ch05.check_direction_slope):
        assert check(None) == PROMPT
    assert ch05.check_unprojected_dot(0.5) == "not yet: that is not the answer"


def test_chapter_6_checkers_name_the_expected_mistakes():
    scores = comparison.compare(["none", "rms"])
    share = float(scores["none"].held_accuracy[comparison.SEEDS.index(0)])
    people = round(share * 25)
    assert ch06.check_held_out_people(people) == "right"
    assert "share" in ch06.check_held_out_people(share)
    assert "wrong" in ch06.check_held_out_people(25 - people)
    half = comparison.curves(["none"], rate=0.5)["none"].first_under
    full = comparison.curves(["none"])["none"].first_under
    assert ch06.check_first_under_half_rate(half) == "right"
    assert "from 0" in ch06.check_first_under_half_rate(half - 1)
    assert "learning rate 1" in ch06.check_first_under_half_rate(full)
    assert "doubles" in ch06.check_first_under_half_rate(2 * full)
    rms, plain = (np.rint(scores[k].held_accuracy * 25) for k in ("rms", "none"))
    holding, better = int(np.sum(rms >= plain)), int(np.sum(rms > plain))
    assert ch06.check_rms_seeds_holding_up(holding) == "right"
    assert "falls short" in ch06.check_rms_seeds_holding_up(5 - holding)
    if better != holding:
        assert "tie" in ch06.check_rms_seeds_holding_up(better)


def test_chapter_7_checkers_name_the_expected_mistakes():
    share = float(R.subscribers().y_test.mean())
    cap = -math.log(1e-12)
    assert ch07.check_clip_loss(share * cap) == "right"
    assert "training rows" in ch07.check_clip_loss(float(R.subscribers().y_train.mean()) * cap)
    assert "one row's" in ch07.check_clip_loss(cap)
    assert "labelled 0" in ch07.check_clip_loss((1 - share) * cap)
    assert "base-10" in ch07.check_clip_loss(share * 12)
    assert "plain network's" in ch07.check_rate_ten(R.train(R.RUN_SEEDS[0], 10.0, False).loss)
    assert "second seed" in ch07.check_rate_ten(R.train(R.RUN_SEEDS[1], 10.0, True).loss)
    data = R.subscribers()
    net = R.train(R.RUN_SEEDS[0], 0.05, True).net
    ten = R.accuracy(R.predict(net, data.x_test, "batch", batch=10), data.y_test)
    twenty = R.accuracy(R.predict(net, data.x_test, "batch"), data.y_test)
    running = R.accuracy(R.predict(net, data.x_test), data.y_test)
    assert ch07.check_batch_of_ten(ten) == "right"
    assert "twenty" in ch07.check_batch_of_ten(twenty)
    assert "running figures" in ch07.check_batch_of_ten(running)


def test_gap_factor_checker_names_the_first_order_mistake():
    assert ch05.check_gap_factor(4).right
    assert "first order" in ch05.check_gap_factor(2)
    assert not ch05.check_gap_factor(8).right
