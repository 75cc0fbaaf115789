"""The two purposes a forward pass serves, as names a caller can import and a type checker knows.

``TRAINING`` standardises a block by its own statistics; ``PREDICTING`` (every layer's default) by
the running figures, so that no row of a request can change another row's answer.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from .errors import PurposeError

Purpose = Literal["training", "predicting"]

TRAINING: Final = "training"
PREDICTING: Final = "predicting"
PURPOSES: Final = (TRAINING, PREDICTING)


def check_purpose(purpose: Any) -> Purpose:
    """`purpose` itself when it is 'training' or 'predicting'; else PurposeError."""
    if purpose is TRAINING or purpose is PREDICTING:  # the constants themselves
        return purpose
    if not isinstance(purpose, str) or purpose not in PURPOSES:
        raise PurposeError(f"purpose: expected 'training' or 'predicting', got {purpose!r}")
    return TRAINING if purpose == TRAINING else PREDICTING
