"""How long chapter 6's 130 runs take, as independent runs along a leading axis and one network at
a time.

    python -m normcore.bench_comparison

`bench_comparison()` times `comparison.run_all` (the 125 fold runs as five groups of 25 along a
leading axis, plus the
five whole-crowd curves, in one process) against a plain loop that trains the same 130 networks
one at a time with the same layers, and returns the medians of several repeats and their ratio.
Timings are never shown in the book (they change from run to run); this module is for the
benchmark only.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from .experiments import comparison, network


def _median_seconds(work: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def one_at_a_time() -> None:
    """The 130 runs as a straightforward loop: one network per call to `network.train`."""
    for variant in network.VARIANTS:
        comparison.compare_one_at_a_time(variant)
    comparison.curves()


def bench_comparison(repeats: int = 5, slow_repeats: int = 2, show: bool = True) -> dict:
    """Median seconds for the 130 runs along a leading axis (in one process, as the chapter runs
    them) and one
    at a time, and their ratio. Prints them when `show`."""
    comparison.run_all()  # warm caches (crowd file, imports) before timing
    stacked = _median_seconds(comparison.run_all, repeats)
    single = _median_seconds(one_at_a_time, slow_repeats)
    result = {
        "runs": 130,
        "epochs": comparison.EPOCHS,
        "stacked_seconds": stacked,
        "one_at_a_time_seconds": single,
        "ratio": single / stacked,
    }
    if show:
        print(
            f"130 runs of {comparison.EPOCHS} epochs together: {stacked:.3f} s; one at a time: "
            f"{single:.3f} s; ratio {result['ratio']:.1f}x"
        )
    return result


if __name__ == "__main__":
    bench_comparison()
