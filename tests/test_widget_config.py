"""Constants from one place: what a widget's JavaScript shares with Python is written into each
bundle from the Python side (normcore/widgets/_config.py), never typed in JavaScript."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import normcore
from normcore.widgets import playground_model, routes_model
from normcore.widgets._config import config, module
from normcore.widgets._esm import JS, bundle

ENTRIES = sorted(p.name for p in JS.glob("*.js") if "export default" in p.read_text("utf-8"))


def test_every_bundle_carries_pythons_constants() -> None:
    written = module()
    assert len(ENTRIES) >= 8
    for entry in ENTRIES:
        assert written.strip() in bundle(entry), entry
    assert json.loads(written.split("Object.freeze(", 1)[1].rsplit(");", 1)[0]) == config()
    assert config()["playground"]["EPSILON"] == playground_model.EPSILON
    assert config()["routes"]["WORKED"] == routes_model.parse_block("1 7\n1 9\n7 1\n23 7").tolist()


def test_no_javascript_file_types_a_python_constant() -> None:
    """The numbers Python owns (ε, momentum, the limits, the worked block) appear in no file of
    js/ as literals: each reads them from CONFIG."""
    owned = [
        r"1e-5\b",
        r"1e-05\b",
        r"\b0\.9\b",
        r"\b1e9\b",
        r"\b1e6\b",
        r"\b1e-6\b",
        r"\b1e-8\b",
        r"\[\[1, 7\], \[1, 9\]",
        r"\bmomentum 0\.9",
        r"LIMIT = \d",
        r"MAX_ROWS = \d",
    ]
    for path in JS.glob("*.js"):
        code = "\n".join(
            line
            for line in path.read_text("utf-8").splitlines()
            if not line.strip().startswith(("//", "*", "/*"))
        )
        for pattern in owned:
            assert not re.search(pattern, code), (path.name, pattern)


def test_a_constant_changed_in_python_changes_the_bundle(tmp_path: Path) -> None:
    """In a scratch copy of the package, ε of the playground is changed in Python only; the
    playground's bundle then carries the new ε, and the original's does not."""
    package = Path(normcore.__file__).parent
    copy = tmp_path / "normcore"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__", "data"))
    (copy / "data").symlink_to(package / "data")
    model = copy / "widgets" / "playground_model.py"
    text = model.read_text("utf-8")
    assert "EPSILON = 1e-5\n" in text
    model.write_text(text.replace("EPSILON = 1e-5\n", "EPSILON = 0.000321\n"), "utf-8")
    script = (
        "import normcore, sys; from normcore.widgets._esm import bundle; "
        "sys.stdout.write(normcore.__file__ + '\\n' + bundle('playground.js'))"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    where, changed = done.stdout.split("\n", 1)
    assert where.startswith(str(tmp_path)), where  # the scratch copy was the one imported
    assert '"EPSILON": 0.000321' in changed
    assert '"EPSILON": 0.000321' not in bundle("playground.js")
    assert '"EPSILON": 1e-05' in bundle("playground.js")
