"""Every claim the suite records names what it resampled (issue: evidence a referee accepts)."""

from __future__ import annotations

import ast
from pathlib import Path

from normcore import claims

CLAIMS = Path(__file__).resolve().parent / "claims"


def test_every_record_call_declares_its_resampled_sources():
    missing = []
    for module in sorted(CLAIMS.glob("test_ch*.py")):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        own = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "record"]
        if own:  # the module's own record, which passes a default source of its own on
            names = [a.arg for a in own[0].args.kwonlyargs + own[0].args.args]
            if "resampled" not in names:
                missing.append(f"{module.name}:{own[0].lineno} (its record names no sources)")
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "record":
                if not any(k.arg == "resampled" for k in node.keywords):
                    missing.append(f"{module.name}:{node.lineno}")
    assert not missing, "record(...) without resampled=: " + ", ".join(missing)


def test_every_stored_claim_carries_its_resampled_sources():
    bare = [
        f"{path.stem}/{name}"
        for path in sorted(claims.RESULTS.glob("ch*.json"))
        for name, h in claims.stored(path.stem).items()
        if not h.resampled
    ]
    assert not bare, "stored without resampled sources: " + ", ".join(bare)
