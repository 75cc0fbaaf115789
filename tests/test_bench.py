"""The benchmark runs (no timings are asserted: machines are noisy)."""

from __future__ import annotations

import pytest

from normcore import bench


def test_bench_quick_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "float32" in out and "float64" in out and "batch" in out and "layer" in out
    assert "predict" in out and "inst." in out
