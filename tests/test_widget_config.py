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
    assert config()["routes"]["WORKED"] == routes_model.parse_matrix("1 7\n1 9\n7 1\n23 7").tolist()


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


def test_every_notebook_stores_the_bundle_its_widget_builds_now() -> None:
    """A saved notebook carries its widgets' JavaScript (the site loads it from there): after a
    change to js/ or to a constant, the chapter must be re-executed, or its page runs old code."""
    import glob
    import importlib

    stale = []
    for path in sorted(glob.glob(str(Path(normcore.__file__).parents[1] / "book" / "*.ipynb"))):
        notebook = json.loads(Path(path).read_text("utf-8"))
        widgets = notebook.get("metadata", {}).get("widgets", {})
        states = widgets.get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
        for value in states.values():
            state = value.get("state", {})
            if "_esm" in state and str(state.get("_anywidget_id", "")).startswith("normcore."):
                module, name = state["_anywidget_id"].rsplit(".", 1)
                cls = getattr(importlib.import_module(module), name)
                if cls._esm != state["_esm"]:
                    stale.append(f"{Path(path).name}: {name}")
    assert not stale, f"re-execute these chapters, their stored widget code is stale: {stale}"
