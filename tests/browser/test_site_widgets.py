"""The widgets on the BUILT static site answer the reader in the page, with normcore's numbers.

The site is served from 127.0.0.1 with no kernel, and nothing may leave the machine. Each test
drives a widget through seeded random reader actions (a fixed opening that types every kind of
bad input, then random ones) and, after each action, holds every figure on show to normcore's
own answer for the same state, computed here in Python by the widget's Python model: each
``data-value`` to 1e-12 relative (to the largest figure of its table), each number as shown to
the precision it is shown at. The page's state (cells, boxes, buttons, sliders, error sentences)
must be the model's too. No console error is allowed.

Every widget runs the same loop (`drive`): the opening view checked, then ACTIONS actions, each
chosen by the widget's seeded action generator, done in the page and in the widget's Python model,
and the page checked against the model's answer. The widgets of chapters 3, 4 and 5 (form fields
keyed by the state, see `Keyed`) also share how an action is done and checked.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
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
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on(
            "request",
            lambda r: (
                self.outside.append(r.url)
                if urlparse(r.url).hostname not in ("127.0.0.1", None)
                and not r.url.startswith(("data:", "blob:"))
                else None
            ),
        )
        self.page.goto(url, wait_until="load")

    def close(self) -> None:
        self.context.close()

    def __enter__(self) -> Any:
        return self.page

    def __exit__(self, kind: type | None, *_: object) -> None:
        """Close the page; when the test's body went through, the page must have logged no
        console error and sent no request off the machine."""
        errors, outside = self.errors, self.outside
        self.close()
        if kind is None:
            assert not errors, f"console errors: {errors}"
            assert not outside, f"requests leaving 127.0.0.1: {outside}"


def page_or_skip(name: str) -> None:
    if not (HTML / "book" / name).exists():
        pytest.skip(f"_build/html/book/{name} is missing: build the site first (make book)")


def drive(
    state: Any,
    choose: Callable[[int, Any], Any],
    act: Callable[[Any, Any], Any],
    check: Callable[[Any, str], None],
) -> Any:
    """The seeded loop every widget test runs; returns the model's last state.

    `check(state, where)` holds what the page shows to the widget's Python model for `state`
    (normcore's answer). `choose(n, state)` is the widget's action generator: its n-th reader
    action (seeded), given the state on show. `act(state, action)` does it in the page and
    returns the model's state after it.
    """
    check(state, "the opening view")
    for n in range(ACTIONS):
        action = choose(n, state)
        state = act(state, action)
        check(state, f"action {n + 1} {action!r}")
    return state


# ---------------------------------------------------------------------------------- playground
def expected_figures(state: pm.State) -> dict[str, tuple[float, float]]:
    """normcore's figures for `state`, keyed as the page keys them: key -> (value, table scale)."""
    f = pm.figures(state)
    out: dict[str, tuple[float, float]] = {}
    if f["output"] is None:
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

    put("output", f["output"])
    # the gap is a difference of nearly equal numbers: held to the scale of the output table
    out["gap"] = (f["gap"], float(np.abs(np.asarray(f["output"])).max()))
    for key in (
        "batch_mean",
        "batch_variance",
        "batch_divisor",
        "batch_share",
        "running_mean",
        "running_var",
        "running_divisor",
        "row_mean",
        "row_variance",
        "row_divisor",
    ):
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
            f"{where}: {key} is {page_value!r} in the page, {value!r} by normcore"
        )
        shown = float(text)
        assert abs(shown - value) <= shown_digits(key) * abs(value) + 1e-12 * scale, (
            f"{where}: {key} shows {text!r}, normcore {value!r}"
        )
    texts = {(i, j): t for i, j, t in got["texts"]}
    assert texts == {(i, j): t for i, row in enumerate(state["texts"]) for j, t in enumerate(row)}
    assert got["active"] == state["active"], where
    assert sorted(got["pressed"]) == sorted([state["kind"], state["mode"]]), where
    for which, j, value, text in got["sliders"]:
        # Undo exactly puts computed figures (a deviation, a mean) on the sliders
        assert abs(value - state[which][j]) <= 1e-12 * abs(state[which][j]), (
            f"{where}: {which} {j + 1} is {value!r} in the page, {state[which][j]!r} by normcore"
        )
        assert abs(float(text) - value) <= 5e-5 + 1e-12 * abs(value), f"{where}: {which} {j + 1}"
    assert got["errors"] == [
        f"{friendly(e)} That cell keeps its last number." for e in pm.errors(state)
    ], where
    assert got["where"] == runs, f"{where}: the widget says it runs on {got['where']!r}"


def playground_actions(rng: np.random.Generator) -> Callable[[int, pm.State], tuple]:
    """The playground's action generator: every kind of bad text first, then random actions."""
    opening = [("type", 0, 1, text) for text in ("abc", "1e400", "nan", "")] + [
        ("type", 0, 1, "8"),
        ("type", 2, 0, "  "),
    ]

    def choose(n: int, state: pm.State) -> tuple:
        if n < len(opening):
            return opening[n]
        rows, features = len(state["texts"]), len(state["scale"])
        kind = rng.choice(
            [
                "type",
                "type",
                "type",
                "row",
                "kind",
                "mode",
                "slider",
                "slider",
                "resize",
                "undo",
                "step",
                "step",
                "fresh",
            ]
        )
        if kind == "type":
            text = (
                str(rng.choice(BAD_TEXTS))
                if rng.random() < 0.2
                else str(
                    rng.choice(
                        [
                            f"{rng.integers(-30, 30)}",
                            f"{rng.normal(0, 20):.3f}",
                            f"{rng.normal(0, 3):.2e}",
                            f".{rng.integers(0, 99)}",
                        ]
                    )
                )
            )
            return ("type", int(rng.integers(rows)), int(rng.integers(features)), text)
        if kind == "row":
            return ("row", int(rng.integers(rows)))
        if kind in ("kind", "mode"):
            return (kind, str(rng.choice(pm.KINDS if kind == "kind" else pm.MODES)))
        if kind == "slider":
            return (
                "slider",
                str(rng.choice(["scale", "shift"])),
                int(rng.integers(features)),
                float(rng.uniform(-1, 1)),
            )
        if kind == "resize":
            return ("resize", *[(1, 0), (-1, 0), (0, 1), (0, -1)][rng.integers(4)])
        return (str(kind),)

    return choose


def playground_act(page: Any, root: str) -> Callable[[pm.State, tuple], pm.State]:
    """One playground action done in the page; returns the model's state after it."""

    def act(state: pm.State, action: tuple) -> pm.State:
        if action[0] == "type":
            _, i, j, text = action
            box = page.locator(f"{root} input.nc-cell[data-row='{i}'][data-feature='{j}']")
            box.fill(text)
            box.press("Enter")
            return pm.set_cell(state, i, j, text) if text != state["texts"][i][j] else state
        if action[0] == "row":
            page.locator(f"{root} .nc-grid input[type=checkbox]").nth(action[1]).click()
            return pm.set_active(state, action[1], not state["active"][action[1]])
        if action[0] in ("kind", "mode"):
            page.locator(f"{root} .nc-toggle button[data-value={action[1]}]").click()
            if state[action[0]] == action[1]:
                return state
            setter = pm.set_kind if action[0] == "kind" else pm.set_mode
            return setter(state, action[1])
        if action[0] == "slider":
            _, which, j, share = action
            slider = page.locator(
                f"{root} input[type=range][data-which={which}][data-feature='{j}']"
            )
            # a reader drags to a point of the slider's grid: `share` of the way from 0 to an end
            value = slider.evaluate(
                "(e, share) => { const end = share < 0 ? Number(e.min) : Number(e.max);"
                " e.value = String(Math.abs(share) * end);"
                " e.dispatchEvent(new Event('input', {bubbles: true})); return Number(e.value); }",
                share,
            )
            assert math.isfinite(value)
            return pm.set_parameter(state, which, j, value) if value != state[which][j] else state
        if action[0] == "resize":
            label = {(1, 0): "+ row", (-1, 0): "− row", (0, 1): "+ feature", (0, -1): "− feature"}[
                action[1:]
            ]
            page.locator(root).get_by_role("button", name=label, exact=True).click()
            return pm.resize(state, *action[1:])
        page.locator(root).get_by_role(
            "button",
            name={"undo": "Undo exactly", "step": "Step", "fresh": "Fresh layer"}[action[0]],
            exact=True,
        ).click()
        return {"undo": pm.undo, "step": pm.step, "fresh": pm.fresh}[action[0]](state)

    return act


def test_playground_answers_in_the_page(browser: Any, site: str) -> None:  # noqa: F811
    page_or_skip("02-worked-column.html")
    root = ".nc-playground"
    with Watched(browser, f"{site}/book/02-worked-column.html") as page:
        page.wait_for_selector(f"{root} .nc-readout td[data-key]", timeout=30_000)
        read = lambda: page.evaluate(READ, root)  # noqa: E731
        compare(read(), pm.initial(), "the opening view")
        # it fits a 1440 x 900 screen: the answer within one screen of the controls' top,
        # sliders wide enough to aim at both ends, a hint on how a typed cell is used
        fit = page.evaluate(
            """root => { const box = document.querySelector(root);
          const top = box.querySelector('.nc-controls').getBoundingClientRect().top;
          const answer = box.querySelector('.nc-readout table').getBoundingClientRect().bottom;
          return {span: answer - top, slider: box.querySelector('input[type=range]')
                  .getBoundingClientRect().width, hint: box.querySelector('.nc-hint').textContent};
        }""",
            root,
        )
        assert fit["span"] <= 900, f"the answer ends {fit['span']:.0f} px below the controls' top"
        assert fit["slider"] >= 200 and "Enter" in fit["hint"], fit

        # the time of one update, default block: mode away and back, each a full update
        times = []
        for _ in range(15):
            page.locator(f"{root} .nc-toggle button[data-value=eval]").click()
            page.locator(f"{root} .nc-toggle button[data-value=train]").click()
            times.append(read()["updateMs"])

        drive(
            pm.initial(),
            playground_actions(np.random.default_rng(13)),
            playground_act(page, root),
            lambda state, where: compare(read(), state, where),
        )
        shot = HTML.parent / "screenshots"
        shot.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shot / "playground-after-actions.png"))
    print(
        f"\nplayground on the site: one update for the default block "
        f"{statistics.median(times):.2f} ms (median of {len(times)}; "
        f"min {min(times):.2f}, max {max(times):.2f})"
    )


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
    scale = max(
        1.0, float(np.abs(np.asarray(f["naive"])).max()), float(np.abs(np.asarray(f["true"])).max())
    )
    out: dict[str, tuple[float, float, str]] = {}
    for name, key, tol in (
        ("true", "collected", 1e-12),
        ("naive", "naive", 1e-12),
        ("oracle", "oracle", ORACLE_NOISE),
    ):
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
            f"{where}: {key} is {page_value!r} in the page, {value!r} by normcore"
        )
        if shown_as == ".4f":  # shown to 4 decimals: within half a unit (and the noise allowed)
            assert abs(float(text) - value) <= 5e-5 + tol + 1e-12, f"{where}: {key} {text!r}"
        elif shown_as == "sum":
            assert abs(float(text) - (0.0 if abs(value) < 5e-5 else value)) <= 5e-5 + tol
        elif shown_as == "int":
            assert int(text) == value, f"{where}: {key} shows {text!r}"
        else:  # the oracle's rounding, shown as it is: both far below the gradients' scale
            assert float(text) <= tol and value <= tol, f"{where}: {key} {text!r}"


class Keyed:
    """A widget whose form fields are keyed by its state (chapters 3, 4 and 5): an action is
    (field key, option or text), chosen from a menu or typed and committed by pressing `leave`.

    `figures(state)` is normcore's answer (a NormcoreError for input it cannot use), `compare(got,
    figures, where)` holds the page's readout to it, `kept` is the sentence that follows an error
    sentence, `apply(state, key, value)` is the model's action and `fields(state)` the state as
    the form's fields show it.
    """

    def __init__(
        self,
        page: Any,
        root: str,
        *,
        figures: Callable[[Any], dict[str, Any]],
        compare: Callable[[dict[str, Any], dict[str, Any], str], None],
        kept: str,
        apply: Callable[[Any, str, str], Any],
        fields: Callable[[Any], dict[str, str]],
        leave: str = "Enter",
    ) -> None:
        self.page, self.root, self.figures, self.compare = page, root, figures, compare
        self.kept, self.apply, self.fields, self.leave = kept, apply, fields, leave
        page.wait_for_selector(f"{root} .nc-readout td[data-key]", timeout=30_000)
        self.good: dict[str, Any] | None = None  # the last figures that could be computed

    def act(self, state: Any, action: tuple[str, str]) -> Any:
        key, value = action
        field = self.page.locator(f"{self.root} .nc-form [data-key='{key}']")
        if field.evaluate("e => e.tagName") == "SELECT":
            field.select_option(value)
        else:
            field.fill(value)
            field.press(self.leave)
        return self.apply(state, key, value) if value != self.fields(state)[key] else state

    def check(self, state: Any, where: str) -> None:
        got = self.page.evaluate(READ_KEYED, self.root)
        try:
            self.good = self.figures(state)
        except NormcoreError as error:
            assert got["error"] == f"{friendly(error)} {self.kept}", where
        else:
            assert got["error"] is None, where
        assert self.good is not None, f"{where}: the widget opens on input it cannot use"
        self.compare(got, self.good, where)
        assert got["fields"] == self.fields(state), where
        assert got["where"] == "page", f"{where}: the widget says it runs on {got['where']!r}"


def seeded(
    opening: list[tuple[str, str]], random: Callable[[], tuple[str, str]]
) -> Callable[[int, Any], tuple[str, str]]:
    """An action generator: the `opening` actions, then `random()` ones (seeded draws)."""
    return lambda n, _state: opening[n] if n < len(opening) else random()


def test_routes_explorer_answers_in_the_page(browser: Any, site: str) -> None:  # noqa: F811
    from normcore.widgets import routes_model as rm

    page_or_skip("03-backward.html")
    rng = np.random.default_rng(3)
    numbers = lambda k: " ".join(f"{v:.2f}" for v in rng.normal(0, 5, k))  # noqa: E731

    def random() -> tuple[str, str]:
        key = str(rng.choice(["source", "grad", "rows", "columns", "seed", "typed", "typed_grad"]))
        if key == "source":
            return key, str(rng.choice(["worked", "random", "typed"]))
        if key == "grad":
            return key, str(rng.choice(["counting", "ones", "random", "typed"]))
        if key in ("rows", "columns", "seed"):
            return key, (
                str(rng.choice(BAD_TEXTS + ["13", "0", "2.5"]))
                if rng.random() < 0.2
                else str(int(rng.integers(1, 7 if key != "seed" else 1000)))
            )
        r, c = int(rng.integers(1, 5)), int(rng.integers(1, 4))
        return key, (
            "\n".join(numbers(c) for _ in range(r))
            if rng.random() > 0.2
            else str(rng.choice(BAD_TEXTS))
        )

    opening = [
        ("source", "random"),
        ("seed", "abc"),
        ("seed", "1e400"),
        ("seed", "nan"),
        ("seed", ""),
        ("seed", "5"),
        ("source", "typed"),
        ("typed", "1, x\n2, 3"),
        ("typed", ""),
    ]
    with Watched(browser, f"{site}/book/03-backward.html") as page:
        widget = Keyed(
            page,
            ".nc-routes",
            figures=rm.figures,
            compare=routes_compare,
            kept="The figures below are for the last input x that could be used.",
            apply=rm.choose,
            fields=dict,
            leave="Tab",
        )  # leaving a box commits it
        drive(rm.initial(), seeded(opening, random), widget.act, widget.check)


# ------------------------------------------------------------------------- chapter 5's widget
def weightnorm_compare(got: dict[str, Any], f: dict[str, Any], where: str) -> None:
    want = {f"{k}:{i}": v for k in ("before", "weightnorm", "dense") for i, v in enumerate(f[k])}
    want["distance"] = f["distance"]
    assert sorted(got["figures"]) == sorted(want), where
    for key, value in want.items():
        page_value, text = got["figures"][key]
        assert abs(page_value - value) <= 1e-12 * max(abs(value), 1.0), (
            f"{where}: {key} is {page_value!r} in the page, {value!r} by normcore"
        )
        assert abs(float(text) - value) <= 5e-5 + 1e-12, f"{where}: {key} shows {text!r}"


def test_weightnorm_step_answers_in_the_page(browser: Any, site: str) -> None:  # noqa: F811
    from normcore.widgets import weightnorm_model as wm

    page_or_skip("05-weight-norm.html")
    case = wm.case_data()
    rng = np.random.default_rng(5)

    def random() -> tuple[str, str]:
        key = str(rng.choice(["length:0", "length:1", "length:2", "learning_rate"]))
        return key, (
            str(rng.choice(BAD_TEXTS + ["0", "2000"]))
            if rng.random() < 0.15
            else f"{rng.uniform(-5, 5):.3f}"
            if key != "learning_rate"
            else f"{rng.uniform(-0.5, 2):.3g}"
        )

    def fields(state: wm.State) -> dict[str, str]:
        return {
            **{f"length:{i}": t for i, t in enumerate(state["lengths"])},
            "learning_rate": state["learning_rate"],
        }

    def apply(state: wm.State, key: str, value: str) -> wm.State:
        if key == "learning_rate":
            return wm.set_learning_rate(state, value)
        return wm.set_length(state, int(key[-1]), value)

    opening = [
        ("length:1", "abc"),
        ("length:1", "1e400"),
        ("length:1", "nan"),
        ("length:1", ""),
        ("length:1", "0"),
        ("length:1", "4"),
        ("learning_rate", "abc"),
    ]
    with Watched(browser, f"{site}/book/05-weight-norm.html") as page:
        widget = Keyed(
            page,
            ".nc-weightnorm",
            figures=lambda state: wm.figures(state, case),
            compare=weightnorm_compare,
            apply=apply,
            fields=fields,
            kept="The table shows the last step that could be taken.",
        )
        labels = page.locator(".nc-weightnorm .nc-form .nc-label").all_inner_texts()
        assert labels == ["length 1", "length 2", "length 3", "learning rate"], labels
        drive(wm.initial(), seeded(opening, random), widget.act, widget.check)


# ------------------------------------------------------------------------- chapter 4's explorer
def axes_compare(got: dict[str, Any], f: dict[str, Any], where: str) -> None:
    scale = max(1.0, f["largest_true"])
    want = {
        f"output:{i},{j}": (v, 1e-12 * scale, ".4f")
        for (i, j), v in np.ndenumerate(np.asarray(f["output"]))
    }
    want["count"] = (f["count"], 0.0, "int")
    want["largest_true"] = (f["largest_true"], 1e-12 * scale, ".4f")
    # the oracle's gap and a centred block's sums are rounding: held to its size only
    want["true_gap"] = (f["true_gap"], ORACLE_NOISE * scale, "noise")
    want["largest_sum"] = (
        (f["largest_sum"], 1e-12 * scale * f["count"], ".4f")
        if not f["centred"]
        else (f["largest_sum"], 1e-12 * scale * f["count"], "noise")
    )
    figures = dict(got["figures"])
    shape_value, shape_text = figures.pop("statistics_shape")
    shape = f["statistics_shape"]
    assert shape_text == f"({', '.join(map(str, shape))}{',' if len(shape) == 1 else ''})"
    assert sorted(figures) == sorted(want), where
    for key, (value, tol, shown_as) in want.items():
        page_value, text = figures[key]
        assert abs(page_value - value) <= tol, (
            f"{where}: {key} is {page_value!r} in the page, {value!r} by normcore"
        )
        if shown_as == ".4f":
            assert abs(float(text) - value) <= 5e-5 + tol, f"{where}: {key} {text!r}"
        elif shown_as == "int":
            assert int(text) == value, where
        else:
            assert float(text) <= tol and value <= tol, f"{where}: {key} {text!r}"


def test_axes_explorer_answers_in_the_page(browser: Any, site: str) -> None:  # noqa: F811
    from normcore.widgets import axes_model as am

    page_or_skip("04-rows-columns.html")
    values = am.data_values()
    rng = np.random.default_rng(4)

    def random() -> tuple[str, str]:
        key = str(rng.choice(["data", "axis", "axis", "groups"]))
        return key, {
            "data": lambda: str(rng.choice(["rows", "images"])),
            "axis": lambda: str(rng.choice(am.AXES)),
            "groups": lambda: str(
                rng.choice(BAD_TEXTS + ["1", "2", "4", "3", "8", "0", "2.0", "-2"])
            ),
        }[key]()

    opening = [
        ("data", "images"),
        ("axis", "group"),
        ("groups", "abc"),
        ("groups", "1e400"),
        ("groups", "nan"),
        ("groups", ""),
        ("groups", "3"),
        ("groups", "4"),
    ]
    with Watched(browser, f"{site}/book/04-rows-columns.html") as page:
        widget = Keyed(
            page,
            ".nc-axes",
            figures=lambda state: am.figures(state, values),
            compare=axes_compare,
            apply=am.choose,
            fields=dict,
            kept="The figures below are for the last choice that could be computed.",
        )
        drive(am.initial(), seeded(opening, random), widget.act, widget.check)


# ----------------------------------------------------------------------- chapter 1's switch
SHIFT_READ = """root => { const box = document.querySelector(root);
  return {figures: Object.fromEntries(Array.from(box.querySelectorAll('.nc-readout [data-key]'),
                                                 e => [e.dataset.key, e.textContent])),
          text: box.querySelector('.nc-readout').textContent,
          src: box.querySelector('img.nc-chart').src,
          pressed: box.querySelector('button[aria-pressed=true]').dataset.value,
          runs: box.querySelector('.nc-where').dataset.runs}; }"""


def test_shift_chart_switches_in_the_page(browser: Any, site: str) -> None:  # noqa: F811
    from normcore.experiments.shift import crowd_shift
    from normcore.widgets.shift_chart import describe

    page_or_skip("01-moving-target.html")
    want = {key: describe(crowd_shift(key, seed=0)) for key in ("none", "batch")}
    root, rng, shown = ".nc-shift", np.random.default_rng(1), {}
    with Watched(browser, f"{site}/book/01-moving-target.html") as page:
        page.wait_for_selector(f"{root} .nc-readout [data-key]", timeout=30_000)

        def act(_chosen: str, chosen: str) -> str:
            page.locator(f"{root} button[data-value={chosen}]").click()
            return chosen

        def check(chosen: str, where: str) -> None:
            got = page.evaluate(SHIFT_READ, root)
            expected = {k: v for k, v in want[chosen].items() if v is not None}
            assert got["figures"] == expected, f"{where}: {chosen}"
            if chosen == "batch":  # a rounding-level gap, shown as the power of ten above it
                assert f"shift: at most {expected['shift_gap']}" in got["text"], where
                assert expected["shift_gap"] == "1e-14", where
            assert got["pressed"] == chosen and got["runs"] == "page", where
            assert shown.setdefault(chosen, got["src"]) == got["src"]  # each its own chart

        drive("none", lambda n, _: str(rng.choice(["none", "batch"])), act, check)
    assert shown["none"] != shown["batch"]
