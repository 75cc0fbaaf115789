"""The one way a test asks for an oracle (PyTorch, Keras, Flax, node or chromium): the `oracle`
fixture.

``oracle("torch")`` returns the torch module (``"keras"``: Keras on the torch backend;
``"flax"``: ``flax.linen``), ``oracle("node")`` and ``oracle("chromium")`` the path of the
program. Where the oracle is missing, the test skips on a developer's machine and
says what to install; in CI (``CI=true``, as `.ci/run` sets) it fails instead, so that no test
that holds normcore to an oracle can go green there by skipping. `tools/ci_prepare.sh` installs
all of them.
"""

from __future__ import annotations

import importlib
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

#: how to get each oracle, said when it is missing
INSTALL = {
    "torch": "PyTorch is not installed (bash tools/ci_prepare.sh installs 2.13.0)",
    "keras": "Keras is not installed (bash tools/ci_prepare.sh installs 3.15.1)",
    "flax": "Flax is not installed (bash tools/ci_prepare.sh installs 0.12.8 with jax 0.10.2)",
    "node": "node is not installed (apt-get install nodejs)",
    "chromium": "chromium is not installed (apt-get install chromium, or set NORMCORE_CHROMIUM)",
}


def in_ci() -> bool:
    """Whether the tests run in CI, where a missing oracle is a failure."""
    return os.environ.get("CI") == "true"


def missing(reason: str) -> None:
    """Skip with `reason` on a developer's machine; fail with it in CI (``CI=true``)."""
    if in_ci():
        pytest.fail(f"CI=true and {reason}", pytrace=False)
    pytest.skip(reason)


def find_oracle(name: str) -> Any:
    """The oracle `name` ('torch': the module; 'node', 'chromium': the program's path), or None
    when it is not installed."""
    modules = {"torch": "torch", "keras": "keras", "flax": "flax.linen"}
    if name in modules:
        if name == "keras":  # the backend is read once, at import; torch is the other oracle
            os.environ.setdefault("KERAS_BACKEND", "torch")
        try:
            return importlib.import_module(modules[name])
        except ImportError:
            return None
    if name == "node":
        return shutil.which("node")
    if name == "chromium":
        wanted = os.environ.get("NORMCORE_CHROMIUM", "/usr/bin/chromium")
        if Path(wanted).exists():
            return wanted
        return shutil.which("chromium") or shutil.which("chromium-browser")
    raise ValueError(f"oracle: expected one of {sorted(INSTALL)}, got {name!r}")


@pytest.fixture
def oracle() -> Callable[[str], Any]:
    """``oracle(name)``: the oracle `name`, or a skip (a failure in CI) when it is missing."""

    def get(name: str) -> Any:
        found = find_oracle(name)
        if found is None:
            missing(INSTALL[name])
        return found

    return get
