"""A small convolutional network on the 8 x 8 digits, with a normaliser after each convolution.

The network (per run; independent runs along a leading axis)::

    image (1, 8, 8)
    -> Conv2d 1 -> 8 channels, 3 x 3, padding 1      -> (8, 8, 8) -> normaliser -> ReLU
    -> Conv2d 8 -> 8 channels, 3 x 3, stride 2, pad 1 -> (8, 4, 4) -> normaliser -> ReLU
    -> flatten (128) -> Dense 128 -> 10 -> softmax cross-entropy

Versions (the normaliser after each convolution):

    'none'      nothing
    'batch'     per-channel batch norm: one mean and variance per channel over (images, H, W),
                read over groups of `per_device` images (ghost batches: each of 64 / B devices
                standardising the B images it holds)
    'layer'     one mean and variance per image over (C, H, W), per-channel scale and shift
                (group norm with one group, as Wu & He's "LN")
    'instance'  per image and channel over (H, W)
    'group'     per image over each group of C / GROUPS channels and (H, W)
    'ws-group'  group norm after convolutions whose kernels are weight-standardised

Independent networks (seeds) run along one leading axis S, trained in one call per layer. The
image normalisers of normcore take no leading axis of runs, so the activations are laid out for
them (`InLayout`): batch norm reads (S, images, C, H, W) as `GhostBatchNorm` rows
(S, images * H * W, C), every pixel of every image a row and every channel a feature, which is
per-channel batch norm exactly (the tests hold it to `ImageBatchNorm`); the per-image normalisers
read it as one `GroupNorm` over (images, S * C, H, W) with S times the groups, so no group spans
two networks. The network runs as one `Sequential` (`ConvNet.as_sequential`; `resconv`'s
networks run through the same `forward`, `gradients` and `step`). Every network sees the same
mini-batches in the same order (one shuffle per epoch from `order_seed`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any

import numpy as np

from ..activations import ReLU
from ..batch import BatchNorm, GhostBatchNorm
from ..conv import Conv2d, StandardisedConv2d
from ..data import load_digits, split_digits
from ..dense import Dense
from ..errors import ForeignResponseError, SettingError
from ..fold import fold_into_conv
from ..image import GroupNorm
from ..mode import EVAL, TRAIN
from ..responses import Gradient, Response
from ..sequential import Flatten, Sequential, leaves, stepped
from .descent import batches, descend, network_gradients

VERSIONS = ("none", "batch", "layer", "instance", "group", "ws-group")
CHANNELS = 8
#: group norm's groups: 2 groups of 4 channels (see the chapter for why)
GROUPS = 2
SIDE = 8
CLASSES = 10
#: images per step; a batch layer's statistics are read over `per_device` of them (64 / B devices)
BATCH = 64
RATE = 0.3
#: steps of training (8 steps of 64 images: about a third of an epoch of the 1,438 training
#: images; the chapter's time allows no more, the claims suite also trains longer)
STEPS = 8
#: the chapter's seeds (the claims suite trains 20 fresh ones)
SEEDS = (0, 1)
#: the claims suite's longer training of the small-batch sweep: three passes over the training
#: images (too long for the chapter's time)
LONG_EPOCHS = 3
#: the per-device batch sizes of the small-batch comparison: Wu & He's 2 to 32 images, and 64
#: (the whole step on one device)
SIZES = (2, 4, 8, 16, 32, 64)
#: the accuracy gap the chapter and its claims suite call small ("within 0.02": two points of
#: held-out accuracy), for small batches against the whole step and for recomputed statistics
NEAR = 0.02
#: how many training images the precise statistics and the variance ratios are read from
SAMPLE = 640
HELD_OUT = 0.2
SPLIT_SEED = 0

#: Published figures, not computed here: Wu & He (2018, "Group Normalization", ECCV; arXiv
#: 1803.08494), ResNet-50 on ImageNet trained on 8 GPUs, batch statistics per GPU, top-1
#: validation error (%) by images per GPU, for batch norm and group norm (32 groups). At 32 images
#: per GPU their layer norm had 25.3 and instance norm 28.4 (`WU_HE_AT_32`). The abstract's
#: "10.6% lower error" at 2 images is the difference of the last column.
WU_HE_ERROR = {
    "batch": {32: 23.6, 16: 23.7, 8: 24.8, 4: 27.3, 2: 34.7},
    "group": {32: 24.1, 16: 24.2, 8: 24.0, 4: 24.2, 2: 24.1},
}
WU_HE_AT_32 = {"batch": 23.6, "group": 24.1, "layer": 25.3, "instance": 28.4}
#: Wu & He's other settings for that table: the learning rate 0.1 at 32 images per GPU and
#: 0.1 * B / 32 at B (linear scaling), the same 100 epochs at every B, ResNet-50 (about fifty
#: normalised layers) on 224 x 224 crops.
WU_HE_RATE_AT_32 = 0.1
WU_HE_EPOCHS = 100
#: the sides of ResNet-50's feature maps, read at its 224 x 224 input: a stride-2 first
#: convolution (112), max pooling (56), then three stages that each halve the side (28, 14, 7)
RESNET_INPUT = 224
RESNET_SIDES = (112, 56, 28, 14, 7)


def digits_images(split_seed: int = SPLIT_SEED) -> tuple[np.ndarray, ...]:
    """(x_train, y_train, x_held, y_held): images (n, 1, 8, 8), pixels / 16, then put in standard
    units by the training images' mean and standard deviation over every pixel (one pair of
    figures, so the picture's shape is kept)."""
    digits = load_digits()
    train, held = split_digits(HELD_OUT, split_seed)
    x = digits.scaled.reshape(-1, 1, SIDE, SIDE)
    mean, divisor = x[train].mean(), x[train].std()
    x = (x - mean) / divisor
    return x[train], digits.labels[train], x[held], digits.labels[held]


# -- the normalisers' layouts ---------------------------------------------------------------
def _batch_rows(a: np.ndarray) -> np.ndarray:
    """(S, N, C, H, W) -> (S, N * H * W, C): every pixel a row, every channel a feature."""
    s, n, c, h, w = a.shape
    return np.moveaxis(a, 2, 4).reshape(s, n * h * w, c)


def _batch_images(rows: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    s, n, c, h, w = shape
    return np.moveaxis(rows.reshape(s, n, h, w, c), 4, 2)


def _group_block(a: np.ndarray) -> np.ndarray:
    """(S, N, C, H, W) -> (N, S * C, H, W): the networks' channels side by side."""
    s, n, c, h, w = a.shape
    return np.moveaxis(a, 0, 1).reshape(n, s * c, h, w)


def _group_images(block: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    s, n, c, h, w = shape
    return np.moveaxis(block.reshape(n, s, c, h, w), 1, 0)


def to_layout(norm: Any, a: np.ndarray) -> np.ndarray:
    """The activations `a` (S, N, C, H, W) of S networks as the normaliser `norm` reads it."""
    return _batch_rows(a) if isinstance(norm, BatchNorm) else _group_block(a)


def from_layout(norm: Any, b: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The inverse of `to_layout`: back to (S, N, C, H, W)."""
    if isinstance(norm, BatchNorm):
        return _batch_images(b, shape)
    return _group_images(b, shape)


def make_norm(version: str, stack: int, per_device: int, side: int) -> Any:
    """The normaliser after a convolution whose output is (networks, images, CHANNELS, side,
    side)."""
    if version == "none":
        return None
    if version == "batch":
        return GhostBatchNorm.create(CHANNELS, per_device * side * side, stack=(stack,))
    groups = {"layer": 1, "instance": CHANNELS, "group": GROUPS, "ws-group": GROUPS}[version]
    return GroupNorm.create(stack * CHANNELS, stack * groups)


def layout_rate(norm: Any, rate: Any) -> Any:
    """`rate` (a number, or one per network) as the normaliser `norm` lines it up
    with its parameters: a `GroupNorm`'s run over S * C channels, so each network's rate is
    repeated over its C channels."""
    if np.ndim(rate) == 0 or not isinstance(norm, GroupNorm):
        return rate
    return np.repeat(rate, norm.scale.shape[0] // len(rate))


@dataclass(frozen=True, eq=False)
class InLayout:
    """The normaliser `norm` between two layers of images from S networks (S, N, C, H, W): it reads
    them in its layout (`to_layout`) and hands them back as images (`from_layout`), and so
    stands in a `Sequential` like any layer. Its response's one part is the normaliser's own
    response, in that layout, and so is its gradient's; `step` lines per-network rates up with
    the normaliser's parameters (`layout_rate`)."""

    norm: Any

    def forward(self, x: np.ndarray, mode: str = EVAL) -> Response:
        """The normaliser's forward pass on `x` in its layout, handed back as images."""
        part = self.norm.forward(to_layout(self.norm, x), mode)
        output = from_layout(self.norm, part.output, x.shape)
        return Response(output=output, layer=self, mode=part.mode, parts=(part,))

    def backward(self, response: Response, grad_output: np.ndarray) -> Gradient:
        """The normaliser's backward pass on `grad_output` in its layout, handed back as images."""
        if not isinstance(response, Response) or response.layer is not self:
            raise ForeignResponseError("response: expected a response of this InLayout")
        d = to_layout(self.norm, grad_output)
        part = self.norm.backward(response.parts[0], d)
        grad_input = from_layout(self.norm, part.grad_input, grad_output.shape)
        return Gradient(grad_input=grad_input, layer=self, parts=(part,))

    def step(self, gradient: Gradient, rate: Any) -> InLayout:
        """The normaliser stepped by its gradient at `rate` (`layout_rate`), in place of this."""
        if not isinstance(gradient, Gradient) or gradient.layer is not self:
            raise ForeignResponseError("gradient: expected a gradient of this InLayout")
        return InLayout(self.norm.step(gradient.parts[0], layout_rate(self.norm, rate)))


@dataclass(frozen=True, eq=False)
class ConvNet:
    """The networks (independent runs along a leading axis): two convolutions, their normalisers
    (None for 'none'), the output
    layer, the version and the per-device batch its batch layers read."""

    convs: tuple[Conv2d, ...]
    norms: tuple[Any, ...]
    output: Dense
    version: str
    per_device: int = BATCH
    relu: ReLU = dataclasses.field(default_factory=ReLU)

    @property
    def size(self) -> int:
        return int(self.output.weights.shape[0])

    def as_sequential(self) -> Sequential:
        """The network as one `Sequential`: each convolution, its normaliser in its layout (if
        any), ReLU; then `Flatten` and the output layer."""
        body = (
            layer
            for conv, norm in zip(self.convs, self.norms, strict=True)
            for layer in (conv, *laid_out(norm), self.relu)
        )
        return Sequential((*body, Flatten(2), self.output))


def build(version: str, seeds: Sequence[int] = SEEDS, per_device: int = BATCH) -> ConvNet:
    """One network per seed, along a leading axis in the order given. Kernels and output weights are
    He-uniform from ``np.random.default_rng(seed)`` (first convolution first), so a seed gives
    the same starting weights in every version; biases start at 0."""
    if version not in VERSIONS:
        raise SettingError(f"version: expected one of {VERSIONS}, got {version!r}")
    if not seeds:
        raise SettingError("seeds: expected at least one seed")
    if (
        isinstance(per_device, bool)
        or not isinstance(per_device, int)
        or per_device < 1
        or BATCH % per_device
    ):
        raise SettingError(
            f"per_device: expected a whole number dividing {BATCH}, got {per_device!r}"
        )
    first, second, out = [], [], []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        first.append(Conv2d.create(1, CHANNELS, 3, rng, padding=1).weights)
        second.append(Conv2d.create(CHANNELS, CHANNELS, 3, rng, padding=1).weights)
        out.append(Dense.create(CHANNELS * 16, CLASSES, rng).weights)
    kind = StandardisedConv2d if version == "ws-group" else Conv2d
    convs = (
        kind(weights=np.stack(first), padding=1),
        kind(weights=np.stack(second), padding=1, stride=2),
    )
    s = len(seeds)
    norms = (make_norm(version, s, per_device, SIDE), make_norm(version, s, per_device, SIDE // 2))
    return ConvNet(convs, norms, Dense(weights=np.stack(out)), version, per_device)


def laid_out(norm: Any) -> tuple[Any, ...]:
    """The normaliser as it stands in a network's `Sequential`: nothing for None, else wrapped
    in its layout (`InLayout`)."""
    return () if norm is None else (InLayout(norm),)


def forward(net: Any, x: np.ndarray, mode: str = EVAL) -> tuple[list, np.ndarray]:
    """Every layer's response in order (a normaliser's as it saw its layout) and the logits
    (S, images, CLASSES). `x` is (images, 1, 8, 8), shared by every network. Serves
    `resconv`'s networks too (any network with `as_sequential`)."""
    response = net.as_sequential().forward(np.broadcast_to(x, (net.size, *x.shape)), mode)
    return leaves(response), response.output


def gradients(net: Any, x: np.ndarray, labels: np.ndarray, mode: str = TRAIN):
    """Loss (S,) and every layer's gradient, last layer first, for one mini-batch (of `resconv`'s
    networks too)."""
    return network_gradients(
        net.as_sequential(), np.broadcast_to(x, (net.size, *x.shape)), labels, mode
    )


def step(net: Any, grads: list, rate: Any) -> Any:
    """A new network (this module's or `resconv`'s): every parameter moved by ``-rate * grad``
    (`rate` one number, or one per network), running statistics updated."""
    rates = np.asarray(rate, dtype=np.float64)
    rate = float(rates) if rates.ndim == 0 else rates
    norm_rate = layout_rate(next((n for n in net.norms if n is not None), None), rate)
    return dataclasses.replace(
        net,
        convs=stepped(net.convs, grads, rate),
        norms=stepped(net.norms, grads, norm_rate),
        output=stepped((net.output,), grads, rate)[0],
    )


def accuracy(net: ConvNet, x: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Share of images classified right in evaluation mode, per network (S,)."""
    _, logits = forward(net, x, EVAL)
    return np.mean(np.argmax(logits, axis=-1) == labels, axis=-1)


@dataclass(frozen=True, eq=False)
class Training:
    """What `train` recorded: the trained networks, `loss` (steps, S) from each step's own forward
    pass and `accuracy` (S,) on the held-out images, in evaluation mode, at the end."""

    net: ConvNet
    loss: np.ndarray
    accuracy: np.ndarray


def train(
    net: ConvNet,
    data: tuple[np.ndarray, ...],
    rate: float = RATE,
    steps: int = STEPS,
    order_seed: int = 0,
) -> Training:
    """Mini-batch gradient descent, BATCH images a step, for `steps` steps on ``data =
    (x_train, y_train, x_held, y_held)``. The images are taken in the order of one shuffle from
    ``np.random.default_rng(order_seed)`` (a fresh shuffle each time the training images run
    out; `descent.batches`, as the deep digits network reads its batches), the same batches for
    every network."""
    x, y, x_held, y_held = data
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise SettingError(f"steps: expected a whole number >= 1, got {steps!r}")
    rows = islice(batches(len(y), BATCH, np.random.default_rng(order_seed)), steps)
    net, losses = descend(net, x, y, rows, gradients, lambda n, g, _loss: step(n, g, rate))
    return Training(net=net, loss=np.array(losses), accuracy=accuracy(net, x_held, y_held))


# -- after training --------------------------------------------------------------------------
def precise(net: ConvNet, x: np.ndarray) -> ConvNet:
    """`net` (the batch version) with every batch layer's running statistics replaced by the
    statistics of the images `x` at the final weights ("precise" statistics, Wu & Johnson 2021):
    the first layer's mean and biased variance over every image and pixel of `x`, then the
    second's over what the first, now in evaluation mode with its new figures, hands on."""
    if net.version != "batch":
        raise SettingError(f"net: expected the batch version, got {net.version!r}")
    a = np.broadcast_to(x, (net.size, *x.shape))
    norms = []
    for conv, norm in zip(net.convs, net.norms, strict=True):
        a = conv.forward(a).output
        rows = _batch_rows(a)
        norm = dataclasses.replace(
            norm,
            running_mean=rows.mean(axis=1),
            running_var=rows.var(axis=1),
            running_divisor=None,  # worked out from the new running variance
        )
        norms.append(norm)
        a = net.relu.forward(from_layout(norm, norm.forward(rows).output, a.shape)).output
    return dataclasses.replace(net, norms=tuple(norms))


def folded(net: ConvNet) -> ConvNet:
    """`net` (the batch version) with each batch layer folded into the convolution before it
    (`normcore.fold_into_conv`): the 'none' version's shape, with the same outputs as `net`."""
    if net.version != "batch":
        raise SettingError(f"net: expected the batch version, got {net.version!r}")
    convs = tuple(fold_into_conv(c, n) for c, n in zip(net.convs, net.norms, strict=True))
    return dataclasses.replace(net, convs=convs, norms=(None, None), version="none")


def pooled(version: str, per_device: int) -> tuple[int, int]:
    """How many values each statistic of the two normalisers is read from, for `per_device`
    images (batch norm) or one image (the others), at 8 x 8 and 4 x 4 pixels."""
    if version not in VERSIONS or version == "none":
        raise SettingError(f"version: expected a normalising version, got {version!r}")
    images = per_device if version == "batch" else 1
    counts = []
    for side in (SIDE, SIDE // 2):
        norm = make_norm(version, 1, per_device, side)
        block = np.zeros((1, images, CHANNELS, side, side))
        counts.append(int(norm.statistic_count(to_layout(norm, block))))
    return counts[0], counts[1]


def resnet_pooled(per_device: int) -> tuple[int, int]:
    """How many values one statistic of a per-channel batch layer in ResNet-50 pools for
    `per_device` images: (fewest, on the last stage's 7 x 7 maps; most, on the first 112 x 112
    map)."""
    if isinstance(per_device, bool) or not isinstance(per_device, int) or per_device < 1:
        raise SettingError(f"per_device: expected a whole number >= 1, got {per_device!r}")
    return per_device * min(RESNET_SIDES) ** 2, per_device * max(RESNET_SIDES) ** 2


def variance_ratios(net: ConvNet, x: np.ndarray, per_device: int) -> np.ndarray:
    """How far one device's statistics stray: the first convolution's output on the images `x`
    (its first ``len(x) // per_device * per_device``), cut into groups of `per_device` images;
    each group's variance of each channel (over its images and pixels, biased) divided by the
    variance of that channel over all of those images. Shape (groups, S, CHANNELS).

    A ratio of 1 is the whole set's figure; their spread is the noise a batch layer trains on,
    and their mean falls below 1 because a group's own mean leaves out the differences between
    groups."""
    return variance_ratios_by_size(net, x, (per_device,))[per_device]


def variance_ratios_by_size(
    net: ConvNet, x: np.ndarray, sizes: Sequence[int]
) -> dict[int, np.ndarray]:
    """`variance_ratios` for each per-device batch of `sizes`, the first convolution run once."""
    for per_device in sizes:
        if isinstance(per_device, bool) or not isinstance(per_device, int) or per_device < 1:
            raise SettingError(f"per_device: expected a whole number >= 1, got {per_device!r}")
        if len(x) < per_device:
            raise SettingError(f"x: expected at least {per_device} images, got {len(x)}")
    used = {b: len(x) // b * b for b in sizes}
    top = max(used.values())
    every = net.convs[0].forward(np.broadcast_to(x[:top], (net.size, *x[:top].shape))).output
    out = {}
    for b in sizes:
        a = every[:, : used[b]]
        s, n, c, h, w = a.shape
        whole = a.var(axis=(1, 3, 4))  # (S, C)
        groups = a.reshape(s, n // b, b, c, h, w).var(axis=(2, 4, 5))
        out[b] = np.moveaxis(groups / whole[:, None, :], 1, 0)
    return out


def fold_gap(net: ConvNet, x: np.ndarray) -> np.ndarray:
    """For each network (S,), the largest difference between the logits of `net` (the
    batch version, in evaluation mode) and of its folded form, over the images `x` and the
    classes."""
    gap = np.abs(forward(folded(net), x)[1] - forward(net, x)[1])
    return gap.max(axis=(1, 2))


#: fine-tuning on a shifted task: the digits at this share of their contrast, TUNE_STEPS steps of
#: TUNE_BATCH images at TUNE_RATE
FAINT = 0.5
TUNE_STEPS = 32
TUNE_BATCH = 2
TUNE_RATE = 0.05


def fainter(x: np.ndarray) -> np.ndarray:
    """The images `x` (standard units) with their contrast cut to FAINT around the blank
    background (the smallest value, a pixel with no ink): a shifted task for fine-tuning."""
    background = float(np.min(x))
    return background + FAINT * (x - background)


def fine_tune(net: ConvNet, x: np.ndarray, y: np.ndarray, mode: str, seed: int = 0) -> ConvNet:
    """`net` (the batch version) after TUNE_STEPS steps at TUNE_RATE on random batches of
    TUNE_BATCH images of (x, y) (drawn by ``np.random.default_rng(seed)``), its batch layers in
    `mode`: 'train' (standardised by each batch's statistics, running statistics moving at
    each step) or 'eval' (running statistics held fixed: standardised by them, which stay where
    they are; scale and shift still learn)."""
    if net.version != "batch":
        raise SettingError(f"net: expected the batch version, got {net.version!r}")
    norms = tuple(
        dataclasses.replace(n, group_rows=TUNE_BATCH * (n.group_rows // net.per_device))
        for n in net.norms
    )
    net = dataclasses.replace(net, norms=norms, per_device=TUNE_BATCH)
    rng = np.random.default_rng(seed)
    for _ in range(TUNE_STEPS):
        rows = rng.choice(len(y), TUNE_BATCH, replace=False)
        _, grads = gradients(net, x[rows], y[rows], mode)
        net = step(net, grads, TUNE_RATE)
    return net
