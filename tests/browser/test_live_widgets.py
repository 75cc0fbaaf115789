"""Chapter 2's playground, live in JupyterLab in a real browser.

JupyterLab runs on 127.0.0.1 with a token, over a temporary copy of book/ (the session's `lab`
fixture). The test opens book/02-worked-column.ipynb, runs every cell, then works the playground
in the page: types into a cell, switches Batch to Layer, switches a row off, presses Undo exactly
and Step. After each, it reads the answer back from the page (the readout's
``data-answer``/``data-value`` cells) and holds it against normcore's own answer for that state,
computed here.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

import normcore as nc

from .live import ANSWER_TIMEOUT, Lab, chapter, wait_for

CHAPTER = "02-worked-column.ipynb"
EPS = 1e-5
STEP = 0.001  # the playground sliders' step
ROOT = ".normcore-playground"

_READ = """() => {
  const box = document.querySelector('.normcore-playground-readout');
  if (!box) return null;
  const answer = [], stats = {};
  for (const td of box.querySelectorAll('td[data-value]')) {
    if (td.dataset.answer) {
      const [r, c] = td.dataset.answer.split(',').map(Number);
      (answer[r] = answer[r] || [])[c] = Number(td.dataset.value);
    } else if (td.dataset.stat) stats[td.dataset.stat] = Number(td.dataset.value);
  }
  return {answer, stats};
}"""


def read(page: Any) -> dict[str, Any]:
    got = page.evaluate(_READ)
    assert got is not None, "no playground readout on the page"
    return got


def expect_answer(page: Any, want: np.ndarray, tol: float = 1e-9) -> dict[str, Any]:
    """Wait until the page's answer table is `want` (to `tol`), then check it here."""
    wait_for(
        page,
        "([want, tol]) => { const got = (" + _READ + ")(); if (!got) return false;"
        " const a = got.answer; return a.length === want.length && want.every((row, r) =>"
        " a[r] && a[r].length === row.length && row.every((w, c) =>"
        " Math.abs(a[r][c] - w) <= tol * Math.max(1, Math.abs(w)))); }",
        [want.tolist(), tol],
    )
    got = read(page)
    shown = np.array(got["answer"], dtype=np.float64)
    assert shown.shape == want.shape, f"the page shows {shown.tolist()}, normcore {want.tolist()}"
    np.testing.assert_allclose(shown, want, rtol=tol, atol=tol)
    return got


def slider_readouts(page: Any, want: list[str]) -> list[str]:
    """The sliders' readouts (scale 1, shift 1, scale 2, ...) once they read `want`, or as they
    stand when the wait runs out."""
    js = ("root => Array.from(document.querySelectorAll(root + ' .widget-slider "
          ".widget-readout')).map(e => e.textContent.trim())")
    wait_for(page, "([root, want]) => { const r = (" + js + ")(root);"
             " return want.every((w, i) => r[i] === w); }", [ROOT, want])
    return page.evaluate(js, ROOT)


def test_playground_live(browser: Any, lab: Lab) -> None:
    started = time.monotonic()
    with chapter(browser, lab, CHAPTER) as page:
        ran = time.monotonic()
        page.wait_for_selector(f"{ROOT} .normcore-playground-readout td[data-answer]",
                               timeout=ANSWER_TIMEOUT)
        block = np.array([[1.0, 7.0], [1.0, 9.0], [7.0, 1.0], [23.0, 7.0]])
        layer = nc.BatchNorm.create(2, epsilon=EPS)
        expect_answer(page, layer.forward(block, "training").output, tol=1e-12)

        # 1. type 8 into row 1, feature 2
        cell = page.locator(f"{ROOT} .widget-text input").nth(1)
        cell.fill("8")
        cell.press("Enter")
        block[0, 1] = 8.0
        expect_answer(page, layer.forward(block, "training").output, tol=1e-12)

        # 2. Batch -> Layer
        page.locator(ROOT).get_by_role("button", name="Layer", exact=True).click()
        layer_norm = nc.LayerNorm.create(2, epsilon=EPS)
        expect_answer(page, layer_norm.forward(block).output, tol=1e-12)

        # 3. row 3 off
        page.locator(f"{ROOT} .widget-checkbox input").nth(2).uncheck()
        on = block[[0, 1, 3]]
        expect_answer(page, layer_norm.forward(on).output, tol=1e-12)

        # 4. back to Batch, then Undo exactly: scale = deviation, shift = mean, the block back
        page.locator(ROOT).get_by_role("button", name="Batch", exact=True).click()
        expect_answer(page, layer.forward(on, "training").output, tol=1e-12)
        page.locator(ROOT).get_by_role("button", name="Undo exactly").click()
        stats = layer.forward(on, "training").statistics
        undone = nc.BatchNorm(scale=stats.deviation, shift=stats.mean, epsilon=EPS)
        np.testing.assert_allclose(undone.forward(on, "training").output, on, atol=1e-12)
        expect_answer(page, on)
        # The sliders show the exact values at their 0.001 step (the browser snaps them there
        # and sends the snapped values back); the playground must keep the exact ones.
        snapped = [f"{round(v / STEP) * STEP:.4f}" for pair in zip(stats.deviation, stats.mean,
                                                                   strict=True) for v in pair]
        assert slider_readouts(page, snapped) == snapped
        expect_answer(page, on)

        # 5. Step: the running figures take a tenth of the batch's; the training answer stays
        page.locator(ROOT).get_by_role("button", name="Step").click()
        fresh = nc.BatchNorm.create(2, epsilon=EPS)
        stepped = fresh.step(fresh.backward(fresh.forward(on, "training"), np.zeros_like(on)), 1.0)
        wait_for(
            page,
            "([want]) => { const box = document.querySelector('.normcore-playground-readout');"
            " const td = box && box.querySelector('td[data-stat=\"running:running mean:0\"]');"
            " return td !== null && Math.abs(Number(td.dataset.value) - want) < 1e-12; }",
            [float(stepped.running_mean[0])],
        )
        got = expect_answer(page, on)
        for name, want in (("mean", stepped.running_mean),
                           ("variance", stepped.running_variance)):
            shown = [got["stats"][f"running:running {name}:{j}"] for j in range(2)]
            np.testing.assert_allclose(shown, want, rtol=1e-12, err_msg=f"running {name}")
        print(f"\nchapter 2: run all {ran - started:.1f} s, "
              f"actions {time.monotonic() - ran:.1f} s")
