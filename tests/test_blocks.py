"""Recycled answer blocks (`normcore._blocks`): never handed out while anything still uses them."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import normcore as nc
from normcore import _blocks

BIG = (512, 1024)  # 2 MiB of float32, 4 MiB of float64: recycled


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["new", "drop", "view", "drop view"]),
                          st.sampled_from([np.float32, np.float64]),
                          st.integers(0, 7)), max_size=40))
def test_a_block_in_use_is_never_handed_out_again(steps: list[tuple[str, type, int]]) -> None:
    live: list[np.ndarray] = []
    views: list[np.ndarray] = []
    marks: dict[int, float] = {}  # id of a live block -> the value it was filled with
    for step, (action, dtype, pick) in enumerate(steps):
        if action == "new":
            block = _blocks.empty(BIG, dtype)
            assert block.shape == BIG and block.dtype == dtype and block.flags.c_contiguous
            for other in live + views:
                assert not np.shares_memory(block, other)
            block.fill(step)
            marks[id(block)] = step
            live.append(block)
        elif action == "drop" and live:
            live.pop(pick % len(live))
        elif action == "view" and live:
            views.append(live[pick % len(live)][::3])
        elif action == "drop view" and views:
            views.pop(pick % len(views))
    for block in live:  # nothing handed out since has written over a live block
        assert np.all(block == marks[id(block)])
    del live, views
    _blocks.release()


def test_small_blocks_are_not_held_and_release_lets_go() -> None:
    _blocks.release()
    small = _blocks.empty((10, 10), np.float64)
    assert small.flags.owndata and _blocks.held() == 0
    big = _blocks.empty(BIG, np.float64)
    assert _blocks.held() == big.nbytes
    assert _blocks.release() == 0  # still in use
    del big
    assert _blocks.release() == 512 * 1024 * 8 and _blocks.held() == 0


def test_layer_answers_survive_the_next_pass() -> None:
    """A response kept from one pass is untouched by the passes after it."""
    rng = np.random.default_rng(0)
    layer = nc.LayerNorm.create(1024)
    x = rng.standard_normal(BIG)
    first = layer.forward(x, "training")
    kept = first.output.copy()
    for _ in range(3):
        layer.forward(rng.standard_normal(BIG), "training")
    np.testing.assert_array_equal(first.output, kept)
