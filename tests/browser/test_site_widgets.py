"""The widgets on the BUILT static site answer the reader in the page, with normcore's numbers.

The site is served from 127.0.0.1 with no kernel, and nothing may leave the machine. Each test
drives a widget through seeded random reader actions (a fixed opening that types every kind of
bad input, then random ones) and, after each action, holds every figure on show to normcore's
own answer for the same state, computed here in Python by the widget's Python model: each
``data-value`` to 1e-12 relative (to the largest figure of its table), each number as shown to
the precision it is shown at. The page's state (cells, boxes, buttons, sliders, error sentences)
must be the model's too. No console error is allowed.
"""

from __future__ import annotations

import math
import statistics
from typing import Any
from urllib.parse import urlparse

import numpy as np
import pytest

from normcore.errors import NormcoreError
from normcore.widgets import playground_model as pm
from normcore.widgets._input import friendly

from .test_site import HTML, site  # noqa: F401  (the served _build/html)

ACTIONS = 220
BAD_TEXTS = ["abc", "1e400", "nan", "", "  ", "inf", "1_000", "2**3", "0x10", "9" * 50]
READ = """root => {
  const box = document.querySelector(root);
  const figures = {};
  for (const e of box.querySelectorAll('.nc-readout [data-key]')) {
    figures[e.dataset.key] = [Number(e.dataset.value), e.textContent.trim()];
  }
  return {
    figures,
    where: box.querySelector('.nc-where').dataset.runs,
    errors: Array.from(box.querySelectorAll('.nc-message .nc-error'), e => e.textContent.trim()),
    texts: Array.from(box.querySelectorAll('input.nc-cell'),
                      e => [Number(e.dataset.row), Number(e.dataset.feature), e.value]),
    active: Array.from(box.querySelectorAll('.nc-grid input[type=checkbox]'), e => e.checked),
    pressed: Array.from(box.querySelectorAll('.nc-toggle button[aria-pressed=true]'),
                        e => e.dataset.value),
    sliders: Array.from(box.querySelectorAll('input[type=range]'),
                        e => [e.dataset.which, Number(e.dataset.feature), Number(e.dataset.value),
                              e.nextElementSibling.textContent]),
    updateMs: Number(box.dataset.updateMs),
  };
}"""


class Watched:
    """A page on the served site with its console errors and its off-machine requests."""

    def __init__(self, browser: Any, url: str) -> None:
        self.context = browser.new_context(viewport={"width": 1440, "height": 900})
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.outside: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error"
                     else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.outside.append(r.url) if urlparse(r.url).hostname
                     not in ("127.0.0.1", None) and not r.url.startswith(("data:", "blob:"))
                     else None)
        self.page.goto(url, wait_until="load")

    def close(self) -> None:
        self.context.close()


def page_or_skip(name: str) -> None:
    if not (HTML / "book" / name).exists():
        pytest.skip(f"_build/html/book/{name} is missing: build the site first (make book)")


# ---------------------------------------------------------------------------------- playground
def expected_figures(state: pm.State) -> dict[str, tuple[float, float]]:
    """normcore's figures for `state`, keyed as the page keys them: key -> (value, table scale)."""
    f = pm.figures(state)
    out: dict[str, tuple[float, float]] = {}
    if f["answer"] is None:
        return out

    def put(prefix: str, values: list) -> None:
        flat = np.abs(np.asarray(values, dtype=np.float64))
        scale = float(flat.max()) if flat.size else 0.0
        if flat.ndim == 2:
            for r, row in enumerate(values):
                for j, v in enumerate(row):
                    out[f"{prefix}:{r},{j}"] = (v, scale)
        else:
            for j, v in enumerate(values):
                out[f"{prefix}:{j}"] = (v, scale)

    put("answer", f["answer"])
    # the gap is a difference of nearly equal numbers: held to the scale of the answer table
    out["gap"] = (f["gap"], float(np.abs(np.asarray(f["answer"])).max()))
    for key in ("batch_mean", "batch_variance", "batch_deviation", "batch_share", "running_mean",
                "running_variance", "running_deviation", "row_mean", "row_variance",
                "row_deviation"):
        if key in f:
            put(key, f[key])
    return out


def shown_digits(key: str) -> float:
    """The relative precision a figure is shown at: 3 significant figures for the gap, else 7."""
    return 5e-3 if key == "gap" else 5e-7


def compare(got: dict[str, Any], state: pm.State, where: str, runs: str = "page") -> None:
    want = expected_figures(state)
    assert sorted(got["figures"]) == sorted(want), f"{where}: the page shows other figures"
    for key, (value, scale) in want.items():
        page_value, text = got["figures"][key]
        assert abs(page_value - value) <= 1e-12 * max(abs(value), scale, 1e-300), (
            f"{where}: {key} is {page_value!r} in the page, {value!r} by normcore")
        shown = float(text)
        assert abs(shown - value) <= shown_digits(key) * abs(value) + 1e-12 * scale, (
            f"{where}: {key} shows {text!r}, normcore {value!r}")
    texts = {(i, j): t for i, j, t in got["texts"]}
    assert texts == {(i, j): t for i, row in enumerate(state["texts"]) for j, t in enumerate(row)}
    assert got["active"] == state["active"], where
    assert sorted(got["pressed"]) == sorted([state["kind"], state["purpose"]]), where
    for which, j, value, text in got["sliders"]:
        # Undo exactly puts computed figures (a deviation, a mean) on the sliders
        assert abs(value - state[which][j]) <= 1e-12 * abs(state[which][j]), (
            f"{where}: {which} {j + 1} is {value!r} in the page, {state[which][j]!r} by normcore")
        assert abs(float(text) - value) <= 5e-5 + 1e-12 * abs(value), f"{where}: {which} {j + 1}"
    assert got["errors"] == [f"{friendly(e)} That cell keeps its last number."
                             for e in pm.errors(state)], where
    assert got["where"] == runs, f"{where}: the widget says it runs on {got['where']!r}"


def test_playground_answers_in_the_page(browser: Any, site: str) -> None:  # noqa: F811
    page_or_skip("02-worked-column.html")
    watched = Watched(browser, f"{site}/book/02-worked-column.html")
    page = watched.page
    root = ".nc-playground"
    page.wait_for_selector(f"{root} .nc-readout td[data-key]", timeout=30_000)
    state = pm.initial()
    read = lambda: page.evaluate(READ, root)  # noqa: E731
    compare(read(), state, "the opening view")
    # it fits a 1440 x 900 screen: the answer within one screen of the controls' top, sliders
    # wide enough to aim at both ends, a hint on how a typed cell is used
    fit = page.evaluate("""root => { const box = document.querySelector(root);
      const top = box.querySelector('.nc-controls').getBoundingClientRect().top;
      const answer = box.querySelector('.nc-readout table').getBoundingClientRect().bottom;
      return {span: answer - top, slider: box.querySelector('input[type=range]')
              .getBoundingClientRect().width, hint: box.querySelector('.nc-hint').textContent};
    }""", root)
    assert fit["span"] <= 900, f"the answer ends {fit['span']:.0f} px below the controls' top"
    assert fit["slider"] >= 200 and "Enter" in fit["hint"], fit

    # the time of one update, default block: purpose away and back, each a full update
    times = []
    for _ in range(15):
        page.locator(f"{root} .nc-toggle button[data-value=predicting]").click()
        page.locator(f"{root} .nc-toggle button[data-value=training]").click()
        times.append(read()["updateMs"])

    rng = np.random.default_rng(13)
    opening = [("type", 0, 1, text) for text in ("abc", "1e400", "nan", "")] + [
        ("type", 0, 1, "8"), ("type", 2, 0, "  ")]
    for n in range(ACTIONS):
        rows, features = len(state["texts"]), len(state["scale"])
        if n < len(opening):
            action = opening[n]
        else:
            kind = rng.choice(["type", "type", "type", "row", "kind", "purpose", "slider",
                               "slider", "resize", "undo", "step", "step", "fresh"])
            if kind == "type":
                text = (str(rng.choice(BAD_TEXTS)) if rng.random() < 0.2 else
                        str(rng.choice([f"{rng.integers(-30, 30)}",
                                        f"{rng.normal(0, 20):.3f}", f"{rng.normal(0, 3):.2e}",
                                        f".{rng.integers(0, 99)}"])))
                action = ("type", int(rng.integers(rows)), int(rng.integers(features)), text)
            elif kind == "row":
                action = ("row", int(rng.integers(rows)))
            elif kind in ("kind", "purpose"):
                action = (kind, str(rng.choice(pm.KINDS if kind == "kind" else pm.PURPOSES)))
            elif kind == "slider":
                action = ("slider", str(rng.choice(["scale", "shift"])),
                          int(rng.integers(features)), float(rng.uniform(-1, 1)))
            elif kind == "resize":
                action = ("resize", *[(1, 0), (-1, 0), (0, 1), (0, -1)][rng.integers(4)])
            else:
                action = (kind,)
        where = f"action {n + 1} {action}"
        if action[0] == "type":
            _, i, j, text = action
            box = page.locator(f"{root} input.nc-cell[data-row='{i}'][data-feature='{j}']")
            box.fill(text)
            box.press("Enter")
            if text != state["texts"][i][j]:
                state = pm.set_cell(state, i, j, text)
        elif action[0] == "row":
            page.locator(f"{root} .nc-grid input[type=checkbox]").nth(action[1]).click()
            state = pm.set_active(state, action[1], not state["active"][action[1]])
        elif action[0] in ("kind", "purpose"):
            page.locator(f"{root} .nc-toggle button[data-value={action[1]}]").click()
            if state[action[0]] != action[1]:
                setter = pm.set_kind if action[0] == "kind" else pm.set_purpose
                state = setter(state, action[1])
        elif action[0] == "slider":
            _, which, j, share = action
            slider = page.locator(f"{root} input[type=range][data-which={which}]"
                                  f"[data-feature='{j}']")
            # a reader drags to a point of the slider's grid: `share` of the way from 0 to an end
            value = slider.evaluate(
                "(e, share) => { const end = share < 0 ? Number(e.min) : Number(e.max);"
                " e.value = String(Math.abs(share) * end);"
                " e.dispatchEvent(new Event('input', {bubbles: true})); return Number(e.value); }",
                share)
            assert math.isfinite(value)
            if value != state[which][j]:
                state = pm.set_parameter(state, which, j, value)
        elif action[0] == "resize":
            label = {(1, 0): "+ row", (-1, 0): "− row", (0, 1): "+ feature",
                     (0, -1): "− feature"}[action[1:]]
            page.locator(root).get_by_role("button", name=label, exact=True).click()
            state = pm.resize(state, *action[1:])
        else:
            page.locator(root).get_by_role(
                "button", name={"undo": "Undo exactly", "step": "Step",
                                "fresh": "Fresh layer"}[action[0]], exact=True).click()
            state = {"undo": pm.undo, "step": pm.step, "fresh": pm.fresh}[action[0]](state)
        compare(read(), state, where)

    shot = HTML.parent / "screenshots"
    shot.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shot / "playground-after-actions.png"))
    errors, outside = watched.errors, watched.outside
    watched.close()
    print(f"\nplayground on the site: one update for the default block "
          f"{statistics.median(times):.2f} ms (median of {len(times)}; "
          f"min {min(times):.2f}, max {max(times):.2f})")
    assert not errors, f"console errors: {errors}"
    assert not outside, f"requests leaving 127.0.0.1: {outside}"


# --------------------------------------------------------------------------- chapter 3's explorer
READ_KEYED = """root => {
  const box = document.querySelector(root);
  const figures = {};
  for (const e of box.querySelectorAll('.nc-readout [data-key]')) {
    figures[e.dataset.key] = [Number(e.dataset.value), e.textContent.trim()];
  }
  const error = box.querySelector('.nc-message .nc-error');
  return {figures, where: box.querySelector('.nc-where').dataset.runs,
          error: error ? error.textContent.trim() : null,
          fields: Object.fromEntries(Array.from(box.querySelectorAll('.nc-form [data-key]'),
                                                e => [e.dataset.key, e.value]))};
}"""
# the oracle is a central difference with step 1e-6: its last digits are rounding, different
# between any two implementations of the same arithmetic (numpy's and the page's)
ORACLE_NOISE = 1e-7


def routes_expected(f: dict[str, Any]) -> dict[str, tuple[float, float, str]]:
    """key -> (normcore's value, the tolerance it is held to, how it is shown)."""
    scale = max(1.0, float(np.abs(np.asarray(f["naive"])).max()),
                float(np.abs(np.asarray(f["true"])).max()))
    out: dict[str, tuple[float, float, str]] = {}
    for name, key, tol in (("true", "collected", 1e-12), ("naive", "naive", 1e-12),
                           ("oracle", "oracle", ORACLE_NOISE)):
        for (i, j), v in np.ndenumerate(np.asarray(f[name])):
            out[f"{key}:{i},{j}"] = (float(v), tol * scale, ".4f")
    n = len(f["true"])
    for name in ("true_sums", "naive_sums"):
        for j, v in enumerate(f[name]):
            out[f"{name}:{j}"] = (v, 1e-12 * scale * n, "sum")
    out["true_gap"] = (f["true_gap"], ORACLE_NOISE * scale, "noise")
    out["naive_error"] = (f["naive_error"], ORACLE_NOISE * scale, ".4f")
    out["largest_true"] = (f["largest_true"], 1e-12 * scale, ".4f")
    out["wrong_sign"] = (f["wrong_sign"], 0.0, "int")
    out["cells"] = (f["cells"], 0.0, "int")
    return out


def routes_compare(got: dict[str, Any], f: dict[str, Any], where: str) -> None:
    want = routes_expected(f)
    assert sorted(got["figures"]) == sorted(want), f"{where}: the page shows other figures"
    for key, (value, tol, shown_as) in want.items():
        page_value, text = got["figures"][key]
        assert abs(page_value - value) <= tol, (
            f"{where}: {key} is {page_value!r} in the page, {value!r} by normcore")
        if shown_as == ".4f":  # shown to 4 decimals: within half a unit (and the noise allowed)
            assert abs(float(text) - value) <= 5e-5 + tol + 1e-12, f"{where}: {key} {text!r}"
        elif shown_as == "sum":
            assert abs(float(text) - (0.0 if abs(value) < 5e-5 else value)) <= 5e-5 + tol
        elif shown_as == "int":
            assert int(text) == value, f"{where}: {key} shows {text!r}"
        else:  # the oracle's rounding, shown as it is: both far below the slopes' scale
            assert float(text) <= tol and value <= tol, f"{where}: {key} {text!r}"


def test_routes_explorer_answers_in_the_page(browser: Any, site: str) -> None:  # noqa: F811
    from normcore.widgets import routes_model as rm

    page_or_skip("03-backward.html")
    watched = Watched(browser, f"{site}/book/03-backward.html")
    page, root = watched.page, ".nc-routes"
    page.wait_for_selector(f"{root} .nc-readout td[data-key]", timeout=30_000)
    read = lambda: page.evaluate(READ_KEYED, root)  # noqa: E731
    state = rm.initial()
    good = rm.figures(state)
    routes_compare(read(), good, "the opening view")
    assert read()["where"] == "page"

    rng = np.random.default_rng(3)
    numbers = lambda k: " ".join(f"{v:.2f}" for v in rng.normal(0, 5, k))  # noqa: E731
    opening = [("source", "random"), ("seed", "abc"), ("seed", "1e400"), ("seed", "nan"),
               ("seed", ""), ("seed", "5"), ("source", "typed"), ("typed", "1, x\n2, 3"),
               ("typed", "")]
    for n in range(ACTIONS):
        if n < len(opening):
            key, value = opening[n]
        else:
            key = str(rng.choice(["source", "slope", "rows", "columns", "seed", "typed",
                                  "typed_slope"]))
            if key == "source":
                value = str(rng.choice(["worked", "random", "typed"]))
            elif key == "slope":
                value = str(rng.choice(["counting", "ones", "random", "typed"]))
            elif key in ("rows", "columns", "seed"):
                value = (str(rng.choice(BAD_TEXTS + ["13", "0", "2.5"])) if rng.random() < 0.2
                         else str(int(rng.integers(1, 7 if key != "seed" else 1000))))
            else:
                r, c = int(rng.integers(1, 5)), int(rng.integers(1, 4))
                value = ("\n".join(numbers(c) for _ in range(r)) if rng.random() > 0.2
                         else str(rng.choice(BAD_TEXTS)))
        field = page.locator(f"{root} .nc-form [data-key={key}]")
        if key in ("source", "slope"):
            field.select_option(value)
        else:
            field.fill(value)
            field.press("Tab")  # leaving the box commits it
        if value != state[key]:
            state = rm.choose(state, key, value)
        where = f"action {n + 1} ({key} = {value!r})"
        got = read()
        try:
            figures = rm.figures(state)
        except NormcoreError as error:
            assert got["error"] == (f"{friendly(error)} The figures below are for the last "
                                    "block that could be used."), where
            routes_compare(got, good, where)
        else:
            good = figures
            assert got["error"] is None, where
            routes_compare(got, good, where)
        assert got["fields"] == {k: v for k, v in state.items()}, where
    errors, outside = watched.errors, watched.outside
    watched.close()
    assert not errors, f"console errors: {errors}"
    assert not outside, f"requests leaving 127.0.0.1: {outside}"


# ------------------------------------------------------------------------- chapter 5's widget
def test_weightnorm_step_answers_in_the_page(browser: Any, site: str) -> None:  # noqa: F811
    from normcore.widgets import weightnorm_model as wm

    page_or_skip("05-weight-norm.html")
    watched = Watched(browser, f"{site}/book/05-weight-norm.html")
    page, root = watched.page, ".nc-weightnorm"
    page.wait_for_selector(f"{root} .nc-readout td[data-key]", timeout=30_000)
    read = lambda: page.evaluate(READ_KEYED, root)  # noqa: E731
    case = wm.case_data()
    state = wm.initial()
    good = wm.figures(state, case)

    def check(got: dict[str, Any], f: dict[str, Any], where: str) -> None:
        want = {f"{k}:{i}": v for k in ("before", "weightnorm", "dense")
                for i, v in enumerate(f[k])}
        want["distance"] = f["distance"]
        assert sorted(got["figures"]) == sorted(want), where
        for key, value in want.items():
            page_value, text = got["figures"][key]
            assert abs(page_value - value) <= 1e-12 * max(abs(value), 1.0), (
                f"{where}: {key} is {page_value!r} in the page, {value!r} by normcore")
            assert abs(float(text) - value) <= 5e-5 + 1e-12, f"{where}: {key} shows {text!r}"

    check(read(), good, "the opening view")
    rng = np.random.default_rng(5)
    opening = [("length:1", "abc"), ("length:1", "1e400"), ("length:1", "nan"),
               ("length:1", ""), ("length:1", "0"), ("length:1", "4"), ("stride", "abc")]
    for n in range(ACTIONS):
        if n < len(opening):
            key, value = opening[n]
        else:
            key = str(rng.choice(["length:0", "length:1", "length:2", "stride"]))
            value = (str(rng.choice(BAD_TEXTS + ["0", "2000"])) if rng.random() < 0.15
                     else f"{rng.uniform(-5, 5):.3f}" if key != "stride"
                     else f"{rng.uniform(-0.5, 2):.3g}")
        box = page.locator(f"{root} .nc-form [data-key='{key}']")
        box.fill(value)
        box.press("Enter")
        current = state["stride"] if key == "stride" else state["lengths"][int(key[-1])]
        if value != current:
            state = (wm.set_stride(state, value) if key == "stride"
                     else wm.set_length(state, int(key[-1]), value))
        where = f"action {n + 1} ({key} = {value!r})"
        got = read()
        try:
            f = wm.figures(state, case)
        except NormcoreError as error:
            assert got["error"] == (f"{friendly(error)} The table shows the last step that "
                                    "could be taken."), where
            check(got, good, where)
        else:
            good = f
            assert got["error"] is None, where
            check(got, good, where)
    errors, outside = watched.errors, watched.outside
    watched.close()
    assert not errors, f"console errors: {errors}"
    assert not outside, f"requests leaving 127.0.0.1: {outside}"


# ------------------------------------------------------------------------- chapter 4's explorer
def test_axes_explorer_answers_in_the_page(browser: Any, site: str) -> None:  # noqa: F811
    from normcore.widgets import axes_model as am

    page_or_skip("04-rows-columns.html")
    watched = Watched(browser, f"{site}/book/04-rows-columns.html")
    page, root = watched.page, ".nc-axes"
    page.wait_for_selector(f"{root} .nc-readout td[data-key]", timeout=30_000)
    read = lambda: page.evaluate(READ_KEYED, root)  # noqa: E731
    values = am.data_values()
    state = am.initial()
    good = am.figures(state, values)

    def check(got: dict[str, Any], f: dict[str, Any], where: str) -> None:
        scale = max(1.0, f["largest_true"])
        want = {f"output:{i},{j}": (v, 1e-12 * scale, ".4f")
                for (i, j), v in np.ndenumerate(np.asarray(f["output"]))}
        want["count"] = (f["count"], 0.0, "int")
        want["largest_true"] = (f["largest_true"], 1e-12 * scale, ".4f")
        # the oracle's gap and a centred block's sums are rounding: held to its size only
        want["true_gap"] = (f["true_gap"], ORACLE_NOISE * scale, "noise")
        want["largest_sum"] = ((f["largest_sum"], 1e-12 * scale * f["count"], ".4f")
                               if not f["centred"] else
                               (f["largest_sum"], 1e-12 * scale * f["count"], "noise"))
        figures = dict(got["figures"])
        shape_value, shape_text = figures.pop("statistics_shape")
        shape = f["statistics_shape"]
        assert shape_text == f"({', '.join(map(str, shape))}{',' if len(shape) == 1 else ''})"
        assert sorted(figures) == sorted(want), where
        for key, (value, tol, shown_as) in want.items():
            page_value, text = figures[key]
            assert abs(page_value - value) <= tol, (
                f"{where}: {key} is {page_value!r} in the page, {value!r} by normcore")
            if shown_as == ".4f":
                assert abs(float(text) - value) <= 5e-5 + tol, f"{where}: {key} {text!r}"
            elif shown_as == "int":
                assert int(text) == value, where
            else:
                assert float(text) <= tol and value <= tol, f"{where}: {key} {text!r}"

    check(read(), good, "the opening view")
    rng = np.random.default_rng(4)
    opening = [("data", "images"), ("axis", "group"), ("groups", "abc"), ("groups", "1e400"),
               ("groups", "nan"), ("groups", ""), ("groups", "3"), ("groups", "4")]
    for n in range(ACTIONS):
        if n < len(opening):
            key, value = opening[n]
        else:
            key = str(rng.choice(["data", "axis", "axis", "groups"]))
            value = {"data": lambda: str(rng.choice(["block", "images"])),
                     "axis": lambda: str(rng.choice(am.AXES)),
                     "groups": lambda: str(rng.choice(BAD_TEXTS + ["1", "2", "4", "3", "8",
                                                                   "0", "2.0", "-2"]))}[key]()
        field = page.locator(f"{root} .nc-form [data-key={key}]")
        if key == "groups":
            field.fill(value)
            field.press("Enter")
        else:
            field.select_option(value)
        if value != state[key]:
            state = am.choose(state, key, value)
        where = f"action {n + 1} ({key} = {value!r})"
        got = read()
        try:
            f = am.figures(state, values)
        except NormcoreError as error:
            assert got["error"] == (f"{friendly(error)} The figures below are for the last "
                                    "choice that could be computed."), where
            check(got, good, where)
        else:
            good = f
            assert got["error"] is None, where
            check(got, good, where)
        assert got["fields"] == state, where
    errors, outside = watched.errors, watched.outside
    watched.close()
    assert not errors, f"console errors: {errors}"
    assert not outside, f"requests leaving 127.0.0.1: {outside}"


# ----------------------------------------------------------------------- chapter 1's switch
def test_shift_chart_switches_in_the_page(browser: Any, site: str) -> None:  # noqa: F811
    from normcore.experiments.shift import crowd_shift
    from normcore.widgets.shift_chart import describe

    page_or_skip("01-moving-target.html")
    want = {key: describe(crowd_shift(key, seed=0)) for key in ("none", "batch")}
    watched = Watched(browser, f"{site}/book/01-moving-target.html")
    page, root = watched.page, ".nc-shift"
    page.wait_for_selector(f"{root} .nc-readout [data-key]", timeout=30_000)
    read = """root => { const box = document.querySelector(root);
      return {figures: Object.fromEntries(Array.from(box.querySelectorAll('.nc-readout [data-key]'),
                                                     e => [e.dataset.key, e.textContent])),
              src: box.querySelector('img.nc-chart').src,
              pressed: box.querySelector('button[aria-pressed=true]').dataset.value,
              runs: box.querySelector('.nc-where').dataset.runs}; }"""
    rng = np.random.default_rng(1)
    shown, chosen = {}, "none"
    for n in range(ACTIONS + 1):
        if n:
            chosen = str(rng.choice(["none", "batch"]))
            page.locator(f"{root} button[data-value={chosen}]").click()
        got = page.evaluate(read, root)
        expected = {k: v for k, v in want[chosen].items() if v is not None}
        assert got["figures"] == expected, f"action {n}: {chosen}"
        assert got["pressed"] == chosen and got["runs"] == "page"
        assert shown.setdefault(chosen, got["src"]) == got["src"]  # each network its own chart
    assert shown["none"] != shown["batch"]
    errors, outside = watched.errors, watched.outside
    watched.close()
    assert not errors, f"console errors: {errors}"
    assert not outside, f"requests leaving 127.0.0.1: {outside}"
