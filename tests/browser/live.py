"""Helpers for the live tests: JupyterLab over a copy of book/, a chapter opened and run in it as
a reader would, and a widget's readout read back from the page through its ``data-*`` attributes.

Every wait is on a condition in the page (generous timeouts, so a loaded machine is slow, not
failing); nothing sleeps to synchronise.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import secrets
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

START_TIMEOUT = 90.0  # seconds for JupyterLab to answer
OPEN_TIMEOUT = 120_000  # ms for the notebook page and its kernel
RUN_TIMEOUT = 900_000  # ms for Run All Cells (chapter 6 trains 130 networks)
ANSWER_TIMEOUT = 60_000  # ms for the kernel to answer one reader action

# Every cell is kept in the page (JupyterLab otherwise renders only the cells near the view), so
# the run can be followed cell by cell and a widget far down the page is always there.
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false"},  # no news pop-up
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class Lab:
    """A running JupyterLab: its address, token and the directory it serves."""

    base: str
    token: str
    root: Path

    def url(self, notebook: str) -> str:
        """The notebook in a fresh workspace of its own (no tab from an earlier test)."""
        workspace = Path(notebook).stem
        return f"{self.base}/lab/workspaces/{workspace}/tree/{notebook}?reset&token={self.token}"

    def api(self, path: str, method: str = "GET") -> Any:
        request = urllib.request.Request(
            f"{self.base}/api/{path}",
            method=method,
            headers={"Authorization": f"token {self.token}"},
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            body = answer.read()
        return json.loads(body) if body else None

    def shut_down_sessions(self) -> None:
        """Stop every kernel the server runs (each opened chapter leaves one)."""
        for session in self.api("sessions"):
            self.api(f"sessions/{session['id']}", method="DELETE")


def _lab_book() -> Any:
    """tools/lab_book.py, which writes the reader's working copy that `make lab` serves."""
    path = Path(__file__).resolve().parents[2] / "tools" / "lab_book.py"
    spec = importlib.util.spec_from_file_location("lab_book", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextmanager
def start_lab(jupyter: Path, book: Path, work: Path) -> Iterator[Lab]:
    """JupyterLab on 127.0.0.1 with a token, over the working copy of `book` that `make lab`
    serves (tools/lab_book.py), written into `work`."""
    root = work / "book"
    _lab_book().build(book, root, quiet=True)
    settings = work / "settings"
    for name, values in LAB_SETTINGS.items():
        package, plugin = name.rsplit("/", 1)
        target = settings / package / f"{plugin}.jupyterlab-settings"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(values), encoding="utf-8")
    token, port = secrets.token_hex(16), free_port()
    log = (work / "lab.log").open("wb")
    # A reader's JupyterLab draws with the inline backend: a backend some earlier test set in
    # this process's environment (MPLBACKEND=Agg) would reach every kernel and draw nothing.
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    proc = subprocess.Popen(
        [
            str(jupyter),
            "lab",
            "--no-browser",
            f"--ServerApp.token={token}",
            f"--port={port}",
            "--ServerApp.ip=127.0.0.1",
            "--ServerApp.port_retries=0",
            f"--ServerApp.root_dir={root}",
            f"--LabApp.user_settings_dir={settings}",
            f"--LabApp.workspaces_dir={work / 'workspaces'}",
            "--LabApp.news_url=",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.extension_manager=readonly",
            "--LabApp.expose_app_in_browser=True",
            *(["--allow-root"] if os.geteuid() == 0 else []),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )
    lab = Lab(f"http://127.0.0.1:{port}", token, root)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                lab.api("status")
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"JupyterLab did not start (see {work / 'lab.log'})"
                    ) from None
                time.sleep(0.5)  # polling the server's port, not synchronising with a page
        yield lab
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def code_cells(notebook: Path) -> int:
    return sum(c["cell_type"] == "code" for c in json.loads(notebook.read_text("utf-8"))["cells"])


def _menu(page: Any, menu: str, item: str) -> None:
    page.locator(".lm-MenuBar-itemLabel", has_text=menu).first.click()
    page.locator(".lm-Menu-itemLabel", has_text=item).first.click()


# The open notebook's model, read through the application object that JupyterLab exposes with
# --LabApp.expose_app_in_browser (the page cannot tell a folded cell's run from its prompt).
_CODE = (
    "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
    " const m = w && w.content && w.content.model;"
    " return m ? Array.from(m.cells).filter(c => c.type === 'code') : null; }"
)


def cell_states(page: Any) -> list[dict[str, Any]]:
    """Each code cell of the open notebook: its execution count and any error it shows."""
    return page.evaluate(
        f"() => ({_CODE})().map(c => ({{count: c.executionCount,"
        " error: c.outputs.toJSON().filter(o => o.output_type === 'error')"
        ".map(o => o.ename + ': ' + o.evalue + '\\n' + (o.traceback || []).join('\\n'))[0]"
        " || null}))"
    )


@contextmanager
def chapter(browser: Any, lab: Lab, notebook: str) -> Iterator[Any]:
    """A page with `notebook` open and every cell run from a cleared notebook, as a reader
    would: Edit > Clear Outputs of All Cells, then Run > Run All Cells. Afterwards the page is
    closed and the chapter's kernel stopped."""
    if not (lab.root / notebook).exists():
        pytest.skip(f"book/{notebook} does not exist yet")
    cells = code_cells(lab.root / notebook)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        page.goto(lab.url(notebook))
        page.wait_for_selector(".jp-NotebookPanel .jp-Notebook", timeout=OPEN_TIMEOUT)
        page.wait_for_function(
            f"() => {{ const c = ({_CODE})(); return c && c.length === {cells}; }}",
            timeout=OPEN_TIMEOUT,
        )
        page.wait_for_function(  # the kernel is up (the status bar reads Idle)
            "() => document.body.innerText.includes('Idle')", timeout=OPEN_TIMEOUT
        )
        # Cleared first, so neither a stored output nor its saved widget can pass for a live one
        _menu(page, "Edit", "Clear Outputs of All Cells")
        page.wait_for_function(
            f"() => ({_CODE})().every(c => c.executionCount === null)", timeout=OPEN_TIMEOUT
        )
        _menu(page, "Run", "Run All Cells")
        page.wait_for_function(  # every cell has run, or one has failed (folded cells too)
            f"() => {{ const c = ({_CODE})();"
            " return c.some(x => x.outputs.toJSON().some(o => o.output_type === 'error'))"
            " || c.every(x => x.executionCount !== null); }",
            timeout=RUN_TIMEOUT,
        )
        failed = [s["error"] for s in cell_states(page) if s["error"]]
        if failed:
            raise AssertionError(f"{notebook} failed in the browser:\n{failed[0]}")
        reads_like_the_site(page, lab, notebook)
        yield page
    finally:
        context.close()
        with suppress(OSError):  # a server that is gone has no kernels left to stop
            lab.shut_down_sessions()


# ------------------------------------------------------------------------------ reading
BOOK = Path(__file__).resolve().parents[2] / "book"
RAW = re.compile(r"\{(glue|numref|eval|doc|term)[:}]|^\s*(:::|```)\s*\{", re.M)
HIDDEN = {"remove-cell", "hide-cell", "remove-input", "hide-input"}

_MARKDOWN = (
    "() => Array.from(document.querySelectorAll("
    "'.jp-NotebookPanel:not(.lm-mod-hidden) .jp-MarkdownCell'))"
    ".map(c => c.innerText)"
)
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
_MODEL = "() => window.jupyterapp.shell.currentWidget.content.model"


def _cells(lab: Lab, name: str) -> list[dict[str, Any]]:
    return json.loads((lab.root / name).read_text(encoding="utf-8"))["cells"]


def _figures(lab: Lab, name: str) -> list[tuple[int, str]]:
    """(index of the figure's code cell, its caption cell's text) in the working copy."""
    cells = _cells(lab, name)
    return [
        (i, "".join(cells[i + 1]["source"]))
        for i, cell in enumerate(cells)
        if cell["cell_type"] == "code"
        and "caption" in cell["metadata"].get("mystnb", {}).get("figure", {})
    ]


def _outside_dropdowns(markdown: str) -> str:
    """The markdown without its collapsed blocks (worked solutions), which Lab shows closed."""
    return re.sub(r"^:::+\{dropdown\}.*?^:::+\s*$", "", markdown, flags=re.M | re.S)


def _numbers(name: str) -> list[str]:
    """Every figure the chapter's prose glues in outside collapsed solutions, as the site prints
    it (a closed dropdown's text is not on the page until the reader opens it)."""
    tool = _lab_book()
    book = BOOK / name
    glued = tool.glued_values(tool.nbformat.read(book, as_version=4))
    found = []
    for cell in json.loads(book.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "markdown":
            for key, _, spec in (
                m.partition(":")
                for m in re.findall(
                    r"\{glue:text\}`([^`]*)`", _outside_dropdowns("".join(cell["source"]))
                )
            ):
                found.append(tool.format_glued(glued[key], spec))
    return found


def _words(markdown: str) -> str:
    """The first words of a caption as the page shows them (no emphasis marks, no math)."""
    plain = re.sub(r"\*\*|\*|`", "", markdown.split("$")[0])
    return " ".join(plain.split()[:8])


def reads_like_the_site(page: Any, lab: Lab, name: str) -> None:
    """After Run All: no markdown cell shows a raw role (``{glue``, ``{numref``, ``{eval``,
    ``{doc``, ``{term``) or an unrendered directive; every figure the site glues into the prose
    is there; every figure has drawn an image and shows its caption; the cells the site hides
    are folded."""
    figures = _figures(lab, name)
    hidden = sum(
        c["cell_type"] == "code" and bool(HIDDEN & set(c["metadata"].get("tags", [])))
        for c in _cells(lab, name)
    )
    shown = page.evaluate(_MARKDOWN)
    raw = [m.group(0) for text in shown for m in RAW.finditer(text)]
    assert not raw, f"{name} shows raw MyST after Run All: {raw[:5]}"
    plain = [text.translate(_QUOTES) for text in shown]  # MyST sets typographic quotes
    prose = "\n".join(" ".join(text.split()) for text in plain)
    missing = [n for n in _numbers(name) if n not in prose]
    assert not missing, f"{name}: glued figures missing from the prose: {missing[:5]}"
    for i, caption in figures:
        assert _words(caption) in prose, f"{name}: no caption {_words(caption)!r} on the page"
        kinds = page.evaluate(
            f"() => Array.from(({_MODEL})().cells)[{i}].outputs.toJSON()"
            ".flatMap(o => Object.keys(o.data || {}))"
        )
        assert any(k.startswith("image/") for k in kinds), f"{name} cell {i} drew no figure"
    folded = page.locator(
        ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .jp-InputPlaceholder"
    ).count()
    assert folded == hidden, f"{name}: {folded} folded code cells, the site hides {hidden}"


# ------------------------------------------------------------------------------ the readout
_READ = """root => {
  const box = document.querySelector(root + ' .normcore-readout');
  if (!box) return null;
  const out = {};
  for (const el of box.querySelectorAll('*')) {
    const key = el.getAttribute('data-key');
    if (key !== null) out[key] = el.getAttribute('data-value');
    for (const a of el.attributes) {
      if (a.name.startsWith('data-') && a.name !== 'data-key' && a.name !== 'data-value')
        out[a.name.slice(5)] = a.value;
    }
  }
  out['#text'] = box.innerText;
  return out;
}"""

_MATCHES = (
    "([root, want, rtol, atol]) => {\n  const got = ("
    + _READ
    + ")(root);"
    + """
  if (!got) return false;
  const close = (g, w) => Math.abs(Number(g) - w) <= atol + rtol * Math.abs(w);
  for (const [k, w] of Object.entries(want)) {
    const g = got[k];
    if (g === undefined) return false;
    if (typeof w === 'number') { if (!close(g, w)) return false; }
    else if (Array.isArray(w)) {
      const parts = g.split(',');
      if (parts.length !== w.length || !parts.every((p, i) => close(p, w[i]))) return false;
    } else if (k === '#text') { if (!g.includes(w)) return false; }
    else if (g !== w) return false;
  }
  return true;
}"""
)


def wait_for(page: Any, js: str, arg: Any = None, timeout: float = ANSWER_TIMEOUT) -> bool:
    """Wait until `js` (a function of `arg`) is truthy in the page; False if it never is, so the
    caller's own checks can say what the page shows instead."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(js, arg=arg, timeout=timeout)
    except PlaywrightTimeout:
        return False
    return True


def read(page: Any, root: str) -> dict[str, str]:
    """Every ``data-*`` value in the widget's readout (``data-key``/``data-value`` pairs under
    their key, other attributes under their name without ``data-``), and its text as '#text'."""
    got = page.evaluate(_READ, root)
    assert got is not None, f"no readout under {root} on the page"
    return got


def _plain(value: Any) -> Any:
    if isinstance(value, (bool, str)):
        return value
    if isinstance(value, (np.ndarray, list, tuple)):
        return [float(v) for v in np.ravel(value)]
    return float(value)


def expect(
    page: Any,
    root: str,
    want: Mapping[str, Any],
    *,
    rtol: float = 1e-12,
    atol: float = 1e-12,
    timeout: float = ANSWER_TIMEOUT,
) -> dict[str, str]:
    """Wait until the readout shows `want` (numbers within rtol/atol, arrays as comma lists,
    '#text' as a piece of the visible text, anything else exactly), then check it once more here
    so a mismatch fails with both sides shown. Returns what was read."""
    plain = {k: _plain(v) for k, v in want.items()}
    wait_for(page, _MATCHES, [root, plain, rtol, atol], timeout)
    got = read(page, root)
    for key, value in plain.items():
        assert key in got, f"{key!r} is not in the readout; it shows {sorted(got)}"
        if key == "#text":
            assert value in got[key], f"{value!r} not in the readout text {got[key]!r}"
        elif isinstance(value, bool | str):
            assert got[key] == value, f"{key}: page shows {got[key]!r}, normcore says {value!r}"
        else:
            shown = np.array([float(v) for v in got[key].split(",")])
            np.testing.assert_allclose(
                shown, np.ravel(value), rtol=rtol, atol=atol, err_msg=f"readout {key!r}"
            )
    return got


def keyed(prefix: str, values: np.ndarray) -> dict[str, float]:
    """A table's cells as readout keys: ``prefix:i,j`` (2-D) or ``prefix:i`` (1-D)."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim == 1:
        return {f"{prefix}:{i}": float(v) for i, v in enumerate(values)}
    return {f"{prefix}:{i},{j}": float(v) for (i, j), v in np.ndenumerate(values)}
