"""How long the claims suite takes, module by module: ``python tools/bench_claims.py``.

The claims suite (``tests/claims/test_chNN.py``) re-runs each chapter's conclusions on fresh seeds;
it must fit in 10 minutes on the 2-core machine in all. Each module is run here on its own, in
one pytest process (no workers), so the figures add up to the suite's CPU budget and a module that
grows stands out. Timings are printed, never asserted.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLAIMS = ROOT / "tests" / "claims"
BUDGET_S = 600.0


def claims_rows(modules: list[Path] | None = None) -> list[tuple[str, float, int]]:
    """(module, wall seconds, pytest's exit status) for each claims module, run one at a time."""
    modules = sorted(CLAIMS.glob("test_*.py")) if modules is None else modules
    rows = []
    for module in modules:
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-m", "claims", str(module)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        rows.append((module.name, time.perf_counter() - start, done.returncode))
    return rows


def print_claims_table(rows: list[tuple[str, float, int]]) -> None:
    """The table: one line a module, then the total against the 10-minute budget."""
    print("claims suite, one module at a time (one process each, wall s):")
    for name, seconds, status in rows:
        verdict = "passed" if status == 0 else f"FAILED (pytest exit {status})"
        print(f"  {name:<28} {seconds:7.1f}  {verdict}")
    total = sum(seconds for _, seconds, _ in rows)
    print(f"  {'in all':<28} {total:7.1f}  (budget {BUDGET_S:.0f} s on 2 cores, run with -n 2)")


def main() -> int:
    rows = claims_rows()
    print_claims_table(rows)
    return 0 if all(status == 0 for _, _, status in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
