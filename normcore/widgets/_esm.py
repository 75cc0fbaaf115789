"""The widgets' JavaScript, read from ``normcore/widgets/js/`` and joined into one ES module.

A widget's ``_esm`` must be a single module: on the static site it is stored in the page's widget
state and loaded from there, where a relative import has nothing to resolve against. The files in
``js/`` are written as ordinary modules that import each other (``import {x} from "./y.js";``), so
each can be read, and tested, on its own. `bundle` inlines those imports: each imported file once,
before the file that imports it, with its own imports resolved the same way. ``export`` stays on
inlined declarations (a module may export many names), so nothing is renamed or rewritten.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

JS = Path(__file__).with_name("js")
IMPORT = re.compile(r'^import\s+(?:[^;]*?)\s+from\s+"\./([\w.-]+\.js)";\s*$', re.MULTILINE)
NAMESPACE = re.compile(r'^import\s+\*\s+as\s+(\w+)\s+from\s+"\./([\w.-]+\.js)";\s*$', re.MULTILINE)


def source(name: str) -> str:
    """The text of one file in ``js/``."""
    return (JS / name).read_text(encoding="utf-8")


@cache
def bundle(entry: str) -> str:
    """`entry` (a file in ``js/``) with every relative import inlined, as one ES module.

    A namespace import (``import * as pm from "./m.js"``) becomes a plain object of the file's
    exported names, so ``pm.figures`` reads as it does in the file.
    """
    done: list[str] = []
    parts: list[str] = []

    def exports(name: str) -> list[str]:
        return re.findall(
            r"^export\s+(?:const|function|let|class)\s+(\w+)", source(name), re.MULTILINE
        )

    def add(name: str) -> None:
        if name in done:
            return
        text = source(name)
        for match in IMPORT.finditer(text):
            add(match.group(1))
        for match in NAMESPACE.finditer(text):
            add(match.group(2))
        done.append(name)
        text = NAMESPACE.sub(
            lambda m: f"const {m.group(1)} = {{{', '.join(exports(m.group(2)))}}};", text
        )
        text = IMPORT.sub("", text)
        if name != entry:
            text = re.sub(r"^export default .*$", "", text, flags=re.MULTILINE)
        parts.append(f"// ---- {name} " + "-" * (90 - len(name)) + "\n" + text.strip() + "\n")

    add(entry)
    return "\n".join(parts)
