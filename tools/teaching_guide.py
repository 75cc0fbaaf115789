"""The teaching guide: objectives, prerequisites and time per chapter, course maps, which
exercises suit class, homework or assessment, and the student setup path; one HTML page.

Made from the book's own sources, nothing typed twice:

* objectives and prerequisites: ``book/teaching.yml`` (per chapter);
* reading time: each chapter's words (the prose of its stored run, solutions left out), at
  200 words a minute (myst's ``words_per_minute``);
* Run All time: ``book/run-times.json``, measured by ``--measure`` (each chapter's stored run
  executed top to bottom in a fresh kernel on this machine, the seconds from the first cell to
  the last; the machine is named there);
* exercises: each chapter's ``**Exercise N.**`` (``tools/exercise_notebooks.py``), sorted by
  what a lecturer needs: one that asks for a widget suits class (done together, live); one with
  an answer cell and a checker suits homework (the checker says right, close or not yet); one
  with neither (a derivation, an explanation) suits assessment, marked by hand (no checker in
  the package computes its answer);
* course maps of 2, 3 and 4 weeks from those times.

    python tools/teaching_guide.py             # _build/html/teaching-guide.html (the edition's)
    python tools/teaching_guide.py --measure   # run every chapter, write book/run-times.json
"""

from __future__ import annotations

import argparse
import html
import json
import os
import platform
import re
import sys
import time
from pathlib import Path

import exercise_notebooks  # beside this file
import nbformat
import teaching

DATA = teaching.BOOK / "teaching.yml"
TIMES = teaching.BOOK / "run-times.json"
WORDS_PER_MINUTE = 200
EXERCISE_MINUTES = 15  # an estimate per exercise, said as one on the page
CODE_WORD = re.compile(r"```.*?```|\$\$.*?\$\$", re.S)

#: Course maps: weeks of chapters. A week is three sessions of 90 minutes and the homework.
MAPS = {
    2: [[0, 1, 2, 3], [4, 5, 6, 7]],
    3: [[0, 1, 2], [3, 4, 5], [6, 7, 8, 9]],
    4: [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11, 12]],
}
MAP_NOTES = {
    2: "the core: the batch layer by hand, its backward pass, the other axes, weight "
    "normalisation and what the comparisons measure; chapters 8 to 12 as reading",
    3: "the core and the measurements, ending with small batches and transformers",
    4: "the whole book, the convnet chapter and the arithmetic appendix in the last week",
}


def load() -> dict:
    import yaml

    return yaml.safe_load(DATA.read_text(encoding="utf-8"))


def words(nb) -> int:
    """The words a student reads in a chapter: its prose, without code, display maths or the
    worked solutions."""
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    teaching.strip_solutions(nb)
    text = " ".join(c.source for c in nb.cells if c.cell_type == "markdown")
    return len(CODE_WORD.sub(" ", text).split())


def kind(exercise, nb) -> str:
    """class, homework or assessment (see the module's docstring)."""
    if "widget" in exercise.question.lower() or "slider" in exercise.question.lower():
        return "class"
    checked = any("check_" in nb.cells[i].source for i in exercise.cells)
    return "homework" if checked else "assessment"


def measure(chapters: list[Path]) -> dict:
    """Run every chapter's stored notebook top to bottom in a fresh kernel; seconds each."""
    from nbclient import NotebookClient

    seconds = {}
    for path in chapters:
        nb = nbformat.read(path, as_version=4)
        client = NotebookClient(
            nb,
            kernel_name="python3",
            timeout=600,
            resources={"metadata": {"path": str(path.parent)}},
        )
        with client.setup_kernel():
            started = time.perf_counter()
            for index, cell in enumerate(nb.cells):
                client.execute_cell(cell, index)
            seconds[path.stem] = round(time.perf_counter() - started, 1)
        print(f"teaching_guide: {path.stem} ran in {seconds[path.stem]} s", flush=True)
    return {
        "what": "Run All of each chapter's stored notebook in a fresh kernel, first cell to last",
        "machine": f"{cpu_name()}, {os.cpu_count()} cores (shared), python "
        f"{platform.python_version()}",
        "measured": time.strftime("%Y-%m-%d", time.gmtime()),
        "seconds": seconds,
    }


def cpu_name() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.machine()
    match = re.search(r"^model name\s*:\s*(.+)$", text, re.M)
    return match.group(1).strip() if match else platform.machine()


def rows() -> list[dict]:
    """One entry per chapter: number, title, objectives, prerequisites, times, exercises."""
    data = load()
    times = json.loads(TIMES.read_text())["seconds"] if TIMES.is_file() else {}
    found = []
    for path in teaching.chapters():
        nb = nbformat.read(path, as_version=4)
        number = int(path.stem[:2])
        title = exercise_notebooks._chapter_title(nb)
        entry = data.get(path.stem, {})
        count = words(nb)
        found.append(
            {
                "stem": path.stem,
                "number": number,
                "title": title,
                "objectives": entry.get("objectives", []),
                "prerequisites": entry.get("prerequisites", []),
                "words": count,
                "reading": max(1, round(count / WORDS_PER_MINUTE)),
                "run": times.get(path.stem),
                "exercises": [(e.number, kind(e, nb)) for e in exercise_notebooks.exercises(nb)],
            }
        )
    return found


def minutes(row: dict) -> int:
    """A chapter's time for a student: reading, Run All, and the exercises (estimated)."""
    run = (row["run"] or 0) / 60
    return round(row["reading"] + run + EXERCISE_MINUTES * len(row["exercises"]))


def prerequisite_text(items, by_number) -> str:
    parts = []
    for item in items:
        if isinstance(item, int):
            parts.append(f"ch. {item} ({html.escape(by_number[item]['title'])})")
        else:
            parts.append(html.escape(str(item)))
    return "; ".join(parts) or "none"


STYLE = """
body { font-family: "DejaVu Sans", Arial, sans-serif; max-width: 60rem; margin: 2rem auto;
       padding: 0 1rem; line-height: 1.45; color: #222; }
h1 { font-size: 1.7rem; } h2 { font-size: 1.3rem; margin-top: 2rem; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; width: 100%; margin: 0.6rem 0; font-size: 0.9rem; }
th, td { border-bottom: 1px solid #ddd; padding: 0.3rem 0.5rem; text-align: left;
         vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
ul { margin: 0.2rem 0; padding-left: 1.1rem; }
code, pre { background: #f5f5f5; } pre { padding: 0.6rem; overflow-x: auto; }
.note { color: #555; font-size: 0.9rem; }
@media print { h2 { break-before: page; } tr { break-inside: avoid; } body { max-width: none; } }
"""


def page(found: list[dict]) -> str:
    version = teaching.version()
    by_number = {r["number"]: r for r in found}
    times = json.loads(TIMES.read_text()) if TIMES.is_file() else None
    wheel = teaching.wheel_name()
    repo = teaching.repository()
    get = (
        f'the book\'s repository, <a href="{html.escape(repo)}">{html.escape(repo)}</a>'
        if repo
        else "the release archive <code>normcore-VERSION.zip</code> (<code>make release</code>; "
        "no repository address is configured for this build)"
    )
    chapters = []
    for r in found:
        objectives = "".join(f"<li>{html.escape(o)}</li>" for o in r["objectives"])
        run = f"{r['run']:.0f} s" if r["run"] is not None else "not measured"
        chapters.append(
            f"<tr><td class=n>{r['number']}</td><td><b>{html.escape(r['title'])}</b>"
            f"<ul>{objectives}</ul></td>"
            f"<td>{prerequisite_text(r['prerequisites'], by_number)}</td>"
            f"<td class=n>{r['words']:,}</td><td class=n>{r['reading']} min</td>"
            f"<td class=n>{run}</td><td class=n>{len(r['exercises'])}</td>"
            f"<td class=n>{minutes(r)} min</td></tr>"
        )
    maps = []
    for weeks, plan in MAPS.items():
        cells = []
        for k, chapter_numbers in enumerate(plan, 1):
            names = ", ".join(
                f"{n} {html.escape(by_number[n]['title'])}"
                for n in chapter_numbers
                if n in by_number
            )
            total = sum(minutes(by_number[n]) for n in chapter_numbers if n in by_number)
            cells.append(
                f"<tr><td>week {k}</td><td>{names}</td><td class=n>{total / 60:.1f} h</td></tr>"
            )
        maps.append(
            f"<h3>{weeks} weeks</h3><p class=note>{MAP_NOTES[weeks]}.</p><table>"
            "<tr><th>week</th><th>chapters</th><th>student time</th></tr>"
            + "".join(cells)
            + "</table>"
        )
    uses = []
    for r in found:
        if not r["exercises"]:
            continue
        by_kind = {"class": [], "homework": [], "assessment": []}
        for number, use in r["exercises"]:
            by_kind[use].append(str(number))
        uses.append(
            f"<tr><td class=n>{r['number']}</td><td>{html.escape(r['title'])}</td>"
            + "".join(f"<td>{', '.join(by_kind[k]) or '-'}</td>" for k in by_kind)
            + "</tr>"
        )
    measured = (
        f"Run All measured on {html.escape(times['machine'])}, {times['measured']}"
        if times
        else "Run All not measured yet (python tools/teaching_guide.py --measure)"
    )
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>normcore {version}: teaching guide</title>
<link rel="icon" href="_static/favicon.svg" type="image/svg+xml">
<style>{STYLE}</style>
</head>
<body>
<main>
<h1>normcore: teaching guide</h1>
<p class="nc-version">normcore {version}. For a lecturer adopting <i>normcore: normalisation
layers, computed</i>: what each chapter teaches and assumes, how long it takes, three course
maps, which exercises suit class, homework or assessment, and how students set up.
<a href="index.html">The book</a>. {html.escape(teaching.licence_note())}</p>

<h2 id="editions">Editions and what to hand out</h2>
<ul>
<li><b>Student edition</b> (<code>make student</code>; <code>student/</code> in the release):
pages, chapter notebooks, exercise notebooks and PDF with no worked solution. Hand this out.</li>
<li><b>Reader's edition</b> (<code>make book</code>; <code>site/</code> in the release): the same
with each worked solution folded under its exercise, for self-study.</li>
<li><b>Instructor bundle</b> (<code>make instructor</code>): the solutions booklet and its PDF,
an answer key per exercise notebook (the worked solutions after each question), this guide,
a starter slide deck per chapter (PDF: title, objectives, key equations, its figures) and the
figure pack. Keep it from students.</li>
</ul>
<p class=note>The checkers students run (<code>normcore.exercises</code>) are in the package they
install, and compute the answers: homework checked by them is practice, not assessment.</p>

<h2 id="setup">Student setup</h2>
<ol>
<li>Get the book: {get}. The student edition's pages work opened from disk
(<code>student/index.html</code>), widgets included; <code>make serve</code> serves them
if a browser refuses.</li>
<li>Make an environment and install the package (imported as <code>normcore</code>; its
distribution is <code>{teaching.DISTRIBUTION}</code>, not <code>normcore</code> on the package
index, which is another project):
<pre>python3 -m venv normcore-env
. normcore-env/bin/activate          # Windows: normcore-env\\Scripts\\activate
pip install "{wheel}[book]"   # the wheel in the site's dist/ folder</pre>
</li>
<li>Download a chapter's exercise notebook from its page ("its exercises alone"), open it in
JupyterLab (<code>jupyter lab</code>), Run All, then answer each cell that starts at
<code>None</code>: its checker says right, close or not yet.</li>
<li>To run a whole chapter, download its notebook from the same line; Run All takes the
seconds below.</li>
</ol>

<h2 id="chapters">Chapters: objectives, prerequisites, time</h2>
<p class=note>Reading time at {WORDS_PER_MINUTE} words a minute of the chapter's prose (code,
display maths and solutions left out). {measured}. Student time = reading + Run All +
{EXERCISE_MINUTES} minutes an exercise (an estimate, not a measurement).</p>
<table>
<tr><th>ch.</th><th>title and objectives</th><th>prerequisites</th><th>words</th><th>reading</th>
<th>Run All</th><th>exercises</th><th>student time</th></tr>
{chr(10).join(chapters)}
</table>

<h2 id="maps">Course maps</h2>
<p class=note>A week: three sessions of 90 minutes with the homework between them. Student time
is the chapters' sum, as above.</p>
{chr(10).join(maps)}

<h2 id="exercises">Exercises by use</h2>
<p class=note>Class: the question asks for a widget or slider, done together on the projector.
Homework: the exercise has an answer cell and a checker. Assessment: neither (a derivation, a
reading of a result), marked by hand against the booklet.</p>
<table>
<tr><th>ch.</th><th>title</th><th>class</th><th>homework</th><th>assessment</th></tr>
{chr(10).join(uses)}
</table>

<h2 id="reuse">Reusing the text and figures</h2>
<p>{html.escape(teaching.licence_note())} Attribution line:
<i>{teaching.attribution_html()}</i> Every figure is in the figure pack as SVG and PDF
(text as text) and as a 220-dpi PNG, with a short title and alt text.</p>
</main>
</body>
</html>
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--measure", action="store_true", help="run the chapters, store times")
    parser.add_argument("--page", type=Path, default=teaching.SITE / teaching.GUIDE_HTML)
    args = parser.parse_args(argv)
    if args.measure:
        TIMES.write_text(json.dumps(measure(teaching.chapters()), indent=1) + "\n")
        print(f"teaching_guide: {TIMES}")
        return 0
    found = rows()
    args.page.parent.mkdir(parents=True, exist_ok=True)
    args.page.write_text(page(found), encoding="utf-8")
    print(f"teaching_guide: {args.page} ({len(found)} chapters)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
