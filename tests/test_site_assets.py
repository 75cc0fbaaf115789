"""book/_ext/site_assets.py without a built site: the theme's icons read from its installed Font
Awesome script, and the small script that replaces it draws exactly the icons asked for."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "book" / "_ext"))
pytest.importorskip("pydata_sphinx_theme", reason="the site's theme (the book extra)")
import site_assets  # noqa: E402  (book/_ext is not a package)


@pytest.fixture(scope="module")
def sets() -> site_assets.Icons:
    return site_assets.icon_sets(site_assets.theme_fontawesome().read_text(encoding="utf-8"))


def test_the_three_sets_are_read_apart(sets: site_assets.Icons) -> None:
    # a brand icon is only a brand; the moon is drawn both solid and regular, differently
    assert "square-github" in sets["fab"] and "square-github" not in sets["fas"]
    assert sets["fas"]["moon"][2] != sets["far"]["moon"][2]
    # an alias names the same drawing as its icon
    assert sets["fas"]["search"] == sets["fas"]["magnifying-glass"]
    width, height, path = sets["fas"]["bars"]
    assert (width, height) == (448, 512) and path.startswith("M")


def test_names_come_from_class_attributes_and_class_strings() -> None:
    html = '<i class="fa-solid fa-bars fa-lg"></i><span class="x">fa-not-a-class</span>'
    script = 'e.classList.add("fa-solid", "fa-xmark"); t = "fa-moon";'
    assert site_assets.named_icons(html) == {"fa-solid", "fa-bars", "fa-lg"}
    assert site_assets.named_icons(script) == {"fa-solid", "fa-xmark", "fa-moon"}


def test_the_script_draws_only_the_icons_named(sets: site_assets.Icons) -> None:
    script = site_assets.draw_script(sets, {"fa-solid", "fa-bars", "fa-lg", "fa-square-github"})
    drawn = json.loads(re.search(r"var ICONS = (\{.*?\});\n", script).group(1))
    assert drawn == {
        "fas": {"bars": sets["fas"]["bars"]},
        "far": {},
        "fab": {"square-github": sets["fab"]["square-github"]},
    }
    assert len(script) < 10_000, "a handful of icons is a few kilobytes, not Font Awesome's 1.5 MB"
    assert "__ICONS__" not in script and "__STYLES__" not in script
