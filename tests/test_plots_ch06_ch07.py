"""Chapters 6 and 7's figure helpers: what they hand back is complete and cheap to show."""

from __future__ import annotations

import matplotlib

matplotlib.use("agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from normcore.experiments import comparison  # noqa: E402
from normcore.plots import ch06  # noqa: E402


@pytest.fixture(scope="module")
def short():
    return comparison.run_all(epochs=30)


def _labels(axis) -> list[str]:
    return [t.get_text() for t in axis.get_ticklabels()]


def test_epoch_axes_are_ticked_plainly(short):
    """Epochs on a log axis ticked at 1, 2, 5, 10, 20 written as numbers: no minor ticks, no
    mathtext labels (each costs a typesetting pass when the figure is drawn)."""
    for fig in (ch06.loss_curves(short.curves), ch06.two_ways(short.curves["batch"])):
        ax = fig.axes[0]
        assert ax.get_xscale() == "log"
        assert _labels(ax.xaxis) == ["1", "2", "5", "10", "20"]
        assert ax.xaxis.get_minorticklocs().size == 0
        plt.close(fig)
