"""Run every chapter under nbval, and the numeric tests, under several CPU arithmetic settings.

BLAS (OpenBLAS, bundled with numpy) picks its matrix-product kernels by processor; numpy picks
its vectorised loops (sums, exp, log, tanh) by processor. Both change the last bits of results,
so a stored output that depends on those bits passes on one computer and fails on another. This
script makes one computer behave like several, with the stored outputs left as they are.

The configurations are built from the features of THIS processor (``/proc/cpuinfo``'s flags and
numpy's ``__cpu_features__``), never from a fixed list, so each one really runs here:

* BLAS kernels, one per level the processor reaches, always named explicitly in
  ``OPENBLAS_CORETYPE`` (an inherited value is overridden): SkylakeX (AVX-512) where the
  processor has AVX-512, Haswell (AVX2 and FMA) where it has those, and an SSE-era kernel
  (Nehalem, or Prescott without SSE4.2); one BLAS thread in every configuration.
* numpy's SIMD loops at the same levels, by ``NPY_DISABLE_CPU_FEATURES``: everything the
  processor has; without the AVX-512 targets it has; SSE only (every dispatched target above
  numpy's baseline that this processor has is switched off).
* The configurations: each level with its own BLAS kernel (a machine of that level), plus the
  two knobs turned against each other (the fastest kernel with SSE loops, the SSE-era kernel with
  every loop), since they act on different code (matrix products against sums and elementwise
  loops). An AVX2 processor gets 4, an AVX-512 one 5.

Before a configuration runs, a probe started with its environment prints what actually runs
there: threadpoolctl's BLAS kernel and thread count, and numpy's enabled dispatch targets. Two
configurations that probe the same count once (the second is not run again). On an x86-64
processor with AVX2, fewer than 4 distinct configurations is a failure. On ARM (NEON, SVE) the
matrix runs what applies there (a generic ARMv8 kernel and, with SVE, a Neoverse V1 one; numpy
with and without its dispatched targets) and says so.

    python tools/arith_matrix.py              # every configuration (what `make test-arith` runs)
    python tools/arith_matrix.py --list       # the configurations, and what each one runs here
    python tools/arith_matrix.py haswell/all  # some of them
    python tools/arith_matrix.py --chapters book/02-*.ipynb --tests tests/test_oracle.py
    env $(python tools/arith_matrix.py --reference-env) COMMAND   # COMMAND under the reference

The book's reference arithmetic (``reference``) is the AVX2 level's configuration: the chapters'
stored runs (``make notebooks``), the figure pack and the claims suite's stored frequencies are
made under it, so they repeat bit for bit on any x86-64 processor with AVX2 and FMA. Its
variables come with ``NORMCORE_ARITHMETIC=reference``: only there does the claims suite compare
its stored counts exactly; everywhere else (the matrix's configurations, an ARM laptop) a count
that moved is reported, and the claims' own assertions, made with margins, must hold. The
configuration furthest from the reference runs the claims suite too.
``NORMCORE_SIMULATE_NO_REFERENCE=1`` acts as a processor without the reference arithmetic.

The numeric tests are the test modules marked ``numeric`` (``pytestmark = pytest.mark.numeric``,
registered in pyproject.toml); ``pytest --collect-only -m numeric tests`` finds them. Exit status
1 if any configuration fails, or if too few distinct ones ran. ``--summary FILE`` writes a JSON
record of what ran (``.ci/run`` prints it at the end).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# OpenBLAS's names (OPENBLAS_CORETYPE) for the kernels the matrix asks for.
AVX512_KERNEL = "SkylakeX"
AVX2_KERNEL = "Haswell"
SSE42_KERNEL = "Nehalem"
SSE3_KERNEL = "Prescott"
ARM_GENERIC_KERNEL = "ARMV8"
ARM_SVE_KERNEL = "NEOVERSEV1"

# /proc/cpuinfo flags that OpenBLAS's SkylakeX and Haswell kernels need.
AVX512_FLAGS = frozenset({"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"})
AVX2_FLAGS = frozenset({"avx2", "fma"})
# numpy's names of SSE-era targets (numpy 2.4 groups them as its baseline X86_V2).
SSE_TARGETS = frozenset({"SSE", "SSE2", "SSE3", "SSSE3", "SSE41", "POPCNT", "SSE42", "X86_V2"})
# Distinct configurations an x86-64 processor with AVX2 must reach.
MIN_DISTINCT_AVX2 = 4


@dataclass(frozen=True)
class Cpu:
    """What the matrix is built from.

    Attributes:
        machine: ``platform.machine()``, e.g. ``"x86_64"`` or ``"aarch64"``.
        flags: the processor's feature flags, lower case (``/proc/cpuinfo`` ``flags`` on x86,
            ``Features`` on ARM).
        dispatch: numpy's dispatched SIMD targets, in its order (``__cpu_dispatch__``).
        present: the numpy features this processor has (``__cpu_features__`` that are True).
    """

    machine: str
    flags: frozenset[str]
    dispatch: tuple[str, ...]
    present: frozenset[str]

    @property
    def is_x86(self) -> bool:
        return self.machine.lower() in {"x86_64", "amd64"}

    @property
    def is_arm(self) -> bool:
        return self.machine.lower() in {"aarch64", "arm64"}


@dataclass(frozen=True)
class Config:
    """One arithmetic setting: a BLAS kernel and the numpy targets switched off.

    Attributes:
        name: ``"<kernel>/<numpy level>"``, e.g. ``"haswell/sse"``.
        kernel: the OpenBLAS kernel asked for (``OPENBLAS_CORETYPE``).
        disable: numpy's targets switched off (``NPY_DISABLE_CPU_FEATURES``), in numpy's order.
        why: one line on what machine it stands for.
    """

    name: str
    kernel: str
    disable: tuple[str, ...]
    why: str

    def env(self) -> dict[str, str]:
        """The variables set for this configuration (each overrides an inherited value)."""
        return {
            "OPENBLAS_CORETYPE": self.kernel,
            "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1",
            "NPY_DISABLE_CPU_FEATURES": " ".join(self.disable),
        }


@dataclass(frozen=True)
class Level:
    """A level of the processor: its BLAS kernel and the numpy targets switched off there."""

    name: str
    kernel: str
    disable: tuple[str, ...]
    why: str


def _present_dispatch(cpu: Cpu) -> list[str]:
    return [t for t in cpu.dispatch if t in cpu.present]


def levels(cpu: Cpu) -> list[Level]:
    """The processor's levels, fastest first, each one it can really run.

    x86-64: AVX-512 (where the flags have it), AVX2 (where they have AVX2 and FMA), SSE (always).
    ARM: SVE (where the flags have it), then generic ARMv8 with numpy's baseline (NEON/ASIMD).
    Other machines: one level that sets only the thread count's kernel-independent variables.
    """
    dispatched = _present_dispatch(cpu)
    if cpu.is_x86:
        found: list[Level] = []
        if AVX512_FLAGS <= cpu.flags:
            found.append(Level("all", AVX512_KERNEL, (), "every loop this processor has"))
        if AVX2_FLAGS <= cpu.flags:
            no512 = tuple(t for t in dispatched if t.startswith("AVX512") or t == "X86_V4")
            found.append(
                Level(
                    "no-avx512" if found else "all",
                    AVX2_KERNEL,
                    no512,
                    "an AVX2 processor (a common laptop)",
                )
            )
        sse = tuple(t for t in dispatched if t not in SSE_TARGETS)
        kernel = SSE42_KERNEL if "sse4_2" in cpu.flags else SSE3_KERNEL
        found.append(
            Level("sse" if found else "all", kernel, sse, "an SSE-only processor (before AVX)")
        )
        return found
    if cpu.is_arm:
        found = []
        if "sve" in cpu.flags:
            found.append(Level("all", ARM_SVE_KERNEL, (), "every loop this processor has"))
        found.append(
            Level(
                "neon" if found else "all",
                ARM_GENERIC_KERNEL,
                tuple(dispatched),
                "numpy's baseline loops (NEON/ASIMD), generic ARMv8 kernel",
            )
        )
        return found
    return [Level("all", "", (), f"{cpu.machine}: the machine's own kernels and loops")]


def configurations(cpu: Cpu) -> list[Config]:
    """The matrix for ``cpu``: each level with its own kernel, then the two crossings (fastest
    kernel with the slowest loops, slowest kernel with the fastest loops) when there are two
    levels or more. Names are ``<kernel>/<numpy level>``."""
    found = levels(cpu)

    def config(blas: Level, loops: Level, why: str) -> Config:
        name = f"{(blas.kernel or 'own').lower()}/{loops.name}"
        return Config(name, blas.kernel, loops.disable, why)

    matrix = [config(level, level, level.why) for level in found]
    if len(found) >= 2:
        top, bottom = found[0], found[-1]
        matrix.append(config(top, bottom, f"{top.kernel} BLAS kernels with {bottom.name} loops"))
        matrix.append(config(bottom, top, f"{bottom.kernel} BLAS kernels with {top.name} loops"))
    return matrix


NO_REFERENCE = "NORMCORE_SIMULATE_NO_REFERENCE"
"""Set to 1 to act as a processor without the reference arithmetic (an ARM laptop): no
reference environment, so ``make test`` runs everything under this processor's own arithmetic
and the claims suite reports count drifts instead of failing on them."""

REFERENCE_MARK = ("NORMCORE_ARITHMETIC", "reference")
"""Set beside the reference arithmetic's variables: the claims suite compares its stored counts
exactly only where it is set (``normcore.claims.reference_arithmetic``)."""


def reference(cpu: Cpu) -> Config | None:
    """The book's reference arithmetic: the AVX2 level (Haswell's BLAS kernels, numpy's loops up
    to AVX2, one BLAS thread), the one the stored runs are made under (``make notebooks``) and
    the figure pack redraws under, so that both give the same bits on any x86-64 processor with
    AVX2 and FMA, with or without AVX-512. It is the matrix's own configuration for that level.
    None where the processor cannot run it (ARM, an x86-64 without AVX2 and FMA): there the
    stored runs' last bits are this processor's own."""
    if not cpu.is_x86 or os.environ.get(NO_REFERENCE) == "1":
        return None
    # the levels come first in the matrix, so the first Haswell entry is the AVX2 level's own
    return next((c for c in configurations(cpu) if c.kernel == AVX2_KERNEL), None)


def use_reference(environ: dict[str, str] | None = None) -> str:
    """Put the reference arithmetic's variables into ``environ`` (default: ``os.environ``),
    for the processes started after this call, and say which arithmetic that is. Call it
    before numpy is imported when the caller computes in its own process."""
    environ = os.environ if environ is None else environ
    cpu = this_cpu()
    config = reference(cpu)
    if config is None:
        return f"{platform_note(cpu)}: this processor's own arithmetic (no AVX2 here)"
    environ.pop("NPY_ENABLE_CPU_FEATURES", None)
    environ.update(config.env())
    environ[REFERENCE_MARK[0]] = REFERENCE_MARK[1]
    return f"the book's reference arithmetic, {config.name}: {config.why}"


def furthest(cpu: Cpu) -> Config:
    """The configuration furthest from the reference: the slowest level with its own kernel
    (on x86-64 an SSE-era kernel with SSE loops). The numeric tests marked ``slow`` (long
    re-runs: the public-call fuzz, the rate sweeps, the digits experiments) run there and under
    the reference; the other configurations run the chapters and the rest of the numeric
    tests."""
    return configurations(cpu)[len(levels(cpu)) - 1]


def parse_cpuinfo(text: str) -> frozenset[str]:
    """The feature flags of the first processor in a /proc/cpuinfo text (x86 ``flags``, ARM
    ``Features``), lower case; empty when there is none."""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip().lower() in {"flags", "features"}:
            return frozenset(value.lower().split())
    return frozenset()


def this_cpu() -> Cpu:
    """This processor, as the matrix sees it (numpy's view read in a clean subprocess)."""
    try:
        flags = parse_cpuinfo(Path("/proc/cpuinfo").read_text(encoding="utf-8"))
    except OSError:
        flags = frozenset()
    code = (
        "import json, numpy._core._multiarray_umath as m; "
        "print(json.dumps([list(m.__cpu_dispatch__), "
        "[k for k, v in m.__cpu_features__.items() if v]]))"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("NPY_")}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    dispatch, present = json.loads(out.stdout)
    return Cpu(platform.machine(), flags, tuple(dispatch), frozenset(present))


@dataclass(frozen=True)
class Ran:
    """What a configuration's environment really runs, read by the probe.

    Attributes:
        blas: (library, kernel, threads) for every BLAS library threadpoolctl finds.
        numpy: numpy's dispatch targets that are enabled there, in numpy's order.
    """

    blas: tuple[tuple[str, str, int], ...]
    numpy: tuple[str, ...]

    def describe(self) -> str:
        blas = ", ".join(f"{lib} {kernel} x{threads} thread" for lib, kernel, threads in self.blas)
        loops = " ".join(self.numpy) or "baseline only"
        return f"BLAS {blas or 'none found'}; numpy loops: {loops}"


PROBE = """
import json
import numpy as np
import numpy._core._multiarray_umath as m
import threadpoolctl
np.ones((2, 2)) @ np.ones((2, 2))
blas = [(i.get("internal_api", ""), i.get("architecture", ""), i.get("num_threads", 0))
        for i in threadpoolctl.threadpool_info() if i.get("user_api") == "blas"]
numpy = [t for t in m.__cpu_dispatch__ if m.__cpu_features__.get(t)]
print(json.dumps({"blas": blas, "numpy": numpy}))
"""


def environment(config: Config, base: dict[str, str] | None = None) -> dict[str, str]:
    """The process environment for ``config``: ``base`` (default: this one) with every
    arithmetic variable replaced, and NPY_ENABLE_CPU_FEATURES (which would narrow numpy
    further) removed."""
    env = dict(os.environ if base is None else base)
    env.pop("NPY_ENABLE_CPU_FEATURES", None)
    env.pop(REFERENCE_MARK[0], None)  # the matrix varies the arithmetic: no count is exact here
    env.update(config.env())
    if not config.kernel:
        env.pop("OPENBLAS_CORETYPE")
    return env


def probe(config: Config) -> Ran:
    """Start Python with ``config``'s environment and read what runs there."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        env=environment(config),
        cwd=ROOT,
    )
    if out.returncode != 0:
        raise RuntimeError(f"{config.name}: the probe failed to start:\n{out.stderr[-2000:]}")
    found = json.loads(out.stdout.strip().splitlines()[-1])
    return Ran(tuple(tuple(b) for b in found["blas"]), tuple(found["numpy"]))


def distinct(ran: list[tuple[Config, Ran]]) -> list[tuple[Config, Ran, Config | None]]:
    """Each configuration with the earlier one that ran the same arithmetic (None if it is the
    first to run it)."""
    seen: dict[Ran, Config] = {}
    out = []
    for config, what in ran:
        out.append((config, what, seen.get(what)))
        seen.setdefault(what, config)
    return out


def too_few(cpu: Cpu, count: int) -> str | None:
    """Why ``count`` distinct configurations are not enough on ``cpu`` (None if they are)."""
    if cpu.is_x86 and AVX2_FLAGS <= cpu.flags and count < MIN_DISTINCT_AVX2:
        return (
            f"only {count} distinct arithmetic configuration(s) on an x86-64 processor "
            f"with AVX2 (at least {MIN_DISTINCT_AVX2} expected)"
        )
    return None


def platform_note(cpu: Cpu) -> str:
    if cpu.is_x86:
        return "x86-64"
    if cpu.is_arm:
        return (
            f"ARM ({'NEON and SVE' if 'sve' in cpu.flags else 'NEON'}): ran what applies "
            "here (a generic ARMv8 kernel, numpy with and without its dispatched loops); "
            "the x86 kernels and SIMD levels are not reachable on this processor"
        )
    return f"{cpu.machine}: no known kernels to vary; ran the machine's own arithmetic"


@dataclass
class Outcome:
    config: Config
    ran: Ran
    same_as: str | None = None
    passed: bool | None = None
    seconds: float = 0.0
    tail: list[str] = field(default_factory=list)
    by_suite: bool = False  # not run here: make test's suite ran everything under it


def numeric_tests() -> list[str]:
    """The test modules with a test marked ``numeric`` (collected by pytest, no hand list)."""
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-m",
            "numeric",
            "-p",
            "no:cacheprovider",
            "tests",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if out.returncode not in (0, 5):  # 5: nothing collected
        tail = out.stdout[-3000:]
        raise SystemExit(f"arith_matrix: collecting the numeric tests failed:\n{tail}")
    modules = {line.split("::")[0] for line in out.stdout.splitlines() if "::" in line}
    return sorted(modules)


def book_chapters() -> list[str]:
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / "book").glob("[0-9][0-9]-*.ipynb"))


def run(
    config: Config,
    targets: list[str],
    workers: int,
    junit: Path | None = None,
    marks: str | None = None,
) -> tuple[bool, float, list[str]]:
    """nbval over the chapters and the numeric tests under ``config``; (passed, s, tail). With
    ``junit``, pytest writes its JUnit XML report there; with ``marks``, only the tests that
    marker expression selects run (the chapters' cells carry no marker)."""
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-rf",
        "-p",
        "no:cacheprovider",
        "--nbval",
        "-n",
        str(workers),
        "--dist",
        "loadfile",
        *targets,
        *(["-m", marks] if marks else []),
        *([f"--junitxml={junit}"] if junit else []),
    ]
    start = time.perf_counter()
    proc = subprocess.run(
        command, cwd=ROOT, env=environment(config), capture_output=True, text=True
    )
    seconds = time.perf_counter() - start
    lines = [line for line in proc.stdout.splitlines() if line.startswith("FAILED")]
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-500:]
    return proc.returncode == 0, seconds, [*lines, summary]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="configurations to run (default: all)")
    parser.add_argument(
        "--list",
        action="store_true",
        help="list the configurations and what each runs here; run nothing",
    )
    parser.add_argument("-n", "--workers", type=int, default=2, help="pytest-xdist workers")
    parser.add_argument("--chapters", nargs="*", help="notebooks (default: book/NN-*.ipynb)")
    parser.add_argument("--tests", nargs="*", help="test files (default: the numeric tests)")
    parser.add_argument("--summary", type=Path, help="write what ran, as JSON, to this file")
    parser.add_argument(
        "--reference-env",
        action="store_true",
        help="print the reference arithmetic's variables as NAME=VALUE words for env(1); run "
        "nothing (nothing is printed where the processor cannot run it)",
    )
    parser.add_argument(
        "--suite-ran-reference",
        action="store_true",
        help="the full suite (make test) has just run under the reference arithmetic (.ci/run "
        "does that): do not run that configuration again",
    )
    parser.add_argument(
        "--slow-everywhere",
        action="store_true",
        help="run the slow numeric tests under every configuration (default: under the "
        "reference and the furthest configuration only)",
    )
    args = parser.parse_args(argv)
    if args.reference_env:
        config = reference(this_cpu())
        if config is not None:
            # numpy reads a comma-separated list too: one word each for env(1)
            words = {k: v.replace(" ", ",") for k, v in config.env().items() if v}
            words[REFERENCE_MARK[0]] = REFERENCE_MARK[1]
            print(" ".join(f"{k}={v}" for k, v in words.items()))
        return 0
    cpu = this_cpu()
    matrix = configurations(cpu)
    chosen = [c for c in matrix if not args.names or c.name in args.names]
    unknown = sorted(set(args.names) - {c.name for c in matrix})
    if unknown:
        print(
            f"arith_matrix: no configuration {unknown} on this processor; it has "
            f"{[c.name for c in matrix]}",
            file=sys.stderr,
        )
        return 2
    print(f"arith_matrix: {platform_note(cpu)}; {len(chosen)} configuration(s)", flush=True)
    outcomes = []
    for config, what, same in distinct([(c, probe(c)) for c in chosen]):
        outcomes.append(Outcome(config, what, same.name if same else None))
        setting = " ".join(f"{k}={v!r}" for k, v in config.env().items())
        print(
            f"{config.name:18} {setting}\n{'':18} {config.why}\n{'':18} runs: "
            f"{what.describe()}"
            + (f"\n{'':18} = {same.name}: the same arithmetic, counted once" if same else ""),
            flush=True,
        )
    unique = [o for o in outcomes if o.same_as is None]
    problems = []
    if not args.names and (reason := too_few(cpu, len(unique))):
        problems.append(reason)
    for o in unique:
        asked = o.config.kernel.lower()
        if any(threads != 1 for _, _, threads in o.ran.blas):
            problems.append(f"{o.config.name}: BLAS runs more than one thread")
        if asked and all(kernel.lower() != asked for _, kernel, _ in o.ran.blas):
            print(
                f"{o.config.name}: asked for the {o.config.kernel} kernel, OpenBLAS runs "
                f"{[k for _, k, _ in o.ran.blas]}",
                flush=True,
            )
    if args.list:
        for problem in problems:
            print(f"arith_matrix: {problem}")
        return 1 if problems else 0
    targets = [
        *(args.chapters if args.chapters is not None else book_chapters()),
        *(args.tests if args.tests is not None else numeric_tests()),
    ]
    ours, far = reference(cpu), furthest(cpu)
    for o in unique:
        if args.suite_ran_reference and o.config == ours:
            o.by_suite = True
            o.tail = ["not run again: make test's suite ran everything under it (.ci/run)"]
            print(f"{o.config.name}: {o.tail[0]}", flush=True)
            continue
        junit = None
        if args.summary:
            junit = args.summary.parent / f"arith-{o.config.name.replace('/', '-')}.xml"
        every = args.slow_everywhere or o.config in (ours, far) or args.tests is not None
        # the claims suite once more, under the arithmetic furthest from the one it stored its
        # counts under: its conclusions (asserted with margins) must hold there too
        claims = ["tests/claims"] if o.config == far and args.tests is None else []
        o.passed, o.seconds, o.tail = run(
            o.config, targets + claims, args.workers, junit, marks=None if every else "not slow"
        )
        if claims:
            o.tail.insert(0, "(the claims suite ran here too)")
        if not every:
            o.tail.insert(0, f"(the slow numeric tests ran under {far.name})")
        print(
            f"{o.config.name}: {'passed' if o.passed else 'FAILED'} in {o.seconds:.0f} s\n  "
            + "\n  ".join(o.tail),
            flush=True,
        )
    failed = [o.config.name for o in unique if o.passed is False]
    if args.summary:
        args.summary.parent.mkdir(parents=True, exist_ok=True)
        args.summary.write_text(
            json.dumps(
                {
                    "platform": platform_note(cpu),
                    "targets": len(targets),
                    "configurations": [
                        {
                            "name": o.config.name,
                            "env": o.config.env(),
                            "runs": o.ran.describe(),
                            "same_as": o.same_as,
                            "by_suite": o.by_suite,
                            "passed": o.passed,
                            "seconds": round(o.seconds, 1),
                            "summary": o.tail[-1] if o.tail else "",
                        }
                        for o in outcomes
                    ],
                    "problems": problems,
                },
                indent=2,
            ),
            encoding="utf-8",
        )
    for problem in problems:
        print(f"arith_matrix: FAILED: {problem}")
    if failed:
        print(f"arith_matrix: {len(failed)} configuration(s) failed: {', '.join(failed)}")
    if failed or problems:
        return 1
    print(
        f"arith_matrix: {len(unique)} distinct configuration(s) passed "
        f"({len(outcomes) - len(unique)} counted once as the same arithmetic)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
