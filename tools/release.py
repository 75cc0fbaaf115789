"""A release: the package as students install it, both editions of the book and the citation,
as one archive with a checksum of every file; the instructor bundle beside it.

``make release`` first asks this (``--check``) whether the text can be released, and stops
before building anything when it cannot: while CHANGELOG.md's ``## Unreleased`` section holds
entries (they belong under the new version's heading), while pyproject.toml, CITATION.cff and
the changelog's newest ``## x.y.z`` name different versions, or while HEAD is not the tag
``v<version>`` with nothing uncommitted (a build of anything else names its commit, and a
release's number must name one text). Nothing is bumped here: the version is written by hand,
once, and tagged. Then it builds the wheel and sdist (``--wheel``), the reader's edition, the
student edition and the instructor bundle, and gathers them (no option):

    _build/release/
        normcore-<version>.zip             the archive below, one folder:
            normcore-<version>/
                site/       the reader's edition (_build/html): pages with the worked solutions
                            folded, normcore.pdf, figures/ (the figure pack), exercises/, the
                            solutions booklet, the teaching guide, dist/ (wheel and sdist)
                student/    the student edition (_build/student/_build/html): no solution in
                            any page, notebook or PDF; its own figures/, exercises/ and dist/
                CITATION.cff  CHANGELOG.md  LICENSE  README.txt
                SHA256SUMS  sha256sum -c SHA256SUMS checks every file above
        normcore_book-<version>-py3-none-any.whl, normcore_book-<version>.tar.gz
        normcore-instructor-<version>.zip  the instructor bundle (tools/instructor.py): keep it
                                           from students
        SHA256SUMS                         the four files above

Each piece is in the archive once: the figure pack and the exercise notebooks live in each
edition's site, where its pages link them, and nowhere else.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import teaching  # beside this file

SUMS = "SHA256SUMS"


class ReleaseError(RuntimeError):
    """A release that would be incomplete or inconsistent."""


def changelog_version(text: str) -> str:
    """The version of the changelog's newest entry (its first ``## x.y.z`` heading)."""
    match = re.search(r"^## (\d+\.\d+\.\d+)\b", text, re.MULTILINE)
    if not match:
        raise ReleaseError("CHANGELOG.md has no '## x.y.z' entry")
    return match.group(1)


def unreleased_entries(text: str) -> list[str]:
    """The entries (``- ...`` lines) under the changelog's ``## Unreleased`` heading."""
    match = re.search(r"^## Unreleased\b.*?$(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    if not match:
        return []
    return [line for line in match.group(1).splitlines() if re.match(r"\s*[-*] ", line)]


def citation_version(text: str) -> str:
    import yaml

    return str(yaml.safe_load(text)["version"])


def check_versions(root: Path = teaching.ROOT) -> str:
    """The version, once pyproject.toml, CITATION.cff and CHANGELOG.md agree on it."""
    version = teaching.release_version(root)
    cited = citation_version((root / "CITATION.cff").read_text(encoding="utf-8"))
    logged = changelog_version((root / "CHANGELOG.md").read_text(encoding="utf-8"))
    if not version == cited == logged:
        raise ReleaseError(
            f"versions differ: pyproject.toml {version}, CITATION.cff {cited}, "
            f"CHANGELOG.md {logged}"
        )
    return version


def check_releasable(root: Path = teaching.ROOT) -> str:
    """The version to release, or ReleaseError saying what to do first (nothing is changed)."""
    entries = unreleased_entries((root / "CHANGELOG.md").read_text(encoding="utf-8"))
    if entries:
        raise ReleaseError(
            f"CHANGELOG.md's Unreleased section holds {len(entries)} entries: move them under a "
            "new '## x.y.z (date)' heading, set that version in pyproject.toml and CITATION.cff, "
            "commit and tag it (git tag vx.y.z); nothing is bumped for you"
        )
    version = check_versions(root)
    built = teaching.version(root)
    if built != version:
        raise ReleaseError(
            f"this build's text is {built}, not the release {version}: HEAD must be the tag "
            f"v{version} with nothing uncommitted (git tag v{version})"
        )
    return version


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


PACKAGE_FILES = ("pyproject.toml", "README.md", "LICENSE")


def build_package(into: Path, version: str | None = None, root: Path = teaching.ROOT) -> list[Path]:
    """The wheel and the sdist of the package, at `version` (this build's text's: a development
    build's wheel names its commit), built by setuptools from a copy of the package's files with
    that version written in (the working tree is left alone; no download: the venv's setuptools,
    no build isolation)."""
    version = version or teaching.version(root)
    into.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        tree = Path(scratch) / "src"
        tree.mkdir()
        for name in PACKAGE_FILES:
            shutil.copyfile(root / name, tree / name)
        shutil.copytree(
            root / "normcore", tree / "normcore", ignore=shutil.ignore_patterns("__pycache__")
        )
        pyproject = tree / "pyproject.toml"
        text = pyproject.read_text(encoding="utf-8")
        text, count = re.subn(r'(?m)^version = "[^"]*"', f'version = "{version}"', text, count=1)
        if count != 1:
            raise ReleaseError("pyproject.toml has no version line")
        pyproject.write_text(text, encoding="utf-8")
        script = (
            # build_meta rewrites sys.argv: the target is read first
            "import sys; into = sys.argv[1]; from setuptools import build_meta as b; "
            "print(b.build_sdist(into)); print(b.build_wheel(into))"
        )
        done = subprocess.run(
            [sys.executable, "-c", script, str(into)],
            cwd=tree,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise ReleaseError(f"the package did not build:\n{done.stderr[-3000:]}")
    built = [into / teaching.sdist_name(version), into / teaching.wheel_name(version)]
    missing = [p.name for p in built if not p.is_file()]
    if missing:
        raise ReleaseError(f"setuptools wrote no {missing} into {into}")
    return built


README = """normcore: normalisation layers, computed -- release {version}

site/      the reader's edition, for self-study: open site/index.html (file:// works, widgets
           included; or serve the folder). Each chapter folds its worked solutions; the whole
           book is site/normcore.pdf; the figure pack is site/figures/, the exercise notebooks
           site/exercises/, the worked solutions site/solutions.html and .pdf, the teaching
           guide site/teaching-guide.html.
student/   the student edition: the same book with no worked solution in any page, chapter
           notebook, exercise notebook or PDF (student/normcore.pdf). Hand this one out.
dist/ in either site: the package, as students install it (import name normcore):
           pip install site/dist/{wheel}

The instructor bundle (solutions, answer keys, slides) is a separate file,
normcore-instructor-{version}.zip, made by `make instructor`; it is not in this archive.

Licences: {licence}
Attribution: {attribution}
Cite: CITATION.cff. Check the files: sha256sum -c SHA256SUMS
"""


def gather(
    site: Path,
    into: Path,
    root: Path = teaching.ROOT,
    student: Path | None = None,
    dist: Path = teaching.DIST,
    instructor: Path = teaching.INSTRUCTOR,
    version: str | None = None,
) -> Path:
    """Make ``into/normcore-<version>.zip`` from the built editions; the package and the
    instructor bundle beside it. Returns the archive."""
    version = version or check_versions(root)
    student = student if student is not None else teaching.build_dir("student") / "html"
    needed = {
        "reader's site": site / "index.html",
        "reader's PDF": site / "normcore.pdf",
        "solutions page": site / teaching.BOOKLET_HTML,
        "solutions PDF": site / teaching.BOOKLET_PDF,
        "teaching guide": site / teaching.GUIDE_HTML,
        "figure pack": site / teaching.FIGURES_DIR / teaching.WHOLE_PACK,
        "student site": student / "index.html",
        "student PDF": student / "normcore.pdf",
        "wheel": dist / teaching.wheel_name(version),
        "sdist": dist / teaching.sdist_name(version),
        "instructor bundle": instructor / f"normcore-instructor-{version}.zip",
    }
    missing = [f"{what} ({path})" for what, path in needed.items() if not path.is_file()]
    if not sorted((site / teaching.EXERCISES_DIR).glob("*-exercises.ipynb")):
        missing.append(f"exercise notebooks ({site / teaching.EXERCISES_DIR})")
    if not (site / teaching.DIST_DIR / teaching.wheel_name(version)).is_file():
        missing.append(f"wheel in the site ({site / teaching.DIST_DIR}: make book builds it)")
    if missing:
        raise ReleaseError(
            "the build left no " + "; no ".join(missing) + " (run make release; the PDFs need "
            "chromium and playwright: bash tools/ci_prepare.sh)"
        )
    if (student / teaching.BOOKLET_HTML).exists():
        raise ReleaseError(f"the student edition holds the solutions booklet ({student})")
    into.mkdir(parents=True, exist_ok=True)
    name = f"normcore-{version}"
    with tempfile.TemporaryDirectory() as scratch:
        target = Path(scratch) / name
        shutil.copytree(site, target / "site")
        shutil.copytree(student, target / "student")
        for extra in ("CITATION.cff", "CHANGELOG.md", "LICENSE"):
            shutil.copyfile(root / extra, target / extra)
        (target / "README.txt").write_text(
            README.format(
                version=version,
                wheel=teaching.wheel_name(version),
                licence=teaching.licence_note(),
                attribution=teaching.attribution(),
            ),
            encoding="utf-8",
        )
        files = sorted(p for p in target.rglob("*") if p.is_file())
        lines = [f"{sha256(p)}  {p.relative_to(target).as_posix()}" for p in files]
        (target / SUMS).write_text("\n".join(lines) + "\n", encoding="utf-8")
        entries = [
            (f"{name}/{p.relative_to(target).as_posix()}", p.read_bytes())
            for p in sorted(target.rglob("*"))
            if p.is_file()
        ]
        archive = teaching.write_zip(into / f"{name}.zip", entries, licence=False)
    beside = [archive]
    for what in ("wheel", "sdist", "instructor bundle"):
        copy = into / needed[what].name
        shutil.copyfile(needed[what], copy)
        beside.append(copy)
    lines = [f"{sha256(p)}  {p.name}" for p in beside]
    (into / SUMS).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return archive


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say whether it can release")
    parser.add_argument("--wheel", action="store_true", help="build the wheel and sdist only")
    parser.add_argument("--site", type=Path, default=teaching.build_dir("reader") / "html")
    parser.add_argument("--into", type=Path, default=teaching.ROOT / "_build" / "release")
    args = parser.parse_args(argv)
    try:
        if args.check:
            print(f"release: {check_releasable()} can be released")
            return 0
        if args.wheel:
            for path in build_package(teaching.DIST):
                print(f"release: {path} ({path.stat().st_size / 1e3:.0f} kB)")
            return 0
        archive = gather(args.site, args.into, version=check_releasable())
    except ReleaseError as error:
        raise SystemExit(f"release: {error}") from None
    print(f"release: {archive} ({archive.stat().st_size / 1e6:.1f} MB; checksums in {SUMS})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
