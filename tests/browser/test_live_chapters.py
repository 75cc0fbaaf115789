"""One widget of each of chapters 3 to 7, live in JupyterLab in a real browser.

Each test opens its chapter in the session's JupyterLab (a temporary copy of book/), clears and
runs every cell from the menus, then works the chapter's widget in the page as a reader would:
picks from a dropdown, types into a box, ticks a box, presses a button, moves a slider with the
keyboard. After each move it reads the readout back from the page (the widget writes every
number it shows, in full, into ``data-*`` attributes) and holds it against the answer computed
here for that state from normcore's public API or its experiment functions, never from the
widget's own rendering code.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import normcore as nc
from normcore.data.subscribers import load_subscribers
from normcore.experiments import comparison, weightnorm
from normcore.experiments import rates as R
from normcore.experiments.axes import THREE_FEATURE_BLOCK, image_batch
from normcore.experiments.routes import WORKED_BLOCK, counting_slope

from .live import Lab, chapter, expect, keyed

EPS = 1e-5
ORACLE_STEP = 1e-6


@pytest.fixture
def clock() -> Iterator[dict[str, float]]:
    """Marks for the report: set 'ran' when the chapter has run; prints the split at the end."""
    marks = {"start": time.monotonic()}
    yield marks
    end = time.monotonic()
    ran = marks.get("ran", end)
    print(f"\nrun all {ran - marks['start']:.1f} s, reader actions {end - ran:.1f} s")


def oracle(objective: Any, x: np.ndarray) -> np.ndarray:
    return nc.finite_difference(objective, x, ORACLE_STEP)


# ------------------------------------------------------------------------------ chapter 3
ROUTES = ".normcore-routes"


def routes_answer(block: np.ndarray, arriving: np.ndarray) -> dict[str, Any]:
    """The batch layer's collected block, the naive d / s and the oracle, and the summary."""
    layer = nc.BatchNorm.create(block.shape[1], epsilon=EPS)
    response = layer.forward(block, "training")
    true = layer.backward(response, arriving).passed_down
    naive = nc.naive_backward(response.cache, arriving)
    fd = oracle(lambda b: float(np.sum(arriving * layer.forward(b, "training").output)), block)
    assert np.max(np.abs(true - fd)) < 1e-6  # the collected block is the right one
    signed = np.abs(true) > 1e-8 * max(1.0, float(np.max(np.abs(naive))))
    wrong = int(np.count_nonzero(signed & (np.sign(naive) * np.sign(true) < 0)))
    return {
        **keyed("collected", true), **keyed("naive", naive), **keyed("oracle", fd),
        "true-gap": np.max(np.abs(true - fd)), "naive-error": np.max(np.abs(naive - fd)),
        "largest-true": np.max(np.abs(true)), "wrong-sign": wrong, "cells": true.size,
        "true-sums": true.sum(axis=0), "naive-sums": naive.sum(axis=0),
    }


def test_chapter3_routes_live(browser: Any, lab: Lab, clock: dict[str, float]) -> None:
    with chapter(browser, lab, "03-backward.ipynb") as page:
        clock["ran"] = time.monotonic()
        root = page.locator(ROUTES)
        expect(page, ROUTES, routes_answer(WORKED_BLOCK, counting_slope(WORKED_BLOCK.shape)),
               atol=1e-15)

        # 1. my own block, typed in: three rows of two
        root.get_by_label("block", exact=True).select_option(label="my own block")
        root.get_by_label("my block", exact=True).fill("2, 5\n4, 1\n9, 3")
        mine = np.array([[2.0, 5.0], [4.0, 1.0], [9.0, 3.0]])
        expect(page, ROUTES, routes_answer(mine, counting_slope(mine.shape)), atol=1e-15)

        # 2. an arriving slope of all ones: every true slope is zero, the naive block is 1 / s
        root.get_by_label("arriving", exact=True).select_option(label="all ones")
        got = expect(page, ROUTES, routes_answer(mine, np.ones(mine.shape)), atol=1e-15)
        assert got["wrong-sign"] == "0"

        # 3. my own slope: the stored one has four rows, so the widget says why it cannot go on;
        # typing three rows brings the numbers back
        root.get_by_label("arriving", exact=True).select_option(label="my own slope")
        expect(page, ROUTES, {"error": "slope: expected the block's shape (3, 2), got (4, 2)",
                              "#text": "Cannot compute"})
        slope = np.array([[1.0, -2.0], [0.5, 0.0], [-1.0, 3.0]])
        root.get_by_label("my slope", exact=True).fill("1, -2\n0.5, 0\n-1, 3")
        got = expect(page, ROUTES, routes_answer(mine, slope), atol=1e-15)
        assert "error" not in got


# ------------------------------------------------------------------------------ chapter 4
AXES = ".normcore-axes"


def axes_answer(layer: Any, x: np.ndarray, stats_shape: tuple[int, ...], count: int,
                per_statistic: Callable[[np.ndarray], np.ndarray]) -> dict[str, Any]:
    """`layer`'s output on `x` and its passed-down block under d = 1, 2, 3, ... / size.

    `stats_shape` and `count` are what the chapter says of the normaliser; `per_statistic` sums
    a block over each statistic's cells (the passed-down block's sums must be zero)."""
    d = counting_slope(x.shape) / x.size
    response = layer.forward(x, "training")
    true = layer.backward(response, d).passed_down
    fd = oracle(lambda b: float(np.sum(d * layer.forward(b, "training").output)), x)
    assert np.max(np.abs(true - fd)) < 1e-6
    sums = per_statistic(true)
    assert sums.shape == stats_shape and np.max(np.abs(sums)) < 1e-12
    return {
        **keyed("output", response.output if x.ndim == 2 else response.output[0, 0]),
        "statistics-shape": ",".join(map(str, stats_shape)), "count": count,
        "true-gap": np.max(np.abs(true - fd)), "largest-true": np.max(np.abs(true)),
        "largest-sum": np.max(np.abs(sums)), "centred": "true",
    }


def test_chapter4_axes_live(browser: Any, lab: Lab, clock: dict[str, float]) -> None:
    with chapter(browser, lab, "04-rows-columns.ipynb") as page:
        clock["ran"] = time.monotonic()
        root = page.locator(AXES)
        x = THREE_FEATURE_BLOCK.copy()
        expect(page, AXES, {"axis": "layer", **axes_answer(
            nc.LayerNorm.create(3), x, (4,), 3, lambda t: t.sum(axis=1))}, atol=1e-15)

        # 1. batch norm on the same block: one figure per feature, four values each
        root.get_by_label("normaliser", exact=True).select_option(label="batch norm")
        expect(page, AXES, {"axis": "batch", **axes_answer(
            nc.BatchNorm.create(3), x, (3,), 4, lambda t: t.sum(axis=0))}, atol=1e-15)

        # 2. the image batch, still batch norm: one figure per channel over (N, H, W)
        root.get_by_label("data", exact=True).select_option(label="2 images, 4 channels, 3 x 3")
        images = image_batch((2, 4, 3, 3))
        expect(page, AXES, {"axis": "batch", **axes_answer(
            nc.ImageBatchNorm.create(4), images, (4,), 18, lambda t: t.sum(axis=(0, 2, 3)))},
            atol=1e-15)

        # 3. group norm with 2 groups, then 3 groups (which do not divide 4 channels), then 4
        root.get_by_label("normaliser", exact=True).select_option(label="group norm")
        expect(page, AXES, {"axis": "group", **axes_answer(  # channels 1-2 and 3-4
            nc.GroupNorm.create(4, 2), images, (2, 2), 18,
            lambda t: t.reshape(2, 2, -1).sum(axis=-1))}, atol=1e-15)
        groups = root.get_by_label("groups", exact=True)
        groups.fill("3")
        groups.press("Enter")
        got = expect(page, AXES, {"#text": "Cannot compute"})
        assert "divides the 4 channels" in got["error"]
        groups.fill("4")
        groups.press("Enter")
        expect(page, AXES, {"axis": "group", **axes_answer(  # one channel each
            nc.GroupNorm.create(4, 4), images, (2, 4), 9, lambda t: t.sum(axis=(2, 3)))},
            atol=1e-15)


# ------------------------------------------------------------------------------ chapter 5
WEIGHTNORM = ".normcore-weightnorm"


def step_answer(lengths: tuple[float, float, float], stride: float) -> dict[str, Any]:
    step = weightnorm.one_step(weightnorm.make_case(lengths), stride)
    return {
        **keyed("before", step.length_before), **keyed("weightnorm", step.length_weightnorm),
        **keyed("dense", step.length_dense), "distance": step.distance,
        "lengths": list(lengths), "stride": stride,
    }


def test_chapter5_weightnorm_live(browser: Any, lab: Lab, clock: dict[str, float]) -> None:
    with chapter(browser, lab, "05-weight-norm.ipynb") as page:
        clock["ran"] = time.monotonic()
        root = page.locator(WEIGHTNORM)
        expect(page, WEIGHTNORM, step_answer(weightnorm.LENGTHS, weightnorm.STRIDE))

        # 1. the first neuron's direction twice as long
        root.get_by_label("length 1", exact=True).fill("2")
        expect(page, WEIGHTNORM, step_answer((2.0, 2.5, 0.5), weightnorm.STRIDE))

        # 2. a stride five times as long: the two layers part further
        root.get_by_label("stride", exact=True).fill("0.5")
        got = expect(page, WEIGHTNORM, step_answer((2.0, 2.5, 0.5), 0.5))
        assert float(got["distance"]) > step_answer((2.0, 2.5, 0.5), 0.1)["distance"]

        # 3. not a number: the widget says so; a zero length: normcore refuses, inside the widget
        root.get_by_label("length 3", exact=True).fill("half")
        expect(page, WEIGHTNORM, {"error": "not a number", "#text": "Please type plain numbers"})
        root.get_by_label("length 3", exact=True).fill("0")
        with pytest.raises(nc.NormcoreError) as refused:
            weightnorm.make_case((2.0, 2.5, 0.0))
        expect(page, WEIGHTNORM, {"error": str(refused.value), "#text": "Cannot take that step"})


# ------------------------------------------------------------------------------ chapter 6
COMPARISON = ".normcore-comparison"


def comparison_answer(arrangements: list[str], seeds: list[int], stride: float
                      ) -> dict[str, Any]:
    scores = comparison.compare(arrangements, seeds, comparison.EPOCHS, stride)
    want: dict[str, Any] = {"arrangements": ",".join(arrangements),
                            "seeds": [float(s) for s in seeds], "stride": stride}
    for name, s in scores.items():
        want |= {f"{name}:train_accuracy": s.train_accuracy.mean(),
                 f"{name}:held_accuracy": s.held_accuracy.mean(),
                 f"{name}:held_min": s.held_accuracy.min(),
                 f"{name}:held_max": s.held_accuracy.max(),
                 f"{name}:train_loss": s.train_loss.mean(),
                 f"{name}:held_loss": s.held_loss.mean()}
    return want


def test_chapter6_comparison_live(browser: Any, lab: Lab, clock: dict[str, float]) -> None:
    with chapter(browser, lab, "06-comparison.ipynb") as page:
        clock["ran"] = time.monotonic()
        root = page.locator(COMPARISON)
        expect(page, COMPARISON, comparison_answer(["none", "batch"], [0, 1], comparison.RATE))

        # 1. one other seed and five times the stride, then run
        root.get_by_label("seeds", exact=True).fill("2")
        root.get_by_label("stride", exact=True).fill("5")
        root.get_by_role("button", name="run", exact=True).click()
        expect(page, COMPARISON, comparison_answer(["none", "batch"], [2], 5.0))

        # 2. two other arrangements at that stride: the RMS network's values grow until
        # normcore refuses them, and the widget says so instead of a table
        root.get_by_label("arrangements", exact=True).select_option(["layer", "rms"])
        root.get_by_role("button", name="run", exact=True).click()
        with pytest.raises(nc.NormcoreError) as refused:
            comparison.compare(["layer", "rms"], [2], comparison.EPOCHS, 5.0)
        expect(page, COMPARISON, {"error": str(refused.value), "#text": "Cannot run that"})

        # 3. a tenth of that stride: both train
        root.get_by_label("stride", exact=True).fill("0.5")
        root.get_by_role("button", name="run", exact=True).click()
        got = expect(page, COMPARISON, comparison_answer(["layer", "rms"], [2], 0.5))
        assert "none:held_loss" not in got and "error" not in got


# ------------------------------------------------------------------------------ chapter 7
RATES = ".normcore-rates"


def rates_answer(rate: float, normalised: bool) -> dict[str, Any]:
    seed = R.RUN_SEEDS[0]
    run = R.train(seed, rate, normalised)
    want: dict[str, Any] = {"rate": rate, "normalised": "true" if normalised else "false",
                            "seed": seed}
    if run.refused:
        epoch, batch = run.refused_at
        return want | {"refused-epoch": epoch + 1, "refused-batch": batch + 1}
    test = load_subscribers()
    want |= {"loss": run.loss, "dead-units": R.dead_units(run.net),
             "accuracy": R.accuracy(R.predict(run.net, test.x_test), test.y_test)}
    if normalised:
        ways = R.three_ways(run.net)
        want |= {"batch-accuracy": ways.accuracy("batch"),
                 "shuffled-accuracy": ways.accuracy("shuffled"),
                 "changed-by-order": ways.changed_by_order}
    return want


def test_chapter7_rates_live(browser: Any, lab: Lab, clock: dict[str, float]) -> None:
    with chapter(browser, lab, "07-rates-and-leaks.ipynb") as page:
        clock["ran"] = time.monotonic()
        root = page.locator(RATES)
        expect(page, RATES, rates_answer(20.0, True))
        train = root.get_by_role("button", name="train", exact=True)

        # 1. without the batch layer, slider untouched: it shows 20, so it must train at 20
        # (the browser snaps 20 to the slider's grid, 10^1.3 = 19.95, and sends that back).
        # The plain network's values grow until normcore refuses them; the readout says where.
        root.get_by_label("batch layer", exact=True).uncheck()
        train.click()
        want = rates_answer(20.0, False)
        assert "refused-epoch" in want
        expect(page, RATES, want)

        # 2. one notch (0.05 in log10) down the slider with the keyboard, batch layer back on;
        # the network trains at the rate the slider sent, which the readout states in full
        root.locator(".noUi-handle").first.press("ArrowLeft")
        root.get_by_label("batch layer", exact=True).check()
        train.click()
        got = expect(page, RATES, {"rate": 10.0**1.25, "normalised": "true"}, rtol=1e-9)
        expect(page, RATES, rates_answer(float(got["rate"]), True))
