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
   (tools/teaching.py: a development build names its commit), its edition and the licences.
6. **Install line (html builder).** The download line ends with how to install the package:
   the wheel in the site's ``dist/`` (``make release`` builds it), else the repository that
   ``_config.yml`` configures, else where to get the release.
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
            f'(SVG, PDF and PNG, with captions; <a class="nc-figures-all" href="{whole}" download>'
            "every chapter's</a>)"
        )
    if can_print():
        html += f' · <a class="nc-pdf-download" href="{pdf}">the whole book as one PDF</a>'
    html += ". " + install_html(here)
    html += "</p>"
    section = title.parent
    section.insert(section.index(title) + 1, nodes.raw("", html, format="html"))


def install_html(here: str) -> str:
    """How to install normcore, for the download line: the wheel the site holds (a release), or
    the repository configured in _config.yml, or, with neither, where to get the release."""
    wheel = teaching.DIST / teaching.wheel_name()
    repo = teaching.repository()
    name = teaching.DISTRIBUTION
    if wheel.is_file():
        href = posixpath.relpath(posixpath.join(teaching.DIST_DIR, wheel.name), here or ".")
        text = (
            f'Install the package: <a class="nc-wheel-download" href="{href}" download>'
            f"{wheel.name}</a>, then <code>pip install {wheel.name}</code> (it installs "
            f"<code>{name}</code>, imported as <code>normcore</code>)"
        )
    elif repo:
        text = (
            "Install the package: <code>pip install &quot;git+"
            f'{repo}&quot;</code> (the book\'s repository, <a class="nc-repository" '
            f'href="{repo}">{repo}</a>; imported as <code>normcore</code>)'
        )
    else:
        text = (
            "Install the package from the book's release archive (its <code>dist/</code> holds "
            f"the wheel: <code>pip install {teaching.wheel_name(teaching.release_version())}"
            "</code>), or with <code>pip install -e .</code> in a copy of the book's files; "
            "ask whoever gave you this book for either"
        )
    return f'<span class="nc-install">{text}.</span>'


def booklet_sentence(page: str, pdf: str, guide: str) -> str:
    """The back matter's line about the worked solutions, true of the edition it is built in."""
    if teaching.edition() == "student":
        return (
            '<p class="nc-booklet nc-screen-only">This is the <strong>student edition</strong>: '
            "no worked solution is in its pages, its chapter notebooks or its PDF, and its "
            "exercise notebooks point to none. Teachers have them in the instructor bundle "
            "(<code>make instructor</code>), with the solutions booklet and the answer keys.</p>"
        )
    html = (
        '<p class="nc-booklet nc-screen-only">This is the <strong>reader\'s edition</strong>, '
        "for self-study: each chapter folds the worked solutions under its exercises, and its "
        "PDF prints them. For teachers: "
        f'<a class="nc-booklet-page" href="{page}">the worked solutions of every exercise</a>, '
        "on one page"
    )
    if can_print():
        html += f' and <a class="nc-booklet-pdf" href="{pdf}">as a PDF</a>'
    html += (
        f', and <a class="nc-guide" href="{guide}">the teaching guide</a>. To hand the book out '
        "without the answers, build the student edition (<code>make student</code>): its pages, "
        "notebooks and PDF hold none.</p>"
    )
    return html


def add_booklet_line(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """doctree-resolved (html builder only): on the back matter's pages (the documents without
    a chapter number), a line about where the worked solutions are, in this edition."""
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
    guide = posixpath.relpath(teaching.GUIDE_HTML, here or ".")
    html = booklet_sentence(page, pdf, guide)
    section = title.parent
    section.insert(section.index(title) + 1, nodes.raw("", html, format="html"))


def footer_html() -> str:
    """Every page's footer: the version of the text (with its commit unless a tagged release),
    the edition, the licences and the attribution line."""
    edition = "student edition" if teaching.edition() == "student" else "reader's edition"
    return (
        f'<p class="nc-version">normcore {teaching.version()}, {edition}.</p>'
        f'<p class="nc-licence">Text and figures © {teaching.COPYRIGHT}, licensed under '
        f'<a rel="license" href="{teaching.TEXT_LICENCE_URL}">{teaching.TEXT_LICENCE}</a>; '
        f"code under the {teaching.CODE_LICENCE} licence (LICENSE). To reuse: "
        f'<span class="nc-attribution">{teaching.attribution_html()}</span></p>'
    )


def show_version(app: Sphinx, config: Any) -> None:
    """config-inited: the version as Sphinx's release, and in every page's footer with the
    licence (tools/teaching.py: development builds name their commit)."""
    version = teaching.version()
    config.version = config.release = version
    config.copyright = teaching.COPYRIGHT
    options = dict(config.html_theme_options or {})
    footer = options.get("extra_footer") or ""
    options["extra_footer"] = footer_html() + footer
    config.html_theme_options = options


def notebook_header(stem: str) -> str:
    """The first cell of a downloaded chapter notebook: which text and edition it is."""
    edition = teaching.edition()
    where = (
        "This student edition holds no worked solution."
        if edition == "student"
        else "This reader's edition folds each worked solution under its exercise."
    )
    return (
        f"*normcore: normalisation layers, computed*, version {teaching.version()}, chapter "
        f"notebook `{stem}.ipynb`. {where} {teaching.licence_note()}"
    )


def take_away_notebook(notebook: Path):
    """The notebook a reader downloads: the stored run, with a header naming its version and
    edition, and in the student edition without its solutions."""
    nb = nbformat.read(notebook, as_version=4)
    if teaching.edition() == "student":
        teaching.strip_solutions(nb)
    header = nbformat.v4.new_markdown_cell(notebook_header(notebook.stem))
    header["id"] = "normcore-edition"
    nb.cells.insert(0, header)
    nb.metadata["normcore"] = {
        "chapter": notebook.stem,
        "version": teaching.version(),
        "edition": teaching.edition(),
    }
    return nb


def copy_notebooks(app: Sphinx, exception: Exception | None) -> None:
    """build-finished (html builder): each chapter's notebook beside its page (the edition's),
    and the release's wheel and sdist into the site's dist/ where make release built them."""
    if exception is not None or app.builder.name != "html":
        return
    for docname in sorted(app.env.found_docs):
        notebook = paired_notebook(app, docname)
        if notebook is not None:
            target = Path(app.outdir) / posixpath.dirname(docname) / notebook.name
            target.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(take_away_notebook(notebook), target)
    for name in (teaching.wheel_name(), teaching.sdist_name()):
        built = teaching.DIST / name
        if built.is_file():
            (Path(app.outdir) / teaching.DIST_DIR).mkdir(exist_ok=True)
            shutil.copyfile(built, Path(app.outdir) / teaching.DIST_DIR / name)


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
