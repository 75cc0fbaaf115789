"""Independent experiments run side by side, one process per CPU, with the same results.

`side_by_side(work, items)` is ``[work(item) for item in items]``. On Linux, with more than one
CPU available to this process and more than one item, the items are worked in worker processes
(one per CPU, at most one per item), and each result comes back by pickle. Every result is the
one the loop would give, to the last bit: a worker runs the same code on the same libraries,
under the same environment (the BLAS kernel and numpy's SIMD loops are chosen by it), and
normcore's layers come back through their constructors, read-only (`normcore._checks.Remade`).
The tests hold the two ways equal.

The process that calls is never forked: a notebook kernel holds ZMQ and BLAS threads, and a fork
could copy a lock one of them holds. The workers are forked by multiprocessing's fork server
instead, a fresh single-threaded Python started once (by fork and exec, as `subprocess` does),
with numpy and normcore loaded and one BLAS thread (``OPENBLAS_NUM_THREADS=1``: the workers
already use every CPU). `prepare()` starts it ahead of time; otherwise the first call does.

Elsewhere (macOS and Windows, one CPU, or inside a worker) the loop runs here, in order. The
environment variable ``NORMCORE_WORKERS`` caps the number of processes; ``NORMCORE_WORKERS=1``
always runs the loop here.

Why: a chapter's experiments (the four versions of a network, the batch sizes of a sweep) are
independent, and on the book's 2-core machine running them two at a time is what keeps a
chapter's Run All within its time budget. Threads would not: the layers' arithmetic is many small
numpy calls, and Python runs one thread's calls at a time.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.forkserver
import os
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ..errors import SettingError

T = TypeVar("T")
R = TypeVar("R")

#: the environment variable that caps the number of processes (1: run in this process)
WORKERS_VARIABLE = "NORMCORE_WORKERS"

#: what the fork server loads once, so that a worker starts with it loaded: numpy, normcore and
#: the experiments that call `side_by_side`
PRELOAD = (
    "numpy",
    "normcore",
    "normcore.experiments.digits_rates",
    "normcore.experiments.smallbatch",
)
_START_LOCK = threading.Lock()
_STARTED = False
_IN_WORKER = False


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity where the system says, else all)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def workers_for(count: int) -> int:
    """How many processes `side_by_side` uses for `count` items: 1 (this process) off Linux and
    inside a worker, and never more than the CPUs, the items or ``NORMCORE_WORKERS``."""
    limit = available_cpus()
    setting = os.environ.get(WORKERS_VARIABLE, "").strip()
    if setting:
        if not setting.isdecimal() or int(setting) < 1:
            raise SettingError(f"{WORKERS_VARIABLE}: expected a whole number >= 1, got {setting!r}")
        limit = min(limit, int(setting))
    if _IN_WORKER or not sys.platform.startswith("linux"):
        return 1
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return 1
    return max(1, min(limit, count))


def _mark_worker() -> None:
    global _IN_WORKER
    _IN_WORKER = True


def _context() -> Any:
    """The fork server's multiprocessing context, its server started (once) with PRELOAD loaded
    and one BLAS thread."""
    global _STARTED
    context = multiprocessing.get_context("forkserver")
    with _START_LOCK:
        if not _STARTED:
            context.set_forkserver_preload(list(PRELOAD))
            saved = os.environ.get("OPENBLAS_NUM_THREADS")
            os.environ["OPENBLAS_NUM_THREADS"] = "1"  # read by the server as it loads numpy
            try:
                multiprocessing.forkserver.ensure_running()
            finally:
                if saved is None:
                    del os.environ["OPENBLAS_NUM_THREADS"]
                else:
                    os.environ["OPENBLAS_NUM_THREADS"] = saved
            _STARTED = True
    return context


def prepare() -> None:
    """Start the fork server now, where `side_by_side` will use workers, so that it has loaded
    numpy and normcore by the first call (it does so in its own process, while this one goes
    on). Does nothing where the loop runs here."""
    if workers_for(2) > 1:
        _context()


def side_by_side(work: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """``[work(item) for item in items]``, the items worked side by side where the machine allows
    (see the module's docstring); results in the items' order.

    `work` (a function defined at a module's top level, or a `functools.partial` of one), each
    item and each result must pickle; `work` must not depend on state changed in this process
    after it was imported. An error raised by `work` is raised here, with its own type.
    """
    if not callable(work):
        raise SettingError(f"work: expected a function, got {work!r}")
    if not isinstance(items, Sequence) or isinstance(items, (str, bytes)):
        raise SettingError(f"items: expected a sequence (a list or tuple), got {items!r}")
    processes = workers_for(len(items))
    if processes == 1:
        return [work(item) for item in items]
    with _context().Pool(processes, initializer=_mark_worker) as pool:
        return pool.map(work, items, chunksize=1)
