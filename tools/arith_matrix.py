"""Run every chapter under nbval, and the numeric tests, under several CPU arithmetic settings.

BLAS (OpenBLAS, bundled with numpy) picks its matrix-product kernels by processor; numpy picks
its vectorised loops (sums, exp, log, tanh) by processor. Both change the last bits of results,
so a stored output that depends on those bits passes on one computer and fails on another. This
script makes one computer behave like several, with the stored outputs left as they are:

    OPENBLAS_CORETYPE         which OpenBLAS kernel runs (unset: the machine's own)
    NPY_DISABLE_CPU_FEATURES  which of numpy's SIMD loops are switched off

    python tools/arith_matrix.py              # every configuration (what `make test-arith` runs)
    python tools/arith_matrix.py --list       # the configurations and why each is there
    python tools/arith_matrix.py haswell      # some of them

A configuration naming a numpy feature this processor lacks is skipped and says so (numpy would
refuse to start). Exit status 1 if any configuration fails.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NO_AVX512 = "X86_V4 AVX512_ICL AVX512_SPR"
NO_AVX2 = "X86_V3 X86_V4 AVX512_ICL AVX512_SPR"

# (name, environment, why it is in the matrix). Chosen by measurement on the development machine
# (Xeon with AVX-512), running chapters 1, 6 and 7 and their tests on the stored outputs as they
# were before the rounding rule (16 cells and tests failed by default):
#   default / SkylakeX   AVX-512 BLAS kernels: 16 failures, the same 16 under both (SkylakeX
#                        left out: it adds nothing on this machine)
#   Haswell / Zen        AVX2 BLAS kernels: nothing failed (the stored outputs were made with
#                        AVX2 kernels); Zen changed exactly what Haswell changed (left out)
#   numpy without AVX-512 loops: 14 failures, some in cells the BLAS kernels left alone (a
#                        rounding-level gap, other digits of the rate-60 row)
#   numpy with SSE loops only: the same 14 as without AVX-512 on these chapters; kept because
#                        it is what a processor without AVX2 runs, float32 loops included
#   Haswell's BLAS with SSE-only numpy: the two knobs act on different code (matrix products
#                        against sums and elementwise loops), so one run turns both at once
CONFIGS: list[tuple[str, dict[str, str], str]] = [
    ("default", {}, "the machine's own kernels and loops"),
    ("haswell", {"OPENBLAS_CORETYPE": "Haswell"}, "AVX2 BLAS kernels (a common laptop)"),
    ("no-avx512", {"NPY_DISABLE_CPU_FEATURES": NO_AVX512}, "numpy without AVX-512 loops"),
    ("no-avx2", {"NPY_DISABLE_CPU_FEATURES": NO_AVX2}, "numpy with SSE loops only"),
    ("haswell+no-avx2", {"OPENBLAS_CORETYPE": "Haswell", "NPY_DISABLE_CPU_FEATURES": NO_AVX2},
     "both knobs turned at once"),
]
# The tests whose figures come from floating-point arithmetic (the rest check structure, errors
# and the site, which no CPU setting can change).
NUMERIC_TESTS = [
    "tests/test_book_helpers.py",
    "tests/test_comparison.py",
    "tests/test_rates.py",
    "tests/test_shift.py",
    "tests/test_worked_numbers.py",
    "tests/test_reference.py",
    "tests/test_routes.py",
    "tests/test_weightnorm_experiment.py",
    "tests/test_oracle.py",
    "tests/test_torch_agreement.py",
]


def numpy_features() -> set[str]:
    """The SIMD features numpy found on this processor (baseline and dispatched)."""
    code = ("import numpy._core._multiarray_umath as m; "
            "print(' '.join(k for k, v in m.__cpu_features__.items() if v))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def run(name: str, env: dict[str, str], workers: int) -> tuple[bool, float, str]:
    """Run nbval over every chapter and the numeric tests under `env`; (passed, seconds, tail)."""
    chapters = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "book").glob("[0-9][0-9]-*.ipynb"))
    command = [sys.executable, "-m", "pytest", "-q", "-rf", "-p", "no:cacheprovider", "--nbval",
               "-n", str(workers), "--dist", "loadfile", *chapters, *NUMERIC_TESTS]
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=ROOT, env={**os.environ, **env}, capture_output=True,
                          text=True)
    seconds = time.perf_counter() - start
    lines = [line for line in proc.stdout.splitlines() if line.startswith("FAILED")]
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-500:]
    return proc.returncode == 0, seconds, "\n".join([*lines, summary])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="configurations to run (default: all)")
    parser.add_argument("--list", action="store_true", help="list the configurations")
    parser.add_argument("-n", "--workers", type=int, default=2, help="pytest-xdist workers")
    args = parser.parse_args(argv)
    chosen = [c for c in CONFIGS if not args.names or c[0] in args.names]
    if args.list or not chosen:
        for name, env, why in CONFIGS:
            setting = " ".join(f"{k}={v!r}" for k, v in env.items()) or "(nothing set)"
            print(f"{name:16} {setting}\n{'':16} {why}")
        return 0 if chosen else 2
    found = numpy_features()
    failed = []
    for name, env, _ in chosen:
        wanted = set(env.get("NPY_DISABLE_CPU_FEATURES", "").split())
        if wanted - found:
            print(f"{name}: skipped (this processor has no {' '.join(sorted(wanted - found))})")
            continue
        ok, seconds, tail = run(name, env, args.workers)
        print(f"{name}: {'passed' if ok else 'FAILED'} in {seconds:.0f} s\n  "
              + tail.replace("\n", "\n  "), flush=True)
        if not ok:
            failed.append(name)
    if failed:
        print(f"arithmetic matrix: {len(failed)} configuration(s) failed: {', '.join(failed)}")
        return 1
    print("arithmetic matrix: every configuration passed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
