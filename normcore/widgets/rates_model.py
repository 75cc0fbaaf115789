"""Chapter 7's widget as data: the rate bracket on the chapter's fine grid, and the batch layer
asked with batch statistics over many orders of the test rows.

The state (synced with the page; ``js/rates-model.js`` holds the actions and the page's
arithmetic, this module normcore's figures for a state)::

    limit    str     the loss a stable run must end under, as typed ("1")
    run      int     1 or 2: which rate-0.05 normalised network is asked over orders
    orders   int     how many of the chapter's random orders are counted (one of ORDERS)

The results are the chapter's own runs, written in once by `results_data`: for each family
(plain, normalised) the final training losses of both runs at every rate of its grid (the
sweep's rates and the bracket's), with 12 significant figures, or to 4 decimals only, shown as
"chaotic", where the sweep marks their digits as the computer's; and for each run the number of
test subscribers right under each of the chapter's random orders, in the stored order, by the
running statistics and with batches sorted by label. Counts, not shares, so the page and the kernel
add the same whole numbers. Nothing is trained again.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from normcore.errors import SettingError
from normcore.experiments import rates as R
from normcore.widgets._input import check_state, parse_number

State = dict[str, Any]
Results = dict[str, Any]

#: How many orders the slider offers (the chapter asks 200).
ORDERS = (10, 25, 50, 100, 200)
#: The largest loss limit the box takes.
LIMIT = 1e6
FAMILIES = ("plain", "normalised")
#: The learning rate of the networks asked over orders (the chapter's: the sweep's smallest).
ASKED_RATE = 0.05


def rate_text(rate: float) -> str:
    """A learning rate as the chapter and the widget write it (0.05, 5, 12.5, 20)."""
    return f"{rate:g}"


def _count(share: float, rows: int) -> int:
    count = round(share * rows)
    if abs(share * rows - count) > 1e-6:
        raise SettingError(f"an accuracy of {share!r} is not a whole count of {rows} rows")
    return int(count)


def results_data(
    rows: Sequence[R.SweepRow],
    brackets: Sequence[R.Bracket],
    spreads: Mapping[str, R.OrderSpread],
    sorted_accuracies: Mapping[str, Mapping[str, float]],
    test_rows: int,
) -> Results:
    """The chapter's figures as the widget stores them.

    Args:
        rows: the sweep (`R.sweep()`); brackets: `R.stable_bracket` grids, any families;
        spreads: `R.order_spread` per run ("run 1", "run 2"), of the rate-0.05 normalised
        network; sorted_accuracies: per run, accuracy with batches sorted by label
        (`R.sorted_orders`); test_rows: how many test subscribers were asked.
    """
    families: dict[str, Any] = {}
    for family in FAMILIES:
        normalised = family == "normalised"
        grid: dict[float, tuple[list[float | None], bool]] = {}
        for row in rows:
            if row.normalised == normalised:
                grid[row.rate] = (
                    [
                        None if r.refused else float(v)
                        for r, v in zip(row.runs, row.loss, strict=True)
                    ],
                    bool(row.sensitive),
                )
        for bracket in brackets:
            if bracket.normalised == normalised:
                for rate, losses in zip(bracket.rates, bracket.losses, strict=True):
                    grid.setdefault(
                        rate, ([None if np.isnan(v) else float(v) for v in losses], False)
                    )
        rates = sorted(grid)
        families[family] = {
            "rates": [rate_text(r) for r in rates],
            # as the chapter prints them where the digits are the computer's, else 12 figures
            "losses": [
                [
                    None if v is None else round(v, 4) if grid[r][1] else float(f"{v:.12g}")
                    for v in grid[r][0]
                ]
                for r in rates
            ],
            "chaotic": [grid[r][1] for r in rates],
        }
    orders = {}
    for name, spread in spreads.items():
        orders[name] = {
            "right": [_count(a, test_rows) for a in spread.accuracies],
            "in_order": _count(spread.in_order, test_rows),
            "running": _count(spread.running, test_rows),
            "sorted": {k: _count(v, test_rows) for k, v in sorted_accuracies[name].items()},
        }
    return {
        "families": families,
        "orders": orders,
        "rows": test_rows,
        "offered": list(ORDERS),
        "asked": {"rate": rate_text(ASKED_RATE), "batch": R.BATCH, "limit": _limit_default()},
    }


def _limit_default() -> str:
    return rate_text(inspect.signature(R.stable_bracket).parameters["limit"].default)


def initial() -> State:
    """The opening view: the chapter's loss limit, the first run, every order."""
    return {"limit": _limit_default(), "run": 1, "orders": ORDERS[-1]}


def check(state: object) -> State:
    s = check_state(state, {"limit": str, "run": int, "orders": int})
    if s["run"] not in (1, 2) or s["orders"] not in ORDERS:
        raise SettingError(
            f"choice: expected run 1 or 2 and orders one of {', '.join(map(str, ORDERS))}"
        )
    return s


def limit(state: State) -> float:
    """The loss limit typed; a typed error unless it is a number above 0."""
    value = parse_number(state["limit"], "loss limit", LIMIT)
    if value <= 0:
        raise SettingError("loss limit: expected a number above 0, a loss no run can end under")
    return value


def _bracket(family: dict[str, Any], bound: float) -> tuple[list[bool], str | None, str | None]:
    stable = [all(v is not None and v < bound for v in losses) for losses in family["losses"]]
    first_bad = stable.index(False) if False in stable else len(stable)
    rates = family["rates"]
    last = rates[first_bad - 1] if first_bad > 0 else None
    first = rates[first_bad] if first_bad < len(rates) else None
    return stable, last, first


def _ratio(a: str | None, b: str | None) -> float | None:
    return float(a) / float(b) if a is not None and b is not None else None


def figures(state: State, results: Results) -> dict[str, Any]:
    """normcore's figures for a state: per family, which grid rates are stable under the limit
    and the bracket (last stable, first unstable rate, None where there is none); the factor the
    batch layer allows (normalised over plain last stable rate) and its range on the grid; and,
    for the chosen run over the first `orders` random orders, the accuracies with batch
    statistics (mean, standard deviation with ddof 1, lowest, highest), where the stored order falls
    among them (per cent below, ties counted half), and the running statistics' and label-sorted
    accuracies."""
    check(state)
    bound = limit(state)
    out: dict[str, Any] = {}
    for family in FAMILIES:
        stable, last, first = _bracket(results["families"][family], bound)
        out |= {f"{family}_stable": stable, f"{family}_last": last, f"{family}_first": first}
    out["factor"] = _ratio(out["normalised_last"], out["plain_last"])
    out["factor_low"] = _ratio(out["normalised_last"], out["plain_first"])
    out["factor_high"] = _ratio(out["normalised_first"], out["plain_last"])
    run = results["orders"][f"run {state['run']}"]
    n = results["rows"]
    right = np.array(run["right"][: state["orders"]], dtype=np.int64)
    accuracies = right / n
    in_order = run["in_order"] / n
    out |= {
        "running": run["running"] / n,
        "in_order": in_order,
        "mean": float(accuracies.mean()),
        "sd": float(accuracies.std(ddof=1)),
        "lowest": float(accuracies.min()),
        "highest": float(accuracies.max()),
        "percentile": float(
            100 * (np.mean(accuracies < in_order) + np.mean(accuracies == in_order) / 2)
        ),
        "sorted_last": run["sorted"]["label, ones last"] / n,
        "sorted_first": run["sorted"]["label, ones first"] / n,
    }
    return out


def choose(state: State, **choice: Any) -> State:
    """`state` with some choices changed (limit=, run=, orders=), as the page's controls change
    it (``js/rates-model.js`` has the same three); a choice the widget does not offer is refused
    with SettingError. A limit is kept as typed: `figures` says what is wrong with it."""
    new = dict(check(state))
    for name, value in choice.items():
        if name not in new:
            raise SettingError(f"choice: expected limit, run or orders, got {name!r}")
        new[name] = value
    return check(new)


# ------------------------------------------------------------------ the node differential test
def _synthetic(rng: np.random.Generator) -> Results:
    """Results of the shape `results_data` writes, with random losses and counts."""
    families = {}
    for family in FAMILIES:
        rates = np.sort(rng.choice([0.05, 1, 2.5, 5, 10, 12.5, 20, 25, 30, 60], 6, replace=False))
        losses = [
            [
                None if rng.random() < 0.1 else round(float(np.exp(rng.normal(-0.5, 1))), 4)
                for _ in range(2)
            ]
            for _ in rates
        ]
        families[family] = {
            "rates": [rate_text(float(r)) for r in rates],
            "losses": losses,
            "chaotic": [bool(rng.random() < 0.2) for _ in rates],
        }
    rows = 252
    orders = {
        f"run {k}": {
            "right": rng.integers(170, 210, 200).tolist(),
            "in_order": int(rng.integers(170, 210)),
            "running": int(rng.integers(170, 210)),
            "sorted": {
                "label, ones last": int(rng.integers(150, 200)),
                "label, ones first": int(rng.integers(150, 200)),
            },
        }
        for k in (1, 2)
    }
    return {
        "families": families,
        "orders": orders,
        "rows": rows,
        "offered": list(ORDERS),
        "asked": {"rate": "0.05", "batch": 20, "limit": "1"},
    }


def _plans(rng: np.random.Generator) -> list[dict[str, Any]]:
    from normcore.widgets._node import TEXTS, pick

    plans = []
    for _ in range(6):
        actions = []
        for _ in range(15):
            kind = int(rng.integers(3))
            if kind == 0:
                text = pick(rng, [f"{rng.uniform(0.05, 3):.3g}", "1", *TEXTS])
                actions.append(["setLimit", text])
            elif kind == 1:
                actions.append(["setRun", int(rng.integers(1, 3))])
            else:
                actions.append(["setOrders", pick(rng, ORDERS)])
        plans.append({"context": _synthetic(rng), "start": initial(), "actions": actions})
    return plans


def _node() -> Any:
    from normcore.widgets._node import NodeModel

    python = {
        "setLimit": lambda s, text: choose(s, limit=text),
        "setRun": lambda s, run: choose(s, run=run),
        "setOrders": lambda s, orders: choose(s, orders=orders),
    }
    return NodeModel("rates-model.js", figures, _plans, actions=python)


NODE = _node()
