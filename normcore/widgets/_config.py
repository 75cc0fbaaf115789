"""The numbers and words a widget's JavaScript shares with Python, gathered from the Python side.

`config()` is what the bundler (`normcore.widgets._esm`) writes into every bundle as the module
``./config.js``: ``export const CONFIG = {...}``. A JavaScript file reads ε, momentum, limits,
sizes, the worked mini-batch and the input grammar from it (``import {CONFIG} from "./config.js";``)
and never types them itself, so changing a constant in Python changes every page at its next
build (``tests/test_widget_config.py`` changes one in a scratch copy and watches the bundle).
"""

from __future__ import annotations

import inspect
import json
from typing import Any

from normcore.batch import BatchNorm
from normcore.experiments import axes, routes, weightnorm
from normcore.widgets import _input


def _default(function: Any, name: str) -> Any:
    return inspect.signature(function).parameters[name].default


def config() -> dict[str, Any]:
    """Every constant the widgets' JavaScript reads, by widget (JSON values only)."""
    from normcore.widgets import (
        axes_model,
        epsilon,
        playground_model,
        rates_model,
        routes_model,
        weightnorm_model,
    )

    return {
        "input": _input.grammar(),
        "playground": {
            "MAX_ROWS": playground_model.MAX_ROWS,
            "MAX_FEATURES": playground_model.MAX_FEATURES,
            "LIMIT": playground_model.LIMIT,
            "EPSILON": playground_model.EPSILON,
            "MOMENTUM": playground_model.MOMENTUM,
            "KINDS": list(playground_model.KINDS),
            "MODES": list(playground_model.MODES),
        },
        "routes": {
            "MAX_ROWS": routes_model.MAX_ROWS,
            "MAX_COLUMNS": routes_model.MAX_COLUMNS,
            "LIMIT": routes_model.LIMIT,
            "EPSILON": _default(routes.compare_gradients, "eps"),
            "STEP": _default(routes.compare_gradients, "step"),
            "SIGN_FLOOR": routes.SIGN_FLOOR,
            "WORKED": routes.WORKED_X.tolist(),
            "SEED_HIGH": routes_model.SEED_HIGH,
            "SOURCES": list(routes_model.SOURCES),
            "GRADS": list(routes_model.GRADS),
        },
        "axes": {
            "EPSILON": _default(BatchNorm.create, "eps"),
            "STEP": _default(axes.image_check, "step"),
            "CHANNELS": axes_model.IMAGE_SHAPE[1],
        },
        "weightnorm": {"LIMIT": weightnorm_model.LIMIT, "LENGTHS": list(weightnorm.LENGTHS)},
        "eps": {"LOW": epsilon.LOW, "HIGH": epsilon.HIGH},
        "rates": {"LIMIT": rates_model.LIMIT, "ORDERS": list(rates_model.ORDERS)},
    }


def module() -> str:
    """The text of ``./config.js`` as the bundler inlines it."""
    text = json.dumps(config(), indent=None, sort_keys=True, allow_nan=False)
    return (
        "// Generated at build time from normcore's Python constants "
        "(normcore/widgets/_config.py); never typed here.\n"
        f"export const CONFIG = Object.freeze({text});\n"
    )
