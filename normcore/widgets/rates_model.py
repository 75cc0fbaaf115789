"""Chapter 7's widget as data: a choice among the runs of the rate sweep, and what each showed.

The state (synced with the page; ``js/rates.js`` reads it)::

    rate        str     one of the sweep's learning rates, as the chapter writes it ("0.05")
    normalised  bool    with the batch layer or without
    run         int     1 or 2: which of the setting's two runs (its seed)

Every choice the widget offers is a run the chapter's sweep has already trained, so the widget
costs no training: `results` describes every one of them when the chapter runs, and the page
only chooses. Figures are stored as the page shows them (4 decimals, whole counts), so a saved
notebook holds no full-precision number. A figure of a chaotic setting (`rates.SENSITIVE`) is
shown as "chaotic", as in the chapter's table: its digits depend on the computer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from normcore.errors import SettingError
from normcore.experiments import rates as R
from normcore.widgets._input import check_state

State = dict[str, Any]


def rate_text(rate: float) -> str:
    """A learning rate as the chapter and the widget write it (0.05, 5, 20, 60)."""
    return f"{rate:g}"


def _rate_text(value: object) -> str:
    """A rate given from code as the widget writes it; a number too large for a float
    (``10**400``) or of another kind is left as text, which no offered rate matches."""
    if isinstance(value, bool):
        return repr(value)
    if isinstance(value, (int, float)):
        try:
            return rate_text(float(value))
        except OverflowError:
            return "too large for a float"
    return str(value)


def key(state: State) -> str:
    """The name of a choice in `results`: 'plain 20 run 1', 'normalised 0.05 run 2'."""
    family = "normalised" if state["normalised"] else "plain"
    return f"{family} {state['rate']} run {state['run']}"


def initial(rate: float = 20.0, normalised: bool = True, run: int = 1) -> State:
    return {"rate": rate_text(rate), "normalised": bool(normalised), "run": int(run)}


def choose(state: State, rows: Sequence[R.SweepRow], **choice: Any) -> State:
    """`state` with some choices changed (rate=, normalised=, run=); a choice the sweep does not
    hold is refused with SettingError, naming what it offers."""
    rates = sorted({r.rate for r in rows})
    new = dict(state)
    for name, value in choice.items():
        if name == "rate":
            offered = [rate_text(r) for r in rates]
            text = _rate_text(value)
            if text not in offered:
                raise SettingError(
                    f"learning rate: expected one of {', '.join(offered)}, got {value!r}"
                )
            new["rate"] = text
        elif name == "normalised":
            if not isinstance(value, bool):
                raise SettingError(f"normalised: expected True or False, got {value!r}")
            new["normalised"] = value
        elif name == "run":
            runs = len(rows[0].runs)
            if isinstance(value, bool) or value not in range(1, runs + 1):
                raise SettingError(f"run: expected a run from 1 to {runs}, got {value!r}")
            new["run"] = int(value)
        else:
            raise SettingError(f"choice: expected rate, normalised or run, got {name!r}")
    return new


def describe(state: State, rows: Sequence[R.SweepRow]) -> dict[str, Any]:
    """The figures the widget shows for the run `state` chooses, as the page shows them.

    A finished run: 'loss', 'dead', 'accuracy', and for the normalised network the three ways of
    asking it ('batch_accuracy', 'shuffled_accuracy', 'changed_by_order'); 'chaotic' True for a
    setting whose losses and accuracies depend on the computer (they read "chaotic"). A refused
    run: 'refused_epoch' and 'refused_batch', counted from 1."""
    check_state(state, {"rate": str, "normalised": bool, "run": int})
    by = {(rate_text(r.rate), r.normalised): r for r in rows}
    row = by.get((state["rate"], state["normalised"]))
    if row is None or state["run"] not in range(1, len(row.runs) + 1):
        raise SettingError(f"choice: the sweep holds no run for {key(state)!r}")
    run = row.runs[state["run"] - 1]
    if run.refused:
        epoch, batch = run.refused_at
        return {"refused_epoch": str(epoch + 1), "refused_batch": str(batch + 1)}
    k = state["run"] - 1
    chaotic = row.sensitive

    def four(value: float) -> str:
        return R.CHAOTIC if chaotic else f"{value:.4f}"

    figures: dict[str, Any] = {
        "chaotic": chaotic,
        "loss": four(row.loss[k]),
        "dead": f"{row.dead[k]}/16",
        "accuracy": four(row.test[k]),
    }
    if state["normalised"]:
        ways = R.three_ways(run.net)
        figures |= {
            "batch_accuracy": four(ways.accuracy("batch")),
            "shuffled_accuracy": four(ways.accuracy("shuffled")),
            "changed_by_order": R.CHAOTIC if chaotic else str(ways.changed_by_order),
        }
    return figures


def choices(rows: Sequence[R.SweepRow]) -> list[State]:
    """Every state the widget offers: each rate of the sweep, plain and normalised, each run."""
    return [initial(r.rate, r.normalised, k + 1) for r in rows for k in range(len(r.runs))]


def results(rows: Sequence[R.SweepRow]) -> dict[str, dict[str, Any]]:
    """`describe` for every choice, keyed by `key`: what the page chooses among."""
    return {key(s): describe(s, rows) for s in choices(rows)}
