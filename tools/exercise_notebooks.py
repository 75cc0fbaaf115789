"""Exercise notebooks: each chapter's exercises, the cells they need, and no answers.

From each chapter's stored run (``book/NN-name.ipynb``) this writes ``NN-name-exercises.ipynb``:

* every exercise's question (``**Exercise N.**`` up to its folded solution), with the prose's
  roles written out from the stored run as ``tools/lab_book.py`` does (a ``{doc}`` link becomes
  the chapter's number and title: the notebook travels alone);
* the exercise's own code cells (the answer cell starts at ``None`` and calls its checker);
* the chapter's visible code cells those cells need, found by name: every name an exercise cell,
  or a name in backticks in its question or its worked solution, reads is taken from the last
  visible cell before it that binds it, and so on for that cell's own names; the chapter's
  import-only cells come too, and where a question sends the reader to a widget or a slider,
  the cells that show a widget;
* nothing else: no solution, no hidden (``remove-cell``) cell, no output, no execution count.

So running it top to bottom works and every checker prompts for an answer
(``tests/test_exercise_notebooks.py`` runs each one blank, then with the worked solutions'
answers filled in, which every checker must call right).

    python tools/exercise_notebooks.py             # into _build/html/exercises/
    python tools/exercise_notebooks.py --lab       # into lab/exercises/ (make lab), keeping
                                                   # a notebook the reader has edited
    python tools/exercise_notebooks.py --into DIR book/02-worked-column.ipynb
"""

from __future__ import annotations

import argparse
import ast
import builtins
import hashlib
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import lab_book  # beside this file
import nbformat
import teaching  # beside this file

SITE_DIR = teaching.SITE / teaching.EXERCISES_DIR
LAB_DIR = lab_book.LAB / teaching.EXERCISES_DIR
HIDDEN = "remove-cell"
DROPDOWN = ":::{dropdown}"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
BACKTICKS = re.compile(r"(?<![`}])`([^`\n]+)`")
DOC_ROLE = re.compile(r"\{doc\}`(?:(?P<text>[^`<]*?)\s*<(?P<target>[^>`]+)>|(?P<bare>[^`]+))`")
HEADING = re.compile(r"^#{1,3}\s+(.+)$", re.MULTILINE)
BUILTINS = set(dir(builtins)) | {"display", "get_ipython"}


class ExerciseError(ValueError):
    """A chapter whose exercises cannot be lifted out honestly (a needed name only hidden)."""


@dataclass
class Exercise:
    """One exercise of a chapter, as the stored run holds it."""

    number: int
    question: str  # the markdown of the question, roles unrendered
    solution: str  # the markdown inside the folded solution, roles unrendered
    cells: list[int] = field(default_factory=list)  # its own code cells (indices)
    question_cell: int = 0  # the markdown cell the question sits in
    section: str = ""


def _hidden(cell) -> bool:
    return HIDDEN in cell.metadata.get("tags", [])


def exercises(nb) -> list[Exercise]:
    """Every exercise of a chapter's notebook, in order, with its cells and folded solution."""
    found: list[Exercise] = []
    section = ""
    cells = nb.cells
    for index, cell in enumerate(cells):
        if cell.cell_type != "markdown":
            continue
        text = cell.source
        starts = [m for m in teaching.EXERCISE.finditer(text)]
        headings = list(HEADING.finditer(text))
        for k, match in enumerate(starts):
            before = [h for h in headings if h.start() < match.start()]
            if before:
                section = before[-1].group(1).strip()
            end = starts[k + 1].start() if k + 1 < len(starts) else len(text)
            chunk = text[match.start() : end]
            cut = min(
                [i for i in (chunk.find(DROPDOWN), _heading_at(chunk)) if i >= 0] or [len(chunk)]
            )
            question = chunk[:cut].strip()
            exercise = Exercise(int(match.group(1)), question, "", [], index, section)
            if DROPDOWN in chunk:  # folded in the same cell: the exercise has no code cell
                exercise.solution = _solution(chunk[chunk.find(DROPDOWN) :])
            elif k + 1 == len(starts):  # its cells follow, then the solution opens a cell
                j = index + 1
                while j < len(cells) and cells[j].cell_type == "code":
                    if not _hidden(cells[j]):
                        exercise.cells.append(j)
                    j += 1
                if j < len(cells) and DROPDOWN in cells[j].source:
                    rest = cells[j].source
                    exercise.solution = _solution(rest[rest.find(DROPDOWN) :])
            found.append(exercise)
        if headings:
            section = headings[-1].group(1).strip()
    return found


def _heading_at(chunk: str) -> int:
    match = re.search(r"^#{1,6}\s", chunk, re.MULTILINE)
    return match.start() if match else -1


def _solution(text: str) -> str:
    """The body of the ``:::{dropdown} Solution`` block that starts `text`."""
    lines = text.splitlines()
    body = []
    for line in lines[1:]:
        if line.strip() == ":::":
            break
        body.append(line)
    return "\n".join(body).strip()


def _code(source: str) -> str:
    """A cell's Python without IPython's magics and shell lines."""
    return "\n".join(
        "" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()
    )


def _bound(node: ast.AST) -> set[str]:
    names: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
            names.add(sub.id)
        elif isinstance(sub, ast.Import | ast.ImportFrom):
            for alias in sub.names:
                names.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(sub.name)
    return names


def names(source: str) -> tuple[set[str], set[str]]:
    """(names the cell reads before binding them, names it binds), at its top level."""
    try:
        tree = ast.parse(_code(source))
    except SyntaxError:
        return set(), set()
    free: set[str] = set()
    bound: set[str] = set()
    for statement in tree.body:
        local = set()
        for sub in ast.walk(statement):
            if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                local |= {a.arg for a in sub.args.args + sub.args.kwonlyargs}
            if isinstance(sub, ast.comprehension):
                local |= _bound(sub.target)
        loads = {
            n.id
            for n in ast.walk(statement)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
        }
        free |= loads - bound - local - BUILTINS
        bound |= _bound(statement)
    return free, bound


def mentioned(question: str) -> set[str]:
    """The names read by the code in backticks of a question (``fold_in``, ``block[:, 0]``)."""
    found: set[str] = set()
    for span in BACKTICKS.findall(question):
        free, bound = names(span)
        found |= {n for n in free | bound if len(n) > 2}
    return found


def _only_imports(source: str) -> bool:
    try:
        tree = ast.parse(_code(source))
    except SyntaxError:
        return False
    return bool(tree.body) and all(isinstance(s, ast.Import | ast.ImportFrom) for s in tree.body)


def needed_cells(nb, chosen: list[Exercise]) -> list[int]:
    """The code cells the exercise notebook keeps: the exercises' own and what they need."""
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    visible = [i for i in code if not _hidden(nb.cells[i])]
    binds = {i: names(nb.cells[i].source)[1] for i in code}
    keep: set[int] = {i for i in visible if _only_imports(nb.cells[i].source)}
    todo: list[tuple[int, set[str], bool]] = []
    for exercise in chosen:
        keep |= set(exercise.cells)
        todo += [(i, names(nb.cells[i].source)[0], True) for i in exercise.cells]
        todo.append((exercise.question_cell, mentioned(exercise.question), False))
        # what the worked solution writes in code, too: the student needs it to get there
        todo.append((exercise.question_cell, mentioned(exercise.solution), False))
        if re.search(r"\bwidget|\bslider", exercise.question, re.IGNORECASE):
            for i in visible[: visible.index(exercise.cells[0])] if exercise.cells else visible:
                outputs = nb.cells[i].get("outputs", [])
                if any(WIDGET_VIEW in o.get("data", {}) for o in outputs):
                    keep.add(i)
                    todo.append((i, names(nb.cells[i].source)[0], True))
    while todo:
        at, wanted, strict = todo.pop()
        for name in sorted(wanted):
            earlier = [i for i in code if i < at and name in binds[i]]
            shown = [i for i in earlier if not _hidden(nb.cells[i])]
            if shown:
                if shown[-1] not in keep:
                    keep.add(shown[-1])
                    todo.append((shown[-1], names(nb.cells[shown[-1]].source)[0], True))
            elif earlier and strict:
                raise ExerciseError(f"cell {at} reads {name!r}, which only a hidden cell binds")
    return sorted(keep)


def render(text: str, glued: dict[str, str], figs, book: Path, where: str) -> str:
    """A question's markdown with its roles written out; ``{doc}`` as the chapter it names."""

    def doc(match: re.Match) -> str:
        target = match.group("target") or match.group("bare")
        title = match.group("text") or lab_book.page_title(book, target)
        number = lab_book.chapter_number(Path(target).name)
        return f"chapter {number}, *{title}*" if number else f"*{title}*"

    return lab_book.render_prose(DOC_ROLE.sub(doc, text), glued, figs, book, where)


def _chapter_title(nb) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            match = re.search(r"^#\s+(.+)$", cell.source, re.MULTILINE)
            if match:
                return match.group(1).strip()
    return ""


def intro(stem: str, title: str) -> str:
    number = lab_book.chapter_number(stem)
    where = f"Chapter {number}" if number else "The preface"
    return (
        f"# Exercises: {title}\n\n"
        f"{where} of *normcore: normalisation layers, computed* (version {teaching.version()}), "
        "its exercises alone. Run the cells from the top: the code cells between the questions "
        "are the chapter's own, the ones the exercises use. Each answer cell starts at `None`: "
        "put your answer in its place and run the cell, and the checker says whether it is "
        "right, close or not yet, without printing the answer. "
        + where_solutions()
        + " This notebook needs `normcore` installed: "
        + install_markdown()
        + f" {teaching.licence_note()}"
    )


def where_solutions() -> str:
    """Where the worked solutions are, true of the edition the notebook is built for."""
    if teaching.edition() == "student":
        return "Your teacher has the worked solutions; this edition of the book holds none."
    return (
        "In the book's reader's edition the worked solutions are folded under each exercise "
        "on the chapter's page, and collected in the solutions booklet."
    )


def install_markdown() -> str:
    """How to install normcore (the wheel of a release, the configured repository, or where
    to get the release): the same three cases as the site's download line."""
    wheel = teaching.wheel_name()
    if (teaching.DIST / wheel).is_file():
        return f"`pip install {wheel}`, the wheel in the book's site (`dist/`)."
    repo = teaching.repository()
    if repo:
        return f'`pip install "git+{repo}"` (the book\'s repository, {repo}).'
    released = teaching.wheel_name(teaching.release_version())
    return (
        f"`pip install {released}` with the wheel from the book's release archive (`dist/`), "
        "or `pip install -e .` in a copy of the book's files."
    )


def exercise_notebook(ipynb: Path, key: bool = False):
    """The exercise notebook of one chapter, or None if the chapter asks no exercise. With
    `key`, the answer key for the instructor bundle: each question followed by its worked
    solution (roles written out from the stored run)."""
    nb = nbformat.read(ipynb, as_version=4)
    chosen = exercises(nb)
    if not chosen:
        return None
    glued = lab_book.glued_values(nb)
    figs = lab_book.figures(nb, ipynb.stem)
    try:
        keep = needed_cells(nb, chosen)
    except ExerciseError as error:
        raise ExerciseError(f"{ipynb.name}: {error}") from None
    questions = {e.cells[0] if e.cells else None: e for e in chosen}
    loose = [e for e in chosen if not e.cells]  # questions without a cell of their own
    opening = intro(ipynb.stem, _chapter_title(nb))
    if key:
        opening = (
            f"# Answer key: {_chapter_title(nb)}\n\nFor teachers (the instructor bundle): the "
            "exercise notebook below with each exercise's worked solution after its question. "
            "Keep it from students.\n\n" + opening.split("\n\n", 1)[1]
        )
    cells = [nbformat.v4.new_markdown_cell(opening)]
    section_shown = None
    placed: set[int] = set()

    def ask(exercise: Exercise) -> None:
        where = f"{ipynb.name} exercise {exercise.number}"
        cells.append(
            nbformat.v4.new_markdown_cell(
                render(exercise.question, glued, figs, ipynb.parent, where)
            )
        )
        if key:
            worked = render(exercise.solution, glued, figs, ipynb.parent, where + " solution")
            cells.append(
                nbformat.v4.new_markdown_cell(f"**Worked solution (answer key).** {worked}")
            )
        placed.add(exercise.number)

    for index in keep:
        for exercise in loose:
            if exercise.number not in placed and exercise.question_cell < index:
                ask(exercise)
        if index in questions:
            ask(questions[index])
        elif not any(index in e.cells for e in chosen):
            section = _section_of(nb, index)
            if section != section_shown:
                cells.append(
                    nbformat.v4.new_markdown_cell(
                        f"*From the chapter's section “{section}”: code the exercises use.*"
                    )
                )
                section_shown = section
        source = nb.cells[index].source
        cells.append(nbformat.v4.new_code_cell(source))
    for exercise in loose:
        if exercise.number not in placed:
            ask(exercise)
    out = nbformat.v4.new_notebook()
    out.cells = cells
    for cell in out.cells:
        digest = hashlib.sha256(f"{cell.cell_type}\0{cell.source}".encode()).hexdigest()[:10]
        cell["id"] = f"x{digest}"
    seen: dict[str, int] = {}
    for cell in out.cells:
        count = seen.get(cell["id"], 0)
        seen[cell["id"]] = count + 1
        if count:
            cell["id"] = f"{cell['id']}-{count}"
    out.metadata["kernelspec"] = {
        "display_name": "Python 3",
        "language": "python",
        "name": "python3",
    }
    out.metadata["language_info"] = {"name": "python"}
    out.metadata["normcore"] = {
        "chapter": ipynb.stem,
        "version": teaching.version(),
        "edition": teaching.edition(),
        "kind": "answer key" if key else "exercises",
    }
    nbformat.validate(out)
    return out


def _section_of(nb, index: int) -> str:
    section = _chapter_title(nb)
    for cell in nb.cells[:index]:
        if cell.cell_type == "markdown":
            for heading in re.finditer(r"^##\s+(.+)$", cell.source, re.MULTILINE):
                section = heading.group(1).strip()
    return section


def answer_key(stem: str) -> str:
    """The file name of a chapter's answer key (instructor bundle)."""
    return f"{stem}-answer-key.ipynb"


def build_keys(notebooks: list[Path], into: Path) -> list[Path]:
    """Write each chapter's answer key into `into`."""
    into.mkdir(parents=True, exist_ok=True)
    written = []
    for ipynb in notebooks:
        nb = exercise_notebook(ipynb, key=True)
        if nb is not None:
            target = into / answer_key(ipynb.stem)
            target.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
            written.append(target)
    return written


def build(notebooks: list[Path], into: Path, keep_edits: bool = False) -> list[Path]:
    """Write the exercise notebooks into `into`; with `keep_edits` (lab/), a notebook the reader
    edited since this script wrote it is kept, as tools/lab_book.py keeps the chapters."""
    into.mkdir(parents=True, exist_ok=True)
    manifest_path = into / lab_book.MANIFEST
    manifest = (
        json.loads(manifest_path.read_text()) if keep_edits and manifest_path.exists() else {}
    )
    written = []
    for ipynb in notebooks:
        nb = exercise_notebook(ipynb)
        if nb is None:
            continue
        text = nbformat.writes(nb) + "\n"
        target = into / teaching.exercise_notebook(ipynb.stem)
        if keep_edits and target.exists():
            current = target.read_text(encoding="utf-8")
            try:
                edited = lab_book._sources(current) != manifest.get(target.name)
            except json.JSONDecodeError:
                edited = True
            if edited and current != text:
                print(f"kept your edited copy: {target}")
                continue
        target.write_text(text, encoding="utf-8")
        manifest[target.name] = lab_book._sources(text)
        written.append(target)
    if keep_edits:
        manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="book/NN-*.ipynb (default: all)")
    parser.add_argument("--into", type=Path, default=SITE_DIR, help="where to write")
    parser.add_argument("--lab", action="store_true", help="into lab/exercises, keeping edits")
    args = parser.parse_args(argv)
    notebooks = [p.resolve().with_suffix(".ipynb") for p in args.notebooks] or teaching.chapters()
    into = LAB_DIR if args.lab else args.into
    try:
        written = build(notebooks, into, keep_edits=args.lab)
    except (ExerciseError, lab_book.RenderError) as error:
        raise SystemExit(f"exercise_notebooks: {error}") from None
    print(f"exercise_notebooks: {len(written)} notebooks into {into}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
