"""Checks on the BUILT site in _build/html (``make book`` builds it before the tests run).

The site has to work offline and must not call out to anyone: every script, style sheet, font,
image and frame a page loads is a file under _build/html; MathJax comes from the vendored copy in
book/_vendor; the widgets' saved state is in the page, and the site's own loader
(book/_site/widgets.js) mounts them, with no widget manager and no require.js.

The vendored MathJax and the theme's own files still *mention* some remote addresses (licence
banners, MathJax's speech engine defaults). Each such mention is listed in ``AUDITED`` with the
reason it cannot load anything; any new remote address anywhere in the site fails
``test_no_unaudited_remote_address``.
"""

from __future__ import annotations

import ast
import base64
import fnmatch
import json
import re
from functools import cache
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
import teaching  # tools/ (pyproject: pythonpath)

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "_build" / "html"
TOC = ROOT / "_toc.yml"

pytestmark = [
    pytest.mark.site,  # reads the built site: not part of make check
    pytest.mark.skipif(
        not (SITE / "index.html").is_file(),
        reason="the site is not built (_build/html/index.html is missing); run `make book` first",
    ),
]

# A scheme-less "//host" counts only where it cannot be the middle of base64 data (an inline
# image in a widget's saved state holds runs like "...nSJDZ//MCNN...").
URL = re.compile(
    r"""(?:https?:|(?<![A-Za-z0-9+/=:]))//[A-Za-z0-9][A-Za-z0-9.-]*(?::\d+)?[^\s"'`<>()\\]*"""
)
SCHEMED = re.compile(r"""https?://[A-Za-z0-9][A-Za-z0-9.-]*(?::\d+)?[^\s"'`<>()\\]*""")
LOCAL_HOSTS = {"localhost", "127.0.0.1", "[::1]", "::1"}
# XML namespace names: identifiers compared as strings, never fetched.
NAMESPACES = (
    "http://www.w3.org/2000/svg",
    "http://www.w3.org/1999/xlink",
    "http://www.w3.org/1999/xhtml",
    "http://www.w3.org/1998/Math/MathML",
    "http://www.w3.org/2001/10/synthesis",
    "http://www.w3.org/XML/1998/namespace",
)

# (file pattern under _build/html, address prefix, why it cannot load anything)
AUDITED: tuple[tuple[str, str, str], ...] = (
    # MathJax (vendored)
    (
        "_static/mathjax/tex-chtml.js",
        "https://cdn.jsdelivr.net/npm/speech-rule-engine@",
        "speech engine's default map location; MathJax sets its own (local) path, and speech is "
        "off unless the reader turns it on in the menu",
    ),
    (
        "_static/mathjax/tex-chtml.js",
        "https://cdn.jsdelivr.net/npm/sre-mathmaps-ie@",
        "speech maps for Internet Explorer only",
    ),
    (
        "_static/mathjax/tex-chtml.js",
        "https://cdn.jsdelivr.net/npm/wicked-good-xpath@",
        "XPath polyfill for browsers without document.evaluate (Internet Explorer)",
    ),
    ("_static/mathjax/tex-chtml.js", "https://www.mathjax.org", "link in the About box"),
    ("_static/mathjax/input/tex/extensions/*.js", "https://github.com/mhchem/", "comment"),
    (
        "_static/mathjax/input/tex/extensions/*.js",
        "http://www.apache.org/licenses/",
        "licence banner",
    ),
    # Sphinx and theme files
    ("_static/searchtools.js", "https://developer.mozilla.org/", "comment"),
    (
        "_static/scripts/pydata-sphinx-theme.js",
        "https://pydata-sphinx-theme.readthedocs.io/",
        "text of a console warning",
    ),
    ("_static/clipboard.min.js", "https://clipboardjs.com/", "licence banner"),
)

LOADING_ATTRIBUTES = {
    "src",
    "href",
    "srcset",
    "data",
    "poster",
    "action",
    "formaction",
    "background",
    "manifest",
    "xlink:href",
}


# --------------------------------------------------------------------------------------------
# helpers


def toc_documents() -> list[str]:
    import yaml

    toc = yaml.safe_load(TOC.read_text(encoding="utf-8"))
    docs = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                docs.append(entry["file"])
            walk(entry.get("sections"))
            for part in entry.get("parts", []) if isinstance(entry, dict) else []:
                walk(part.get("chapters"))

    walk(toc.get("chapters"))
    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    return docs


def site_files(*suffixes: str) -> list[Path]:
    return sorted(p for p in SITE.rglob("*") if p.is_file() and p.suffix in suffixes)


def pages() -> list[Path]:
    """The site's pages (not the theme's template fragments copied into _static)."""
    return [p for p in site_files(".html") if p.relative_to(SITE).parts[0] != "_static"]


def is_remote(url: str) -> bool:
    url = url.strip()
    if url.startswith("//"):
        url = "https:" + url
    parts = urlsplit(url)
    if parts.scheme in ("", "data", "blob", "about", "javascript", "mailto", "tel"):
        return False
    if parts.scheme == "file":
        return False
    host = (parts.hostname or "").lower()
    return host not in LOCAL_HOSTS


class Page(HTMLParser):
    """Tags with their attributes, inline script/style text, and link targets of one page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.inline: list[tuple[str, dict[str, str], str]] = []
        self.text: list[str] = []
        self._open: tuple[str, dict[str, str]] | None = None
        self._buffer: list[str] = []

    def handle_starttag(self, tag, attrs):
        attributes = {k: (v or "") for k, v in attrs}
        self.tags.append((tag, attributes))
        if tag in ("script", "style"):
            self._open, self._buffer = (tag, attributes), []

    def handle_endtag(self, tag):
        if self._open and tag == self._open[0]:
            self.inline.append((*self._open, "".join(self._buffer)))
            self._open = None

    def handle_data(self, data):
        if self._open:
            self._buffer.append(data)
        else:
            self.text.append(data)


@cache
def parse(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    page.close()
    return page


def local_target(page: Path, url: str) -> Path:
    path = unquote(urlsplit(url).path)
    return (page.parent / path).resolve() if not path.startswith("/") else SITE / path[1:]


def strip_css_comments(text: str) -> str:
    return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


def unaudited(relative: str, urls: set[str]) -> set[str]:
    left = set()
    for url in urls:
        if url.startswith(NAMESPACES) or not is_remote(url):
            continue
        if any(
            fnmatch.fnmatch(relative, pattern) and url.startswith(prefix)
            for pattern, prefix, _ in AUDITED
        ):
            continue
        left.add(url)
    return left


# --------------------------------------------------------------------------------------------
# pages


def test_every_chapter_page_exists():
    docs = toc_documents()
    assert docs, "_toc.yml lists no document"
    missing = [d for d in docs if not (SITE / f"{d}.html").is_file()]
    assert not missing, f"pages missing from the built site: {missing}"
    index = (SITE / "index.html").read_text(encoding="utf-8")
    assert f"{docs[0]}.html" in index, "index.html does not lead to the first page"


def test_every_chapter_source_is_in_the_toc():
    chapters = sorted(f"book/{p.stem}" for p in (ROOT / "book").glob("[0-9][0-9]-*.md"))
    missing = [c for c in chapters if c not in toc_documents()]
    assert not missing, (
        f"chapters not in _toc.yml (add them by hand; tests/test_build.py): {missing}"
    )


def test_chapters_and_their_figures_carry_the_chapter_number():
    """Chapter NN's title reads "NN. ..." and its figures "Fig. NN.k", k = 1, 2, ... in order, so a
    figure number names one figure in the whole book; the preface and glossary go unnumbered."""
    numbered = 0
    for page in sorted((SITE / "book").glob("*.html")):
        text = page.read_text(encoding="utf-8")
        title = re.search(r'<h1>(.*?)<a class="headerlink"', text, re.S)  # the page's own title
        assert title, f"{page.name}: no title"
        figures = re.findall(r'caption-number">Fig\. ([0-9.]+) ', text)
        match = re.match(r"(\d\d)-", page.name)
        if match is None or match.group(1) == "00":
            assert "section-number" not in title.group(1), f"{page.name} should not be numbered"
            assert all("." not in f for f in figures)
            continue
        chapter = int(match.group(1))
        assert f'section-number">{chapter}. </span>' in title.group(1), page.name
        assert figures == [f"{chapter}.{k}" for k in range(1, len(figures) + 1)], page.name
        images = [tag for tag, _ in parse(page).tags if tag == "img"]
        assert len(images) == len(figures), f"{page.name}: an image without a numbered caption"
        numbered += len(figures)
    assert numbered > 0, "no numbered figure found in any chapter"


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.relative_to(SITE).as_posix())
def test_page_loads_nothing_remote(page):
    """Scripts, styles, fonts, images, frames, media: all local. Plain <a> links may leave."""
    parsed = parse(page)
    remote = []
    for tag, attributes in parsed.tags:
        for name, value in attributes.items():
            if name.startswith("xmlns") or (tag == "a" and name == "href"):
                continue
            if name == "content" and tag == "meta":
                value_urls = SCHEMED.findall(value)
            elif name in LOADING_ATTRIBUTES or name.startswith("data-") or name == "style":
                value_urls = (
                    [u.strip().split(" ")[0] for u in value.split(",")]
                    if name == "srcset"
                    else [value]
                    if name in LOADING_ATTRIBUTES
                    else SCHEMED.findall(value)
                )
            else:
                value_urls = SCHEMED.findall(value)
            remote += [
                f"<{tag} {name}={u!r}>"
                for u in value_urls
                if is_remote(u) and not u.startswith(NAMESPACES)
            ]
    for tag, _attributes, body in parsed.inline:
        remote += [
            f"inline <{tag}>: {u}"
            for u in URL.findall(body)
            if is_remote(u) and not u.startswith(NAMESPACES)
        ]
    assert not remote, f"{page.relative_to(SITE)} refers to remote resources:\n" + "\n".join(remote)


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.relative_to(SITE).as_posix())
def test_page_resources_exist_on_disk(page):
    """Every local script, style sheet, image, frame and media file a page names is there."""
    missing = []
    for tag, attributes in parse(page).tags:
        for name in ("src", "href", "srcset", "poster", "data"):
            value = attributes.get(name)
            if not value or (tag == "a" and name == "href"):
                continue
            if tag == "link" and attributes.get("rel") in ("next", "prev", "index", "search"):
                continue
            urls = (
                [u.strip().split(" ")[0] for u in value.split(",")] if name == "srcset" else [value]
            )
            for url in urls:
                if is_remote(url) or url.startswith(("data:", "#", "mailto:", "javascript:")):
                    continue
                if not local_target(page, url).exists():
                    missing.append(f"<{tag} {name}={url!r}>")
    assert not missing, f"{page.relative_to(SITE)} names files that are not built:\n" + "\n".join(
        missing
    )


def test_pages_have_no_thebe_or_launch_buttons():
    for page in pages():
        text = page.read_text(encoding="utf-8")
        for needle in (
            "THEBE_JS_URL",
            "thebe.js",
            "binder",
            "colab.research",
            "deepnote.com",
            "hypothes.is",
            "utteranc.es",
            "googletagmanager",
            "plausible.io",
        ):
            assert needle not in text, f"{page.relative_to(SITE)} mentions {needle!r}"


def test_no_unaudited_remote_address():
    """No remote address anywhere in .html/.js/.css, except audited, non-loading mentions."""
    problems = []
    for path in site_files(".html", ".js", ".css"):
        relative = path.relative_to(SITE).as_posix()
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".css":
            text = strip_css_comments(text)
        if path.suffix == ".html":
            parsed = parse(path)
            # plain <a href> links are navigation, not loads; everything else counts
            links = {a.get("href", "") for tag, a in parsed.tags if tag == "a"}
            urls = {u for u in SCHEMED.findall(text) if u not in links}
        else:
            urls = set(SCHEMED.findall(text))
        problems += [f"{relative}: {u}" for u in sorted(unaudited(relative, urls))]
    assert not problems, "remote addresses in the built site:\n" + "\n".join(problems)


def test_css_loads_only_local_files():
    problems = []
    for path in site_files(".css"):
        text = strip_css_comments(path.read_text(encoding="utf-8", errors="replace"))
        for match in re.finditer(r"""url\(\s*['"]?([^'")]+)""", text):
            url = match.group(1)
            if url.startswith("data:"):
                continue
            if is_remote(url):
                problems.append(f"{path.relative_to(SITE)}: url({url})")
            elif not (path.parent / unquote(urlsplit(url).path)).exists():
                problems.append(f"{path.relative_to(SITE)}: url({url}) is not built")
        for match in re.finditer(r"@import\s+(?:url\()?['\"]?([^'\")\s;]+)", text):
            if is_remote(match.group(1)):
                problems.append(f"{path.relative_to(SITE)}: @import {match.group(1)}")
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------------------------
# MathJax and widgets


def scripts(page: Path) -> list[dict[str, str]]:
    return [a for tag, a in parse(page).tags if tag == "script"]


def math_pages() -> list[Path]:
    return [p for p in pages() if 'class="math' in p.read_text(encoding="utf-8")]


def test_some_page_has_math():
    assert math_pages(), "no page has typeset mathematics; the preface should"


@pytest.mark.parametrize("page", math_pages(), ids=lambda p: p.relative_to(SITE).as_posix())
def test_mathjax_is_local(page):
    sources = [s["src"] for s in scripts(page) if "mathjax" in s.get("src", "").lower()]
    assert sources, f"{page.relative_to(SITE)} has math but loads no MathJax"
    for src in sources:
        assert not is_remote(src), f"MathJax loaded from {src}"
        target = local_target(page, src)
        assert target.is_file(), f"{src} is not in the site"
        assert target.parent == SITE / "_static" / "mathjax"
    fonts = SITE / "_static" / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2"
    assert (fonts / "MathJax_Main-Regular.woff").is_file(), "MathJax fonts are not vendored"
    assert (SITE / "_static" / "mathjax" / "input" / "tex" / "extensions" / "ams.js").is_file()


def widget_pages() -> list[Path]:
    return [
        p
        for p in pages()
        if "application/vnd.jupyter.widget-view+json" in p.read_text(encoding="utf-8")
    ]


def test_some_page_has_a_widget():
    assert widget_pages(), "no page shows a widget; the preface should"


@pytest.mark.parametrize("page", widget_pages(), ids=lambda p: p.relative_to(SITE).as_posix())
def test_widgets_are_mounted_by_the_sites_own_loader(page):
    """A widget page holds the site's own loader (book/_site/widgets.js) inline, as an ES module
    (a module's file is refused over file://: the page must work opened from disk), and loads no
    widget manager, require.js or anything of anywidget's: each view's module is in the saved
    state."""
    tags = scripts(page)
    inline = re.findall(r"<script([^>]*)>(.*?)</script>", page.read_text(encoding="utf-8"), re.S)
    loader = [attrs for attrs, body in inline if "normcore widgets:" in body]
    assert len(loader) == 1, f"{page.relative_to(SITE)} holds the widget loader {len(loader)} times"
    assert 'type="module"' in loader[0], "the loader is an ES module (it imports the views)"
    assert "src=" not in loader[0]
    assert not [s for s in tags if s.get("src", "").split("?")[0].endswith("widgets.js")]
    heavy = [
        s["src"]
        for s in tags
        if re.search(r"embed-amd|require(js)?\.js|html-manager|anywidget", s.get("src", ""))
    ]
    assert not heavy, f"{page.relative_to(SITE)} still loads {heavy}"


def test_no_page_without_widgets_loads_the_loader():
    for page in pages():
        if page in widget_pages():
            continue
        assert not any("widgets.js" in s.get("src", "") for s in scripts(page)), page
        assert "normcore widgets:" not in page.read_text(encoding="utf-8"), page


def test_theme_icons_are_drawn_by_a_small_script():
    """The theme's Font Awesome script (1.5 MB) is replaced by book/_ext/site_assets.py's small
    one, which draws every icon a page names in a class attribute."""
    import sys

    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    import site_assets

    script = SITE / "_static" / "scripts" / "fontawesome.js"
    text = script.read_text(encoding="utf-8")
    assert script.stat().st_size < 50_000, f"fontawesome.js is {script.stat().st_size} bytes"
    drawn = json.loads(re.search(r"var ICONS = (\{.*?\});\n", text).group(1))
    sets = site_assets.icon_sets(site_assets.theme_fontawesome().read_text(encoding="utf-8"))
    missing = set()
    for page in pages():
        for tag, a in parse(page).tags:
            classes = a.get("class", "").split()
            if tag != "i" or not any(c.startswith("fa-") for c in classes):
                continue
            style = next((site_assets.STYLES[c] for c in classes if c in site_assets.STYLES), "fas")
            icons = [c[3:] for c in classes if c.startswith("fa-") and c[3:] in sets[style]]
            if not any(i in drawn[style] for i in icons):
                missing.add((page.relative_to(SITE).as_posix(), " ".join(classes)))
    assert not missing, f"icons named but not drawn: {sorted(missing)[:5]}"


def test_pages_name_a_local_favicon():
    """Without a declared icon every browser asks for /favicon.ico and logs a 404."""
    # The bare redirect to the first chapter names none; the browser's /favicon.ico finds one.
    assert (SITE / "favicon.ico").read_bytes()[:4] == b"\x00\x00\x01\x00", "no favicon.ico"
    for page in pages():
        if page.name == "index.html" and page.parent == SITE:
            continue
        icons = [
            a.get("href", "")
            for tag, a in parse(page).tags
            if tag == "link" and "icon" in a.get("rel", "").split()
        ]
        assert icons, f"{page.relative_to(SITE)} declares no icon"
        for href in icons:
            assert not is_remote(href) and local_target(page, href).is_file(), href


@pytest.mark.parametrize("page", widget_pages(), ids=lambda p: p.relative_to(SITE).as_posix())
def test_widget_state_is_saved(page):
    """Each widget view on the page has its model in the page's saved state."""
    parsed = parse(page)
    states = [
        json.loads(body)
        for tag, a, body in parsed.inline
        if tag == "script" and a.get("type") == "application/vnd.jupyter.widget-state+json"
    ]
    assert states, f"{page.relative_to(SITE)} shows widgets but saved no widget state"
    models = {key for state in states for key in state.get("state", {})}
    views = [
        json.loads(body)["model_id"]
        for tag, a, body in parsed.inline
        if tag == "script" and a.get("type") == "application/vnd.jupyter.widget-view+json"
    ]
    missing = [v for v in views if v not in models]
    assert not missing, f"widget views without saved state: {missing}"


def test_pages_show_images():
    """At least one page shows a figure, and every <img> on every page is on disk."""
    shown = 0
    for page in pages():
        for tag, attributes in parse(page).tags:
            if tag != "img" or not attributes.get("src"):
                continue
            src = attributes["src"]
            if src.startswith("data:"):
                shown += 1
                continue
            assert not is_remote(src), f"{page.relative_to(SITE)}: remote image {src}"
            target = local_target(page, src)
            assert target.is_file() and target.stat().st_size > 0, (
                f"{page.relative_to(SITE)}: image {src} is missing or empty"
            )
            shown += 1
    assert shown, "no page shows an image"


# --- readable on its own: no private notes named, every image described ---------------------

NOTE_MENTION = re.compile(r"\bseeds?\s+00\d\b", re.IGNORECASE)
FILE_LIKE_ALT = re.compile(r"(\.(png|svg|jpe?g|gif)$)|(^[0-9a-f]{16,})", re.IGNORECASE)


def _pages() -> list[Path]:
    return sorted(p for p in SITE.rglob("*.html") if "_static" not in p.parts)


def _visible_text(html: str) -> str:
    """The page without scripts and style (widget state and search data are not prose)."""
    html = re.sub(r"<script\b.*?</script>", " ", html, flags=re.DOTALL | re.IGNORECASE)
    return re.sub(r"<style\b.*?</style>", " ", html, flags=re.DOTALL | re.IGNORECASE)


def test_no_page_names_the_private_notes():
    """The book was written from private notes ("seed 000" to "seed 004"); a reader never sees
    them named. Experiments are the book's own; printed figures live in tests/data."""
    found = []
    for page in _pages():
        for m in NOTE_MENTION.finditer(_visible_text(page.read_text(encoding="utf-8"))):
            found.append(f"{page.relative_to(SITE)}: {m.group(0)!r}")
    assert not found, "\n".join(found)


class _Images(HTMLParser):
    def __init__(self):
        super().__init__()
        self.images: list[dict[str, str | None]] = []

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.images.append(dict(attrs))


def test_every_image_has_alt_text_that_is_not_a_file_name():
    """Every <img> on every page carries alt text that says something: not empty, not the
    file's name or hash (myst-nb's default), so a screen reader can tell what a figure shows."""
    bad = []
    count = 0
    for page in _pages():
        parser = _Images()
        parser.feed(page.read_text(encoding="utf-8"))
        for img in parser.images:
            count += 1
            alt = (img.get("alt") or "").strip()
            src = img.get("src") or ""
            name = src.rsplit("/", 1)[-1]
            if not alt or FILE_LIKE_ALT.search(alt) or alt == name or alt == src:
                bad.append(f"{page.relative_to(SITE)}: {src} alt={alt!r}")
    assert count > 0, "no images found: is the site built?"
    assert not bad, "\n".join(bad)


# --- one executed run per chapter: the page shows the notebook it offers for download --------

GLUE_TEXT = re.compile(r"\{glue:text\}`([A-Za-z0-9_]+)(?::([^`]+))?`")
RECORD = "application/papermill.record/text/plain"


def chapter_pages() -> list[str]:
    """The chapters with a stored run: every book/NN-name.ipynb."""
    return sorted(f"book/{p.stem}" for p in (ROOT / "book").glob("[0-9][0-9]-*.ipynb"))


def downloaded(doc: str) -> dict:
    """The notebook the chapter's page links for download, read from the built site."""
    page = SITE / f"{doc}.html"
    hrefs = [
        a.get("href", "")
        for tag, a in parse(page).tags
        if tag == "a" and "nc-notebook-download" in a.get("class", "").split()
    ]
    assert len(hrefs) == 1, f"{doc}: expected one notebook download link, got {hrefs}"
    target = local_target(page, hrefs[0])
    got = json.loads(target.read_text(encoding="utf-8"))
    stored = json.loads((ROOT / f"{doc}.ipynb").read_text(encoding="utf-8"))
    header = got["cells"][0]
    # the reader's edition: the stored run, cell for cell, under a header naming its text
    assert header["id"] == "normcore-edition", f"{doc}: no header cell naming the version"
    assert teaching.version() in "".join(header["source"]), f"{doc}: header without the version"
    assert got["metadata"]["normcore"]["version"] == teaching.version()
    assert got["cells"][1:] == stored["cells"], f"{doc}: the download is not the stored run"
    got["cells"] = got["cells"][1:]
    return got


def _plain_quotes(text: str) -> str:
    """`text` with the curly quotes Sphinx's smartquotes makes of ' and " put back."""
    return text.translate(
        str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
    )


def shown_text(text: str, spec: str | None) -> set[str]:
    """How myst-nb may print a glued text/plain value under ``{glue:text}`name:spec```."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return {text}
    if spec:
        return {format(value, spec)}
    return {str(value), text}


@pytest.mark.parametrize("doc", chapter_pages())
def test_each_chapter_page_shows_the_run_a_reader_downloads(doc):
    """The site renders the stored run (execute_notebooks: off): every figure on the page is a
    figure stored in the downloaded notebook, byte for byte, and every number the prose glues
    reads as that notebook's stored value."""
    notebook = downloaded(doc)
    stored_images = set()
    records = {}
    for cell in notebook["cells"]:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "image/png" in data:
                stored_images.add(base64.b64decode("".join(data["image/png"])))
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            if name and RECORD in data:
                records[name] = "".join(data[RECORD])
    page = SITE / f"{doc}.html"
    shown = []
    for tag, attributes in parse(page).tags:
        src = attributes.get("src", "")
        if tag != "img" or not src:
            continue
        if src.startswith("data:image/png;base64,"):
            shown.append(base64.b64decode(src.split(",", 1)[1]))
        elif src.endswith(".png"):
            shown.append(local_target(page, src).read_bytes())
    foreign = [i for i, image in enumerate(shown) if image not in stored_images]
    assert not foreign, f"{doc}: figures {foreign} on the page are not in the stored notebook"
    text = _plain_quotes(" ".join(parse(page).text))
    prose = "".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "markdown")
    roles = GLUE_TEXT.findall(prose)
    missing = [
        f"{name}:{spec}"
        for name, spec in roles
        if name in records
        and not any(_plain_quotes(v) in text for v in shown_text(records[name], spec))
    ]
    unknown = sorted({name for name, _ in roles if name not in records})
    assert not unknown, f"{doc}: the prose glues names the stored run does not record: {unknown}"
    assert not missing, f"{doc}: glued values the page does not show as stored: {missing}"
