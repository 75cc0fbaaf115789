"""The preface's epsilon slider (normcore.widgets.epsilon): its Python answer and its refusals."""

from __future__ import annotations

import numpy as np
import pytest

import normcore as nc
from normcore.errors import NormcoreError, SettingError
from normcore.widgets.epsilon import HIGH, LOW, epsilon_at, epsilon_slider, figures

pytestmark = pytest.mark.numeric  # figures from float arithmetic: make test-arith reruns it

BLOCK = [[1.0, 2.0], [1.0, 4.0], [7.0, 6.0], [23.0, 8.0]]


def test_every_stop_is_the_batch_layer_at_that_epsilon():
    for exponent in range(LOW, HIGH + 1):
        eps = epsilon_at(exponent)
        assert eps == float(f"1e{exponent}")
        x = np.array(BLOCK)
        mean, var = x[:, 0].mean(), x[:, 0].var()
        by_hand = (x[3, 0] - mean) / np.sqrt(var + eps)
        got = figures({"exponent": exponent, "x": BLOCK})["entry"]
        assert got == pytest.approx(by_hand, rel=1e-14)
        layer = nc.BatchNorm.create(2, eps=eps)
        assert got == float(layer.forward(np.array(BLOCK), "train").output[3, 0])


def test_small_epsilons_leave_the_entry_and_large_ones_shrink_it():
    entries = [figures({"exponent": e, "x": BLOCK})["entry"] for e in range(LOW, HIGH + 1)]
    assert np.all(np.diff(entries) < 0)
    assert entries[-1] < 0.5 * entries[0]


@pytest.mark.parametrize("exponent", [LOW - 1, HIGH + 1, 1.5, "3", None])
def test_a_stop_off_the_slider_is_refused(exponent):
    with pytest.raises(SettingError, match="exponent"):
        figures({"exponent": exponent, "x": BLOCK})
    with pytest.raises(SettingError):
        epsilon_slider(BLOCK, exponent)


@pytest.mark.parametrize("block", [[1.0, 2.0], [[1.0, float("nan")]], [[]]])
def test_a_bad_block_is_refused(block):
    with pytest.raises(NormcoreError, match="x"):
        epsilon_slider(block)


def test_the_widget_answers_for_the_state_on_show():
    slider = epsilon_slider(BLOCK)
    assert slider.state["exponent"] == -5
    assert slider.figures_for() == figures({"exponent": -5, "x": BLOCK})
    assert "error" in slider.figures_for({"exponent": 99, "x": BLOCK})
