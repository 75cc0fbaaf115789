"""The convnet chapter's figures: held-out accuracy by normaliser, and by per-device batch size
beside Wu & He's published errors. Each takes the experiment's results and returns the figure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .style import BOOK_COLOURS, use_book_style

NAMES = {
    "none": "none",
    "batch": "batch",
    "layer": "layer",
    "instance": "instance",
    "group": "group",
    "ws-group": "WS + group",
}
COLOURS = dict(zip(NAMES, BOOK_COLOURS, strict=False))
COLOURS["ws-group"] = BOOK_COLOURS[5]
MARKERS = {"none": "o", "batch": "s", "layer": "^", "instance": "v", "group": "D", "ws-group": "P"}


def accuracy_by_version(accuracy: dict[str, np.ndarray]) -> Any:
    """One column per version, one dot per seed (held-out accuracy), the mean as a bar."""
    import matplotlib.pyplot as plt

    use_book_style()
    # margins set once: a constrained-layout pass would measure every label again
    fig, ax = plt.subplots(figsize=(6.4, 3.2), layout="none")
    fig.subplots_adjust(left=0.12, right=0.98, bottom=0.17, top=0.95)
    for k, (version, acc) in enumerate(accuracy.items()):
        ax.plot(np.full(acc.shape, k), acc, MARKERS[version], color=COLOURS[version], alpha=0.85)
        ax.plot([k - 0.25, k + 0.25], [acc.mean()] * 2, color=COLOURS[version], lw=2)
    ax.set_xticks(range(len(accuracy)), [NAMES[v] for v in accuracy])
    ax.set_xlabel("normaliser after each convolution")
    ax.set_ylabel("held-out accuracy")
    return fig


def batch_sizes(
    sizes: Sequence[int],
    batch: np.ndarray,
    group: np.ndarray,
    published: dict[str, dict[int, float]],
) -> Any:
    """Left: held-out accuracy against images per device, batch norm (`batch`, shaped
    (len(sizes), seeds)) and group norm (`group`, (seeds,), the same run at every size), the mean
    a line and the seeds' range a band. Right: Wu & He's top-1 error on ImageNet (`published`,
    by normaliser then images per GPU). Sizes sit at their base-2 logarithms, labelled with the
    sizes themselves (each doubling one step along the axis)."""
    import matplotlib.pyplot as plt

    use_book_style()
    # margins and legend places set once: a constrained-layout pass and a search for the best
    # legend place would measure every label again
    fig, (left, right) = plt.subplots(1, 2, figsize=(7.2, 3.3), layout="none")
    fig.subplots_adjust(left=0.1, right=0.98, bottom=0.16, top=0.9, wspace=0.35)
    x = np.log2(sizes)
    lines = {"batch": batch, "group": np.tile(group, (len(sizes), 1))}
    for name, acc in lines.items():
        left.plot(x, acc.mean(axis=1), marker=MARKERS[name], color=COLOURS[name], label=name)
        left.fill_between(x, acc.min(axis=1), acc.max(axis=1), color=COLOURS[name], alpha=0.15)
    left.set_ylabel("held-out accuracy (digits)")
    left.set_title("this chapter's convnet", fontsize="medium")
    for name, errors in published.items():
        b = sorted(errors)
        right.plot(
            np.log2(b),
            [errors[k] for k in b],
            marker=MARKERS[name],
            color=COLOURS[name],
            label=name,
        )
    right.set_ylabel("top-1 error, % (ImageNet)")
    right.set_title("Wu & He, ResNet-50", fontsize="medium")
    ticks = {left: list(sizes), right: sorted({b for errors in published.values() for b in errors})}
    for ax, place in ((left, "lower right"), (right, "upper right")):
        ax.set_xticks(np.log2(ticks[ax]), [str(s) for s in ticks[ax]])
        ax.set_xlabel("images per device")
        ax.legend(loc=place)
    return fig
