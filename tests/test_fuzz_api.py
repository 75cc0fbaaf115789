"""A hypothesis fuzz of normcore's public API, strict enough to fail.

Two kinds of draws:

* **Valid draws** (finite values of a float dtype, the right shape, valid settings, blocks small
  and now and then beyond 64 Ki values) must be answered, and the answers must match an
  independent float64 reference written here from the definitions (forward), central
  differences of that reference along a random direction (backward), and the update rules
  (step). A refusal of a valid draw fails the test.
* **Hostile draws** (wrong dtypes, NaN, infinity, huge values, wrong shapes, bad settings) must
  either be answered with finite arrays of the documented shape and dtype, or refused with a
  typed subclass of `NormcoreError` whose message says what was expected; never another
  exception, never a warning, never a change to an input array. A draw that is plainly valid
  must still be answered.

With ``CI=true`` every test is derandomised: the same examples on every run. Each test counts the
cases it ran and fails if hypothesis ran fewer than `FEWEST_CASES` (a strategy that filters out
nearly every draw tests nothing); the count is printed (``-s``).
"""

from __future__ import annotations

import copy
import math
import os
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import normcore as nc

# numeric: figures from float arithmetic (make test-arith reruns it); slow: long re-runs, left out
# of make check's inner loop (make test runs them)
pytestmark = [pytest.mark.numeric, pytest.mark.slow]

CI = os.environ.get("CI") == "true"
FUZZ = settings(
    max_examples=900,
    deadline=None,
    derandomize=CI,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
    database=None,
)
DTYPES = [
    "float32",
    "float64",
    "int64",
    "int8",
    "uint8",
    "float16",
    "bool",
    "object",
    "complex128",
    "str",
]
NUMERIC = {"float32", "float64", "int64", "int8", "uint8", "float16"}
VALUES = ["normal", "nan", "inf", "-inf", "huge", "tiny", "subnormal", "equal", "zeros", "large"]
MODES = ["train", "eval", "eval", "train", "Training", "", None, 1, "eval"]


#: the fewest cases a fuzz test may run (each runs up to its `max_examples`, 300 to 900)
FEWEST_CASES = 100


class Cases:
    """Counts the cases one test ran; `check` fails the test if it ran too few."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.n = 0

    def __call__(self) -> None:
        self.n += 1

    def check(self) -> None:
        print(f"\n{self.name}: {self.n} fuzz cases")
        assert self.n >= FEWEST_CASES, f"{self.name} ran only {self.n} fuzz cases"


@pytest.fixture
def cases(request: pytest.FixtureRequest) -> Any:
    counter = Cases(request.node.name)
    yield counter
    counter.check()


# ------------------------------------------------------------------------------ the blocks
BENIGN = {"normal", "tiny", "subnormal", "equal", "zeros"}


def make_block(data: st.DataObject, shape: tuple[int, ...], dtype: str | None = None) -> Any:
    """A block of `shape` with a drawn dtype and a drawn kind of values (often hostile)."""
    return drawn_block(data, shape, dtype)[0]


def drawn_block(
    data: st.DataObject, shape: tuple[int, ...], dtype: str | None = None
) -> tuple[Any, bool]:
    """`make_block`'s block, and whether it is plainly valid: a numeric dtype and finite values
    of ordinary size (which every layer must answer when the shape is right)."""
    dtype = dtype or data.draw(st.sampled_from(DTYPES), label="dtype")
    kind = data.draw(st.sampled_from(VALUES), label="values")
    block = _filled(data, shape, dtype, kind)
    return block, dtype in NUMERIC and kind in BENIGN


def _filled(data: st.DataObject, shape: tuple[int, ...], dtype: str, kind: str) -> Any:
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    rng = np.random.default_rng(seed)
    base = rng.standard_normal(shape) * data.draw(st.sampled_from([1.0, 1e-3, 50.0]))
    if kind == "huge":
        base = base * 1e300
    elif kind == "large":
        base = base * 1e18
    elif kind == "tiny":
        base = base * 1e-300
    elif kind == "subnormal":
        base = np.full(shape, 5e-324) * rng.integers(-3, 4, size=shape)
    elif kind == "equal":
        base = np.full(shape, float(rng.integers(-5, 6)) + 0.1)
    elif kind == "zeros":
        base = np.zeros(shape)
    elif kind in ("nan", "inf", "-inf") and base.size:
        flat = base.reshape(-1)
        flat[rng.integers(0, flat.size)] = {"nan": np.nan, "inf": np.inf, "-inf": -np.inf}[kind]
    if dtype == "object":
        return base.astype(object)
    if dtype == "str":
        return base.astype(str)
    if dtype == "complex128":
        return base.astype(np.complex128)
    if dtype == "bool":
        return base > 0
    if dtype in ("int64", "int8", "uint8"):
        top = min(float(np.iinfo(dtype).max), 1e6)
        low = max(float(np.iinfo(dtype).min), -1e6)
        return np.round(np.clip(np.nan_to_num(base), low, top)).astype(dtype)
    with np.errstate(over="ignore"):
        return base.astype(dtype)


def maybe_list(data: st.DataObject, a: Any) -> Any:
    """Sometimes hand the block in as nested lists, as a reader might."""
    if isinstance(a, np.ndarray) and a.size < 50 and data.draw(st.integers(0, 9)) == 0:
        return a.tolist()
    return a


def expected_dtype(*blocks: Any) -> np.dtype:
    """float32 when the (first) block is float32 or float16, else float64."""
    a = np.asarray(blocks[0])
    return np.dtype(np.float32) if a.dtype in (np.float32, np.float16) else np.dtype(np.float64)


def shape_near(data: st.DataObject, good: tuple[int, ...]) -> tuple[int, ...]:
    """Usually `good`; sometimes a different rank or size, or an empty axis."""
    choice = data.draw(st.integers(0, 9), label="shape choice")
    if choice < 7:
        return good
    if choice == 7:
        return tuple(data.draw(st.lists(st.integers(0, 4), max_size=5), label="rank"))
    if choice == 8 and good:
        i = data.draw(st.integers(0, len(good) - 1))
        return good[:i] + (data.draw(st.integers(0, 5)),) + good[i + 1 :]
    return good + (2,)


# ---------------------------------------------------------------------- the contract checker
def snapshot(values: list[Any]) -> list[Any]:
    return [copy.deepcopy(v) for v in values]


def unchanged(before: Any, after: Any) -> bool:
    if isinstance(before, np.ndarray):
        if before.dtype.kind in "OU":
            return before.shape == after.shape and repr(before) == repr(after)
        return before.dtype == after.dtype and before.tobytes() == after.tobytes()
    return repr(before) == repr(after)


def attempt(call: Callable[[], Any], *inputs: Any) -> tuple[Any, BaseException | None]:
    """Run `call`; a NormcoreError is a fine answer; any other exception or a warning fails.

    The inputs are compared with copies afterwards: normcore must never write to them."""
    before = snapshot(list(inputs))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            result = call()
        except nc.NormcoreError as exc:
            assert type(exc) is not nc.NormcoreError, f"an untyped refusal: {exc}"
            assert "expected" in str(exc), f"{type(exc).__name__} without 'expected': {exc}"
            result, error = None, exc
        else:
            error = None
    for b, a in zip(before, inputs, strict=True):
        assert unchanged(b, a), "normcore changed an input array"
    return result, error


def good_array(a: Any, shape: tuple[int, ...], dtype: np.dtype, what: str) -> None:
    assert isinstance(a, np.ndarray), f"{what}: not an array"
    assert a.shape == shape, f"{what}: shape {a.shape}, expected {shape}"
    assert a.dtype == dtype, f"{what}: dtype {a.dtype}, expected {dtype}"
    assert np.isfinite(a).all(), f"{what}: NaN or infinity handed back"


def valid_input(a: Any) -> bool:
    """Whether normcore should accept the block's kind of values (it may still refuse a size)."""
    arr = np.asarray(a) if not isinstance(a, np.ndarray) else a
    if arr.dtype.kind not in "iuf":
        return False
    with np.errstate(invalid="ignore", over="ignore"):
        return bool(np.isfinite(arr.astype(np.float64)).all())


# ------------------------------------------------------------------------------ the layers
GOOD_EPSILONS = (1e-5, 1e-12, 1.0)
GOOD_MOMENTA = (0.9, 0.0, 0.999)


def settings_valid(layer_settings: dict[str, Any]) -> bool:
    eps, mom, groups = (layer_settings.get(k) for k in ("eps", "momentum", "groups"))
    ok = eps in GOOD_EPSILONS and mom in GOOD_MOMENTA
    return ok and (groups is None or groups)


def build_layer(data: st.DataObject, drawn: dict[str, Any]) -> tuple[Any, tuple[int, ...]]:
    """A drawn layer (with drawn settings, sometimes bad ones) and the input shape it takes; the
    settings are recorded in `drawn` (epsilon, momentum, and for group norm whether the group
    count divides the channels)."""
    kind = data.draw(
        st.sampled_from(
            [
                "batch",
                "ghost",
                "image",
                "layer",
                "rms",
                "instance",
                "group",
                "dense",
                "weightnorm",
                "relu",
                "tanh",
                "sigmoid",
            ]
        ),
        label="layer",
    )
    rows = data.draw(st.integers(1, 6), label="rows")
    f = data.draw(st.integers(1, 5), label="features")
    eps = data.draw(st.sampled_from([1e-5, 1e-5, 1e-12, 1.0, 0.0, -1.0, float("nan"), "1e-5"]))
    mom = data.draw(st.sampled_from([0.9, 0.9, 0.0, 0.999, 1.0, -0.1, float("inf"), True]))
    drawn.update(eps=eps, momentum=mom if kind in ("batch", "ghost", "image") else 0.9)
    if kind in ("dense", "weightnorm", "relu", "tanh", "sigmoid"):
        drawn.update(eps=1e-5)
    if kind == "batch":
        stack = tuple(data.draw(st.lists(st.integers(1, 3), max_size=2), label="stack"))
        layer = nc.BatchNorm.create(
            f,
            stack=stack,
            eps=eps,
            momentum=mom,
            tracks=data.draw(st.sampled_from(["variance", "divisor"])),
        )
        return layer, (*stack, rows, f)
    if kind == "ghost":
        stack = tuple(data.draw(st.lists(st.integers(1, 3), max_size=2), label="stack"))
        group_rows = data.draw(st.sampled_from([1, 2, 3, rows, 0, -1, 2.5, True]))
        drawn["groups"] = type(group_rows) is int and group_rows >= 1
        drawn["group_rows"] = group_rows
        layer = nc.GhostBatchNorm.create(
            f,
            group_rows,
            stack=stack,
            eps=eps,
            momentum=mom,
            tracks=data.draw(st.sampled_from(["variance", "divisor"])),
        )
        return layer, (*stack, rows, f)
    if kind == "image":
        layer = nc.ImageBatchNorm.create(f, eps=eps, momentum=mom)
        return layer, (rows, f, data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    if kind in ("layer", "rms"):
        cls = nc.LayerNorm if kind == "layer" else nc.RMSNorm
        ns = tuple(data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=3), label="ns"))
        lead = tuple(data.draw(st.lists(st.integers(1, 3), max_size=2), label="lead"))
        layer = cls.create(ns if len(ns) > 1 else ns[0], eps=eps)
        return layer, (*lead, *ns)
    if kind == "instance":
        return nc.InstanceNorm.create(f, eps=eps), (rows, f, 2, 3)
    if kind == "group":
        groups = data.draw(st.sampled_from([1, 2, 3, f, 0]))
        drawn["groups"] = groups >= 1 and (2 * f) % groups == 0
        return nc.GroupNorm.create(2 * f, groups, eps=eps), (rows, 2 * f, 2, 2)
    rng = np.random.default_rng(data.draw(st.integers(0, 1000)))
    if kind == "dense":
        return nc.Dense.create(f, data.draw(st.integers(1, 4)), rng), (rows, f)
    if kind == "weightnorm":
        return nc.WeightNormDense.create(f, data.draw(st.integers(1, 4)), rng), (rows, f)
    cls = {"relu": nc.ReLU, "tanh": nc.Tanh, "sigmoid": nc.Sigmoid}[kind]
    return cls(), tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))


def parameters(layer: Any) -> dict[str, np.ndarray]:
    names = [
        "scale",
        "shift",
        "running_mean",
        "running_var",
        "running_divisor",
        "weights",
        "direction",
        "bias",
        "magnitude",
    ]
    return {n: getattr(layer, n) for n in names if isinstance(getattr(layer, n, None), np.ndarray)}


@settings(FUZZ, max_examples=2500)
@given(data=st.data())
def test_layer_chains(data: st.DataObject, cases: Cases) -> None:
    """Build → forward → backward → step with drawn settings, blocks, modes and rates. Every
    refusal is typed; a chain whose every draw is plainly valid must run to the end."""
    cases()
    drawn: dict[str, Any] = {}
    made, error = attempt(lambda: build_layer(data, drawn))
    valid = settings_valid(drawn)
    if error is not None:
        assert not valid, f"a valid layer was refused: {error!r}"
        return
    layer, good = made
    shape = shape_near(data, good)
    x, benign = drawn_block(data, shape)
    x = maybe_list(data, x)
    valid = valid and benign and shape == good
    mode = data.draw(st.sampled_from(MODES), label="mode")
    valid = valid and mode in ("train", "eval")
    if isinstance(layer, nc.GhostBatchNorm) and mode == "train":
        valid = valid and np.shape(x)[-2] % layer.group_rows == 0  # whole groups only
    response, error = attempt(lambda: layer.forward(x, mode), x)
    if response is None:
        assert not valid, f"a valid block was refused: {error!r}"
        return
    assert valid_input(x), f"accepted {np.asarray(x).dtype} with non-finite values"
    assert mode in ("train", "eval")
    dtype = expected_dtype(x)
    good_array(response.output, np.shape(response.output), dtype, "output")
    if not isinstance(layer, (nc.Dense, nc.WeightNormDense)):
        assert response.output.shape == np.shape(x)
    if data.draw(st.integers(0, 9)) == 0:  # a response from another layer of the same kind
        valid = False
        response = nc.Response(response.output, copy.copy(layer), mode, response.input)
    d_shape = shape_near(data, response.output.shape)
    d, benign = drawn_block(data, d_shape, data.draw(st.sampled_from(["float64", "float32", None])))
    d = maybe_list(data, d)
    valid = valid and benign and d_shape == response.output.shape
    gradient, error = attempt(lambda: layer.backward(response, d), x, d)
    if gradient is None:
        assert not valid, f"a valid gradient was refused: {error!r}"
        return
    good_array(gradient.grad_input, np.shape(x), dtype, "grad_input")
    params = parameters(layer)
    assert set(gradient.grads) <= set(params)
    for name, grad in gradient.grads.items():
        assert grad.shape == params[name].shape and np.isfinite(grad).all()
    rate = data.draw(
        st.sampled_from([0.1, 0.0, -1.0, 1e300, float("nan"), float("inf"), "0.1", True, 10]),
        label="rate",
    )
    valid = valid and rate in (0.1, 0.0, -1.0) and not isinstance(rate, bool)
    moved, error = attempt(lambda: layer.step(gradient, rate), x, d)
    if moved is None:
        assert not valid, f"a valid step was refused: {error!r}"
        return
    assert type(moved) is type(layer)
    for name, value in parameters(moved).items():
        assert np.isfinite(value).all(), f"step left a non-finite {name}"
        assert value.shape == params[name].shape
        assert not value.flags.writeable
        # an array the step did not change is the old layer's own (shared, read-only); an
        # array it moved is new and shares no memory with the old one
        if value is not params[name]:
            assert not np.shares_memory(value, params[name])
    for name, value in parameters(layer).items():  # the old layer is a value: unchanged
        assert value is params[name] and not value.flags.writeable


@FUZZ
@given(data=st.data())
def test_layer_norm_normalized_shape(data: st.DataObject, cases: Cases) -> None:
    """LayerNorm and RMSNorm with drawn normalized_shape (ints, tuples, nonsense)."""
    cases()
    ns = data.draw(
        st.one_of(
            st.integers(-1, 4),
            st.lists(st.integers(-1, 3), max_size=3).map(tuple),
            st.sampled_from(["3", (2.5,), None, [], object(), (True,)]),
        ),
        label="normalized_shape",
    )
    cls = data.draw(st.sampled_from([nc.LayerNorm, nc.RMSNorm]))
    layer, error = attempt(lambda: cls.create(ns))
    if layer is None:
        return
    shape = (*tuple(data.draw(st.lists(st.integers(0, 3), max_size=2))), *layer.normalized_shape)
    x = make_block(
        data, shape_near(data, shape), data.draw(st.sampled_from(["float32", "float64", None]))
    )
    response, error = attempt(lambda: layer.forward(x, "train"), x)
    if response is None:
        return
    good_array(response.output, np.shape(x), expected_dtype(x), "output")
    gradient, _ = attempt(lambda: layer.backward(response, np.ones_like(response.output)), x)
    if gradient is not None:
        good_array(gradient.grad_input, np.shape(x), expected_dtype(x), "grad_input")


@FUZZ
@given(data=st.data())
def test_layer_construction(data: st.DataObject, cases: Cases) -> None:
    """Layers built from drawn parameter arrays (wrong shapes, NaN, zero directions...)."""
    cases()
    f = data.draw(st.integers(1, 4))
    cls = data.draw(
        st.sampled_from(
            [
                nc.BatchNorm,
                nc.GhostBatchNorm,
                nc.LayerNorm,
                nc.RMSNorm,
                nc.InstanceNorm,
                nc.GroupNorm,
                nc.Dense,
                nc.WeightNormDense,
            ]
        )
    )
    a = make_block(
        data, shape_near(data, (f,) if cls not in (nc.Dense, nc.WeightNormDense) else (f, 2))
    )
    b = make_block(
        data, shape_near(data, (f,) if cls not in (nc.Dense, nc.WeightNormDense) else (2,))
    )
    if cls is nc.Dense:
        layer, error = attempt(lambda: cls(weights=a, bias=b), a, b)
    elif cls is nc.WeightNormDense:
        layer, error = attempt(lambda: cls(direction=a, bias=b), a, b)
    elif cls is nc.GroupNorm:
        layer, error = attempt(
            lambda: cls(
                scale=a, shift=b, groups=data.draw(st.sampled_from([1, 2, 0, -1, 1.5, True]))
            ),
            a,
            b,
        )
    elif cls is nc.BatchNorm:
        c = make_block(data, shape_near(data, (f,)))
        layer, error = attempt(
            lambda: cls(scale=a, shift=b, running_mean=a, running_var=c), a, b, c
        )
    elif cls is nc.GhostBatchNorm:
        group_rows = data.draw(st.sampled_from([1, 2, 0, -1, 1.5, True, "2"]))
        layer, error = attempt(lambda: cls(scale=a, shift=b, group_rows=group_rows), a, b)
        if not (type(group_rows) is int and group_rows >= 1):
            assert layer is None, f"group_rows={group_rows!r} was accepted"
    else:
        layer, error = attempt(lambda: cls(scale=a, shift=b), a, b)
    if layer is None:
        return
    for value in parameters(layer).values():
        assert np.isfinite(value).all()
        assert value.dtype.kind == "f"
    if isinstance(layer, nc.WeightNormDense):
        assert np.all(np.isfinite(layer.effective_weights))


@FUZZ
@given(data=st.data())
def test_loss(data: st.DataObject, cases: Cases) -> None:
    """binary_cross_entropy with drawn logits, labels (inside and outside [0, 1]), stack axes."""
    cases()
    shape = tuple(data.draw(st.lists(st.integers(0, 4), max_size=3)))
    z = maybe_list(data, make_block(data, shape))
    labels_kind = data.draw(st.sampled_from(["01", "01", "frac", "out", "same"]))
    rng = np.random.default_rng(data.draw(st.integers(0, 100)))
    if labels_kind == "01":
        y: Any = rng.integers(0, 2, size=shape_near(data, shape)).astype(float)
    elif labels_kind == "frac":
        y = rng.uniform(0, 1, size=shape)
    elif labels_kind == "out":
        y = rng.uniform(-2, 3, size=shape)
    else:
        y = make_block(data, shape)
    axes = data.draw(st.sampled_from([0, 0, 1, 2, -1, 5]))
    loss, error = attempt(lambda: nc.binary_cross_entropy(z, y, stack_axes=axes), z, y)
    if loss is None:
        return
    zs = np.shape(z)
    # the gradient takes the wider of the two dtypes (float32 only when both are float32)
    want = np.result_type(expected_dtype(z), expected_dtype(y))
    good_array(loss.grad, zs, want, "loss gradient")
    assert np.shape(loss.value) == zs[:axes]
    assert np.isfinite(loss.value).all()


@FUZZ
@given(data=st.data())
def test_image_functions(data: st.DataObject, cases: Cases) -> None:
    """adain and local_response_normalisation with drawn blocks and settings."""
    cases()
    n, c = data.draw(st.integers(0, 3)), data.draw(st.integers(1, 4))
    content = make_block(data, shape_near(data, (n, c, 2, 3)))
    if data.draw(st.booleans()):
        style = make_block(data, shape_near(data, (n, c, 3, 2)))
        eps = data.draw(st.sampled_from([1e-5, 0.0, -1.0, float("nan"), 1.0]))
        out, error = attempt(lambda: nc.adain(content, style, eps=eps), content, style)
        if out is not None:  # mixed float32 and float64 blocks answer in float64
            want = np.result_type(expected_dtype(content), expected_dtype(style))
            good_array(out, np.shape(content), want, "adain output")
            return
    else:
        size = data.draw(st.sampled_from([5, 1, 2, 0, -3, 2.5, True, 100]))
        alpha = data.draw(st.sampled_from([1e-4, 1.0, 0.0]))
        beta = data.draw(st.sampled_from([0.75, 0.5, 2.0]))
        k = data.draw(st.sampled_from([2.0, 1.0, 1e-3]))
        out, error = attempt(
            lambda: nc.local_response_normalisation(content, size, alpha, beta, k), content
        )
    if out is None:
        return
    good_array(out, np.shape(content), expected_dtype(content), "output")


# ----------------------------------------------------------------- valid draws, held to references
SLAB = 1 << 16  # the large draws: blocks beyond 64 Ki values (the book's largest has 8,000)
EPS32 = float(np.finfo(np.float32).eps)


def _standardised(x: np.ndarray, axes: tuple[int, ...], eps: float) -> np.ndarray:
    """(x - mean) / sqrt(biased variance + eps), written so that it also takes complex blocks
    (the complex step below): the variance is mean((x - mean)**2), not np.var's |x - mean|**2."""
    centred = x - x.mean(axis=axes, keepdims=True)
    return centred / np.sqrt(np.mean(centred * centred, axis=axes, keepdims=True) + eps)


def _statistics_layout(kind: str, x: np.ndarray, p: dict[str, Any]) -> tuple[np.ndarray, tuple]:
    """x as the layer's statistics see it (group norm: channels split into groups), and the axes
    they run along, from the layers' definitions."""
    if kind == "ghost":  # rows cut into groups of group_rows: (..., groups, group_rows, features)
        g = p["group_rows"]
        view = x.reshape(*x.shape[:-2], x.shape[-2] // g, g, x.shape[-1])
        return view, (view.ndim - 2,)
    if kind in ("batch", "image"):
        return x, (x.ndim - 2,) if kind == "batch" else (0, 2, 3)
    if kind in ("layer", "rms"):
        return x, tuple(range(x.ndim - p["scale"].ndim, x.ndim))
    n, c, h, w = x.shape
    g = c if kind == "instance" else p["groups"]
    return x.reshape(n, g, c // g, h, w), (2, 3, 4)


def _running(kind: str, p: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """The running mean and deviation of a batch layer, lined up with its block."""
    line = (lambda a: a[..., None, :]) if kind != "image" else (lambda a: a[:, None, None])
    if p["tracks"] == "divisor":
        return line(p["running_mean"]), line(p["running_divisor"])
    return line(p["running_mean"]), np.sqrt(line(p["running_var"]) + p["eps"])


def reference_forward(kind: str, x: np.ndarray, p: dict[str, Any], mode: str) -> np.ndarray:
    """The layer's answer from its definition, in float64 (or complex128): mean, biased variance,
    epsilon under the root, then scale and shift; or the running statistics in evaluation mode."""
    x = x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)
    eps = p["eps"]
    view, axes = _statistics_layout(kind, x, p)
    if kind in ("batch", "ghost", "image") and mode == "eval":
        m, dev = _running(kind, p)
        z = (x - m) / dev
    elif kind == "rms":
        z = x / np.sqrt(np.mean(x * x, axis=axes, keepdims=True) + eps)
    else:
        z = _standardised(view, axes, eps).reshape(x.shape)
    if kind in ("batch", "ghost"):
        return z * p["scale"][..., None, :] + p["shift"][..., None, :]
    if kind in ("layer", "rms"):
        return z * p["scale"] + p["shift"]
    return z * p["scale"][:, None, None] + p["shift"][:, None, None]


def float32_reach(kind: str, x: np.ndarray, p: dict[str, Any], mode: str) -> np.ndarray:
    """Per value, the largest |x| of its statistic over that statistic's deviation: how much a
    float32 answer may magnify the half-ulp each value (and the mean) is rounded to. A statistic
    whose values sit thousands of spreads from zero, or differ only in their last digits, keeps
    that many fewer digits in float32 whatever the arithmetic; the sums themselves must lose
    none beyond it (they are taken in float64)."""
    x = x.astype(np.float64)
    if kind in ("batch", "ghost", "image") and mode == "eval":
        m, dev = _running(kind, p)
        return np.broadcast_to((np.abs(x) + np.abs(m)) / dev, x.shape)
    view, axes = _statistics_layout(kind, x, p)
    centred = view if kind == "rms" else view - view.mean(axis=axes, keepdims=True)
    dev = np.sqrt(np.mean(centred * centred, axis=axes, keepdims=True) + p["eps"])
    reach = np.max(np.abs(view), axis=axes, keepdims=True) / dev
    return np.broadcast_to(reach, view.shape).reshape(x.shape)


@st.composite
def valid_normaliser(draw: Any) -> tuple[Any, str, dict[str, Any], np.ndarray, np.ndarray]:
    """A normaliser with drawn (valid) parameters and settings, a block it takes (now and then
    beyond one slab), a mode and a gradient."""
    kind = draw(st.sampled_from(["batch", "ghost", "image", "layer", "rms", "instance", "group"]))
    dtype = draw(st.sampled_from([np.float64, np.float64, np.float32]))
    large = draw(st.integers(0, 19)) == 0  # one draw in twenty beyond 64 Ki values
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    f = draw(st.integers(1, 6))
    if kind == "batch":
        stack = tuple(draw(st.lists(st.integers(1, 3), max_size=1)))
        rows = (
            SLAB // (f * math.prod(stack)) + 1 + draw(st.integers(0, 3))
            if large
            else (draw(st.integers(1, 7)))
        )
        shape, pshape = (*stack, rows, f), (*stack, f)
    elif kind == "ghost":  # a whole number of groups (the rows of a training block must divide)
        stack = tuple(draw(st.lists(st.integers(1, 3), max_size=1)))
        g = draw(st.integers(1, 4))
        groups = (
            SLAB // (f * math.prod(stack) * g) + 1 + draw(st.integers(0, 3))
            if large
            else draw(st.integers(1, 4))
        )
        shape, pshape = (*stack, groups * g, f), (*stack, f)
    elif kind in ("layer", "rms"):
        ns = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=2)))
        rows = (
            SLAB // math.prod(ns) + 1 + draw(st.integers(0, 3))
            if large
            else (draw(st.integers(1, 7)))
        )
        shape, pshape = (rows, *ns), ns
    else:
        c = 2 * f if kind == "group" else f
        h, w = draw(st.integers(1, 4)), draw(st.integers(1, 4))
        n = SLAB // (c * h * w) + 1 if large else draw(st.integers(1, 4))
        shape, pshape = (n, c, h, w), (c,)
    p: dict[str, Any] = {
        "eps": draw(st.sampled_from([1e-5, 1e-3, 1.0, 1e-10])),
        "scale": rng.standard_normal(pshape) + 1.0,
        "shift": rng.standard_normal(pshape),
    }
    if kind in ("batch", "ghost", "image"):
        tracks = draw(st.sampled_from(["variance", "divisor"]))
        held = "running_var" if tracks == "variance" else "running_divisor"
        p.update(
            {held: rng.random(pshape) + 0.5},
            running_mean=rng.standard_normal(pshape),
            momentum=draw(st.sampled_from([0.9, 0.0, 0.5])),
            tracks=tracks,
        )
        if kind == "ghost":
            p["group_rows"] = g
        cls = {"batch": nc.BatchNorm, "ghost": nc.GhostBatchNorm, "image": nc.ImageBatchNorm}[kind]
        layer = cls(**p)
    elif kind == "group":
        p["groups"] = draw(st.sampled_from([g for g in (1, 2, f, 2 * f) if (2 * f) % g == 0]))
        layer = nc.GroupNorm(**p)
    else:
        cls = {"layer": nc.LayerNorm, "rms": nc.RMSNorm, "instance": nc.InstanceNorm}[kind]
        shaped = {"normalized_shape": pshape} if kind in ("layer", "rms") else {}
        layer = cls(scale=p["scale"], shift=p["shift"], eps=p["eps"], **shaped)
    spread = draw(st.sampled_from([1.0, 1e-3, 1e3]))
    # up to 5,000 spreads from zero, in float32 too: the statistics' sums keep the spread's digits
    x = (rng.standard_normal(shape) * spread + draw(st.sampled_from([0.0, 5.0]))).astype(dtype)
    d = rng.standard_normal(shape).astype(dtype)
    mode = draw(st.sampled_from(["train", "eval"]))
    if kind not in ("batch", "ghost", "image"):
        mode = "train"
    return layer, kind, p, x, d, mode


@settings(FUZZ, max_examples=250)
@given(case=valid_normaliser())
def test_valid_normalisers_match_the_reference(case, cases: Cases) -> None:
    """Forward against the definition; backward against central differences of the definition
    along a random direction; parameter gradients against sum(d z) and sum(d); step against the
    update rules. Blocks beyond 64 Ki values are held to the same."""
    cases()
    layer, kind, p, x, d, mode = case
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        response = layer.forward(x, mode)
        gradient = layer.backward(response, d)
    f32 = x.dtype == np.float32
    want = reference_forward(kind, x, p, mode)
    assert response.output.dtype == x.dtype and response.output.shape == x.shape
    tolerance = (3e-5 if f32 else 1e-9) * (np.abs(want) + np.abs(want).max())
    reach = float32_reach(kind, x, p, mode)
    if f32:  # a few half-ulps of |x|, magnified by the deviation (float32_reach), and no more
        tolerance = tolerance + EPS32 * reach * np.max(np.abs(p["scale"]))
    error = np.abs(response.output - want)
    assert np.all(error <= tolerance), (np.max(error / tolerance), np.argmax(error / tolerance))
    # backward: <grad_input, v> is the directional gradient of sum(d * y) along v, taken from the
    # reference by a complex step (exact to rounding: no difference of nearby values is taken)
    rng = np.random.default_rng(x.size)
    v = rng.standard_normal(x.shape)
    d64, x64 = d.astype(np.float64), x.astype(np.float64)
    h = 1e-30
    oracle = float(np.sum(d64 * reference_forward(kind, x64 + 1j * h * v, p, mode)).imag / h)
    claimed = float(np.sum(gradient.grad_input.astype(np.float64) * v))
    # the size of the terms the backward pass adds (d * scale / deviation): where they cancel,
    # float32 keeps only their size's digits
    divisor = float(np.min(response.cache.divisor))
    terms = float(np.sum(np.abs(d64 * v))) * float(np.max(np.abs(p["scale"]))) / divisor
    # and in float32, what z's own rounding (float32_reach) carries into them
    digits = 1e-4 + 4 * EPS32 * float(np.max(reach)) if f32 else 1e-10
    assert abs(claimed - oracle) <= digits * terms, (claimed, oracle)
    # parameter gradients: sum(d * z) and sum(d) over every axis a parameter is shared along
    z = reference_forward(
        kind,
        x,
        {**p, "scale": np.ones_like(p["scale"]), "shift": np.zeros_like(p["shift"])},
        mode,
    )
    over = tuple(i for i in range(x.ndim) if i not in _param_axes(kind, x.ndim, p))
    z_rounding = 4 * EPS32 * float(np.sum(np.abs(d64) * reach)) if f32 else 0.0
    for name, want_grad in (
        ("scale", np.sum(d64 * z, axis=over)),
        ("shift", np.sum(d64, axis=over)),
    ):
        got = gradient.grads[name].reshape(want_grad.shape)
        np.testing.assert_allclose(
            got,
            want_grad,
            rtol=1e-3 if f32 else 1e-8,
            atol=(1e-3 if f32 else 1e-8) * (np.abs(d64).sum() + 1) + z_rounding,
        )
    # step: parameters by -rate * gradient; running statistics folded in after training
    moved = layer.step(gradient, 0.1)
    np.testing.assert_allclose(moved.scale, p["scale"] - 0.1 * gradient.grads["scale"], rtol=1e-12)
    if kind in ("batch", "ghost", "image") and mode == "train":
        view, axes = _statistics_layout(kind, x64, p)
        spread = view.var(axis=axes)
        if p["tracks"] == "divisor":
            spread = np.sqrt(spread + p["eps"])
        if kind == "ghost":  # the groups' statistics, averaged over the groups
            spread = spread.mean(axis=-2)
        keep = p["momentum"]
        held = "running_divisor" if p["tracks"] == "divisor" else "running_var"
        np.testing.assert_allclose(
            getattr(moved, held),
            keep * p[held] + (1 - keep) * spread,
            rtol=1e-4 if f32 else 1e-9,
            atol=1e-6 if f32 else 1e-12,
        )


def _param_axes(kind: str, ndim: int, p: dict[str, Any]) -> tuple[int, ...]:
    """The axes of the block a parameter varies along (the rest are summed for its gradient)."""
    if kind in ("batch", "ghost"):
        return (*range(ndim - 2), ndim - 1)
    if kind in ("layer", "rms"):
        return tuple(range(ndim - p["scale"].ndim, ndim))
    return (1,)


@settings(FUZZ, max_examples=200)
@given(data=st.data())
def test_valid_dense_and_activations_match_the_reference(data: st.DataObject, cases: Cases) -> None:
    """Dense, weight-normalised dense and the activations on valid draws, held to their
    definitions (forward, input gradient and parameter gradients)."""
    cases()
    kind = data.draw(st.sampled_from(["dense", "weightnorm", "relu", "tanh", "sigmoid"]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    rows, fan_in, fan_out = (data.draw(st.integers(1, 6)) for _ in range(3))
    x = rng.standard_normal((rows, fan_in)) * data.draw(st.sampled_from([1.0, 30.0]))
    if kind in ("dense", "weightnorm"):
        v, b = rng.standard_normal((fan_in, fan_out)), rng.standard_normal(fan_out)
        m = rng.standard_normal(fan_out)
        if kind == "dense":
            layer, w = nc.Dense(weights=v, bias=b), v
        else:
            layer = nc.WeightNormDense(direction=v, magnitude=m, bias=b)
            w = m * v / np.sqrt(np.sum(v * v, axis=0))
        want, d = x @ w + b, rng.standard_normal((rows, fan_out))
        g = layer.backward(layer.forward(x, "train"), d)
        np.testing.assert_allclose(g.grad_input, d @ w.T, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(g.grads["bias"], d.sum(axis=0), rtol=1e-10, atol=1e-10)
        dense = x.T @ d
        if kind == "dense":
            np.testing.assert_allclose(g.grads["weights"], dense, rtol=1e-10, atol=1e-10)
        else:
            u = v / np.sqrt(np.sum(v * v, axis=0))
            along = np.sum(dense * u, axis=0)
            np.testing.assert_allclose(g.grads["magnitude"], along, rtol=1e-9, atol=1e-9)
            radial_free = (m / np.sqrt(np.sum(v * v, axis=0))) * (dense - along * u)
            np.testing.assert_allclose(g.grads["direction"], radial_free, rtol=1e-9, atol=1e-9)
    else:
        layer = {"relu": nc.ReLU, "tanh": nc.Tanh, "sigmoid": nc.Sigmoid}[kind]()
        want = {
            "relu": np.where(x > 0, x, 0.0),
            "tanh": np.tanh(x),
            "sigmoid": 0.5 * (1 + np.tanh(x / 2)),
        }[kind]
        grad = {
            "relu": (x > 0) * 1.0,
            "tanh": 1 / np.cosh(x) ** 2,
            "sigmoid": 0.25 / np.cosh(x / 2) ** 2,
        }[kind]
        d = rng.standard_normal(x.shape)
        g = layer.backward(layer.forward(x, "train"), d)
        np.testing.assert_allclose(g.grad_input, d * grad, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(layer.forward(x).output, want, rtol=1e-10, atol=1e-10)


@settings(FUZZ, max_examples=200)
@given(data=st.data())
def test_valid_loss_and_image_functions_match_the_reference(data: st.DataObject, cases) -> None:
    """binary_cross_entropy (logits up to the float64 limit), adain and local response
    normalisation on valid draws, held to their definitions."""
    cases()
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    z = rng.standard_normal(shape) * data.draw(st.sampled_from([1.0, 50.0, 1e300]))
    y = rng.random(shape)
    loss = nc.binary_cross_entropy(z, y)
    each = np.logaddexp(0.0, z) - z * y  # log(1 + e^z) - z y, by numpy's logaddexp
    np.testing.assert_allclose(loss.value, np.sum(each / each.size), rtol=1e-12)
    np.testing.assert_allclose(
        loss.grad, (0.5 * (1 + np.tanh(z / 2)) - y) / z.size, rtol=1e-9, atol=1e-15
    )
    n, c, h, w = (data.draw(st.integers(1, 3)) for _ in range(4))
    content = rng.standard_normal((n, c, h, w)) * 3 + 1
    style = rng.standard_normal((n, c, h + 1, w)) * 2 - 1
    got = nc.adain(content, style)
    cm, cs = (
        content.mean(axis=(2, 3), keepdims=True),
        np.sqrt(content.var(axis=(2, 3), keepdims=True) + 1e-5),
    )
    sm, ss = (
        style.mean(axis=(2, 3), keepdims=True),
        np.sqrt(style.var(axis=(2, 3), keepdims=True) + 1e-5),
    )
    np.testing.assert_allclose(got, (content - cm) / cs * ss + sm, rtol=1e-10, atol=1e-10)
    size = data.draw(st.integers(1, 7))
    a = content * data.draw(st.sampled_from([1.0, 1e6]))
    got = nc.local_response_normalisation(a, size, 1e-2, 0.75, 2.0)
    want = np.empty(a.shape)
    for ch in range(c):
        lo, hi = max(0, ch - size // 2), min(c - 1, ch + (size - 1) // 2)
        window = np.sum(a[:, lo : hi + 1] ** 2, axis=1)
        want[:, ch] = a[:, ch] / (2.0 + 1e-2 / size * window) ** 0.75
    np.testing.assert_allclose(got, want, rtol=1e-12)
