"""Why batch statistics fail for sequences: a sentence's outputs depend on its batch-mates and on
the padding, while layer normalisation normalises each token alone.

Three "sentences" of tokens, each token a row of WIDTH numbers drawn from ``default_rng(SEED)``:
a short one (SHORT tokens) and two long ones (LONG tokens). The two long ones are built to differ:
the first is standard normal plus 1.0 (another level), the second standard normal times 2.0
(another spread), so the partner effect in `facts` is that of a partner unlike the other in both
level and spread. The short one is padded with rows of zeros to the batch's length, as a batch of
sequences must be. Batch normalisation (training
mode) standardises every feature over all rows of the batch, padding included; layer
normalisation over each row's own features.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..batch import BatchNorm
from ..layer import LayerNorm

WIDTH = 8
SHORT = 3
LONG = 7
SEED = 0


@dataclass(frozen=True)
class SequenceFacts:
    """Largest change in the short sentence's normalised tokens when

    - `partner_batch`/`partner_layer`: its batch-mate is the other long sentence;
    - `padding_batch`/`padding_layer`: it is padded to twice the length instead;
    - `masked_batch`: the padding is left out of the statistics (a masked batch layer) and the
      batch-mate changes;

    and `lone_token`: the largest entry of one token standardised alone by the batch layer in
    training mode (every entry is exactly the shift, 0), against `lone_token_layer`, the same
    token under layer normalisation."""

    partner_batch: float
    partner_layer: float
    padding_batch: float
    padding_layer: float
    masked_batch: float
    lone_token: float
    lone_token_layer: float


def sentences(seed: int = SEED) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The short sentence (SHORT, WIDTH) and the two long ones (LONG, WIDTH)."""
    rng = np.random.default_rng(seed)
    return (
        rng.normal(size=(SHORT, WIDTH)),
        rng.normal(size=(LONG, WIDTH)) + 1.0,
        rng.normal(size=(LONG, WIDTH)) * 2.0,
    )


def _padded(short: np.ndarray, length: int) -> np.ndarray:
    return np.vstack([short, np.zeros((length - len(short), WIDTH))])


def _short_answer(layer, short: np.ndarray, partner: np.ndarray, length: int) -> np.ndarray:
    """The short sentence's real tokens after `layer` normalises the padded batch of two."""
    block = np.vstack([_padded(short, length), _padded(partner, length)])
    return layer.forward(block, "train").output[: len(short)]


def facts(seed: int = SEED) -> SequenceFacts:
    short, first, second = sentences(seed)
    batch, layer = BatchNorm.create(WIDTH), LayerNorm.create(WIDTH)

    def gap(norm, partner_a, partner_b, length_a=LONG, length_b=LONG) -> float:
        a = _short_answer(norm, short, partner_a, length_a)
        b = _short_answer(norm, short, partner_b, length_b)
        return float(np.max(np.abs(a - b)))

    masked_a = batch.forward(np.vstack([short, first]), "train").output[:SHORT]
    masked_b = batch.forward(np.vstack([short, second]), "train").output[:SHORT]
    lone = short[:1]
    return SequenceFacts(
        partner_batch=gap(batch, first, second),
        partner_layer=gap(layer, first, second),
        padding_batch=gap(batch, first, first, LONG, 2 * LONG),
        padding_layer=gap(layer, first, first, LONG, 2 * LONG),
        masked_batch=float(np.max(np.abs(masked_a - masked_b))),
        lone_token=float(np.max(np.abs(batch.forward(lone, "train").output))),
        lone_token_layer=float(np.max(np.abs(layer.forward(lone, "train").output))),
    )


@dataclass(frozen=True)
class CausalLeak:
    """In training mode, with statistics over every token of a batch of sentences: the largest
    change in the *first* token's normalised output when only the *last* token of the batch is
    changed (`batch`, a future position the first token must not see) and under layer
    normalisation (`layer`, exactly 0); and `alike_partner`, the largest change in the short
    sentence's normalised tokens when its partner is swapped for another drawn from the same
    distribution (standard normal, not built to differ)."""

    batch: float
    layer: float
    alike_partner: float


def causal_leak(seed: int = SEED) -> CausalLeak:
    """The first token's output when only the last token changes, both normalisers; and the
    partner effect with two partners drawn alike."""
    short, first, _ = sentences(seed)
    block = np.vstack([short, first])
    changed = block.copy()
    changed[-1] = np.random.default_rng(seed + 1).normal(size=WIDTH)
    batch, layer = BatchNorm.create(WIDTH), LayerNorm.create(WIDTH)

    def first_gap(norm) -> float:
        a = norm.forward(block, "train").output[0]
        b = norm.forward(changed, "train").output[0]
        return float(np.max(np.abs(a - b)))

    rng = np.random.default_rng(seed + 2)
    alike_a, alike_b = rng.normal(size=(LONG, WIDTH)), rng.normal(size=(LONG, WIDTH))
    a = _short_answer(batch, short, alike_a, LONG)
    b = _short_answer(batch, short, alike_b, LONG)
    return CausalLeak(
        batch=first_gap(batch), layer=first_gap(layer), alike_partner=float(np.max(np.abs(a - b)))
    )
