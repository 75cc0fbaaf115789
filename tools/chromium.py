"""The one chromium: where it is, how it is launched, and whether the book's PDF can be printed.

Shared by the PDF printer (``tools/make_pdf.py``), the site's ``take_away`` extension (which links
the PDF only where it can be printed) and the browser tests (``tests/browser/conftest.py``).
Nothing is downloaded: it is Debian's chromium (``apt-get install -y chromium``), driven by the
playwright package.

How each finds this module: the tools run beside it; pytest puts ``tools/`` on its path
(``pythonpath`` in pyproject.toml); the Sphinx build loads it as a (do-nothing) local extension
from ``tools/`` (``_config.yml``), which puts ``tools/`` on the build's path.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path
from typing import Any

DEFAULT = "/usr/bin/chromium"
# Headless, and nothing that reaches out on its own (updates, sync, background requests).
ARGS: tuple[str, ...] = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def path() -> str | None:
    """The chromium to launch: ``$NORMCORE_CHROMIUM`` if set and present, else Debian's
    ``/usr/bin/chromium``, else ``chromium``/``chromium-browser`` on PATH; None if none is."""
    wanted = os.environ.get("NORMCORE_CHROMIUM", DEFAULT)
    if Path(wanted).exists():
        return wanted
    return shutil.which("chromium") or shutil.which("chromium-browser")


def has_playwright() -> bool:
    """Whether the playwright package (the driver; no browser of its own) is installed."""
    return importlib.util.find_spec("playwright") is not None


def can_print() -> bool:
    """Whether the book's PDF can be printed here (a chromium and playwright). Without them
    ``make book`` makes no PDF, so the pages must link none."""
    return path() is not None and has_playwright()


def launch(playwright: Any) -> Any:
    """A headless chromium browser from a started ``sync_playwright()``, with ``ARGS``."""
    executable = path()
    if executable is None:
        raise FileNotFoundError("no chromium (apt-get install -y chromium)")
    return playwright.chromium.launch(executable_path=executable, args=list(ARGS), headless=True)


def setup(app: Any) -> dict[str, Any]:
    """Sphinx entry point. Registers nothing: listing this module as a local extension is how the
    build gets ``tools/`` on its path, so that ``book/_ext/take_away.py`` imports it."""
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
