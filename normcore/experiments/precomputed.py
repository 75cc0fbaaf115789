"""Figures from runs too long for a chapter's time, computed by a named function and stored.

A chapter must run top to bottom in seconds, but a claim about where training ends needs runs
trained to convergence (minutes on one core). Those runs are made by a function the reader can
call (for example `resconv.converged`); the claims suite calls it on the chapter's seeds beside
its fresh ones and stores the chapter's figures here, in ``normcore/data/precomputed/NAME.json``,
rounded to the digits the chapter prints; the chapter reads them with `load`. As with
`normcore.claims.record`, a figure the suite measures that differs from the stored one (after
rounding) fails only under the reference arithmetic (elsewhere it warns), and
``NORMCORE_CLAIMS_WRITE=1`` stores the new figures instead.
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from ..claims import WRITE_VARIABLE, ClaimDriftWarning, StaleClaimError, reference_arithmetic

STORE = Path(__file__).resolve().parent.parent / "data" / "precomputed"
#: the digits every stored figure keeps (the chapters print at most three)
DIGITS = 4


def _rounded(value: Any) -> Any:
    a = np.asarray(value, dtype=np.float64)
    return np.round(a, DIGITS).tolist()


def load(name: str) -> dict[str, Any]:
    """The stored figures of `name`: a dict of lists (one entry per chapter seed) and numbers,
    with ``"made_by"`` naming the function that computes them and ``"setting"`` in words."""
    with open(STORE / f"{name}.json", encoding="utf-8") as f:
        stored = json.load(f)
    return {k: (np.array(v) if isinstance(v, list) else v) for k, v in stored.items()}


def check(name: str, figures: dict[str, Any], made_by: str, setting: str) -> None:
    """Store `figures` (with ``NORMCORE_CLAIMS_WRITE=1``) or compare them with the stored ones."""
    now = {k: _rounded(v) for k, v in figures.items()}
    now["made_by"], now["setting"] = made_by, setting
    path = STORE / f"{name}.json"
    if os.environ.get(WRITE_VARIABLE) == "1" or not path.exists():
        STORE.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        return
    stored = json.loads(path.read_text(encoding="utf-8"))
    differ = sorted(k for k in now if stored.get(k) != now[k])
    if differ:
        message = f"{name}: stored figures differ from the run's: {differ}"
        if reference_arithmetic():
            raise StaleClaimError(message + f" (re-record with {WRITE_VARIABLE}=1)")
        warnings.warn(message, ClaimDriftWarning, stacklevel=2)
