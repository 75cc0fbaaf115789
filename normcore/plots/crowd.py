"""The crowd as a picture: 25 people by height and weight, marked by label."""

from __future__ import annotations

from typing import Any

from .style import BOOK_COLOURS, use_book_style


def crowd_scatter(crowd: Any) -> Any:
    """Scatter of `crowd` (a `normcore.data.Crowd`): height (cm) across, weight (kg) up, label 0
    as blue circles and label 1 as red triangles (shape as well as colour, so the two read apart
    in grey or for a colour-blind reader). Returns the figure."""
    import matplotlib.pyplot as plt

    use_book_style()
    fig, ax = plt.subplots(figsize=(5.2, 3.8))
    styles = {0: ("o", BOOK_COLOURS[0], "label 0"), 1: ("^", BOOK_COLOURS[1], "label 1")}
    for label, (marker, colour, name) in styles.items():
        chosen = crowd.label == label
        ax.scatter(
            crowd.height[chosen],
            crowd.weight[chosen],
            marker=marker,
            s=42,
            color=colour,
            edgecolor="black",
            linewidth=0.5,
            label=f"{name} ({int(chosen.sum())} people)",
        )
    ax.set(xlabel="height (cm)", ylabel="weight (kg)", title="the crowd: 25 people")
    ax.legend(loc="upper left")
    return fig
