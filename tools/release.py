"""Gather a release into one folder: the site, the PDF, the figure pack, the exercise notebooks
and the solutions booklet, with the citation, the changelog and a checksum of every file.

``make release`` runs ``make book`` first (which builds all of these from the stored runs), then
this, which builds nothing: it copies what the build left and refuses an incomplete release.

    _build/release/normcore-<version>/
        site/                              the static site (_build/html), as served
        normcore-<version>.pdf             the book
        normcore-<version>-solutions.pdf   the solutions booklet (and site/solutions.html)
        figures/                           normcore-figures.zip and one zip per chapter
        exercises/                         one exercise notebook per chapter with exercises
        CITATION.cff  CHANGELOG.md  LICENSE
        SHA256SUMS                         sha256sum -c SHA256SUMS checks every file above

The version is pyproject.toml's; the release is refused unless CITATION.cff and the changelog's
newest entry name the same one.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import sys
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


def citation_version(text: str) -> str:
    import yaml

    return str(yaml.safe_load(text)["version"])


def check_versions(root: Path = teaching.ROOT) -> str:
    """The version, once pyproject.toml, CITATION.cff and CHANGELOG.md agree on it."""
    version = teaching.version()
    cited = citation_version((root / "CITATION.cff").read_text(encoding="utf-8"))
    logged = changelog_version((root / "CHANGELOG.md").read_text(encoding="utf-8"))
    if not version == cited == logged:
        raise ReleaseError(
            f"versions differ: pyproject.toml {version}, CITATION.cff {cited}, "
            f"CHANGELOG.md {logged}"
        )
    return version


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def gather(site: Path, into: Path, root: Path = teaching.ROOT) -> Path:
    """Copy the built `site` and its downloads into ``into/normcore-<version>``; write the sums."""
    version = check_versions(root)
    needed = {
        "site": site / "index.html",
        "book PDF": site / "normcore.pdf",
        "solutions page": site / teaching.BOOKLET_HTML,
        "solutions PDF": site / teaching.BOOKLET_PDF,
        "figure pack": site / teaching.FIGURES_DIR / teaching.WHOLE_PACK,
    }
    missing = [f"{what} ({path})" for what, path in needed.items() if not path.is_file()]
    exercises = sorted((site / teaching.EXERCISES_DIR).glob("*-exercises.ipynb"))
    if not exercises:
        missing.append(f"exercise notebooks ({site / teaching.EXERCISES_DIR})")
    if missing:
        raise ReleaseError(
            "the build left no " + "; no ".join(missing) + " (run make book; the PDFs need "
            "chromium and playwright: bash tools/ci_prepare.sh)"
        )
    target = into / f"normcore-{version}"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(site, target / "site")
    shutil.copyfile(needed["book PDF"], target / f"normcore-{version}.pdf")
    shutil.copyfile(needed["solutions PDF"], target / f"normcore-{version}-solutions.pdf")
    shutil.copytree(site / teaching.FIGURES_DIR, target / "figures")
    (target / "exercises").mkdir()
    for notebook in exercises:
        shutil.copyfile(notebook, target / "exercises" / notebook.name)
    for name in ("CITATION.cff", "CHANGELOG.md", "LICENSE"):
        shutil.copyfile(root / name, target / name)
    files = sorted(p for p in target.rglob("*") if p.is_file() and p.name != SUMS)
    lines = [f"{sha256(p)}  {p.relative_to(target).as_posix()}" for p in files]
    (target / SUMS).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=teaching.SITE)
    parser.add_argument("--into", type=Path, default=teaching.BUILD / "release")
    args = parser.parse_args(argv)
    try:
        target = gather(args.site, args.into)
    except ReleaseError as error:
        raise SystemExit(f"release: {error}") from None
    count = len((target / SUMS).read_text().splitlines())
    size = sum(p.stat().st_size for p in target.rglob("*") if p.is_file())
    print(f"release: {target} ({count} files, {size / 1e6:.1f} MB; checksums in {SUMS})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
