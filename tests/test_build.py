"""Rules the build keeps instead of hand lists (issue 33): checked here, so none goes stale.

- ``_toc.yml`` lists every chapter present, in order, and nothing that is missing; the build only
  reads it.
- Every unit-test module that compares floats with a tolerance is marked ``numeric``, so the
  arithmetic matrix (``tools/arith_matrix.py``, which collects ``-m numeric``) reruns it under
  every BLAS/SIMD setting. The browser and claims suites are their own suites and are not rerun.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
TESTS = ROOT / "tests"
BACK_MATTER = ["book/glossary", "book/bibliography"]
TOLERANCE = re.compile(r"allclose|isclose|approx\(|assert_array_almost|\batol=|\brtol=")


def toc() -> dict:
    return yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))


def test_toc_lists_exactly_the_chapters_present_in_order():
    chapters = sorted(f"book/{p.stem}" for p in BOOK.glob("[0-9][0-9]-*.md"))
    assert chapters, "no book/NN-*.md chapter"
    data = toc()
    assert data["format"] == "jb-book"
    assert data["root"] == chapters[0] == "book/00-preface"
    parts = {part["caption"]: part for part in data["parts"]}
    assert list(parts) == ["Chapters", "Back matter"]
    listed = [entry["file"] for entry in parts["Chapters"]["chapters"]]
    assert listed == chapters[1:], (
        f"_toc.yml's chapters {listed} are not the chapters present {chapters[1:]}: edit _toc.yml"
    )
    assert parts["Chapters"].get("numbered") is True  # Fig. 3.2 is chapter 3's second figure
    assert [entry["file"] for entry in parts["Back matter"]["chapters"]] == BACK_MATTER
    assert not parts["Back matter"].get("numbered")


def test_every_toc_entry_exists():
    data = toc()
    files = [data["root"]] + [e["file"] for part in data["parts"] for e in part["chapters"]]
    missing = [f for f in files if not (ROOT / f"{f}.md").is_file()]
    assert not missing, f"_toc.yml names files that are not there: {missing}"


def marked(path: Path, marker: str) -> bool:
    """Whether the module sets a module-level ``pytestmark`` that includes ``marker``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets
        ):
            text = ast.unparse(node.value)
            if re.search(rf"\bpytest\.mark\.{marker}\b", text):
                return True
    return False


def unit_test_modules() -> list[Path]:
    """The unit-test modules, without this one (it names the tolerances and compares none)."""
    here = Path(__file__).resolve()
    return sorted(
        p
        for p in TESTS.rglob("test_*.py")
        if p.parent.name not in {"browser", "claims"} and p.resolve() != here
    )


def test_every_module_comparing_floats_is_marked_numeric():
    unmarked = [
        p.relative_to(ROOT).as_posix()
        for p in unit_test_modules()
        if TOLERANCE.search(p.read_text(encoding="utf-8")) and not marked(p, "numeric")
    ]
    assert not unmarked, (
        "these modules compare floats with a tolerance but are not marked numeric, so the "
        f"arithmetic matrix would not rerun them (add pytestmark = pytest.mark.numeric): {unmarked}"
    )


def test_the_marker_rule_sees_a_marker_and_its_absence(tmp_path):
    one = tmp_path / "test_one.py"
    one.write_text("import pytest\npytestmark = [pytest.mark.numeric, pytest.mark.slow]\n")
    two = tmp_path / "test_two.py"
    two.write_text("import pytest\n# pytestmark = pytest.mark.numeric\nx = 1\n")
    three = tmp_path / "test_three.py"
    three.write_text("import pytest\npytestmark = pytest.mark.numerical\n")
    assert marked(one, "numeric")
    assert not marked(two, "numeric")
    assert not marked(three, "numeric")
    assert TOLERANCE.search("np.testing.assert_allclose(a, b)")
    assert TOLERANCE.search("assert x == pytest.approx(1.0)")
    assert not TOLERANCE.search("assert a == b")
