"""The reference's rows for the convolution layers: `Conv2d`, `StandardisedConv2d` and
`fold_into_conv`, each statement found by running normcore, beside PyTorch's convention.

`conv_statements()` returns one row per statement: the layer, the statement, normcore's finding
(measured on a small input here: shapes read from an output, a one-hot kernel's reading, gaps to
the finite-difference oracle, a fold's gap to the pair it replaces) and PyTorch's convention,
with whether the two agree. No torch is imported here; `tests/test_reference_conv.py` runs
PyTorch (``torch.nn.functional.conv2d``, ``torch.nn.utils.fusion.fuse_conv_bn_eval``, the
default initialisation of ``torch.nn.Conv2d``) and holds every "agrees" row to its numbers and
every PyTorch sentence to what the installed torch does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .batch import ImageBatchNorm
from .conv import Conv2d, StandardisedConv2d
from .errors import FoldError, NormcoreError
from .fold import fold_into_conv
from .image import GroupNorm
from .oracle import finite_difference

__all__ = ["CONV_LAYERS", "conv_statements", "example"]

CONV_LAYERS = ("Conv2d", "StandardisedConv2d", "fold_into_conv")


def example(seed: int = 0) -> tuple[Conv2d, np.ndarray]:
    """The input the rows are measured on: 2 images of 3 channels, 5 x 5 pixels, and a
    convolution of 4 output channels, 3 x 3 kernels, stride 2, padding 1 (weights and bias
    drawn from ``np.random.default_rng(seed)``)."""
    rng = np.random.default_rng(seed)
    conv = Conv2d(
        weights=rng.normal(size=(4, 3, 3, 3)), bias=rng.normal(size=4), stride=2, padding=1
    )
    return conv, rng.normal(size=(2, 3, 5, 5))


def _shape(t: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, t)) + ")"


def _reads(conv: Conv2d) -> str:
    """Which pixel a kernel whose only 1 sits at its top-left corner reads at position (0, 0)
    of an image numbered 0, 1, 2, ... in reading order (no padding): a cross-correlation reads
    pixel 0, a flipped (mathematical) convolution the pixel under the kernel's far corner."""
    kh, kw = conv.kernel
    one_hot = np.zeros((1, 1, kh, kw))
    one_hot[0, 0, 0, 0] = 1.0
    image = np.arange(25.0).reshape(1, 1, 5, 5)
    value = Conv2d(weights=one_hot).forward(image).output[0, 0, 0, 0]
    return "not flipped (a cross-correlation)" if value == 0 else f"flipped (read {value:g})"


def _oracle_gap(conv: Conv2d, x: np.ndarray) -> float:
    """The largest gap between the weights' gradient `backward` returns and central differences
    of sum(output * d), relative to the largest gradient."""
    r = conv.forward(x, "train")
    d = np.random.default_rng(1).normal(size=r.output.shape)
    grad = conv.backward(r, d).grads["weights"]

    def loss(w: np.ndarray) -> float:
        rebuilt = type(conv)(weights=w, bias=conv.bias, stride=conv.stride, padding=conv.padding)
        return float(np.sum(rebuilt.forward(x).output * d))

    oracle = finite_difference(loss, np.array(conv.weights))
    return float(np.max(np.abs(grad - oracle)) / np.max(np.abs(oracle)))


def _below(gap: float, bound: float) -> str:
    """'below <bound>' when `gap` is (the page then reads the same on every machine), else the
    gap itself, so a change shows."""
    return f"below {bound:.0e}" if gap < bound else f"{gap:.1e} (not below {bound:.0e})"


def _start() -> str:
    """Conv2d.create's weights, measured: the largest of many draws against √(6 / fan_in)."""
    fresh = Conv2d.create(8, 64, 3, np.random.default_rng(0))
    fan_in = 8 * 3 * 3
    ratio = np.abs(fresh.weights).max() / np.sqrt(6.0 / fan_in)
    bias = "bias 0" if not np.any(fresh.bias) else "bias not 0"
    return (
        f"Conv2d.create: uniform in ±√(6 / fan_in), fan_in = in·kh·kw (the largest of "
        f"{fresh.weights.size:,} weights is {ratio:.3f} of it); {bias}"
    )


def _refusal(make: Any) -> str:
    try:
        make()
    except NormcoreError as error:
        return f"{type(error).__name__}: {error}"
    return "answered"


def _standardised(conv: Conv2d, x: np.ndarray) -> dict[str, str]:
    ws = StandardisedConv2d(
        weights=conv.weights, bias=conv.bias, stride=conv.stride, padding=conv.padding
    )
    w = ws.effective_weights
    mean = np.abs(w.mean(axis=(1, 2, 3))).max()
    variance = w.var(axis=(1, 2, 3))
    raw = conv.weights.var(axis=(1, 2, 3))
    # biased variance, epsilon under the root: the run kernel's variance is var / (var + eps)
    under_root = np.abs(variance - raw / (raw + ws.eps)).max()
    r = ws.forward(x, "train")
    d = np.random.default_rng(2).normal(size=r.output.shape)
    grad = ws.backward(r, d).grads["weights"]
    sums = np.abs(grad.sum(axis=(1, 2, 3))).max() / np.abs(grad).max()
    return {
        "kernel": (
            "per output channel over (in, kh, kw): mean 0 and variance var / (var + "
            f"{ws.eps:g}), both {_below(max(mean, under_root), 1e-12)} (biased, epsilon "
            "under the root)"
        ),
        "grad": (
            "the weights' gradient sums to zero per output channel (each sum "
            f"{_below(sums, 1e-12)} of its largest entry); its gap to the oracle "
            f"{_below(_oracle_gap(ws, x), 1e-7)}"
        ),
    }


def _fold(conv: Conv2d, x: np.ndarray) -> dict[str, str]:
    rng = np.random.default_rng(3)
    channels = conv.weights.shape[0]
    batch = ImageBatchNorm(
        scale=rng.uniform(0.5, 2, channels),
        shift=rng.normal(size=channels),
        running_mean=rng.normal(size=channels),
        running_var=rng.uniform(0.5, 2, channels),
    )
    pair = batch.forward(conv.forward(x).output).output
    folded = fold_into_conv(conv, batch)
    gap = np.abs(folded.forward(x).output - pair).max() / np.abs(pair).max()
    refused = _refusal(lambda: fold_into_conv(conv, GroupNorm.create(channels, 2)))
    return {
        "gap": (
            "the folded convolution outputs what the pair does in evaluation mode (gap "
            f"{_below(gap, 1e-12)} of the largest output); weights k·w, bias k·(b − running "
            "mean) + shift, k = scale / √(running variance + ε)"
        ),
        "refused": refused.split(" (")[0],
        "train": (
            "the fold uses the running statistics: it stands for the pair in evaluation mode only"
        ),
    }


def conv_statements() -> list[dict[str, str]]:
    """One row per statement: ``{"layer", "statement", "normcore", "PyTorch", "agree"}``, the
    normcore column measured here (see the module's docstring)."""
    conv, x = example()
    out = conv.forward(x).output
    ws = _standardised(conv, x)
    fold = _fold(conv, x)
    h = x.shape[-1]
    (kh, _), s, p = conv.kernel, conv.stride, conv.padding
    rows = [
        (
            "Conv2d",
            "layout",
            (
                f"x {_shape(x.shape)} (images, channels, height, width), weights "
                f"{_shape(conv.weights.shape)} (out, in, kh, kw) → {_shape(out.shape)}"
            ),
            "NCHW; weight (out, in, kh, kw)",
            "yes",
        ),
        (
            "Conv2d",
            "output size",
            (
                f"⌊(h + 2·padding − k) / stride⌋ + 1: ⌊({h} + 2·{p} − {kh}) / {s}⌋ + 1 = "
                f"{out.shape[-1]}"
            ),
            "the same formula (dilation 1)",
            "yes",
        ),
        ("Conv2d", "kernel", _reads(conv), "not flipped (a cross-correlation)", "yes"),
        (
            "Conv2d",
            "gradients",
            (
                "weights and bias summed over images and positions; the weights' gap to the "
                f"oracle {_below(_oracle_gap(conv, x), 1e-7)}"
            ),
            "autograd of the same sum",
            "yes",
        ),
        (
            "Conv2d",
            "starting weights",
            _start(),
            "±√(1 / fan_in) for weights and bias (kaiming_uniform_ with a = √5)",
            "no",
        ),
        (
            "Conv2d",
            "options",
            (
                "zero padding, stride and leading axes of independent models; no dilation, groups "
                "or padding modes; "
                + _refusal(lambda: Conv2d(weights=conv.weights, stride=0)).split(",")[0]
            ),
            "dilation, groups, padding modes ('zeros', 'reflect', ...), string padding",
            "no",
        ),
        (
            "StandardisedConv2d",
            "kernel run",
            ws["kernel"],
            (
                "no such layer; the authors' PyTorch layer divides by the unbiased "
                "standard deviation + 1e-5"
            ),
            "no",
        ),
        ("StandardisedConv2d", "gradients", ws["grad"], "autograd through the same kernel", "yes"),
        (
            "fold_into_conv",
            "folded layer",
            fold["gap"],
            ("torch.nn.utils.fusion.fuse_conv_bn_eval: the same formula"),
            "yes",
        ),
        (
            "fold_into_conv",
            "what folds",
            (f"a batch layer only; group norm is refused: {fold['refused']}"),
            "fuse_conv_bn_eval takes a BatchNorm module, both modules in eval mode",
            "yes",
        ),
        ("fold_into_conv", "mode", fold["train"], "eval mode only (asserted)", "yes"),
    ]
    return [
        dict(zip(("layer", "statement", "normcore", "PyTorch", "agree"), row, strict=True))
        for row in rows
    ]


def fold_refused() -> type[NormcoreError]:
    """The error a fold of group norm raises (FoldError), found by running it."""
    conv, _ = example()
    try:
        fold_into_conv(conv, GroupNorm.create(conv.weights.shape[0], 2))
    except FoldError as error:
        return type(error)
    raise AssertionError("fold_into_conv folded group norm")
