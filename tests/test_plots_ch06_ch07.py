"""Chapters 6 and 7's figure helpers: what they hand back is complete and cheap to show."""

from __future__ import annotations

import io

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


def test_a_new_figure_is_left_for_the_inline_backend_to_draw(short):
    """A figure the helper made needs no draw from pyplot's after-cell hook; one drawn into the
    caller's axes is the caller's, and is left as matplotlib marks it."""
    fig = ch06.held_out_by_seed(short.scores)
    assert not fig.stale
    fig.axes[0].set_title("changed later")
    assert fig.stale  # matplotlib still marks a changed figure for a redraw
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    assert buffer.getvalue()[:4] == b"\x89PNG"
    _, ax = plt.subplots()
    assert ch06.loss_curves(short.curves, ax=ax).stale  # the caller's figure: untouched
    plt.close("all")


def test_chapter_7_figures_are_left_for_the_inline_backend_too():
    from normcore.experiments import rates as R
    from normcore.plots import ch07

    fig = ch07.three_ways_chart(R.three_ways(R.train(R.RUN_SEEDS[0], 0.05, True).net))
    assert not fig.stale and len(fig.axes) == 1
    plt.close(fig)
