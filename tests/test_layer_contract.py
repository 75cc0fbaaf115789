"""The contract every layer keeps, tested once over every layer.

For each layer in `LAYERS` (the normalisers, GhostBatchNorm included, the dense layers, the
convolutions, the activations and a `Sequential`), in both modes:

* **Read-only values.** Every array anywhere in what the three calls hand back (the response,
  its cache and statistics, the gradient and its gradients, the new layer, and every value inside
  those, dicts and tuples included) is read-only, found by walking every field rather than by a
  list of known arrays.
* **Its own error state.** The answers are the same, bit for bit, with no warning, whatever the
  caller set with ``np.seterr``.
* **The oracle.** The input gradient and every parameter gradient agree with central
  differences.
* **Typed refusals before any arithmetic.** Bad blocks, bad gradients and foreign responses get a
  subclass of `NormcoreError` whose message says what was expected, and the input is unchanged.
* **PyTorch, where the conventions agree.** Every layer with a twin in ``torch.nn.functional``
  (`TWINS`) answers as its twin, in each mode the twin has: the output, the input
  gradient and every parameter gradient (float64, 1e-10). The layers without one say why
  (`NO_TWIN`). `tests/test_torch_agreement.py` adds more shapes and seeds, and asserts the
  conventions that differ on purpose (the running variance, momentum's name, epsilon's default).

New layers join by adding a line to `LAYERS`, and one to `TWINS` or `NO_TWIN`.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Iterator
from types import MappingProxyType
from typing import Any

import numpy as np
import pytest

import normcore as nc
from normcore.sequential import Flatten, Residual

# figures from float arithmetic (the finite differences, PyTorch at 1e-10): make test-arith
# reruns it
pytestmark = pytest.mark.numeric


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(2600 + seed)


def _trained(layer: Any) -> Any:
    """`layer` with scale and shift away from 1 and 0 (no shortcut for a fresh layer)."""
    r = _rng(1)
    changes = {}
    for name in ("scale", "shift", "running_mean"):
        if hasattr(layer, name):
            value = getattr(layer, name)
            changes[name] = value + 0.3 * r.standard_normal(value.shape)
    return dataclasses.replace(layer, **changes) if changes else layer


#: each layer, with the shape of a block it takes
LAYERS: dict[str, tuple[Callable[[], Any], tuple[int, ...]]] = {
    "batch": (lambda: _trained(nc.BatchNorm.create(3)), (5, 3)),
    "batch stacked": (lambda: _trained(nc.BatchNorm.create(3, stack=(2,))), (2, 5, 3)),
    "batch deviation": (lambda: _trained(nc.BatchNorm.create(3, tracks="divisor")), (5, 3)),
    "ghost batch": (lambda: _trained(nc.GhostBatchNorm.create(3, group_rows=2)), (6, 3)),
    "image batch": (lambda: _trained(nc.ImageBatchNorm.create(2)), (3, 2, 2, 3)),
    "layer": (lambda: _trained(nc.LayerNorm.create(4)), (3, 4)),
    "layer trailing": (lambda: _trained(nc.LayerNorm.create((2, 3))), (2, 2, 3)),
    "RMS": (lambda: _trained(nc.RMSNorm.create(4)), (3, 4)),
    "instance": (lambda: _trained(nc.InstanceNorm.create(2)), (2, 2, 2, 3)),
    "group": (lambda: _trained(nc.GroupNorm.create(4, 2)), (2, 4, 2, 2)),
    "not affine": (lambda: nc.LayerNorm.create(4, affine=False), (3, 4)),
    "dense": (lambda: nc.Dense.create(4, 3, _rng(2)), (5, 4)),
    "weight norm": (lambda: nc.WeightNormDense.create(4, 3, _rng(3)), (5, 4)),
    "conv": (lambda: nc.Conv2d.create(2, 3, 3, _rng(5), padding=1), (2, 2, 4, 4)),
    "conv strided": (lambda: nc.Conv2d.create(2, 3, 2, _rng(6), stride=2), (2, 2, 5, 5)),
    "standardised conv": (lambda: nc.StandardisedConv2d.create(2, 3, 3, _rng(7)), (2, 2, 4, 4)),
    "ReLU": (nc.ReLU, (3, 4)),
    "tanh": (nc.Tanh, (3, 4)),
    "sigmoid": (nc.Sigmoid, (3, 4)),
    "sequential": (
        lambda: nc.Sequential(
            (nc.Dense.create(4, 3, _rng(4)), _trained(nc.BatchNorm.create(3)), nc.ReLU())
        ),
        (5, 4),
    ),
    "flatten": (lambda: Flatten(1), (3, 2, 2)),
    "residual": (
        lambda: Residual(
            nc.Sequential((nc.Dense.create(4, 4, _rng(8)), _trained(nc.LayerNorm.create(4))))
        ),
        (5, 4),
    ),
}
MODES = ["train", "eval"]
#: the layers that take a block of any shape (with at least one axis)
ACTIVATIONS = {"ReLU", "tanh", "sigmoid"}


def _case(name: str, seed: int = 0) -> tuple[Any, np.ndarray, np.ndarray]:
    make, shape = LAYERS[name]
    layer = make()
    r = _rng(10 + seed)
    x = 2.0 * r.standard_normal(shape) + 0.5
    out_shape = layer.forward(x).output.shape
    return layer, x, r.standard_normal(out_shape)


def _three_calls(layer: Any, x: np.ndarray, d: np.ndarray, mode: str) -> tuple[Any, ...]:
    response = layer.forward(x, mode)
    gradient = layer.backward(response, d)
    return response, gradient, layer.step(gradient, 0.1)


# -- read-only values ---------------------------------------------------------------------------
def arrays_within(value: Any, where: str = "value") -> Iterator[tuple[str, np.ndarray]]:
    """Every array reachable from `value` through the fields and attributes of normcore's values,
    dicts (and read-only mappings), tuples and lists, each with the path that reached it."""
    seen: set[int] = set()

    def walk(v: Any, path: str) -> Iterator[tuple[str, np.ndarray]]:
        if isinstance(v, np.ndarray):
            yield path, v
            return
        if id(v) in seen:
            return
        seen.add(id(v))
        if isinstance(v, (dict, MappingProxyType)):
            for key, item in v.items():
                yield from walk(item, f"{path}[{key!r}]")
        elif isinstance(v, (tuple, list)):
            for i, item in enumerate(v):
                yield from walk(item, f"{path}[{i}]")
        elif type(v).__module__.startswith("normcore"):
            for key, item in vars(v).items():  # fields, and what a value worked out and keeps
                yield from walk(item, f"{path}.{key}")

    yield from walk(value, where)


def test_the_walk_finds_every_array_it_should() -> None:
    """The walk can fail: it reaches arrays inside a response's cache, statistics and a
    gradient's gradients, and sees a writable one."""
    layer, x, d = _case("batch")
    response, gradient, _ = _three_calls(layer, x, d, "train")
    paths = {path for path, _ in arrays_within(response, "response")}
    assert {"response.output", "response.cache.z", "response.statistics.mean"} <= paths
    paths = {path for path, _ in arrays_within(gradient, "gradient")}
    assert "gradient.grads['scale']" in paths and "gradient.grad_input" in paths
    writable = {"a": np.zeros(2)}
    assert [a.flags.writeable for _, a in arrays_within(writable)] == [True]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", LAYERS)
def test_every_array_the_three_calls_hand_back_is_read_only(name: str, mode: str) -> None:
    layer, x, d = _case(name)
    response, gradient, stepped = _three_calls(layer, x, d, mode)
    for value, where in ((layer, "layer"), (response, "response"), (gradient, "gradient")):
        for path, a in arrays_within(value, where):
            assert not a.flags.writeable, f"{name}: {path} is writable"
    for path, a in arrays_within(stepped, "stepped"):
        assert not a.flags.writeable, f"{name}: {path} is writable"
        with pytest.raises(ValueError):
            a.setflags(write=True)  # a view of a read-only owner: not even by asking


def _same_fields(got: Any, want: Any, where: str) -> None:
    """`got` and `want` hold equal fields, bit for bit, layers inside tuples included."""
    assert type(got) is type(want), where
    if isinstance(got, np.ndarray):
        assert got.dtype == want.dtype, where
        np.testing.assert_array_equal(got, want, err_msg=where)
    elif isinstance(got, tuple):
        assert len(got) == len(want), where
        for i, (a, b) in enumerate(zip(got, want, strict=True)):
            _same_fields(a, b, f"{where}[{i}]")
    elif dataclasses.is_dataclass(got):
        for f in dataclasses.fields(got):
            _same_fields(getattr(got, f.name), getattr(want, f.name), f"{where}.{f.name}")
    else:
        assert got == want, where


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", LAYERS)
def test_a_step_makes_what_the_constructor_makes_of_the_same_fields(name: str, mode: str) -> None:
    """A step makes its new layer without running the constructor's checks again
    (`normcore._checks.successor`, for the normalisers, the dense layer and the convolution): the
    new layer must hold exactly what the constructor makes of
    the same fields (which checks and seals them again, and works out a batch layer's running
    divisor again), and answer the same, forward and backward (the new layer lines its
    parameters up by reshaping them to the shapes its predecessor worked out; the remade one
    works them out afresh)."""
    layer, x, d = _case(name)
    _, _, stepped = _three_calls(layer, x, d, mode)
    fields = {f.name: getattr(stepped, f.name) for f in dataclasses.fields(stepped) if f.init}
    remade = type(stepped)(**fields)
    _same_fields(stepped, remade, name)
    for p in MODES:
        got, want = stepped.forward(x, p), remade.forward(x, p)
        np.testing.assert_array_equal(got.output, want.output)
        got, want = stepped.backward(got, d), remade.backward(want, d)
        np.testing.assert_array_equal(got.grad_input, want.grad_input)
        assert sorted(got.grads) == sorted(want.grads)
        for key, grad in got.grads.items():
            assert grad.shape == want.grads[key].shape, key
            np.testing.assert_array_equal(grad, want.grads[key], err_msg=key)


@pytest.mark.parametrize("name", ["batch", "ghost batch", "image batch"])
def test_the_statistics_a_step_folds_in_cannot_be_written_into(name: str) -> None:
    """The bug the walk above guards against: writing into a training response's statistics
    (or its cache) must not reach the running statistics or the input gradient."""
    layer, x, d = _case(name)
    response = layer.forward(x, "train")
    with pytest.raises(ValueError):
        response.statistics.mean[...] = 100.0
    with pytest.raises(ValueError):
        response.cache.divisor[...] = 1.0
    with pytest.raises(TypeError):
        layer.backward(response, d).grads["scale"] = np.zeros(3)  # a read-only mapping


@pytest.mark.parametrize("name", LAYERS)
def test_the_callers_arrays_stay_the_callers(name: str) -> None:
    """normcore never seals an array the caller handed in: the block and the gradient stay
    writable, and writing them after a call changes nothing normcore handed back."""
    layer, x, d = _case(name)
    response = layer.forward(x, "train")
    gradient = layer.backward(response, d)
    assert x.flags.writeable and d.flags.writeable
    output, passed = response.output.copy(), gradient.grad_input.copy()
    x[...] = 7.0
    d[...] = -3.0
    np.testing.assert_array_equal(response.output, output)
    np.testing.assert_array_equal(gradient.grad_input, passed)


# -- the error state ----------------------------------------------------------------------------
@pytest.mark.parametrize("setting", ["raise", "warn", "ignore"])
@pytest.mark.parametrize("name", LAYERS)
def test_answers_do_not_depend_on_the_callers_error_state(name: str, setting: str) -> None:
    layer, x, d = _case(name)
    tiny = x * 1e-200  # squares underflow: harmless, and never raised
    want = [_three_calls(layer, block, d, "train") for block in (x, tiny)]
    saved = np.seterr(all=setting)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = [_three_calls(layer, block, d, "train") for block in (x, tiny)]
    finally:
        np.seterr(**saved)
    for (r0, g0, _), (r1, g1, _) in zip(want, got, strict=True):
        np.testing.assert_array_equal(r1.output, r0.output)
        np.testing.assert_array_equal(g1.grad_input, g0.grad_input)


# -- the oracle ---------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", LAYERS)
def test_grads_agree_with_central_differences(name: str, mode: str) -> None:
    layer, x, d = _case(name, seed=1)
    gradient = layer.backward(layer.forward(x, mode), d)

    def loss(block: np.ndarray) -> float:
        return float(np.sum(d * layer.forward(block, mode).output))

    check = nc.check_grad(loss, x, gradient.grad_input)
    assert check.relative_gap < 1e-6, (name, check.relative_gap)
    for key, grad in gradient.grads.items():

        def of_parameter(p: np.ndarray, key: str = key) -> float:
            other = dataclasses.replace(layer, **{key: p})
            return float(np.sum(d * other.forward(x, mode).output))

        check = nc.check_grad(of_parameter, getattr(layer, key), grad)
        assert check.relative_gap < 1e-6, (name, key, check.relative_gap)


# -- typed refusals -----------------------------------------------------------------------------
def _refused(call: Callable[[], Any], error: type[nc.NormcoreError], *inputs: np.ndarray) -> str:
    """The message of the typed error `call` raises; the inputs are unchanged."""
    before = [a.copy() for a in inputs]
    with pytest.raises(error) as caught:
        call()
    for a, b in zip(inputs, before, strict=True):
        np.testing.assert_array_equal(a, b)
    assert "expected" in str(caught.value)
    return str(caught.value)


def _wrong_shape(name: str, x: np.ndarray) -> np.ndarray:
    """A block this layer cannot take: no axis at all (activations), no axis after the first
    (flatten), a channel short (images), a feature short (the rest)."""
    if name in ACTIVATIONS or name == "flatten":
        return x[0, 0]
    return x[:, :-1] if x.ndim == 4 else x[..., :-1]


@pytest.mark.parametrize("name", LAYERS)
def test_bad_blocks_are_refused_with_typed_errors(name: str) -> None:
    layer, x, d = _case(name)
    for bad, error in (
        (np.where(np.arange(x.size).reshape(x.shape) == 1, np.nan, x), nc.NonFiniteError),
        (np.where(np.arange(x.size).reshape(x.shape) == 0, np.inf, x), nc.NonFiniteError),
        (x.astype(np.complex128), nc.DtypeError),
        (x > 0, nc.DtypeError),
        (_wrong_shape(name, x), nc.ShapeError),
    ):
        for mode in MODES:
            _refused(lambda b=bad, p=mode: layer.forward(b, p), error, bad)
    _refused(lambda: layer.forward(x, "inference"), nc.ModeError, x)
    response = layer.forward(x, "train")
    _refused(lambda: layer.backward(response, d[..., :1]), nc.ShapeError, d)
    _refused(lambda: layer.backward(response, np.full_like(d, np.nan)), nc.NonFiniteError, d)
    other, _, _ = _case(name)
    _refused(lambda: other.backward(response, d), nc.ForeignResponseError, d)
    gradient = layer.backward(response, d)
    _refused(lambda: other.step(gradient, 0.1), nc.ForeignResponseError)
    _refused(lambda: layer.step(gradient, float("nan")), nc.RateError)


@pytest.mark.parametrize("name", ["batch", "layer", "dense", "ReLU", "group", "conv"])
def test_a_block_too_large_to_answer_is_refused_before_it_is_allocated(name: str) -> None:
    """A broadcast view of 2·10⁹ values takes no memory itself, but the layer's answer would:
    it is refused (ShapeError, naming the limit) before anything is allocated."""
    layer, x, _ = _case(name)
    huge = np.broadcast_to(x[..., :1, :] if x.ndim > 1 else x, x.shape)
    shape = list(huge.shape)
    shape[-2 if huge.ndim > 1 else 0] = 2 * 10**9 // max(1, huge[..., 0, :].size)
    view = np.broadcast_to(x[..., :1, :], tuple(shape))
    message = _refused(lambda: layer.forward(view, "train"), nc.ShapeError)
    assert "an eighth of this machine's memory" in message


def test_the_oracle_refuses_what_it_cannot_call() -> None:
    for f in (None, 3.0, "f", np.zeros(2)):
        message = _refused(lambda f=f: nc.finite_difference(f, np.zeros(2)), nc.SettingError)
        assert message.startswith("f: expected a function")
        _refused(lambda f=f: nc.check_grad(f, np.zeros(2), np.zeros(2)), nc.SettingError)


# -- PyTorch, where the conventions agree -------------------------------------------------------
#: The torch twin of each layer: ``twin(torch, layer, mode)`` gives the function of the block
#: and the parameters (as torch tensors) that answers as the layer does, the parameters it
#: takes (as numpy arrays), and each normcore gradient's name with the parameter whose gradient it
#: is and how that gradient is laid out as normcore's gradient.
Twin = tuple[Callable[..., Any], dict[str, np.ndarray], dict[str, tuple[str, Callable[..., Any]]]]


def _as_is(g: np.ndarray) -> np.ndarray:
    return g


def _normaliser(call: Callable[..., Any], layer: Any) -> Twin:
    if not layer.affine:
        return (lambda x: call(x, None, None)), {}, {}
    grads = {"scale": ("w", _as_is), "shift": ("b", _as_is)}
    return call, {"w": layer.scale, "b": layer.shift}, grads


def _batch_twin(torch: Any, layer: Any, mode: str, groups_of: int | None = None) -> Twin:
    F, e = torch.nn.functional, layer.eps
    mean, variance = layer.running_mean, layer.running_var

    def one(x: Any, w: Any, b: Any, i: Any = ...) -> Any:
        if mode == "eval":
            m, v = torch.tensor(mean[i]), torch.tensor(variance[i])
            return F.batch_norm(x, m, v, w, b, training=False, eps=e)
        if groups_of is None:
            return F.batch_norm(x, None, None, w, b, training=True, eps=e)
        parts = torch.split(x, groups_of, dim=0)
        return torch.cat([F.batch_norm(p, None, None, w, b, training=True, eps=e) for p in parts])

    if layer.scale.ndim == 2:  # a stack of layers: each slice its own batch norm

        def stacked(x: Any, w: Any, b: Any) -> Any:
            return torch.stack([one(x[i], w[i], b[i], i) for i in range(x.shape[0])])

        return _normaliser(stacked, layer)
    return _normaliser(one, layer)


def _twin(name: str, torch: Any, layer: Any, mode: str) -> Twin:
    F = torch.nn.functional
    if name in ("batch", "batch stacked", "image batch", "batch deviation"):
        return _batch_twin(torch, layer, mode)
    if name == "ghost batch":
        return _batch_twin(torch, layer, mode, groups_of=layer.group_rows)
    e = getattr(layer, "eps", None)
    if name in ("layer", "layer trailing", "not affine"):
        ns = layer.normalized_shape
        return _normaliser(lambda x, w, b: F.layer_norm(x, ns, w, b, eps=e), layer)
    if name == "RMS":  # torch's RMS norm has no shift: added after it
        ns = layer.normalized_shape
        return _normaliser(lambda x, w, b: F.rms_norm(x, ns, w, eps=e) + b, layer)
    if name == "instance":
        return _normaliser(lambda x, w, b: F.instance_norm(x, weight=w, bias=b, eps=e), layer)
    if name == "group":
        g = layer.groups
        return _normaliser(lambda x, w, b: F.group_norm(x, g, w, b, eps=e), layer)
    if name == "dense":
        grads = {"weights": ("w", _as_is), "bias": ("b", _as_is)}
        call = lambda x, w, b: F.linear(x, w.T, b)  # noqa: E731 - normcore's weights are (in, out)
        return call, {"w": layer.weights, "b": layer.bias}, grads
    if name == "weight norm":  # torch's weight (out, in) with dim=0: one direction a row
        grads = {
            "direction": ("v", lambda g: g.T),
            "magnitude": ("g", lambda g: g[:, 0]),
            "bias": ("b", _as_is),
        }
        arrays = {"v": layer.direction.T, "g": layer.magnitude[:, None], "b": layer.bias}
        return (lambda x, v, g, b: F.linear(x, torch._weight_norm(v, g, 0), b)), arrays, grads
    if name in ("conv", "conv strided"):
        stride, padding = layer.stride, layer.padding
        grads = {"weights": ("w", _as_is), "bias": ("b", _as_is)}

        def conv(x: Any, w: Any, b: Any) -> Any:
            return F.conv2d(x, w, b, stride=stride, padding=padding)

        return conv, {"w": layer.weights, "b": layer.bias}, grads
    activations = {
        "ReLU": torch.relu,
        "tanh": torch.tanh,
        "sigmoid": torch.sigmoid,
        "flatten": lambda x: torch.flatten(x, 1),
    }
    return activations[name], {}, {}


#: the layers (and modes) with no torch twin, and why
NO_TWIN = {
    ("standardised conv", "train"): "PyTorch has no weight-standardised convolution",
    ("standardised conv", "eval"): "PyTorch has no weight-standardised convolution",
    ("sequential", "train"): "its layers are each held to their twins here",
    ("sequential", "eval"): "its layers are each held to their twins here",
    ("batch deviation", "eval"): "it divides by a running divisor, PyTorch holds variances",
    ("residual", "train"): "its branch's layers are each held to their twins here",
    ("residual", "eval"): "its branch's layers are each held to their twins here",
}
TWINS = [(n, p) for n in LAYERS for p in MODES if (n, p) not in NO_TWIN]


def test_every_layer_has_a_twin_or_says_why_not() -> None:
    assert {name for name, _ in NO_TWIN} <= set(LAYERS)
    assert {mode for _, mode in NO_TWIN} <= set(MODES)
    assert len(TWINS) + len(NO_TWIN) == len(LAYERS) * len(MODES)


@pytest.mark.parametrize(("name", "mode"), TWINS)
def test_layers_answer_as_their_pytorch_twins(name: str, mode: str, oracle: Any) -> None:
    torch = oracle("torch")
    layer, x, d = _case(name, seed=2)
    call, arrays, grads = _twin(name, torch, layer, mode)
    response = layer.forward(x, mode)
    gradient = layer.backward(response, d)
    tensors = {k: torch.tensor(np.array(v), requires_grad=True) for k, v in arrays.items()}
    tx = torch.tensor(x, requires_grad=True)
    out = call(tx, **tensors)
    (out * torch.tensor(d)).sum().backward()
    tol = {"rtol": 1e-10, "atol": 1e-10}
    np.testing.assert_allclose(response.output, out.detach().numpy(), **tol)
    np.testing.assert_allclose(gradient.grad_input, tx.grad.numpy(), **tol)
    assert sorted(gradient.grads) == sorted(grads)
    for ours, (theirs, laid_out) in grads.items():
        np.testing.assert_allclose(
            gradient.grads[ours], laid_out(tensors[theirs].grad.numpy()), **tol, err_msg=ours
        )
