"""Every widget entry point and every model action refuses bad input with normcore's typed error.

A widget catches `NormcoreError` and nothing else (`PageWidget.figures_for`), so any other exception
from a reader's input or a malformed state would reach the reader as a traceback. Each case below
was, before, an untyped failure (a plain ValueError, AttributeError, IndexError, a numpy
broadcast error, an OverflowError) or a silent answer (complex values cast with a warning).
"""

from __future__ import annotations

import warnings

import pytest

from normcore.errors import DtypeError, NonFiniteError, NormcoreError, ShapeError
from normcore.widgets import (
    axes_model,
    comparison_model,
    playground_model,
    routes_model,
    weightnorm_model,
)
from normcore.widgets._input import StateError, check_state
from normcore.widgets.epsilon import epsilon_slider
from normcore.widgets.playground import playground
from normcore.widgets.weightnorm import weightnorm_step_widget

PM = playground_model
pytestmark = pytest.mark.numeric  # the weight-norm lengths are compared with a tolerance


@pytest.fixture(autouse=True)
def _warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a ComplexWarning would mean a silent answer
        yield


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: playground(x=[[float("nan"), 1.0]]), NonFiniteError),
        (lambda: playground(x=[[1 + 2j, 1.0]]), DtypeError),
        (lambda: playground(x=[[True, False]]), DtypeError),
        (lambda: playground(x=[[1, 2], [3]]), ShapeError),
        (lambda: playground(x=[[1.0] * 5]), ShapeError),
        (lambda: playground(kind="group"), NormcoreError),
        (lambda: playground(mode="testing"), NormcoreError),
        (lambda: epsilon_slider([[1j, 2], [3, 4]]), DtypeError),
        (lambda: epsilon_slider([[float("nan"), 2]]), NonFiniteError),
        (lambda: weightnorm_step_widget([1.0, 2.0]), ShapeError),
        (lambda: weightnorm_step_widget([1.0, 2.0, 3.0, 4.0]), ShapeError),
        (lambda: weightnorm_step_widget([1.0, 0.0, 3.0]), NormcoreError),
        (lambda: weightnorm_step_widget([1.0, 2.0, 1j]), DtypeError),
        (lambda: routes_model.parse_matrix(None), NormcoreError),
        (lambda: routes_model.figures({"source": "typed"}), StateError),
        (lambda: routes_model.choose(routes_model.initial(), "colour", "red"), StateError),
        (lambda: axes_model.choose(axes_model.initial(), "colour", "red"), StateError),
        (
            lambda: axes_model.figures({"data": "nowhere", "axis": "layer", "groups": "2"}, {}),
            StateError,
        ),
        (lambda: PM.set_cell(PM.initial(), 9, 0, "1"), StateError),
        (lambda: PM.set_cell(PM.initial(), 0, 0, 5), StateError),
        (lambda: PM.set_active(PM.initial(), -1, True), StateError),
        (lambda: PM.set_kind(PM.initial(), "group"), NormcoreError),
        (lambda: PM.set_mode(PM.initial(), "testing"), NormcoreError),
        (lambda: PM.set_parameter(PM.initial(), "grad", 0, 1.0), NormcoreError),
        (lambda: PM.set_parameter(PM.initial(), "scale", 0, float("nan")), NonFiniteError),
        (lambda: PM.resize(PM.initial(), 2, 0), StateError),
        (lambda: PM.figures({"texts": 3}), StateError),
        (lambda: PM.figures({**PM.initial(), "scale": [1.0]}), ShapeError),
        (lambda: PM.undo(None), StateError),
        (lambda: weightnorm_model.set_length(weightnorm_model.initial(), 3, "1"), StateError),
        (
            lambda: weightnorm_model.figures({"lengths": ["1", "2"], "learning_rate": "1"}, {}),
            ShapeError,
        ),
        (lambda: comparison_model.figures({"variants": "none", "seeds": [0]}, {}), StateError),
    ],
)
def test_bad_input_gets_a_typed_error(call, error) -> None:
    with pytest.raises(error):
        call()


def test_the_epsilon_slider_answers_an_out_of_shape_state_with_a_sentence() -> None:
    slider = epsilon_slider([[1.0, 2.0], [3.0, 5.0]])
    for state in ({"exponent": -3, "x": [1.0, 2.0]}, {"exponent": -3, "x": [[]]}, {}):
        assert "error" in slider.figures_for(state)
    assert slider.figures_for({"exponent": -3, "x": [[1.0], [3.0]]})["entry"] > 0


def test_the_weight_norm_widget_computes_with_the_lengths_given() -> None:
    lengths = (1.2345678901234, 2.0, 0.1 + 0.2)
    w = weightnorm_step_widget(lengths, 0.7)
    assert [float(t) for t in w.state["lengths"]] == list(lengths)  # not 6 figures
    assert w.figures_for()["before"] == pytest.approx(list(lengths), rel=1e-12)


def test_check_state_names_the_wrong_key() -> None:
    with pytest.raises(StateError, match="'b'"):
        check_state({"a": "x", "b": 1}, {"a": str, "b": [str]})
    with pytest.raises(StateError, match="dictionary"):
        check_state([1], {"a": str})
    assert check_state({"a": None}, {"a": (str, None)}) == {"a": None}


def test_a_choice_too_large_for_a_float_is_refused_with_a_setting_error() -> None:
    from normcore.errors import SettingError
    from normcore.widgets import rates_model

    for choice in ({"orders": 10**400}, {"run": float("nan")}, {"run": "fast"}, {"run": True}):
        with pytest.raises(SettingError):
            rates_model.choose(rates_model.initial(), **choice)
