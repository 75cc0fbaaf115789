"""The chapter-2 playground's model, driven without a browser; and its JavaScript twin in node.

The expected answers are computed here in plain numpy from the formulas (standardise by the
batch, by the running statistics, along the row, by the root mean square), never by normcore's
layers; the seed-000 figures quoted are the ones that seed prints. The JavaScript model is held
to the Python model on random action sequences when node is installed (the browser tests hold
the page itself to normcore on the built site).
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from js.node import run

from normcore.errors import MagnitudeError, NonFiniteError, NormcoreError
from normcore.widgets import playground_model as pm
from normcore.widgets._esm import bundle
from normcore.widgets._input import NotANumberError, friendly, parse_number
from normcore.widgets.playground import Playground, playground
from normcore.worked import FOUR_ROWS

pytestmark = pytest.mark.numeric  # figures from float arithmetic: make test-arith reruns it

EPS = 1e-5
WORKED = FOUR_ROWS
BAD_TEXTS = [
    "",
    "abc",
    "1,5",
    "nan",
    "1e999",
    "-inf",
    "=1+1",
    "9" * 500,
    "2**3",
    "0x10",
    "  ",
    "1_000",
    "infinity",
    "__import__('os')",
]


def expected(state: pm.State) -> np.ndarray:
    """The answer by the formulas, in numpy."""
    block = pm.input_rows(state)
    scale, shift = np.array(state["scale"]), np.array(state["shift"])
    if state["kind"] == "batch":
        if state["mode"] == "train":
            z = (block - block.mean(axis=0)) / np.sqrt(block.var(axis=0) + EPS)
        else:
            z = (block - state["running_mean"]) / np.sqrt(np.array(state["running_var"]) + EPS)
    elif state["kind"] == "layer":
        z = (block - block.mean(axis=1, keepdims=True)) / np.sqrt(
            block.var(axis=1, keepdims=True) + EPS
        )
    else:
        z = block / np.sqrt(np.mean(block**2, axis=1, keepdims=True) + EPS)
    return z * scale + shift


def assert_figures_follow(state: pm.State) -> dict:
    f = pm.figures(state)
    block = pm.input_rows(state)
    if block.shape[0] == 0:
        assert f["output"] is None and f["gap"] is None
        return f
    want = expected(state)
    np.testing.assert_allclose(f["output"], want, rtol=1e-12, atol=1e-12 * np.abs(want).max())
    assert f["gap"] == pytest.approx(np.max(np.abs(np.array(f["output"]) - block)), abs=1e-15)
    if state["kind"] == "batch":
        np.testing.assert_allclose(f["batch_mean"], block.mean(axis=0), rtol=1e-14)
        np.testing.assert_allclose(
            f["batch_variance"],
            block.var(axis=0),
            rtol=1e-12,
            atol=1e-12 * max(1.0, block.var(axis=0).max()),
        )
        np.testing.assert_allclose(
            f["running_divisor"], np.sqrt(np.array(state["running_var"]) + EPS), rtol=1e-15
        )
    return f


# ------------------------------------------------------------------------------- the opening
def test_opens_on_the_worked_block_and_its_column() -> None:
    state = pm.initial()
    np.testing.assert_array_equal(pm.input_rows(state), WORKED)
    f = assert_figures_follow(state)
    # seed 000: mean 6, variance 9, deviation 3.0000017, v / (v + eps) ~ 0.9999989
    assert f["batch_mean"][1] == 6.0 and f["batch_variance"][1] == 9.0
    assert f["batch_divisor"][1] == pytest.approx(3.0000017, abs=5e-8)
    assert f["batch_share"][1] == pytest.approx(0.9999989, abs=5e-8)
    # seed 000: 0.3333, 0.9999994, -1.6667, 0.3333
    column = np.array(f["output"])[:, 1]
    np.testing.assert_allclose(column, [0.3333, 0.9999994, -1.6667, 0.3333], atol=5e-5)
    assert pm.errors(state) == []


def test_actions_leave_the_state_they_were_given_alone() -> None:
    state = pm.initial()
    before = json.dumps(state)
    for action, args in (
        (pm.set_cell, (0, 0, "5")),
        (pm.set_active, (1, False)),
        (pm.set_kind, ("rms",)),
        (pm.set_mode, ("eval",)),
        (pm.set_parameter, ("scale", 0, 2.0)),
        (pm.undo, ()),
        (pm.step, ()),
        (pm.fresh, ()),
        (pm.resize, (1, 1)),
    ):
        action(state, *args)
    assert json.dumps(state) == before


@pytest.mark.parametrize("kind", pm.KINDS)
@pytest.mark.parametrize("mode", pm.MODES)
def test_every_kind_and_mode_follows_the_formulas(kind: str, mode: str) -> None:
    state = pm.set_mode(pm.set_kind(pm.initial(), kind), mode)
    state = pm.set_parameter(pm.set_parameter(state, "scale", 0, 2.5), "shift", 1, -1.25)
    state = pm.step(pm.set_cell(state, 2, 1, "-4.5"))
    assert_figures_follow(state)


def test_one_row_while_training_is_zeros_without_a_warning() -> None:
    state = pm.initial()
    for i in (1, 2, 3):
        state = pm.set_active(state, i, False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f = pm.figures(state)
    assert f["output"] == [[0.0, 0.0]] and f["rows_on"] == [0]


def test_no_rows_switched_on_gives_no_answer() -> None:
    state = pm.initial()
    for i in range(4):
        state = pm.set_active(state, i, False)
    assert pm.figures(state)["output"] is None
    for action in (pm.undo, pm.step):
        after = action(state)
        assert after["note"].endswith("needs-rows")
        assert after["scale"] == state["scale"] and after["steps"] == 0


# ----------------------------------------------------------------------------- undo and step
def test_undo_exactly_gives_the_block_back() -> None:
    state = pm.undo(pm.initial())
    # seed 000: the sliders jump to 3.0000017 and 6 for the second feature
    assert state["scale"][1] == pytest.approx(3.0000017, abs=5e-8)
    assert state["shift"][1] == 6.0
    assert state["scale"][0] == pytest.approx(np.sqrt(81 + EPS), rel=1e-15)
    f = pm.figures(state)
    assert f["gap"] < 1e-13  # seed 000: 8.9e-16
    np.testing.assert_allclose(f["output"], WORKED, atol=1e-13)


def test_undo_while_predicting_uses_the_running_figures() -> None:
    state = pm.undo(pm.set_mode(pm.step(pm.initial()), "eval"))
    np.testing.assert_allclose(state["shift"], 0.1 * WORKED.mean(axis=0), rtol=1e-15)
    np.testing.assert_allclose(pm.figures(state)["output"], WORKED, atol=1e-12)


@pytest.mark.parametrize("kind", ["layer", "rms"])
def test_undo_and_step_under_row_layers_change_nothing(kind: str) -> None:
    state = pm.set_kind(pm.initial(), kind)
    for action, note in ((pm.undo, "undo-not-batch"), (pm.step, "step-not-batch")):
        after = action(state)
        assert after["note"] == note
        assert {k: v for k, v in after.items() if k != "note"} == {
            k: v for k, v in state.items() if k != "note"
        }


def test_step_folds_the_batch_into_the_running_figures() -> None:
    state = pm.step(pm.step(pm.initial()))
    mean, var = WORKED.mean(axis=0), WORKED.var(axis=0)
    np.testing.assert_allclose(state["running_mean"], 0.19 * mean, rtol=1e-14)
    np.testing.assert_allclose(state["running_var"], 0.81 + 0.19 * var, rtol=1e-14)
    assert state["steps"] == 2 and state["scale"] == [1.0, 1.0]
    fresh = pm.fresh(state)
    assert fresh["running_mean"] == [0.0, 0.0] and fresh["steps"] == 0


def test_hundred_steps_bring_the_answers_together() -> None:
    # seed 000: after a hundred steps predicting answers -0.7778 and 0.3334 for row 1
    state = pm.initial(mode="eval")
    for _ in range(100):
        state = pm.step(state)
    np.testing.assert_allclose(pm.figures(state)["output"][0], [-0.7778, 0.3334], atol=5e-5)


# ------------------------------------------------------------------------- bad typed text
@pytest.mark.parametrize("text", BAD_TEXTS + [str(2 * pm.LIMIT)])
def test_bad_text_is_named_and_keeps_the_block(text: str) -> None:
    state = pm.set_cell(pm.initial(), 1, 1, text)
    np.testing.assert_array_equal(pm.input_rows(state), WORKED)
    (error,) = pm.errors(state)
    assert error.startswith("row 2, feature 2")
    assert state["texts"][1][1] == text
    state = pm.set_cell(state, 1, 1, "10")
    assert pm.errors(state) == [] and pm.input_rows(state)[1, 1] == 10.0


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("abc", NotANumberError),
        ("", NotANumberError),
        ("nan", NotANumberError),
        ("1e400", NonFiniteError),
        ("2e9", MagnitudeError),
        ("1_000", NotANumberError),
    ],
)
def test_typed_errors(text: str, error: type) -> None:
    with pytest.raises(error) as caught:
        pm.parse_cell(text, 0, 1)
    assert isinstance(caught.value, NormcoreError)
    assert friendly(caught.value).startswith("Row 1, feature 2")
    assert friendly(caught.value).endswith(".")


@pytest.mark.parametrize(
    ("text", "value"),
    [("3", 3.0), (" -2.5 ", -2.5), (".5", 0.5), ("1e-3", 1e-3), ("+7.", 7.0), ("1E9", 1e9)],
)
def test_numbers_are_read(text: str, value: float) -> None:
    assert parse_number(text, "box", pm.LIMIT) == value


def test_resize_within_limits() -> None:
    state = pm.resize(pm.resize(pm.initial(), 1, 0), 0, 1)
    assert np.array(state["values"]).shape == (5, 3)
    assert state["scale"][-1] == 1.0 and state["running_var"][-1] == 1.0
    assert_figures_follow(state)
    small = pm.initial([[1.0]])
    assert pm.resize(small, -1, 0)["note"] == "size-limits"
    assert pm.resize(small, 0, -1)["note"] == "size-limits"
    big = pm.initial(np.zeros((pm.MAX_ROWS, pm.MAX_FEATURES)))
    assert pm.resize(big, 1, 0)["note"] == "size-limits"


def test_initial_refuses_a_block_it_cannot_show() -> None:
    for block in ([[np.nan]], np.zeros((pm.MAX_ROWS + 1, 2)), [1.0, 2.0], [[2 * pm.LIMIT]]):
        with pytest.raises(ValueError):
            pm.initial(block)


# ------------------------------------------------------------------------------- the widget
def test_the_widget_answers_a_page_that_asks() -> None:
    pg = playground()
    assert pg.kernel == {}  # nothing stored until a page asks: the saved notebook holds state
    pg.request = "token"
    assert pg.kernel["token"] == "token" and pg.kernel["state"] == pg.state
    pg.set_cell(0, 1, "8")
    assert pg.kernel["state"]["texts"][0][1] == "8"
    assert pg.kernel["figures"] == pm.figures(pg.state)
    pg.act(pm.set_kind, "layer")
    assert pg.kernel["figures"]["output"] == pm.figures(pg.state)["output"]


def test_the_widget_module_is_one_es_module() -> None:
    esm = Playground._esm
    assert "import " not in esm.replace("important", "")
    assert esm.count("export default") == 1
    for name in ("standardise.js", "input.js", "playground-model.js", "playground.js"):
        assert f"// ---- {name}" in esm


# ------------------------------------------------------- the JavaScript model against Python
ACTIONS = st.one_of(
    st.tuples(
        st.just("set_cell"),
        st.integers(0, 9),
        st.integers(0, 9),
        st.one_of(
            st.sampled_from(BAD_TEXTS),
            st.integers(-50, 50).map(str),
            st.floats(-1e3, 1e3).map(lambda v: f"{v:.4g}"),
        ),
    ),
    st.tuples(st.just("set_active"), st.integers(0, 9), st.booleans()),
    st.tuples(st.just("set_kind"), st.sampled_from(pm.KINDS)),
    st.tuples(st.just("set_mode"), st.sampled_from(pm.MODES)),
    st.tuples(
        st.just("set_parameter"),
        st.sampled_from(["scale", "shift"]),
        st.integers(0, 9),
        st.floats(-10, 10),
    ),
    st.tuples(st.just("undo")),
    st.tuples(st.just("step")),
    st.tuples(st.just("fresh")),
    st.tuples(st.just("resize"), st.sampled_from([(1, 0), (-1, 0), (0, 1), (0, -1)])),
)
JS_NAMES = pm.JS_NAMES  # the model's Python action names and the page's
DRIVER = """
const out = input.map(actions => {
  let state = actions.shift()[1];
  const seen = [];
  for (const [name, ...args] of actions) {
    state = m[name](state, ...args);
    seen.push({state, figures: m.figures(state), errors: m.errors(state)});
  }
  return seen;
});
answer(out);
"""


def _fit(state: pm.State, action: tuple) -> tuple:
    """The action with its row / feature taken modulo the block's shape."""
    rows, features = len(state["texts"]), len(state["scale"])
    name = action[0]
    if name == "set_cell":
        return (name, action[1] % rows, action[2] % features, action[3])
    if name == "set_active":
        return (name, action[1] % rows, action[2])
    if name == "set_parameter":
        return (name, action[1], action[2] % features, action[3])
    if name == "resize":
        return (name, *action[1])
    return action


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@pytest.mark.slow  # ten runs of thirty actions under node (about 12 s)
@given(st.lists(st.lists(ACTIONS, min_size=1, max_size=30), min_size=10, max_size=10))
def test_the_javascript_model_is_the_python_model(oracle, runs: list[list[tuple]]) -> None:
    plans, wants = [], []
    for actions in runs:
        state = pm.initial()
        plan: list = [("start", state)]
        want = []
        for action in actions:
            action = _fit(state, action)
            plan.append((JS_NAMES.get(action[0], action[0]), *action[1:]))
            state = getattr(pm, action[0])(state, *action[1:])
            want.append((state, pm.figures(state), pm.errors(state)))
        plans.append(plan)
        wants.append(want)
    got = run(oracle("node"), "playground-model.js", DRIVER, plans)
    for seen, want in zip(got, wants, strict=True):
        for n, (page, (state, figures, errors)) in enumerate(zip(seen, want, strict=True)):
            assert page["errors"] == errors, n
            for key in ("texts", "active", "kind", "mode", "steps", "note"):
                assert page["state"][key] == state[key], (n, key)
            for key in ("values", "scale", "shift", "running_mean", "running_var"):
                np.testing.assert_allclose(
                    page["state"][key], state[key], rtol=1e-12, atol=1e-300, err_msg=key
                )
            assert sorted(page["figures"]) == sorted(figures)
            for key, value in figures.items():
                if value is None or key == "rows_on":
                    assert page["figures"][key] == value, key
                    continue
                value = np.asarray(value, dtype=np.float64)
                # the gap is a difference of nearly equal numbers: held to the answer's scale
                scale = max(float(np.abs(figures["output" if key == "gap" else key]).max()), 1e-300)
                np.testing.assert_allclose(
                    page["figures"][key],
                    value,
                    rtol=1e-12,
                    atol=1e-12 * scale,
                    err_msg=f"{n}: {key}",
                )


def test_bundle_is_cached_and_names_its_files() -> None:
    assert bundle("playground.js") is bundle("playground.js")


def test_the_javascript_reader_refuses_what_python_refuses_in_the_same_words(oracle) -> None:
    texts = BAD_TEXTS + [
        "3",
        " -2.5 ",
        ".5",
        "1e-3",
        "+7.",
        "1E9",
        "2e9",
        "1e9",
        "-1e9",
        "2000",
        "1e400",
        "0.1e-400",
        "'quoted'",
        "é",
        "1" * 41,
        "1" * 40,
    ]
    want = []
    for text in texts:
        try:
            want.append({"value": parse_number(text, "box", pm.LIMIT)})
        except NormcoreError as error:
            want.append({"error": str(error)})
    script = "answer(input.map(t => m.parseNumber(t, 'box', 1e9)));"
    assert run(oracle("node"), "input.js", script, texts) == want
