"""Fixtures for the browser tests: Debian's chromium, headless, driven by Playwright for Python.

No browser is ever downloaded: Playwright launches /usr/bin/chromium (or $NORMCORE_CHROMIUM).
On a developer's machine, without chromium or the playwright package the tests skip and say which
is missing. In CI (``CI=true``, as `.ci/run` sets) a missing oracle is a failure, not a skip: the
site's JavaScript must be held to normcore in a real browser before CI can go green.
`tools/ci_prepare.sh` installs both.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import chromium  # tools/chromium.py (pytest's pythonpath): the lookup and flags the PDF uses too
import pytest

from .live import Lab, start_lab

ROOT = Path(__file__).resolve().parents[2]


def missing(reason: str) -> None:
    """Skip with `reason` on a developer's machine; fail with it in CI (CI=true)."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true and {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One headless chromium for the session (skips when chromium or playwright is missing)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing(
            "playwright is not installed (pip install playwright; no browser download is "
            "needed): the browser tests drive Debian's chromium through it"
        )
    if chromium.path() is None:
        missing(
            "chromium is not installed (apt-get install -y chromium): the browser tests need a "
            "real browser to typeset the math and run the widgets"
        )
    with sync_playwright() as p:
        b = chromium.launch(p)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """One JupyterLab for the session, over a copy of book/ ($NORMCORE_LIVE_BOOK overrides)."""
    book = Path(os.environ.get("NORMCORE_LIVE_BOOK", ROOT / "book"))
    jupyter = Path(sys.executable).parent / "jupyter"
    if not jupyter.exists():
        missing("jupyter is not installed in this environment (the book extra)")
    with start_lab(jupyter, book, tmp_path_factory.mktemp("lab")) as server:
        yield server
