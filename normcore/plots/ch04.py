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


def _rays(ends: np.ndarray) -> np.ndarray:
    """Segments from the origin to each row of `ends` (rows, 2): shape (rows, 2, 2)."""
    return np.stack([np.zeros_like(ends), ends], axis=1)


def plot_geometry(geometry: Any) -> Any:
    """Two-feature rows as measured (left, with the ray from the origin through each) and after
    RMS and layer norm (right): RMS puts every row on the circle of radius sqrt(2) along its own
    ray; layer norm puts every row on that circle where it meets the line x1 + x2 = 0, which is
    two points, (1, -1) and (-1, 1)."""
    import matplotlib.pyplot as plt
    from matplotlib.collections import LineCollection

    use_book_style()
    people, rms, layer = geometry.people, geometry.rms, geometry.layer
    radius = np.sqrt(geometry.width)
    fig, axes = plt.subplots(1, 2, figsize=(6.8, 3.5))
    left, right = axes
    top = 1.1 * float(np.max(people))
    ends = people * (top / np.max(people, axis=1, keepdims=True))
    left.add_collection(LineCollection(_rays(ends), colors="#bbbbbb", linewidths=0.6))
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
    right.add_collection(LineCollection(_rays(rms), colors="#bbbbbb", linewidths=0.6))
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


#: The oblique projection of the cubes: one step into the depth (channels) moves a face this far
#: right and up on the page.
DEPTH_STEP = (0.5, 0.38)


def _shade(colour: str, face: str) -> tuple[float, float, float]:
    """`colour` as a cube face shows it: the front as is, the top lighter, the side darker."""
    from matplotlib.colors import to_rgb

    rgb = np.array(to_rgb(colour))
    if face == "top":
        rgb = rgb + 0.35 * (1.0 - rgb)
    elif face == "side":
        rgb = 0.72 * rgb
    return (float(rgb[0]), float(rgb[1]), float(rgb[2]))


def cube_faces(mask: np.ndarray, colour: str) -> tuple[list[np.ndarray], list[tuple]]:
    """The visible faces of a box of voxels, as 2-D polygons in an oblique projection.

    `mask` (N, C, P) marks the coloured voxels: images N across, channels C into the depth, the
    P = H x W pixels upwards. Seen from the front, above and the right, the box shows the
    front face (channel 0: N x P cells), the top (the last pixel: N x C cells) and the right
    side (the last image: C x P cells); each cell takes its voxel's colour, shaded by the face.

    Returns:
        The polygons (each a (4, 2) array of page coordinates) and their colours.
    """
    n_images, n_channels, n_pixels = mask.shape
    dx, dy = DEPTH_STEP

    def corner(x: float, depth: float, up: float) -> tuple[float, float]:
        return (x + depth * dx, up + depth * dy)

    grey = "#d4d4d4"
    polygons, colours = [], []

    def add(points: list[tuple[float, float]], on: bool, face: str) -> None:
        polygons.append(np.array(points))
        colours.append(_shade(colour if on else grey, face))

    for i in range(n_images):
        for k in range(n_pixels):  # front: depth 0
            points = [
                corner(i, 0, k),
                corner(i + 1, 0, k),
                corner(i + 1, 0, k + 1),
                corner(i, 0, k + 1),
            ]
            add(points, bool(mask[i, 0, k]), "front")
        for c in range(n_channels):  # top: height n_pixels
            points = [
                corner(i, c, n_pixels),
                corner(i + 1, c, n_pixels),
                corner(i + 1, c + 1, n_pixels),
                corner(i, c + 1, n_pixels),
            ]
            add(points, bool(mask[i, c, -1]), "top")
    for c in range(n_channels):  # right side: x = n_images
        for k in range(n_pixels):
            points = [
                corner(n_images, c, k),
                corner(n_images, c + 1, k),
                corner(n_images, c + 1, k + 1),
                corner(n_images, c, k + 1),
            ]
            add(points, bool(mask[-1, c, k]), "side")
    return polygons, colours


def plot_cubes(masks: dict[str, np.ndarray], titles: dict[str, str] | None = None) -> Any:
    """One box of voxels per normaliser: images N across, channels C into the depth, the
    pixels H x W flattened upwards; the voxels one statistic covers are coloured. The boxes
    are drawn in a flat oblique projection (`cube_faces`), one collection of faces each.

    `masks` maps a name to a boolean (N, C, H, W) array (from `normcore.experiments.axes.coverage`).
    """
    import matplotlib.pyplot as plt
    from matplotlib.collections import PolyCollection

    use_book_style()
    names = list(masks)
    fig, axes = plt.subplots(1, len(names), figsize=(1.8 * len(names) + 0.6, 2.6))
    axes = np.atleast_1d(axes)
    dx, dy = DEPTH_STEP
    for k, (ax, name) in enumerate(zip(axes, names, strict=True)):
        mask = masks[name]
        n, c, h, w = mask.shape
        polygons, colours = cube_faces(
            mask.reshape(n, c, h * w), BOOK_COLOURS[k % len(BOOK_COLOURS)]
        )
        ax.add_collection(
            PolyCollection(polygons, facecolors=colours, edgecolors="#555555", linewidths=0.4)
        )
        ax.text(n / 2, -0.25, "N", ha="center", va="top", fontsize=10)
        ax.text(n + c * dx / 2 + 0.15, c * dy / 2 - 0.1, "C", ha="left", va="top", fontsize=10)
        ax.text(-0.2, h * w / 2, "H·W", ha="right", va="center", rotation=90, fontsize=10)
        ax.set_xlim(-0.9, n + c * dx + 0.3)
        ax.set_ylim(-1.0, h * w + c * dy + 0.2)
        ax.set_aspect("equal")
        ax.set_axis_off()
        ax.set_title((titles or {}).get(name, name), fontsize=10, loc="center")
    return fig
