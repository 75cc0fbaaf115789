"""The preface's epsilon slider on the BUILT site: the page standardises, normcore checks.

Served from 127.0.0.1 with no kernel (nothing may leave the machine), the slider is worked
through seeded random reader actions (its keys, and values set directly). After each, the entry
the page shows is held to normcore's own batch layer at that epsilon, computed here: its full
value (data-value) to 1e-12 relative and its four shown decimals exactly; the slider's value,
spoken text and "runs in this page" line must match, and no console error is allowed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import normcore as nc

from .test_site import site  # noqa: F401  (the served _build/html)
from .test_site_widgets import ACTIONS, Watched, page_or_skip

ROOT = ".nc-epsilon"
LOW, HIGH = -8, 3
BLOCK = np.array([[1.0, 2.0], [1.0, 4.0], [7.0, 6.0], [23.0, 8.0]])  # the preface's block
READ = """root => {
  const box = document.querySelector(root);
  const entry = box.querySelector('[data-key=entry]');
  const slider = box.querySelector('input[type=range]');
  return {value: entry.dataset.value, shown: entry.textContent, text: box.textContent,
          slider: slider.value, spoken: slider.getAttribute('aria-valuetext'),
          label: slider.getAttribute('aria-label'),
          where: box.querySelector('.nc-where').dataset.runs};
}"""


def expected(exponent: int) -> float:
    layer = nc.BatchNorm.create(2, eps=float(f"1e{exponent}"))
    return float(layer.forward(BLOCK, "train").output[3, 0])


def check(got: dict[str, Any], exponent: int, where: str) -> None:
    want = expected(exponent)
    assert abs(float(got["value"]) - want) <= 1e-12 * abs(want), (where, got["value"], want)
    assert got["shown"] == f"{want:.4f}", (where, got["shown"], want)
    assert got["slider"] == str(exponent) and got["spoken"] == f"{float(f'1e{exponent}'):.0e}", (
        where,
        got,
    )
    assert f"ε = {float(f'1e{exponent}'):.0e}: the entry 23 becomes" in got["text"], where
    assert got["label"] and got["where"] == "page", (where, got)


def test_epsilon_slider_answers_in_the_page(browser: Any, site: str) -> None:  # noqa: F811
    page_or_skip("00-preface.html")
    with Watched(browser, f"{site}/book/00-preface.html") as page:
        page.wait_for_selector(f"{ROOT} [data-key=entry]", timeout=30_000)
        exponent = -5
        check(page.evaluate(READ, ROOT), exponent, "the opening view")
        slider = page.locator(f"{ROOT} input[type=range]")
        rng = np.random.default_rng(11)
        steps = {"ArrowRight": 1, "ArrowUp": 1, "ArrowLeft": -1, "ArrowDown": -1}
        seen = set()
        for n in range(ACTIONS):
            if rng.random() < 0.7:
                key = str(rng.choice([*steps, "Home", "End"]))
                slider.press(key)
                exponent = {"Home": LOW, "End": HIGH}.get(
                    key, min(max(exponent + steps.get(key, 0), LOW), HIGH)
                )
                action = f"key {key}"
            else:
                exponent = int(rng.integers(LOW, HIGH + 1))
                slider.fill(str(exponent))
                action = f"slider to {exponent}"
            seen.add(exponent)
            check(page.evaluate(READ, ROOT), exponent, f"action {n + 1} ({action})")
        assert seen == set(range(LOW, HIGH + 1)), sorted(seen)
