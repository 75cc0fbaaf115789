"""The convolution layer: held to finite differences, to PyTorch's conv2d, and to its contract
(typed refusals before arithmetic, read-only values, stacks, weight standardisation, folding)."""

from __future__ import annotations

import numpy as np
import pytest

import normcore as nc
from normcore import Conv2d, StandardisedConv2d, fold_into_conv
from normcore.conv import output_size, patches

pytestmark = pytest.mark.numeric  # figures from float arithmetic: make test-arith reruns it


#: (in, out, kernel, stride, padding, height, width): odd and even kernels, strides that leave
#: pixels unread at the edge, padding wider than the kernel's half
GEOMETRIES = [
    (1, 2, 3, 1, 0, 5, 5),
    (2, 3, 3, 1, 1, 4, 6),
    (3, 2, 3, 2, 1, 7, 6),
    (2, 2, 2, 2, 0, 5, 4),
    (1, 3, 1, 1, 0, 3, 3),
    (2, 1, 3, 3, 2, 5, 7),
]


def layer(geometry, seed: int = 0) -> tuple[Conv2d, np.ndarray]:
    c_in, c_out, k, s, p, h, w = geometry
    rng = np.random.default_rng(seed)
    conv = Conv2d(
        weights=rng.normal(size=(c_out, c_in, k, k)),
        bias=rng.normal(size=c_out),
        stride=s,
        padding=p,
    )
    return conv, rng.normal(size=(2, c_in, h, w))


def direct(conv: Conv2d, x: np.ndarray) -> np.ndarray:
    """The convolution as its definition's explicit sum, one output value at a time."""
    w, b, s, p = conv.effective_weights, conv.bias, conv.stride, conv.padding
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
    oh, ow = output_size(h, kh, s, p), output_size(wd, kw, s, p)
    out = np.zeros((n, o, oh, ow))
    for i in range(oh):
        for j in range(ow):
            window = xp[:, :, i * s : i * s + kh, j * s : j * s + kw]
            out[:, :, i, j] = np.einsum("ncij,ocij->no", window, w) + b
    return out


@pytest.mark.parametrize("geometry", GEOMETRIES)
def test_forward_is_the_explicit_sum(geometry) -> None:
    conv, x = layer(geometry)
    np.testing.assert_allclose(conv.forward(x).output, direct(conv, x), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("geometry", GEOMETRIES)
def test_backward_is_held_to_finite_differences(geometry) -> None:
    conv, x = layer(geometry, seed=1)
    r = conv.forward(x, "train")
    d = np.random.default_rng(2).normal(size=r.output.shape)
    g = conv.backward(r, d)

    def loss_of(**change):
        def f(value):
            fields = {"weights": conv.weights, "bias": conv.bias, **{change["name"]: value}}
            layer_ = Conv2d(**fields, stride=conv.stride, padding=conv.padding)
            return float(np.sum(layer_.forward(change.get("x", x)).output * d))

        return f

    def of_x(value):
        return float(np.sum(conv.forward(value).output * d))

    assert nc.check_grad(of_x, x, g.grad_input).largest_gap < 1e-7
    for name in ("weights", "bias"):
        check = nc.check_grad(loss_of(name=name), getattr(conv, name), g.grads[name])
        assert check.largest_gap < 1e-7, name


@pytest.mark.parametrize("geometry", GEOMETRIES)
def test_agrees_with_pytorch_conv2d(geometry, oracle) -> None:
    torch = oracle("torch")
    conv, x = layer(geometry, seed=3)
    r = conv.forward(x, "train")
    d = np.random.default_rng(4).normal(size=r.output.shape)
    g = conv.backward(r, d)
    tensors = {
        k: torch.tensor(np.array(v), requires_grad=True)
        for k, v in (("x", x), ("w", conv.weights), ("b", conv.bias))
    }
    out = torch.nn.functional.conv2d(
        tensors["x"], tensors["w"], tensors["b"], stride=conv.stride, padding=conv.padding
    )
    (out * torch.tensor(d)).sum().backward()
    tol = {"rtol": 1e-10, "atol": 1e-10}
    np.testing.assert_allclose(r.output, out.detach().numpy(), **tol)
    np.testing.assert_allclose(g.grad_input, tensors["x"].grad.numpy(), **tol)
    np.testing.assert_allclose(g.grads["weights"], tensors["w"].grad.numpy(), **tol)
    np.testing.assert_allclose(g.grads["bias"], tensors["b"].grad.numpy(), **tol)


def test_stacked_models_answer_as_each_alone() -> None:
    rng = np.random.default_rng(5)
    stacked = Conv2d.create(2, 3, 3, rng, stride=2, padding=1, stack=(4,))
    x = rng.normal(size=(4, 3, 2, 6, 6))
    r = stacked.forward(x, "train")
    d = rng.normal(size=r.output.shape)
    g = stacked.backward(r, d)
    for k in range(4):
        alone = Conv2d(weights=stacked.weights[k], stride=2, padding=1)
        ra = alone.forward(x[k], "train")
        ga = alone.backward(ra, d[k])
        np.testing.assert_allclose(r.output[k], ra.output, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(g.grad_input[k], ga.grad_input, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(g.grads["weights"][k], ga.grads["weights"], atol=1e-12)


def test_patches_are_the_windows_under_the_kernel() -> None:
    x = np.arange(2 * 2 * 4 * 5, dtype=float).reshape(2, 2, 4, 5)
    cols = patches(x, (3, 3), 2, 1)
    oh, ow = output_size(4, 3, 2, 1), output_size(5, 3, 2, 1)
    assert cols.shape == (2 * 9, oh * ow * 2)
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    # column (r, s, n): image n's window at (2r, 2s) of the padded picture, flattened (c, i, j)
    r, s, n = 1, 2, 1
    column = cols[:, (r * ow + s) * 2 + n]
    np.testing.assert_array_equal(
        column, padded[n, :, 2 * r : 2 * r + 3, 2 * s : 2 * s + 3].ravel()
    )


def test_values_are_read_only_and_steps_make_new_layers() -> None:
    conv, x = layer(GEOMETRIES[2])
    r = conv.forward(x, "train")
    g = conv.backward(r, np.ones(r.output.shape))
    arrays = [conv.weights, conv.bias, r.output, r.cache.columns, g.grad_input, *g.grads.values()]
    for a in arrays:
        assert not a.flags.writeable
        with pytest.raises(ValueError):
            a.setflags(write=True)
    before = np.array(conv.weights)
    moved = conv.step(g, 0.1)
    np.testing.assert_array_equal(conv.weights, before)
    np.testing.assert_allclose(moved.weights, before - 0.1 * g.grads["weights"])
    assert (moved.stride, moved.padding) == (conv.stride, conv.padding)
    given = np.array(x)
    conv.forward(given)
    given[...] = 0  # the caller's array changing afterwards changes nothing kept
    assert np.any(r.cache.columns != 0)


@pytest.mark.parametrize(
    ("make", "error"),
    [
        (lambda: Conv2d(weights=np.ones((2, 3, 3))), nc.ShapeError),
        (lambda: Conv2d(weights=np.ones((2, 1, 3, 3)), bias=np.ones(3)), nc.ShapeError),
        (lambda: Conv2d(weights=np.ones((2, 1, 3, 3)), stride=0), nc.SettingError),
        (lambda: Conv2d(weights=np.ones((2, 1, 3, 3)), stride=1.5), nc.SettingError),
        (lambda: Conv2d(weights=np.ones((2, 1, 3, 3)), padding=-1), nc.SettingError),
        (lambda: Conv2d(weights=np.ones((2, 1, 3, 3)), padding=True), nc.SettingError),
        (lambda: Conv2d(weights=np.full((2, 1, 3, 3), np.nan)), nc.NonFiniteError),
        (lambda: Conv2d(weights=np.ones((2, 1, 3, 3), dtype=complex)), nc.DtypeError),
        (lambda: Conv2d.create(1, 2, 3, rng=0), nc.SettingError),
        (lambda: StandardisedConv2d(weights=np.ones((2, 1, 3, 3)), eps=0), nc.EpsilonError),
    ],
)
def test_bad_layers_are_refused(make, error) -> None:
    with pytest.raises(error):
        make()


@pytest.mark.parametrize(
    ("x", "error"),
    [
        (np.ones((2, 1, 5)), nc.ShapeError),  # no width axis
        (np.ones((2, 3, 5, 5)), nc.ShapeError),  # 3 channels for a 1-channel kernel
        (np.ones((2, 1, 2, 2)), nc.ShapeError),  # smaller than the kernel
        (np.ones((0, 1, 5, 5)), nc.EmptyBatchError),
        (np.full((1, 1, 5, 5), np.inf), nc.NonFiniteError),
        (np.full((1, 1, 5, 5), 1e160), nc.MagnitudeError),
        (np.ones((1, 1, 5, 5), dtype=bool), nc.DtypeError),
    ],
)
def test_bad_inputs_are_refused_before_arithmetic(x, error) -> None:
    with pytest.raises(error):
        Conv2d(weights=np.ones((2, 1, 3, 3))).forward(x)


def test_foreign_responses_and_gradients_are_refused() -> None:
    a, x = layer(GEOMETRIES[1])
    b, _ = layer(GEOMETRIES[1], seed=9)
    r = a.forward(x)
    with pytest.raises(nc.ForeignResponseError):
        b.backward(r, np.ones(r.output.shape))
    with pytest.raises(nc.ShapeError):
        a.backward(r, np.ones((1, 2, 3)))
    g = a.backward(r, np.ones(r.output.shape))
    with pytest.raises(nc.ForeignResponseError):
        b.step(g, 0.1)
    with pytest.raises(nc.RateError):
        a.step(g, float("nan"))


def test_weight_standardisation() -> None:
    rng = np.random.default_rng(6)
    ws = StandardisedConv2d(weights=rng.normal(size=(3, 2, 3, 3)) * 4 + 2, padding=1)
    w = ws.effective_weights
    np.testing.assert_allclose(w.mean(axis=(1, 2, 3)), 0, atol=1e-12)
    np.testing.assert_allclose(w.var(axis=(1, 2, 3)), 1, atol=1e-5)  # epsilon under the root
    x = rng.normal(size=(2, 2, 5, 5))
    r = ws.forward(x, "train")
    d = rng.normal(size=r.output.shape)
    g = ws.backward(r, d)

    def f(weights):
        return float(np.sum(StandardisedConv2d(weights=weights, padding=1).forward(x).output * d))

    assert nc.check_grad(f, ws.weights, g.grads["weights"]).relative_gap < 1e-7
    # scaling and shifting a channel's weights change nothing: its gradient has no part along them
    s = g.grads["weights"]
    np.testing.assert_allclose(s.sum(axis=(1, 2, 3)), 0, atol=1e-10)
    along = np.sum(s * ws.weights, axis=(1, 2, 3))
    lengths = np.linalg.norm(s.reshape(3, -1), axis=1) * np.linalg.norm(
        ws.weights.reshape(3, -1), axis=1
    )
    assert np.all(np.abs(along) < 1e-5 * lengths)  # epsilon's share: 1e-5 over a variance near 16
    stepped = ws.step(g, 0.1)
    assert isinstance(stepped, StandardisedConv2d)
    np.testing.assert_allclose(stepped.effective_weights.mean(axis=(1, 2, 3)), 0, atol=1e-12)


def _trained_batch(stack: tuple[int, ...] = ()) -> tuple[Conv2d, nc.BatchNorm]:
    rng = np.random.default_rng(7)
    conv = Conv2d(
        weights=rng.normal(size=(*stack, 3, 2, 3, 3)),
        bias=rng.normal(size=(*stack, 3)),
        padding=1,
        stride=2,
    )
    shape = (*stack, 3)
    make = nc.BatchNorm if stack else nc.ImageBatchNorm
    batch = make(
        scale=rng.normal(size=shape) + 1,
        shift=rng.normal(size=shape),
        running_mean=rng.normal(size=shape),
        running_var=rng.uniform(0.5, 2, size=shape),
    )
    return conv, batch


def test_folding_a_batch_layer_answers_as_the_pair_while_predicting() -> None:
    conv, batch = _trained_batch()
    x = np.random.default_rng(8).normal(size=(4, 2, 6, 6))
    pair = batch.forward(conv.forward(x).output).output
    folded = fold_into_conv(conv, batch)
    np.testing.assert_allclose(folded.forward(x).output, pair, rtol=1e-12, atol=1e-12)
    assert (folded.stride, folded.padding) == (conv.stride, conv.padding)


def test_folding_a_stacked_pair() -> None:
    conv, batch = _trained_batch(stack=(2,))
    x = np.random.default_rng(9).normal(size=(2, 4, 2, 6, 6))
    z = conv.forward(x).output  # (2, 4, 3, 3, 3): channels as the batch layer's features
    rows = np.moveaxis(z, 2, 4).reshape(2, -1, 3)
    pair = np.moveaxis(batch.forward(rows).output.reshape(2, 4, 3, 3, 3), 4, 2)
    np.testing.assert_allclose(fold_into_conv(conv, batch).forward(x).output, pair, atol=1e-12)


@pytest.mark.parametrize(
    "other",
    [nc.GroupNorm.create(3, 1), nc.InstanceNorm.create(3), nc.LayerNorm.create(3)],
)
def test_per_image_normalisers_cannot_fold(other) -> None:
    conv, _ = _trained_batch()
    with pytest.raises(nc.FoldError):
        fold_into_conv(conv, other)
    with pytest.raises(nc.FoldError):
        fold_into_conv(nc.Dense(weights=np.ones((3, 3))), nc.ImageBatchNorm.create(3))
    with pytest.raises(nc.ShapeError):
        fold_into_conv(conv, nc.ImageBatchNorm.create(4))
