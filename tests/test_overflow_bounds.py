"""A normaliser's results are guarded by numpy's raise state: never a silent overflow.

Every public call runs under `normcore._checks.ERROR_STATE` (an overflow, an invalid operation or
a division by zero raises, and becomes a MagnitudeError). These tests hold that guard to what
reading every result decides: over inputs, upstream gradients, parameters and rates from 1e-300
to 1e300 in float64 (1e-37 to 1e37 in float32), in both modes and through a chain of steps,
every call answers exactly as it does when the arithmetic runs with errors ignored and every
array handed back is read for a NaN or an infinity (the same arrays bit for bit, or a refusal of
the same type), and nothing it hands back holds a NaN or an infinity.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import normcore as nc

#: the normalisers, each with a block shape it takes
NORMALISERS: dict[str, tuple[Callable[..., Any], tuple[int, ...]]] = {
    "batch": (lambda s, h: nc.BatchNorm(scale=s, shift=h), (5, 3)),
    "ghost batch": (lambda s, h: nc.GhostBatchNorm(scale=s, shift=h, group_rows=2), (6, 3)),
    "layer": (lambda s, h: nc.LayerNorm(scale=s, shift=h), (5, 3)),
    "RMS": (lambda s, h: nc.RMSNorm(scale=s, shift=h), (5, 3)),
    "group": (lambda s, h: nc.GroupNorm(scale=s, shift=h, groups=1), (2, 3, 2, 2)),
    "not affine": (lambda s, h: nc.LayerNorm(scale=s, shift=h, affine=False), (5, 3)),
}


#: set by the reference run: each call runs unguarded with errors ignored, and every array it
#: hands back is read
READ_EVERY_RESULT = {"on": False, "caught": 0}


def _call(layer: Any, name: str, *args: Any) -> Any:
    """``layer.name(*args)``; in the reference run the call unguarded (``__wrapped__``) under
    ``np.errstate(all="ignore")``."""
    if not READ_EVERY_RESULT["on"]:
        return getattr(layer, name)(*args)
    with np.errstate(all="ignore"):
        return getattr(type(layer), name).__wrapped__(layer, *args)


def _outcome(call: Callable[[], Any]) -> tuple[Any, ...]:
    """What `call` handed back: ('refused', type) or ('answered', the value). In the reference
    run (`READ_EVERY_RESULT`) a value holding a NaN or an infinity is a MagnitudeError."""
    try:
        value = call()
    except nc.NormcoreError as exc:
        return ("refused", type(exc).__name__)
    if READ_EVERY_RESULT["on"] and not all(np.isfinite(a).all() for a in _arrays(value)):
        READ_EVERY_RESULT["caught"] += 1
        return ("refused", "MagnitudeError")
    return ("answered", value)


def _arrays(value: Any) -> list[np.ndarray]:
    """The arrays a response, a gradient or a layer holds (outputs, slopes, parameters)."""
    if isinstance(value, nc.Response):
        return [value.output]
    if isinstance(value, nc.Gradient):
        return [value.passed_down, *value.slopes.values()]
    return [value.scale, value.shift]


def _run(kind: str, seed: int) -> list[tuple[Any, ...]]:
    """A chain of calls on one case: forward in each purpose, backward, step, and the new layer's
    forward; each call's outcome, with every array it handed back."""
    make, shape = NORMALISERS[kind]
    r = np.random.default_rng(seed)
    dtype = np.float32 if r.random() < 0.3 else np.float64
    top = 300 if dtype == np.float64 else 37  # the float type's range, and a little short
    size = lambda: 10.0 ** r.uniform(-top, top)  # noqa: E731 - one draw of a magnitude
    features = 3
    layer = make(size() * r.standard_normal(features), size() * r.standard_normal(features))
    x = (size() * r.standard_normal(shape)).astype(dtype)
    d = (size() * r.standard_normal(shape)).astype(dtype)
    # a rate is a Python float, cast to the slope's type: any float64 magnitude
    rate = float(np.sign(r.standard_normal()) * 10.0 ** r.uniform(-300, 300))
    outcomes = []
    for purpose in ("predicting", "training"):
        response = _outcome(lambda p=purpose: _call(layer, "forward", x, p))
        outcomes.append(response)
        if response[0] != "answered":
            continue
        gradient = _outcome(lambda res=response[1]: _call(layer, "backward", res, d))
        outcomes.append(gradient)
        if gradient[0] != "answered":
            continue
        new = _outcome(lambda g=gradient[1]: _call(layer, "step", g, rate))
        outcomes.append(new)
        if new[0] == "answered":
            outcomes.append(_outcome(lambda n=new[1]: _call(n, "forward", x, "training")))
    return outcomes


def _same(bounded: list[tuple[Any, ...]], read: list[tuple[Any, ...]]) -> bool:
    if [o[0] for o in bounded] != [o[0] for o in read]:
        return False
    for b, r in zip(bounded, read, strict=True):
        if b[0] == "refused" and b != r:
            return False
        if b[0] == "answered":
            mine, theirs = _arrays(b[1]), _arrays(r[1])
            pairs = zip(mine, theirs, strict=True)
            if any(not np.array_equal(m, t) or m.dtype != t.dtype for m, t in pairs):
                return False
    return True


@pytest.mark.parametrize("kind", list(NORMALISERS))
def test_guarded_results_answer_as_read_results(kind: str, monkeypatch: Any) -> None:
    """Over 300 cases of magnitudes across each float type's range, every outcome (arrays bit for
    bit, or the type of the refusal) is the one a layer makes when its arithmetic ignores
    floating-point errors and every result is read, and no array handed back holds a NaN or an
    infinity. Some cases must overflow (refused) and some must answer, or the magnitudes did not
    reach the edges."""
    bounded = {seed: _run(kind, seed) for seed in range(300)}
    with monkeypatch.context() as m:  # errors ignored, every result read
        m.setitem(READ_EVERY_RESULT, "on", True)
        m.setitem(READ_EVERY_RESULT, "caught", 0)
        read = {seed: _run(kind, seed) for seed in range(300)}
        caught = READ_EVERY_RESULT["caught"]
    differ = [seed for seed in bounded if not _same(bounded[seed], read[seed])]
    assert differ == [], f"{kind}: seeds {differ[:5]} answer otherwise when every result is read"
    answers = [o[1] for runs in bounded.values() for o in runs if o[0] == "answered"]
    assert all(np.isfinite(a).all() for value in answers for a in _arrays(value))
    if kind != "not affine":  # no parameter to overflow: the input checks decide every case
        assert caught > 0, "the unguarded reference never overflowed: the cases are too tame"
    refusals = {o[1] for runs in bounded.values() for o in runs if o[0] == "refused"}
    assert "MagnitudeError" in refusals and len(answers) > 300


def test_a_predicting_pass_with_no_spread_refuses_an_overflowing_slope() -> None:
    """In evaluation mode the running statistics bound no z: with running variance 0 (divisor
    sqrt(epsilon)) and values near the magnitude limit, the scale's gradient overflows. It is
    refused, not handed back as infinity."""
    layer = nc.BatchNorm(
        scale=np.ones(2), shift=np.zeros(2), running_mean=np.zeros(2), running_variance=np.zeros(2)
    )
    x = np.full((2, 2), 3e153)
    response = layer.forward(x, "predicting")
    with pytest.raises(
        nc.MagnitudeError, match=r"BatchNorm\.backward: expected results within the float range"
    ):
        layer.backward(response, x)
