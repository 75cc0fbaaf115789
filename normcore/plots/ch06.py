"""Chapter 6's figures: held-out accuracy by variant and seed, loss curves, and the batch
layer asked two ways."""

from __future__ import annotations

from typing import Any

import numpy as np

from .style import BOOK_COLOURS, use_book_style

NAMES = {"none": "plain", "batch": "batch", "layer": "layer", "rms": "RMS", "weight": "weight"}


def _epoch_axis(ax: Any, epochs: int) -> None:
    """Epochs on a log scale, ticked at 1, 2, 5, 10, ... up to `epochs` and written plainly: no
    minor ticks and no "10^k" labels (each of those is typeset as mathtext, which costs more to
    draw than the rest of the figure)."""
    from matplotlib.ticker import NullLocator

    ax.set_xscale("log")
    ticks = [m * 10**k for k in range(len(str(max(epochs, 1)))) for m in (1, 2, 5)]
    ticks = [t for t in ticks if t <= epochs]
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.xaxis.set_minor_locator(NullLocator())


def held_out_by_seed(scores: dict, ax: Any = None) -> Any:
    """One dot per distinct held-out accuracy (a count beside it when seeds coincide: on 25
    people accuracies fall on a grid of 0.04) and a bar for the mean, per variant; the
    axis spans the data."""
    import matplotlib.pyplot as plt

    use_book_style()
    made = ax is None
    if made:
        fig, ax = plt.subplots()
    else:
        fig = ax.figure
    low, high = 1.0, 0.0
    for i, s in enumerate(scores.values()):
        values = np.asarray(s.held_accuracy)
        ax.bar(i, values.mean(), 0.6, color=BOOK_COLOURS[i % 6], alpha=0.35)
        levels, counts = np.unique(np.round(values, 9), return_counts=True)
        ax.plot(np.full(levels.size, i), levels, "o", color=BOOK_COLOURS[i % 6])
        for level, count in zip(levels, counts, strict=True):
            if count > 1:
                ax.annotate(
                    f"×{count}", (i, level), xytext=(6, -3), textcoords="offset points", fontsize=8
                )
        low, high = min(low, values.min()), max(high, values.max())
    reference = scores.get("none")
    if reference is not None:
        for edge in (reference.held_accuracy.min(), reference.held_accuracy.max()):
            ax.axhline(edge, color="#5f6368", linestyle=":", linewidth=1)
    ax.set_xticks(range(len(scores)), [NAMES.get(n, n) for n in scores])
    ax.set_ylabel("held-out accuracy (25 people)")
    ax.set_ylim(max(0.0, low - 0.1), min(1.0, high + 0.06))  # the data, not 0 to 1
    ax.set_title("held out, per seed (dots) and mean (bars); dotted: plain network's range")
    return fig


def loss_curves(curves: dict, target: float = 0.3, ax: Any = None) -> Any:
    """Loss per epoch of each whole-crowd run, with the target line."""
    import matplotlib.pyplot as plt

    use_book_style()
    made = ax is None
    if made:
        fig, ax = plt.subplots()
    else:
        fig = ax.figure
    for i, (name, c) in enumerate(curves.items()):
        epochs = np.arange(1, len(c.loss) + 1)
        ax.plot(
            epochs,
            c.loss,
            color=BOOK_COLOURS[i % 6],
            label=NAMES.get(name, name),
            linestyle="--" if name == "weight" else "-",
        )
    ax.axhline(target, color="#5f6368", linestyle=":", linewidth=1)
    ax.set_xlabel("epoch")
    ax.set_ylabel("training loss (cross-entropy)")
    _epoch_axis(ax, max(len(c.loss) for c in curves.values()))
    ax.legend()
    ax.set_title("whole crowd, one seed")
    return fig


def two_ways(curve: Any, ax: Any = None) -> Any:
    """The batch curve's accuracy after every step, by running statistics and by batch
    statistics."""
    import matplotlib.pyplot as plt

    use_book_style()
    made = ax is None
    if made:
        fig, ax = plt.subplots(figsize=(6.4, 3.0))
    else:
        fig = ax.figure
    epochs = np.arange(1, len(curve.accuracy_running) + 1)
    ax.step(
        epochs,
        curve.accuracy_batch,
        where="post",
        color=BOOK_COLOURS[1],
        label="batch's own statistics",
    )
    ax.step(
        epochs,
        curve.accuracy_running,
        where="post",
        color=BOOK_COLOURS[0],
        linestyle="--",
        label="running statistics",
    )
    ax.set_xlabel("epoch")
    ax.set_ylabel("accuracy on the crowd")
    _epoch_axis(ax, len(epochs))
    ax.legend()
    ax.set_title("the batch layer asked two ways after each step")
    return fig
