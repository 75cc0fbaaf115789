"""Run a widget's JavaScript under node, as the page runs it: the bundle `normcore.widgets._esm`
builds (CONFIG from Python included), written to a scratch directory and imported by a driver.

``run(node, entry, script, payload)``: `script` is an ES-module body that sees the bundle's
exports as ``m`` and the JSON `payload` as ``input``, and writes its answer with ``answer(x)``
(JSON). `node` is the path the ``oracle("node")`` fixture gives (a skip on a developer's machine
without node, a failure under CI=true).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from normcore.widgets._esm import bundle

PRELUDE = """import * as m from "./bundle.mjs";
import {readFileSync, writeFileSync} from "node:fs";
const input = JSON.parse(readFileSync("input.json", "utf-8"));
const answer = (x) => writeFileSync("answer.json", JSON.stringify(x));
"""


def run(node: str, entry: str, script: str, payload: Any = None, text: str | None = None) -> Any:
    """The JSON `script` answers, run over `entry`'s bundle (or over `text`, when given)."""
    with tempfile.TemporaryDirectory() as scratch:
        where = Path(scratch)
        (where / "bundle.mjs").write_text(bundle(entry) if text is None else text, "utf-8")
        (where / "driver.mjs").write_text(PRELUDE + script, "utf-8")
        (where / "input.json").write_text(json.dumps(payload), "utf-8")
        done = subprocess.run(
            [node, "driver.mjs"], cwd=where, capture_output=True, text=True, timeout=300
        )
        if done.returncode != 0:
            raise AssertionError(f"node failed on {entry}:\n{done.stderr[-4000:]}")
        return json.loads((where / "answer.json").read_text("utf-8"))
