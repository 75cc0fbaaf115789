"""Figures for chapter 1, the moving target."""

from __future__ import annotations

import io

import matplotlib.pyplot as plt
import numpy as np

from normcore.experiments.shift import CrowdShift, StackDrift
from normcore.plots.style import BOOK_COLOURS, PNG_METADATA, use_book_style

TITLES = {"none": "plain network", "batch": "with a batch layer after the ReLU"}


def stack_drift_figure(plain: StackDrift, normalised: StackDrift):
    """Mean and deviation of the block each layer hands on, with and without batch layers."""
    use_book_style()
    fig, (left, right) = plt.subplots(1, 2, figsize=(6.6, 3.2), sharex=True)
    depth = np.arange(plain.depth + 1)
    for drift, colour, marker, label in (
        (plain, BOOK_COLOURS[0], "o", "plain"),
        (normalised, BOOK_COLOURS[1], "s", "batch layer before each ReLU"),
    ):
        left.plot(depth, drift.mean, marker=marker, color=colour, label=label)
        right.plot(depth, drift.deviation, marker=marker, color=colour, label=label)
    left.set(title="mean of the block", xlabel="layer (0 = input)", ylabel="mean")
    right.set(title="deviation of the block", xlabel="layer (0 = input)", ylabel="deviation")
    right.set_ylim(bottom=0)
    right.legend(loc="upper right")
    left.set_xticks(depth[::2])
    return fig


def crowd_shift_axes(shift: CrowdShift, mean_ax, deviation_ax) -> None:
    """Draw every unit's mean and deviation per epoch on the two axes given."""
    epochs = np.arange(1, shift.epochs + 1)
    for unit in range(shift.mean.shape[1]):
        mark = unit == shift.shift_unit
        style = dict(
            color=BOOK_COLOURS[1] if mark else BOOK_COLOURS[0],
            linewidth=2.2 if mark else 0.9,
            alpha=1.0 if mark else 0.55,
            zorder=3 if mark else 2,
        )
        label = f"unit {unit + 1} (travels furthest)" if mark else None
        mean_ax.plot(epochs, shift.mean[:, unit], label=label, **style)
        deviation_ax.plot(epochs, shift.deviation[:, unit], **style)
    mean_ax.set(xlabel="epoch", ylabel="mean over the 25 people")
    deviation_ax.set(xlabel="epoch", ylabel="deviation over the 25 people")
    deviation_ax.set_ylim(bottom=0)
    mean_ax.legend(loc="upper left")


def crowd_shift_figure(shift: CrowdShift):
    """The block the output layer reads, unit by unit, over training: one arrangement."""
    use_book_style()
    fig, (mean_ax, deviation_ax) = plt.subplots(1, 2, figsize=(6.8, 3.2), sharex=True)
    crowd_shift_axes(shift, mean_ax, deviation_ax)
    fig.suptitle(
        f"What the output layer reads: {TITLES.get(shift.arrangement, shift.arrangement)}",
        x=0.01,
        ha="left",
        fontsize=12,
    )
    return fig


def crowd_shift_comparison(plain: CrowdShift, batch: CrowdShift):
    """Both arrangements, one above the other, on shared axes."""
    use_book_style()
    fig, axes = plt.subplots(2, 2, figsize=(6.8, 5.6), sharex=True, sharey="col")
    for row, shift in zip(axes, (plain, batch), strict=True):
        crowd_shift_axes(shift, row[0], row[1])
        row[0].set_title(TITLES.get(shift.arrangement, shift.arrangement))
    for ax in axes[0]:
        ax.set_xlabel("")
    top = max(float(np.max(plain.deviation)), float(np.max(batch.deviation)))
    axes[0, 1].set_ylim(0, 1.05 * top)
    return fig


def png_bytes(fig) -> bytes:
    """The figure as PNG bytes without metadata (the same bytes on every run); closes it."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata=dict(PNG_METADATA))
    plt.close(fig)
    return buffer.getvalue()
