"""The figure pack: every figure of the book as SVG, PDF and PNG (1x, 2x), with its short title,
caption and alt text; slide-grade (text as text, legends of 9 pt or more, 220 dpi).

For each chapter's stored run (``book/NN-name.ipynb``, the run the site renders), every code cell
with a figure caption (``mystnb: figure: caption:``) gives one figure, named by its number and
label: ``fig2.1-lag.png``, ``.svg``, ``.pdf`` and ``@2x.png`` in ``02-worked-column/``. Its short
title and its alt text (what it shows, not the caption again) come from ``book/figures.yml``,
keyed by chapter and label, which the lead updates when a figure changes.

* The PNG is the stored output itself, byte for byte: the image the site and the PDF show.
* The SVG needs the figure object, which a stored run does not keep. So the chapter's own code
  cells (the stored notebook's sources, in step with its .md) run once more, in this one process
  (one fresh namespace per chapter, in ``book/``, ``PYTHONHASHSEED=0``), up to its last figure
  cell; after each figure cell its figure is written as SVG (text as paths, so it draws the same
  without the font; the book style's fixed ``svg.hashsalt`` and no date) and as PNG the way the
  kernel's inline backend writes it. That PNG must equal the stored one byte for byte, or the
  pack is not made: the SVG is then the same drawing as the page's picture, not a new run's.
* The slide-grade files are drawn from copies of that same figure under ``SLIDE_RC`` (text as
  text, ``svg.fonttype: none``, the font named; TrueType in the PDF), legends raised to 9 pt,
  the PNG at 220 dpi. Only the pack's copies: the chapters' inline figures and their stored
  PNGs keep the book style (nbval compares those).
  The cells run under the book's reference arithmetic (``arith_matrix.reference``), the one
  ``make notebooks`` stores its runs under, so a figure that shows a chaotic run (chapter 7's
  rate 60) redraws the same on any x86-64 processor with AVX2, AVX-512 or not. A processor that
  cannot run it (ARM) computes its own last bits: there a redrawn figure that differs is
  reported and the pack is still made (the PNG is the page's; the SVG is this processor's).

The index (``index.json`` and ``index.md``, one per chapter and one for the book) gives each
figure's number as the site prints it ("Fig. 2.1"), label, files, caption (the prose's roles
filled in from the stored run, as ``tools/lab_book.py`` fills them) and alt text (the cell's own,
or the caption, as ``book/_ext/accessible.py`` gives the site's images).

Zips (fixed entry times and order, so a rebuild gives the same bytes):
``_build/html/figures/normcore-figures-chNN.zip`` per chapter with figures and
``normcore-figures.zip`` for the book; the unzipped tree is kept in ``_build/figures/``.

    python tools/figure_pack.py                # every chapter; into _build/html/figures
    python tools/figure_pack.py --into DIR book/02-worked-column.ipynb
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import io
import json
import os
import pickle
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import arith_matrix  # beside this file
import lab_book  # beside this file
import nbformat
import teaching  # beside this file

TREE = teaching.BUILD / "figures"
SITE_DIR = teaching.SITE / teaching.FIGURES_DIR


class PackError(RuntimeError):
    """The pack cannot be made honestly (a figure redrawn differently from the stored one)."""


@dataclass(frozen=True)
class Figure:
    """One figure of the pack and its index entry."""

    chapter: str  # "02-worked-column"
    number: str  # "Fig. 2.1", as the site numbers it
    label: str  # the figure's name in the chapter, "fig-lag"
    png: str  # path inside the pack: the page's own PNG
    svg: str  # slide-grade SVG: text as text (DejaVu Sans), <title> and <desc>
    caption: str  # markdown, roles filled in
    alt: str  # what the figure shows (book/figures.yml), not the caption again
    title: str = ""  # a short title for a slide (book/figures.yml)
    pdf: str = ""  # vector PDF, text as text (TrueType)
    png2x: str = ""  # PNG at twice the page's resolution (220 dpi)


#: The slide-grade redraw's settings, on top of the book style (the chapters' inline figures
#: and their stored PNGs keep theirs): text kept as text in SVG and PDF, with its font named.
SLIDE_RC = {"svg.fonttype": "none", "pdf.fonttype": 42, "font.family": "DejaVu Sans"}
SLIDE_DPI = 220  # the 2x PNG: twice the book style's 110 dpi
LEGEND_MIN_PT = 9.0


def file_stem(number: str, label: str) -> str:
    """A figure's file name in the pack, carrying its number: ``fig2.1-lag`` for Fig. 2.1
    labelled fig-lag, ``fig1-preface-block`` for the preface's Fig. 1."""
    digits = number.split(" ", 1)[1] if " " in number else number
    return f"fig{digits}-{label.removeprefix('fig-')}"


def legends_at_least(fig, points: float = LEGEND_MIN_PT) -> None:
    """Every legend's text at `points` or more (a slide is read from further away)."""
    legends = [ax.get_legend() for ax in fig.axes] + list(fig.legends)
    for legend in legends:
        if legend is None:
            continue
        for text in legend.get_texts():
            if text.get_fontsize() < points:
                text.set_fontsize(points)
        title = legend.get_title()
        if title.get_text() and title.get_fontsize() < points:
            title.set_fontsize(points)


def titled_svg(svg: str, title: str, desc: str) -> str:
    """The SVG with a <title> and a <desc> as its first children (what a screen reader and a
    slide tool read)."""
    from xml.sax.saxutils import escape

    start = svg.index("<svg")
    end = svg.index(">", start) + 1
    inserted = f"\n <title>{escape(title)}</title>\n <desc>{escape(desc)}</desc>"
    return svg[:end] + inserted + svg[end:]


def stored_figures(ipynb: Path) -> list[tuple[int, Figure, bytes]]:
    """(cell index, index entry, stored PNG bytes) for every captioned figure of a chapter."""
    nb = nbformat.read(ipynb, as_version=4)
    glued = lab_book.glued_values(nb)
    figs = lab_book.figures(nb, ipynb.stem)
    notes = teaching.figure_notes()
    found = []
    for label, (index, number, caption) in figs.items():
        cell = nb.cells[index]
        where = f"{ipynb.name} caption {number}"
        text = lab_book.render_prose(caption, glued, figs, ipynb.parent, where)
        note = notes.get(ipynb.stem, {}).get(label, {})
        if note.get("note"):
            text = f"{text} {' '.join(str(note['note']).split())}"
        alt = note.get("alt") or cell.metadata.get("mystnb", {}).get("image", {}).get("alt")
        alt = " ".join(alt.split()) if alt else text
        images = [o for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]
        if len(images) != 1:
            raise PackError(f"{where}: {len(images)} stored images, expected one")
        png = base64.b64decode(images[0]["data"]["image/png"])
        stem = f"{ipynb.stem}/{file_stem(number, label)}"
        entry = Figure(
            ipynb.stem,
            number,
            label,
            f"{stem}.png",
            f"{stem}.svg",
            text,
            alt,
            title=" ".join(str(note.get("title", "")).split()),
            pdf=f"{stem}.pdf",
            png2x=f"{stem}@2x.png",
        )
        found.append((index, entry, png))
    return found


def redraw(ipynb: Path, cells: set[int], shell) -> dict[int, dict[str, bytes]]:
    """Run the chapter's code cells up to the last of `cells`; for each of `cells`, its one
    figure as {"png": as the inline backend writes it (to hold to the stored one), "svg", "pdf",
    "png2x": the slide-grade files, drawn from copies of the same figure}."""
    import matplotlib
    import matplotlib.pyplot as plt
    from IPython.core.pylabtools import print_figure

    from normcore.plots.style import PDF_METADATA, PNG_METADATA, SVG_METADATA

    nb = nbformat.read(ipynb, as_version=4)
    last = max(cells)
    shell.reset(new_session=False)
    if not hasattr(shell.user_module, "__spec__"):
        shell.user_module.__spec__ = None
    drawn: dict[int, dict[str, bytes]] = {}
    here = os.getcwd()
    os.chdir(ipynb.parent)
    # As the book style leaves the kernel (normcore.plots.style): pyplot draws no figure before
    # the inline backend does (no after-cell draw, no drawing as calls go), so each layout
    # starts from a figure never drawn; an earlier draw moves constrained layout's panels.
    plt.uninstall_repl_displayhook()
    try:
        for index, cell in enumerate(nb.cells[: last + 1]):
            if cell.cell_type != "code":
                continue
            sink = io.StringIO()
            with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
                result = shell.run_cell(cell.source, store_history=False, silent=True)
            error = result.error_before_exec or result.error_in_exec
            if error is not None:
                raise PackError(f"{ipynb.name} cell {index} failed to run again: {error!r}")
            numbers = plt.get_fignums()
            if index in cells:
                if len(numbers) != 1:
                    raise PackError(f"{ipynb.name} cell {index}: {len(numbers)} figures open")
                # Each draw under constrained layout starts from where the last one left the
                # axes, so a second draw can differ by a pixel: the PNG and the SVG are each the
                # first draw of a copy of the figure as the cell left it.
                state = pickle.dumps(plt.figure(numbers[0]))
                # the inline backend's call (InlineBackend.print_figure_kwargs: bbox tight) with
                # the metadata normcore.plots.style gives it
                png = print_figure(
                    pickle.loads(state), "png", bbox_inches="tight", metadata=dict(PNG_METADATA)
                )
                slide: dict[str, bytes] = {"png": png}
                with matplotlib.rc_context(SLIDE_RC):
                    for kind, fmt, extra in (
                        ("svg", "svg", {"metadata": dict(SVG_METADATA)}),
                        ("pdf", "pdf", {"metadata": dict(PDF_METADATA)}),
                        ("png2x", "png", {"metadata": dict(PNG_METADATA), "dpi": SLIDE_DPI}),
                    ):
                        fig = pickle.loads(state)
                        legends_at_least(fig)
                        made = print_figure(fig, fmt, bbox_inches="tight", **extra)
                        slide[kind] = made.encode("utf-8") if isinstance(made, str) else made
                        plt.close(fig)
                drawn[index] = slide
            plt.close("all")  # as the inline backend does after every cell
    finally:
        os.chdir(here)
        plt.close("all")
    return drawn


def index_markdown(title: str, figures: list[Figure]) -> str:
    lines = [
        f"# {title}",
        "",
        f"normcore {teaching.version()}. Each figure as SVG and PDF (text as text, DejaVu Sans; "
        f"legends at {LEGEND_MIN_PT:.0f} pt or more), as the page's PNG and as a PNG at "
        f"{SLIDE_DPI} dpi (@2x). {teaching.licence_note()}",
        "",
        f"Attribution: {teaching.attribution()}",
        "",
    ]
    for fig in figures:
        lines += [
            f"## {fig.number}: {fig.title} ({fig.label})" if fig.title else f"## {fig.number}",
            "",
            f"Files: `{fig.svg}`, `{fig.pdf}`, `{fig.png}`, `{fig.png2x}`",
            "",
            f"Short title: {fig.title}",
            "",
            f"Caption: {fig.caption}",
            "",
            f"Alt text: {fig.alt}",
            "",
        ]
    return "\n".join(lines)


def index_json(figures: list[Figure]) -> str:
    body = {"version": teaching.version(), "figures": [asdict(f) for f in figures]}
    return json.dumps(body, indent=1, ensure_ascii=False) + "\n"


README = """normcore figure pack, version {version}

Every figure of the book "normcore: normalisation layers, computed", drawn by the run the site
shows, named by its number (fig2.1-lag.*: Fig. 2.1):
  .svg     vector, text kept as text (font DejaVu Sans, which ships with matplotlib), with a
           <title> (number and short title) and a <desc> (what it shows); edit it in Inkscape
  .pdf     vector, fonts embedded: for Beamer (\\includegraphics) and slide tools
  .png     the page's own image (110 dpi)
  @2x.png  twice the resolution (220 dpi), for a projected slide
index.md and index.json give each figure's number, short title, caption and alt text.

Licence: {licence} The full text is in LICENSE, in this zip.
Attribution (copy it under a reused figure): {attribution}
"""


def readme_text() -> str:
    return README.format(
        version=teaching.version(),
        licence=teaching.licence_note(),
        attribution=teaching.attribution(),
    )


def build(
    notebooks: list[Path], into: Path, tree: Path | None = None, strict: bool = True
) -> list[Figure]:
    """Make the pack for `notebooks` into `into` (the zips); keep the unzipped tree in `tree`.
    With `strict`, a redrawn figure that is not the stored one stops it (PackError); without,
    it is reported and the pack is made (a processor that cannot run the reference
    arithmetic). The caller's environment is left as it was (a test that builds here and then
    starts a kernel must not hand it MPLBACKEND=Agg: the kernel would draw no inline figure)."""
    saved = {k: os.environ.get(k) for k in ("MPLBACKEND", "PYTHONHASHSEED", "SOURCE_DATE_EPOCH")}
    os.environ.setdefault("MPLBACKEND", "Agg")
    os.environ["PYTHONHASHSEED"] = "0"
    os.environ["SOURCE_DATE_EPOCH"] = "0"
    try:
        return _build(notebooks, into, tree, strict)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _build(notebooks: list[Path], into: Path, tree: Path | None, strict: bool) -> list[Figure]:
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    everything: list[Figure] = []
    whole: list[tuple[str, bytes]] = []
    into.mkdir(parents=True, exist_ok=True)
    for ipynb in notebooks:
        found = stored_figures(ipynb)
        if not found:
            continue
        began = time.perf_counter()
        drawn = redraw(ipynb, {index for index, _, _ in found}, shell)
        print(
            f"figure_pack: {ipynb.stem}: {len(found)} figure(s) redrawn in "
            f"{time.perf_counter() - began:.1f} s",
            flush=True,
        )
        files: list[tuple[str, bytes]] = []
        for index, fig, png in found:
            again = drawn[index]["png"]
            if again != png and not strict:
                print(
                    f"figure_pack: note: {ipynb.name} {fig.number}: redrawn here, the figure "
                    "differs from the stored one (this processor's arithmetic): its SVG is "
                    "this processor's drawing",
                    flush=True,
                )
            elif again != png:
                raise PackError(
                    f"{ipynb.name} {fig.number}: redrawn, the figure is not the stored one "
                    "(run tools/execute_notebooks.py on it, or the arithmetic differs here)"
                )
            svg = titled_svg(
                drawn[index]["svg"].decode("utf-8"),
                f"{fig.number}: {fig.title}" if fig.title else fig.number,
                fig.alt,
            )
            files += [
                (fig.png, png),
                (fig.svg, svg.encode("utf-8")),
                (fig.pdf, drawn[index]["pdf"]),
                (fig.png2x, drawn[index]["png2x"]),
            ]
        entries = [fig for _, fig, _ in found]
        title = f"Figures of chapter {int(ipynb.stem[:2])}, {ipynb.stem}"
        prefix = f"{ipynb.stem}/"
        files += [
            (prefix + "index.md", index_markdown(title, entries).encode()),
            (prefix + "index.json", index_json(entries).encode()),
        ]
        readme = ("README.txt", readme_text().encode())
        teaching.write_zip(into / teaching.chapter_pack(ipynb.stem), [*files, readme])
        whole += files
        everything += entries
    title = "The figures of normcore"
    whole += [
        ("index.md", index_markdown(title, everything).encode()),
        ("index.json", index_json(everything).encode()),
        ("README.txt", readme_text().encode()),
    ]
    teaching.write_zip(into / teaching.WHOLE_PACK, whole)
    (into / "index.json").write_text(index_json(everything), encoding="utf-8")
    if tree is not None:
        for name, data in whole:
            path = tree / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    return everything


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="book/NN-*.ipynb (default: all)")
    parser.add_argument("--into", type=Path, default=SITE_DIR, help="where the zips go")
    parser.add_argument("--tree", type=Path, default=TREE, help="where the unzipped pack goes")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    notebooks = [p.resolve().with_suffix(".ipynb") for p in args.notebooks] or teaching.chapters()
    # before numpy loads in this process: the arithmetic the stored runs were made under
    strict = arith_matrix.reference(arith_matrix.this_cpu()) is not None
    print(f"figure_pack: {arith_matrix.use_reference()}", flush=True)
    try:
        figures = build(notebooks, args.into, args.tree, strict=strict)
    except (PackError, lab_book.RenderError) as error:
        raise SystemExit(f"figure_pack: {error}") from None
    print(
        f"figure_pack: {len(figures)} figures from {len({f.chapter for f in figures})} chapters "
        f"into {args.into} in {time.perf_counter() - start:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
