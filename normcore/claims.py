"""How often a chapter's conclusions held on runs the chapter did not print.

A chapter draws conclusions from a handful of runs: a seed or five, one row order, one grid of
rates. A conclusion about the method ("batch normalisation trains at larger rates", "every seed
diverges above 10") is only worth printing if it holds on runs the page never showed. The claims
suite, ``tests/claims/test_chNN.py``, re-runs each such experiment on fresh seeds, row orders or
grids, asserts the conclusion as the prose states it, and records how often it held here, in
``normcore/data/claims/chNN.json``. The chapter then glues that frequency into its prose through
:func:`held`, so "on 19 of 20 fresh seeds" is computed, never typed, and a stale figure fails CI:
:func:`record` compares what the suite just measured with what is stored and raises when they
differ (``NORMCORE_CLAIMS_WRITE=1``, or ``make claims-record``, stores the new figures instead).

* :func:`fresh` gives seeds that no chapter uses (chapters keep their seeds below
  :data:`FRESH_START`).
* :func:`record` (in the claims suite) stores or checks one claim's frequency.
* :func:`held` (in a chapter) reads it back.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .errors import SettingError

__all__ = [
    "FRESH_START",
    "SOURCES",
    "ClaimDriftWarning",
    "Held",
    "StaleClaimError",
    "fresh",
    "held",
    "record",
    "reference_arithmetic",
    "stored",
]

FRESH_START = 1000
"""The first seed a claims test may use: the chapters use seeds below it, so none is reused."""

RESULTS = Path(__file__).resolve().parent / "data" / "claims"
"""Where the frequencies live: one JSON file per chapter, ``chNN.json``."""

WRITE_VARIABLE = "NORMCORE_CLAIMS_WRITE"

ARITHMETIC_VARIABLE = "NORMCORE_ARITHMETIC"
"""Set to ``reference`` by ``tools/arith_matrix.py --reference-env``: the stored counts were
measured under that arithmetic, so only there is a different count a stale record."""

SOURCES = (
    "initial seeds",
    "fresh crowds",
    "data draws",
    "row orders",
    "mini-batch orders",
    "folds",
    "settings grid",
    "training length",
    "nudges",
)
"""What a claims test may resample, in the words its record carries (`Held.resampled`):

* ``initial seeds``: the weights' (and any noise's) random start;
* ``fresh crowds``: new crowds of people drawn from the book's generator (``make_crowd``);
* ``data draws``: any other data set drawn afresh from a generator (a synthetic task, a shift);
* ``row orders`` / ``mini-batch orders``: the order rows or mini-batches are visited in;
* ``folds``: how the rows are split into training and held-out parts;
* ``settings grid``: a grid of settings (rates, depths, widths, batch sizes) beyond the chapter's;
* ``training length``: how long training runs (several budgets, or until a stated stopping rule);
* ``nudges``: tiny perturbations of inputs or weights (chapter 11).
"""

_CHAPTER = re.compile(r"ch\d\d")
_NAME = re.compile(r"[a-z][a-z0-9_]*")


class StaleClaimError(AssertionError):
    """A stored frequency is not what the claims suite measures now: re-record it."""


class ClaimDriftWarning(UserWarning):
    """Under arithmetic other than the reference, a count differs from the stored one.

    Not a failure: a run that sits near a claim's line can fall on the other side when the last
    bits of a sum change. The claims test's own assertion (with its margin) is what must hold.
    """


def reference_arithmetic() -> bool:
    """Whether this process runs under the book's reference arithmetic (see ``make claims``)."""
    return os.environ.get(ARITHMETIC_VARIABLE) == "reference"


@dataclass(frozen=True)
class Held:
    """How often one claim held: on `held` of `of` fresh runs, under `setting`.

    Attributes:
        held: how many of the runs the claim held on (0 <= held <= of).
        of: how many fresh runs (seeds, row orders, grids) were tried.
        setting: the condition the prose states with the frequency, in words
            (``"rate 0.1, 400 epochs, fresh seeds 1000-1019"``).
        resampled: what varied between the runs, each one of :data:`SOURCES`
            (``("initial seeds", "fresh crowds")``); empty only in records made before sources
            were declared.
    """

    held: int
    of: int
    setting: str
    resampled: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for field, value in (("held", self.held), ("of", self.of)):
            if not isinstance(value, int) or isinstance(value, bool):
                raise SettingError(f"{field}: expected an int, got {type(value).__name__}")
        if not 0 < self.of:
            raise SettingError(f"of: expected at least one run, got {self.of}")
        if not 0 <= self.held <= self.of:
            raise SettingError(f"held: expected 0 to {self.of}, got {self.held}")
        if not isinstance(self.setting, str) or not self.setting.strip():
            raise SettingError("setting: expected the condition in words, got nothing")
        if isinstance(self.resampled, str) or not isinstance(self.resampled, Sequence):
            raise SettingError(
                f"resampled: expected a sequence of sources, got {type(self.resampled).__name__}"
            )
        unknown = [s for s in self.resampled if s not in SOURCES]
        if unknown:
            raise SettingError(f"resampled: expected sources from {SOURCES}, got {unknown}")
        object.__setattr__(self, "resampled", tuple(self.resampled))

    @property
    def share(self) -> float:
        """The fraction of runs the claim held on."""
        return self.held / self.of

    @property
    def every(self) -> bool:
        """Whether the claim held on every run."""
        return self.held == self.of


def fresh(n: int = 20, start: int = FRESH_START) -> tuple[int, ...]:
    """`n` consecutive seeds from `start` (at least :data:`FRESH_START`): seeds no chapter uses.

    Raises:
        SettingError: `n` below 1, or `start` below :data:`FRESH_START`.
    """
    if not isinstance(n, int) or n < 1:
        raise SettingError(f"n: expected a positive int, got {n!r}")
    if not isinstance(start, int) or start < FRESH_START:
        raise SettingError(
            f"start: expected {FRESH_START} or more (chapters use fewer), got {start!r}"
        )
    return tuple(range(start, start + n))


def _path(chapter: str) -> Path:
    if not isinstance(chapter, str) or not _CHAPTER.fullmatch(chapter):
        raise SettingError(f"chapter: expected 'chNN' (e.g. 'ch06'), got {chapter!r}")
    return RESULTS / f"{chapter}.json"


def stored(chapter: str) -> dict[str, Held]:
    """Every frequency stored for `chapter` (``"ch06"``), by claim name; empty if none."""
    path = _path(chapter)
    if not path.exists():
        return {}
    entries = json.loads(path.read_text(encoding="utf-8"))
    return {name: Held(**entry) for name, entry in entries.items()}


def _as_json(h: Held) -> dict[str, object]:
    entry: dict[str, object] = {"held": h.held, "of": h.of, "setting": h.setting}
    if h.resampled:
        entry["resampled"] = list(h.resampled)
    return entry


def held(chapter: str, name: str) -> Held:
    """How often the claim `name` of `chapter` held, as the claims suite last recorded it.

    Raises:
        SettingError: no such claim is recorded (run ``make claims-record``).
    """
    entries = stored(chapter)
    if name not in entries:
        raise SettingError(
            f"{chapter}: no recorded claim {name!r} (the claims suite records it: "
            f"make claims-record)"
        )
    return entries[name]


def record(
    chapter: str,
    name: str,
    held: int,
    of: int,
    setting: str,
    *,
    resampled: Sequence[str] = (),
) -> Held:
    """Check (or, with ``NORMCORE_CLAIMS_WRITE=1``, store) how often a claim held.

    Called by the claims suite after it has re-run an experiment and counted the runs on which
    the claim held. The caller still asserts the claim itself as the prose states it, with a
    margin that a run or two falling on the other side of the line cannot cross: that assertion
    is what must hold under any arithmetic. The stored count is compared exactly only under the
    reference arithmetic (:func:`reference_arithmetic`); elsewhere a different count is reported
    as a :class:`ClaimDriftWarning`, not failed.

    Args:
        chapter: ``"chNN"``.
        name: the claim's name, lower case with underscores.
        held, of, setting, resampled: see :class:`Held`.

    Returns:
        The :class:`Held` just measured.

    Raises:
        StaleClaimError: under the reference arithmetic, the stored figures differ from these
            (or none are stored), and writing is not switched on.
    """
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise SettingError(f"name: expected lower_case_with_underscores, got {name!r}")
    measured = Held(int(held), int(of), setting, tuple(resampled))
    entries = stored(chapter)
    if entries.get(name) == measured:
        return measured
    if os.environ.get(WRITE_VARIABLE) == "1":
        entries[name] = measured
        path = _path(chapter)
        path.parent.mkdir(parents=True, exist_ok=True)
        text = {k: _as_json(entries[k]) for k in sorted(entries)}
        path.write_text(json.dumps(text, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        return measured
    before = entries.get(name)
    if (
        not reference_arithmetic()
        and before is not None
        and (before.of, before.setting, before.resampled) == (of, setting, measured.resampled)
    ):
        warnings.warn(
            f"{chapter}/{name}: {measured.held} of {of} under this arithmetic, {before.held} "
            "stored (measured under the reference arithmetic)",
            ClaimDriftWarning,
            stacklevel=2,
        )
        return measured
    raise StaleClaimError(
        f"{chapter}/{name}: measured {measured}, stored {entries.get(name)}; if the change is "
        f"meant, run `make claims-record` and re-run the chapter"
    )
