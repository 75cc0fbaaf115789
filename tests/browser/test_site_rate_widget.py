"""Chapter 7's rate widget on the BUILT site and live in JupyterLab, held to normcore's runs.

The widget brackets each family's largest stable rate on the chapter's fine grid under a loss
limit the reader types, and shows the rate-0.05 normalised runs asked with batch statistics over
the chapter's random orders. On the site (served from 127.0.0.1, no kernel, nothing may leave
the machine) the test works it through 220 seeded random reader actions: limits typed (the
refused "abc", "1e400", "nan" and empty text among them), the run buttons, the orders slider's
keys. After each, every figure on show is held to normcore's own answer for that choice,
computed here with the experiment's public functions (`R.sweep`, `R.stable_bracket`,
`R.order_spread`, `R.sorted_orders`; never the widget's code), at the precision it is shown at;
the controls must show the choice, and no console error is allowed. In JupyterLab the kernel
answers each choice too, and the gap it reports must be within 1e-12.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from normcore.experiments import rates as R
from normcore.widgets._input import friendly, parse_number

from .live import ANSWER_TIMEOUT, Lab, chapter, wait_for
from .test_site import site  # noqa: F401  (the served _build/html)
from .test_site_widgets import ACTIONS, BAD_TEXTS, Watched, page_or_skip

ROOT = ".nc-rates"
ORDERS = [10, 25, 50, 100, 200]
GRIDS = {False: [10.0, 12.5], True: [25.0, 30.0, 35.0]}  # the chapter's bracket rates
READ = """root => {
  const box = document.querySelector(root);
  const figures = {};
  for (const e of box.querySelectorAll('.nc-readout [data-key]')) {
    figures[e.dataset.key] = [e.dataset.value, e.textContent.trim()];
  }
  const slider = box.querySelector('input[type=range]');
  const error = box.querySelector('.nc-message .nc-error');
  return {
    figures,
    where: box.querySelector('.nc-where').dataset.runs,
    error: error ? error.textContent.trim() : null,
    slider: {value: slider.value, label: slider.getAttribute('aria-label'),
             text: slider.getAttribute('aria-valuetext')},
    limit: box.querySelector('input[type=text]').value,
    pressed: Array.from(box.querySelectorAll('.nc-toggle button[aria-pressed=true]'),
                        e => e.dataset.value),
  };
}"""


@cache
def runs() -> dict[str, Any]:
    """normcore's runs for the chapter, trained here: each family's grid (rate -> final losses)
    and the two rate-0.05 normalised networks."""
    rows = R.sweep()
    grids: dict[bool, dict[float, list[float]]] = {False: {}, True: {}}
    for row in rows:
        grids[row.normalised][row.rate] = list(row.loss)
    for normalised, rates in GRIDS.items():
        bracket = R.stable_bracket(rates, normalised=normalised)
        for rate, losses in zip(bracket.rates, bracket.losses, strict=True):
            grids[normalised][rate] = list(losses)
    by = {(r.normalised, r.rate): r for r in rows}
    return {"grids": grids, "nets": [by[(True, 0.05)].runs[k].net for k in range(2)]}


@cache
def expected(limit: float, run: int, orders: int) -> dict[str, float | str | None]:
    """normcore's answer for one choice: key -> value (a number, a rate's text or None)."""
    out: dict[str, float | str | None] = {}
    last: dict[bool, float | None] = {}
    first: dict[bool, float | None] = {}
    for normalised, grid in runs()["grids"].items():
        family = "normalised" if normalised else "plain"
        rates = sorted(grid)
        stable = [bool(np.all(np.array(grid[r]) < limit)) for r in rates]  # NaN: unstable
        bad = stable.index(False) if False in stable else len(rates)
        last[normalised] = rates[bad - 1] if bad else None
        first[normalised] = rates[bad] if bad < len(rates) else None
        for rate, ok in zip(rates, stable, strict=True):
            out[f"{family}:stable:{rate:g}"] = "true" if ok else "false"
    if last[True] is not None and last[False] is not None:
        out["factor"] = last[True] / last[False]
        if first[False] is not None and first[True] is not None:
            out["factor_low"] = last[True] / first[False]
            out["factor_high"] = first[True] / last[False]
    data = R.subscribers()
    net = runs()["nets"][run - 1]
    spread = R.order_spread(net, data.x_test, data.y_test, orders=orders, seed=run - 1)
    out |= {
        "running": spread.running,
        "in_order": spread.in_order,
        "mean": spread.mean,
        "sd": spread.sd,
        "lowest": float(spread.accuracies.min()),
        "highest": float(spread.accuracies.max()),
        "percentile": spread.percentile_of_in_order,
    }
    for key, order in R.sorted_orders(data.x_test, data.y_test).items():
        p = R.batch_probabilities(net, data.x_test, order[None])[0]
        out["sorted_last" if key.endswith("last") else "sorted_first"] = R.accuracy(p, data.y_test)
    out["brackets"] = f"{last}|{first}"
    return out


def check(got: dict[str, Any], state: dict[str, Any], where: str, runs_on: str = "page") -> None:
    limit = float(state["limit"])
    want = dict(expected(limit, state["run"], state["orders"]))
    last_first = want.pop("brackets")
    figures = got["figures"]
    brackets = {k: v for k, v in figures.items() if k.endswith(":bracket")}
    assert len(brackets) == 2, where
    shown = {k: v for k, v in figures.items() if not k.endswith(":bracket")}
    assert sorted(shown) == sorted(want), f"{where}: the page shows other figures"
    for key, value in want.items():
        data, text = shown[key]
        if isinstance(value, str):
            assert data == value, f"{where}: {key} is {data!r}, normcore {value!r}"
            continue
        assert abs(float(data) - value) <= 1e-12 * max(abs(value), 1.0), (
            f"{where}: {key} is {data!r} in the page, {value!r} by normcore"
        )
        digits = 0 if key == "percentile" else 1 if key.startswith("factor") else 4
        assert abs(float(text) - value) <= 0.5 * 10.0**-digits + 1e-9, f"{where}: {key} {text!r}"
    assert str(last_first)  # the brackets' own words are checked through the stable marks
    assert got["slider"] == {
        "value": str(ORDERS.index(state["orders"])),
        "label": "random orders",
        "text": f"{state['orders']} orders",
    }, where
    assert got["pressed"] == [str(state["run"])], where
    assert got["where"] == runs_on, f"{where}: the widget says it runs on {got['where']!r}"


def refusal(text: str) -> str | None:
    """The sentence the page must show for a typed limit (Python's reader), or None."""
    try:
        value = parse_number(text, "loss limit", 1e6)
    except Exception as error:  # noqa: BLE001 - a NormcoreError: its sentence is the answer
        return friendly(error)
    if value <= 0:
        return friendly("loss limit: expected a number above 0, a loss no run can end under")
    return None


def test_rate_widget_answers_in_the_page(browser: Any, site: str) -> None:  # noqa: F811
    page_or_skip("07-rates-and-leaks.html")
    watched = Watched(browser, f"{site}/book/07-rates-and-leaks.html")
    page = watched.page
    page.wait_for_selector(f"{ROOT} .nc-readout [data-key]", timeout=30_000)
    read = lambda: page.evaluate(READ, ROOT)  # noqa: E731
    state = {"limit": "1", "run": 1, "orders": 200}
    check(read(), state, "the opening view")
    where_line = page.locator(f"{ROOT} .nc-where").text_content()
    assert where_line.startswith("Runs in this page") and "no kernel" in where_line

    root = page.locator(ROOT)
    box = root.get_by_label("loss limit", exact=True)
    slider = root.get_by_label("random orders", exact=True)
    rng = np.random.default_rng(7)
    keys = {"ArrowRight": 1, "ArrowUp": 1, "ArrowLeft": -1, "ArrowDown": -1}
    refused = set()
    for n in range(ACTIONS):
        kind = str(rng.choice(["limit", "limit", "key", "run"]))
        if kind == "limit":
            text = str(rng.choice(["0.3", "0.5", "1", "1.5", "2", "10", "0", "-1", *BAD_TEXTS]))
            box.fill(text)
            box.press("Enter")
            action = f"limit {text!r}"
            state = {**state, "limit": text}  # kept as typed; the page says what is wrong
        elif kind == "key":
            key = str(rng.choice([*keys, "Home", "End"]))
            slider.press(key)
            index = ORDERS.index(state["orders"])
            index = {"Home": 0, "End": len(ORDERS) - 1}.get(
                key, min(max(index + keys.get(key, 0), 0), len(ORDERS) - 1)
            )
            state = {**state, "orders": ORDERS[index]}
            action = f"key {key}"
        else:
            run = int(rng.integers(1, 3))
            root.get_by_role("button", name=f"run {run}", exact=True).click()
            state = {**state, "run": run}
            action = f"run {run}"
        got = read()
        sentence = refusal(state["limit"])
        where = f"action {n + 1} ({action})"
        if sentence is not None:
            refused.add(sentence.split(":")[0])
            assert got["error"] is not None and got["error"].startswith(sentence), where
            continue  # the last figures that could be computed stay on show
        assert got["error"] is None, where
        check(got, state, where)
    assert refused, "the actions never reached a refusal"
    errors, outside = watched.errors, watched.outside
    watched.close()
    assert not errors, f"console errors: {errors}"
    assert not outside, f"requests leaving 127.0.0.1: {outside}"


# the kernel has answered the state on show (its token and state match the page's)
ANSWERED = (
    "root => { const w = document.querySelector(root + ' .nc-where');"
    " return w !== null && w.dataset.runs === 'kernel'; }"
)


def test_rate_widget_live_in_lab(browser: Any, lab: Lab) -> None:
    """In JupyterLab: the same view; the kernel answers every choice from the chapter's runs,
    and the page shows that its answer and the kernel's differ by at most 1e-12."""
    with chapter(browser, lab, "07-rates-and-leaks.ipynb") as page:
        page.wait_for_selector(f"{ROOT} .nc-readout [data-key]", timeout=ANSWER_TIMEOUT)
        state = {"limit": "1", "run": 1, "orders": 200}
        root = page.locator(ROOT)
        box = root.get_by_label("loss limit", exact=True)
        slider = root.get_by_label("random orders", exact=True)
        moves = [("limit", "0.5"), ("run", 2), ("key", "Home"), ("limit", "2"), ("key", "End")]
        for n, (kind, value) in enumerate([(None, None), *moves]):
            if kind == "limit":
                box.fill(value)
                box.press("Enter")
                state = {**state, "limit": value}
            elif kind == "key":
                slider.press(value)
                state = {**state, "orders": ORDERS[0] if value == "Home" else ORDERS[-1]}
            elif kind == "run":
                root.get_by_role("button", name=f"run {value}", exact=True).click()
                state = {**state, "run": value}
            where = f"move {n} ({kind} {value})"
            assert wait_for(page, ANSWERED, ROOT, ANSWER_TIMEOUT), where
            check(page.evaluate(READ, ROOT), state, where, runs_on="kernel")
            gap = root.locator(".nc-where [data-key=kernel-gap]").get_attribute("data-value")
            # the page adds the same whole counts; a mean or a deviation may differ in its
            # last bit from numpy's pairwise sum
            assert float(gap) <= 1e-12, where
