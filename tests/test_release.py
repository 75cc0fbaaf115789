"""The release a reader can cite: CITATION.cff valid under the Citation File Format's own schema,
one version in pyproject.toml, CITATION.cff and the changelog, and make release's folder complete
with a checksum of every file (tools/release.py, on a stand-in build)."""

from __future__ import annotations

import datetime
import hashlib
import json
from pathlib import Path

import pytest
import release  # tools/ is on the path (pyproject: pythonpath)
import teaching
import yaml

ROOT = Path(__file__).resolve().parent.parent
# The Citation File Format 1.2.0 schema (citation-file-format.github.io/1.2.0/schema.json), as
# the cffconvert 2.0.0 wheel ships it; cffconvert itself needs jsonschema < 4, which nbformat's
# locked jsonschema excludes, so the schema is validated with that jsonschema.
SCHEMA = ROOT / "tests" / "data" / "citation-file-format-1.2.0.schema.json"


def cff_errors(document: dict) -> list[str]:
    """Every schema error of a CITATION.cff document (dates cast to text, as the schema asks)."""
    from jsonschema import Draft7Validator, FormatChecker

    def text_dates(value):
        if isinstance(value, datetime.date):
            return value.isoformat()
        if isinstance(value, dict):
            return {k: text_dates(v) for k, v in value.items()}
        if isinstance(value, list):
            return [text_dates(v) for v in value]
        return value

    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    validator = Draft7Validator(schema, format_checker=FormatChecker())
    return [e.message for e in validator.iter_errors(text_dates(document))]


def citation() -> dict:
    return yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))


def test_citation_is_valid_under_the_schema():
    assert cff_errors(citation()) == []


def test_the_schema_check_can_fail():
    broken = citation()
    del broken["authors"]
    broken["date-released"] = "2026-13-40"
    errors = cff_errors(broken)
    assert any("authors" in e for e in errors) and any("2026-13-40" in e for e in errors)


def test_one_version_everywhere():
    assert release.check_versions() == teaching.version() == str(citation()["version"])
    assert citation()["title"] == yaml.safe_load((ROOT / "_config.yml").read_text())["title"]


def test_a_changelog_without_the_version_is_refused(tmp_path: Path):
    for name in ("CITATION.cff", "pyproject.toml"):
        (tmp_path / name).write_text((ROOT / name).read_text())
    (tmp_path / "CHANGELOG.md").write_text("# Changelog\n\n## 0.0.1 (2020-01-01)\n")
    with pytest.raises(release.ReleaseError, match="versions differ"):
        release.check_versions(tmp_path)


def stand_in_site(site: Path, exercises: bool = True) -> None:
    """A built site's shape, with every piece a release gathers (tiny stand-in files)."""
    for name in ("index.html", "normcore.pdf", teaching.BOOKLET_HTML, teaching.BOOKLET_PDF):
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_text(f"stand-in {name}")
    (site / teaching.FIGURES_DIR).mkdir()
    (site / teaching.FIGURES_DIR / teaching.WHOLE_PACK).write_bytes(b"PK stand-in")
    if exercises:
        (site / teaching.EXERCISES_DIR).mkdir()
        (site / teaching.EXERCISES_DIR / "02-worked-column-exercises.ipynb").write_text("{}")


def test_release_folder_has_every_piece_and_its_checksum(tmp_path: Path):
    site = tmp_path / "html"
    stand_in_site(site)
    target = release.gather(site, tmp_path / "release")
    version = teaching.version()
    assert target.name == f"normcore-{version}"
    expected = {
        "site/index.html",
        f"normcore-{version}.pdf",
        f"normcore-{version}-solutions.pdf",
        f"site/{teaching.BOOKLET_HTML}",
        f"figures/{teaching.WHOLE_PACK}",
        "exercises/02-worked-column-exercises.ipynb",
        "CITATION.cff",
        "CHANGELOG.md",
        "LICENSE",
    }
    sums = {}
    for line in (target / release.SUMS).read_text().splitlines():
        digest, name = line.split("  ", 1)
        sums[name] = digest
    assert expected <= set(sums)
    files = {p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file()}
    assert set(sums) == files - {release.SUMS}
    for name, digest in sums.items():
        assert hashlib.sha256((target / name).read_bytes()).hexdigest() == digest


def test_an_incomplete_build_is_refused(tmp_path: Path):
    site = tmp_path / "html"
    stand_in_site(site, exercises=False)
    (site / teaching.BOOKLET_PDF).unlink()
    with pytest.raises(release.ReleaseError, match="solutions PDF.*exercise notebooks"):
        release.gather(site, tmp_path / "release")
