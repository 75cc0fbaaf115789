"""How fast normcore's layers run, side by side with the same arithmetic in bare numpy and with
PyTorch: ``python -m normcore.bench``.

Four measurements in one process:

1. one training step of a normaliser (forward in training mode, backward, and a step of
   plain gradient descent, the running statistics updated for batch norm and the divisor
   evaluation mode divides by worked out from them) on float64 blocks of
   4 x 2, 20 x 16, 64 x 64 and 256 x 128 values, for batch, layer, RMS and group norm (group
   norm reads a mini-batch (rows, features) as images (rows, features, 1, 1) in two groups), three
   ways: normcore's layers; the same arithmetic written in bare numpy, cs231n-style (the floor:
   what the arithmetic costs with no checks and no values); and PyTorch's ``BatchNorm1d``,
   ``LayerNorm``, ``RMSNorm`` and ``GroupNorm`` with ``torch.optim.SGD``, where torch is
   installed. One thread each (BLAS and torch), timed as this thread's CPU time. Each round times
   the three ways one after the other, so that a busy spell on the machine falls on all three;
   the figures are medians over rounds, the ratios medians of the rounds' ratios. The last
   column counts the calls of normcore's own functions that one step makes;
2. the 130-run comparison, runs along a leading axis and one run at a time
(``normcore.bench_comparison``);
3. the playground's update after one change of a cell (``normcore.widgets.playground``);
4. the time of Run All for every chapter, kernel start excluded, as wall time and as the
   kernel's CPU time (``--no-chapters`` skips it; ``--chapters-only`` runs only it)
(the claims suite module by module, against its budget, is ``python tools/bench_claims.py``).

``--quick`` runs few rounds on the two smallest mini-batches and skips the rest (a smoke run for the
tests). Machines are noisy: these figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import itertools
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .batch import BatchNorm
from .image import GroupNorm
from .layer import LayerNorm, RMSNorm

ROOT = Path(__file__).resolve().parent.parent

#: the blocks (rows, features) of the layer table
SIZES = ((4, 2), (20, 16), (64, 64), (256, 128))
#: the normalisers of the layer table
KINDS = ("batch", "layer", "RMS", "group")
#: group norm's groups (every block of the table has an even number of features)
GROUPS = 2
EPSILON, MOMENTUM, RATE = 1e-5, 0.9, 0.1
#: untimed runs of each way before each round times it (`_warm_per_call_us`)
WARM_RUNS = 5

Step = Callable[[], Any]

#: the ratios of the layer table (the first over the second)
RATIOS = (("normcore", "numpy"), ("torch", "numpy"), ("normcore", "torch"))


def median_ms(call: Callable[[], Any], repeats: int) -> float:
    """The median wall time of `call` over `repeats` runs (after one warm-up run), in ms."""
    call()
    return float(np.median([once_ms(call) for _ in range(repeats)]))


def once_ms(call: Callable[[], Any]) -> float:
    """The wall time of one run of `call`, in ms."""
    start = time.perf_counter()
    call()
    return 1e3 * (time.perf_counter() - start)


def _blocks(rows: int, features: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The mini-batch, the upstream gradient at the output, and a trained-looking scale and
    shift."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((rows, features))
    d = rng.standard_normal((rows, features))
    # scale and shift away from 1 and 0, as after training: no shortcut for a fresh layer
    return x, d, 1.0 + 0.1 * rng.standard_normal(features), 0.1 * rng.standard_normal(features)


def normcore_layer(kind: str, rows: int, features: int) -> tuple[Any, np.ndarray, np.ndarray]:
    """normcore's `kind` layer (trained-looking scale and shift), its mini-batch and upstream
    gradient."""
    x, d, scale, shift = _blocks(rows, features)
    if kind == "group":
        layer: Any = GroupNorm(scale=scale, shift=shift, eps=EPSILON, groups=GROUPS)
        return layer, x[:, :, None, None], d[:, :, None, None]
    if kind == "batch":
        return BatchNorm(scale=scale, shift=shift, eps=EPSILON, momentum=MOMENTUM), x, d
    kinds = {"layer": LayerNorm, "RMS": RMSNorm}
    return kinds[kind](scale=scale, shift=shift, eps=EPSILON), x, d


def normcore_step(kind: str, rows: int, features: int) -> Step:
    """One training step of normcore's `kind` layer: forward (training), backward, step, as a
    training loop runs it: each step starts from the layer the last one made (a new layer, which
    has not yet lined its parameters up with a mini-batch). The upstream gradient changes sign from
    step
    to step, so that the parameters swing back and forth instead of drifting over the run."""
    layer, x, d = normcore_layer(kind, rows, features)
    grads = itertools.cycle((d, -d))

    def step() -> Any:
        nonlocal layer
        response = layer.forward(x, "train")
        layer = layer.step(layer.backward(response, next(grads)), RATE)
        return layer

    return step


def numpy_step(kind: str, rows: int, features: int) -> Step:
    """The same step as `normcore_step`, written in bare numpy: no checks, no values."""
    x, d, scale, shift = _blocks(rows, features)
    running_mean, running_var = np.zeros(features), np.ones(features)
    if kind == "group":  # the statistics run over each group of features
        view: tuple[int, ...] = (rows, GROUPS, features // GROUPS)
    else:
        view = (rows, features)
    axis = {"batch": 0, "layer": 1, "RMS": 1, "group": 2}[kind]
    centre = kind != "RMS"
    x, d = x.reshape(view), d.reshape(view)
    scale, shift = scale.reshape((1, *view[1:])), shift.reshape((1, *view[1:]))

    def step() -> Any:
        n = x.shape[axis]
        mean = x.mean(axis=axis, keepdims=True) if centre else None
        centred = x - mean if centre else x
        variance = np.mean(centred * centred, axis=axis, keepdims=True)
        divisor = np.sqrt(variance + EPSILON)
        z = centred / divisor
        out = z * scale + shift
        d_scale = np.sum(d * z, axis=0)
        d_shift = np.sum(d, axis=0)
        dz = d * scale
        total = n * dz - z * np.sum(dz * z, axis=axis, keepdims=True)
        if centre:
            total = total - np.sum(dz, axis=axis, keepdims=True)
        passed = total / (n * divisor)
        new = (scale - RATE * d_scale, shift - RATE * d_shift)
        if kind == "batch":  # the running statistics, and the deviation predicting divides by
            new_variance = MOMENTUM * running_var + (1 - MOMENTUM) * variance[0]
            new += (
                MOMENTUM * running_mean + (1 - MOMENTUM) * mean[0],
                new_variance,
                np.sqrt(new_variance + EPSILON),
            )
        return out, passed, new

    return step


def torch_step(kind: str, rows: int, features: int) -> Step | None:
    """The same step in PyTorch (float64, plain SGD), or None where torch is not installed."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    x, d, scale, shift = (torch.from_numpy(a) for a in _blocks(rows, features))
    if kind == "batch":
        module: Any = torch.nn.BatchNorm1d(features, eps=EPSILON, momentum=1 - MOMENTUM)
    elif kind == "layer":
        module = torch.nn.LayerNorm(features, eps=EPSILON)
    elif kind == "RMS":
        module = torch.nn.RMSNorm(features, eps=EPSILON)  # a scale, no shift
    else:
        module = torch.nn.GroupNorm(GROUPS, features, eps=EPSILON)
        x, d = x[:, :, None, None], d[:, :, None, None]
    module = module.double().train()
    with torch.no_grad():
        module.weight.copy_(scale)
        if getattr(module, "bias", None) is not None:
            module.bias.copy_(shift)
    optimiser = torch.optim.SGD(module.parameters(), lr=RATE)
    x = x.clone().requires_grad_(True)

    def step() -> Any:
        optimiser.zero_grad(set_to_none=False)
        x.grad = None
        module(x).backward(d)
        optimiser.step()
        return x.grad

    return step


def normcore_calls(call: Step) -> int:
    """How many calls of normcore's own functions one run of `call` makes."""
    calls = 0
    root = str(Path(__file__).resolve().parent)

    def count(frame: Any, event: str, arg: Any) -> None:
        nonlocal calls
        if event == "call" and frame.f_code.co_filename.startswith(root):
            calls += 1

    call()
    sys.setprofile(count)
    try:
        call()
    finally:
        sys.setprofile(None)
    return calls - 1  # the step function itself, defined here


@contextlib.contextmanager
def _one_blas_thread() -> Iterator[None]:
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def _per_call_us(call: Step, number: int) -> float:
    """The CPU time of this thread per run of `call`, in µs, over `number` runs (CPU time, not
    wall time: a spell in which the machine runs other work is not counted)."""
    start = time.thread_time()
    for _ in range(number):
        call()
    return 1e6 * (time.thread_time() - start) / number


def _warm_per_call_us(call: Step, number: int) -> float:
    """`_per_call_us` after a few untimed runs of `call`: the timed runs find the processor's
    caches and branch predictors holding this way's code, as they do in a training loop, and not
    the way timed just before it (after a PyTorch step, normcore's first runs are measured to
    cost about a tenth more than its later ones)."""
    for _ in range(WARM_RUNS):
        call()
    return _per_call_us(call, number)


def step_rows(
    sizes: Sequence[tuple[int, int]] = SIZES, kinds: Sequence[str] = KINDS, rounds: int = 15
) -> list[dict[str, Any]]:
    """The layer table: for each kind and mini-batch shape, the median µs of one step three ways,
    the
    medians of the rounds' ratios, and normcore's call count."""
    out = []
    with _one_blas_thread():
        for kind in kinds:
            for rows, features in sizes:
                ways = {
                    "normcore": normcore_step(kind, rows, features),
                    "numpy": numpy_step(kind, rows, features),
                }
                torch = torch_step(kind, rows, features)
                if torch is not None:
                    ways["torch"] = torch
                for call in ways.values():  # warm up, and size the inner loop to about 2 ms
                    call()
                first = min(_per_call_us(call, 3) for call in ways.values())
                number = max(1, int(1000 / max(first, 1.0)))
                times = [
                    {name: _warm_per_call_us(call, number) for name, call in ways.items()}
                    for _ in range(rounds)
                ]
                row: dict[str, Any] = {"kind": kind, "block": f"{rows}x{features}"}
                for name in ways:
                    row[name] = float(np.median([t[name] for t in times]))
                for top, bottom in RATIOS:
                    if top in ways and bottom in ways:
                        ratios = [t[top] / t[bottom] for t in times]
                        row[f"{top}/{bottom}"] = float(np.median(ratios))
                row["calls"] = normcore_calls(ways["normcore"])
                out.append(row)
    return out


def print_step_table(rows: list[dict[str, Any]]) -> None:
    """Print `step_rows`' table."""
    print(
        "One training step (forward, backward, gradient-descent step), float64, one thread: "
        "median µs per step, and ratios (medians over rounds timed side by side)"
    )
    header = (
        f"{'layer':6} {'batch':8} {'normcore':>9} {'numpy':>8} {'torch':>8}  "
        f"{'normcore/numpy':>14} {'torch/numpy':>11} {'normcore/torch':>14} {'calls':>6}"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        torch = f"{r['torch']:8.1f}" if "torch" in r else f"{'-':>8}"
        versus = (
            f"{r['torch/numpy']:11.2f} {r['normcore/torch']:14.2f}"
            if "torch" in r
            else f"{'-':>11} {'-':>14}"
        )
        print(
            f"{r['kind']:6} {r['block']:8} {r['normcore']:9.1f} {r['numpy']:8.1f} {torch}  "
            f"{r['normcore/numpy']:14.2f} {versus} {r['calls']:6d}"
        )
    print(
        "numpy: the same arithmetic in bare numpy (no checks, no values). torch: PyTorch's "
        "BatchNorm1d, LayerNorm, RMSNorm (a scale, no shift) and GroupNorm with SGD. calls: "
        "calls of normcore's own functions in one step."
    )


def comparison() -> None:
    """The 130-run comparison, runs along a leading axis and one at a time
    (``normcore.bench_comparison``)."""
    from .bench_comparison import bench_comparison

    print("\nThe 130-run comparison")
    result = bench_comparison()
    if isinstance(result, dict):
        for key, value in result.items():
            print(f"  {key}: {value:.4g}" if isinstance(value, float) else f"  {key}: {value}")
        stacked = result.get("stacked_s", result.get("stacked"))
        single = result.get("one_at_a_time_s", result.get("one_at_a_time"))
        if isinstance(stacked, float) and isinstance(single, float) and stacked > 0:
            print(f"  one-at-a-time / together: {single / stacked:.1f}x")
    elif result is not None:
        print(f"  {result}")


def playground(repeats: int) -> None:
    """The playground's response to one change, in ms, if normcore.widgets.playground exists."""
    print("\nThe playground's update after one change")
    try:
        module = importlib.import_module("normcore.widgets.playground")
    except ImportError as exc:
        print(f"  not available ({exc})")
        return
    probe = getattr(module, "bench_one_change", None)
    if probe is not None:
        ms = float(probe(repeats))
    else:
        ms = _time_playground(module, repeats)
    if ms is None:
        print("  not available (no API to change a cell found)")
        return
    verdict = "under" if ms < 50 else "OVER"
    print(f"  one cell changed -> readout updated: {ms:.2f} ms ({verdict} the 50 ms budget)")


def _time_playground(module: Any, repeats: int) -> float | None:
    """Time a cell change through the playground's exposed API (set_cell, readout)."""
    build = getattr(module, "Playground", None) or getattr(module, "playground", None)
    if build is None:
        return None
    pg = build()
    setter = getattr(pg, "set_cell", None)
    if setter is None:
        return None
    values = iter(np.linspace(1.0, 9.0, 2 * repeats + 4))
    return median_ms(lambda: setter(0, 0, f"{next(values):.3f}"), repeats)


def run_all_cells(notebook: Path) -> dict[str, float]:
    """Run every cell of `notebook` in a fresh kernel started in book/ (as JupyterLab's Run All
    would) and time it, kernel start excluded: `wall` from the first cell's start to the last
    cell's end, `cpu` the CPU time of the kernel process and of every process under it over the
    same span (steadier than wall time on a shared machine: time the machine spends on other work
    is not counted)."""
    import nbformat
    import psutil
    from nbclient import NotebookClient

    nb = nbformat.read(notebook, as_version=4)
    client = NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(notebook.parent)}},
    )
    with client.setup_kernel():
        kernel = psutil.Process(client.km.provisioner.process.pid)
        before = _cpu_seconds(kernel)
        start = time.perf_counter()
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)
        wall = time.perf_counter() - start
        after = _cpu_seconds(kernel)
    return {"wall": wall, "cpu": after - before}


def _cpu_seconds(kernel: Any) -> float:
    """CPU seconds of the psutil process `kernel` and every process under it, each with the
    finished children it has reaped."""
    import psutil

    total = 0.0
    for process in (kernel, *kernel.children(recursive=True)):
        try:
            t = process.cpu_times()
        except psutil.NoSuchProcess:  # ended between the listing and the reading
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total


def chapters() -> None:
    """Time Run All of every chapter (kernel start excluded), one fresh kernel each."""
    print("\nRun All of every chapter, kernel start excluded (target: 10 s a chapter)")
    books = sorted((ROOT / "book").glob("[0-9][0-9]-*.ipynb"))
    if not books:
        print("  no chapters found")
        return
    total = {"wall": 0.0, "cpu": 0.0}
    print(f"  {'chapter':32} {'wall s':>7} {'kernel cpu s':>13}")
    for nb in books:
        times = run_all_cells(nb)
        for key in total:
            total[key] += times[key]
        print(f"  {nb.stem:32} {times['wall']:7.2f} {times['cpu']:13.2f}")
    print(f"  {'all chapters':32} {total['wall']:7.2f} {total['cpu']:13.2f}")


def main(argv: Sequence[str] | None = None) -> int:
    """Print the benchmark's figures. Returns 0."""
    parser = argparse.ArgumentParser(prog="python -m normcore.bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="two small mini-batches, few rounds")
    parser.add_argument("--no-chapters", action="store_true", help="skip timing the chapters")
    parser.add_argument("--rounds", type=int, default=None, help="rounds per median")
    parser.add_argument("--chapters-only", action="store_true", help="only time the chapters")
    args = parser.parse_args(argv)
    if args.chapters_only:
        chapters()
        return 0
    sizes = SIZES[:2] if args.quick else SIZES
    rounds = args.rounds or (3 if args.quick else 41)
    print_step_table(step_rows(sizes, KINDS, rounds))
    if not args.quick:
        comparison()
    playground(3 if args.quick else 15)
    if not (args.quick or args.no_chapters):
        chapters()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
