"""The typed errors normcore raises, all under one `NormcoreError(ValueError)`.

Every error but one is raised by the input checks, before any arithmetic; a `MagnitudeError` may
also come from inside it (an overflow, under the raise state every public call runs in). Every
message says what was expected and what came.
"""

from __future__ import annotations


class NormcoreError(ValueError):
    """Base of every error normcore raises for bad input."""


class ShapeError(NormcoreError):
    """Wrong rank, wrong feature count, or an input whose shape does not match its partner."""


class EmptyBatchError(NormcoreError):
    """An input with no rows (or no features) where statistics need at least one value."""


class DtypeError(NormcoreError):
    """An array of a kind normcore does not compute with (bool, complex, object, strings)."""


class NonFiniteError(NormcoreError):
    """NaN or infinity in an input, a parameter or a setting."""


class MagnitudeError(NormcoreError):
    """Values so large that the arithmetic would overflow the input's float type: refused by the
    input checks (squares summed for the statistics), or raised by the arithmetic itself (a
    result beyond the float range, named by the call that made it)."""


class EpsilonError(NormcoreError):
    """An epsilon that is not a finite number greater than zero."""


class MomentumError(NormcoreError):
    """A momentum outside [0, 1)."""


class RateError(NormcoreError):
    """A learning rate that is not a finite number."""


class ModeError(NormcoreError):
    """A mode other than 'train' or 'eval'."""


class ZeroDirectionError(NormcoreError):
    """A weight-normalised neuron whose stored direction has length zero."""


class ForeignResponseError(NormcoreError):
    """A response or gradient handed to a layer that did not produce it."""


class SettingError(NormcoreError):
    """A layer setting that makes no sense (a group count that does not divide the channels...)."""


class FoldError(NormcoreError):
    """A pair of layers that cannot be folded into one dense layer (see `normcore.fold`)."""


class LabelError(NormcoreError):
    """Labels outside [0, 1] for a binary cross-entropy."""
