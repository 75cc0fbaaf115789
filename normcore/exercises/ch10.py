"""Checks for the convnet chapter's exercises. Answers are computed with normcore, never printed;
each check recognises the mistake the exercise expects and names it."""

from __future__ import annotations

from typing import Any

import numpy as np

from normcore.batch import ImageBatchNorm
from normcore.conv import Conv2d
from normcore.exercises import PROMPT, Verdict, verdict
from normcore.fold import fold_into_conv
from normcore.image import GroupNorm

#: Exercise 1: a batch of IMAGES images, CHANNELS channels of SIDE x SIDE pixels, into a
#: per-channel batch layer and into group norm with GROUPS groups.
IMAGES, CHANNELS, SIDE, GROUPS = 32, 8, 8, 2

#: Exercise 2: one input channel, one output channel, a 2 x 2 kernel and its bias, then a batch
#: layer with these figures (epsilon 1e-5: small enough to leave out of the working).
KERNEL = np.array([[1.0, 2.0], [0.0, -1.0]])
BIAS = 0.5
BATCH = {"scale": 3.0, "shift": -1.0, "running_mean": 1.5, "running_variance": 4.0}

#: Exercise 3: per-device batch of two images; the second convolution's output is 4 x 4.
PAIR, SECOND_SIDE = 2, 4
NORMALISERS = ("batch", "layer", "instance", "group")


def _shape(value: Any) -> tuple[int, ...] | None:
    try:
        return tuple(int(v) for v in value)
    except (TypeError, ValueError):
        return None


def _mean_shapes() -> dict[str, tuple[int, ...]]:
    """The shapes of the statistics and of the scale, read from normcore's own layers."""
    x = np.zeros((IMAGES, CHANNELS, SIDE, SIDE))
    batch, group = ImageBatchNorm.create(CHANNELS), GroupNorm.create(CHANNELS, GROUPS)
    batch_mean = batch.forward(x, "training").statistics.mean.shape
    view, axes = group.statistics_layout(x)
    group_mean = tuple(n for i, n in enumerate(view.shape) if i not in axes)
    return {"batch mean": batch_mean, "group mean": group_mean, "scale": group.scale.shape}


def check_shapes(batch_mean: Any, group_mean: Any, scale: Any) -> Verdict:
    """Exercise 1: the shapes (as tuples) of the batch layer's training mean, of group norm's
    means, and of group norm's scale."""
    if batch_mean is None or group_mean is None or scale is None:
        return Verdict(PROMPT)
    given = {
        "batch mean": _shape(batch_mean),
        "group mean": _shape(group_mean),
        "scale": _shape(scale),
    }
    if any(v is None for v in given.values()):
        return Verdict("not yet: give each shape as a tuple of whole numbers, e.g. (3, 4)")
    right = _mean_shapes()
    wrong = [k for k in right if given[k] != right[k]]
    if not wrong:
        return Verdict("right")
    hints = []
    if given["batch mean"] in ((IMAGES, CHANNELS), (IMAGES,)):
        hints.append(
            "the batch mean is per image there: that is instance or layer norm; a batch "
            "layer pools every image and pixel of a channel"
        )
    if given["group mean"] in ((CHANNELS,), (GROUPS,)):
        hints.append("group norm's statistics are per image too: it never reads the other images")
    if given["scale"] in ((GROUPS,), (IMAGES, GROUPS)):
        hints.append("group norm learns its scale per channel, not per group")
    detail = "; ".join(hints) if hints else f"check the {' and the '.join(wrong)}"
    return Verdict(f"not yet: {detail}")


def _folded() -> Conv2d:
    conv = Conv2d(weights=KERNEL[None, None], bias=np.array([BIAS]))
    batch = ImageBatchNorm(**{k: np.array([v]) for k, v in BATCH.items()})
    return fold_into_conv(conv, batch)


def check_folded(kernel: Any, bias: Any) -> Verdict:
    """Exercise 2: the folded kernel (2 x 2) and bias (a number)."""
    if kernel is None or bias is None:
        return Verdict(PROMPT)
    f = _folded()
    k_right, b_right = f.weights[0, 0], float(f.bias[0])
    try:
        k = np.asarray(kernel, dtype=float)
        b = float(bias)
    except (TypeError, ValueError):
        return Verdict("not yet: the kernel should be a 2 x 2 array and the bias a number")
    if k.shape != (2, 2):
        return Verdict(f"not yet: the kernel keeps its 2 x 2 shape, got {k.shape}")
    per = BATCH["scale"] / np.sqrt(BATCH["running_variance"])
    wrong_variance = BATCH["scale"] / BATCH["running_variance"]
    if np.allclose(k, KERNEL * wrong_variance, atol=5e-4):
        return Verdict(
            "not yet: the kernel was divided by the variance; it is divided by the "
            "deviation, the square root of the variance (plus epsilon)"
        )
    kernel_ok = verdict(k, k_right).right
    if not kernel_ok:
        return Verdict("not yet: the kernel is off; each weight is multiplied by the same factor")
    if abs(b - (BIAS * per + BATCH["shift"])) < 5e-4:
        return Verdict("not yet: the bias forgot the running mean: subtract it before scaling")
    if abs(b - (BIAS - BATCH["running_mean"]) * per) < 5e-4:
        return Verdict("not yet: the bias forgot the shift, which is added after scaling")
    if abs(b - (BIAS * per - BATCH["running_mean"] + BATCH["shift"])) < 5e-4:
        return Verdict(
            "not yet: the running mean is subtracted before the scaling, so it is scaled too"
        )
    return verdict(b, b_right)


def check_small_batch(suffers: Any, pooled: Any) -> Verdict:
    """Exercise 3: which normaliser's training statistics depend on the other image of a pair
    (a name among NORMALISERS), and how many values each of its statistics pools after the
    second convolution."""
    if suffers is None or pooled is None:
        return Verdict(PROMPT)
    name = str(suffers).strip().lower()
    if name not in NORMALISERS:
        return Verdict(f"not yet: name one of {', '.join(NORMALISERS)}")
    if name != "batch":
        return Verdict(
            f"not yet: {name} norm reads one image at a time, so the other image of "
            "the pair never enters its statistics"
        )
    try:
        count = int(pooled)
    except (TypeError, ValueError):
        return Verdict("not yet: the count should be a whole number")
    if count == PAIR:
        return Verdict(
            "not yet: that is a dense layer's count (one value per row); here every "
            "pixel of a channel is a value too"
        )
    if count == PAIR * SIDE * SIDE:
        return Verdict(
            "not yet: that counts the first convolution's 8 x 8 pixels; the second's "
            "output is 4 x 4"
        )
    if count == PAIR * CHANNELS * SECOND_SIDE**2:
        return Verdict(
            "not yet: that pools every channel; a batch layer keeps one statistic per channel"
        )
    return verdict(count, PAIR * SECOND_SIDE**2, tolerance=0)
