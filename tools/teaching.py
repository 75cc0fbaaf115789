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

Editions (``NORMCORE_EDITION``, set by the Makefile's targets):

* ``reader`` (``make book``): the site for self-study, each worked solution folded under its
  exercise, the solutions booklet beside it; built into ``_build/html``;
* ``student`` (``make student``): pages, chapter notebooks and PDF with no solution, exercise
  notebooks whose headers point to none, no booklet; built into ``_build/student/_build/html``;
* the instructor bundle (``make instructor``, ``tools/instructor.py``) is made from the reader's
  build: the booklet, its PDF, the answer keys, the teaching guide and the slides.

The version: ``pyproject.toml``'s where the commit is the tag ``v<version>`` (a release);
any other build names its commit, ``<next minor>.dev0+g<commit>``, so that two different texts
never carry one number (a build with uncommitted changes names the commit they sit on).
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import tomllib
import zipfile
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"

EDITIONS = ("reader", "student")


def edition() -> str:
    """The edition being built: ``$NORMCORE_EDITION``, ``reader`` unless set."""
    chosen = os.environ.get("NORMCORE_EDITION", "") or "reader"
    if chosen not in EDITIONS:
        raise ValueError(f"NORMCORE_EDITION={chosen!r}: not one of {EDITIONS}")
    return chosen


def build_dir(which: str | None = None) -> Path:
    """Where an edition's build goes: ``_build`` (reader), ``_build/student/_build`` (student;
    ``jupyter-book build --path-output _build/student`` writes there)."""
    which = which or edition()
    return ROOT / "_build" if which == "reader" else ROOT / "_build" / "student" / "_build"


BUILD = build_dir()
SITE = BUILD / "html"
INSTRUCTOR = ROOT / "_build" / "instructor"
DIST = ROOT / "_build" / "dist"  # make release's wheel and sdist (copied into the site's dist/)
DIST_DIR = "dist"  # in the site
DISTRIBUTION = "normcore-book"  # the name on the package index; the import name is normcore
GUIDE_HTML = "teaching-guide.html"
SLIDES_DIR = "slides"

#: The licences: text and figures, code (LICENSE holds both; every zip and the release carry it).
TEXT_LICENCE = "CC BY 4.0"
TEXT_LICENCE_URL = "https://creativecommons.org/licenses/by/4.0/"
CODE_LICENCE = "MIT"
COPYRIGHT = "2026 the normcore authors"

FIGURES_DIR = "figures"  # in the site
EXERCISES_DIR = "exercises"  # in the site, and lab/exercises
BOOKLET_HTML = "solutions.html"
BOOKLET_PDF = "solutions.pdf"
WHOLE_PACK = "normcore-figures.zip"

#: A zip entry's time: the earliest a zip can store, so that a rebuild gives the same bytes.
ZIP_TIME = (1980, 1, 1, 0, 0, 0)

EXERCISE = re.compile(r"^\*\*Exercise (\d+)[.:]", re.MULTILINE)


def release_version(root: Path = ROOT) -> str:
    """The version pyproject.toml's ``[project] version`` names (or, in a copy of the book
    without it, the installed package's, which pip took from that file)."""
    pyproject = root / "pyproject.toml"
    if not pyproject.is_file():
        from importlib.metadata import PackageNotFoundError
        from importlib.metadata import version as installed

        try:
            return installed(DISTRIBUTION)
        except PackageNotFoundError:
            return installed("normcore")
    with pyproject.open("rb") as handle:
        return str(tomllib.load(handle)["project"]["version"])


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, check=False
        )
    except OSError:
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def development_version(base: str, commit: str, dirty: bool = False) -> str:
    """``0.2.0.dev0+g1a2b3c4`` for a build of commit 1a2b3c4 after release 0.1.0 (PEP 440: it
    sorts after 0.1.0 and before 0.2.0)."""
    major, minor, *_ = (int(part) for part in re.findall(r"\d+", base)[:3])
    local = f"g{commit}" + (".dirty" if dirty else "")
    return f"{major}.{minor + 1}.0.dev0+{local}"


@functools.cache
def version(root: Path = ROOT) -> str:
    """The version of the text being built: the release's where HEAD is the tag ``v<version>``
    with nothing uncommitted (or where there is no git history: a release's own copy), else the
    development version naming the commit."""
    base = release_version(root)
    commit = _git(root, "rev-parse", "--short=7", "HEAD")
    if commit is None:
        return base
    tags = (_git(root, "tag", "--points-at", "HEAD") or "").split()
    status = _git(root, "status", "--porcelain", "--untracked-files=no")
    dirty = bool(status)
    if f"v{base}" in tags and not dirty:
        return base
    # uncommitted changes are not named (a build and the tests run beside it must agree on one
    # version); a tagged commit with them is not the release
    return development_version(base, commit)


def is_release(root: Path = ROOT) -> bool:
    """Whether this build is of a tagged release."""
    return version(root) == release_version(root)


def config() -> dict:
    """_config.yml, read (empty in a copy of the book without it: lab/ on Binder, say)."""
    import yaml

    path = ROOT / "_config.yml"
    return yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else {}


def repository() -> str:
    """The book's repository address, configured once (_config.yml's ``repository: url``);
    empty when none is set (the pages then say how to get the release instead)."""
    return str((config().get("repository") or {}).get("url") or "").strip().rstrip("/")


def attribution() -> str:
    """The ready attribution line for reusing the text or a figure."""
    where = repository()
    return (
        f"From “normcore: normalisation layers, computed” (version {version()}), © "
        f"{COPYRIGHT}, {TEXT_LICENCE} ({TEXT_LICENCE_URL})" + (f", {where}" if where else "") + "."
    )


def attribution_html() -> str:
    """The attribution line as HTML, its addresses as links (a page names no bare address)."""
    import html

    text = html.escape(attribution())
    return re.sub(r"(https?://[^\s,)]+?)(?=[\s,)]|\.?$)", r'<a href="\1">\1</a>', text)


def licence_note() -> str:
    """The licence line for every page's footer and every download's README."""
    return f"Text and figures © {COPYRIGHT}, {TEXT_LICENCE}; code {CODE_LICENCE} (see LICENSE)."


def licence_bytes() -> tuple[str, bytes]:
    """The LICENSE to put inside a zip: (name in the archive, bytes)."""
    return ("LICENSE", (ROOT / "LICENSE").read_bytes())


def wheel_name(ver: str | None = None) -> str:
    """The wheel ``make release`` builds (the distribution's name, normalised as wheels do)."""
    return f"{DISTRIBUTION.replace('-', '_')}-{ver or version()}-py3-none-any.whl"


def sdist_name(ver: str | None = None) -> str:
    return f"{DISTRIBUTION.replace('-', '_')}-{ver or version()}.tar.gz"


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


def write_zip(target: Path, files: Iterable[tuple[str, bytes]], licence: bool = True) -> Path:
    """Write `files` (name in the archive, bytes) into the zip `target`, in name order, with fixed
    times and permissions: the same files give the same bytes on every run. Every zip holds the
    book's LICENSE at its top (unless `files` already has one)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    files = dict(files)
    if licence:
        name, data = licence_bytes()
        files.setdefault(name, data)
    with zipfile.ZipFile(target, "w") as archive:
        for name, data in sorted(files.items()):
            info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            info.create_system = 3  # unix, whatever the machine
            archive.writestr(info, data, compresslevel=9)
    return target


# --- the student edition: the same stored runs without their worked solutions ---------------

SOLUTION_START = ":::{dropdown} Solution"
GLUE_ROLE = re.compile(r"\{glue(?::\w+)?\}`([A-Za-z0-9_]+)")


def _split_solutions(text: str) -> tuple[str, list[str]]:
    """(the markdown without its ``:::{dropdown} Solution`` blocks, the blocks removed)."""
    kept: list[str] = []
    removed: list[str] = []
    block: list[str] | None = None
    for line in text.splitlines(keepends=True):
        if block is None and line.strip().startswith(SOLUTION_START):
            block = [line]
        elif block is not None:
            block.append(line)
            if line.strip() == ":::":
                removed.append("".join(block))
                block = None
        else:
            kept.append(line)
    if block is not None:  # an unclosed block: drop it all the same
        removed.append("".join(block))
    return "".join(kept), removed


#: The chapters' sentences about where the solutions are, and what the student edition says
#: instead (each must be true of the edition it appears in).
STUDENT_SENTENCES = (
    (
        re.compile(r"A\s+worked\s+solution\s+sits\s+folded\s+under\s+each(?:\s+one)?\."),
        "This student edition leaves the worked solutions out: your teacher has them.",
    ),
)
FOLDED = re.compile(r"solutions?\s+(?:sits|sit|is|are)\s+folded", re.IGNORECASE)


def _glue_name(output) -> str | None:
    return ((output.get("metadata") or {}).get("scrapbook") or {}).get("name")


def strip_solutions(nb) -> int:
    """Take every worked solution out of a chapter's notebook, in place; the number removed.

    Removed: each markdown cell's ``:::{dropdown} Solution`` blocks (and the sentence saying
    they sit folded under the exercises, said of this edition instead); each glued value that only
    those blocks cite (its stored output: the code cells stay, so the notebook still runs).
    What the rest of the page cites stays, so the page renders as before without the blocks."""
    removed_text: list[str] = []
    for cell in nb.cells:
        if cell.cell_type == "markdown" and SOLUTION_START in cell.source:
            cell.source, gone = _split_solutions(cell.source)
            removed_text += gone
        if cell.cell_type == "markdown":
            for pattern, instead in STUDENT_SENTENCES:
                cell.source = pattern.sub(instead, cell.source)
    if not removed_text:
        return 0
    cited_kept = {
        name
        for cell in nb.cells
        if cell.cell_type == "markdown"
        for name in GLUE_ROLE.findall(cell.source)
    }
    only_solutions = {
        name for text in removed_text for name in GLUE_ROLE.findall(text)
    } - cited_kept
    for cell in nb.cells:
        if cell.cell_type == "code" and only_solutions:
            outputs = cell.get("outputs", [])
            cell.outputs = [o for o in outputs if _glue_name(o) not in only_solutions]
    return len(removed_text)


MARKUP = re.compile(r"\{[a-z:]+\}`[^`]*`|\$\$.*?\$\$|\$[^$]*\$|`[^`]*`|[*_]|\[|\]\([^)]*\)|\n\n")


def solution_passages(nb, words: int = 6) -> list[str]:
    """Passages of a chapter's worked solutions to look for in a built edition: in each block,
    the runs of at least `words` words of plain prose (no role, math, code or emphasis inside,
    so that they read the same in a page, a notebook and a PDF), whitespace squeezed."""
    found = []
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for block in _split_solutions(cell.source)[1]:
            body = "\n".join(block.splitlines()[1:-1])
            for run in MARKUP.split(body):
                tokens = run.strip(" \n,.;:()").split()
                if len(tokens) >= words:
                    found.append(" ".join(tokens))
    return found


QUOTES = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "–": "-", "—": "-", "\u00a0": " "})


def squeeze(text: str) -> str:
    """Text as compared for solutions: quotes and dashes plain, whitespace squeezed."""
    return " ".join(text.translate(QUOTES).split())


FIGURE_NOTES = BOOK / "figures.yml"


@functools.cache
def figure_notes() -> dict[str, dict[str, dict[str, str]]]:
    """book/figures.yml: for each chapter (its file stem) and figure label, a short ``title``
    and the ``alt`` text (what the figure shows, for a reader who cannot see it). The site's
    images (book/_ext/accessible.py), the figure pack and the slides read it."""
    import yaml

    if not FIGURE_NOTES.is_file():
        return {}
    return yaml.safe_load(FIGURE_NOTES.read_text(encoding="utf-8")) or {}
