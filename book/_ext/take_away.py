"""Sphinx extension: the book to take away, each chapter's notebook and the whole book as a PDF.

Registered in _config.yml (``sphinx.local_extensions``). It does four small things:

1. **Notebook download (html builder).** A chapter page is rendered from its executed notebook
   ``book/NN-name.ipynb`` (the run ``make notebooks`` stored, in step with the ``.md`` by
   ``tools/check_pairing.py``; the build executes nothing). That same file is copied beside
   its page, ``_build/html/book/NN-name.ipynb``, with a line under its title linking to it
   (``download``) and to the whole book's PDF, ``_build/html/normcore.pdf``, which ``make book``
   prints after the pages (``tools/make_pdf.py``); where it cannot (no chromium or playwright),
   no page links a PDF. Jupyter Book's own download button would give the ``.md``.
2. **Widgets in print (every builder).** After each widget's view a line, shown only in print,
   says where the widget can be moved: the chapter's notebook in JupyterLab.
3. **Widgets in the single page (singlehtml builder).** myst-nb gives a page only its own
   document's widget state; the single page holds every chapter, so it gets the union of all the
   chapters' states and the widget
   scripts, in myst-nb's order (``tools/execute_notebooks.py`` derives each model id from the
   chapter's name, so they do not collide).
4. **Print style sheet.** ``book/_site/take-away.css`` (screen: hide the print-only lines; print:
   the article alone, widgets with their note, no buttons).
5. **For teachers (html builder).** The download line also links the chapter's figures (SVG and
   PNG, ``tools/figure_pack.py``) and its exercises alone (``tools/exercise_notebooks.py``),
   where the chapter has them; the back matter's pages link the solutions booklet
   (``tools/solutions_booklet.py``). ``make book`` writes those files after the pages; the names
   come from ``tools/teaching.py``. Every page's footer, and the PDF's, shows the book's version
   (pyproject.toml).
"""

from __future__ import annotations

import json
import posixpath
import shutil
from pathlib import Path
from typing import Any

import chromium  # tools/chromium.py, on the build's path as a local extension (_config.yml)
import nbformat
import teaching  # tools/teaching.py: the teaching downloads' names and the version
from docutils import nodes
from myst_nb.core.render import sanitize_script_content
from sphinx.application import Sphinx

PDF_NAME = "normcore.pdf"  # the whole book, at the root of the built site
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
STATE_KEY = "ipywidgets_state"  # myst-nb's key for a page's widget state script


def can_print() -> bool:
    """Whether tools/make_pdf.py can print the PDF here (tools/chromium.py decides). Without it
    ``make book`` makes no PDF, so the pages must not link one."""
    return chromium.can_print()


def paired_notebook(app: Sphinx, docname: str) -> Path | None:
    """The executed notebook ``docname``'s page is rendered from (``book/NN-name.ipynb``: the
    site reads each chapter's stored run, _config.yml), or None for a page built from a ``.md``
    (e.g. the glossary). The reader downloads exactly the file the page shows."""
    source = Path(app.env.doc2path(docname))
    return source if source.suffix == ".ipynb" else None


def widget_note(notebook_name: str) -> nodes.paragraph:
    """The print-only line under a widget's built view."""
    para = nodes.paragraph(classes=["nc-print-only", "nc-widget-live"])
    para += nodes.strong(text="Live widget. ")
    para += nodes.Text(
        "This is the view it had when the book was built. To move it, run this chapter's notebook, "
    )
    para += nodes.literal(text=notebook_name)
    para += nodes.Text(", in JupyterLab: download it from the chapter's page on the site, or run ")
    para += nodes.literal(text="make lab")
    para += nodes.Text(" in the book's repository.")
    return para


def add_widget_notes(app: Sphinx, doctree: nodes.document) -> None:
    """doctree-read: a print-only note after every widget view of a chapter with a notebook."""
    notebook = paired_notebook(app, app.env.docname)
    if notebook is None:
        return
    for raw in list(doctree.findall(nodes.raw)):
        if WIDGET_VIEW in raw.astext() and raw.parent is not None:
            raw.parent.insert(raw.parent.index(raw) + 1, widget_note(notebook.name))


def add_download_line(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """doctree-resolved (html builder only): under the chapter's title, links to its notebook and
    to the whole book's PDF, both relative to the page."""
    if app.builder.name != "html":
        return
    notebook = paired_notebook(app, docname)
    title = next(iter(doctree.findall(nodes.title)), None)
    if notebook is None or title is None:
        return
    here = posixpath.dirname(docname)
    ipynb = posixpath.relpath(posixpath.join(here, notebook.name), here or ".")
    pdf = posixpath.relpath(PDF_NAME, here or ".")
    html = (
        '<p class="nc-take-away nc-screen-only">'
        '<i class="fas fa-download" aria-hidden="true"></i> '
        f'Take it with you: <a class="nc-notebook-download" href="{ipynb}" download>'
        f"this chapter's notebook, {notebook.name}</a> (executed, with its outputs; run it in "
        "JupyterLab with <code>normcore</code> installed)"
    )
    nb = nbformat.read(notebook, as_version=4)
    if teaching.has_exercises(nb):
        exercises = posixpath.relpath(
            posixpath.join(teaching.EXERCISES_DIR, teaching.exercise_notebook(notebook.stem)),
            here or ".",
        )
        html += (
            f' · <a class="nc-exercises-download" href="{exercises}" download>its exercises '
            "alone</a> (no answers, no outputs)"
        )
    if teaching.has_figures(nb):
        figures = posixpath.relpath(
            posixpath.join(teaching.FIGURES_DIR, teaching.chapter_pack(notebook.stem)), here or "."
        )
        whole = posixpath.relpath(
            posixpath.join(teaching.FIGURES_DIR, teaching.WHOLE_PACK), here or "."
        )
        html += (
            f' · <a class="nc-figures-download" href="{figures}" download>its figures</a> '
            f'(SVG and PNG, with captions; <a class="nc-figures-all" href="{whole}" download>'
            "every chapter's</a>)"
        )
    if can_print():
        html += f' · <a class="nc-pdf-download" href="{pdf}">the whole book as one PDF</a>'
    html += "</p>"
    section = title.parent
    section.insert(section.index(title) + 1, nodes.raw("", html, format="html"))


def add_booklet_line(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """doctree-resolved (html builder only): on the back matter's pages (the documents without
    a chapter number), a line linking the solutions booklet, which lives outside the book."""
    if app.builder.name != "html" or paired_notebook(app, docname) is not None:
        return
    if docname in (app.config.root_doc, "genindex", "search"):
        return
    title = next(iter(doctree.findall(nodes.title)), None)
    if title is None:
        return
    here = posixpath.dirname(docname)
    page = posixpath.relpath(teaching.BOOKLET_HTML, here or ".")
    pdf = posixpath.relpath(teaching.BOOKLET_PDF, here or ".")
    html = (
        '<p class="nc-booklet nc-screen-only">For teachers: <a class="nc-booklet-page" '
        f'href="{page}">the worked solutions of every exercise</a>, on one page'
    )
    if can_print():
        html += f' and <a class="nc-booklet-pdf" href="{pdf}">as a PDF</a>'
    html += " (kept out of the book and its PDF, so the book can be handed out without them).</p>"
    section = title.parent
    section.insert(section.index(title) + 1, nodes.raw("", html, format="html"))


def show_version(app: Sphinx, config: Any) -> None:
    """config-inited: the version from pyproject.toml, as Sphinx's release and in every page's
    footer."""
    version = teaching.version()
    config.version = config.release = version
    options = dict(config.html_theme_options or {})
    footer = options.get("extra_footer") or ""
    options["extra_footer"] = f'<p class="nc-version">normcore {version}</p>{footer}'
    config.html_theme_options = options


def copy_notebooks(app: Sphinx, exception: Exception | None) -> None:
    """build-finished (html builder): each chapter's notebook beside its page."""
    if exception is not None or app.builder.name != "html":
        return
    for docname in sorted(app.env.found_docs):
        notebook = paired_notebook(app, docname)
        if notebook is not None:
            target = Path(app.outdir) / posixpath.dirname(docname) / notebook.name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(notebook, target)


def merge_widget_state(app: Sphinx, pagename: str, *args: Any) -> None:
    """html-page-context (singlehtml builder), before myst-nb's handler: give the one page the
    union of every chapter's widget state and the widget scripts, for myst-nb to add."""
    if app.builder.name != "singlehtml" or pagename != app.config.root_doc:
        return
    metadata = getattr(app.env, "nb_metadata", {})
    states: dict[str, Any] = {}
    scripts: dict[str, tuple[str | None, dict[str, Any]]] = {}
    for docname in sorted(app.env.found_docs):
        for key, (uri, kwargs) in metadata.get(docname, {}).get("js_files", {}).items():
            if key == STATE_KEY:
                states.update(json.loads(kwargs["body"])["state"])
            else:
                scripts[key] = (uri, kwargs)
    if not states:
        return
    body = json.dumps({"version_major": 2, "version_minor": 0, "state": states})
    state = (
        None,
        {
            "type": "application/vnd.jupyter.widget-state+json",
            "body": sanitize_script_content(body),
        },
    )
    page = metadata.setdefault(pagename, {})  # in memory only: the environment is pickled
    page["js_files"] = {STATE_KEY: state, **{key: scripts[key] for key in sorted(scripts)}}


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_css_file("take-away.css")
    app.connect("doctree-read", add_widget_notes)
    app.connect("config-inited", show_version)
    app.connect("doctree-resolved", add_download_line)
    app.connect("doctree-resolved", add_booklet_line)
    app.connect("build-finished", copy_notebooks)
    app.connect("html-page-context", merge_widget_state, priority=400)  # myst-nb: 500
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
