"""Chapter 3's figures: the three input gradients side by side, the oracle's gap against its step,
and the crowd network trained with the naive and the true backward pass."""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.ticker import NullLocator

from normcore.plots.style import BOOK_COLOURS, decade_label, use_book_style


def plot_gradients(comparison: Any, decimals: int = 4) -> Any:
    """The true input gradient, the oracle and the naive one as annotated grids on one colour
    scale."""
    import matplotlib.pyplot as plt

    use_book_style()
    panels = {
        "collected (three routes)": comparison.true,
        "finite difference (oracle)": comparison.oracle,
        "naive d / s": comparison.naive,
    }
    limit = max(float(np.max(np.abs(b))) for b in panels.values()) or 1.0
    rows, cols = comparison.true.shape
    fig, axes = plt.subplots(1, 3, figsize=(6.8, 0.6 * rows + 1.3), sharey=True)
    for ax, (title, values) in zip(axes, panels.items(), strict=True):
        ax.imshow(values, cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="auto")
        for (i, j), v in np.ndenumerate(values):
            ink = "white" if abs(v) > 0.6 * limit else "black"
            ax.text(j, i, f"{v:.{decimals}f}", ha="center", va="center", fontsize=9, color=ink)
        ax.set_title(title, fontsize=10)
        ax.set_xticks(range(cols), [f"unit {j + 1}" for j in range(cols)])
        ax.set_yticks(range(rows), [f"row {i + 1}" for i in range(rows)])
        ax.grid(False)
    fig.suptitle("input gradient ∂L/∂x (blue negative, red positive)", fontsize=11)
    return fig


def plot_gap_against_step(sweep: Any) -> Any:
    """The oracle's largest gap to the collected gradient against the step, log-log."""
    import matplotlib.pyplot as plt

    use_book_style()
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    ax.loglog(sweep.steps, sweep.gaps, "o-", color=BOOK_COLOURS[0])
    ax.loglog(
        [sweep.best_step],
        [sweep.best_gap],
        "s",
        color=BOOK_COLOURS[1],
        markersize=9,
        label=f"smallest gap, step {sweep.best_step:.0e}",
    )
    ax.invert_xaxis()
    for axis in (ax.xaxis, ax.yaxis):  # decades in plain text, no minor ticks: a cheap log plot
        axis.set_major_formatter(decade_label)
        axis.set_minor_locator(NullLocator())
    ax.set_xlabel("finite-difference step h (smaller to the right)")
    ax.set_ylabel("largest |oracle - collected|")
    ax.set_title("the oracle's floor: truncation falls, rounding rises")
    ax.legend(loc="upper center")
    return fig


def plot_training(true_loss: Any, naive_loss: Any) -> Any:
    """Loss per epoch (epochs, seeds) with the true and the naive input gradient at the batch
    layer, one line per seed (the first darkest)."""
    import matplotlib.pyplot as plt

    use_book_style()
    fig, axes = plt.subplots(1, 2, figsize=(6.8, 3.4), sharey=True)
    epochs = np.arange(1, true_loss.shape[0] + 1)
    for ax, loss, title, colour in (
        (axes[0], true_loss, "true backward pass", BOOK_COLOURS[0]),
        (axes[1], naive_loss, "naive d / s", BOOK_COLOURS[1]),
    ):
        for k in range(loss.shape[1]):
            ax.plot(epochs, loss[:, k], color=colour, alpha=0.35 + 0.65 * (k == 0), lw=1.4)
        ax.set_title(title)
        ax.set_xlabel("epoch")
    axes[0].set_ylabel("training loss (cross-entropy)")
    fig.suptitle(f"crowd network, batch layer, {loss.shape[1]} seeds (seed 0 darkest)", fontsize=11)
    return fig


def plot_weight_norms(true_norm: Any, naive_norm: Any, half_norm: Any | None = None) -> Any:
    """The hidden layer's ‖(W, b)‖ per epoch (epochs, seeds): one line per seed for each pass,
    and optionally the true pass at a smaller rate."""
    import matplotlib.pyplot as plt

    use_book_style()
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    epochs = np.arange(true_norm.shape[0])
    lines = [(naive_norm, "naive d / s, rate 1", BOOK_COLOURS[1])]
    lines.append((true_norm, "true pass, rate 1", BOOK_COLOURS[0]))
    if half_norm is not None:
        lines.append((half_norm, "true pass, rate 0.5", BOOK_COLOURS[2]))
    for norm, label, colour in lines:
        for k in range(norm.shape[1]):
            ax.plot(
                epochs, norm[:, k], color=colour, lw=1.3, alpha=0.8, label=label if k == 0 else None
            )
    ax.set_xlabel("epoch")
    ax.set_ylabel("norm of the hidden weights and bias")
    ax.set_title("the naive pass inflates the scale-invariant layer's weights")
    ax.legend(loc="upper left")
    return fig
