"""Sphinx extension: the book to take away, each chapter's notebook and the whole book as a PDF.

Registered in _config.yml (``sphinx.local_extensions``). It does four small things:

1. **Notebook download (html builder).** A chapter whose source ``book/NN-name.md`` has a paired
   ``book/NN-name.ipynb`` (the executed twin with its outputs, kept in step by
   ``tools/check_pairing.py``) gets that notebook copied beside its page,
   ``_build/html/book/NN-name.ipynb``, and a line under its title linking to it (``download``)
   and to the whole book's PDF, ``_build/html/normcore.pdf``, which ``make book`` prints after
   the pages (``tools/make_pdf.py``); where it cannot (no chromium or playwright), no page links
   a PDF. Jupyter Book's own download button would give the ``.md``.
2. **Widgets in print (every builder).** After each widget's view a line, shown only in print,
   says where the widget can be moved: the chapter's notebook in JupyterLab.
3. **Widgets in the single page (singlehtml builder).** myst-nb gives a page only its own
   document's widget state; the single page holds every chapter, so it gets the union of all the
   chapters' states (their model ids are random per execution and do not collide) and the widget
   scripts, in myst-nb's order.
4. **Print style sheet.** ``book/_site/take-away.css`` (screen: hide the print-only lines; print:
   the article alone, widgets with their note, no buttons).
"""

from __future__ import annotations

import importlib.util
import json
import os
import posixpath
import shutil
from pathlib import Path
from typing import Any

from docutils import nodes
from myst_nb.core.render import sanitize_script_content
from sphinx.application import Sphinx

PDF_NAME = "normcore.pdf"  # the whole book, at the root of the built site
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
STATE_KEY = "ipywidgets_state"  # myst-nb's key for a page's widget state script


def chromium_path() -> str | None:
    """Debian's chromium, the browser tests' ($NORMCORE_CHROMIUM overrides); None if absent."""
    wanted = os.environ.get("NORMCORE_CHROMIUM", "/usr/bin/chromium")
    if Path(wanted).exists():
        return wanted
    return shutil.which("chromium") or shutil.which("chromium-browser")


def can_print() -> bool:
    """Whether tools/make_pdf.py can print the PDF here (playwright and a chromium). Without
    them ``make book`` makes no PDF, so the pages must not link one."""
    return chromium_path() is not None and importlib.util.find_spec("playwright") is not None


def paired_notebook(app: Sphinx, docname: str) -> Path | None:
    """The executed notebook paired with ``docname`` (``book/NN-name`` -> its ``.ipynb``), if
    the page is built from a ``.md`` that has one; None otherwise (e.g. the glossary)."""
    source = Path(app.env.doc2path(docname))
    notebook = source.with_suffix(".ipynb")
    if source.suffix == ".md" and notebook.is_file():
        return notebook
    return None


def widget_note(notebook_name: str) -> nodes.paragraph:
    """The print-only line under a widget's built view."""
    para = nodes.paragraph(classes=["nc-print-only", "nc-widget-live"])
    para += nodes.strong(text="Live widget. ")
    para += nodes.Text(
        "This is the view it had when the book was built. To move it, run this chapter's "
        "notebook, "
    )
    para += nodes.literal(text=notebook_name)
    para += nodes.Text(
        ", in JupyterLab: download it from the chapter's page on the site, or run "
    )
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
    if can_print():
        html += f' · <a class="nc-pdf-download" href="{pdf}">the whole book as one PDF</a>'
    html += "</p>"
    section = title.parent
    section.insert(section.index(title) + 1, nodes.raw("", html, format="html"))


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
    state = (None, {"type": "application/vnd.jupyter.widget-state+json",
                    "body": sanitize_script_content(body)})
    page = metadata.setdefault(pagename, {})  # in memory only: the environment is pickled
    page["js_files"] = {STATE_KEY: state, **{key: scripts[key] for key in sorted(scripts)}}


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_css_file("take-away.css")
    app.connect("doctree-read", add_widget_notes)
    app.connect("doctree-resolved", add_download_line)
    app.connect("build-finished", copy_notebooks)
    app.connect("html-page-context", merge_widget_state, priority=400)  # myst-nb: 500
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
