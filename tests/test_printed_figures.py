"""The book's own computations held against figures printed outside it (tests/data, with their
provenance). The chapters never quote these figures; where the arithmetic is the same the book
must agree to the printed places, and where the random draws differ the pattern must agree."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from normcore.experiments import routes
from normcore.experiments.shift import deep_network, running_lag

pytestmark = pytest.mark.numeric  # figures from float arithmetic: make test-arith reruns it

PRINTED = json.loads((Path(__file__).parent / "data" / "printed_figures.json").read_text())


def test_worked_block_lag_agrees_to_the_printed_places():
    printed = PRINTED["worked_block_lag"]
    lag = running_lag(routes.WORKED_X, steps=100)
    half_unit = 0.5 * 10.0 ** -printed["printed_places"]
    for steps, figure in printed["after"].items():
        assert abs(lag.after(int(steps)) - figure) <= half_unit, steps
    for threshold, step in printed["first_step_under"].items():
        assert lag.first_under(float(threshold)) == step


def test_parameter_grads_agree():
    printed = PRINTED["worked_block_parameter_grads"]
    compare = routes.compare_gradients(routes.WORKED_X, routes.worked_grad())
    assert np.allclose(compare.scale_grad, printed["scale"], atol=5e-5)
    assert np.allclose(compare.shift_grad, printed["shift"], atol=5e-5)


def test_oracle_gap_is_of_the_printed_order():
    printed = PRINTED["oracle_agreement"]["gap"]
    sweep = routes.gap_against_step(routes.WORKED_X, routes.worked_grad())
    gaps = dict(zip(sweep.steps, sweep.gaps, strict=True))
    assert printed / 10 < gaps[1e-5] < printed * 10


def test_deep_stack_shows_the_printed_pattern():
    printed = PRINTED["deep_stack_deviation"]
    ours = deep_network(normalised=False).deviation
    # the same shape: the spread is cut to under a fifth by layer 3, in both
    assert printed["layer 3"] / printed["input"] < 0.2 and ours[3] / ours[0] < 0.2
    assert printed["layer 1"] < 0.5 * printed["input"] and ours[1] < 0.5 * ours[0]
