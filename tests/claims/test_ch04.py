"""Chapter 4's conclusions, re-run on random draws the chapter does not print.

The chapter's general statements about the axes (the trailing-axes form equals the per-row form,
every image-axis layer agrees with the oracle and passes its structural checks, group norm's two
ends are layer and instance norm in their standardisation, one image through the image batch
layer is instance norm, the layer and RMS rows pass their second structural check, Ba et al.'s
invariance table, the axis traps) are each re-run here on 20 fresh seeds and recorded.
"""

from __future__ import annotations

import numpy as np

import normcore as nc
from normcore.claims import fresh, record
from normcore.experiments import axes, routes

SEEDS = fresh(20)
FRESH = "fresh seeds 1000-1019"


def held_on_every_seed(name: str, ok: int, setting: str = FRESH) -> None:
    """Record claim `name` as held on `ok` of the fresh seeds, and hold it to "every"."""
    held = record(
        "ch04", name, held=int(ok), of=len(SEEDS), setting=setting, resampled=("data draws",)
    )
    assert held.every


def test_trailing_axes_are_the_per_row_form():
    ok = sum(axes.trailing_shape((2, 3, 4, 5), (4, 5), seed=s).row_gap < 1e-12 for s in SEEDS)
    held_on_every_seed("trailing_rows", int(ok), FRESH)


def test_image_layers_agree_with_the_oracle_and_their_sums_vanish():
    ok = 0
    for s in SEEDS:
        images = axes.image_batch((2, 4, 3, 3), seed=s)
        checks = [axes.image_check(name, images, groups=2) for name in axes.IMAGE_AXES]
        ok += all(c.true_gap < 1e-7 and c.largest_sum < 1e-12 for c in checks)
    held_on_every_seed("image_oracle", ok, "image batches (2, 4, 3, 3), " + FRESH)


def test_group_norm_ends_and_one_image():
    ok = 0
    for s in SEEDS:
        x = axes.image_batch((3, 4, 3, 3), seed=s)
        one = nc.GroupNorm.create(4, 1).forward(x).output
        as_layer = nc.LayerNorm.create((4, 3, 3)).forward(x).output
        per = nc.GroupNorm.create(4, 4).forward(x).output
        inst = nc.InstanceNorm.create(4).forward(x).output
        ok += bool(
            np.max(np.abs(one - as_layer)) < 1e-12
            and np.max(np.abs(per - inst)) < 1e-12
            and axes.one_image_gap(x) < 1e-12
        )
    held_on_every_seed("group_ends_one_image", ok, "image batches (3, 4, 3, 3), " + FRESH)


def test_second_structural_check_for_layer_and_rms_rows():
    ok = 0
    for s in SEEDS:
        rng = np.random.default_rng(s)
        x = rng.normal(size=(4, 5)) * 3 + rng.normal(size=(4, 1)) * 5
        d = rng.normal(size=x.shape)
        layer = routes.compare_gradients(x, d, axis="layer")
        rms = routes.compare_gradients(x, d, axis="rms")
        shrink_layer = 1e-5 / (x.var(axis=1) + 1e-5)
        shrink_rms = 1e-5 / ((x**2).mean(axis=1) + 1e-5)
        ok += bool(
            np.allclose(layer.true_dots, shrink_layer * layer.naive_dots, rtol=1e-6, atol=1e-13)
            and np.allclose(rms.true_dots, shrink_rms * rms.naive_dots, rtol=1e-6, atol=1e-13)
            and np.max(np.abs(layer.true_sums)) < 1e-12
        )
    held_on_every_seed("row_structural_checks", ok, "random blocks (4, 5), " + FRESH)


def test_the_invariance_table_is_ba_et_al_s_on_every_draw():
    first = axes.invariance_table(seed=SEEDS[0])
    ok = 0
    for s in SEEDS:
        table = axes.invariance_table(seed=s)
        ok += all(table[k] == v for k, v in axes.BA_TABLE.items()) and table == first
    held_on_every_seed("invariance_table", ok, "eight cases, five inputs, six units, " + FRESH)


def test_the_axis_traps_show_on_every_draw():
    ok = 0
    for s in SEEDS:
        trap = axes.sequence_trap((4, 6, 6), seed=s)
        last = axes.channels_last((2, 3, 3, 4), seed=s)
        ok += bool(trap.right_gap < 1e-12 and trap.wrong_gap > 0.5 and last.gap > 0.1)
    held_on_every_seed("axis_traps", ok, FRESH)


def test_group_norm_with_one_group_parts_from_layer_norm_after_a_step():
    ok = 0
    for s in SEEDS:
        rng = np.random.default_rng(s)
        x = axes.image_batch((2, 4, 3, 3), seed=s)
        push = rng.normal(size=x.shape)
        outs = []
        for start in (nc.GroupNorm.create(4, 1), nc.LayerNorm.create((4, 3, 3))):
            before = start.forward(x, "train")
            moved = start.step(start.backward(before, push), 0.1)
            outs.append((before.output, moved.forward(x, "train").output))
        fresh_gap = np.max(np.abs(outs[0][0] - outs[1][0]))
        step_gap = np.max(np.abs(outs[0][1] - outs[1][1]))
        ok += bool(fresh_gap < 1e-12 and step_gap > 0.01)
    held_on_every_seed(
        "group_layer_part_after_a_step",
        ok,
        "image batches (2, 4, 3, 3), one step at rate 0.1, " + FRESH,
    )
