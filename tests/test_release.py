"""The release a reader can cite: CITATION.cff valid under the Citation File Format's own schema,
one version in pyproject.toml, CITATION.cff and the changelog; a development build that names its
commit; make release refused while the changelog's Unreleased section holds entries or HEAD is not
the tag; its archive complete, each piece once, with a checksum of every file (tools/release.py,
on stand-in builds); the wheel installed into a fresh venv running an exercise notebook."""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
import subprocess
import sys
import zipfile
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
    assert release.check_versions() == teaching.release_version() == str(citation()["version"])
    assert str(citation()["preferred-citation"]["version"]) == teaching.release_version()
    assert citation()["title"] == yaml.safe_load((ROOT / "_config.yml").read_text())["title"]


def test_the_book_is_cited_as_a_book_under_its_licence():
    book = citation()["preferred-citation"]
    assert book["type"] == "book" and book["license"] == "CC-BY-4.0"
    assert book["title"] == citation()["title"]
    repo = teaching.repository()
    for key in ("url", "repository-code"):
        assert citation().get(key, "") == repo, f"CITATION.cff {key} is not _config.yml's"


def test_one_copyright_year():
    years = {
        "LICENSE": (ROOT / "LICENSE").read_text(),
        "_config.yml": str(yaml.safe_load((ROOT / "_config.yml").read_text())["copyright"]),
        "teaching": teaching.COPYRIGHT,
    }
    found = {name: set(re.findall(r"\b20\d\d\b", text)) for name, text in years.items()}
    assert all(f == {"2026"} for f in found.values()), found


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def stand_in_repo(tmp_path: Path, unreleased: str = "") -> Path:
    """A repository with this book's version files and a changelog whose Unreleased section
    holds `unreleased`, committed."""
    root = tmp_path / "repo"
    root.mkdir(parents=True)
    for name in ("CITATION.cff", "pyproject.toml"):
        (root / name).write_text((ROOT / name).read_text())
    version = teaching.release_version()
    (root / "CHANGELOG.md").write_text(
        f"# Changelog\n\n## Unreleased\n\n{unreleased}\n## {version} (2026-12-01)\n\n- first\n"
    )
    git(root, "init", "-q")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "stand-in")
    teaching.version.cache_clear()
    return root


def test_a_development_build_names_its_commit(tmp_path: Path):
    root = stand_in_repo(tmp_path)
    head = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--short=7", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    base = teaching.release_version()
    major, minor = (int(x) for x in base.split(".")[:2])
    assert teaching.version(root) == f"{major}.{minor + 1}.0.dev0+g{head}"
    git(root, "tag", f"v{base}")
    teaching.version.cache_clear()
    assert teaching.version(root) == base  # the tagged release
    (root / "pyproject.toml").write_text((root / "pyproject.toml").read_text() + "\n# edit\n")
    teaching.version.cache_clear()
    assert teaching.version(root) == f"{major}.{minor + 1}.0.dev0+g{head}"  # not the release
    teaching.version.cache_clear()


def test_release_refuses_unreleased_entries_and_an_untagged_commit(tmp_path: Path):
    root = stand_in_repo(tmp_path, unreleased="- a change\n- another\n")
    with pytest.raises(release.ReleaseError, match="Unreleased section holds 2 entries"):
        release.check_releasable(root)
    clean = stand_in_repo(tmp_path / "b")
    with pytest.raises(release.ReleaseError, match="must be the tag"):
        release.check_releasable(clean)
    git(clean, "tag", f"v{teaching.release_version()}")
    teaching.version.cache_clear()
    assert release.check_releasable(clean) == teaching.release_version()
    assert (clean / "CHANGELOG.md").read_text().count("## Unreleased") == 1  # nothing bumped
    teaching.version.cache_clear()


def test_this_changelog_is_refused_while_unreleased_holds_entries():
    text = (ROOT / "CHANGELOG.md").read_text()
    if release.unreleased_entries(text):
        with pytest.raises(release.ReleaseError, match="Unreleased"):
            release.check_releasable()


def test_a_changelog_without_the_version_is_refused(tmp_path: Path):
    for name in ("CITATION.cff", "pyproject.toml"):
        (tmp_path / name).write_text((ROOT / name).read_text())
    (tmp_path / "CHANGELOG.md").write_text("# Changelog\n\n## 0.0.1 (2020-01-01)\n")
    with pytest.raises(release.ReleaseError, match="versions differ"):
        release.check_versions(tmp_path)


def stand_in_builds(tmp_path: Path, version: str, exercises: bool = True) -> dict[str, Path]:
    """The shape of make release's builds, with every piece (tiny stand-in files)."""
    site, student = tmp_path / "html", tmp_path / "student"
    dist, instructor = tmp_path / "dist", tmp_path / "instructor"
    for base, names in (
        (
            site,
            [
                "index.html",
                "normcore.pdf",
                teaching.BOOKLET_HTML,
                teaching.BOOKLET_PDF,
                teaching.GUIDE_HTML,
                f"{teaching.FIGURES_DIR}/{teaching.WHOLE_PACK}",
                f"{teaching.DIST_DIR}/{teaching.wheel_name(version)}",
            ]
            + ([f"{teaching.EXERCISES_DIR}/02-worked-column-exercises.ipynb"] if exercises else []),
        ),
        (student, ["index.html", "normcore.pdf", f"{teaching.FIGURES_DIR}/{teaching.WHOLE_PACK}"]),
        (dist, [teaching.wheel_name(version), teaching.sdist_name(version)]),
        (instructor, [f"normcore-instructor-{version}.zip"]),
    ):
        for name in names:
            (base / name).parent.mkdir(parents=True, exist_ok=True)
            (base / name).write_text(f"stand-in {name}")
    return {"site": site, "student": student, "dist": dist, "instructor": instructor}


def test_release_archive_has_every_piece_once_and_its_checksums(tmp_path: Path):
    version = teaching.release_version()
    builds = stand_in_builds(tmp_path, version)
    archive = release.gather(into=tmp_path / "release", version=version, **builds)
    assert archive.name == f"normcore-{version}.zip"
    with zipfile.ZipFile(archive) as z:
        names = z.namelist()
        top = f"normcore-{version}/"
        assert all(n.startswith(top) for n in names)
        inside = {n[len(top) :] for n in names}
        sums = dict(
            reversed(line.split("  ", 1))
            for line in z.read(top + release.SUMS).decode().splitlines()
        )
        for name, digest in sums.items():
            assert hashlib.sha256(z.read(top + name)).hexdigest() == digest
    expected = {
        "site/index.html",
        "site/normcore.pdf",
        f"site/{teaching.BOOKLET_HTML}",
        f"site/{teaching.GUIDE_HTML}",
        f"site/{teaching.FIGURES_DIR}/{teaching.WHOLE_PACK}",
        f"site/{teaching.DIST_DIR}/{teaching.wheel_name(version)}",
        "site/exercises/02-worked-column-exercises.ipynb",
        "student/index.html",
        "student/normcore.pdf",
        "CITATION.cff",
        "CHANGELOG.md",
        "LICENSE",
        "README.txt",
    }
    assert expected <= inside
    assert set(sums) == inside - {release.SUMS}
    # no folder twice: the figure pack and the exercises only inside each edition's site
    assert not {n for n in inside if n.split("/")[0] in ("figures", "exercises")}
    beside = {p.name for p in (tmp_path / "release").iterdir()}
    assert {
        archive.name,
        teaching.wheel_name(version),
        teaching.sdist_name(version),
        f"normcore-instructor-{version}.zip",
        release.SUMS,
    } == beside


def test_an_incomplete_build_is_refused(tmp_path: Path):
    version = teaching.release_version()
    builds = stand_in_builds(tmp_path, version, exercises=False)
    (builds["site"] / teaching.BOOKLET_PDF).unlink()
    with pytest.raises(release.ReleaseError, match="solutions PDF.*exercise notebooks"):
        release.gather(into=tmp_path / "release", version=version, **builds)


def test_a_student_edition_with_the_booklet_is_refused(tmp_path: Path):
    version = teaching.release_version()
    builds = stand_in_builds(tmp_path, version)
    (builds["student"] / teaching.BOOKLET_HTML).write_text("answers")
    with pytest.raises(release.ReleaseError, match="student edition holds"):
        release.gather(into=tmp_path / "release", version=version, **builds)


@pytest.mark.notebook
def test_the_wheel_installs_into_a_fresh_venv_and_runs_an_exercise_notebook(tmp_path: Path):
    """make release's wheel, installed (no index, no dependencies fetched) into a new venv that
    sees only the shared venv's third-party packages (not the editable normcore): importing
    normcore comes from the wheel, and chapter 2's exercise notebook runs from a blank kernel
    started by that venv's python, every checker prompting for an answer."""
    import exercise_notebooks
    import nbformat
    from nbclient import NotebookClient

    from normcore.exercises import PROMPT

    wheel, sdist = release.build_package(tmp_path / "dist")[::-1]
    assert wheel.name == teaching.wheel_name() and sdist.name == teaching.sdist_name()
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
    assert "normcore/data/digits.csv.gz" in names and "normcore/widgets/js/page.js" in names
    venv = tmp_path / "fresh"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    shared = [p for p in sys.path if p.endswith("site-packages")][0]
    (Path(site) / "shared.pth").write_text(shared + "\n")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-index",
            "--no-deps",
            str(wheel),
        ],
        check=True,
    )
    where = subprocess.run(
        [str(python), "-c", "import normcore; print(normcore.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
    ).stdout.strip()
    assert where.startswith(site), where
    kernels = tmp_path / "share" / "jupyter" / "kernels" / "fresh"
    kernels.mkdir(parents=True)
    (kernels / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "fresh",
                "language": "python",
                "env": {"PYTHONPATH": "", "PATH": "/usr/bin:/bin"},
            }
        )
    )
    nb = exercise_notebooks.exercise_notebook(teaching.BOOK / "02-worked-column.ipynb")
    probe = nbformat.v4.new_code_cell("import normcore; print(normcore.__file__)")
    nb.cells.append(probe)
    saved = os.environ.get("JUPYTER_PATH")
    os.environ["JUPYTER_PATH"] = str(tmp_path / "share" / "jupyter")
    try:
        NotebookClient(
            nb, kernel_name="fresh", timeout=300, resources={"metadata": {"path": str(tmp_path)}}
        ).execute()
    finally:
        if saved is None:
            os.environ.pop("JUPYTER_PATH", None)
        else:
            os.environ["JUPYTER_PATH"] = saved
    assert nb.cells[-1].outputs[0]["text"].strip().startswith(site)
    prompts = [
        o["data"]["text/plain"]
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if o.get("output_type") == "execute_result"
    ]
    assert prompts.count(repr(PROMPT)) + prompts.count(PROMPT) >= 3, prompts
