"""Figures for chapter 2, the worked column."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from normcore.experiments.shift import Lag
from normcore.plots.style import BOOK_COLOURS, decade_label, use_book_style


def lag_figure(lag: Lag, tolerances: tuple[float, ...] = (0.01, 0.001)):
    """The widest gap between the evaluation-mode and the training-mode output, step by step
    (log scale), with the first step under each tolerance marked."""
    use_book_style()
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    steps = np.arange(1, lag.gaps.size + 1)
    ax.semilogy(steps, lag.gaps, color=BOOK_COLOURS[0], label="widest gap over the mini-batch")
    for tolerance, colour in zip(tolerances, (BOOK_COLOURS[3], BOOK_COLOURS[1]), strict=False):
        first = lag.first_under(tolerance)
        ax.axhline(tolerance, color=colour, linestyle="--", linewidth=1.0)
        if first is not None:
            ax.plot(
                [first],
                [lag.after(first)],
                "o",
                color=colour,
                label=f"first under {tolerance:g}: step {first}",
            )
    ax.yaxis.set_major_formatter(decade_label)  # plain-text powers of ten: no mathtext parse
    ax.set(
        title="Evaluation mode catches up with training mode",
        xlabel="steps on the same batch (zero gradient)",
        ylabel="largest |evaluation − training|",
    )
    ax.legend(loc="upper right")
    return fig
