"""Bad input by the thousand: a hypothesis fuzz of normcore's public API.

Every call either answers with finite arrays of the documented shape and dtype (float32 in gives
float32 out; float64 and integers give float64) or raises a `NormcoreError` whose message says
something; never another exception, never a warning, never a NaN or infinity handed back, never a
change to an input array. The number of cases each test ran is printed (``-s``) and written to
``_build/fuzz/<test>.count``; their sum is the fuzz's case count.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import normcore as nc
from normcore.fused import standardise_backward_fast, standardise_fast
from normcore.standardise import standardise, standardise_backward

COUNT_DIR = Path(__file__).resolve().parent.parent / "_build" / "fuzz"
FUZZ = settings(
    max_examples=900,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
    database=None,
)
DTYPES = ["float32", "float64", "int64", "int8", "uint8", "float16", "bool", "object",
          "complex128", "str"]
NUMERIC = {"float32", "float64", "int64", "int8", "uint8", "float16"}
VALUES = ["normal", "nan", "inf", "-inf", "huge", "tiny", "subnormal", "equal", "zeros", "large"]
PURPOSES = ["training", "predicting", "predicting", "training", "Training", "", None, 1, "eval"]


class Cases:
    """Counts the cases one test ran and records the count when the test ends."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.n = 0

    def __call__(self) -> None:
        self.n += 1

    def record(self) -> None:
        COUNT_DIR.mkdir(parents=True, exist_ok=True)
        (COUNT_DIR / f"{self.name}.count").write_text(f"{self.n}\n")
        print(f"\n{self.name}: {self.n} fuzz cases")


@pytest.fixture
def cases(request: pytest.FixtureRequest) -> Any:
    counter = Cases(request.node.name)
    yield counter
    counter.record()


# ------------------------------------------------------------------------------ the blocks
def make_block(data: st.DataObject, shape: tuple[int, ...], dtype: str | None = None) -> Any:
    """A block of `shape` with a drawn dtype and a drawn kind of values (often hostile)."""
    dtype = dtype or data.draw(st.sampled_from(DTYPES), label="dtype")
    kind = data.draw(st.sampled_from(VALUES), label="values")
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
            assert str(exc).strip(), f"{type(exc).__name__} with an empty message"
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
def build_layer(data: st.DataObject) -> tuple[Any, tuple[int, ...]]:
    """A drawn layer (with drawn settings, sometimes bad ones) and the input shape it takes."""
    kind = data.draw(
        st.sampled_from(["batch", "image", "layer", "rms", "instance", "group", "dense",
                         "weightnorm", "relu", "tanh", "sigmoid"]),
        label="layer",
    )
    rows = data.draw(st.integers(1, 6), label="rows")
    f = data.draw(st.integers(1, 5), label="features")
    eps = data.draw(st.sampled_from([1e-5, 1e-5, 1e-12, 1.0, 0.0, -1.0, float("nan"), "1e-5"]))
    mom = data.draw(st.sampled_from([0.9, 0.9, 0.0, 0.999, 1.0, -0.1, float("inf"), True]))
    if kind == "batch":
        stack = tuple(data.draw(st.lists(st.integers(1, 3), max_size=2), label="stack"))
        layer = nc.BatchNorm.create(f, stack=stack, epsilon=eps, momentum=mom,
                                    tracks=data.draw(st.sampled_from(["variance", "deviation"])))
        return layer, (*stack, rows, f)
    if kind == "image":
        layer = nc.ImageBatchNorm.create(f, epsilon=eps, momentum=mom)
        return layer, (rows, f, data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)))
    if kind in ("layer", "rms"):
        cls = nc.LayerNorm if kind == "layer" else nc.RMSNorm
        ns = tuple(data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=3), label="ns"))
        lead = tuple(data.draw(st.lists(st.integers(1, 3), max_size=2), label="lead"))
        layer = cls.create(ns if len(ns) > 1 else ns[0], epsilon=eps)
        return layer, (*lead, *ns)
    if kind == "instance":
        return nc.InstanceNorm.create(f, epsilon=eps), (rows, f, 2, 3)
    if kind == "group":
        groups = data.draw(st.sampled_from([1, 2, 3, f, 0]))
        return nc.GroupNorm.create(2 * f, groups, epsilon=eps), (rows, 2 * f, 2, 2)
    rng = np.random.default_rng(data.draw(st.integers(0, 1000)))
    if kind == "dense":
        return nc.Dense.create(f, data.draw(st.integers(1, 4)), rng), (rows, f)
    if kind == "weightnorm":
        return nc.WeightNormDense.create(f, data.draw(st.integers(1, 4)), rng), (rows, f)
    cls = {"relu": nc.ReLU, "tanh": nc.Tanh, "sigmoid": nc.Sigmoid}[kind]
    return cls(), tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))


def parameters(layer: Any) -> dict[str, np.ndarray]:
    names = ["scale", "shift", "running_mean", "running_variance", "weights", "bias", "magnitude"]
    return {n: getattr(layer, n) for n in names if isinstance(getattr(layer, n, None), np.ndarray)}


@settings(FUZZ, max_examples=2500)
@given(data=st.data())
def test_layer_chains(data: st.DataObject, cases: Cases) -> None:
    """Build → forward → backward → step with drawn settings, blocks, purposes and rates."""
    cases()
    made, error = attempt(lambda: build_layer(data))
    if error is not None:
        return
    layer, good = made
    x = maybe_list(data, make_block(data, shape_near(data, good)))
    purpose = data.draw(st.sampled_from(PURPOSES), label="purpose")
    response, error = attempt(lambda: layer.forward(x, purpose), x)
    if response is None:
        return
    assert valid_input(x), f"accepted {np.asarray(x).dtype} with non-finite values"
    assert purpose in ("training", "predicting")
    dtype = expected_dtype(x)
    good_array(response.output, np.shape(response.output), dtype, "output")
    if not isinstance(layer, (nc.Dense,)):
        assert response.output.shape == np.shape(x)
    if data.draw(st.integers(0, 9)) == 0:  # a response from another layer of the same kind
        response = nc.Response(response.output, copy.copy(layer), purpose, response.input)
    d_shape = shape_near(data, response.output.shape)
    d = maybe_list(data, make_block(data, d_shape,
                                    data.draw(st.sampled_from(["float64", "float32", None]))))
    gradient, error = attempt(lambda: layer.backward(response, d), x, d)
    if gradient is None:
        return
    good_array(gradient.passed_down, response.input.shape, dtype, "passed_down")
    params = parameters(layer)
    for name, slope in gradient.slopes.items():
        target = params["weights" if name == "weights" else name]
        good_array(slope, target.shape, slope.dtype, f"slope of {name}")
    rate = data.draw(st.sampled_from([0.1, 0.0, -1.0, 1e300, float("nan"), float("inf"), "0.1",
                                      True, 10]), label="rate")
    moved, error = attempt(lambda: layer.step(gradient, rate), x, d)
    if moved is None:
        return
    assert type(moved) is type(layer)
    for name, value in parameters(moved).items():
        assert np.isfinite(value).all(), f"step left a non-finite {name}"
        assert value.shape == params[name].shape
    for name, value in parameters(layer).items():  # the old layer is a value: unchanged
        assert np.array_equal(value, params[name])


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
    x = make_block(data, shape_near(data, shape), data.draw(st.sampled_from(["float32",
                                                                             "float64", None])))
    response, error = attempt(lambda: layer.forward(x, "training"), x)
    if response is None:
        return
    good_array(response.output, np.shape(x), expected_dtype(x), "output")
    gradient, _ = attempt(lambda: layer.backward(response, np.ones_like(response.output)), x)
    if gradient is not None:
        good_array(gradient.passed_down, np.shape(x), expected_dtype(x), "passed_down")


@FUZZ
@given(data=st.data())
def test_layer_construction(data: st.DataObject, cases: Cases) -> None:
    """Layers built from drawn parameter arrays (wrong shapes, NaN, zero directions...)."""
    cases()
    f = data.draw(st.integers(1, 4))
    cls = data.draw(st.sampled_from([nc.BatchNorm, nc.LayerNorm, nc.RMSNorm, nc.InstanceNorm,
                                     nc.GroupNorm, nc.Dense, nc.WeightNormDense]))
    a = make_block(data, shape_near(data, (f,) if cls not in (nc.Dense, nc.WeightNormDense)
                                     else (f, 2)))
    b = make_block(data, shape_near(data, (f,) if cls not in (nc.Dense, nc.WeightNormDense)
                                     else (2,)))
    if cls in (nc.Dense, nc.WeightNormDense):
        layer, error = attempt(lambda: cls(weights=a, bias=b), a, b)
    elif cls is nc.GroupNorm:
        layer, error = attempt(lambda: cls(scale=a, shift=b, groups=data.draw(
            st.sampled_from([1, 2, 0, -1, 1.5, True]))), a, b)
    elif cls is nc.BatchNorm:
        c = make_block(data, shape_near(data, (f,)))
        layer, error = attempt(lambda: cls(scale=a, shift=b, running_mean=a, running_variance=c),
                               a, b, c)
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
    dtype = expected_dtype(z)
    zs = np.shape(z)
    good_array(np.asarray(loss.slope), zs, np.asarray(loss.slope).dtype, "loss slope")
    assert np.shape(loss.value) == zs[:axes]
    assert np.isfinite(loss.value).all()
    assert loss.slope.dtype in (dtype, np.float64)


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
        out, error = attempt(lambda: nc.adain(content, style, epsilon=eps), content, style)
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


@settings(FUZZ, max_examples=300)
@given(data=st.data())
def test_fast_kernel_agrees_with_readable(data: st.DataObject, cases: Cases) -> None:
    """standardise_fast and standardise_backward_fast agree with the book's readable pair to
    1e-12 (float64) on random blocks: rows, stacked blocks, images and groups."""
    cases()
    layout = data.draw(st.sampled_from(["batch", "row", "stacked", "image batch", "instance",
                                        "group", "trailing"]))
    r = data.draw(st.integers(1, 9))
    shape, axes = {
        "batch": ((r, 5), (0,)),
        "row": ((r, 7), (1,)),
        "stacked": ((3, r, 4), (1,)),
        "image batch": ((r, 3, 4, 5), (0, 2, 3)),
        "instance": ((r, 3, 4, 5), (2, 3)),
        "group": ((r, 2, 3, 4, 5), (2, 3, 4)),
        "trailing": ((r, 3, 4, 5), (-2, -1)),
    }[layout]
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    offset = data.draw(st.sampled_from([0.0, 3.0, -100.0]))
    x = rng.standard_normal(shape) * data.draw(st.sampled_from([1.0, 1e-3, 1e3])) + offset
    d = rng.standard_normal(shape)
    centre = data.draw(st.booleans())
    eps = data.draw(st.sampled_from([1e-5, 1e-12, 1.0]))
    slow, fast = standardise(x, axes, eps, centre), standardise_fast(x, axes, eps, centre)
    for name in ("z", "variance", "deviation") + (("mean",) if centre else ()):
        a, b = getattr(slow, name), getattr(fast, name)
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12 * np.max(np.abs(a)))
    g_slow, g_fast = standardise_backward(slow, d), standardise_backward_fast(fast, d)
    # Held to 1e-12 of the size of the terms the backward pass adds (d / deviation): where those
    # cancel (a single row, tiny epsilon) both forms lose the same digits.
    terms = np.max(np.abs(d / slow.deviation))
    np.testing.assert_allclose(g_fast, g_slow, rtol=1e-12, atol=1e-12 * terms)
    x32, d32 = x.astype(np.float32), d.astype(np.float32)
    s32, f32 = standardise(x32, axes, eps, centre), standardise_fast(x32, axes, eps, centre)
    assert f32.z.dtype == np.float32
    np.testing.assert_allclose(f32.z, s32.z, rtol=2e-3, atol=2e-3)
    assert standardise_backward_fast(f32, d32).dtype == np.float32


def test_fuzz_case_count_is_recorded() -> None:
    """The count files the fuzz leaves behind are readable (their sum is the case count)."""
    if not COUNT_DIR.exists():
        pytest.skip("no fuzz counts recorded yet in this checkout")
    total = sum(int(p.read_text()) for p in COUNT_DIR.glob("*.count"))
    print(f"\nfuzz cases recorded so far: {total}")
    assert total >= 0
