"""The teaching guide, the slides and the instructor bundle, as `make book` and
`make instructor` leave them; and a LICENSE in every zip the site offers.

* The guide (tools/teaching_guide.py): every chapter with its objectives and prerequisites
  (book/teaching.yml), its reading time from its word count, its Run All time as measured
  (book/run-times.json), 2-, 3- and 4-week course maps that together cover what they say, every
  exercise sorted into exactly one use, the student setup with the exact pip line.
* The bundle: the booklet and its PDF, an answer key per chapter with exercises (each holding
  that chapter's worked solutions), the guide and its PDF, a slide deck per chapter (PDF, 16:9,
  one page per slide: title, objectives, equations, each figure), the figure pack, LICENSE.
"""

from __future__ import annotations

import json
import re
import subprocess
import zipfile

import check_edition
import exercise_notebooks
import nbformat
import pytest
import teaching
import teaching_guide

SITE = teaching.build_dir("reader") / "html"
GUIDE = SITE / teaching.GUIDE_HTML
BUNDLE = teaching.INSTRUCTOR / f"normcore-instructor-{teaching.version()}.zip"


def test_every_chapter_has_objectives_and_prerequisites():
    data = teaching_guide.load()
    stems = [p.stem for p in teaching.chapters()]
    assert sorted(data) == sorted(stems)
    for stem in stems:
        assert len(data[stem]["objectives"]) >= 2, stem
        for item in data[stem]["prerequisites"]:
            if isinstance(item, int):
                assert item < int(stem[:2]), f"{stem} needs a later chapter, {item}"


def test_run_times_are_measured_for_every_chapter_within_the_budget():
    times = json.loads(teaching_guide.TIMES.read_text())
    assert sorted(times["seconds"]) == sorted(p.stem for p in teaching.chapters())
    # DESIGN.md: each chapter's Run All <= 10 s
    assert all(0 < s <= 10 for s in times["seconds"].values()), times["seconds"]


def test_reading_time_is_the_word_count_at_two_hundred_a_minute():
    rows = teaching_guide.rows()
    for row in rows:
        assert row["reading"] == max(1, round(row["words"] / 200)), row["stem"]
        assert row["words"] > 300, row["stem"]
    kinds = {use for r in rows for _, use in r["exercises"]}
    assert kinds == {"class", "homework", "assessment"}


def test_course_maps_cover_the_chapters_once():
    numbers = {int(p.stem[:2]) for p in teaching.chapters()}
    for weeks, plan in teaching_guide.MAPS.items():
        assert len(plan) == weeks
        flat = [n for week in plan for n in week]
        assert len(flat) == len(set(flat)) and set(flat) <= numbers
    assert {n for week in teaching_guide.MAPS[4] for n in week} == numbers


@pytest.mark.site
@pytest.mark.skipif(not GUIDE.is_file(), reason="make book first")
def test_the_guide_page_says_it_all():
    text = check_edition.page_text(GUIDE)
    times = json.loads(teaching_guide.TIMES.read_text())["seconds"]
    for row in teaching_guide.rows():
        assert row["title"] in text
        for objective in row["objectives"]:
            assert teaching.squeeze(objective) in text
        assert f"{row['words']:,} {row['reading']} min {times[row['stem']]:.0f} s" in text
    for weeks in (2, 3, 4):
        assert f"{weeks} weeks" in text
    assert f'pip install "{teaching.wheel_name()}[book]"' in text
    # (the page's text is read tag by tag: the address, a link, sits between spaces)
    assert teaching.squeeze(teaching.attribution()).replace(" ", "") in text.replace(" ", "")


@pytest.mark.site
@pytest.mark.skipif(not BUNDLE.is_file(), reason="make instructor first")
def test_the_instructor_bundle():
    top = f"normcore-instructor-{teaching.version()}/"
    with zipfile.ZipFile(BUNDLE) as z:
        names = set(z.namelist())
        assert {top + n for n in ("LICENSE", "README.txt", "solutions.pdf")} <= names
        assert {top + "teaching-guide.html", top + "teaching-guide.pdf"} <= names
        assert top + "solutions/solutions.html" in names
        assert top + "solutions/_static/mathjax/tex-chtml.js" in names
        assert top + f"figures/{teaching.WHOLE_PACK}" in names
        assert z.read(top + "LICENSE") == (teaching.ROOT / "LICENSE").read_bytes()
        for ipynb in teaching.chapters():
            nb = nbformat.read(ipynb, as_version=4)
            assert top + f"slides/normcore-{teaching.chapter_tag(ipynb.stem)}-slides.pdf" in names
            if not teaching.has_exercises(nb):
                continue
            key = z.read(top + f"answer-keys/{exercise_notebooks.answer_key(ipynb.stem)}")
            text = teaching.squeeze(
                " ".join(c.source for c in nbformat.reads(key.decode(), 4).cells)
            )
            passages = [teaching.squeeze(p) for p in teaching.solution_passages(nb)]
            assert passages and all(p in text for p in passages[:3]), ipynb.stem


@pytest.mark.site
@pytest.mark.skipif(not (teaching.INSTRUCTOR / "slides").is_dir(), reason="make instructor")
def test_each_deck_has_a_slide_per_figure_and_is_sixteen_by_nine():
    import figure_pack

    for ipynb in teaching.chapters():
        pdf = (
            teaching.INSTRUCTOR
            / "slides"
            / f"normcore-{teaching.chapter_tag(ipynb.stem)}-slides.pdf"
        )
        info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True).stdout
        pages = int(re.search(r"Pages:\s+(\d+)", info).group(1))
        width, height = (
            float(x) for x in re.search(r"Page size:\s+([\d.]+) x ([\d.]+)", info).groups()
        )
        assert abs(width / height - 16 / 9) < 0.01, (pdf.name, width, height)
        figures = len(figure_pack.stored_figures(ipynb))
        assert pages >= 2 + figures, (pdf.name, pages, figures)  # title, objectives, figures
        text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True).stdout
        for _, fig, _ in figure_pack.stored_figures(ipynb):
            assert fig.title in " ".join(text.split()), (pdf.name, fig.number)


@pytest.mark.site
@pytest.mark.skipif(not SITE.is_dir(), reason="make book first")
def test_every_zip_the_site_offers_holds_the_licence():
    zips = sorted(SITE.rglob("*.zip"))
    assert zips
    for path in zips:
        with zipfile.ZipFile(path) as z:
            assert z.read("LICENSE") == (teaching.ROOT / "LICENSE").read_bytes(), path
