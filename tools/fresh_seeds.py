"""Run the chapters as a sceptic would: with every random seed moved, or only the visible cells.

Two checks, each running chapters' code cells (read from the paired ``book/NN-*.md``) in this one
process, one fresh namespace per chapter, in ``book/`` as the executor does:

``--offset K`` (the seed-shift check)
    Every integer seed the chapter gives a generator is moved by K before it is used: seeds given
    to ``np.random.default_rng``, ``np.random.seed``, ``np.random.RandomState``,
    ``np.random.PCG64`` and ``np.random.SeedSequence``, and to the reference program's weight
    initialiser ``normcore.data.subscribers.init_weights``. So network initialisations, folds,
    shuffles (the digits' split too) and nudges all change. Calls made by a module that makes the
    book's data (one that sets ``__fixed_seeds__ = True``: the crowd's generator, the subscriber
    table's) are left alone, so the data stay what the page describes. A hidden assert about the
    method that fails now was true only of the printed seeds. A cell tagged ``published-run``
    compares the book's run with a table printed elsewhere (the reference program's), or asserts
    what the page says about its own printed case (the claims suite holding the general
    statement); only the printed seeds can reproduce either: it still runs, but its failure under
    a shift is listed as expected and does not count.

``--visible`` (the learner's check)
    Only the cells a reader sees (every cell not tagged ``remove-cell``) run, in order, as a
    learner who copies the page into a fresh notebook would run them. A name defined only in a
    removed cell shows up as a NameError.

Every cell that raises is reported (chapter, cell number, tags, first line, the error) and the run
goes on; the exit status is 1 if any cell raised.

    python tools/fresh_seeds.py --offset 3                 # every chapter, seeds moved by 3
    python tools/fresh_seeds.py --offset 3 book/06-*.md    # some chapters
    python tools/fresh_seeds.py --visible                  # every chapter, visible cells only
"""

from __future__ import annotations

import argparse
import contextlib
import io
import numbers
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
FIXED = "__fixed_seeds__"
HIDDEN = "remove-cell"
PUBLISHED = "published-run"


@dataclass
class Shift:
    """Moves integer seeds by `offset` on their way into numpy; counts what it moved."""

    offset: int
    moved: int = 0
    kept: int = 0

    def seed(self, seed: object) -> object:
        """`seed` moved by the offset (an integer, or the first of a sequence of integers),
        unless it is neither or a module that makes the book's data asked for it."""
        whole = _is_int(seed)
        listed = isinstance(seed, list | tuple) and len(seed) > 0 and all(map(_is_int, seed))
        if self.offset == 0 or not (whole or listed) or _called_from_fixed():
            self.kept += 1
            return seed
        self.moved += 1
        if whole:
            return int(seed) + self.offset
        return type(seed)([int(seed[0]) + self.offset, *seed[1:]])

    @contextlib.contextmanager
    def installed(self) -> Iterator[Shift]:
        """numpy.random's seeded entry points replaced by shifting ones, for the `with` block."""
        import numpy as np

        random = np.random
        shift = self
        original_rng = random.default_rng
        original_seed = random.seed

        def default_rng(seed: object = None) -> np.random.Generator:
            return original_rng(shift.seed(seed))

        def seed(seed: object = None) -> None:
            original_seed(shift.seed(seed))

        def subclass(base: type) -> type:
            class Shifted(base):  # type: ignore[misc, valid-type]
                def __init__(self, seed: object = None, *args: object, **kwargs: object) -> None:
                    super().__init__(shift.seed(seed), *args, **kwargs)

            Shifted.__name__ = Shifted.__qualname__ = base.__name__
            return Shifted

        replacements: dict[str, object] = {
            "default_rng": default_rng,
            "seed": seed,
            "RandomState": subclass(random.RandomState),
            "PCG64": subclass(random.PCG64),
            "SeedSequence": subclass(random.SeedSequence),
        }
        # The reference program's weight initialiser draws from its own generator; it sits
        # beside the subscriber table it was published with, but it starts networks, so its
        # seeds move too (unless the table's own code calls it).
        from normcore.data import subscribers

        original_init = subscribers.init_weights

        def init_weights(seed: int, *args: object, **kwargs: object) -> object:
            return original_init(shift.seed(seed), *args, **kwargs)

        patched = [(random, name, value) for name, value in replacements.items()]
        patched.append((subscribers, "init_weights", init_weights))
        saved = [(owner, name, getattr(owner, name)) for owner, name, _ in patched]
        for owner, name, value in patched:
            setattr(owner, name, value)
        try:
            yield self
        finally:
            for owner, name, value in saved:
                setattr(owner, name, value)


def _is_int(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _called_from_fixed() -> bool:
    """Whether a module that makes the book's data (``__fixed_seeds__ = True``) is on the stack."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_globals.get(FIXED) is True:
            return True
        frame = frame.f_back
    return False


@dataclass(frozen=True)
class Cell:
    """One code cell of a chapter: its number among the code cells, tags and source."""

    number: int
    tags: tuple[str, ...]
    source: str

    @property
    def hidden(self) -> bool:
        return HIDDEN in self.tags

    @property
    def published(self) -> bool:
        return PUBLISHED in self.tags

    @property
    def first_line(self) -> str:
        lines = [line for line in self.source.splitlines() if line.strip()]
        return lines[0][:90] if lines else ""


@dataclass(frozen=True)
class Failure:
    chapter: str
    cell: Cell
    error: str

    def __str__(self) -> str:
        kind = "hidden" if self.cell.hidden else "visible"
        return (
            f"{self.chapter} cell {self.cell.number} ({kind}): {self.error}\n"
            f"    {self.cell.first_line}"
        )


def code_cells(path: Path) -> list[Cell]:
    """The code cells of the MyST notebook `path`, in order."""
    import jupytext

    notebook = jupytext.read(path)
    cells = [c for c in notebook.cells if c.cell_type == "code"]
    return [
        Cell(number, tuple(c.metadata.get("tags", ())), c.source)
        for number, c in enumerate(cells, start=1)
    ]


def _error_text(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}".strip()
    return text.splitlines()[0][:300] if text else type(error).__name__


def run_chapter(
    path: Path, keep: Callable[[Cell], bool], shell: object
) -> tuple[list[Failure], float]:
    """Run the cells of `path` that `keep` accepts in a fresh namespace of `shell`.

    Returns the failures (one per cell that raised) and the wall time in seconds.
    """
    import matplotlib.pyplot as plt

    shell.reset(new_session=False)  # type: ignore[attr-defined]
    # A script run by `python` has a __main__ with a __spec__ (None); so must the namespace a
    # chapter runs in (multiprocessing reads it, as an IPython kernel's __main__ has it).
    if not hasattr(shell.user_module, "__spec__"):  # type: ignore[attr-defined]
        shell.user_module.__spec__ = None  # type: ignore[attr-defined]
    failures: list[Failure] = []
    start = time.perf_counter()
    here = os.getcwd()
    os.chdir(BOOK)
    try:
        for cell in code_cells(path):
            if not keep(cell):
                continue
            sink = io.StringIO()
            with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
                result = shell.run_cell(cell.source, store_history=False, silent=True)  # type: ignore[attr-defined]
            error = result.error_before_exec or result.error_in_exec
            if error is not None:
                failures.append(Failure(path.stem, cell, _error_text(error)))
    finally:
        os.chdir(here)
        plt.close("all")
    return failures, time.perf_counter() - start


def chapters(paths: Sequence[str]) -> list[Path]:
    """The chapter sources named by `paths` (``.md`` or ``.ipynb``), or every chapter."""
    if not paths:
        return sorted(p for p in BOOK.glob("[0-9][0-9]-*.md"))
    return [Path(p).with_suffix(".md").resolve() for p in paths]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--offset", type=int, help="move every integer seed by this much")
    mode.add_argument("--visible", action="store_true", help="run only the cells a reader sees")
    parser.add_argument("chapters", nargs="*", help="book/NN-*.md files (default: all)")
    args = parser.parse_args(argv)

    import matplotlib

    # The cells run in this process: draw without showing, and leave the environment alone
    # (a test calling main() once set MPLBACKEND here, and the JupyterLab it started later drew
    # no figure).
    matplotlib.use("Agg")
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    offset = 0 if args.visible else args.offset
    if args.visible:
        keep: Callable[[Cell], bool] = lambda cell: not cell.hidden  # noqa: E731
        what = "visible cells only"
    else:
        keep = lambda cell: True  # noqa: E731
        what = f"every integer seed moved by {offset}"

    everything: list[Failure] = []
    shift = Shift(offset)
    with shift.installed():
        for path in chapters(args.chapters):
            before = shift.moved
            failures, seconds = run_chapter(path, keep, shell)
            expected = [f for f in failures if offset and f.cell.published]
            failures = [f for f in failures if f not in expected]
            everything += failures
            moved = f", {shift.moved - before} seeds moved" if offset else ""
            verdict = "ok" if not failures else f"{len(failures)} cell(s) failed"
            print(f"{path.stem}: {verdict} ({seconds:.1f} s{moved})", flush=True)
            for failure in failures:
                print(f"  {failure}", flush=True)
            for failure in expected:
                print(f"  expected (a published run, other seeds): {failure}", flush=True)
    print(f"{what}: {len(everything)} failing cell(s)")
    return 1 if everything else 0


if __name__ == "__main__":
    sys.exit(main())
