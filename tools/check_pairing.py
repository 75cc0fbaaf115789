"""Check, without writing anything, that every chapter's .md and .ipynb are in step.

For each MyST notebook ``book/*.md`` (a file with a jupytext/kernelspec header):

* its ``.ipynb`` twin exists (and every ``book/*.ipynb`` has an ``.md``);
* both hold the same cells: same number, and cell by cell the same type, source and tags;
* every code cell of the ``.ipynb`` has been run (``execution_count`` is set), so the stored
  outputs are real.

``jupytext --diff`` is not used because it exits 0 even when the files differ.

    python tools/check_pairing.py            # exit 0 if all in step, 1 with the reasons if not
    python tools/check_pairing.py book/02-*.md

Fix a mismatch with ``python tools/execute_notebooks.py <the .md>`` (the .md is the source).
"""

from __future__ import annotations

import sys
from pathlib import Path

import jupytext

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"


def is_notebook(md: Path) -> bool:
    head = md.read_text(encoding="utf-8")[:2000]
    return head.startswith("---") and ("jupytext:" in head or "kernelspec:" in head)


def _tags(cell) -> list[str]:
    return sorted(cell.get("metadata", {}).get("tags", []))


def _show(text: str, width: int = 70) -> str:
    first = text.strip().splitlines()[0] if text.strip() else "(empty)"
    return first if len(first) <= width else first[: width - 1] + "…"


def compare(md: Path) -> list[str]:
    """Problems with one pair, as sentences naming the files (empty when in step)."""
    ipynb = md.with_suffix(".ipynb")
    name = md.relative_to(ROOT).as_posix()
    twin = ipynb.relative_to(ROOT).as_posix()
    if not ipynb.exists():
        return [f"{name}: no {twin}; run python tools/execute_notebooks.py {name}"]
    try:
        text_nb = jupytext.read(md)
        json_nb = jupytext.read(ipynb)
    except Exception as error:  # a broken file is a finding, not a crash
        return [f"{name} / {twin}: cannot be read: {error}"]
    problems: list[str] = []
    a, b = text_nb.cells, json_nb.cells
    if len(a) != len(b):
        problems.append(f"{name} has {len(a)} cells but {twin} has {len(b)}")
    for index, (ca, cb) in enumerate(zip(a, b, strict=False)):
        where = f"{name} cell {index}"
        if ca.cell_type != cb.cell_type:
            problems.append(f"{where}: {ca.cell_type} in the .md, {cb.cell_type} in the .ipynb")
        elif ca.source.rstrip() != cb.source.rstrip():
            problems.append(
                f"{where}: source differs (.md: {_show(ca.source)!r}; .ipynb: {_show(cb.source)!r})"
            )
        elif _tags(ca) != _tags(cb):
            problems.append(f"{where}: tags differ (.md {_tags(ca)}, .ipynb {_tags(cb)})")
    for index, cell in enumerate(b):
        if cell.cell_type == "code" and cell.get("execution_count") is None:
            problems.append(
                f"{twin} cell {index} was never run ({_show(cell.source)!r}); "
                f"run python tools/execute_notebooks.py {name}"
            )
    return problems


def pairs(paths: list[Path] | None = None) -> tuple[list[Path], list[str]]:
    """The notebooks to check, and problems found before comparing (orphan .ipynb files)."""
    problems: list[str] = []
    if paths:
        mds = [p.resolve().with_suffix(".md") for p in paths]
    else:
        mds = sorted(p for p in BOOK.glob("*.md") if is_notebook(p))
        for ipynb in sorted(BOOK.glob("*.ipynb")):
            if ipynb.with_suffix(".md") not in mds:
                problems.append(f"{ipynb.relative_to(ROOT).as_posix()} has no paired .md")
    return mds, problems


def check(paths: list[Path] | None = None) -> list[str]:
    mds, problems = pairs(paths)
    for md in mds:
        if not md.exists():
            problems.append(f"{md}: no such .md")
            continue
        problems.extend(compare(md))
    return problems


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    problems = check([Path(a) for a in args] or None)
    if problems:
        print("notebooks out of step with their .md:", file=sys.stderr)
        for problem in problems:
            print(f"  {problem}", file=sys.stderr)
        return 1
    mds, _ = pairs([Path(a) for a in args] or None)
    print(f"{len(mds)} notebook pair(s) in step and executed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
