"""Checks for chapter 6's exercises. Answers are computed with normcore and never printed; each
is computed only once the reader has answered (`verdict` takes the computation as a function),
and each checker names the mistakes it expects (see `normcore.exercises._mistakes`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from normcore.exercises import Verdict
from normcore.exercises._mistakes import judged
from normcore.experiments import comparison

PEOPLE = 25


def _held_out_share() -> float:
    return float(comparison.compare(["none"], [0])["none"].held_accuracy[0])


def _held_out_people() -> int:
    return round(_held_out_share() * PEOPLE)


def _first_under(rate: float) -> int:
    curve = comparison.curves(["none"], rate=rate)["none"]
    return -1 if curve.first_under is None else curve.first_under


def _first_under_half_rate() -> int:
    return _first_under(0.5)


def _people_per_seed() -> dict[str, np.ndarray]:
    scores = comparison.compare(["none", "rms"])
    return {key: np.rint(s.held_accuracy * PEOPLE) for key, s in scores.items()}  # out of 25


def _rms_seeds_holding_up() -> int:
    people = _people_per_seed()
    return int(np.count_nonzero(people["rms"] >= people["none"]))


def check_held_out_people(answer: Any) -> Verdict:
    """Exercise 1: how many of the 25 people the plain network (seed 0, learning rate 1, the
    chapter's `comparison.EPOCHS` epochs) classifies right when each is held out (a whole
    number)."""

    def mistakes() -> list[tuple[Any, str]]:
        share, people = _held_out_share(), _held_out_people()
        return [
            (share, "that is the share of the 25; the question asks for a count of people"),
            (PEOPLE - people, "that counts the people it gets wrong; count the ones it gets right"),
        ]

    return judged(answer, _held_out_people, mistakes, tolerance=0.0, mistake_tolerance=1e-9)


def check_first_under_half_rate(answer: Any) -> Verdict:
    """Exercise 2: the first epoch (counted from 1) whose loss is under 0.3 for the plain
    network's whole-crowd run at learning rate 0.5 (a whole number)."""

    def mistakes() -> list[tuple[Any, str]]:
        right, at_one = _first_under_half_rate(), _first_under(comparison.RATE)
        return [
            (right - 1, "that counts epochs from 0; the chapter counts the first epoch as 1"),
            (at_one, "that is the epoch at learning rate 1; the question halves the rate"),
            (
                2 * at_one,
                "that doubles the epoch at rate 1, a guess: the loss does not fall at a steady "
                "pace, so train at 0.5 and read the curve",
            ),
        ]

    return judged(answer, _first_under_half_rate, mistakes, tolerance=0.0, mistake_tolerance=1e-9)


def check_rms_seeds_holding_up(answer: Any) -> Verdict:
    """Exercise 3: on how many of the chapter's five seeds the RMS network holds out at least
    as well as the plain network started from the same seed (a whole number)."""

    def mistakes() -> list[tuple[Any, str]]:
        people = _people_per_seed()
        right = int(np.count_nonzero(people["rms"] >= people["none"]))
        strictly = int(np.count_nonzero(people["rms"] > people["none"]))
        named = [
            (
                len(people["rms"]) - right,
                "that counts the seeds where RMS falls short; count where it holds up",
            )
        ]
        if strictly != right:
            named.append(
                (strictly, "that counts only seeds where RMS does better; a tie holds up too")
            )
        return named

    return judged(answer, _rms_seeds_holding_up, mistakes, tolerance=0.0, mistake_tolerance=1e-9)


OTHER_CROWD = 42  # exercise 4's crowd: the generator's seed 42, not the book's crowd


def _logistic_population_minus_held() -> float:
    from normcore.experiments import crowds

    y = crowds.logistic_yardstick([OTHER_CROWD])
    return float(y.population_accuracy[0] - y.held_accuracy[0])


def check_logistic_population_minus_held(answer: Any) -> Verdict:
    """Exercise 4: for the crowd `crowds.crowd(42)`, the logistic regression's population
    accuracy minus its five-fold held-out accuracy (two decimals, with its sign)."""

    def mistakes() -> list[tuple[Any, str]]:
        gap = _logistic_population_minus_held()
        return [(-gap, "the sign is turned: the question asks population minus held out")]

    return judged(
        answer, _logistic_population_minus_held, mistakes, tolerance=0.005, mistake_tolerance=0.005
    )


__all__ = [
    "check_first_under_half_rate",
    "check_held_out_people",
    "check_logistic_population_minus_held",
    "check_rms_seeds_holding_up",
]
