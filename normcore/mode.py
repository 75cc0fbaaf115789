"""The two modes a forward pass serves, as names a caller can import and a type checker knows.

``TRAIN`` standardises a mini-batch by its own statistics; ``EVAL`` (every layer's default) by
the running statistics, so that no row of a request can change another row's output.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from .errors import ModeError

Mode = Literal["train", "eval"]

TRAIN: Final = "train"
EVAL: Final = "eval"
MODES: Final = (TRAIN, EVAL)


def check_mode(mode: Any) -> Mode:
    """`mode` itself when it is 'train' or 'eval'; else PurposeError."""
    if mode is TRAIN or mode is EVAL:  # the constants themselves
        return mode
    if not isinstance(mode, str) or mode not in MODES:
        raise ModeError(f"mode: expected 'train' or 'eval', got {mode!r}")
    return TRAIN if mode == TRAIN else EVAL
