"""Chapter 5's figure: each neuron's length before and after one step, under both layers."""

from __future__ import annotations

from typing import Any

import numpy as np

from .style import use_book_style


def step_lengths(step: Any, ax: Any = None) -> Any:
    """Bars: length before, after a weight-normalised step and after a dense step, per neuron.
    `step` is a `normcore.experiments.weightnorm.StepComparison`. Returns the figure."""
    import matplotlib.pyplot as plt

    use_book_style()
    if ax is None:
        fig, ax = plt.subplots()
    else:
        fig = ax.figure
    n = len(step.length_before)
    at = np.arange(n)
    width = 0.27
    ax.bar(at - width, step.length_before, width, label="before", color="#5f6368")
    ax.bar(at, step.length_weightnorm, width, label="after, weight norm", color="#d1495b")
    ax.bar(at + width, step.length_dense, width, label="after, dense", color="#1f6fb2",
           hatch="//")
    ax.set_xticks(at, [f"neuron {i + 1}" for i in range(n)])
    ax.set_ylabel("length of effective weights")
    ax.set_title(f"one step at stride {step.stride:g}")
    ax.legend()
    return fig
