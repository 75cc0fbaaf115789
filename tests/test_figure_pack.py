"""The figure pack (tools/figure_pack.py): every figure as SVG, PDF and PNG (1x, 2x), slide-grade.

* Built for one chapter in a temporary folder, twice: the zips are the same bytes; each figure's
  PNG is the stored output itself; its SVG parses as SVG, carries no date, keeps its text as
  text in a named font and has a <title> (number and short title) and a <desc> (the alt text);
  its PDF is a PDF; its @2x PNG is twice the page PNG's width; every legend is 9 pt or more in
  the slide files; the file names carry the figure number; every zip holds the LICENSE and a
  README with the licence and the attribution line; the index gives the number, short title,
  caption and alt text.
* book/figures.yml: a short title and an alt text for every figure of every chapter, and no
  alt text that is the caption again.
* On the built site (``make book``): the whole-book zip holds every captioned figure of every
  chapter, and each index entry's alt text is the alt text of that figure's image on its page.
"""

from __future__ import annotations

import base64
import json
import os
import xml.etree.ElementTree as ET
import zipfile
from html.parser import HTMLParser
from pathlib import Path

import figure_pack  # tools/ is on the path (pyproject: pythonpath)
import lab_book
import nbformat
import pytest
import teaching

ROOT = Path(__file__).resolve().parent.parent
CHAPTER = ROOT / "book" / "02-worked-column.ipynb"  # one figure, a short run
SVG = "{http://www.w3.org/2000/svg}svg"


# Building the pack runs a chapter's cells (in this process): not part of make check.
pytestmark = pytest.mark.notebook


@pytest.fixture(scope="module")
def two_builds(tmp_path_factory) -> tuple[Path, Path]:
    first = tmp_path_factory.mktemp("first")
    second = tmp_path_factory.mktemp("second")
    figure_pack.build([CHAPTER], first)
    figure_pack.build([CHAPTER], second)
    return first, second


def test_the_same_bytes_twice(two_builds):
    first, second = two_builds
    names = sorted(p.name for p in first.iterdir())
    assert names == sorted(p.name for p in second.iterdir())
    assert teaching.chapter_pack(CHAPTER.stem) in names and teaching.WHOLE_PACK in names
    for name in names:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


def test_each_figure_is_the_stored_png_and_a_clean_svg(two_builds):
    first, _ = two_builds
    nb = nbformat.read(CHAPTER, as_version=4)
    figs = lab_book.figures(nb, CHAPTER.stem)
    with zipfile.ZipFile(first / teaching.chapter_pack(CHAPTER.stem)) as archive:
        index = json.loads(archive.read(f"{CHAPTER.stem}/index.json"))
        assert index["version"] == teaching.version()
        assert [f["label"] for f in index["figures"]] == list(figs)
        for entry in index["figures"]:
            cell_index, number, caption = figs[entry["label"]]
            assert entry["number"] == number and entry["caption"] == caption
            stored = [
                base64.b64decode(o["data"]["image/png"])
                for o in nb.cells[cell_index].outputs
                if "image/png" in o.get("data", {})
            ]
            assert archive.read(entry["png"]) == stored[0]
            svg = archive.read(entry["svg"])
            root = ET.fromstring(svg)
            assert root.tag == SVG and float(root.get("width").removesuffix("pt")) > 100
            assert b"<dc:date>" not in svg, "the SVG carries a date"
            assert b"<text" in svg and b"font-family: 'DejaVu Sans'" in svg, "text as paths"
            title = root.find("{http://www.w3.org/2000/svg}title")
            desc = root.find("{http://www.w3.org/2000/svg}desc")
            assert title is not None and title.text == f"{number}: {entry['title']}"
            assert desc is not None and desc.text == entry["alt"] != entry["caption"]
            digits = number.split(" ", 1)[1]
            for kind in ("png", "svg", "pdf", "png2x"):
                assert Path(entry[kind]).name.startswith(f"fig{digits}-"), entry[kind]
            assert archive.read(entry["pdf"]).startswith(b"%PDF-")
            page_png, big = archive.read(entry["png"]), archive.read(entry["png2x"])
            width = int.from_bytes(page_png[16:20], "big")
            assert int.from_bytes(big[16:20], "big") >= 2 * width - 4
        names = archive.namelist()
        assert "LICENSE" in names and archive.read("LICENSE") == (ROOT / "LICENSE").read_bytes()
        readme = archive.read("README.txt").decode()
        assert "CC BY 4.0" in readme and teaching.attribution() in readme


def test_slide_legends_are_raised_to_nine_points():
    """A legend drawn at 7 pt (as Figs 4.2 and 7.3 are on the page): the slide copy's is 9 pt."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0, 1], label="a line")
    ax.legend(fontsize=7)
    figure_pack.legends_at_least(fig)
    assert [t.get_fontsize() for t in ax.get_legend().get_texts()] == [9.0]
    plt.close(fig)


def test_every_figure_has_a_short_title_and_alt_text_that_is_not_its_caption():
    notes = teaching.figure_notes()
    for ipynb in teaching.chapters():
        nb = nbformat.read(ipynb, as_version=4)
        for label, (_, number, caption) in lab_book.figures(nb, ipynb.stem).items():
            note = notes.get(ipynb.stem, {}).get(label)
            assert note, f"book/figures.yml has no entry for {ipynb.stem} {label} ({number})"
            assert note.get("title") and len(note["title"].split()) <= 12, (number, note)
            alt = " ".join(note.get("alt", "").split())
            assert len(alt.split()) >= 15, f"{number}: alt text too short to describe it"
            assert alt[:60] not in " ".join(caption.split()), f"{number}: alt is the caption"


def test_a_redrawn_figure_that_differs_is_refused(monkeypatch, tmp_path):
    real = figure_pack.redraw

    def nudged(*args, **kwargs):
        return {k: {**v, "png": v["png"] + b"\0"} for k, v in real(*args, **kwargs).items()}

    monkeypatch.setattr(figure_pack, "redraw", nudged)
    with pytest.raises(figure_pack.PackError, match="not the stored one"):
        figure_pack.build([CHAPTER], tmp_path)


SITE = ROOT / "_build" / "html"
WHOLE = SITE / teaching.FIGURES_DIR / teaching.WHOLE_PACK


def plain(text: str) -> str:
    """`text` with its spaces squeezed and Sphinx's smart quotes and dashes undone."""
    for smart, ascii_ in (("\u2019", "'"), ("\u2018", "'"), ("\u201c", '"'), ("\u201d", '"')):
        text = text.replace(smart, ascii_)
    text = text.replace("\u2014", "---").replace("\u2013", "--")
    return " ".join(text.split())


class Images(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.alts: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "img" and "_images/" in a.get("src", ""):
            self.alts.append(plain(a.get("alt") or ""))


@pytest.mark.site
@pytest.mark.skipif(not WHOLE.is_file(), reason="the site is not built; run `make book` first")
def test_the_built_pack_holds_every_figure_with_the_page_alt_text():
    with zipfile.ZipFile(WHOLE) as archive:
        index = json.loads(archive.read("index.json"))
        names = set(archive.namelist())
        by_chapter: dict[str, list[dict]] = {}
        for entry in index["figures"]:
            by_chapter.setdefault(entry["chapter"], []).append(entry)
            assert {entry["png"], entry["svg"]} <= names
            assert ET.fromstring(archive.read(entry["svg"])).tag == SVG
    for ipynb in teaching.chapters():
        nb = nbformat.read(ipynb, as_version=4)
        figs = lab_book.figures(nb, ipynb.stem)
        entries = by_chapter.get(ipynb.stem, [])
        assert [e["label"] for e in entries] == list(figs), ipynb.stem
        if not figs:
            continue
        assert (SITE / teaching.FIGURES_DIR / teaching.chapter_pack(ipynb.stem)).is_file()
        page = Images()
        page.feed((SITE / "book" / f"{ipynb.stem}.html").read_text(encoding="utf-8"))
        for entry in entries:
            assert plain(entry["alt"]) in page.alts, (ipynb.stem, entry["label"], page.alts)


def test_without_the_reference_a_differing_figure_is_reported_not_refused(
    monkeypatch, tmp_path, capsys
):
    """On a processor that cannot run the reference arithmetic (ARM), the pack is made and says
    which figure's SVG is this processor's drawing."""
    real = figure_pack.redraw

    def nudged(*args, **kwargs):
        return {k: {**v, "png": v["png"] + b"\0"} for k, v in real(*args, **kwargs).items()}

    monkeypatch.setattr(figure_pack, "redraw", nudged)
    monkeypatch.delenv("MPLBACKEND", raising=False)
    figures = figure_pack.build([CHAPTER], tmp_path, strict=False)
    # the caller's environment is as it was: a kernel started next would otherwise draw nothing
    assert "MPLBACKEND" not in os.environ
    assert figures and (tmp_path / teaching.chapter_pack(CHAPTER.stem)).is_file()
    said = capsys.readouterr().out
    assert f"{CHAPTER.name} {figures[0].number}: redrawn here, the figure differs" in said
