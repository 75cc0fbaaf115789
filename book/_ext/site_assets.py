"""A Sphinx extension for the book's site: the few icons the theme shows, instead of Font Awesome.

The theme (pydata-sphinx-theme, under sphinx-book-theme) loads ``_static/scripts/fontawesome.js``
on every page: Font Awesome Free's whole icon set, 1.5 MB of script, to draw the dozen icons the
header, sidebars and search box show (``<i class="fa-solid fa-bars">``, ...). At the end of each
HTML build this extension replaces that file in the built site by a small script of the book's
own that draws only the icons the site uses, as inline SVG, the way Font Awesome's script does
(same ``svg-inline--fa`` element and classes, so the theme's styles apply unchanged).

The icons are taken, at build time, from the installed theme's own copy of Font Awesome (the file
being replaced), so they are always the version the theme was built with; nothing is vendored.
"Used" means named in a class attribute of a built page or in the theme's scripts in ``_static``
(which add an icon or two at run time, such as the search box's clear button); a page that names
an icon the site does not draw fails ``tests/test_site.py``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

#: Font Awesome's style classes, by the name of the icon set they select.
STYLES = {
    "fa-solid": "fas",
    "fas": "fas",
    "fa-regular": "far",
    "far": "far",
    "fa-brands": "fab",
    "fab": "fab",
}
#: One icon definition in Font Awesome's script: name: [width, height, [aliases], unicode, path]
DEFINITION = re.compile(
    r'(?:"(?P<quoted>[a-z0-9-]+)"|(?P<bare>[a-z][a-z0-9]*)):\[(?P<width>\d+),(?P<height>\d+),'
    r'\[(?P<aliases>[^\]]*)\],"[0-9a-f]+",(?P<path>"(?:[^"\\]|\\.)*"|\[[^\]]*\])\]'
)
#: Where a set of definitions is registered: d("fas", ...), after its definitions.
REGISTERED = re.compile(r'\bd\("(fa[srb])",')
CLASS = re.compile(r"""class=["']([^"']*)["']|classList\.add\(([^)]*)\)|["'](fa-[a-z0-9-]+)["']""")
ICON_NAME = re.compile(r"fa-[a-z0-9-]+")

Icons = dict[str, dict[str, list[Any]]]


def icon_sets(script: str) -> Icons:
    """Every icon in Font Awesome's script, by set ("fas", "far", "fab") and by name and alias:
    [width, height, path data (one string, or a list for a two-tone icon)]."""
    marks = [(m.start(), m.group(1)) for m in REGISTERED.finditer(script)]
    sets: Icons = {"fas": {}, "far": {}, "fab": {}}
    for m in DEFINITION.finditer(script):
        later = [name for start, name in marks if start > m.end()]
        if not later:
            continue
        name = m.group("quoted") or m.group("bare")
        icon = [int(m.group("width")), int(m.group("height")), json.loads(m.group("path"))]
        target = sets[later[0]]
        target.setdefault(name, icon)
        for alias in re.findall(r'"([a-z0-9-]+)"', m.group("aliases")):
            target.setdefault(alias, icon)
    return sets


def named_icons(text: str) -> set[str]:
    """The ``fa-...`` names in the class attributes and class strings of an HTML page or a
    script (style and size classes included; `draw_script` keeps only icons)."""
    names: set[str] = set()
    for m in CLASS.finditer(text):
        names.update(ICON_NAME.findall(" ".join(g for g in m.groups() if g)))
    return names


def used_icons(outdir: Path) -> set[str]:
    """The icon names the built site's pages and the theme's scripts name."""
    names: set[str] = set()
    for page in outdir.rglob("*.html"):
        if "_static" not in page.relative_to(outdir).parts:
            names |= named_icons(page.read_text(encoding="utf-8", errors="replace"))
    for script in (outdir / "_static").rglob("*.js"):
        if script.name != "fontawesome.js" and "mathjax" not in script.parts:
            names |= named_icons(script.read_text(encoding="utf-8", errors="replace"))
    return names


def draw_script(sets: Icons, names: set[str]) -> str:
    """The replacement script: the icons among `names`, in every set that has them, and the code
    that swaps each ``<i class="fa-... fa-...">`` for its SVG (now and when one is added)."""
    wanted = {n[3:] for n in names}
    chosen = {
        style: {n: icon for n, icon in sorted(icons.items()) if n in wanted}
        for style, icons in sets.items()
    }
    return DRAW.replace("__ICONS__", json.dumps(chosen, separators=(",", ":"))).replace(
        "__STYLES__", json.dumps(STYLES, separators=(",", ":"))
    )


DRAW = """/*! For license information please see fontawesome.js.LICENSE.txt */
/* normcore (book/_ext/site_assets.py): the icons this site shows, taken at build time from the
 * theme's copy of Font Awesome Free (icons under CC BY 4.0), drawn as inline SVG the way Font
 * Awesome's own script draws them, in place of its 1.5 MB script. */
(function () {
  "use strict";
  var ICONS = __ICONS__;
  var STYLES = __STYLES__;
  var SVG = "http://www.w3.org/2000/svg";
  var style = document.createElement("style");
  style.textContent = ".svg-inline--fa{display:var(--fa-display,inline-block);height:1em;" +
    "overflow:visible;vertical-align:-.125em;box-sizing:content-box}" +
    ".svg-inline--fa.fa-fw{width:1.25em;text-align:center}" +
    ".svg-inline--fa.fa-lg{font-size:1.25em;line-height:.05em;vertical-align:-.2em}" +
    ".svg-inline--fa.fa-xs{font-size:.75em}.svg-inline--fa.fa-sm{font-size:.875em}";
  document.head.appendChild(style);

  function draw(i) {
    var classes = (i.getAttribute("class") || "").split(/\\s+/);
    var set = "fas", name = null;
    classes.forEach(function (c) {
      if (STYLES[c]) set = STYLES[c];
    });
    classes.forEach(function (c) {
      var icon = c.indexOf("fa-") === 0 && !STYLES[c] ? c.slice(3) : null;
      if (!name && icon && ICONS[set][icon]) name = icon;
    });
    if (!name) return;
    var icon = ICONS[set][name];
    var svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("class", "svg-inline--fa " + classes.filter(function (c) {
      return c && !STYLES[c];
    }).join(" "));
    svg.setAttribute("viewBox", "0 0 " + icon[0] + " " + icon[1]);
    svg.setAttribute("aria-hidden", "true");
    svg.setAttribute("focusable", "false");
    svg.setAttribute("role", "img");
    svg.setAttribute("data-prefix", set);
    svg.setAttribute("data-icon", name);
    if (i.getAttribute("style")) svg.setAttribute("style", i.getAttribute("style"));
    if (i.title) svg.setAttribute("title", i.title);
    [].concat(icon[2]).forEach(function (d) {
      var path = document.createElementNS(SVG, "path");
      path.setAttribute("fill", "currentColor");
      path.setAttribute("d", d);
      svg.appendChild(path);
    });
    i.replaceWith(svg);
  }

  function scan(root) {
    if (root.nodeType !== 1) return;
    if (root.matches("i[class*='fa-'], span.fa[class*='fa-']")) draw(root);
    Array.prototype.forEach.call(root.querySelectorAll("i[class*='fa-']"), draw);
  }

  function start() {
    scan(document.body);
    new MutationObserver(function (changes) {
      changes.forEach(function (change) {
        Array.prototype.forEach.call(change.addedNodes, scan);
      });
    }).observe(document.body, {childList: true, subtree: true});
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
"""


def theme_fontawesome() -> Path:
    """The installed theme's Font Awesome script (the one its pages load)."""
    import pydata_sphinx_theme

    return (
        Path(pydata_sphinx_theme.__file__).parent
        / "theme"
        / "pydata_sphinx_theme"
        / ("static/scripts/fontawesome.js")
    )


def replace_fontawesome(app: Any, exception: BaseException | None) -> None:
    """Write the small icon script over the built site's copy of Font Awesome's."""
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    target = outdir / "_static" / "scripts" / "fontawesome.js"
    if not target.parent.is_dir():
        return
    sets = icon_sets(theme_fontawesome().read_text(encoding="utf-8"))
    target.write_text(draw_script(sets, used_icons(outdir)), encoding="utf-8")
    stale = target.with_name("fontawesome.js.map")  # the source map of the script replaced
    if stale.exists():
        stale.unlink()


def setup(app: Any) -> dict[str, Any]:
    app.connect("build-finished", replace_fontawesome)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
