"""The widgets' JavaScript, read from ``normcore/widgets/js/`` and joined into one ES module.

A widget's ``_esm`` must be a single module: on the static site it is stored in the page's widget
state and loaded from there, where a relative import has nothing to resolve against. The files in
``js/`` are written as ordinary modules that import each other, so each can be read, and tested,
on its own. `bundle` inlines those imports: each imported file once, before the file that imports
it, with its own imports resolved the same way. ``export`` stays on inlined declarations (a
module may export many names), so nothing is renamed.

The import forms it handles (``tests/test_widget_bundler.py`` holds it to each), on one line or
spread over several, with single or double quotes and with or without a semicolon:

* ``import {a, b} from "./m.js";``: the names are the file's own top-level names once inlined;
* ``import {a as b} from "./m.js";``: becomes ``const b = a;``;
* ``import * as m from "./m.js";``: becomes ``const m = {every name m.js exports};``;
* ``import {CONFIG} from "./config.js";``: the generated module of Python's constants
  (`normcore.widgets._config.module`), written in at build time; no such file exists in ``js/``.

Anything else that imports (a default import, a bare ``import "./m.js"``, an import from outside
``js/``, ``export ... from``, a dynamic ``import()``) is refused with a BundleError naming the
file, instead of passing through to fail in a reader's browser.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from normcore.errors import NormcoreError

JS = Path(__file__).with_name("js")
#: The generated module (not a file in js/): Python's constants.
CONFIG = "config.js"

#: One import statement, possibly over several lines: its clause and the file it names.
IMPORT = re.compile(
    r"""^[ \t]*import\s*(?P<clause>\{[^}]*\}|\*\s*as\s+[A-Za-z_$][\w$]*)\s*from\s*"""
    r"""(?P<quote>["'])\./(?P<file>[\w.-]+\.js)(?P=quote)[ \t]*;?[ \t]*$""",
    re.MULTILINE,
)
#: Any other statement that would make the bundle reach outside itself.
LEFT_OVER = re.compile(
    r"^[ \t]*import\b|\bimport\s*\(|^[ \t]*export\s*(?:\*|\{[^}]*\}\s*from)",
    re.MULTILINE,
)
EXPORTED = re.compile(
    r"^export\s+(?:const|function\*?|let|class|async\s+function)\s+([\w$]+)", re.M
)
NAME = re.compile(r"^[A-Za-z_$][\w$]*$")


class BundleError(NormcoreError):
    """A widget's JavaScript that the bundler cannot join into one module."""


def source(name: str) -> str:
    """The text of one file in ``js/`` (or of the generated ``config.js``)."""
    if name == CONFIG:
        from normcore.widgets._config import module

        return module()
    path = JS / name
    if not path.is_file():
        raise BundleError(f"bundle: no file js/{name}")
    return path.read_text(encoding="utf-8")


def exports(text: str) -> list[str]:
    """The names a module's text exports with ``export const|function|let|class``."""
    return EXPORTED.findall(text)


def _clause(clause: str, imported: str, name: str) -> str:
    """The statement that replaces one import of `imported` inside `name`."""
    if clause.startswith("*"):
        alias = clause.split()[-1]
        return f"const {alias} = {{{', '.join(exports(source(imported)))}}};"
    lines = []
    offered = set(exports(source(imported)))
    for part in (p.strip() for p in clause.strip("{} \n\t").split(",")):
        if not part:
            continue
        words = part.split()
        if len(words) == 1 and NAME.match(words[0]):
            original, alias = words[0], words[0]
        elif len(words) == 3 and words[1] == "as" and NAME.match(words[0]) and NAME.match(words[2]):
            original, alias = words[0], words[2]
        else:
            raise BundleError(f"bundle: js/{name} imports {part!r} from ./{imported}: not a name")
        if original not in offered:
            raise BundleError(
                f"bundle: js/{name} imports {original} from ./{imported}, which does not export it"
            )
        if alias != original:
            lines.append(f"const {alias} = {original};")
    return "\n".join(lines)


@cache
def bundle(entry: str) -> str:
    """`entry` (a file in ``js/``) with every relative import inlined, as one ES module."""
    done: list[str] = []
    parts: list[str] = []

    def add(name: str, chain: tuple[str, ...]) -> None:
        if name in done:
            return
        if name in chain:
            raise BundleError(f"bundle: an import cycle: {' -> '.join((*chain, name))}")
        text = source(name)
        for match in IMPORT.finditer(text):
            add(match.group("file"), (*chain, name))
        done.append(name)
        text = IMPORT.sub(lambda m: _clause(m.group("clause"), m.group("file"), name), text)
        left = LEFT_OVER.search(text)
        if left:
            line = text[: left.start()].count("\n") + 1
            raise BundleError(
                f"bundle: js/{name}, line {line}: an import or re-export the "
                f"bundler does not handle: {text[left.start() :].splitlines()[0]!r}"
            )
        if name != entry:
            text = re.sub(r"^export default .*$", "", text, flags=re.MULTILINE)
        parts.append(f"// ---- {name} " + "-" * (90 - len(name)) + "\n" + text.strip() + "\n")

    add(entry, ())
    return "\n".join(parts)
