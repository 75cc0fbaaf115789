"""The one shape every live widget in the book has: an anywidget whose page computes, and whose
kernel, when there is one, computes them too.

A widget syncs three values with its page:

* ``state``: the reader's choices, a dictionary of JSON values (its model module says which);
* ``request``: a token the page sets when it shows the widget;
* ``kernel``: ``{"token", "state", "figures"}``, normcore's figures for the state, computed here
  in Python, once a page has asked. A static page has no kernel to ask, so it says that it runs
  in the page; in JupyterLab the page shows the largest difference between the two results.

Before a page asks, nothing but the state is stored, so a saved notebook holds no figures.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import anywidget
import traitlets

from normcore.errors import NormcoreError
from normcore.widgets._esm import source
from normcore.widgets._input import friendly


class PageWidget(anywidget.AnyWidget):
    """Base of the book's live widgets. A subclass sets `_esm` (its view, `bundle("x.js")`) and
    `compute`; the style sheet every view shares is `_css` unless it sets its own."""

    _css = source("widgets.css")

    state = traitlets.Dict().tag(sync=True)
    request = traitlets.Unicode("").tag(sync=True)
    kernel = traitlets.Dict().tag(sync=True)

    #: normcore's figures for a state (a model module's `figures`); may raise NormcoreError
    compute: ClassVar[Callable[[dict[str, Any]], dict[str, Any]]]

    def figures_for(self, state: dict[str, Any] | None = None) -> dict[str, Any]:
        """normcore's figures for `state` (default: the state on show), or ``{"error": sentence}``
        when the reader's input cannot be used."""
        try:
            return self.compute(self.state if state is None else state)
        except NormcoreError as error:
            return {"error": friendly(error)}

    @traitlets.observe("state", "request")
    def _reply(self, _change: object) -> None:
        if self.request:
            self.kernel = {
                "token": self.request,
                "state": self.state,
                "figures": self.figures_for(),
            }

    def act(self, action: Callable[..., dict[str, Any]], *args: Any) -> None:
        """Apply one of the model's actions to the state, as a reader's move would."""
        self.state = action(self.state, *args)
