"""normcore.book: the rounding chapters apply before gluing a figure into their prose."""

from __future__ import annotations

import myst_nb
import pytest

from normcore.book import below, keep


@pytest.fixture
def glued(monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    seen: dict[str, object] = {}

    def fake_glue(name: str, value: object, display: bool = True) -> None:
        assert display is False  # figures go into the prose, never shown where computed
        seen[name] = value

    monkeypatch.setattr(myst_nb, "glue", fake_glue)
    return seen


def test_keep_rounds_to_stable_digits(glued: dict[str, object]) -> None:
    keep("a", 0.1 + 0.2)  # 0.30000000000000004: the last bits are noise
    keep("b", 2 / 3, digits=3)
    assert glued == {"a": 0.3, "b": 0.667}
    assert all(type(v) is float for v in glued.values())


@pytest.mark.parametrize(("value", "floor", "want"), [
    (3.3e-16, 1e-16, 1e-15), (1e-15, 1e-16, 1e-15), (0.0, 1e-16, 1e-16), (2e-17, 1e-15, 1e-15),
])
def test_below_gives_the_power_of_ten_just_above(glued, value, floor, want) -> None:
    below("gap", value, floor)
    assert glued["gap"] == pytest.approx(want, rel=1e-12)
