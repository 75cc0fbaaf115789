"""The bundler (normcore/widgets/_esm.py) on every import form it must handle, and on those it
must refuse; and every real bundle loads as one ES module under node."""

from __future__ import annotations

from pathlib import Path

import pytest
from js.node import run

from normcore.widgets import _esm
from normcore.widgets._esm import JS, BundleError

ENTRIES = sorted(p.name for p in JS.glob("*.js") if "export default" in p.read_text("utf-8"))


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """bundle() over files written into a scratch js/ directory (uncached)."""
    monkeypatch.setattr(_esm, "JS", tmp_path)

    def make(files: dict[str, str], entry: str = "main.js") -> str:
        for name, text in files.items():
            (tmp_path / name).write_text(text, "utf-8")
        return _esm.bundle.__wrapped__(entry)

    return make


LIB = (
    "export const a = 1;\nexport function b() { return 2; }\nexport class C {}\nconst hidden = 3;\n"
)
FORMS = {
    "one line": 'import {a, b} from "./lib.js";',
    "single quotes, no semicolon": "import {a, b} from './lib.js'",
    "over several lines": 'import {\n  a,\n  b,\n} from "./lib.js";',
    "alias": 'import {a as first, b as second} from "./lib.js";',
    "namespace": 'import * as lib from "./lib.js";',
    "namespace over lines": 'import * as\n  lib\n  from "./lib.js";',
}
USE = {"alias": "[first, second()]", "namespace": "[lib.a, lib.b()]"}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_an_import_form_is_inlined(scratch, form: str, oracle) -> None:
    use = USE.get(form.split(" over")[0], "[a, b()]")
    main = FORMS[form] + f"\nexport const seen = {use};\nexport default {{seen}};\n"
    text = scratch({"lib.js": LIB, "main.js": main})
    assert "import" not in text.replace("// ----", "")
    assert text.count("export const a = 1;") == 1
    assert run(oracle("node"), "main.js", "answer(m.seen);", text=text) == [1, 2]


@pytest.mark.parametrize(
    "line",
    [
        'import lib from "./lib.js";',  # a default import
        'import "./lib.js";',  # a bare import
        'import {a} from "../elsewhere/lib.js";',  # outside js/
        'import {a} from "https://example.org/lib.js";',
        'export {a} from "./lib.js";',
        'export * from "./lib.js";',
        'const lib = await import("./lib.js");',
        'import {hidden} from "./lib.js";',  # not exported
        'import {a} from "./missing.js";',
    ],
)
def test_an_import_it_does_not_handle_is_refused(scratch, line: str) -> None:
    with pytest.raises(BundleError):
        scratch({"lib.js": LIB, "main.js": line + "\nexport default {};\n"})


def test_an_import_cycle_is_refused(scratch) -> None:
    with pytest.raises(BundleError, match="cycle"):
        scratch(
            {
                "main.js": 'import {x} from "./two.js";\nexport const y = 1;\n',
                "two.js": 'import {y} from "./main.js";\nexport const x = 1;\n',
            }
        )


def test_each_file_is_inlined_once_before_its_importer(scratch) -> None:
    text = scratch(
        {
            "lib.js": LIB,
            "mid.js": 'import {a} from "./lib.js";\nexport const m = a;\n',
            "main.js": 'import {a} from "./lib.js";\nimport {m} from "./mid.js";\n'
            "export default {};\n",
        }
    )
    assert text.count("// ---- lib.js") == 1
    assert (
        text.index("// ---- lib.js") < text.index("// ---- mid.js") < text.index("// ---- main.js")
    )


def test_every_widget_bundle_loads_as_one_module_under_node(oracle) -> None:
    """Each real bundle imports in node (no duplicate names, nothing left to resolve) and has
    one default export with a render function."""
    node = oracle("node")
    assert len(ENTRIES) >= 8
    for entry in ENTRIES:
        got = run(node, entry, "answer(typeof m.default.render);")
        assert got == "function", entry
