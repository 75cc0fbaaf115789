"""Figures for chapter 1, the moving target."""

from __future__ import annotations

import io
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.collections import LineCollection

from normcore.experiments.shift import CrowdShift, NetworkDrift
from normcore.plots.style import BOOK_COLOURS, PNG_METADATA, use_book_style

TITLES = {"none": "plain network", "batch": "with a batch layer after the ReLU"}

# Chapter 1's figures are laid out once, by these frames, instead of by the book style's
# constrained layout: a layout engine makes every save (the page's PNG, the figure pack's SVG)
# measure every tick label and title once more before it draws, a quarter of each figure's cost.
# The frames are where constrained layout put the panels of the chapter's own run (at the page's
# 110 dpi), so the figures look as they did; tests/test_shift.py checks that no panel's labels
# run into another panel and nothing leaves the canvas.

#: The deep-stack figure's two panels: (left, bottom, width, height) in figure fractions.
STACK_FRAME = ((0.0848, 0.1480, 0.4092, 0.7756), (0.5846, 0.1480, 0.4092, 0.7756))
#: The comparison figure's columns (left edges) and rows (bottom edges), and one panel's size:
#: the first column's legend runs past its panel, so the first gap is the wider.
COMPARISON_COLUMNS = (0.0801, 0.4628, 0.7715)
COMPARISON_ROWS = (0.5570, 0.0904)
COMPARISON_PANEL = (0.2137, 0.3962)


def _framed(rows: int, columns: int, figsize: tuple[float, float], **shared):
    """A figure of rows x columns panels with no layout engine (the caller places them)."""
    return plt.subplots(rows, columns, figsize=figsize, layout="none", **shared)


def network_drift_figure(
    plain: NetworkDrift, normalised: NetworkDrift, he: NetworkDrift | None = None
):
    """The standard deviation (left) and mean (right) of the activations each layer hands on: the
    plain network, the same draws He-initialised (if given) and the plain network with batch
    layers."""
    use_book_style()
    fig, (left, right) = _framed(1, 2, (6.8, 3.3), sharex=True)
    for ax, frame in zip((left, right), STACK_FRAME, strict=True):
        ax.set_position(frame)
    depth = np.arange(plain.depth + 1)
    lines = [(plain, BOOK_COLOURS[0], "o", "default initialisation")]
    if he is not None:
        lines.append((he, BOOK_COLOURS[2], "^", "He initialisation"))
    lines.append((normalised, BOOK_COLOURS[1], "s", "default, batch layer before each ReLU"))
    for drift, colour, marker, label in lines:
        left.plot(depth, drift.deviation, marker=marker, color=colour, label=label)
        right.plot(depth, drift.mean, marker=marker, color=colour, label=label)
    left.set(
        title="standard deviation of the activations",
        xlabel="layer (0 = input)",
        ylabel="standard deviation",
    )
    right.set(title="mean of the activations", xlabel="layer (0 = input)", ylabel="mean")
    left.set_ylim(bottom=0)
    right.set_ylim(bottom=0)
    left.legend(loc="upper right", fontsize=8)
    left.set_xticks(depth[::2])
    return fig


def _unit_lines(ax, epochs: np.ndarray, values: np.ndarray, marked: int, label=None) -> None:
    """One line per unit (the columns of `values`, epochs down): the unmarked units as one
    collection of thin blue lines, the `marked` unit as a thick red line on top."""
    others = [u for u in range(values.shape[1]) if u != marked]
    segments = np.stack(
        [np.broadcast_to(epochs, values[:, others].T.shape), values[:, others].T], -1
    )
    ax.add_collection(
        LineCollection(segments, colors=BOOK_COLOURS[0], linewidths=0.9, alpha=0.55, zorder=2)
    )
    ax.plot(epochs, values[:, marked], color=BOOK_COLOURS[1], linewidth=2.2, zorder=3, label=label)
    ax.autoscale_view()


def crowd_shift_axes(shift: CrowdShift, mean_ax, deviation_ax, skewness_ax=None) -> None:
    """Draw every unit's mean and standard deviation (and skewness, if an axis is given) per epoch:
    one collection of lines per panel, the unit whose mean drifts furthest drawn on top in red."""
    epochs = np.arange(1, shift.epochs + 1, dtype=np.float64)
    marked = shift.shift_unit
    label = f"unit {marked + 1} (mean drifts furthest)"
    _unit_lines(mean_ax, epochs, shift.mean, marked, label)
    _unit_lines(deviation_ax, epochs, shift.deviation, marked)
    if skewness_ax is not None and shift.skewness is not None:
        _unit_lines(skewness_ax, epochs, shift.skewness, marked)
    mean_ax.set(xlabel="epoch", ylabel="mean over the 25 people")
    deviation_ax.set(xlabel="epoch", ylabel="standard deviation")
    deviation_ax.set_ylim(bottom=0)
    if skewness_ax is not None:
        skewness_ax.set(xlabel="epoch", ylabel="skewness over the 25 people")
    mean_ax.legend(loc="upper left", fontsize=8)


#: Where `crowd_shift_figure` puts its two panels (figure fractions), set once instead of by the
#: book style's constrained layout: a layout engine costs the switch's charts a whole extra pass
#: over every tick and label. The margins hold tick labels as wide as "-0.025" and the suptitle
#: (tests/test_shift.py draws the charts of several seeds and finds nothing outside the canvas).
CHART_FRAME = {"left": 0.125, "right": 0.99, "bottom": 0.152, "top": 0.908, "wspace": 0.27}


def crowd_shift_figure(shift: CrowdShift):
    """The activations the output layer reads, unit by unit, over training: one variant (the
    switch's chart; its panels sit where `CHART_FRAME` puts them)."""
    use_book_style()
    fig, (mean_ax, deviation_ax) = plt.subplots(
        1, 2, figsize=(6.8, 3.2), sharex=True, layout="none"
    )
    fig.subplots_adjust(**CHART_FRAME)
    crowd_shift_axes(shift, mean_ax, deviation_ax)
    fig.suptitle(
        f"What the output layer reads: {TITLES.get(shift.variant, shift.variant)}",
        x=0.01,
        ha="left",
        fontsize=12,
    )
    return fig


def crowd_shift_comparison(plain: CrowdShift, batch: CrowdShift):
    """Both variants, one above the other, on shared axes: mean, standard deviation and skewness."""
    use_book_style()
    fig, axes = _framed(2, 3, (7.2, 5.4), sharex=True, sharey="col")
    width, height = COMPARISON_PANEL
    for row, bottom in zip(axes, COMPARISON_ROWS, strict=True):
        for ax, left in zip(row, COMPARISON_COLUMNS, strict=True):
            ax.set_position((left, bottom, width, height))
    for row, shift in zip(axes, (plain, batch), strict=True):
        crowd_shift_axes(shift, row[0], row[1], row[2])
        row[1].set_title(TITLES.get(shift.variant, shift.variant))
    for ax in axes[0]:
        ax.set_xlabel("")
    top = max(float(np.max(plain.deviation)), float(np.max(batch.deviation)))
    axes[0, 1].set_ylim(0, 1.05 * top)
    return fig


def png_bytes(fig, dpi: float = 100.0) -> bytes:
    """The figure as PNG bytes without metadata (the same bytes on every run), its whole canvas
    as laid out (no tight crop: that would draw it twice); closes it.

    Args:
        fig: a matplotlib figure.
        dpi: dots per inch; the default 100 keeps the switch's two charts sharp at the page's
            width (680 pixels for the 6.8-inch figure) while costing half the time and bytes of
            the book style's 150.
    """
    buffer = io.BytesIO()
    with plt.rc_context({"savefig.bbox": "standard"}):
        fig.savefig(buffer, format="png", metadata=dict(PNG_METADATA), dpi=dpi)
    plt.close(fig)
    return buffer.getvalue()


def _band(ax, values: np.ndarray, colour: str, marker: str, label: str) -> None:
    """Median over the seeds (columns) as a line, the 10-90 % band shaded, per layer (rows)."""
    depth = np.arange(values.shape[0])
    low, mid, high = np.quantile(values, [0.1, 0.5, 0.9], axis=1)
    ax.fill_between(depth, low, high, color=colour, alpha=0.2, linewidth=0)
    ax.plot(depth, mid, marker=marker, color=colour, label=label)


def network_spread_figure(activations: dict, gradients: dict) -> Any:
    """The untrained deep networks over many seeds: the standard deviation of each layer's
    activations over the input's (left) and the root mean square of ∂L/∂h at each layer over the
    top's (right),
    median and 10-90 % band per layer. Each dict maps a label to (depth + 1, seeds) ratios."""
    use_book_style()
    fig, (left, right) = _framed(1, 2, (6.8, 3.3), sharex=True)
    for ax, frame in zip((left, right), STACK_FRAME, strict=True):
        ax.set_position(frame)
    marks = ["o", "^", "s"]
    for k, (label, values) in enumerate(activations.items()):
        _band(left, values, BOOK_COLOURS[k], marks[k], label)
    for k, (label, values) in enumerate(gradients.items()):
        _band(right, values, BOOK_COLOURS[k], marks[k], label)
    left.set(title="activations: σ over the input's", xlabel="layer (0 = input)", yscale="log")
    right.set(title="gradient: RMS over the top's", xlabel="layer (0 = input)", yscale="log")
    left.set_ylabel("ratio (log scale)")
    left.legend(loc="lower left", fontsize=8)
    right.legend(loc="lower right", fontsize=8)
    left.set_xticks(np.arange(0, values.shape[0], 2))
    return fig


def score_shapes_figure(scores: np.ndarray, layers=(1, 5, 10)) -> Any:
    """Histograms of the standardised scores a batch layer hands its ReLU at a few layers of the
    deep network (scores: (depth, rows, features), one seed), each against the standard normal
    density: the batch layer fixes each column's mean and variance, not the shape."""
    use_book_style()
    fig, axes = plt.subplots(1, len(layers), figsize=(6.8, 2.6), sharey=True)
    grid = np.linspace(-4, 4, 200)
    normal = np.exp(-(grid**2) / 2) / np.sqrt(2 * np.pi)
    for ax, layer in zip(axes, layers, strict=True):
        values = scores[layer - 1].ravel()
        ax.hist(values, bins=np.linspace(-4, 4, 33), density=True, color=BOOK_COLOURS[0], alpha=0.6)
        ax.plot(grid, normal, color=BOOK_COLOURS[1], lw=1.5, label="standard normal")
        ax.set(title=f"layer {layer}", xlabel="standardised score")
    axes[0].set_ylabel("density")
    axes[0].legend(loc="upper left", fontsize=7)
    return fig
