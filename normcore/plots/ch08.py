"""Chapter 8's figures: smoothness, the digits runs, pre- and post-LN gradients, batch sizes and
the effective learning rate. Each takes the result object of its experiment and returns the
figure."""

from __future__ import annotations

from typing import Any

import numpy as np

from .style import BOOK_COLOURS, use_book_style

NAMES = {
    "plain": "plain",
    "batch": "batch",
    "layer": "layer",
    "rms": "RMS",
    "recomputed": "batch, recomputed statistics",
}
COLOURS = {
    "plain": BOOK_COLOURS[0],
    "batch": BOOK_COLOURS[1],
    "layer": BOOK_COLOURS[2],
    "rms": BOOK_COLOURS[3],
    "post-LN": BOOK_COLOURS[1],
    "pre-LN": BOOK_COLOURS[0],
    "pre-RMS": BOOK_COLOURS[3],
    "recomputed": BOOK_COLOURS[4],
}
MARKERS = {
    "plain": "o",
    "batch": "s",
    "layer": "^",
    "rms": "D",
    "post-LN": "s",
    "pre-LN": "o",
    "pre-RMS": "D",
    "recomputed": "v",
}


#: margins of the fixed layouts (no constrained-layout pass at each draw; the inline figure is
#: cropped to its artists, so only the space between panels matters)
FIXED_GRID = {
    "left": 0.1,
    "right": 0.98,
    "bottom": 0.07,
    "top": 0.98,
    "wspace": 0.38,
    "hspace": 0.22,
}


def _one_axes() -> tuple[Any, Any]:
    """A figure of one axes with a fixed layout (the book's size)."""
    import matplotlib.pyplot as plt

    return plt.subplots(layout="none")


def _log_axis(ax: Any, values: np.ndarray) -> None:
    """A log-scale y axis labelled at 1, 2 and 5 times the powers of ten its `values` span, and
    no minor ticks (matplotlib's default minor labels cost more to lay out than they tell)."""
    ax.set_yscale("log")
    low, high = np.log10(np.min(values)), np.log10(np.max(values))
    ticks = [
        m * 10.0**e for e in range(int(np.floor(low)), int(np.ceil(high)) + 1) for m in (1, 2, 5)
    ]
    ticks = [t for t in ticks if 10**low / 1.5 <= t <= 10**high * 1.5]
    ax.set_yticks(ticks, [f"{t:g}" for t in ticks])
    ax.minorticks_off()


#: the smoothness figure's panels: the field of `smoothness.Smoothness` and its axis label
SMOOTHNESS_PANELS = (
    ("loss_variation", "loss variation over the steps\n(Santurkar et al.'s (a))"),
    ("gradient_change_absolute", "largest gradient change\n(their (b), predictiveness)"),
    ("beta_effective", "largest gradient change per distance\n(their (c), effective smoothness)"),
    ("gradient_change", "gradient change / its length\n(this book's relative measure)"),
)


def smoothness(
    results: dict[str, Any],
    steps: tuple[int, ...],
    panels: tuple[tuple[str, str], ...] = SMOOTHNESS_PANELS,
) -> Any:
    """One panel per measure of `panels` (a 2 x 2 grid for four), each probe a column of dots, one
    dot a seed, plain and batch side by side."""
    import matplotlib.pyplot as plt

    use_book_style()
    rows = (len(panels) + 1) // 2
    fig, axes = plt.subplots(rows, 2, figsize=(7.2, 3.0 * rows), squeeze=False, layout="none")
    fig.subplots_adjust(**FIXED_GRID)
    for ax, (field, label) in zip(axes.flat, panels, strict=False):
        for k, (version, r) in enumerate(results.items()):
            values = getattr(r, field)  # (probes, seeds): one artist for every dot of a version
            at = np.arange(len(steps))[:, None] + (k - 0.5) * 0.3 + np.zeros(values.shape)
            ax.plot(
                at.ravel(),
                values.ravel(),
                MARKERS[version],
                color=COLOURS[version],
                alpha=0.8,
                label=NAMES[version],
            )
        ax.set_xticks(range(len(steps)), [f"step {s}" for s in steps])
        ax.set_ylabel(label, fontsize=8)
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    axes.flat[0].legend()
    return fig


def digits_accuracy(sweeps: dict[str, Any], rates: dict[str, float]) -> Any:
    """Held-out accuracy by epoch, each version at its own best rate: the mean over seeds as a
    line, the seeds' range as a band."""

    use_book_style()
    fig, ax = _one_axes()
    for version, sweep in sweeps.items():
        acc = sweep.accuracy[sweep.rates.index(rates[version])]
        epochs = np.arange(acc.shape[-1])
        ax.plot(
            epochs,
            acc.mean(axis=0),
            marker=MARKERS[version],
            color=COLOURS[version],
            label=f"{NAMES[version]} (rate {rates[version]:g})",
        )
        ax.fill_between(
            epochs, acc.min(axis=0), acc.max(axis=0), color=COLOURS[version], alpha=0.15
        )
    ax.set_xticks(epochs)
    ax.set_xlabel("epoch")
    ax.set_ylabel("held-out accuracy")
    ax.legend()
    return fig


def gradient_by_block(profiles: dict[str, Any]) -> Any:
    """Length of each residual block's weight gradient at initialisation (mean over seeds, log
    scale)."""

    use_book_style()
    fig, ax = _one_axes()
    for name, p in profiles.items():
        blocks = np.arange(1, p.norm.shape[1] + 1)
        ax.plot(blocks, p.norm.mean(axis=0), marker=MARKERS[name], color=COLOURS[name], label=name)
    _log_axis(ax, np.concatenate([p.norm.mean(axis=0) for p in profiles.values()]))
    ax.set_xlabel("residual block (1 = nearest the input)")
    ax.set_ylabel("length of the weight gradient")
    ax.legend()
    return fig


def accuracy_by_group_size(sizes: tuple[int, ...], curves: dict[str, np.ndarray]) -> Any:
    """Held-out accuracy against the number of rows the batch layers' statistics were read over,
    one line a network (the mean over seeds, `curves[name]` shaped (len(sizes), seeds)) and the
    seeds' range as a band."""

    use_book_style()
    fig, ax = _one_axes()
    for name, acc in curves.items():
        ax.plot(
            sizes, acc.mean(axis=1), marker=MARKERS[name], color=COLOURS[name], label=NAMES[name]
        )
        ax.fill_between(sizes, acc.min(axis=1), acc.max(axis=1), color=COLOURS[name], alpha=0.15)
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes, [str(s) for s in sizes])
    ax.minorticks_off()
    ax.set_xlabel("rows each statistic is read over (B)")
    ax.set_ylabel("held-out accuracy")
    ax.legend()
    return fig


def effective_rate(result: Any) -> Any:
    """The middle layer's squared weight length over the steps, each seed a line, with and
    without weight decay."""

    use_book_style()
    fig, ax = _one_axes()
    seeds = result.length2.shape[1] // len(result.decays)
    for k, decay in enumerate(result.decays):
        colour = BOOK_COLOURS[0] if decay == 0 else BOOK_COLOURS[1]
        for s in range(seeds):
            ax.plot(
                result.length2[:, k * seeds + s],
                color=colour,
                label=f"weight decay {decay:g}" if s == 0 else None,
            )
    _log_axis(ax, result.length2)
    ax.set_xlabel("step")
    ax.set_ylabel("squared length of the weights")
    ax.legend()
    return fig
