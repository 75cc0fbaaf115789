"""The typed errors normcore raises, all under one `NormcoreError(ValueError)`.

Every error is raised before any arithmetic, and its message says what was expected and what came.
"""

from __future__ import annotations


class NormcoreError(ValueError):
    """Base of every error normcore raises for bad input."""


class ShapeError(NormcoreError):
    """Wrong rank, wrong feature count, or a block whose shape does not match its partner."""


class EmptyBatchError(NormcoreError):
    """A block with no rows (or no features) where statistics need at least one value."""


class DtypeError(NormcoreError):
    """A block of a kind normcore does not compute with (bool, complex, object, strings)."""


class NonFiniteError(NormcoreError):
    """NaN or infinity in a block, a parameter or a setting."""


class MagnitudeError(NormcoreError):
    """Values so large that squaring them would overflow the block's float type."""


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
