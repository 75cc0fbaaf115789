"""Layers one after another, as one layer: `Sequential`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._checks import Remade, own_error_state
from .errors import ForeignResponseError, SettingError
from .purpose import PREDICTING, check_purpose
from .responses import Gradient, Response, check_response


@dataclass(frozen=True, eq=False)
class Sequential(Remade):
    """A stack of layers answered in order: each layer's output is the next one's input.

    `forward` runs the layers first to last, `backward` last to first (each layer's slope passed
    down is the slope arriving at the layer below), and `step` steps every layer with its own
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
    def forward(self, x: Any, purpose: str = PREDICTING) -> Response:
        """Every layer's forward pass in order.

        Args:
            x: the block the first layer takes.
            purpose: 'training' or 'predicting' (the default), handed to every layer.

        Returns:
            A `Response` whose `output` is the last layer's and whose `parts` are every layer's
            responses, first to last.
        """
        purpose = check_purpose(purpose)
        responses = []
        for layer in self.layers:
            response = layer.forward(x, purpose)
            responses.append(response)
            x = response.output
        return Response(output=x, layer=self, purpose=purpose, parts=tuple(responses))

    @own_error_state
    def backward(self, response: Response, d_out: Any) -> Gradient:
        """Every layer's backward pass, last to first.

        Args:
            response: what this Sequential's `forward` answered.
            d_out: the slope arriving at the last layer's output (its shape).

        Returns:
            A `Gradient` whose `passed_down` is the first layer's (shaped as the input) and whose
            `parts` are every layer's gradients, first to last.
        """
        response = check_response(self, response)
        if len(response.parts) != len(self.layers):
            raise ForeignResponseError(
                f"response.parts: expected {len(self.layers)} responses, got {len(response.parts)}"
            )
        gradients = []
        d = d_out
        for layer, part in zip(reversed(self.layers), reversed(response.parts), strict=True):
            gradient = layer.backward(part, d)
            gradients.append(gradient)
            d = gradient.passed_down
        return Gradient(passed_down=d, layer=self, parts=tuple(reversed(gradients)))

    @own_error_state
    def step(self, gradient: Gradient, rate: float) -> Sequential:
        """A new Sequential with every layer stepped by its own gradient at `rate`.

        Args:
            gradient: what this Sequential's `backward` answered.
            rate: the learning rate, a finite number (or one per stacked model, an array
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
