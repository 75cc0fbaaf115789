"""Chapter 7's figures: the rate sweep, and the three ways of asking the batch layer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import NullLocator

from normcore.plots.style import BOOK_COLOURS, use_book_style


def sweep_chart(
    rows: Sequence[Any], limit: float = 1.0, yardsticks: dict[str, float] | None = None
) -> Any:
    """Final training loss (log scale) and test accuracy against the rate, plain and normalised,
    one marker per run; runs normcore refused to finish are drawn as crosses on the top edge.
    `yardsticks` (name: test accuracy, e.g. the linear model and "always no") are drawn as
    labelled horizontal lines on the accuracy panel."""
    use_book_style()
    fig, (left, right) = plt.subplots(1, 2, figsize=(7.2, 3.4))
    for normalised, colour, marker in ((False, BOOK_COLOURS[0], "o"), (True, BOOK_COLOURS[1], "s")):
        label = "normalised" if normalised else "plain"
        mine = [r for r in rows if r.normalised == normalised]
        rates = np.array([r.rate for r in mine])
        for k in range(2):
            loss = np.array([r.loss[k] for r in mine])
            test = np.array([r.test[k] for r in mine])
            ok = np.isfinite(loss)
            left.plot(
                rates[ok],
                loss[ok],
                marker=marker,
                color=colour,
                linestyle="-" if k == 0 else ":",
                label=f"{label}, run {k + 1}",
            )
            right.plot(
                rates[ok], test[ok], marker=marker, color=colour, linestyle="-" if k == 0 else ":"
            )
            if (~ok).any():
                left.plot(rates[~ok], np.full((~ok).sum(), 30.0), "x", color=colour, markersize=9)
    left.axhline(limit, color=BOOK_COLOURS[5], linewidth=1)
    left.set(
        xscale="log",
        yscale="log",
        xlabel="learning rate",
        ylabel="final training loss",
        title="loss (× = refused by normcore)",
    )
    right.set(xscale="log", xlabel="learning rate", ylabel="test accuracy", title="test accuracy")
    for k, (name, value) in enumerate((yardsticks or {}).items()):
        right.axhline(value, color=BOOK_COLOURS[5], linewidth=1, linestyle=("--", "-.", ":")[k % 3])
        right.annotate(
            name,
            (0.02, value),
            xycoords=("axes fraction", "data"),
            xytext=(0, 2),
            textcoords="offset points",
            fontsize=8,
        )
    # ticks at the rates swept and at round losses, written plainly (no minor ticks)
    swept = sorted({r.rate for r in rows})
    for ax in (left, right):
        ax.set_xticks(swept, [f"{v:g}" for v in swept])
        ax.xaxis.set_minor_locator(NullLocator())
    lossy = [0.3, 1, 3, 10, 30]
    left.set_yticks(lossy, [f"{v:g}" for v in lossy])
    left.yaxis.set_minor_locator(NullLocator())
    left.legend(fontsize=8, loc="upper left")
    return fig


def three_ways_chart(ways: Any) -> Any:
    """Each test subscriber's probability asked by the batch's statistics (x) and by the
    running statistics or the shuffled batches (y)."""
    use_book_style()
    fig, ax = plt.subplots(figsize=(4.6, 4.2))
    ax.plot(
        ways.batch,
        ways.running,
        "o",
        markersize=3,
        color=BOOK_COLOURS[0],
        label="running statistics",
    )
    ax.plot(
        ways.batch,
        ways.shuffled,
        "s",
        markersize=3,
        color=BOOK_COLOURS[1],
        label="batch statistics, order shuffled",
    )
    ax.plot([0, 1], [0, 1], color=BOOK_COLOURS[5], linewidth=1)
    ax.axhline(0.5, color=BOOK_COLOURS[5], linewidth=0.6, linestyle=":")
    ax.axvline(0.5, color=BOOK_COLOURS[5], linewidth=0.6, linestyle=":")
    ax.set(
        xlabel="probability, batch statistics (batches of 20)",
        ylabel="probability, asked another way",
        xlim=(0, 1),
        ylim=(0, 1),
    )
    ax.legend(loc="upper left", fontsize=8)
    return fig


def order_spread_chart(spreads: dict[str, Any], homogeneous: dict[str, dict[str, float]]) -> Any:
    """One panel per run: a histogram of the test accuracy with batch statistics over random row
    orders, with the in-order accuracy, the running statistics' accuracy and the accuracies of
    batches made homogeneous (`homogeneous[run]`: name -> accuracy) as vertical lines."""
    use_book_style()
    fig, axes = plt.subplots(1, len(spreads), figsize=(7.2, 3.2), sharey=True)
    axes = np.atleast_1d(axes)
    for ax, (run, spread) in zip(axes, spreads.items(), strict=True):
        values = spread.accuracies
        step = 1 / 252
        edges = np.arange(values.min() - step / 2, values.max() + step, step)
        ax.hist(values, bins=edges, color=BOOK_COLOURS[1], alpha=0.6, label="random orders")
        ax.axvline(spread.running, color="black", linewidth=1.5, label="running statistics")
        ax.axvline(
            spread.in_order,
            color=BOOK_COLOURS[0],
            linewidth=1.5,
            linestyle="--",
            label="rows in order",
        )
        for k, value in enumerate(homogeneous.get(run, {}).values()):
            ax.axvline(
                value,
                color=BOOK_COLOURS[3],
                linewidth=1.2,
                linestyle=":",
                label="sorted by label" if k == 0 else None,
            )
        ax.set(xlabel="test accuracy, batch statistics", title=run)
    axes[0].set_ylabel("row orders")
    axes[-1].legend(fontsize=7, loc="upper left")
    return fig


def pinned_chart(free: Sequence[Any], pinned: Sequence[Any], limit: float = 1.0) -> Any:
    """Each epoch's training loss (log scale) of normalised runs at one rate, with each hidden
    unit's weights free to grow (solid) and pinned to their starting length after every step
    (dashed), one line a run; the grey line is the loss `limit` the chapter calls stable."""
    use_book_style()
    fig, ax = plt.subplots(figsize=(7.2, 3.2))
    for runs, colour, style, word in (
        (free, BOOK_COLOURS[1], "-", "lengths free"),
        (pinned, BOOK_COLOURS[3], "--", "lengths pinned"),
    ):
        for k, run in enumerate(runs):
            losses = np.asarray(run.epoch_losses)
            ax.plot(
                np.arange(1, len(losses) + 1),
                losses,
                linestyle=style,
                color=colour,
                alpha=1.0 if k == 0 else 0.6,
                label=f"{word}, run {k + 1}",
            )
    ax.axhline(limit, color=BOOK_COLOURS[5], linewidth=1)
    ax.set(yscale="log", xlabel="epoch", ylabel="training loss (mean over the epoch)")
    ticks = [0.3, 0.5, 1, 2, 5]
    ax.set_yticks(ticks, [f"{v:g}" for v in ticks])
    ax.yaxis.set_minor_locator(NullLocator())
    ax.legend(fontsize=8, loc="upper right", ncol=2)
    return fig
