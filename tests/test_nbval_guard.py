"""nbval must catch a stored number that no longer matches what the chapter computes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parent.parent / "book"
pytestmark = pytest.mark.notebook  # runs a chapter under nbval: not part of make check


def _bump_first_digit(notebook: dict) -> str:
    """Change the first digit of the first plain-text result of a code cell; return the old text."""
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        for output in cell.get("outputs", []):
            text = output.get("data", {}).get("text/plain")
            joined = "".join(text) if isinstance(text, list) else (text or "")
            digits = [i for i, ch in enumerate(joined) if ch.isdigit()]
            if digits and "glue" not in json.dumps(output.get("metadata", {})):
                i = digits[0]
                output["data"]["text/plain"] = (
                    joined[:i] + str((int(joined[i]) + 1) % 10) + joined[i + 1 :]
                )
                return joined
    raise AssertionError("no numeric output found to change")


def test_a_changed_stored_number_fails_nbval(tmp_path: Path) -> None:
    notebook = json.loads((BOOK / "02-worked-column.ipynb").read_text(encoding="utf-8"))
    _bump_first_digit(notebook)
    target = tmp_path / "changed.ipynb"
    target.write_text(json.dumps(notebook), encoding="utf-8")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "--nbval",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "--rootdir",
            str(tmp_path),
            str(target),
        ],
        cwd=BOOK,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode != 0, run.stdout[-2000:]
    assert "Cell outputs differ" in run.stdout
