"""Independent experiments run side by side, one process per CPU, with the same results.

`side_by_side(work, items)` is ``[work(item) for item in items]``. On Linux, with more than one
CPU available to this process and more than one item, the items are worked in forked processes
(one per CPU, at most one per item), and each result comes back by pickle. Every result is the
one the loop would give, to the last bit: a forked process runs the same code on the same
libraries, with the same BLAS thread setting (inherited), and normcore's layers come back through
their constructors, read-only (`normcore._checks.Remade`). The tests hold the two ways equal.

Elsewhere (macOS and Windows, where forking a process that has loaded numpy is unsafe or
impossible, one CPU, or inside a worker) the loop runs here, in order. The environment variable
``NORMCORE_WORKERS`` caps the number of processes; ``NORMCORE_WORKERS=1`` always runs the loop
here.

Why: a chapter's experiments (the four versions of a network, the batch sizes of a sweep) are
independent, and on the book's 2-core machine running them two at a time is what keeps a
chapter's Run All within its time budget. Threads would not: the layers' arithmetic is many small
numpy calls, and Python runs one thread's calls at a time.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
import warnings
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ..errors import SettingError

T = TypeVar("T")
R = TypeVar("R")

#: the environment variable that caps the number of processes (1: run in this process)
WORKERS_VARIABLE = "NORMCORE_WORKERS"

# What a forked worker reads: the work and its items, inherited from the parent at the fork, so
# neither is pickled (a lambda will do); only the index goes out and the result comes back.
_JOB: tuple[Callable[[Any], Any], Sequence[Any]] | None = None
_JOB_LOCK = threading.Lock()
_IN_WORKER = False


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity where the system says, else all)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def workers_for(count: int) -> int:
    """How many processes `side_by_side` uses for `count` items: 1 (this process) unless
    forking is safe here (Linux), and never more than the CPUs, the items or
    ``NORMCORE_WORKERS``."""
    limit = available_cpus()
    setting = os.environ.get(WORKERS_VARIABLE, "").strip()
    if setting:
        if not setting.isdecimal() or int(setting) < 1:
            raise SettingError(f"{WORKERS_VARIABLE}: expected a whole number >= 1, got {setting!r}")
        limit = min(limit, int(setting))
    if _IN_WORKER or not sys.platform.startswith("linux"):
        return 1
    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return max(1, min(limit, count))


def _work_one(index: int) -> Any:
    assert _JOB is not None  # set by side_by_side before the fork
    work, items = _JOB
    return work(items[index])


def _mark_worker() -> None:
    global _IN_WORKER
    _IN_WORKER = True


def side_by_side(work: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """``[work(item) for item in items]``, the items worked side by side where the machine allows
    (see the module's docstring); results in the items' order.

    `work` must not depend on state that it changes (each process has its own copy of
    everything) and its results must pickle. An error raised by `work` is raised here, with its
    own type.
    """
    global _JOB
    if not callable(work):
        raise SettingError(f"work: expected a function, got {work!r}")
    if not isinstance(items, Sequence) or isinstance(items, (str, bytes)):
        raise SettingError(f"items: expected a sequence (a list or tuple), got {items!r}")
    processes = workers_for(len(items))
    if processes == 1:
        return [work(item) for item in items]
    with _JOB_LOCK:
        _JOB = (work, items)
        try:
            with warnings.catch_warnings():
                # Python 3.12+ warns that forking a process with threads (a Jupyter kernel has
                # some) may deadlock a child that takes a lock one of them held; the workers
                # only compute and answer through the pool's own pipe.
                warnings.filterwarnings("ignore", ".*fork", DeprecationWarning)
                context = multiprocessing.get_context("fork")
                with context.Pool(processes, initializer=_mark_worker) as pool:
                    return pool.map(_work_one, range(len(items)), chunksize=1)
        finally:
            _JOB = None
