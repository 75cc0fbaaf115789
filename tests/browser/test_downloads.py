"""Each chapter's notebook, downloaded from its page in a real browser: the reader clicks the
line under the chapter's title and gets a valid notebook (nbformat) with its outputs, the
chapter's own stored one; the same line's PDF link answers 200 with a PDF. Chapters are the
documents of _toc.yml with a paired .ipynb (tests/test_take_away.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from test_take_away import notebook_chapters  # tests/ is on sys.path (rootdir import)

from .conftest import ROOT
from .test_site import site  # noqa: F401  (the fixture that serves _build/html)


@pytest.mark.parametrize("doc", notebook_chapters())
def test_click_downloads_the_executed_notebook(
    browser: Any,
    site: str,  # noqa: F811  (the fixture imported above)
    doc: str,
    tmp_path: Path,
) -> None:
    context = browser.new_context(accept_downloads=True)
    page = context.new_page()
    try:
        page.goto(f"{site}/{doc}.html", wait_until="load")
        link = page.locator("a.nc-notebook-download")
        assert link.count() == 1, f"{doc}: expected one notebook download link"
        assert link.is_visible(), f"{doc}: the notebook download link is not visible"
        with page.expect_download() as info:
            link.click()
        download = info.value
        saved = tmp_path / download.suggested_filename
        download.save_as(saved)
        pdf = page.request.get(page.locator("a.nc-pdf-download").evaluate("a => a.href"))
        pdf_status, pdf_head = pdf.status, pdf.body()[:5]
    finally:
        context.close()

    assert saved.name == Path(doc).name + ".ipynb"
    nb = nbformat.read(saved, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    with_outputs = [c for c in code if c.outputs]
    assert code and with_outputs, f"{saved.name}: no code cell has an output (not executed?)"
    assert all(c.execution_count for c in code), f"{saved.name}: a code cell never ran"
    # the stored run, cell for cell, under a header cell naming the text's version and edition
    stored = nbformat.read(ROOT / f"{doc}.ipynb", as_version=4)
    assert nb.cells[0]["id"] == "normcore-edition", f"{saved.name}: no header cell"
    assert nb.cells[1:] == stored.cells, f"{saved.name} is not the chapter's stored notebook"
    assert (pdf_status, pdf_head) == (200, b"%PDF-"), f"{doc}: the PDF link gave {pdf_status}"
