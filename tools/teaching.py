"""What the teaching downloads share: their names, the book's version, and deterministic zips.

One module names every file the teaching tools write and the site links, so the chapter page's
"take it with you" line (``book/_ext/take_away.py``), the tools that write the files
(``tools/figure_pack.py``, ``tools/exercise_notebooks.py``, ``tools/solutions_booklet.py``,
``tools/release.py``) and the tests agree without repeating a path:

* the figure pack: ``_build/html/figures/normcore-figures-chNN.zip`` per chapter with figures and
  ``normcore-figures.zip`` for the whole book;
* the exercise notebooks: ``_build/html/exercises/NN-name-exercises.ipynb`` (and in
  ``lab/exercises`` for JupyterLab);
* the solutions booklet: ``_build/html/solutions.html`` and ``solutions.pdf``.

The version is the one in ``pyproject.toml`` (the release's only source of it).
"""

from __future__ import annotations

import re
import tomllib
import zipfile
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
BUILD = ROOT / "_build"
SITE = BUILD / "html"

FIGURES_DIR = "figures"  # in the site
EXERCISES_DIR = "exercises"  # in the site, and lab/exercises
BOOKLET_HTML = "solutions.html"
BOOKLET_PDF = "solutions.pdf"
WHOLE_PACK = "normcore-figures.zip"

#: A zip entry's time: the earliest a zip can store, so that a rebuild gives the same bytes.
ZIP_TIME = (1980, 1, 1, 0, 0, 0)

EXERCISE = re.compile(r"^\*\*Exercise (\d+)[.:]", re.MULTILINE)


def version() -> str:
    """The book's version, from pyproject.toml's ``[project] version`` (or, in a copy of the
    book without it, the installed package's, which pip took from that file)."""
    pyproject = ROOT / "pyproject.toml"
    if not pyproject.is_file():
        from importlib.metadata import version as installed

        return installed("normcore")
    with pyproject.open("rb") as handle:
        return str(tomllib.load(handle)["project"]["version"])


def chapter_tag(stem: str) -> str:
    """``"ch02"`` for ``"02-worked-column"``."""
    return f"ch{stem[:2]}"


def chapter_pack(stem: str) -> str:
    """The file name of a chapter's figure zip."""
    return f"normcore-figures-{chapter_tag(stem)}.zip"


def exercise_notebook(stem: str) -> str:
    """The file name of a chapter's exercise notebook."""
    return f"{stem}-exercises.ipynb"


def chapters() -> list[Path]:
    """The executed chapters: every book/NN-name.ipynb with its .md beside it, in order."""
    return sorted(p for p in BOOK.glob("[0-9][0-9]-*.ipynb") if p.with_suffix(".md").exists())


def has_figures(nb) -> bool:
    """Whether a chapter's notebook has a captioned figure (the figure pack's unit)."""
    return any(
        c.cell_type == "code" and "caption" in c.metadata.get("mystnb", {}).get("figure", {})
        for c in nb.cells
    )


def has_exercises(nb) -> bool:
    """Whether a chapter's notebook asks an exercise (``**Exercise N.**`` in its prose)."""
    return any(c.cell_type == "markdown" and EXERCISE.search(c.source) for c in nb.cells)


def write_zip(target: Path, files: Iterable[tuple[str, bytes]]) -> Path:
    """Write `files` (name in the archive, bytes) into the zip `target`, in name order, with fixed
    times and permissions: the same files give the same bytes on every run."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(target, "w") as archive:
        for name, data in sorted(files):
            info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            info.create_system = 3  # unix, whatever the machine
            archive.writestr(info, data, compresslevel=9)
    return target
