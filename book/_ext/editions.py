"""Sphinx extension: the book's editions, and the widget loader inlined in every page.

1. **Editions** (``NORMCORE_EDITION``, ``tools/teaching.py``). The reader's edition (``make
   book``) renders each chapter's stored run as it is: every worked solution folded under its
   exercise, for self-study. The student edition (``make student``) renders the same run
   without them: before a chapter's notebook is parsed, its ``:::{dropdown} Solution`` blocks
   and the glued values only they cite are taken out (``teaching.strip_solutions``), so no
   page, no downloaded notebook (``take_away``) and no PDF (printed from the same pages) holds
   a solution.
2. **Widgets from disk.** The site's widget loader (``book/_site/widgets.js``, an ES module) is
   written into each page that shows widgets as an inline module script instead of being loaded
   from ``_static/``: chromium refuses a module script's file over ``file://`` (origin null,
   "blocked by CORS policy"), but runs an inline one, so a page opened from disk mounts every
   widget as it does over http. The widget's own module is imported from a ``blob:`` URL, which
   works from disk too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import teaching  # tools/teaching.py (tools/ is on the build's path: _config.yml)
from sphinx.application import Sphinx

LOADER = Path(__file__).resolve().parent.parent / "_site" / "widgets.js"


def strip_student_solutions(app: Sphinx, docname: str, source: list[str]) -> None:
    """source-read: in the student edition, a chapter's notebook without its solutions."""
    if teaching.edition() != "student":
        return
    path = Path(app.env.doc2path(docname))
    if path.suffix != ".ipynb":
        return
    nb = nbformat.reads(source[0], as_version=4)
    if teaching.strip_solutions(nb):
        source[0] = nbformat.writes(nb)


def inline_widget_loader(app: Sphinx, pagename: str, templatename: str, context, doctree) -> None:
    """html-page-context, after myst-nb's (which adds the loader by file name): the loader's
    text in place of its file."""
    from sphinx.builders.html._assets import _JavaScript

    scripts = context.get("script_files")
    if not scripts:
        return
    for index, script in enumerate(scripts):
        name = str(getattr(script, "filename", script) or "")
        if name.rsplit("/", 1)[-1] == LOADER.name:
            attributes = {k: v for k, v in getattr(script, "attributes", {}).items()}
            attributes.pop("body", None)
            attributes["type"] = "module"
            body = LOADER.read_text(encoding="utf-8").replace("</script", "<\\/script")
            scripts[index] = _JavaScript(
                "", priority=getattr(script, "priority", 500), body=body, **attributes
            )


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("source-read", strip_student_solutions)
    app.connect("html-page-context", inline_widget_loader, priority=600)  # myst-nb: 500
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
