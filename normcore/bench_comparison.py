"""How long chapter 6's 130 runs take, stacked and one network at a time.

    python -m normcore.bench_comparison

`bench_comparison()` times `comparison.run_all` (the 125 fold runs as five stacks of 25, plus the
five whole-crowd curves) against a plain loop that trains the same 130 networks one at a time
with the same layers, and returns the medians of several repeats and their ratio. Timings are
never shown in the book (they change from run to run); this module is for the benchmark only.
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
    for arrangement in network.ARRANGEMENTS:
        comparison.compare_one_at_a_time(arrangement)
    comparison.curves()


def bench_comparison(repeats: int = 5, slow_repeats: int = 2, show: bool = True) -> dict:
    """Median seconds for the 130 runs stacked (one process and, where it can fork, two) and one
    at a time, and the ratios. Prints them when `show`."""
    comparison.run_all(processes=1)  # warm caches (crowd file, imports) before timing
    stacked_one = _median_seconds(lambda: comparison.run_all(processes=1), repeats)
    stacked_two = _median_seconds(lambda: comparison.run_all(processes=2), repeats)
    single = _median_seconds(one_at_a_time, slow_repeats)
    best = min(stacked_one, stacked_two)
    result = {
        "runs": 130,
        "stacked_seconds": best,
        "stacked_one_process_seconds": stacked_one,
        "stacked_two_processes_seconds": stacked_two,
        "one_at_a_time_seconds": single,
        "ratio": single / best,
        "ratio_one_process": single / stacked_one,
    }
    if show:
        print(
            f"130 runs stacked: {stacked_one:.3f} s in one process, {stacked_two:.3f} s in two; "
            f"one at a time: {single:.3f} s; ratio {result['ratio']:.1f}x "
            f"({result['ratio_one_process']:.1f}x in one process)"
        )
    return result


if __name__ == "__main__":
    bench_comparison()
