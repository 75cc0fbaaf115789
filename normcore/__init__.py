"""normcore: small, exact numpy normalisation layers and the textbook built on them.

Every layer is an immutable value with three calls::

    response = layer.forward(x, mode)        # mode: 'train' or 'eval' (default)
    gradient = layer.backward(response, grad_output)  # gradient.grad_input, gradient.grads
    layer    = layer.step(gradient, rate)       # a NEW layer; running statistics move only here

Every array a layer keeps or hands back is read-only: each value type (every layer, `Response`,
`Gradient`, `Statistics`, `Standardised`, `Loss`) seals its arrays in its own constructor, and a
new layer shares the read-only arrays a step did not change. Read-only protects against
accidents (a stray ``+=``, an input written while a response still holds it), not against intent:
an array's ``.base`` can still be made writable on purpose. Bad input gets a typed error
(`NormcoreError` and its subclasses) before any arithmetic, including an input too large to
process (more than an eighth of this machine's memory); every call computes under numpy's raise
state of its own, whatever the caller's, so an overflow in the arithmetic is refused as a
`MagnitudeError` naming the call.
"""

from ._checks import as_input
from .activations import ReLU, Sigmoid, Tanh, sigmoid
from .batch import BatchNorm, GhostBatchNorm, ImageBatchNorm
from .conv import Conv2d, StandardisedConv2d
from .dense import Dense, WeightNormDense
from .errors import (
    DtypeError,
    EmptyBatchError,
    EpsilonError,
    FoldError,
    ForeignResponseError,
    LabelError,
    MagnitudeError,
    ModeError,
    MomentumError,
    NonFiniteError,
    NormcoreError,
    RateError,
    SettingError,
    ShapeError,
    ZeroDirectionError,
)
from .fold import fold_batch_norm, fold_into_conv
from .image import GroupNorm, InstanceNorm, adain, local_response_normalisation
from .layer import LayerNorm, RMSNorm
from .loss import Loss, binary_cross_entropy
from .mode import EVAL, TRAIN, Mode
from .oracle import OracleCheck, check_grad, finite_difference
from .responses import Gradient, Response, Standardised, Statistics
from .sequential import Sequential
from .standardise import naive_backward, standardise, standardise_backward
from .worked import FOUR_ROWS, four_rows

__all__ = [
    "FOUR_ROWS",
    "EVAL",
    "TRAIN",
    "BatchNorm",
    "Conv2d",
    "GhostBatchNorm",
    "Dense",
    "DtypeError",
    "EmptyBatchError",
    "EpsilonError",
    "FoldError",
    "ForeignResponseError",
    "Gradient",
    "GroupNorm",
    "ImageBatchNorm",
    "InstanceNorm",
    "LabelError",
    "LayerNorm",
    "Loss",
    "MagnitudeError",
    "MomentumError",
    "NonFiniteError",
    "NormcoreError",
    "OracleCheck",
    "Mode",
    "ModeError",
    "RMSNorm",
    "StandardisedConv2d",
    "RateError",
    "ReLU",
    "Response",
    "Sequential",
    "SettingError",
    "ShapeError",
    "Sigmoid",
    "Standardised",
    "Statistics",
    "Tanh",
    "WeightNormDense",
    "ZeroDirectionError",
    "adain",
    "as_input",
    "binary_cross_entropy",
    "check_grad",
    "finite_difference",
    "fold_batch_norm",
    "fold_into_conv",
    "four_rows",
    "local_response_normalisation",
    "naive_backward",
    "sigmoid",
    "standardise",
    "standardise_backward",
]
