"""What CI ran, said at its end: read the reports `.ci/run` collected and print one summary.

``.ci/run`` runs each step with ``REPORTS=_build/ci`` and records, per step, its exit status and
seconds in ``steps.tsv`` and its output in ``<step>.log``; every pytest run writes a JUnit XML file
there (``lint``/``suite``/``claims``), the arithmetic matrix ``arith.json`` and one XML per
configuration. This prints:

* the tests that passed, failed and were skipped in each suite (under ``CI=true`` a skip is a
  failure: each oracle must be installed), with the reasons of any skip;
* the claims suite, the seed-shift check and the visible-cells check;
* each arithmetic configuration that ran, what it ran (BLAS kernel and threads, numpy's loops),
  its tests, and how the configurations differed;

and exits 1 if any step failed, any test was skipped under CI, or the matrix reported a problem.

    python tools/ci_report.py _build/ci
"""

from __future__ import annotations

import json
import os
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Counts:
    """A JUnit report's totals and its skip reasons."""

    passed: int = 0
    failed: int = 0
    skipped: int = 0
    reasons: tuple[str, ...] = field(default_factory=tuple)

    def __str__(self) -> str:
        return f"{self.passed:,} passed, {self.failed:,} failed, {self.skipped:,} skipped"


def junit(path: Path) -> Counts | None:
    """The totals of a pytest JUnit XML report (None if it is missing or unreadable)."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return None
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    total = failed = skipped = 0
    reasons: list[str] = []
    for suite in suites:
        total += int(suite.get("tests", 0))
        failed += int(suite.get("failures", 0)) + int(suite.get("errors", 0))
        skipped += int(suite.get("skipped", 0))
        for case in suite.iter("testcase"):
            for skip in case.findall("skipped"):
                reasons.append(
                    f"{case.get('classname')}::{case.get('name')}: {skip.get('message')}"
                )
    return Counts(total - failed - skipped, failed, skipped, tuple(reasons))


def steps(folder: Path) -> dict[str, tuple[int, float]]:
    """Each step's (exit status, seconds), from steps.tsv."""
    out: dict[str, tuple[int, float]] = {}
    path = folder / "steps.tsv"
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            name, rc, seconds = line.split("\t")
            out[name] = (int(rc), float(seconds))
    return out


def last_lines(path: Path, n: int = 2) -> str:
    if not path.is_file():
        return "(no output)"
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return " / ".join(lines[-n:]) if lines else "(no output)"


def report(folder: Path, ci: bool) -> tuple[list[str], list[str]]:
    """The summary's lines and the reasons CI failed (empty when it passed)."""
    ran = steps(folder)
    lines: list[str] = []
    problems: list[str] = []

    def status(step: str) -> str:
        if step not in ran:
            problems.append(f"{step}: did not run")
            return "did not run"
        rc, seconds = ran[step]
        if rc != 0:
            problems.append(f"{step}: exit status {rc}")
        return f"{'passed' if rc == 0 else f'FAILED (exit {rc})'} in {seconds:.0f} s"

    lines.append(f"make test (lint, the suite, the claims suite): {status('test')}")
    for name, what in (
        ("suite", "the suite (unit, notebooks, browser, site)"),
        ("claims", "the claims suite"),
    ):
        counts = junit(folder / f"{name}.xml")
        if counts is None:
            lines.append(f"  {what}: no report (it did not run)")
            problems.append(f"{what}: no report")
            continue
        lines.append(f"  {what}: {counts}")
        if ci and counts.skipped:
            problems.append(f"{what}: {counts.skipped} skipped under CI=true")
            lines += [f"    skipped: {reason}" for reason in counts.reasons]
        if name == "claims" and counts.passed == 0:
            problems.append("the claims suite ran no test")
    for step, what in (
        ("fresh-seeds", "seed-shift check (make fresh-seeds)"),
        ("visible-cells", "visible-cells check (make visible-cells)"),
    ):
        lines.append(f"{what}: {status(step)}")
        lines.append(f"  {last_lines(folder / f'{step}.log')}")
    lines.append(f"arithmetic matrix (make test-arith): {status('test-arith')}")
    lines += arith(folder, ci, problems)
    return lines, problems


def arith(folder: Path, ci: bool, problems: list[str]) -> list[str]:
    path = folder / "arith.json"
    if not path.is_file():
        problems.append("arithmetic matrix: no summary")
        return ["  no summary (it did not run)"]
    data = json.loads(path.read_text(encoding="utf-8"))
    lines = [f"  {data['platform']}"]
    configs = data["configurations"]
    for c in configs:
        if c["same_as"]:
            lines.append(f"  {c['name']}: the same arithmetic as {c['same_as']}, counted once")
            continue
        if c.get("by_suite"):
            suite = junit(folder / "suite.xml")
            lines.append(
                f"  {c['name']}: the reference arithmetic, left to make test's suite, which ran "
                f"every test and chapter under it: {suite or 'no report'}"
            )
            lines.append(f"      runs: {c['runs']}")
            if suite is None or suite.failed or steps(folder).get("test", (1, 0))[0] != 0:
                problems.append(f"arithmetic {c['name']}: make test's suite did not pass")
            continue
        counts = junit(folder / f"arith-{c['name'].replace('/', '-')}.xml")
        verdict = "passed" if c["passed"] else "FAILED" if c["passed"] is False else "not run"
        lines.append(f"  {c['name']}: {verdict} in {c['seconds']:.0f} s, {counts or 'no report'}")
        lines.append(f"      runs: {c['runs']}")
        if c["passed"] is not True:
            problems.append(f"arithmetic {c['name']}: {verdict}")
        if ci and counts and counts.skipped:
            problems.append(f"arithmetic {c['name']}: {counts.skipped} skipped under CI=true")
    ran = [c for c in configs if not c["same_as"]]
    kernels = sorted({c["env"]["OPENBLAS_CORETYPE"] for c in ran})
    loops = sorted({c["runs"].split("numpy loops: ")[-1] for c in ran})
    lines.append(
        f"  {len(ran)} distinct configuration(s); they differed in BLAS kernel "
        f"({', '.join(kernels)}) and numpy's loops ({'; '.join(loops)}), one BLAS thread each"
    )
    problems += [f"arithmetic matrix: {p}" for p in data.get("problems", [])]
    return lines


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    folder = Path(args[0] if args else "_build/ci")
    ci = os.environ.get("CI") == "true"
    lines, problems = report(folder, ci)
    print("=" * 78)
    print(f"CI summary ({'CI=true: a skip is a failure' if ci else 'not under CI=true'})")
    for line in lines:
        print(line)
    if problems:
        print("CI FAILED:\n  " + "\n  ".join(problems))
        return 1
    print("CI passed: every step above ran and passed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
