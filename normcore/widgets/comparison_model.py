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
held-out accuracy. The results also hold every held-out verdict (per arrangement and seed, one
'0' or '1' a person) and the chapter's bootstrap draws over people, so `figures` pairs each
arrangement with the plain network person by person over the seeds ticked, as the chapter's
second table does over all five (`paired`). Nothing is trained again: every choice the widget
offers is a choice among runs the chapter has already trained.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from normcore.errors import SettingError
from normcore.experiments import comparison
from normcore.widgets._input import check_state, flag_arg, seed_arg

State = dict[str, Any]
Results = dict[str, Any]

#: The per-seed figures kept for every arrangement, in the table's order.
FIELDS = ("train_accuracy", "held_accuracy", "train_loss", "held_loss")
#: The bootstrap over people: as many draws as the chapter's, from the same generator.
DRAWS, DRAW_SEED = (
    inspect.signature(comparison.paired_people).parameters["draws"].default,
    inspect.signature(comparison.paired_people).parameters["seed"].default,
)
#: The bootstrap interval's percentiles (`comparison.paired_people`'s 95 % interval).
INTERVAL = comparison.PEOPLE_PERCENTILES
#: The arrangement every other is paired with, person by person.
REFERENCE = "none"
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
    correct = {key: s.held_correct for key, s in scores.items()}
    people = next(iter(correct.values())).shape[1]
    return {
        "people": people,
        "draws": _draws(people, DRAWS, DRAW_SEED),
        "interval": list(INTERVAL),
        "held_correct": {
            key: ["".join("1" if v else "0" for v in row) for row in np.asarray(c, dtype=bool)]
            for key, c in correct.items()
        },
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


def _draws(people: int, draws: int, seed: int) -> str:
    """The bootstrap's resampled people, as `comparison.paired_people` draws them, one letter a
    person ('a' is the first): `draws` rows of `people` letters, joined."""
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, people, size=(draws, people))
    return "".join(chr(97 + int(i)) for i in picks.ravel())


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
    out["paired"] = [k for k in chosen if k != REFERENCE and REFERENCE in order]
    rows = {k: paired(results, k, at) for k in out["paired"]}
    for name in ("gap", "people_low", "people_high", "seed_low", "seed_high", "worse", "better"):
        out[f"paired_{name}"] = [rows[k][name] for k in out["paired"]]
    return out


def _bits(results: Results, key: str, at: Sequence[int]) -> np.ndarray:
    rows = results["held_correct"][key]
    return np.array([[c == "1" for c in rows[i]] for i in at], dtype=np.int64)


def paired(results: Results, key: str, at: Sequence[int]) -> dict[str, Any]:
    """`key` against the plain network person by person over the seeds at indices `at`, as
    `comparison.paired_people` compares them: the mean gap in held-out accuracy, the bootstrap
    interval over people (the chapter's draws, 2.5 and 97.5 per cent), mean +- 2 standard errors
    of the per-seed gaps, and the people right on fewer (more) seeds than under the plain
    network. Counts stay whole numbers until the last division."""
    a, r = _bits(results, key, at), _bits(results, REFERENCE, at)
    seeds, people = a.shape
    counts = a.sum(axis=0) - r.sum(axis=0)  # per person, a whole number in [-seeds, seeds]
    picks = np.frombuffer(results["draws"].encode("ascii"), dtype=np.uint8) - 97
    sums = counts[picks.reshape(-1, people).astype(np.int64)].sum(axis=1)
    low, high = np.percentile(sums / (seeds * people), list(results["interval"]))
    per_seed = (a.sum(axis=1) - r.sum(axis=1)) / people
    gap = float(counts.sum() / (seeds * people))
    error = float(per_seed.std(ddof=1) / np.sqrt(seeds)) if seeds > 1 else 0.0
    return {
        "gap": gap,
        "people_low": float(low),
        "people_high": float(high),
        "seed_low": gap - 2 * error,
        "seed_high": gap + 2 * error,
        "worse": int(np.count_nonzero(counts < 0)),
        "better": int(np.count_nonzero(counts > 0)),
    }


def toggle_arrangement(state: State, key: str, on: bool) -> State:
    """Tick (`on`) or untick one arrangement."""
    check_state({"key": key}, {"key": str}, "toggle_arrangement")
    flag_arg(on, "on")
    rest = [k for k in state["arrangements"] if k != key]
    return {**state, "arrangements": rest + [key] if on else rest}


def toggle_seed(state: State, seed: int, on: bool) -> State:
    """Tick (`on`) or untick one seed."""
    seed_arg(seed)
    flag_arg(on, "on")
    rest = [s for s in state["seeds"] if s != seed]
    return {**state, "seeds": sorted(rest + [seed]) if on else rest}


# ------------------------------------------------------------------ the node differential test
def _synthetic(rng: np.random.Generator) -> Results:
    """Results of the shape `results_data` writes, with random figures and verdicts (the
    arithmetic is the same whatever the runs were), and fewer bootstrap draws."""
    order, seeds, people = ["none", "batch", "layer", "rms", "weight"], [0, 1, 2, 3, 4], 25
    return {
        "people": people,
        "draws": _draws(people, 400, int(rng.integers(1000))),
        "interval": [float(rng.uniform(0, 10)), float(rng.uniform(90, 100))],
        "held_correct": {
            k: [
                "".join(str(int(v)) for v in rng.random(people) < rng.uniform(0.3, 0.9))
                for _ in seeds
            ]
            for k in order
        },
        "seeds": seeds,
        "rate": 1.0,
        "epochs": 10,
        "folds": 5,
        "order": order,
        "labels": {k: LABELS[k] for k in order},
        "figures": {
            k: {f: rng.uniform(0, 1, len(seeds)).round(12).tolist() for f in FIELDS} for k in order
        },
    }


def _plans(rng: np.random.Generator) -> list[dict[str, Any]]:
    from normcore.widgets._node import pick

    plans = []
    for _ in range(6):
        results = _synthetic(rng)
        actions = []
        for _ in range(15):
            on = bool(rng.integers(3))  # ticks more often than not
            if rng.integers(2):
                actions.append(["toggleArrangement", pick(rng, results["order"]), on])
            else:
                actions.append(["toggleSeed", pick(rng, results["seeds"]), on])
        plans.append({"context": results, "start": initial(results), "actions": actions})
    return plans


def _node() -> Any:
    from normcore.widgets._node import NodeModel

    python = {"toggleArrangement": toggle_arrangement, "toggleSeed": toggle_seed}
    return NodeModel("comparison-model.js", figures, _plans, actions=python)


NODE = _node()
