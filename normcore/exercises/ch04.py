"""Checks for chapter 4's exercises. Answers are computed with normcore and never printed."""

from __future__ import annotations

from typing import Any

import numpy as np

from normcore import GroupNorm, ImageBatchNorm, InstanceNorm, LayerNorm, RMSNorm
from normcore.exercises import Verdict, verdict

#: Exercise 1: one row for layer norm and RMS norm.
ROW = np.array([[2.0, 4.0, 9.0]])


def _row_answer(answer: Any) -> np.ndarray | None:
    """A reader's three numbers as a (1, 3) array, flat or not; None if they are not three."""
    try:
        given = np.asarray(answer, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    return given.reshape(1, 3) if given.size == 3 else None


def _judge_row(answer: Any, expected: np.ndarray, mistakes: dict[str, np.ndarray]) -> Verdict:
    """The verdict on a reader's row against `expected` (eight decimals): right, one of the
    named `mistakes` (reply: its key), right to about four decimals only, or wrong."""
    if answer is None:
        return verdict(None, expected)
    given = _row_answer(answer)
    if given is None:
        return Verdict("not yet: the answer should be three numbers, one per entry of the row")
    if np.allclose(given, expected, rtol=0, atol=2e-8):
        return Verdict("right")
    for said, wrong in mistakes.items():
        if np.allclose(given, wrong, rtol=0, atol=2e-8):
            return Verdict("not yet: " + said)
    if np.allclose(given, expected, rtol=0, atol=5e-5):
        return Verdict(
            "close: right to about four decimals; this one needs eight, where epsilon shows"
        )
    return verdict(given, expected, tolerance=2e-8)


def check_layer_row(answer: Any) -> Verdict:
    """Exercise 1: ROW through a fresh layer norm (epsilon 1e-5), to eight decimals; three
    numbers, flat or 1 x 3. Names the usual mistakes: epsilon left out, the unbiased variance,
    epsilon outside the root, RMS instead of layer norm."""
    centred = ROW - ROW.mean()
    mistakes = {
        "that is the row without epsilon; it sits under the root, sqrt(26/3 + 1e-5)": centred
        / np.sqrt(ROW.var()),
        "you used the unbiased variance (divide by 2); layer norm divides by the count, 3": centred
        / np.sqrt(ROW.var(ddof=1) + 1e-5),
        "epsilon sits outside the root (std + epsilon); it belongs under it": centred
        / (ROW.std() + 1e-5),
        "that is RMS norm (no centring); layer norm subtracts the row's mean first": RMSNorm.create(
            3
        )
        .forward(ROW)
        .output,
    }
    return _judge_row(answer, LayerNorm.create(3).forward(ROW).output, mistakes)


def check_rms_row(answer: Any) -> Verdict:
    """Exercise 2: ROW through a fresh RMS norm (epsilon 1e-5), to eight decimals; three numbers,
    flat or 1 x 3. Names the usual mistakes: epsilon left out or outside the root, the sum of
    squares instead of their mean, layer norm's output."""
    square = np.mean(ROW**2)
    mistakes = {
        "that is the row without epsilon; it sits under the root": ROW / np.sqrt(square),
        "epsilon sits outside the root; it belongs under it, sqrt(mean square + 1e-5)": ROW
        / (np.sqrt(square) + 1e-5),
        "you divided by the root of the sum of squares; RMS takes their mean": ROW
        / np.sqrt(np.sum(ROW**2) + 1e-5),
        "that is layer norm's output; RMS norm does not subtract the mean": LayerNorm.create(3)
        .forward(ROW)
        .output,
    }
    return _judge_row(answer, RMSNorm.create(3).forward(ROW).output, mistakes)


def check_statistics_shape(answer: Any) -> Verdict:
    """Exercise 3: the shape of the statistics when an input (2, 3, 4, 5) is layer-normed with
    normalized_shape (3, 4, 5), as a tuple. The keepdims form (2, 1, 1, 1) is accepted too. The
    replies name the usual mistakes rather than describing the answer's shape."""
    mean = LayerNorm.create((3, 4, 5)).forward(np.zeros((2, 3, 4, 5))).cache.mean
    kept = tuple(mean.shape[:1])
    if answer is None:
        return verdict(None, 0)
    if isinstance(answer, (int, np.integer)) and not isinstance(answer, bool):
        if int(answer) == kept[0]:
            return Verdict(
                "close: that is the right count, but a shape is a tuple; write it as one"
            )
        return Verdict("not yet: a shape is a tuple of sizes, and this is not the right count")
    try:
        given = tuple(int(v) for v in answer)
    except (TypeError, ValueError):
        return Verdict("not yet: the answer should be a tuple of whole numbers, a shape")
    if given == kept:
        return Verdict("right")
    if given == tuple(mean.shape):
        return Verdict("right")  # the keepdims form, which broadcasts against the input
    if given == (3, 4, 5):
        return Verdict(
            "not yet: that is normalized_shape itself, the axes the statistics run "
            "over; the statistics keep the other axes"
        )
    if given == (2, 3, 4, 5):
        return Verdict(
            "not yet: that is the input's shape, the output's too; a statistic "
            "summarises many values, so there are fewer of them"
        )
    if given == (2, 3):
        return Verdict(
            "not yet: that would be the statistics for normalized_shape (4, 5); here "
            "the axis of size 3 is normalised over as well"
        )
    if given == (1,) or given == ():
        return Verdict(
            "not yet: that is one statistic for the whole input; layer norm keeps one "
            "per position of the axes it does not normalise over"
        )
    return Verdict(
        "not yet: the statistics keep exactly the axes that normalized_shape leaves "
        "out; read them off the input's shape"
    )


def check_group_count(answer: Any) -> Verdict:
    """Exercise 4: how many values one statistic of group norm reads for images (8, 12, 5, 5)
    split into 4 groups."""
    layer = GroupNorm.create(12, 4)
    return verdict(answer, layer.statistic_count(np.zeros((8, 12, 5, 5))), 0.0)


def check_transformer_axes(answer: Any) -> Verdict:
    """Exercise 5: for activations (B, T, D) = (32, 128, 512), [[statistics, values each]] for
    layer norm over D and for the per-feature batch layer, counted by running the layers on an
    input of that layout (zeros, float32, so that the count is cheap)."""
    b, t, d = 32, 128, 512
    if answer is None:
        return verdict(None, 0)
    layer_count = LayerNorm.create(d).statistic_count(np.zeros((1, 1, d)))
    batch_count = ImageBatchNorm.create(d).statistic_count(np.zeros((b, d, t, 1)))
    expected = np.array([[b * t, layer_count], [d, batch_count]], dtype=np.float64)
    try:
        given = np.asarray(answer, dtype=np.float64)
    except (TypeError, ValueError):
        return Verdict(
            "not yet: the answer should be [[statistics, values each], [statistics, values each]]"
        )
    if given.shape != (2, 2):
        return Verdict(
            "not yet: the answer should be two pairs, [[statistics, values each] for "
            "layer norm, [statistics, values each] for the batch layer]"
        )
    if np.array_equal(given, expected):
        return Verdict("right")
    if np.array_equal(given, expected[::-1]):
        return Verdict("not yet: the two pairs are swapped; layer norm is the first")
    if np.array_equal(given, expected[:, ::-1]):
        return Verdict(
            "not yet: in each pair the two numbers are swapped: the number of "
            "statistics first, then how many values each reads"
        )
    if given[0, 0] == b or given[1, 1] == b:
        return Verdict("not yet: the tokens of every sequence count too; B alone leaves out T")
    return Verdict(f"not yet: {int(np.sum(given != expected))} of 4 numbers are off")


def check_one_image(answer: Any) -> Verdict:
    """Exercise 6: the largest difference between the image batch layer (training) and instance
    norm on one image (1, 3, 8, 8): zero, to rounding."""
    if answer is None:
        return verdict(None, 0)
    try:
        given = float(answer)
    except (TypeError, ValueError):
        return Verdict("not yet: the answer should be one number, a largest difference")
    x = np.random.default_rng(0).normal(size=(1, 3, 8, 8))
    gap = float(
        np.max(
            np.abs(
                ImageBatchNorm.create(3).forward(x, "train").output
                - InstanceNorm.create(3).forward(x).output
            )
        )
    )
    if abs(given) <= max(1e-12, 10 * gap):
        return Verdict("right")
    return Verdict(
        "not yet: count the values behind one channel's statistic in each layer, for "
        "a batch holding a single image"
    )


def check_layer_counts(answer: Any) -> Verdict:
    """Exercise 3: an input (2, 3, 4, 5) layer-normed with normalized_shape=(4, 5): [how many
    means it computes, how many values each reads, how many entries its scale has]."""
    from normcore.experiments import axes

    if answer is None:
        return verdict(None, [0, 0, 0])
    case = axes.trailing_shape((2, 3, 4, 5), (4, 5))
    means = int(np.prod(case.statistics_shape))
    reads = 4 * 5
    expected = [means, reads, 4 * 5]
    from normcore.exercises._mistakes import judged

    mistakes = [
        ([2, 60, 60], "that is normalized_shape=(3, 4, 5); here only the last two axes are normed"),
        ([6, 20, 1], "the scale has the shape of normalized_shape, one entry per normed position"),
        ([20, 6, 20], "the statistics run over the normed axes: one per leading position (2 x 3)"),
        ([6, 20, 6], "the scale is one per normed position (4 x 5), not one per statistic"),
        ([5, 24, 5], "normalized_shape names trailing axes: (4, 5), not the first of them"),
    ]
    return judged(answer, expected, mistakes, tolerance=0.0, mistake_tolerance=0.0)


def check_group_counts(answer: Any) -> Verdict:
    """Exercise 4: images (8, 12, 5, 5) through group norm with 4 groups: [how many numbers one
    statistic reads, how many means the layer computes]."""
    from normcore.exercises._mistakes import judged

    if answer is None:
        return verdict(None, [0, 0])
    layer = GroupNorm.create(12, groups=4)
    images = np.random.default_rng(0).normal(size=(8, 12, 5, 5))
    cache = layer.forward(images, "train").cache
    expected = [int(cache.count), int(np.prod(cache.mean.shape))]
    mistakes = [
        ([75, 4], "the statistics are per image too: every image has its own 4 groups"),
        ([600, 4], "a group's statistics do not reach across the batch: one image's group only"),
        ([25, 96], "that is instance norm (a statistic per channel); a group holds 3 channels"),
        ([300, 8], "one statistic reads one group of 3 channels, not all 12"),
    ]
    return judged(answer, expected, mistakes, tolerance=0.0, mistake_tolerance=0.0)


def rescaled_pair() -> np.ndarray:
    """Exercise 6: two images (2, 3, 8, 8), the second the first times 10 plus 5."""
    first = np.random.default_rng(6).normal(size=(1, 3, 8, 8))
    return np.concatenate([first, 10.0 * first + 5.0])


def _pair_gap(layer: Any) -> float:
    out = layer.forward(rescaled_pair(), "train").output
    return float(np.max(np.abs(out[0] - out[1])))


def check_rescaled_gap(answer: Any) -> Verdict:
    """Exercise 6: the largest difference between the two images' instance-norm outputs, to
    two significant figures (relative)."""
    from normcore.exercises._mistakes import judged

    return judged(
        answer,
        lambda: _pair_gap(InstanceNorm.create(3)),
        lambda: [
            (
                0.0,
                "exactly zero would need eps = 0: the first image's divisor is "
                "sqrt(v + eps), the second's sqrt(100 v + eps), and eps weighs differently",
            ),
            (
                _pair_gap(ImageBatchNorm.create(3)),
                "that is the image batch layer, whose statistics mix the two images",
            ),
        ],
        tolerance=0.05,
        mistake_tolerance=0.05,
        relative=True,
    )
