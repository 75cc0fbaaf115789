"""How fast normcore answers, each figure held against a floor: ``python -m normcore.bench``.

Four measurements, side by side in one process, each the median of several repeats:

1. batch norm and layer norm, forward and backward (training purpose), on a 4096 x 1024 block in
   float32 and float64, against the least memory traffic they need: forward reads x and writes y
   (timed as ``np.copyto`` of one block), backward reads x and the slope and writes the slope
   passed down (timed as a copy of one and a half blocks, the same byte volume). The ratio is the
   layer's time over that floor. The readable `standardise` pair the book shows is timed beside
   the fast kernels the layers use, and batch norm's forward pass by its running figures
   (predicting) against the forward floor; and the same for instance and group norm on
   64 x 16 x 64 x 64 images (as many values as the 4096 x 1024 block);
2. the 130-run comparison, stacked and one run at a time (``normcore.bench_comparison``);
3. the playground's answer to one change of a cell (``normcore.widgets.playground``);
4. the time of Run All for every chapter, kernel start excluded, as wall time and as the
   kernel's CPU time (``--no-chapters`` skips it; ``--chapters-only`` runs only it).

``--quick`` shrinks the block, the repeats and skips the chapters (a smoke run for the tests).
Machines are noisy: these figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .batch import BatchNorm
from .fast.kernels import standardise_backward_fast, standardise_fast
from .image import GroupNorm, InstanceNorm
from .layer import LayerNorm
from .standardise import standardise, standardise_backward

ROOT = Path(__file__).resolve().parent.parent


def median_ms(call: Callable[[], Any], repeats: int) -> float:
    """The median wall time of `call` over `repeats` runs (after one warm-up run), in ms."""
    call()
    return float(np.median([once_ms(call) for _ in range(repeats)]))


def once_ms(call: Callable[[], Any]) -> float:
    """The wall time of one run of `call`, in ms."""
    start = time.perf_counter()
    call()
    return 1e3 * (time.perf_counter() - start)


def layer_rows(rows: int, features: int, repeats: int) -> list[dict[str, Any]]:
    """Forward and backward times of batch and layer norm, and their ratios to the copy floor."""
    out = []
    for dtype in (np.float32, np.float64):
        rng = np.random.default_rng(7)
        x = rng.standard_normal((rows, features)).astype(dtype)
        d = rng.standard_normal((rows, features)).astype(dtype)
        # scale and shift away from 1 and 0, as after training: no shortcut for a fresh layer
        scale = 1.0 + 0.1 * rng.standard_normal(features)
        shift = 0.1 * rng.standard_normal(features)
        for name, layer, axes in (
            ("batch", BatchNorm.create(features), (0,)),
            ("layer", LayerNorm.create(features), (1,)),
        ):
            layer = dataclasses.replace(layer, scale=scale, shift=shift)
            row = _time_layer(layer, axes, x, d, repeats)
            row.update(dtype=np.dtype(dtype).name, layer=name)
            out.append(row)
    return out


def image_rows(shape: tuple[int, int, int, int], repeats: int) -> list[dict[str, Any]]:
    """Instance norm's and group norm's (4 groups) forward and backward on a block of images
    (N, C, H, W), as `layer_rows`: one figure a channel of an image (or a group of channels),
    broadcast over its values. The kernel columns time one statistic an image (axes 1, 2, 3)
    for group norm, whose own statistics run over a view of the block."""
    out = []
    for dtype in (np.float32, np.float64):
        rng = np.random.default_rng(7)
        x = rng.standard_normal(shape).astype(dtype)
        d = rng.standard_normal(shape).astype(dtype)
        channels = shape[1]
        layer = dataclasses.replace(
            InstanceNorm.create(channels),
            scale=1.0 + 0.1 * rng.standard_normal(channels),
            shift=0.1 * rng.standard_normal(channels),
        )
        row = _time_layer(layer, (2, 3), x, d, repeats)
        row.update(dtype=np.dtype(dtype).name, layer="inst.")
        out.append(row)
        groups = dataclasses.replace(
            GroupNorm.create(channels, 4), scale=layer.scale, shift=layer.shift
        )
        row = _time_layer(groups, (1, 2, 3), x, d, repeats)  # kernels: one statistic an image
        row.update(dtype=np.dtype(dtype).name, layer="group")
        out.append(row)
    return out


def _time_layer(
    layer: Any, axes: tuple[int, ...], x: np.ndarray, d: np.ndarray, repeats: int
) -> dict[str, Any]:
    """One layer's forward and backward against the copy floors, and the standardise kernels
    alone (readable, fast).

    Each round times everything once, one after the other, so that a busy spell on the machine
    falls on the floor and the layer alike; the ratios are the medians of the rounds' ratios.
    Each copy is timed on its fourth run in a row, with as many of its bytes in cache as will
    stay there: the floor is the smallest it can be, so the ratios lean against the layers.
    """
    x_copy, d_copy = np.empty_like(x), np.empty((x.size * 3 // 2,), x.dtype)
    both = np.concatenate([x.reshape(-1), d.reshape(-1)[: x.size // 2]])
    response = layer.forward(x, "training")
    work = {
        "floor_forward": lambda: np.copyto(x_copy, x),
        "floor_backward": lambda: np.copyto(d_copy, both),
        "forward": lambda: layer.forward(x, "training"),
        "backward": lambda: layer.backward(response, d),
        "readable": lambda: standardise_backward(standardise(x, axes, 1e-5), d),
        "fast": lambda: standardise_backward_fast(standardise_fast(x, axes, 1e-5), d),
    }
    if hasattr(layer, "running_mean"):  # a layer that predicts by its running figures
        work["predicting"] = lambda: layer.forward(x, "predicting")
    for call in work.values():  # warm up
        call()

    def timed(key: str, call: Callable[[], Any]) -> float:
        if key.startswith("floor"):
            for _ in range(3):
                call()
        return once_ms(call)

    rounds = [{key: timed(key, call) for key, call in work.items()} for _ in range(repeats)]
    row: dict[str, Any] = {key: float(np.median([r[key] for r in rounds])) for key in work}
    for key, floor in (("forward", "floor_forward"), ("backward", "floor_backward")):
        row[f"{key}_ratio"] = float(np.median([r[key] / r[floor] for r in rounds]))
    if "predicting" in work:
        row["predicting_ratio"] = float(
            np.median([r["predicting"] / r["floor_forward"] for r in rounds])
        )
    row["total_ratio"] = float(
        np.median(
            [
                (r["forward"] + r["backward"]) / (r["floor_forward"] + r["floor_backward"])
                for r in rounds
            ]
        )
    )
    return row


def print_layer_table(rows: list[dict[str, Any]], shape: tuple[int, ...]) -> None:
    print(
        f"Layers on a {' x '.join(map(str, shape))} block, training purpose; predict: by the "
        "running figures (median ms; ratio to floor)"
    )
    header = (
        f"{'dtype':8} {'layer':6} {'fwd':>7} {'floor':>6} {'x':>5}  {'bwd':>7} {'floor':>6} "
        f"{'x':>5}  {'total x':>7}  {'kernel: readable':>16} {'fast':>6}  {'predict':>7} {'x':>5}"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        print(
            f"{r['dtype']:8} {r['layer']:6} {r['forward']:7.2f} {r['floor_forward']:6.2f} "
            f"{r['forward_ratio']:5.1f}  {r['backward']:7.2f} "
            f"{r['floor_backward']:6.2f} {r['backward_ratio']:5.1f}  "
            f"{r['total_ratio']:7.1f}  {r['readable']:16.2f} {r['fast']:6.2f}  "
            + (
                f"{r['predicting']:7.2f} {r['predicting_ratio']:5.1f}"
                if "predicting" in r
                else f"{'-':>7} {'-':>5}"
            )
        )
    print(
        "floor: forward = copy one block (read x, write y); backward = copy 1.5 blocks "
        "(read x and the slope, write the slope passed down). kernel: standardise + its "
        "backward alone, the book's readable pair vs the fast pair the layers call. predict: "
        "the forward pass by the running figures, against the forward floor. Ratios: "
        "medians over rounds that time the floor and the layer side by side."
    )


def comparison() -> None:
    """The 130-run comparison, stacked and one at a time (``normcore.bench_comparison``)."""
    from .bench_comparison import bench_comparison

    print("\nThe 130-run comparison")
    result = bench_comparison()
    if isinstance(result, dict):
        for key, value in result.items():
            print(f"  {key}: {value:.4g}" if isinstance(value, float) else f"  {key}: {value}")
        stacked = result.get("stacked_s", result.get("stacked"))
        single = result.get("one_at_a_time_s", result.get("one_at_a_time"))
        if isinstance(stacked, float) and isinstance(single, float) and stacked > 0:
            print(f"  one-at-a-time / stacked: {single / stacked:.1f}x")
    elif result is not None:
        print(f"  {result}")


def playground(repeats: int) -> None:
    """The playground's response to one change, in ms, if normcore.widgets.playground exists."""
    print("\nThe playground's answer to one change")
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
    cell's end, `cpu` the CPU time of the kernel process and of every process under it (the
    fork server of `normcore.experiments.side_by_side` and its finished workers) over the same
    span (steadier than wall time on a shared machine: time the machine spends on other work is
    not counted)."""
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
    finished children it has reaped (a fork server's workers)."""
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
    print("\nRun All of every chapter, kernel start excluded (targets: 3 s a chapter, 25 s in all)")
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
    parser.add_argument("--quick", action="store_true", help="small block, few repeats")
    parser.add_argument("--no-chapters", action="store_true", help="skip timing the chapters")
    parser.add_argument("--repeats", type=int, default=None, help="repeats per median")
    parser.add_argument("--chapters-only", action="store_true", help="only time the chapters")
    args = parser.parse_args(argv)
    if args.chapters_only:
        chapters()
        return 0
    shape = (256, 128) if args.quick else (4096, 1024)
    repeats = args.repeats or (3 if args.quick else 9)
    print_layer_table(layer_rows(*shape, repeats), shape)
    images = (2, 4, 8, 8) if args.quick else (64, 16, 64, 64)
    print()
    print_layer_table(image_rows(images, repeats), images)
    if not args.quick:
        comparison()
    playground(3 if args.quick else 15)
    if not (args.quick or args.no_chapters):
        chapters()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
