"""The benchmark runs and prints what it says it prints (no timings are asserted: machines are
noisy)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from normcore import bench

pytestmark = pytest.mark.numeric  # figures from float arithmetic: make test-arith reruns it


@pytest.mark.slow  # a whole quick bench run (about 10 s)
def test_bench_quick_prints_every_layer_and_block(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["--quick", "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    assert "normcore/numpy" in out
    for kind in bench.KINDS:
        for rows, features in bench.SIZES[:2]:
            assert any(
                line.split()[:2] == [kind, f"{rows}x{features}"] for line in out.splitlines()
            ), (kind, rows, features)


@pytest.mark.parametrize("kind", bench.KINDS)
def test_the_numpy_floor_is_the_layers_arithmetic(kind: str) -> None:
    """The bare-numpy step computes what normcore's layer computes: the output, the slope
    passed down and what the step moves (scale, shift, and for batch norm the running mean,
    variance and deviation) agree (the floor times the same arithmetic, not less)."""
    out, passed, new = bench.numpy_step(kind, 20, 16)()
    layer, x, d = bench.normcore_layer(kind, 20, 16)
    response = layer.forward(x, "training")
    gradient = layer.backward(response, d)
    stepped = layer.step(gradient, bench.RATE)
    np.testing.assert_allclose(out.reshape(x.shape), response.output, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(passed.reshape(x.shape), gradient.passed_down, rtol=1e-9, atol=1e-12)
    names = ["scale", "shift"]
    if kind == "batch":
        names += ["running_mean", "running_variance", "running_deviation"]
    assert len(new) == len(names)
    for name, value in zip(names, new, strict=True):
        want = getattr(stepped, name)
        np.testing.assert_allclose(value.reshape(want.shape), want, rtol=1e-12, atol=1e-12)


def test_run_all_of_a_chapter_is_timed_without_kernel_start() -> None:
    chapter = Path(bench.ROOT) / "book" / "12-reference.ipynb"
    times = bench.run_all_cells(chapter)
    assert set(times) == {"wall", "cpu"} and times["wall"] > 0 and times["cpu"] >= 0
