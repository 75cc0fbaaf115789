"""Write each chapter's MyST .md into its paired .ipynb and run it there, storing the outputs.

This is the book's one executor (``make notebooks``): the site renders the stored run
(``execute_notebooks: off`` in _config.yml), the reader downloads it, ``lab/`` is made from it,
and nbval re-executes it and compares. The .md is the source. For every ``book/*.md`` notebook
(a file with a ``jupytext`` header):

1. read it with jupytext;
2. run it top to bottom with nbclient in a fresh ``python3`` kernel started in ``book/``, with
   ``PYTHONHASHSEED=0`` and ``SOURCE_DATE_EPOCH=0`` so that runs repeat, under the book's
   reference arithmetic (``arith_matrix.reference``: Haswell's BLAS kernels and numpy's loops up
   to AVX2, one BLAS thread), so the stored bits are the same on any x86-64 with AVX2; widget
   state is stored so the site and JupyterLab show each widget's first view;
3. make the file repeatable: cell ids derived from the cells' contents, no timing metadata,
   widget model ids renumbered in order of appearance;
4. store each cell's output streams merged, with carriage returns applied (a progress bar,
   ``normcore.progress``, is stored as its finished line);
5. refuse outputs that print a memory address (``at 0x7f...``), which would differ every run;
6. write the .ipynb, and check that JupyterLab's working copy (``tools/lab_book.py``) can fill in
   every glue role and figure reference of its prose from the stored outputs.

    python tools/execute_notebooks.py                 # every notebook in book/
    python tools/execute_notebooks.py book/02-*.md    # some of them
    python tools/execute_notebooks.py --force         # overwrite an .ipynb edited on its own

If an .ipynb is newer than its .md and their cells differ (it was edited without pairing), the
script stops rather than throw that work away; ``--force`` overrides.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import sys
from pathlib import Path

import arith_matrix  # beside this file, as lab_book
import jupytext
import lab_book  # beside this file (tools/ is the script's folder, first on its path)
import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
KERNEL = "python3"
TIMEOUT = 600  # seconds per cell
ADDRESS = re.compile(r"\bat 0x[0-9a-fA-F]{6,}")
MODEL_ID = re.compile(r"[0-9a-f]{32}")


def is_notebook(md: Path) -> bool:
    """A MyST notebook starts with a front matter that names jupytext or a kernelspec."""
    head = md.read_text(encoding="utf-8")[:2000]
    return head.startswith("---") and ("jupytext:" in head or "kernelspec:" in head)


def book_notebooks() -> list[Path]:
    return sorted(p for p in BOOK.glob("*.md") if is_notebook(p))


def cell_key(cell) -> tuple[str, str]:
    return cell.cell_type, cell.source


def stable_ids(nb) -> None:
    """Cell ids from each cell's type and text, so an unchanged cell keeps its id."""
    seen: dict[str, int] = {}
    for cell in nb.cells:
        digest = hashlib.sha256(f"{cell.cell_type}\0{cell.source}".encode()).hexdigest()[:10]
        count = seen.get(digest, 0)
        seen[digest] = count + 1
        cell["id"] = f"c{digest}" if count == 0 else f"c{digest}-{count}"


def strip_timing(nb) -> None:
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.metadata.pop("collapsed", None)
            cell.metadata.pop("scrolled", None)


def renumber_widgets(nb, name: str) -> None:
    """Replace random widget model ids with ids derived from the notebook name and order."""
    text = nbformat.writes(nb)
    mapping: dict[str, str] = {}
    state = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    for old in state.get("state", {}):
        new = hashlib.sha256(f"{name}:{len(mapping)}".encode()).hexdigest()[:32]
        mapping[old] = new
    if not mapping:
        return
    text = MODEL_ID.sub(lambda m: mapping.get(m.group(0), m.group(0)), text)
    renumbered = nbformat.reads(text, as_version=4)
    nb.clear()
    nb.update(renumbered)


def find_addresses(nb) -> list[str]:
    found = []
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            text = nbformat.writes(nbformat.from_dict({"o": output}))  # any field, any mime type
            for match in ADDRESS.finditer(text):
                found.append(f"cell {index}: {match.group(0)}")
    return found


def edited_alone(md: Path, ipynb: Path, nb_md) -> bool:
    if not ipynb.exists() or ipynb.stat().st_mtime <= md.stat().st_mtime:
        return False
    nb_old = jupytext.read(ipynb)
    return [cell_key(c) for c in nb_old.cells] != [cell_key(c) for c in nb_md.cells]


def execute(md: Path, force: bool = False) -> None:
    ipynb = md.with_suffix(".ipynb")
    nb = jupytext.read(md)
    if not force and edited_alone(md, ipynb, nb):
        raise SystemExit(
            f"{ipynb.relative_to(ROOT)} is newer than its .md and its cells differ: it was "
            f"edited on its own. Sync it back (jupytext --sync {ipynb.relative_to(ROOT)}) or "
            "pass --force to overwrite it from the .md."
        )
    nb.metadata.get("jupytext", {}).pop("text_representation", None)
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": KERNEL}
    client = NotebookClient(
        nb,
        kernel_name=KERNEL,
        timeout=TIMEOUT,
        resources={"metadata": {"path": str(md.parent)}},
        record_timing=False,
        store_widget_state=True,
        allow_errors=False,
        # one stream per cell with carriage returns applied, as nbval compares it: a progress
        # bar (normcore.progress) is stored as its finished line, not as every redraw
        coalesce_streams=True,
    )
    try:
        client.execute()
    except CellExecutionError as error:
        raise SystemExit(f"{md.relative_to(ROOT)} failed to run:\n{error}") from None
    strip_timing(nb)
    stable_ids(nb)
    renumber_widgets(nb, md.stem)
    addresses = find_addresses(nb)
    if addresses:
        raise SystemExit(
            f"{md.relative_to(ROOT)} prints memory addresses, which change every run "
            "(give the object a repr or print something else):\n  " + "\n  ".join(addresses)
        )
    jupytext.write(nb, ipynb, fmt="ipynb")
    try:  # the reader's copy for JupyterLab must be able to fill in every role of the prose
        lab_book.lab_notebook(ipynb, md.parent)
    except lab_book.RenderError as error:
        raise SystemExit(f"{md.relative_to(ROOT)}: {error}") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, help="book/*.md files (default: all)")
    parser.add_argument("--force", action="store_true", help="overwrite .ipynb edited alone")
    args = parser.parse_args(argv)
    os.environ["PYTHONHASHSEED"] = "0"  # inherited by each kernel
    os.environ["SOURCE_DATE_EPOCH"] = "0"
    # The same bits on any x86-64 with AVX2: the figure pack redraws under it too.
    print(f"execute_notebooks: {arith_matrix.use_reference()}", flush=True)
    paths = [p.resolve() for p in args.paths] or book_notebooks()
    for md in paths:
        if md.suffix == ".ipynb":
            md = md.with_suffix(".md")
        if not md.exists() or not is_notebook(md):
            raise SystemExit(f"{md}: not a MyST notebook with a jupytext header")
        print(f"running {md.relative_to(ROOT)}", flush=True)
        execute(md, force=args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
