"""Small batches: what the batch layer's statistics cost, and freezing it for fine-tuning.

- `accuracy_by_batch`: trained networks answer the held-out rows in batches of size B, each batch
  standardised by its own statistics (training purpose), for B from 2 to 64: the batch layer's
  answer then depends on which B rows came together; a layer-norm network (group normalisation
  with one group) never looks across rows and answers the same for every B.
- `fine_tune`: a trained batch network takes more steps on batches of two rows, either in the
  training purpose (statistics of two rows, running figures moving) or in the predicting purpose
  (the batch layer frozen: a fixed scale and shift per feature, running figures still).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import SettingError
from . import deepnet

SIZES = (2, 4, 8, 16, 32, 64)
#: held-out rows answered (divisible by every size)
ROWS = 320
TUNE_STEPS = 30
TUNE_BATCH = 2
TUNE_RATE = 0.003


def accuracy_by_batch(net: deepnet.DeepNet, x: np.ndarray, y: np.ndarray,
                      sizes=SIZES) -> np.ndarray:
    """Accuracy (len(sizes),) of the single network `net` on the first ROWS rows of `x`, `y`,
    answered B rows at a time in the training purpose, in file order. The ROWS / B batches go
    through as one stack of copies of `net`."""
    if net.size != 1:
        raise SettingError(f"net: expected a stack of one network, got {net.size}")
    out = []
    for b in sizes:
        if isinstance(b, bool) or not isinstance(b, int) or b < 1 or ROWS % b:
            raise SettingError(f"sizes: expected whole numbers that divide {ROWS}, got {b!r}")
        blocks = x[:ROWS].reshape(ROWS // b, b, x.shape[-1])
        _, logits = deepnet.forward(deepnet.tile(net, ROWS // b), blocks, "training")
        out.append(float(np.mean(np.argmax(logits, axis=-1).ravel() == y[:ROWS])))
    return np.array(out)


@dataclass(frozen=True, eq=False)
class FineTune:
    """Held-out accuracy (predicting) before and after TUNE_STEPS steps on batches of two, for
    each way of treating the batch layer; shapes (S,).

    `after_frozen` is steady: the same under every arithmetic setting the book is tested with
    (tools/arith_matrix.py). `after_training` is not: the running figures end as the statistics
    of the last few pairs, and on one seed of the chapter's three the final accuracy moved by
    about a tenth between those settings, so the chapter states a bound for it, never its
    digits."""

    before: np.ndarray
    after_training: np.ndarray
    after_frozen: np.ndarray


def fine_tune(net: deepnet.DeepNet, data: tuple[np.ndarray, ...], seed: int = 0) -> FineTune:
    """Fine-tune `net` (a stack of S networks) on TUNE_STEPS random pairs of training rows, both
    ways."""
    x, y, x_held, y_held = data
    rng = np.random.default_rng(seed)
    pairs = [rng.choice(len(y), TUNE_BATCH, replace=False) for _ in range(TUNE_STEPS)]
    rates = np.full(net.size, TUNE_RATE)
    after = {}
    for purpose in ("training", "predicting"):
        tuned = net
        for rows in pairs:
            _, grads = deepnet.gradients(tuned, x[rows], y[rows], purpose)
            tuned = deepnet.step(tuned, grads, rates)
        after[purpose] = deepnet.accuracy(tuned, x_held, y_held)
    return FineTune(before=deepnet.accuracy(net, x_held, y_held),
                    after_training=after["training"], after_frozen=after["predicting"])
