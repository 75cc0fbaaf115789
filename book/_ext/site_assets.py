"""A Sphinx extension for the book's site: serve the installed anywidget's browser module.

Every widget in the book is an anywidget. On the static site, the page's widget manager asks
require.js for the module ``anywidget``; ``book/_site/html-manager-shims.js`` maps that name to
``_static/anywidget/index.js``. This extension copies that file there, at the end of each HTML
build, from the anywidget package installed beside normcore (its ``nbextension/index.js``, an AMD
module), so the site's JavaScript is always the version the kernel's Python side was built with.

It is not put in ``book/_vendor``: it would go stale when anywidget is upgraded, and a script in
a folder that Jupyter Book scans for ``.js`` files would be loaded on every page.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any


def anywidget_module() -> Path:
    """The installed anywidget's AMD module for classic widget managers (html-manager's too)."""
    import anywidget

    return Path(anywidget.__file__).with_name("nbextension") / "index.js"


def copy_anywidget(app: Any, exception: BaseException | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    target = Path(app.outdir) / "_static" / "anywidget" / "index.js"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(anywidget_module(), target)


def setup(app: Any) -> dict[str, Any]:
    app.connect("build-finished", copy_anywidget)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
