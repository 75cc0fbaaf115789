"""The benchmark runs (no timings are asserted: machines are noisy)."""

from __future__ import annotations

import pytest

from normcore import bench


def test_bench_quick_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "float32" in out and "float64" in out and "batch" in out and "layer" in out
    assert "predict" in out and "inst." in out


def test_run_all_of_a_chapter_is_timed_without_kernel_start() -> None:
    from pathlib import Path

    chapter = Path(bench.ROOT) / "book" / "11-reference.ipynb"
    times = bench.run_all_cells(chapter)
    assert set(times) == {"wall", "cpu"} and times["wall"] > 0 and times["cpu"] >= 0
