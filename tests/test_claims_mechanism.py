"""The claims mechanism itself: fresh seeds, stored frequencies, and the chapter checks' tool."""

from __future__ import annotations

import ast
import json
import os
import re
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from normcore import claims
from normcore.errors import NormcoreError, SettingError

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import fresh_seeds  # noqa: E402  (tools/ is not a package)


@pytest.fixture
def results(tmp_path, monkeypatch):
    monkeypatch.setattr(claims, "RESULTS", tmp_path)
    monkeypatch.delenv(claims.WRITE_VARIABLE, raising=False)
    monkeypatch.setenv(claims.ARITHMETIC_VARIABLE, "reference")
    return tmp_path


def test_fresh_seeds_start_where_chapters_stop():
    seeds = claims.fresh(20)
    assert seeds == tuple(range(1000, 1020))
    assert claims.fresh(3, start=5000) == (5000, 5001, 5002)
    for bad in [dict(n=0), dict(n=2.0), dict(start=999), dict(start="1000")]:
        with pytest.raises(SettingError):
            claims.fresh(**bad)


def test_held_refuses_impossible_counts():
    assert claims.Held(19, 20, "rate 0.1").share == 0.95
    assert claims.Held(20, 20, "rate 0.1").every
    assert not claims.Held(19, 20, "rate 0.1").every
    for held, of, setting in [
        (21, 20, "x"),
        (-1, 20, "x"),
        (1, 0, "x"),
        (1, 2, " "),
        (True, 2, "x"),
    ]:
        with pytest.raises(NormcoreError):
            claims.Held(held, of, setting)


def test_record_fails_when_nothing_is_stored_and_writes_when_asked(results, monkeypatch):
    with pytest.raises(claims.StaleClaimError, match="make claims-record"):
        claims.record("ch06", "rms_fits_better", held=12, of=20, setting="rate 1")
    assert not (results / "ch06.json").exists()
    monkeypatch.setenv(claims.WRITE_VARIABLE, "1")
    claims.record("ch06", "rms_fits_better", held=12, of=20, setting="rate 1")
    claims.record("ch06", "an_earlier_one", held=20, of=20, setting="rate 1")
    monkeypatch.delenv(claims.WRITE_VARIABLE)
    stored = json.loads((results / "ch06.json").read_text())
    assert list(stored) == ["an_earlier_one", "rms_fits_better"]  # sorted, so diffs stay small
    assert stored["rms_fits_better"] == {"held": 12, "of": 20, "setting": "rate 1"}
    assert claims.held("ch06", "rms_fits_better") == claims.Held(12, 20, "rate 1")
    # The same measurement again passes; a different one is stale.
    claims.record("ch06", "rms_fits_better", held=12, of=20, setting="rate 1")
    with pytest.raises(claims.StaleClaimError, match="measured"):
        claims.record("ch06", "rms_fits_better", held=13, of=20, setting="rate 1")
    with pytest.raises(claims.StaleClaimError):
        claims.record("ch06", "rms_fits_better", held=12, of=20, setting="rate 0.5")


def test_records_carry_what_was_resampled(results, monkeypatch):
    monkeypatch.setenv(claims.WRITE_VARIABLE, "1")
    kept = claims.record(
        "ch06", "worse", held=30, of=42, setting="rate 1", resampled=["fresh crowds", "folds"]
    )
    monkeypatch.delenv(claims.WRITE_VARIABLE)
    assert kept.resampled == ("fresh crowds", "folds")
    entry = json.loads((results / "ch06.json").read_text())["worse"]
    assert entry["resampled"] == ["fresh crowds", "folds"]
    assert claims.held("ch06", "worse") == kept
    # the same count with other sources is another claim: stale
    with pytest.raises(claims.StaleClaimError):
        claims.record("ch06", "worse", held=30, of=42, setting="rate 1", resampled=["folds"])
    for bad in ["initial seeds", ["the moon"], [1]]:
        with pytest.raises(SettingError, match="resampled"):
            claims.Held(1, 2, "x", bad)


def test_a_count_is_compared_exactly_only_under_the_reference_arithmetic(results, monkeypatch):
    monkeypatch.setenv(claims.WRITE_VARIABLE, "1")
    claims.record("ch06", "worse", held=30, of=42, setting="rate 1", resampled=["fresh crowds"])
    monkeypatch.delenv(claims.WRITE_VARIABLE)
    with pytest.raises(claims.StaleClaimError, match="31"):
        claims.record("ch06", "worse", held=31, of=42, setting="rate 1", resampled=["fresh crowds"])
    monkeypatch.delenv(claims.ARITHMETIC_VARIABLE)
    with pytest.warns(claims.ClaimDriftWarning, match="31 of 42 under this arithmetic, 30 stored"):
        got = claims.record(
            "ch06", "worse", held=31, of=42, setting="rate 1", resampled=["fresh crowds"]
        )
    assert got.held == 31
    # another setting or run count is a changed claim, whatever the arithmetic
    with pytest.raises(claims.StaleClaimError):
        claims.record("ch06", "worse", held=31, of=40, setting="rate 1", resampled=["fresh crowds"])
    with pytest.raises(claims.StaleClaimError):
        claims.record("ch06", "never", held=1, of=2, setting="rate 1")


def test_held_names_what_is_missing(results):
    with pytest.raises(SettingError, match="no recorded claim 'nothing'"):
        claims.held("ch01", "nothing")
    for chapter in ["6", "ch6", "chapter06", None]:
        with pytest.raises(SettingError):
            claims.held(chapter, "x")
    with pytest.raises(SettingError):
        claims.record("ch01", "Has Spaces", held=1, of=2, setting="x")


def _recorded_names(module: Path) -> list[re.Pattern[str]]:
    """Every name `module` could record: its string constants, and its f-strings as patterns
    (``f"smooth_s{step}"`` matches ``smooth_s8``)."""
    tree = ast.parse(module.read_text(encoding="utf-8"))
    patterns = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            patterns.append(re.compile(re.escape(node.value)))
        elif isinstance(node, ast.JoinedStr):
            literal = "".join(v.value for v in node.values if isinstance(v, ast.Constant))
            if len(literal) < 4:  # f"{name}" alone would match any name
                continue
            parts = [
                re.escape(v.value) if isinstance(v, ast.Constant) else r"[a-z0-9_]+"
                for v in node.values
            ]
            patterns.append(re.compile("".join(parts)))
    return patterns


def _stored_names() -> list[tuple[str, str]]:
    found = []
    for path in sorted(claims.RESULTS.glob("ch*.json")):
        found += [(path.stem, name) for name in json.loads(path.read_text())]
    return found


def test_every_stored_frequency_is_recorded_by_its_chapter_module():
    """A claim dropped from the suite must not leave its old frequency for a chapter to glue."""
    orphans = []
    for chapter, name in _stored_names():
        module = ROOT / "tests" / "claims" / f"test_{chapter}.py"
        if not module.exists() or not any(p.fullmatch(name) for p in _recorded_names(module)):
            orphans.append(f"{chapter}/{name}")
    assert orphans == [], f"stored but recorded by no claims module: {orphans}"


# ------------------------------------------------------------------ the chapters' checks' tool


def _chapter(tmp_path: Path, cells: list[tuple[str, str]]) -> Path:
    """A MyST notebook whose code cells are `cells` (tags, source)."""
    parts = [
        "---\njupytext:\n  text_representation:\n    extension: .md\n    format_name: myst\n"
        "kernelspec:\n  display_name: Python 3\n  language: python\n  name: python3\n---\n",
        "# A chapter\n",
    ]
    for tags, source in cells:
        options = f":tags: [{tags}]\n\n" if tags else ""
        parts.append(f"```{{code-cell}} ipython3\n{options}{textwrap.dedent(source)}```\n")
    path = tmp_path / "99-test.md"
    path.write_text("\n".join(parts))
    return path


@pytest.fixture(scope="module")
def shell():
    from IPython.core.interactiveshell import InteractiveShell

    return InteractiveShell.instance()


SEEDED = """\
import numpy as np
value = np.random.default_rng(0).integers(10**9)
"""


def test_a_claim_about_the_printed_seed_fails_under_a_shift(tmp_path, shell):
    truth = int(np.random.default_rng(0).integers(10**9))
    path = _chapter(
        tmp_path,
        [("", SEEDED), ("remove-cell", f"assert value == {truth}\n"), ("", "print(value)\n")],
    )
    everything = lambda cell: True  # noqa: E731
    with fresh_seeds.Shift(0).installed():
        failures, _ = fresh_seeds.run_chapter(path, everything, shell)
    assert failures == []
    with fresh_seeds.Shift(3).installed() as shift:
        failures, _ = fresh_seeds.run_chapter(path, everything, shell)
    assert shift.moved == 1
    assert [(f.cell.number, f.cell.hidden) for f in failures] == [(2, True)]
    assert failures[0].error.startswith("AssertionError")
    assert np.random.default_rng is not None and np.random.default_rng(0).integers(10**9) == truth


def test_the_shift_reaches_every_seeded_entry_point_and_spares_the_data(shell):
    from normcore.data import make_crowd, subscribers

    crowd = make_crowd.generate()
    weights = subscribers.init_weights(4, [(3, 2)])[0][0]
    plain = [
        np.random.default_rng(5).random(),
        np.random.RandomState(5).rand(),
        np.random.Generator(np.random.PCG64(5)).random(),
    ]
    with fresh_seeds.Shift(1).installed() as shift:
        moved = [
            np.random.default_rng(4).random(),
            np.random.RandomState(4).rand(),
            np.random.Generator(np.random.PCG64(4)).random(),
        ]
        np.random.seed(4)  # noqa: NPY002  (the legacy entry point is shifted too)
        legacy = np.random.rand()  # noqa: NPY002
        listed = np.random.default_rng([4, 9]).random()
        spawned = np.random.SeedSequence(4).generate_state(1)
        assert shift.moved == 6
        assert np.random.default_rng(None) is not None  # not an integer: left alone
        assert all(np.array_equal(a, b) for a, b in zip(make_crowd.generate(), crowd, strict=True))
        assert not np.array_equal(subscribers.init_weights(4, [(3, 2)])[0][0], weights)
    np.random.seed(5)  # noqa: NPY002
    assert moved == plain and legacy == np.random.rand()  # noqa: NPY002
    assert listed == np.random.default_rng([5, 9]).random()
    assert spawned == np.random.SeedSequence(5).generate_state(1)
    assert np.array_equal(subscribers.init_weights(4, [(3, 2)])[0][0], weights)


def test_a_published_run_may_fail_under_a_shift_only(tmp_path, shell, capsys):
    truth = int(np.random.default_rng(0).integers(10**9))
    path = _chapter(
        tmp_path, [("", SEEDED), ("remove-cell, published-run", f"assert value == {truth}\n")]
    )
    assert fresh_seeds.main(["--offset", "2", str(path)]) == 0
    assert "expected (a published run" in capsys.readouterr().out
    bad = _chapter(tmp_path, [("", SEEDED), ("remove-cell, published-run", "assert False\n")])
    assert fresh_seeds.main(["--offset", "0", str(bad)]) == 1  # unshifted, it must hold


def test_the_visible_cells_must_run_alone(tmp_path, capsys):
    path = _chapter(
        tmp_path,
        [("remove-cell", "import numpy as np\n"), ("", "x = np.ones(3)\n"), ("", "print(x)\n")],
    )
    assert fresh_seeds.main(["--visible", str(path)]) == 1
    out = capsys.readouterr().out
    assert "cell 2 (visible): NameError: name 'np' is not defined" in out
    assert "cell 3 (visible): NameError: name 'x' is not defined" in out
    fixed = _chapter(tmp_path, [("", "import numpy as np\n"), ("", "x = np.ones(3)\n")])
    assert fresh_seeds.main(["--visible", str(fixed)]) == 0


def test_the_seed_shift_leaves_the_callers_environment_alone(tmp_path, capsys, monkeypatch):
    # It once set MPLBACKEND=Agg in the process that called it; a JupyterLab the same pytest
    # worker started afterwards passed it to every kernel, and no chapter drew a figure.
    monkeypatch.delenv("MPLBACKEND", raising=False)
    before = dict(os.environ)
    path = _chapter(tmp_path, [("", "import numpy as np\n")])
    assert fresh_seeds.main(["--offset", "1", str(path)]) == 0
    assert dict(os.environ) == before
