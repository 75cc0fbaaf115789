"""Chapter 6's widget as data: which arrangements and seeds the table shows, and its figures.

The state (synced with the page; ``js/comparison-model.js`` is its JavaScript twin)::

    arrangements   [str, ...]   the arrangements ticked, in the book's order ('none', 'batch', ...)
    seeds          [int, ...]   the seeds ticked, ascending

The results are the chapter's own runs (`normcore.experiments.comparison.run_all`): for every
arrangement and seed, the four per-seed figures of the chapter's table (training and held-out
accuracy and loss, each over that seed's five fold runs), written into the widget once by
`results_data` with 12 significant figures, so that the page and the kernel read the same
numbers. `figures` averages them over the seeds ticked, as the chapter's table averages over all
five: the mean (added in seed order, then divided by the count), and the lowest and highest
held-out accuracy. Nothing is trained again: every choice the widget offers is a choice among
runs the chapter has already trained.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from normcore.errors import SettingError
from normcore.experiments import comparison
from normcore.widgets._input import check_state

State = dict[str, Any]
Results = dict[str, Any]

#: The per-seed figures kept for every arrangement, in the table's order.
FIELDS = ("train_accuracy", "held_accuracy", "train_loss", "held_loss")
#: How the table names each arrangement.
LABELS = {"none": "plain", "batch": "batch", "layer": "layer", "rms": "RMS", "weight": "weight"}


def _round(value: float) -> float:
    return float(f"{float(value):.12g}")


def results_data(scores: Mapping[str, comparison.Scores]) -> Results:
    """The chapter's per-seed figures, as the widget stores them.

    Args:
        scores: `comparison.run_all(...).scores` (or `comparison.compare(...)`), one `Scores`
            per arrangement, each with one entry per seed of `comparison.SEEDS`.

    Returns:
        ``{"seeds": [...], "rate": r, "epochs": n, "folds": k, "order": [keys],
        "labels": {key: label},
        "figures": {key: {field: [one value per seed]}}}``.
    """
    return {
        "seeds": list(comparison.SEEDS),
        "rate": comparison.RATE,
        "epochs": comparison.EPOCHS,
        "folds": comparison.FOLDS,
        "order": list(scores),
        "labels": {key: LABELS.get(key, key) for key in scores},
        "figures": {
            key: {field: [_round(v) for v in getattr(s, field)] for field in FIELDS}
            for key, s in scores.items()
        },
    }


def initial(results: Results) -> State:
    """The opening view: every arrangement, every seed (the chapter's table)."""
    return {"arrangements": list(results["order"]), "seeds": list(results["seeds"])}


def _mean(values: Sequence[float]) -> float:
    total = 0.0
    for v in values:
        total += v
    return total / len(values)


def figures(state: State, results: Results) -> dict[str, Any]:
    """The table for the arrangements and seeds ticked: one entry per arrangement in each list.

    Raises SettingError (with a sentence for the reader) when no arrangement or no seed is
    ticked, or when the state names one the chapter did not run.
    """
    check_state(state, {"arrangements": [str], "seeds": [int]})
    order, seeds = results["order"], results["seeds"]
    chosen = [key for key in order if key in state["arrangements"]]
    ticked = [s for s in seeds if s in state["seeds"]]
    unknown = [k for k in state["arrangements"] if k not in order]
    unknown += [str(s) for s in state["seeds"] if s not in seeds]
    if unknown:
        raise SettingError(f"the chapter has no runs for {', '.join(unknown)}")
    if not chosen:
        raise SettingError("tick at least one arrangement to see its row of the table")
    if not ticked:
        raise SettingError("tick at least one seed: every figure is a mean over the seeds ticked")
    at = [seeds.index(s) for s in ticked]
    out: dict[str, Any] = {"arrangements": chosen, "seeds": len(ticked)}
    for field in FIELDS:
        out[field] = [_mean([results["figures"][k][field][i] for i in at]) for k in chosen]
    held = [[results["figures"][k]["held_accuracy"][i] for i in at] for k in chosen]
    out["held_low"] = [min(v) for v in held]
    out["held_high"] = [max(v) for v in held]
    return out


def toggle_arrangement(state: State, key: str, on: bool) -> State:
    """Tick (`on`) or untick one arrangement."""
    rest = [k for k in state["arrangements"] if k != key]
    return {**state, "arrangements": rest + [key] if on else rest}


def toggle_seed(state: State, seed: int, on: bool) -> State:
    """Tick (`on`) or untick one seed."""
    rest = [s for s in state["seeds"] if s != seed]
    return {**state, "seeds": sorted(rest + [seed]) if on else rest}
