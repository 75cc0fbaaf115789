"""Checks for chapter 6's exercises. Answers are computed with normcore and never printed; each
is computed only once the reader has answered (`verdict` takes the computation as a function)."""

from __future__ import annotations

from typing import Any

import numpy as np

from normcore.exercises import Verdict, verdict
from normcore.experiments import comparison


def _held_out_people() -> int:
    scores = comparison.compare(["none"], [0])["none"]
    return round(float(scores.held_accuracy[0]) * 25)


def _first_under_half_rate() -> int:
    curve = comparison.curves(["none"], rate=0.5)["none"]
    return -1 if curve.first_under is None else curve.first_under


def _rms_seeds_holding_up() -> int:
    scores = comparison.compare(["none", "rms"])
    people = {key: np.rint(s.held_accuracy * 25) for key, s in scores.items()}  # out of 25
    return int(np.count_nonzero(people["rms"] >= people["none"]))


def check_held_out_people(answer: Any) -> Verdict:
    """Exercise 1: how many of the 25 people the plain network (seed 0, learning rate 1, the
    chapter's `comparison.EPOCHS` epochs) classifies right when each is held out (a whole
    number)."""
    return verdict(answer, _held_out_people, 0.0)


def check_first_under_half_rate(answer: Any) -> Verdict:
    """Exercise 2: the first epoch (counted from 1) whose loss is under 0.3 for the plain
    network's whole-crowd run at learning rate 0.5 (a whole number)."""
    return verdict(answer, _first_under_half_rate, 0.0)


def check_rms_seeds_holding_up(answer: Any) -> Verdict:
    """Exercise 3: on how many of the chapter's five seeds the RMS network holds out at least
    as well as the plain network started from the same seed (a whole number)."""
    return verdict(answer, _rms_seeds_holding_up, 0.0)
