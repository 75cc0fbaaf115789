"""CI's closing summary (tools/ci_report.py) tells the truth: a skip under CI=true, a step that
did not run, a configuration that failed or a matrix problem each make it fail."""

from __future__ import annotations

import json
from pathlib import Path

import ci_report

SUITE = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="0" failures="0" skipped="{skipped}" tests="5">
<testcase classname="tests.test_a" name="test_one"/>
{skips}
</testsuite></testsuites>"""


def junit(path: Path, skipped: int = 0) -> None:
    skips = "".join(
        f'<testcase classname="tests.test_b" name="test_{i}">'
        f'<skipped message="torch is not installed"/></testcase>'
        for i in range(skipped)
    )
    path.write_text(SUITE.format(skipped=skipped, skips=skips), encoding="utf-8")


def ci_folder(tmp_path: Path, skipped: int = 0, arith_passed: bool = True) -> Path:
    steps = {"test": 0, "fresh-seeds": 0, "visible-cells": 0, "test-arith": 0}
    (tmp_path / "steps.tsv").write_text(
        "".join(f"{name}\t{rc}\t12\n" for name, rc in steps.items()), encoding="utf-8"
    )
    junit(tmp_path / "suite.xml", skipped)
    junit(tmp_path / "claims.xml")
    for step in ("fresh-seeds", "visible-cells"):
        (tmp_path / f"{step}.log").write_text("10 chapters: no cell failed\n", encoding="utf-8")
    configs = [
        ("haswell/all", "Haswell", "X86_V3", None, arith_passed),
        ("nehalem/sse", "Nehalem", "baseline only", None, True),
        ("zen/all", "Zen", "X86_V3", "haswell/all", None),
    ]
    (tmp_path / "arith.json").write_text(
        json.dumps(
            {
                "platform": "x86-64",
                "targets": 3,
                "problems": [],
                "configurations": [
                    {
                        "name": name,
                        "env": {"OPENBLAS_CORETYPE": kernel},
                        "runs": f"BLAS openblas {kernel} x1 thread; numpy loops: {loops}",
                        "same_as": same,
                        "passed": passed,
                        "seconds": 40.0,
                        "summary": "5 passed",
                    }
                    for name, kernel, loops, same, passed in configs
                ],
            }
        ),
        encoding="utf-8",
    )
    for name, *_ in configs[:2]:
        junit(tmp_path / f"arith-{name.replace('/', '-')}.xml")
    return tmp_path


def test_a_clean_run_passes_and_says_what_ran(tmp_path):
    lines, problems = ci_report.report(ci_folder(tmp_path), ci=True)
    text = "\n".join(lines)
    assert problems == []
    assert "the suite (unit, notebooks, browser, site): 5 passed, 0 failed, 0 skipped" in text
    assert "zen/all: the same arithmetic as haswell/all, counted once" in text
    assert "2 distinct configuration(s)" in text and "Haswell, Nehalem" in text
    assert ci_report.main([str(tmp_path)]) == 0


def test_a_skip_under_ci_is_a_failure_but_not_on_a_laptop(tmp_path):
    folder = ci_folder(tmp_path, skipped=2)
    lines, problems = ci_report.report(folder, ci=True)
    assert any("2 skipped under CI=true" in p for p in problems)
    assert any("torch is not installed" in line for line in lines)
    assert ci_report.report(folder, ci=False)[1] == []


def test_a_missing_step_a_failed_configuration_or_a_matrix_problem_fails(tmp_path):
    folder = ci_folder(tmp_path, arith_passed=False)
    (folder / "visible-cells.log").unlink()
    steps = (folder / "steps.tsv").read_text(encoding="utf-8").splitlines()
    (folder / "steps.tsv").write_text(
        "\n".join(s for s in steps if not s.startswith("visible-cells")) + "\n", encoding="utf-8"
    )
    data = json.loads((folder / "arith.json").read_text(encoding="utf-8"))
    data["problems"] = ["only 1 distinct arithmetic configuration(s)"]
    (folder / "arith.json").write_text(json.dumps(data), encoding="utf-8")
    lines, problems = ci_report.report(folder, ci=True)
    assert "visible-cells: did not run" in problems
    assert any("haswell/all: FAILED" in line for line in lines)
    assert "arithmetic haswell/all: FAILED" in problems
    assert "arithmetic matrix: only 1 distinct arithmetic configuration(s)" in problems


def test_an_empty_claims_suite_fails(tmp_path):
    folder = ci_folder(tmp_path)
    (folder / "claims.xml").write_text(
        '<testsuites><testsuite name="pytest" errors="0" failures="0" skipped="0" tests="0">'
        "</testsuite></testsuites>",
        encoding="utf-8",
    )
    assert "the claims suite ran no test" in ci_report.report(folder, ci=True)[1]


def test_the_reference_left_to_the_suite_counts_only_when_the_suite_passed(tmp_path):
    folder = ci_folder(tmp_path)
    data = json.loads((folder / "arith.json").read_text(encoding="utf-8"))
    data["configurations"][0].update(passed=None, seconds=0.0, by_suite=True)
    (folder / "arith.json").write_text(json.dumps(data), encoding="utf-8")
    lines, problems = ci_report.report(folder, ci=True)
    assert problems == []
    assert any(
        "haswell/all: the reference arithmetic, left to make test's suite" in line for line in lines
    )
    assert "2 distinct configuration(s)" in "\n".join(lines)
    steps = (folder / "steps.tsv").read_text(encoding="utf-8").replace("test\t0", "test\t2", 1)
    (folder / "steps.tsv").write_text(steps, encoding="utf-8")
    problems = ci_report.report(folder, ci=True)[1]
    assert "arithmetic haswell/all: make test's suite did not pass" in problems
