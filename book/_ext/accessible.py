"""Sphinx extension: two accessibility repairs the built pages need.

1. Every image in a figure gets alt text that says what it shows.

myst-nb writes a code cell's plot as an image named by a hash of its bytes, with that name as
its alt text, which tells a screen-reader user nothing. ``book/figures.yml`` holds, per chapter
and figure label, an ``alt`` that describes what the figure shows (the caption says what it
means; a screen reader reads both, so the alt must not repeat it): that goes onto the image. A
figure without an entry keeps the cell's own alt text (``mystnb: image: alt:``), else gets its
caption. An entry's ``note`` is a sentence added after the figure's caption. An image outside any
figure keeps what it has; tests/test_site.py fails the build's site if any image is left with a
file name, or nothing, as its alt text.

2. The bibliography's citation list loses a wrong ARIA role. docutils writes the list of
citations as ``<div role="list" class="citation-list">`` whose children are not list items,
which axe-core reports as a critical violation (aria-required-children); without the role the
entries keep their own ``role="doc-biblioentry"`` and read correctly.
"""

from __future__ import annotations

import re

from docutils import nodes

FILE_NAME = re.compile(r"^[\w./-]*\.(png|svg|jpg|jpeg|gif)$|^[0-9a-f]{16,}", re.IGNORECASE)


def _needs_alt(image: nodes.image) -> bool:
    alt = image.get("alt", "").strip()
    return not alt or bool(FILE_NAME.match(alt)) or alt == image.get("uri", "")


def add_alt_from_caption(app, doctree) -> None:
    import teaching  # tools/teaching.py (tools/ is on the build's path: _config.yml)

    stem = app.env.docname.rsplit("/", 1)[-1]
    notes = teaching.figure_notes().get(stem, {})
    for figure in doctree.findall(nodes.figure):
        captions = list(figure.findall(nodes.caption))
        if not captions:
            continue
        labels = [*figure.get("names", []), *figure.get("ids", [])]
        added = next((notes[k]["note"] for k in labels if notes.get(k, {}).get("note")), None)
        if added:  # a sentence the caption lacks (book/figures.yml), after it
            captions[0] += nodes.Text(" " + " ".join(str(added).split()))
        text = " ".join(captions[0].astext().split())
        described = next((notes[k]["alt"] for k in labels if notes.get(k, {}).get("alt")), None)
        for image in figure.findall(nodes.image):
            if described:
                image["alt"] = " ".join(str(described).split())
            elif _needs_alt(image):
                image["alt"] = text


WRONG_LIST_ROLE = '<div role="list" class="citation-list">'


def drop_citation_list_role(app, pagename, templatename, context, doctree) -> None:
    body = context.get("body")
    if isinstance(body, str) and WRONG_LIST_ROLE in body:
        context["body"] = body.replace(WRONG_LIST_ROLE, '<div class="citation-list">')


def setup(app):
    app.connect("doctree-read", add_alt_from_caption)
    app.connect("html-page-context", drop_citation_list_role)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
