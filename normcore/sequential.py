"""Layers one after another, as one layer: `Sequential`; two layers a network needs among its
others (`Flatten`, which learns nothing, and `Residual`, a residual block: its input plus its
branch's output); and what a network reads off its `Sequential` (`leaves`: the innermost
layers' responses or gradients) and the one step of its named layers (`stepped`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ._checks import Remade, as_input, own_error_state, read_only
from .errors import ForeignResponseError, SettingError, ShapeError
from .mode import EVAL, check_mode
from .responses import (
    Gradient,
    Response,
    check_grad_output,
    check_gradient,
    check_response,
)


@dataclass(frozen=True, eq=False)
class Sequential(Remade):
    """Layers run in order: each layer's output is the next one's input.

    `forward` runs the layers first to last, `backward` last to first (each layer's input
    gradient is the upstream gradient at the layer below), and `step` steps every layer with its own
    gradient. The per-layer responses and gradients are kept in order in `parts`.
    """

    layers: tuple[Any, ...]

    def __post_init__(self) -> None:
        layers = tuple(self.layers) if isinstance(self.layers, (tuple, list)) else None
        if not layers or not all(
            callable(getattr(layer, call, None))
            for layer in layers
            for call in ("forward", "backward", "step")
        ):
            raise SettingError(
                f"layers: expected a non-empty tuple of layers (each with forward, backward and "
                f"step), got {self.layers!r}"
            )
        object.__setattr__(self, "layers", layers)

    @own_error_state
    def forward(self, x: Any, mode: str = EVAL) -> Response:
        """Every layer's forward pass in order.

        Args:
            x: the activations the first layer takes.
            mode: 'train' or 'eval' (the default), handed to every layer.

        Returns:
            A `Response` whose `output` is the last layer's and whose `parts` are every layer's
            responses, first to last.
        """
        mode = check_mode(mode)
        responses = []
        for layer in self.layers:
            response = layer.forward(x, mode)
            responses.append(response)
            x = response.output
        return Response(output=x, layer=self, mode=mode, parts=tuple(responses))

    @own_error_state
    def backward(self, response: Response, grad_output: Any) -> Gradient:
        """Every layer's backward pass, last to first.

        Args:
            response: what this Sequential's `forward` answered.
            grad_output: the upstream gradient at the last layer's output (its shape).

        Returns:
            A `Gradient` whose `grad_input` is the first layer's (shaped as the input) and whose
            `parts` are every layer's gradients, first to last.
        """
        response = check_response(self, response)
        if len(response.parts) != len(self.layers):
            raise ForeignResponseError(
                f"response.parts: expected {len(self.layers)} responses, got {len(response.parts)}"
            )
        gradients = []
        d = grad_output
        for layer, part in zip(reversed(self.layers), reversed(response.parts), strict=True):
            gradient = layer.backward(part, d)
            gradients.append(gradient)
            d = gradient.grad_input
        return Gradient(grad_input=d, layer=self, parts=tuple(reversed(gradients)))

    @own_error_state
    def step(self, gradient: Gradient, rate: float) -> Sequential:
        """A new Sequential with every layer stepped by its own gradient at `rate`.

        Args:
            gradient: what this Sequential's `backward` answered.
            rate: the learning rate, a finite number (or one per independent run, an array
                shaped as the parameters' leading axes).

        Returns:
            A new Sequential of the stepped layers; this one is unchanged.
        """
        if not isinstance(gradient, Gradient) or gradient.layer is not self:
            raise ForeignResponseError("gradient: expected the Gradient of this Sequential")
        if len(gradient.parts) != len(self.layers):
            raise ForeignResponseError(
                f"gradient.parts: expected {len(self.layers)} gradients, got {len(gradient.parts)}"
            )
        return Sequential(
            tuple(layer.step(g, rate) for layer, g in zip(self.layers, gradient.parts, strict=True))
        )


@dataclass(frozen=True, eq=False)
class Flatten(Remade):
    """Every axis from `start` on joined into one, as PyTorch's ``nn.Flatten(start_dim)``: images
    (runs, images, C, H, W) become rows (runs, images, C * H * W) for a dense layer. Nothing to
    learn; `backward` hands the upstream gradient back in the input's shape."""

    start: int = 1

    def __post_init__(self) -> None:
        if isinstance(self.start, bool) or not isinstance(self.start, int) or self.start < 0:
            raise SettingError(f"start: expected a whole number >= 0, got {self.start!r}")

    @own_error_state
    def forward(self, x: Any, mode: str = EVAL) -> Response:
        """The activations with the axes from `start` on joined.

        Args:
            x: activations with more than `start` axes.
            mode: 'train' or 'eval' (the default); both return the same outputs.

        Returns:
            A `Response` whose `output` has ``start + 1`` axes (the input's shape its cache).
        """
        mode = check_mode(mode)
        x = as_input(x, "x")
        if x.ndim <= self.start:
            raise ShapeError(f"x: expected more than {self.start} axes, got shape {x.shape}")
        output = x.reshape(*x.shape[: self.start], -1)
        return Response(output=output, layer=self, mode=mode, cache=x.shape)

    @own_error_state
    def backward(self, response: Response, grad_output: Any) -> Gradient:
        """The upstream gradient in the input's shape (a reshape: nothing is computed)."""
        response = check_response(self, response)
        d = check_grad_output(response, grad_output)
        return Gradient(grad_input=d.reshape(response.cache), layer=self)

    def step(self, gradient: Gradient, rate: float) -> Flatten:
        """Nothing to learn: the same layer back (after checking the gradient is its own)."""
        check_gradient(self, gradient, rate, {})
        return self


@dataclass(frozen=True, eq=False)
class Residual(Remade):
    """A residual block: the activations plus what `branch` makes of them, ``x + branch(x)``
    (He et al. 2016). `backward` hands down the upstream gradient along both paths: the skip's
    (the gradient itself) plus the branch's input gradient."""

    branch: Any

    def __post_init__(self) -> None:
        if not all(
            callable(getattr(self.branch, c, None)) for c in ("forward", "backward", "step")
        ):
            raise SettingError(
                f"branch: expected a layer (with forward, backward and step), got {self.branch!r}"
            )

    @own_error_state
    def forward(self, x: Any, mode: str = EVAL) -> Response:
        """``x + branch(x)``; the response keeps `x` as its input and the branch's response as its
        one part."""
        mode = check_mode(mode)
        x = as_input(x, "x")
        part = self.branch.forward(x, mode)
        return Response(
            output=x + part.output, layer=self, mode=mode, input=read_only(x), parts=(part,)
        )

    @own_error_state
    def backward(self, response: Response, grad_output: Any) -> Gradient:
        """The branch's input gradient plus the upstream gradient (the skip's)."""
        response = check_response(self, response)
        d = check_grad_output(response, grad_output)
        part = self.branch.backward(response.parts[0], d)
        return Gradient(grad_input=part.grad_input + d, layer=self, parts=(part,))

    @own_error_state
    def step(self, gradient: Gradient, rate: float) -> Residual:
        """A new residual block with the branch stepped by its own gradient at `rate`."""
        if not isinstance(gradient, Gradient) or gradient.layer is not self:
            raise ForeignResponseError("gradient: expected the Gradient of this Residual")
        return Residual(self.branch.step(gradient.parts[0], rate))


def leaves(value: Response | Gradient) -> list[Any]:
    """The responses (or gradients) of the innermost layers of `value`, first to last: the
    `parts` of a `Response` or `Gradient` (a `Sequential`'s, a `Residual`'s), opened in turn;
    anything else as it is."""
    if not (isinstance(value, (Response, Gradient)) and value.parts):
        return [value]
    return [leaf for part in value.parts for leaf in leaves(part)]


def stepped(layers: Iterable[Any], gradients: Iterable[Gradient], rate: Any) -> tuple[Any, ...]:
    """Each of `layers` stepped by its own gradient among `gradients` (the one whose `layer` it
    is) at `rate`, a number or one per independent run; None stays None.

    The step of a network whose layers are named fields (a layer's gradient found by the layer,
    so a gradient changed on its way, e.g. by weight decay, is the one taken)."""
    by_layer = {id(g.layer): g for g in gradients}
    return tuple(
        None if layer is None else layer.step(by_layer[id(layer)], rate) for layer in layers
    )
