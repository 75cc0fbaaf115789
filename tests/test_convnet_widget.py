"""Chapter 10's widget without a browser: its Python model held to normcore, its JavaScript model
held to the Python model in node, and every bad text refused with a typed error and a sentence.

The case is built from an untrained stack of the chapter's network (the arithmetic is the same
as on the chapter's trained one, and it takes a fraction of a second), with accuracies drawn at
random: the widget only looks them up.
"""

from __future__ import annotations

import shutil
from typing import Any

import numpy as np
import pytest
from js.node import run  # tests/js/node.py: the bundle under node, as the page runs it

from normcore.errors import NonFiniteError, NormcoreError, SettingError
from normcore.experiments import convnet
from normcore.widgets import convnet_model as cm
from normcore.widgets._esm import bundle
from normcore.widgets._input import NotANumberError, friendly

pytestmark = pytest.mark.numeric  # figures from float arithmetic: make test-arith reruns it

pytest.importorskip("anywidget", reason="the widgets need anywidget (the book extra)")

BAD = ["abc", "1e400", "nan", "", "  ", "inf", "2.5", "0", "65", "-2", "1_000", "0x10", "9" * 50]


def make_case(seed: int = 7) -> tuple[dict[str, Any], convnet.ConvNet, np.ndarray]:
    net = convnet.build("batch", seeds=(seed, seed + 1))
    x = convnet.digits_images()[0]
    rng = np.random.default_rng(seed)
    accuracy = {
        "batch": {b: rng.uniform(0.5, 1, 2) for b in convnet.SIZES},
        **{k: rng.uniform(0.5, 1, 2) for k in ("layer", "instance", "group")},
    }
    return cm.case_data(net, x, accuracy), net, x


@pytest.fixture(scope="module")
def built() -> tuple[dict[str, Any], Any, np.ndarray]:
    return make_case()


# ------------------------------------------------------------------ the Python model vs normcore
@pytest.mark.parametrize("per_device", [1, 2, 3, 8, 31, 32, 64])
def test_ratios_are_normcores_variance_ratios(built: tuple, per_device: int) -> None:
    case, net, x = built
    want = convnet.variance_ratios(net, x[: cm.IMAGES], per_device)[:, 0, :]
    np.testing.assert_allclose(cm.ratios(case, per_device), want, rtol=1e-9)
    f = cm.figures(cm.choose(cm.initial(), "per_device", str(per_device)), case)
    assert f["devices"] == cm.IMAGES // per_device
    np.testing.assert_allclose(f["ratio_mean"], want.mean(), rtol=1e-9)
    np.testing.assert_allclose(f["ratio_spread"], want.std(axis=0).mean(), rtol=1e-7, atol=1e-12)


@pytest.mark.parametrize("kind", cm.NORMALISERS)
@pytest.mark.parametrize("per_device", [2, 32])
def test_pooled_counts_are_the_chapters(built: tuple, kind: str, per_device: int) -> None:
    case, _, _ = built
    state = {"normaliser": kind, "per_device": str(per_device), "groups": str(convnet.GROUPS)}
    assert tuple(cm.figures(state, case)["pooled"]) == convnet.pooled(kind, per_device)


def test_group_counts_and_statistics_follow_the_groups(built: tuple) -> None:
    case, _, _ = built
    for groups in (1, 2, 4, 8):
        state = {"normaliser": "group", "per_device": "4", "groups": str(groups)}
        f = cm.figures(state, case)
        assert f["pooled"] == [8 // groups * 64, 8 // groups * 16]
        assert f["statistics"] == 4 * groups
        assert ("accuracy" in f) == (groups == convnet.GROUPS)  # only the group count trained
        assert "ratio_mean" not in f  # a per-image normaliser: nothing strays between devices
    layer = cm.figures({"normaliser": "layer", "per_device": "4", "groups": "x"}, case)
    assert (
        layer["pooled"]
        == cm.figures({**cm.initial(), "normaliser": "group", "groups": "1"}, case)["pooled"]
    )  # one group is layer norm; the groups box is not read for it


def test_accuracy_is_looked_up_where_the_chapter_trained(built: tuple) -> None:
    case, _, _ = built
    for b in range(1, 65):
        f = cm.figures(cm.choose(cm.initial(), "per_device", str(b)), case)
        assert ("accuracy" in f) == (b in convnet.SIZES)
        if b in convnet.SIZES:
            runs = case["accuracy"]["batch"][str(b)]
            assert f["accuracy"] == [np.mean(runs), min(runs), max(runs)]


@pytest.mark.parametrize("text", BAD)
@pytest.mark.parametrize("key", ["per_device", "groups"])
def test_bad_text_is_refused_with_a_typed_error_before_any_arithmetic(
    built: tuple, key: str, text: str
) -> None:
    case, _, _ = built
    state = {**cm.initial(), "normaliser": "group", key: text}
    kind = {"abc": NotANumberError, "1e400": NonFiniteError, "nan": NotANumberError}.get(
        text, NormcoreError
    )
    with pytest.raises(kind) as caught:
        cm.figures(state, case)
    assert isinstance(caught.value, NormcoreError)
    assert friendly(caught.value).endswith(".")
    if text in ("2.5", "0", "65", "-2"):
        assert isinstance(caught.value, SettingError)


def test_the_widget_answers_on_the_kernel_and_says_why_it_cannot(built: tuple) -> None:
    from normcore.widgets.convnet import convnet_widget

    case, _, _ = built
    w = convnet_widget(case)
    w.request = "token"
    assert w.kernel["figures"] == cm.figures(cm.initial(), case)
    w.act(cm.choose, "per_device", "abc")
    assert w.kernel["figures"] == {"error": "Images a device holds: 'abc' is not a number."}
    assert w.kernel["state"]["per_device"] == "abc"
    assert "batch" in repr(w)


def test_the_bundle_is_one_module() -> None:
    text = bundle("convnet.js")
    assert 'from "./' not in text and "export default {render}" in text


# ------------------------------------------------------------------ the JavaScript model in node
DRIVER = """
const out = input.runs.map(actions => {
  let state = {normaliser: "batch", per_device: "2", groups: "2"};
  return actions.map(([key, value]) => {
    state = m.choose(state, key, value);
    try { return {state, figures: m.figures(state, input.c)}; }
    catch (e) { return {state, error: e.message}; }
  });
});
answer(out);
"""


def random_actions(rng: np.random.Generator, n: int) -> list[tuple[str, str]]:
    out = []
    for _ in range(n):
        key = str(rng.choice(["normaliser", "per_device", "per_device", "groups"]))
        if key == "normaliser":
            out.append((key, str(rng.choice(cm.NORMALISERS))))
        elif rng.random() < 0.25:
            out.append((key, str(rng.choice(BAD))))
        else:
            out.append((key, str(int(rng.integers(1, 65 if key == "per_device" else 9)))))
    return out


def python_answer(state: cm.State, case: dict[str, Any]) -> dict[str, Any]:
    try:
        return {"state": state, "figures": cm.figures(state, case)}
    except NormcoreError as error:
        return {"state": state, "error": str(error)}


def hold(page: dict[str, Any], want: dict[str, Any], where: str) -> None:
    """The JavaScript model's answer `page` against normcore's `want`: the same state, the same
    error sentence, the same figures (counts exactly, the rest to 1e-12 relative)."""
    assert page["state"] == want["state"], where
    assert page.get("error") == want.get("error"), where
    if "figures" not in want:
        return
    got, f = page["figures"], want["figures"]
    assert sorted(got) == sorted(f), where
    for key, value in f.items():
        if isinstance(value, int) or key == "pooled":
            assert got[key] == value, (where, key)
        else:
            np.testing.assert_allclose(got[key], value, rtol=1e-12, atol=1e-15, err_msg=where)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_javascript_model_is_the_python_model(built: tuple) -> None:
    case, _, _ = built
    rng = np.random.default_rng(10)
    runs = [random_actions(rng, 30) for _ in range(20)]
    runs.append([("per_device", t) for t in BAD] + [("normaliser", "group")])
    runs[-1] += [("groups", t) for t in BAD]
    answers = run(shutil.which("node"), "convnet-model.js", DRIVER, {"c": case, "runs": runs})
    errors = 0
    for r, (actions, seen) in enumerate(zip(runs, answers, strict=True)):
        state = cm.initial()
        for n, ((key, value), page) in enumerate(zip(actions, seen, strict=True)):
            state = cm.choose(state, key, value)
            want = python_answer(state, case)
            errors += "error" in want
            hold(page, want, f"run {r}, action {n + 1} {(key, value)!r}")
    assert errors >= 20  # the runs did test the refusals
