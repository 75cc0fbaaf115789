"""The two-dimensional convolution and its weight-standardised form (folding a batch layer into
one is `normcore.fold.fold_into_conv`).

A convolution slides a small kernel over every position of an image and, at each position, takes
the dense layer's product of the pixels under the kernel with the kernel's weights. Written that
way it *is* a dense layer: cut every position's patch out as a column (the "im2col" layout), and
the convolution is ``kernel-as-a-matrix @ columns + bias``. That is how `Conv2d` computes it, so its
backward pass is the dense layer's (`normcore.dense`) read through the same layout, plus one
step that adds each patch's gradient back onto the pixels it came from.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._checks import (
    Remade,
    as_input,
    as_parameter,
    check_epsilon,
    check_not_empty,
    check_rank,
    check_size,
    check_values,
    fits,
    own_error_state,
    seal,
    successor,
    whole_number,
    whole_numbers,
)
from .dense import he_uniform
from .errors import ForeignResponseError, SettingError, ShapeError
from .mode import EVAL, check_mode
from .responses import (
    Gradient,
    Response,
    answered,
    check_grad_output,
    check_response,
    moved_parameters,
)
from .standardise import standardise, standardise_backward

__all__ = ["Conv2d", "StandardisedConv2d", "output_size", "patches"]


def output_size(size: int, kernel: int, stride: int, padding: int) -> int:
    """How many kernel positions fit along an axis: (size + 2 * padding - kernel) // stride + 1."""
    return (size + 2 * padding - kernel) // stride + 1


def patches(x: np.ndarray, kernel: tuple[int, int], stride: int, padding: int) -> np.ndarray:
    """Every kernel position's patch of `x` as one column (im2col).

    Args:
        x: a checked input (*stack, images, channels, height, width).
        kernel: (kernel height, kernel width).
        stride, padding: as `Conv2d`'s.

    Returns:
        (*stack, channels * kh * kw, oh * ow * images). Row (c, i, j), ordered as a kernel
        (channels, kh, kw) flattens, holds pixel (i, j) of every patch of channel c; column
        (r, s, n) is the patch of image n whose top-left corner sits at
        (r * stride - padding, s * stride - padding), zeros off the image. (The images run
        fastest: each copy below then moves whole rows of images at once.)
    """
    kh, kw = kernel
    *lead, n, c, h, w = x.shape
    oh, ow = output_size(h, kh, stride, padding), output_size(w, kw, stride, padding)
    # laid out (channels, height, width, images), with the padding around each picture
    padded = np.zeros((*lead, c, h + 2 * padding, w + 2 * padding, n), dtype=x.dtype)
    padded[..., padding : padding + h, padding : padding + w, :] = np.moveaxis(x, -4, -1)
    columns = np.empty((*lead, c * kh * kw, oh * ow * n), dtype=x.dtype)
    grid = columns.reshape(*lead, c, kh, kw, oh, ow, n)  # the same memory, one axis per index
    for i in range(kh):  # kernel pixel (i, j) of position (r, s) is padded pixel
        for j in range(kw):  # (r * stride + i, s * stride + j)
            grid[..., i, j, :, :, :] = padded[..., _along(i, stride, oh), _along(j, stride, ow), :]
    return columns  # owns its memory: the forward pass seals it in place, without a copy


def _along(offset: int, stride: int, count: int) -> slice:
    """The `count` padded rows (or columns) that kernel offset `offset` reads, `stride` apart."""
    return slice(offset, offset + stride * (count - 1) + 1, stride)


def _unpatch(
    d_columns: np.ndarray,
    shape: tuple[int, ...],
    kernel: tuple[int, int],
    stride: int,
    padding: int,
) -> np.ndarray:
    """The transpose of `patches`: each column's gradient added back onto the pixels it was cut
    from.

    `d_columns` is (*stack, channels * kh * kw, oh * ow * images); `shape` the input's shape
    (*stack, images, channels, height, width). A pixel under several kernel positions receives
    the sum of their gradients; gradients that fall on the padding are dropped.
    """
    kh, kw = kernel
    *lead, n, c, h, w = shape
    oh, ow = output_size(h, kh, stride, padding), output_size(w, kw, stride, padding)
    d = d_columns.reshape(*lead, c, kh, kw, oh, ow, n)
    padded = np.zeros((*lead, c, h + 2 * padding, w + 2 * padding, n), dtype=d_columns.dtype)
    for i in range(kh):
        for j in range(kw):
            padded[..., _along(i, stride, oh), _along(j, stride, ow), :] += d[..., i, j, :, :, :]
    inside = padded[..., padding : padding + h, padding : padding + w, :]
    return np.ascontiguousarray(np.moveaxis(inside, -1, -4))


@dataclass(frozen=True, eq=False)
class _Patches(Remade):
    """What a convolution's backward pass needs from its forward pass: the input's patches
    (read-only, as `patches` cut them) and the input's shape."""

    columns: np.ndarray
    shape: tuple[int, ...]


@dataclass(frozen=True, eq=False)
class Conv2d(Remade):
    """A two-dimensional convolution (strictly, a cross-correlation, as in every framework):
    output[n, o, r, s] = bias[o] + sum over c, i, j of
    weights[o, c, i, j] * padded x[n, c, r * stride + i, s * stride + j].

    - Layout NCHW: x (*stack, images, in_channels, height, width); weights (*stack, out_channels,
      in_channels, kh, kw), PyTorch's ``Conv2d`` layout; bias (*stack, out_channels), default 0.
      Leading axes hold independent models, as the dense layer's do.
    - `padding` zeros on each side of height and width (default 0); `stride` the step between
      kernel positions (default 1). Output (*stack, images, out_channels, oh, ow) with
      oh = (height + 2 * padding - kh) // stride + 1, and ow likewise.
    - Computed as a dense layer on patches (`patches`, im2col): kernel matrix @ columns + bias,
      the kernel matrix (out_channels, in_channels * kh * kw).
    - Modes are accepted for a uniform interface and return the same.
    - Backward: the weights' gradient is the sum over positions of d ⊗ patch (d @ columnsᵀ), the
      bias' the sum of d over images and positions, both summed (not averaged); grad_input
      adds each position's kernelᵀ @ d back onto the pixels of its patch (a pixel under several
      positions receives their sum; padding receives nothing).

    Agrees with ``torch.nn.functional.conv2d(x, weights, bias, stride, padding)`` (PyTorch has no
    leading axes of independent models; dilation and groups are not offered here).
    """

    weights: Any
    bias: Any = None
    stride: int = 1
    padding: int = 0

    @own_error_state
    def __post_init__(self) -> None:
        w = as_parameter(self.weights, "weights")
        if w.ndim < 4 or w.size == 0:
            raise ShapeError(
                "weights: expected shape (..., out_channels, in_channels, kh, kw) with every "
                f"size >= 1, got {w.shape}"
            )
        wanted = w.shape[:-4] + w.shape[-4:-3]
        b = as_parameter(np.zeros(wanted) if self.bias is None else self.bias, "bias")
        if b.shape != wanted:
            raise ShapeError(f"bias: expected shape {wanted}, got {b.shape}")
        object.__setattr__(self, "stride", whole_number(self.stride, "stride", SettingError))
        object.__setattr__(self, "padding", whole_number(self.padding, "padding", SettingError, 0))
        object.__setattr__(self, "weights", w)
        object.__setattr__(self, "bias", b)

    @classmethod
    def create(
        cls,
        in_channels: int,
        out_channels: int,
        kernel: int,
        rng: np.random.Generator,
        *,
        stride: int = 1,
        padding: int = 0,
        stack: tuple[int, ...] = (),
    ) -> Conv2d:
        """He-uniform weights from `rng`, uniform in ±sqrt(6 / fan_in) with fan_in =
        in_channels * kernel * kernel, shape (*stack, out_channels, in_channels, kernel,
        kernel); bias 0."""
        shape = (
            *whole_numbers(stack, "stack"),
            whole_number(out_channels, "out_channels"),
            whole_number(in_channels, "in_channels"),
            whole_number(kernel, "kernel"),
            whole_number(kernel, "kernel"),
        )
        check_size(shape, "weights")
        weights = he_uniform(rng, shape, shape[-3] * shape[-2] * shape[-1])
        return cls(weights=weights, stride=stride, padding=padding)

    @property
    def effective_weights(self) -> np.ndarray:
        """The kernel the convolution runs (the weights themselves here)."""
        return self.weights

    @property
    def stack(self) -> tuple[int, ...]:
        return self.weights.shape[:-4]

    @property
    def kernel(self) -> tuple[int, int]:
        return self.weights.shape[-2], self.weights.shape[-1]

    def output_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """The output's shape for an input of `shape` (*stack, images, in_channels, h, w)."""
        (kh, kw), s, p = self.kernel, self.stride, self.padding
        *lead, n, _, h, w = shape
        return (
            *lead,
            n,
            self.weights.shape[-4],
            output_size(h, kh, s, p),
            output_size(w, kw, s, p),
        )

    def _check_input(self, x: np.ndarray) -> None:
        stack, (kh, kw) = self.stack, self.kernel
        c = self.weights.shape[-3]
        meaning = "(" + "model, " * len(stack) + "images, channels, height, width)"
        check_rank(x, len(stack) + 4, "x", meaning)
        if x.shape[: len(stack)] != stack or x.shape[-3] != c:
            raise ShapeError(
                f"x: expected shape {(*stack, 'images', c, 'height', 'width')}, got {x.shape}"
            )
        h, w = x.shape[-2:]
        if h + 2 * self.padding < kh or w + 2 * self.padding < kw:
            raise ShapeError(
                f"x: expected images of at least {kh - 2 * self.padding} x "
                f"{kw - 2 * self.padding} pixels for a {kh} x {kw} kernel with padding "
                f"{self.padding}, got {h} x {w}"
            )

    def _matrix(self, dtype: np.dtype) -> np.ndarray:
        """The kernel as a matrix (*stack, out_channels, in_channels * kh * kw), in `dtype`."""
        w = fits(self.effective_weights, dtype, "weights")
        return w.reshape(*w.shape[:-3], -1)

    @own_error_state
    def forward(self, x: Any, mode: str = EVAL) -> Response:
        """The convolution of `x`.

        Args:
            x: images (*stack, images, in_channels, height, width); float32 stays float32,
                other numbers become float64.
            mode: 'train' or 'eval' (the default); both return the same.

        Returns:
            A `Response` whose `output` is (*stack, images, out_channels, oh, ow); its cache
            holds the patches of `x` (read-only), which the weights' gradient needs.
        """
        mode = check_mode(mode)
        x = as_input(x, "x", finite=False)
        self._check_input(x)
        check_not_empty(x, "x")
        kh, kw = self.kernel
        check_values(x, x.shape[-3] * kh * kw, "x")
        columns = patches(x, self.kernel, self.stride, self.padding)
        b = fits(self.bias[..., :, None], x.dtype, "bias")
        out = self._matrix(x.dtype) @ columns + b  # (*stack, out_channels, images * oh * ow)
        *lead, n, o, oh, ow = self.output_shape(x.shape)
        out = np.moveaxis(out.reshape(*lead, o, oh, ow, n), -1, -4)  # to (.., n, o, oh, ow)
        return Response(
            output=np.ascontiguousarray(out),
            layer=self,
            mode=mode,
            cache=_Patches(columns=seal(columns), shape=x.shape),
        )

    @own_error_state
    def backward(self, response: Response, grad_output: Any) -> Gradient:
        """The input gradient and the gradients of weights and bias.

        Args:
            response: what this layer's `forward` returned.
            grad_output: the gradient of the loss with respect to the output, shaped as the output.

        Returns:
            A `Gradient`: `grad_input` shaped as the input; `grads['weights']` shaped as the
            weights and `grads['bias']` as the bias, summed over images and positions.
        """
        response = check_response(self, response)
        cache = response.cache
        if not isinstance(cache, _Patches) or self.output_shape(cache.shape) != (
            response.output.shape
        ):
            raise ForeignResponseError(
                "response.cache: expected the patches this convolution's forward pass cut"
            )
        d = check_grad_output(response, grad_output)
        columns = fits(cache.columns, d.dtype, "patches")
        lead = d.shape[:-4]
        grad_output_rows = np.moveaxis(d, -4, -1).reshape(
            *lead, d.shape[-3], -1
        )  # (.., out, oh·ow·n)
        matrix = self._matrix(d.dtype)  # (*stack, out_channels, in_channels * kh * kw)
        d_columns = np.swapaxes(matrix, -1, -2) @ grad_output_rows
        passed = _unpatch(d_columns, cache.shape, self.kernel, self.stride, self.padding)
        kernel_grad = (grad_output_rows @ np.swapaxes(columns, -1, -2)).reshape(self.weights.shape)
        grads = {**self._grads(kernel_grad), "bias": grad_output_rows.sum(axis=-1)}
        return answered(
            Gradient(
                grad_input=seal(passed),
                layer=self,
                grads={k: seal(np.ascontiguousarray(v)) for k, v in grads.items()},
            )
        )

    def _grads(self, kernel_grad: np.ndarray) -> dict[str, np.ndarray]:
        """The parameter gradients (bias aside) from the gradient of the kernel the layer ran."""
        return {"weights": kernel_grad}

    def _learned(self) -> dict[str, np.ndarray]:
        return {"weights": self.weights, "bias": self.bias}

    @own_error_state
    def step(self, gradient: Gradient, rate: float) -> Conv2d:
        """A new layer with weights and bias moved by ``-rate * grad``.

        Args:
            gradient: what this layer's `backward` returned.
            rate: the learning rate, a finite number (or one per independent model, an array
                shaped as the parameters' leading axes).

        Returns:
            A new layer of the same shapes, stride and padding; this one is unchanged.
        """
        return successor(self, moved_parameters(self, gradient, rate))


@dataclass(frozen=True, eq=False)
class StandardisedConv2d(Conv2d):
    """A convolution whose kernel is standardised per output channel before use: weight
    standardisation (Qiao et al. 2019).

    The kernel the layer runs is ŵ[o] = (w[o] − mean(w[o])) / sqrt(var(w[o]) + epsilon), the
    statistics over (in_channels, kh, kw) of each output channel, biased variance, epsilon
    (default 1e-5) under the root: the routine of `normcore.standardise`, run on the weights
    instead of the activations. Everything else is `Conv2d`'s. The weights' gradient is the gradient
    of ŵ passed back through the standardisation's three routes, so, per output channel, it sums
    to zero (shifting a channel's weights changes nothing) and has no part along the weights
    (scaling them changes nothing), the latter up to epsilon's share epsilon / (var + epsilon).
    It uses no batch statistics, so it is usually paired
    with group norm after it.
    """

    eps: float = 1e-5
    # worked out by the constructor from the weights (never handed in)
    _standardised: Any = field(init=False, repr=False)
    _effective: np.ndarray = field(init=False, repr=False)

    @own_error_state
    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "eps", check_epsilon(self.eps))
        st = standardise(self.weights, (-3, -2, -1), self.eps)
        object.__setattr__(self, "_standardised", st)
        object.__setattr__(self, "_effective", seal(np.array(st.z)))

    @property
    def effective_weights(self) -> np.ndarray:
        """ŵ, the standardised kernel the layer runs, shaped as the weights."""
        return self._effective

    def _grads(self, kernel_grad: np.ndarray) -> dict[str, np.ndarray]:
        return {"weights": standardise_backward(self._standardised, kernel_grad)}

    @own_error_state
    def step(self, gradient: Gradient, rate: float) -> Conv2d:
        """A new layer with weights and bias moved by ``-rate * gradient``, made by the
        constructor: the standardised kernel is worked out again from the weights."""
        return dataclasses.replace(self, **moved_parameters(self, gradient, rate))
