"""An accessibility scan of every page of the built site with axe-core, in chromium.

axe-core (the engine behind most accessibility checkers) ships inside the axe-playwright-python
package as ``axe.min.js``; it is injected into each page from that local file, so nothing is
fetched. A page passes when axe reports no violation of serious or critical impact, apart from
the ones listed in ``KNOWN``, each with the reason it is tolerated for now; every tolerated
node is printed (pytest -rP shows it), so an exclusion is never silent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .test_site import HTML, site  # noqa: F401  (the fixture that serves _build/html)

BLOCKING = {"serious", "critical"}

#: (axe rule id, CSS fragment of the offending element) -> why it is tolerated, and until when.
KNOWN: dict[tuple[str, str], str] = {}


def axe_script() -> Path | None:
    try:
        import axe_playwright_python
    except ImportError:
        return None
    path = Path(axe_playwright_python.__file__).parent / "axe.min.js"
    return path if path.is_file() else None


def all_pages() -> list[Path]:
    if not HTML.exists():
        return []
    return sorted(
        p
        for p in HTML.rglob("*.html")
        if "_static" not in p.parts and p.name not in {"genindex.html", "search.html"}
    )


def tolerated(rule: str, target: str) -> str | None:
    for (known_rule, fragment), reason in KNOWN.items():
        if rule == known_rule and fragment in target:
            return reason
    return None


@pytest.mark.parametrize(
    "page_path",
    all_pages() or [None],
    ids=lambda p: p.relative_to(HTML).as_posix() if p else "none",
)
def test_page_has_no_serious_accessibility_violation(
    browser: Any,
    site: str,  # noqa: F811
    page_path: Path | None,
) -> None:
    if page_path is None:
        pytest.skip("_build/html has no pages: build the site first (make book)")
    script = axe_script()
    if script is None:
        pytest.skip("axe-playwright-python is not installed (it carries axe-core's axe.min.js)")
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    try:
        page.goto(f"{site}/{page_path.relative_to(HTML).as_posix()}", wait_until="load")
        page.wait_for_load_state("networkidle")
        page.wait_for_function(
            "() => !window.MathJax || !MathJax.startup || !MathJax.startup.promise ? true :"
            " MathJax.startup.promise.then(() => true)",
            timeout=20_000,
        )
        page.add_script_tag(path=str(script))
        result = page.evaluate("() => axe.run(document, {resultTypes: ['violations']})")
    finally:
        context.close()
    problems = []
    for violation in result["violations"]:
        if violation.get("impact") not in BLOCKING:
            continue
        for node in violation["nodes"]:
            target = " ".join(map(str, node.get("target", [])))
            reason = tolerated(violation["id"], target)
            said = f"{violation['impact']} {violation['id']}: {target} ({violation['help']})"
            if reason is None:
                problems.append(said)
            else:
                print(f"tolerated: {said}; because {reason}")
    assert not problems, "\n".join(problems)
