"""What a layer hands back: a `Response` from `forward`, a `Gradient` from `backward`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._checks import as_block, check_rate
from .errors import ForeignResponseError, MagnitudeError, ShapeError


@dataclass(frozen=True, eq=False)
class Statistics:
    """A batch's own statistics, per feature (or channel): mean, biased variance, deviation.

    Shapes match the layer's running figures. Carried on a training response and on its gradient,
    so that `step` can fold them into the running figures.
    """

    mean: np.ndarray
    variance: np.ndarray
    deviation: np.ndarray


@dataclass(frozen=True, eq=False)
class Response:
    """The answer of one forward pass.

    `output` is the block the layer answered; `layer` is the layer that answered (backward refuses a
    response from any other); `purpose` is 'training' or 'predicting'; `statistics` holds the
    batch's statistics when a batch-statistics layer trained, else None; `cache` is what the
    backward pass needs and is not part of the public contract.
    """

    output: np.ndarray
    layer: Any
    purpose: str
    input: np.ndarray
    cache: Any = None
    statistics: Statistics | None = None


@dataclass(frozen=True, eq=False)
class Gradient:
    """The answer of one backward pass.

    `passed_down` is the slope handed to the layer below (shape of the layer's input); `slopes`
    maps each parameter's name to its slope (same shape as the parameter); `statistics` repeats the
    batch's statistics from the response, for `step`.
    """

    passed_down: np.ndarray
    layer: Any
    slopes: dict[str, np.ndarray] = field(default_factory=dict)
    statistics: Statistics | None = None


def check_response(layer: Any, response: Any) -> Response:
    if not isinstance(response, Response):
        raise ForeignResponseError(
            f"response: expected the Response of this layer's forward pass, got "
            f"{type(response).__name__}"
        )
    if response.layer is not layer:
        raise ForeignResponseError(
            f"response: expected a response from this {type(layer).__name__}, got one from "
            f"another {type(response.layer).__name__} (backward must go to the layer that "
            "answered)"
        )
    return response


def check_slope(response: Response, d_out: Any, finite: bool = True) -> np.ndarray:
    """`d_out` as a block of the output's shape and dtype (finiteness left to the caller when
    ``finite=False``)."""
    d = as_block(d_out, "d_out", finite)
    if d.shape != response.output.shape:
        raise ShapeError(
            f"d_out: expected the output's shape {response.output.shape}, got {d.shape}"
        )
    if d.dtype != response.output.dtype:  # float64 slopes beyond float32's range: refuse
        d = as_block(d, "d_out")  # a NaN given is refused as such, not as an overflow
        with np.errstate(over="ignore"):
            d = d.astype(response.output.dtype)
        if not np.isfinite(d).all():
            raise MagnitudeError(
                f"d_out: expected values within the {d.dtype} range of the output, got larger"
            )
    return d


def check_gradient(layer: Any, gradient: Any, rate: Any) -> float:
    if not isinstance(gradient, Gradient):
        raise ForeignResponseError(
            f"gradient: expected the Gradient of this layer's backward pass, got "
            f"{type(gradient).__name__}"
        )
    if gradient.layer is not layer:
        raise ForeignResponseError(
            f"gradient: expected a gradient from this {type(layer).__name__}, got one from "
            f"another {type(gradient.layer).__name__}"
        )
    return check_rate(rate)
