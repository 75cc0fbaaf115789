"""Chapter 4's figures: rows against columns, RMS rows, and the cube picture of the image axes
drawn from the layers' own statistic axes."""

from __future__ import annotations

from typing import Any

import numpy as np

from normcore.plots.style import BOOK_COLOURS, use_book_style


def plot_rows_and_columns(rows: Any) -> Any:
    """Twenty people standardised along the row (layer) and down the columns (batch)."""
    import matplotlib.pyplot as plt

    use_book_style()
    fig, axes = plt.subplots(1, 2, figsize=(6.8, 3.4), sharex=True, sharey=True)
    for ax, block, title in (
        (axes[0], rows.along_rows, "along the row (layer norm)"),
        (axes[1], rows.down_columns, "down the columns (batch norm)"),
    ):
        ax.plot(block[:, 0], block[:, 1], "o", color=BOOK_COLOURS[0], alpha=0.7)
        ax.set_title(title, fontsize=11)
        ax.set_xlabel("standardised height")
    axes[0].set_ylabel("standardised weight")
    return fig


def plot_rms_rows(rms: Any) -> Any:
    """Each person before (cm, kg) and after RMS norm: a row keeps its direction from zero."""
    import matplotlib.pyplot as plt

    use_book_style()
    fig, axes = plt.subplots(1, 2, figsize=(6.8, 3.4))
    axes[0].plot(rms.people[:, 0], rms.people[:, 1], "o", color=BOOK_COLOURS[0])
    axes[0].set(title="as measured", xlabel="height (cm)", ylabel="weight (kg)")
    axes[1].plot(rms.output[:, 0], rms.output[:, 1], "o", color=BOOK_COLOURS[1])
    axes[1].set(title="after RMS norm", xlabel="height / root", ylabel="weight / root")
    return fig


def plot_geometry(geometry: Any) -> Any:
    """Two-feature rows as measured (left, with the ray from the origin through each) and after
    RMS and layer norm (right): RMS puts every row on the circle of radius sqrt(2) along its own
    ray; layer norm puts every row on that circle where it meets the line x1 + x2 = 0, which is
    two points, (1, -1) and (-1, 1)."""
    import matplotlib.pyplot as plt

    use_book_style()
    people, rms, layer = geometry.people, geometry.rms, geometry.layer
    radius = np.sqrt(geometry.width)
    fig, axes = plt.subplots(1, 2, figsize=(6.8, 3.5))
    left, right = axes
    top = 1.1 * float(np.max(people))
    for row in people:
        left.plot(
            [0, row[0] * top / np.max(row)],
            [0, row[1] * top / np.max(row)],
            color="#bbbbbb",
            linewidth=0.6,
        )
    left.plot(people[:, 0], people[:, 1], "o", color=BOOK_COLOURS[0], markersize=4)
    left.set(
        xlim=(0, top),
        ylim=(0, top),
        aspect="equal",
        title="as measured",
        xlabel="height (cm)",
        ylabel="weight (kg)",
    )
    angle = np.linspace(0, 2 * np.pi, 361)
    right.plot(
        radius * np.cos(angle),
        radius * np.sin(angle),
        color="#888888",
        linewidth=0.8,
        label=r"circle $x_1^2 + x_2^2 = 2$",
    )
    right.plot(
        [-1.8, 1.8],
        [1.8, -1.8],
        color="#888888",
        linestyle="--",
        linewidth=0.8,
        label=r"line $x_1 + x_2 = 0$",
    )
    for row in rms:
        right.plot([0, row[0]], [0, row[1]], color="#bbbbbb", linewidth=0.6)
    right.plot(rms[:, 0], rms[:, 1], "o", color=BOOK_COLOURS[1], markersize=4, label="RMS norm")
    right.plot(
        layer[:, 0], layer[:, 1], "s", color=BOOK_COLOURS[2], markersize=7, label="layer norm"
    )
    right.axhline(0, color="#dddddd", linewidth=0.6)
    right.axvline(0, color="#dddddd", linewidth=0.6)
    right.set(
        xlim=(-1.8, 1.8),
        ylim=(-1.8, 1.8),
        aspect="equal",
        title="after normalising",
        xlabel="first entry",
        ylabel="second entry",
    )
    right.legend(loc="lower left", fontsize=7, frameon=False)
    return fig


def _voxel_colours(mask: np.ndarray, colour: str) -> np.ndarray:
    colours = np.empty(mask.shape, dtype=object)
    colours[...] = "#e8e8e8"
    colours[mask] = colour
    return colours


def plot_cubes(masks: dict[str, np.ndarray], titles: dict[str, str] | None = None) -> Any:
    """One cube per normaliser: images N along one side, channels C along another, the pixels
    H x W flattened upwards; the voxels one statistic covers are coloured.

    `masks` maps a name to a boolean (N, C, H, W) array (from `normcore.experiments.axes.coverage`).
    """
    import matplotlib.pyplot as plt

    use_book_style()
    names = list(masks)
    fig = plt.figure(figsize=(1.8 * len(names) + 0.6, 2.9), layout="constrained")
    for k, name in enumerate(names):
        mask = masks[name]
        n, c, h, w = mask.shape
        cube = mask.reshape(n, c, h * w)  # voxel axes: x = N, y = C, z = H*W
        ax = fig.add_subplot(1, len(names), k + 1, projection="3d")
        ax.voxels(
            np.ones_like(cube, dtype=bool),
            facecolors=_voxel_colours(cube, BOOK_COLOURS[k % len(BOOK_COLOURS)]),
            edgecolor="#555555",
            linewidth=0.3,
        )
        ax.set_xlabel("N", labelpad=-12)
        ax.set_ylabel("C", labelpad=-12)
        ax.set_zlabel("H·W", labelpad=-14)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_zticks([])
        ax.set_box_aspect((n, c, h * w))
        ax.view_init(elev=22, azim=-58)
        ax.set_title((titles or {}).get(name, name), fontsize=10, loc="center")
    return fig
