"""Careless calls of the widgets from Python: every widget constructor and every action, handed
arguments of the wrong kind, either answers or refuses with a typed error (`NormcoreError`) that
names the argument; never Python's own TypeError, KeyError, StopIteration or OverflowError.

The widgets check their arguments with one helper per kind (`normcore.widgets._input`: `seed_arg`,
`flag_arg`, `choice_arg`, `number_arg`, `items_arg`, `check_index`, `check_state`)."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("ipywidgets", reason="the widgets need ipywidgets (the book extra)")

from normcore.errors import NormcoreError  # noqa: E402
from normcore.widgets import (  # noqa: E402
    axes_model,
    comparison,
    comparison_model,
    convnet_model,
    epsilon,
    playground_model,
    rates,
    rates_model,
    routes_model,
    shift_chart,
    weightnorm,
    weightnorm_model,
)

#: values of every kind a careless caller hands in
WRONG = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**30), 10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=4),
    st.lists(st.integers(-3, 3), max_size=3),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
    st.just(object()),
    st.just(1e38),
    st.just(-1),
)

SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _answers_or_refuses(call: Callable[[], Any]) -> None:
    try:
        call()
    except NormcoreError as error:
        assert "expected" in str(error) or str(error), error


def _playground_state() -> dict:
    return playground_model.initial()


#: (name, call taking one wrong value): the actions of every widget's model, and the widgets'
#: own methods, each with the wrong value in one argument
ACTIONS: dict[str, Callable[[Any], Any]] = {
    "playground.set_cell row": lambda v: playground_model.set_cell(_playground_state(), v, 0, "1"),
    "playground.set_cell text": lambda v: playground_model.set_cell(_playground_state(), 0, 0, v),
    "playground.set_active": lambda v: playground_model.set_active(_playground_state(), 0, v),
    "playground.set_kind": lambda v: playground_model.set_kind(_playground_state(), v),
    "playground.set_purpose": lambda v: playground_model.set_purpose(_playground_state(), v),
    "playground.set_parameter value": lambda v: playground_model.figures(
        playground_model.set_parameter(_playground_state(), "scale", 0, v)
    ),
    "playground.set_parameter which": lambda v: playground_model.set_parameter(
        _playground_state(), v, 0, 1.0
    ),
    "playground.resize": lambda v: playground_model.resize(_playground_state(), v, 0),
    "playground.figures": lambda v: playground_model.figures(v),
    "playground.initial": lambda v: playground_model.initial(v),
    "comparison.toggle_seed seed": lambda v: comparison_model.toggle_seed({"seeds": [0]}, v, True),
    "comparison.toggle_seed on": lambda v: comparison_model.toggle_seed({"seeds": [0]}, 1, v),
    "comparison.toggle_arrangement": lambda v: comparison_model.toggle_arrangement(
        {"arrangements": ["none"]}, v, True
    ),
    "rates.choose limit": lambda v: rates_model.choose(rates_model.initial(), limit=v),
    "rates.choose run": lambda v: rates_model.choose(rates_model.initial(), run=v),
    "rates.choose orders": lambda v: rates_model.choose(rates_model.initial(), orders=v),
    "axes.choose": lambda v: axes_model.choose(axes_model.initial(), "axis", v),
    "axes.choose key": lambda v: axes_model.choose(axes_model.initial(), v, "1"),
    "convnet.choose key": lambda v: convnet_model.choose(convnet_model.initial(), v, "batch"),
    "routes.choose value": lambda v: routes_model.choose(routes_model.initial(), "data", v),
    "routes.choose": lambda v: routes_model.choose(routes_model.initial(), v, "x"),
    "convnet.choose": lambda v: convnet_model.choose(convnet_model.initial(), "normaliser", v),
    "weightnorm.set_length": lambda v: weightnorm_model.set_length(
        weightnorm_model.initial(), 0, v
    ),
    "weightnorm.set_learning_rate": lambda v: weightnorm_model.set_learning_rate(
        weightnorm_model.initial(), v
    ),
    "shift chart.select": lambda v: shift_chart.ShiftChart.select(
        SimpleNamespace(shifts={"none": None, "batch": None}), v
    ),
}

#: (name, constructor taking one wrong value), each refusing before it computes anything long
CONSTRUCTORS: dict[str, Callable[[Any], Any]] = {
    "shift_chart seed": lambda v: shift_chart.shift_chart(seed=v) if _not_a_seed(v) else None,
    "shift_chart plain": lambda v: shift_chart.shift_chart(plain=v) if v is not None else None,
    "comparison_widget scores": lambda v: comparison.comparison_widget(v),
    "rate_explorer rows": lambda v: rates.rate_explorer(rows=v) if v is not None else None,
    "rate_explorer brackets": lambda v: (
        rates.rate_explorer(rows=[object()], brackets=v) if v is not None else None
    ),
    "epsilon_slider block": lambda v: epsilon.epsilon_slider(v),
    "epsilon_slider exponent": lambda v: epsilon.epsilon_slider([[1.0, 2.0]], v),
    "weightnorm_step_widget lengths": lambda v: weightnorm.weightnorm_step_widget(v),
    "weightnorm_step_widget rate": lambda v: weightnorm.weightnorm_step_widget(learning_rate=v),
}


def _not_a_seed(v: Any) -> bool:
    return not (isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**32)


@pytest.mark.parametrize("name", list(ACTIONS))
@SETTINGS
@given(value=WRONG)
def test_every_action_answers_or_refuses_by_type(name: str, value: Any) -> None:
    _answers_or_refuses(lambda: ACTIONS[name](value))


@pytest.mark.parametrize("name", list(CONSTRUCTORS))
@SETTINGS
@given(value=WRONG)
def test_every_constructor_answers_or_refuses_by_type(name: str, value: Any) -> None:
    _answers_or_refuses(lambda: CONSTRUCTORS[name](value))


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda: shift_chart.shift_chart(seed="a"), "seed"),
        (lambda: shift_chart.shift_chart(seed=-1), "seed"),
        (
            lambda: playground_model.figures(
                playground_model.set_parameter(playground_model.initial(), "scale", 0, 1e38)
            ),
            "scale",
        ),
        (lambda: comparison_model.toggle_seed({"seeds": [0]}, "0", True), "seed"),
        (lambda: comparison.comparison_widget(None), "scores"),
        (lambda: comparison.comparison_widget({}), "scores"),
        (lambda: rates.rate_explorer(rows=[]), "rows"),
        (
            lambda: shift_chart.ShiftChart.select(
                SimpleNamespace(shifts={"none": None, "batch": None}), ["batch"]
            ),
            "arrangement",
        ),
    ],
)
def test_the_careless_calls_of_the_review_get_a_typed_refusal_naming_the_argument(
    call: Callable[[], Any], named: str
) -> None:
    with pytest.raises(NormcoreError, match=named):
        call()
