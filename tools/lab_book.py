"""Make the reader's working copy of the book for JupyterLab (`make lab` serves it).

The chapters' MyST source (``book/*.md``) writes every number as a myst-nb role,
{glue:text}`name:.4f`, and the site fills those in from the values the chapter glued while it
ran. JupyterLab's MyST renderer (jupyterlab-myst) does not know myst-nb's glue roles, nor
cross-references to figures whose captions live in code-cell metadata. So this script writes,
for each executed chapter ``book/NN-name.ipynb``, a copy ``lab/NN-name.ipynb`` in which

* every glue role in the prose is replaced by the value that chapter glued when
  ``tools/execute_notebooks.py`` ran it (the glue outputs stored in the .ipynb), formatted as
  myst-nb formats it, so the prose reads the same numbers in Lab as on the site;
* ``{numref}`` becomes the figure's number ("Fig. 2.1", as the site numbers it), ``{doc}`` a link
  to the page and ``{term}`` its plain text;
* each figure's caption (``mystnb.figure.caption``) is a markdown cell right under the figure;
* cells the site hides are collapsed (``jupyter.source_hidden`` / ``outputs_hidden``), so the
  build's machinery is out of the reader's way;
* the jupytext pairing is dropped: saving in Lab writes the copy, never the book's sources.

The copy holds only the notebooks (and the glossary), so no ``.md`` twin sits beside a chapter.
A chapter the reader has edited (its cells' text differs from the copy this script last wrote) is
kept and named; a chapter that was only run or left alone is refreshed from the book.

    python tools/lab_book.py             # book/ -> lab/
    python tools/lab_book.py --into DIR  # somewhere else (the browser tests use a temp dir)
"""

from __future__ import annotations

import argparse
import ast
import copy
import hashlib
import json
import re
import shutil
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
LAB = ROOT / "lab"
MANIFEST = ".normcore-lab.json"
GLUE_MIME = "application/papermill.record/text/plain"

ROLE = re.compile(r"\{(?P<name>[a-z]+(?::[a-z]+)?)\}`(?P<body>[^`]*)`")
HIDE_SOURCE = {"remove-cell", "hide-cell", "remove-input", "hide-input"}
HIDE_OUTPUT = {"remove-cell", "hide-cell", "remove-output", "hide-output"}


class RenderError(ValueError):
    """A role in a chapter's prose that the working copy cannot fill in."""


def format_glued(text: str, spec: str) -> str:
    """A glued value's stored text/plain, formatted as myst-nb's {glue:text} role formats it."""
    try:
        value = ast.literal_eval(text)
    except (SyntaxError, ValueError):
        value = text
    if spec == "":
        return str(value)
    if spec[-1] == "s":
        return format(str(value), spec)
    if spec[-1] in "bcdoxXn":
        return format(int(value), spec)
    return format(float(value), spec)


def glued_values(nb) -> dict[str, str]:
    """Every value the chapter glued, by name, as the text/plain myst-nb stored."""
    values: dict[str, str] = {}
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            if name is not None and GLUE_MIME in output.get("data", {}):
                values[name] = output["data"][GLUE_MIME]
    return values


def chapter_number(stem: str) -> int | None:
    """The number the site gives a chapter (NN of NN-name; the preface, 00, has none)."""
    match = re.match(r"(\d+)-", stem)
    return int(match.group(1)) or None if match else None


def figures(nb, stem: str) -> dict[str, tuple[int, str, str]]:
    """label -> (cell index, "Fig. N.k", caption) for every code cell with a figure caption."""
    number = chapter_number(stem)
    found: dict[str, tuple[int, str, str]] = {}
    for index, cell in enumerate(nb.cells):
        figure = cell.metadata.get("mystnb", {}).get("figure", {})
        if cell.cell_type != "code" or "caption" not in figure:
            continue
        k = len(found) + 1
        label = f"Fig. {number}.{k}" if number else f"Fig. {k}"
        caption = " ".join(figure["caption"].split())
        found[figure.get("name", f"_figure{k}")] = (index, label, caption)
    return found


def page_title(book: Path, target: str) -> str:
    """The first heading of a page of the book (for a {doc} role without its own text)."""
    for suffix in (".md", ".ipynb"):
        path = book / f"{target}{suffix}"
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                heading = re.match(r"#\s+(.+)", line.strip().strip('"'))
                if heading:
                    return heading.group(1).strip().removesuffix("\\n").strip()
    return target


def render_prose(
    text: str,
    glued: dict[str, str],
    figs: dict[str, tuple[int, str, str]],
    book: Path,
    where: str,
) -> str:
    """`text` with every role the site resolves written out as the site shows it."""

    def one(match: re.Match) -> str:
        role, body = match.group("name"), match.group("body")
        explicit = re.fullmatch(r"(?P<text>.*?)\s*<(?P<target>[^>]+)>", body, flags=re.S)
        if role in ("glue", "glue:", "glue:text", "glue:any"):
            key, _, spec = body.partition(":") if role == "glue:text" else (body, "", "")
            if key not in glued:
                raise RenderError(f"{where}: {match.group(0)} names nothing the chapter glued")
            return format_glued(glued[key], spec)
        if role == "numref":
            label = explicit.group("target") if explicit else body
            if label not in figs:
                raise RenderError(f"{where}: {match.group(0)} names no figure of this chapter")
            number = figs[label][1].removeprefix("Fig. ")
            if explicit:
                return explicit.group("text").replace("%s", number).replace("{number}", number)
            return f"Fig. {number}"
        if role == "doc":
            target = explicit.group("target") if explicit else body
            shown = explicit.group("text") if explicit else page_title(book, target)
            suffix = ".ipynb" if (book / f"{target}.ipynb").exists() else ".md"
            return f"[{shown}]({target}{suffix})"
        if role == "term":
            return explicit.group("text") if explicit else body
        return match.group(0)  # a role jupyterlab-myst renders itself ({math}, {sub}, ...)

    return ROLE.sub(one, text)


def collapse(cell) -> None:
    """Fold away what the site hides: the source of hidden input, the outputs of hidden output."""
    tags = set(cell.metadata.get("tags", []))
    jupyter = {}
    if tags & HIDE_SOURCE:
        jupyter["source_hidden"] = True
    if tags & HIDE_OUTPUT:
        jupyter["outputs_hidden"] = True
        if cell.cell_type == "code":
            cell.metadata["collapsed"] = True  # the older name JupyterLab keeps in step with it
    if jupyter:
        cell.metadata["jupyter"] = jupyter


def lab_notebook(ipynb: Path, book: Path):
    """The reader's copy of one executed chapter (see the module docstring)."""
    nb = nbformat.read(ipynb, as_version=4)
    glued = glued_values(nb)
    figs = figures(nb, ipynb.stem)
    captions = {index: (label, caption) for index, label, caption in figs.values()}
    cells = []
    for index, cell in enumerate(nb.cells):
        cell = copy.deepcopy(cell)
        if cell.cell_type == "markdown":
            cell.source = render_prose(cell.source, glued, figs, book, f"{ipynb.name} cell {index}")
        collapse(cell)
        cells.append(cell)
        if index in captions:
            label, caption = captions[index]
            text = render_prose(caption, glued, figs, book, f"{ipynb.name} caption {label}")
            note = nbformat.v4.new_markdown_cell(f"**{label}.** {text}")
            note["id"] = f"{cell.get('id', index)}-caption"
            note.metadata["normcore"] = {"caption_of": cell.get("id", index)}
            cells.append(note)
    nb.cells = cells
    nb.metadata.pop("jupytext", None)
    nb.metadata["kernelspec"] = kernelspec(nb.metadata.get("kernelspec", {}).get("name", "python3"))
    return nb


def kernelspec(name: str) -> dict[str, str]:
    """The installed kernel's own spec. JupyterLab writes it into the notebook when the kernel
    starts, so a notebook that stores another display name opens already marked modified."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        spec = KernelSpecManager().get_kernel_spec(name)
    except NoSuchKernel:
        return {"display_name": name, "language": "python", "name": name}
    return {"display_name": spec.display_name, "language": spec.language, "name": name}


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _sources(text: str) -> str:
    """A digest of a notebook's cells' types and text (what a reader's edit changes)."""
    cells = json.loads(text).get("cells", [])
    keys = [(c.get("cell_type"), "".join(c.get("source", ""))) for c in cells]
    return _digest(json.dumps(keys))


def chapters(book: Path) -> list[Path]:
    """The executed chapters: every book/*.ipynb with its MyST .md beside it."""
    return sorted(p for p in book.glob("*.ipynb") if p.with_suffix(".md").exists())


def build(book: Path = BOOK, into: Path = LAB, quiet: bool = False) -> list[str]:
    """Write the working copy; returns the names of chapters kept because the reader edited them."""
    into.mkdir(parents=True, exist_ok=True)
    manifest_path = into / MANIFEST
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    kept = []
    for ipynb in chapters(book):
        text = nbformat.writes(lab_notebook(ipynb, book)) + "\n"
        target = into / ipynb.name
        if target.exists():
            current = target.read_text(encoding="utf-8")
            written = manifest.get(ipynb.name)
            try:
                edited = written is None or _sources(current) != written
            except json.JSONDecodeError:
                edited = True
            if edited and current != text:
                kept.append(ipynb.name)
                continue
        target.write_text(text, encoding="utf-8")
        manifest[ipynb.name] = _sources(text)
    for page in sorted(book.glob("*.md")):  # pages that are not notebooks (the glossary)
        if not page.with_suffix(".ipynb").exists() and not (into / page.name).exists():
            shutil.copy(page, into / page.name)
    manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    if kept and not quiet:
        print(
            "kept your edited copies (delete one to get the book's version back): "
            + ", ".join(str((into / name).relative_to(into.parent)) for name in kept)
        )
    return kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--into", type=Path, default=LAB, help="where to write (default: lab/)")
    parser.add_argument("--book", type=Path, default=BOOK, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        build(args.book, args.into)
    except RenderError as error:
        raise SystemExit(f"{error}; run tools/execute_notebooks.py on that chapter") from None
    return 0


if __name__ == "__main__":
    sys.exit(main())
