"""The claims suite: each conclusion a chapter draws, re-run on runs the chapter did not print.

One module per chapter, ``test_chNN.py``. Every test here is marked ``claims`` (``make claims``
runs them alone; ``make test`` runs them with the rest). See ``normcore.claims`` for the rule and
``tests/claims/README.md`` for how to write one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.claims)
