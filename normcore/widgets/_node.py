"""How a widget's JavaScript model is held to normcore without a browser: each model module
declares ``NODE = NodeModel(...)``, and ``tests/js/test_models.py`` finds every one by scanning
the modules of `normcore.widgets` (a new widget, such as the convnet one, joins by declaring its
own), runs seeded random action sequences through the JavaScript under node, and compares every
figure the page computes with `figures`, normcore's figures for the state the page reached.

A plan is ``{"context": JSON or None, "start": state, "actions": [[js_name, *args], ...]}``:
the JavaScript applies each action (``m[js_name](state, *args)``) and computes
``m.figures(state, context)``; a figure that cannot be computed must be refused in both languages
with the same sentence (an InputError in JavaScript, a NormcoreError in Python).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

Plan = dict[str, Any]


@dataclass(frozen=True)
class NodeModel:
    """One widget model's differential test.

    js: the file in ``js/`` whose bundle is run (it exports the actions and ``figures``).
    figures: normcore's figures, ``figures(state, context)``.
    plans: ``plans(rng)``, seeded random action sequences (each a `Plan`).
    tolerance: per figure key, the relative tolerance (default 1e-12) against the largest
        magnitude among the figures: a looser one only where the figure is itself a rounding
        error (a finite difference's gap), and it says so.
    actions: the Python side's "drive from code" actions, by their JavaScript name (Lab's
        ``widget.act(model.set_cell, ...)``): the page's actions are the JavaScript ones, and
        these are held to produce the same states (a state replayed in Python must equal the
        page's after every action).
    """

    js: str
    figures: Callable[[dict[str, Any], Any], dict[str, Any]]
    plans: Callable[[np.random.Generator], list[Plan]]
    tolerance: Mapping[str, float] = field(default_factory=dict)
    actions: Mapping[str, Callable[..., dict[str, Any]]] = field(default_factory=dict)


def pick(rng: np.random.Generator, options: Any) -> Any:
    """One of `options`, as a plain Python value."""
    value = options[int(rng.integers(len(options)))]
    return value.item() if isinstance(value, np.generic) else value


#: Texts a reader might type, the widgets' refusals included.
TEXTS = ("abc", "1e400", "nan", "", " ", "-0", "2", "0.5", "-3", "1e-3", "12", "٣", "1,5", "x")
