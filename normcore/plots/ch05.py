"""Chapter 5's figure: how one step changes each neuron's length under both layers."""

from __future__ import annotations

from typing import Any

import numpy as np

from .style import use_book_style


def step_lengths(step: Any) -> Any:
    """Two panels per neuron. Left: the change in the length of the effective weights over one
    step, under weight normalisation and under a dense layer. Right: how much longer the dense
    step leaves each neuron than the weight-normalised one, in units of 1e-4, so that
    differences far smaller than the lengths themselves can be seen. `step` is a
    `normcore.experiments.weightnorm.StepComparison`. Returns the figure."""
    import matplotlib.pyplot as plt

    use_book_style()
    fig, (left, right) = plt.subplots(1, 2, figsize=(7.2, 3.2))
    n = len(step.length_before)
    at = np.arange(n)
    names = [f"neuron {i + 1}" for i in range(n)]
    width = 0.38
    left.bar(
        at - width / 2,
        step.length_weightnorm - step.length_before,
        width,
        label="weight norm",
        color="#d1495b",
    )
    left.bar(
        at + width / 2,
        step.length_dense - step.length_before,
        width,
        label="dense",
        color="#1f6fb2",
        hatch="//",
    )
    left.axhline(0.0, color="black", linewidth=0.8)
    left.set_xticks(at, names)
    left.set_ylabel("change in length over the step")
    left.set_title(f"one step at learning rate {step.learning_rate:g}")
    left.legend()
    gap = (step.length_dense - step.length_weightnorm) / 1e-4
    right.bar(at, gap, 0.5, color="#5f6368")
    right.axhline(0.0, color="black", linewidth=0.8)
    right.set_xticks(at, names)
    right.set_ylabel("dense minus weight norm (× 1e-4)")
    right.set_title("how much longer under dense")
    return fig


def shortcut_split(split: Any, rates: Any, shortcut: Any, projected: Any, neuron: int) -> Any:
    """Two panels. Left: per neuron, the length of the projected direction gradient (the part
    that turns the neuron) beside the size of the shortcut's error, its radial part along v
    (`split` is a `weightnorm.ShortcutSplit`). Right: the stored direction's length |v| of
    `neuron` (counted from 0) after one step, against the learning rate `rates`, with the
    shortcut and with the projected gradient (arrays of |v| per rate). Returns the figure."""
    import matplotlib.pyplot as plt

    use_book_style()
    fig, (left, right) = plt.subplots(1, 2, figsize=(7.2, 3.2))
    n = len(split.turning)
    at = np.arange(n)
    width = 0.38
    left.bar(at - width / 2, split.turning, width, label="turning (projected)", color="#1f6fb2")
    left.bar(
        at + width / 2,
        np.abs(split.radial),
        width,
        label="radial (the shortcut's error)",
        color="#d1495b",
        hatch="//",
    )
    left.set_xticks(at, [f"neuron {i + 1}" for i in range(n)])
    left.set_ylabel("size of the part of ∂L/∂v")
    left.legend(frameon=False, fontsize=8)
    right.plot(rates, projected, color="#1f6fb2", label="projected step")
    right.plot(rates, shortcut, color="#d1495b", linestyle="--", label="shortcut step")
    right.axhline(0, color="0.6", linewidth=0.8)
    right.set_xlabel("learning rate")
    right.set_ylabel(f"‖v‖ of neuron {neuron + 1} after one step")
    right.legend(frameon=False, fontsize=8)
    return fig
