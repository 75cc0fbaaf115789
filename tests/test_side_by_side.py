"""`side_by_side` gives the loop's results, in order, to the last bit, whether it forks or not."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest

from normcore import BatchNorm
from normcore.errors import SettingError, ShapeError
from normcore.experiments import digits_rates, side_by_side, smallbatch

WORK = side_by_side.side_by_side


@pytest.fixture
def two_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    """Use workers as on the book's 2-core machine, whatever this machine has (Linux only)."""
    if not side_by_side.sys.platform.startswith("linux"):
        pytest.fail("these tests use worker processes: they run on Linux, where the book's CI runs")
    monkeypatch.setattr(side_by_side, "available_cpus", lambda: 2)
    monkeypatch.delenv(side_by_side.WORKERS_VARIABLE, raising=False)


@pytest.fixture
def one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(side_by_side.WORKERS_VARIABLE, "1")


def _square_meeting(item: tuple[int, str]) -> tuple[int, int]:
    """i * i and this process's id; items 0 and 1 wait for each other (a file each in `where`),
    so they must be in two processes at once."""
    i, where = item
    if i < 2:
        Path(where, str(i)).touch()
        deadline = time.monotonic() + 30
        while not Path(where, str(1 - i)).exists():
            assert time.monotonic() < deadline, "the other worker never came"
            time.sleep(0.005)
    return i * i, os.getpid()


def test_items_are_worked_in_two_processes_and_come_back_in_order(
    two_cpus: None, tmp_path: Path
) -> None:
    got = WORK(_square_meeting, [(i, str(tmp_path)) for i in range(7)])
    assert [v for v, _ in got] == [i * i for i in range(7)]
    pids = {pid for _, pid in got}
    assert len(pids) == 2 and os.getpid() not in pids


def _process_and_threads(_: object) -> tuple[int, list[int]]:
    """This process's id and the thread count of every BLAS library it has loaded."""
    from threadpoolctl import threadpool_info

    return os.getpid(), [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]


def test_the_calling_process_never_forks(two_cpus: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """A notebook kernel holds ZMQ and BLAS threads: the workers come from the fork server, with
    one BLAS thread each, and this process's environment is left as it was."""

    def no_fork() -> int:
        raise AssertionError("side_by_side must not fork the calling process")

    before = os.environ.get("OPENBLAS_NUM_THREADS")
    monkeypatch.setattr(os, "fork", no_fork)
    side_by_side.prepare()
    got = WORK(_process_and_threads, [0, 1, 2])
    assert all(pid != os.getpid() and threads == [1] for pid, threads in got)
    assert os.environ.get("OPENBLAS_NUM_THREADS") == before


def test_one_worker_runs_here(one_process: None) -> None:
    assert [pid for pid, _ in WORK(_process_and_threads, [1, 2, 3])] == [os.getpid()] * 3
    assert side_by_side.workers_for(4) == 1


def test_workers_never_exceed_the_items_or_the_setting(
    two_cpus: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert side_by_side.workers_for(1) == 1
    assert side_by_side.workers_for(5) == 2
    monkeypatch.setattr(side_by_side, "available_cpus", lambda: 16)
    monkeypatch.setenv(side_by_side.WORKERS_VARIABLE, "3")
    assert side_by_side.workers_for(5) == 3


@pytest.mark.parametrize("setting", ["0", "two", "-1", "1.5"])
def test_a_bad_setting_is_refused(monkeypatch: pytest.MonkeyPatch, setting: str) -> None:
    monkeypatch.setenv(side_by_side.WORKERS_VARIABLE, setting)
    with pytest.raises(SettingError, match=side_by_side.WORKERS_VARIABLE):
        WORK(abs, [1, 2])


@pytest.mark.parametrize("work, items", [(3, [1]), (abs, "12"), (abs, iter([1, 2])), (abs, 5)])
def test_bad_arguments_are_refused(work: object, items: object) -> None:
    with pytest.raises(SettingError):
        WORK(work, items)  # type: ignore[arg-type]


def _refuses(i: int) -> int:
    if i == 2:
        raise ShapeError("x: expected something else")
    return i


def test_an_error_in_a_worker_is_raised_here_with_its_type(two_cpus: None) -> None:
    with pytest.raises(ShapeError, match="something else"):
        WORK(_refuses, [0, 1, 2, 3])


def _nested(i: int) -> list[tuple[int, list[int]]]:
    return WORK(_process_and_threads, [i, i + 1])


def test_a_worker_works_its_own_items_in_turn(two_cpus: None) -> None:
    """Inside a worker there is no second level of processes (a pool's workers may not have
    children)."""
    for (pid_a, _), (pid_b, _) in WORK(_nested, [0, 10]):
        assert pid_a == pid_b != os.getpid()


def _batch_layer(features: int) -> BatchNorm:
    return BatchNorm.create(features)


def test_layers_come_back_read_only(two_cpus: None) -> None:
    layers = WORK(_batch_layer, [2, 3])
    assert [layer.scale.shape for layer in layers] == [(2,), (3,)]
    for layer in layers:
        for a in (layer.scale, layer.shift, layer.running_mean, layer.running_variance):
            assert not a.flags.writeable


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, ...]:
    return digits_rates.digits_data()


def test_group_sizes_side_by_side_are_the_loop_to_the_last_bit(
    data: tuple[np.ndarray, ...], monkeypatch: pytest.MonkeyPatch, two_cpus: None
) -> None:
    forked = smallbatch.by_group_size(data, 0.3, seeds=(0, 1), sizes=(2, 8, 32))
    monkeypatch.setenv(side_by_side.WORKERS_VARIABLE, "1")
    here = smallbatch.by_group_size(data, 0.3, seeds=(0, 1), sizes=(2, 8, 32))
    assert forked.shape == (3, 2) and np.array_equal(forked, here)


def test_the_sweep_side_by_side_is_the_loop_to_the_last_bit(
    data: tuple[np.ndarray, ...], two_cpus: None
) -> None:
    forked = digits_rates.sweep_all(data)
    assert list(forked) == ["plain", "batch", "layer", "rms"]
    for version, got in forked.items():
        alone = digits_rates.sweep(version, data)
        assert got.version == version
        assert np.array_equal(got.accuracy, alone.accuracy)
        assert np.array_equal(got.diverged, alone.diverged)
        for a, b in zip(got.net.dense, alone.net.dense, strict=True):
            assert np.array_equal(a.weights, b.weights) and np.array_equal(a.bias, b.bias)
            assert not a.weights.flags.writeable
        for a, b in zip(got.net.norms, alone.net.norms, strict=True):
            if a is not None:
                assert np.array_equal(a.scale, b.scale) and np.array_equal(a.shift, b.shift)
