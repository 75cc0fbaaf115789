"""The deep digits network: 64 pixels, eight hidden layers of 32 units, ten logits.

Each hidden layer is dense, then (in the normalised versions) a normaliser, then ReLU, the order
of the paper that introduced batch normalisation. Versions:

    'plain'  no normaliser
    'batch'  BatchNorm after each hidden dense layer
    'layer'  LayerNorm there
    'rms'    RMSNorm there

Independent networks run along one leading axis (seeds, or seeds times learning rates):
activations of shape (S, rows, 64) train S networks in one call per layer. Each network may have
its own learning rate: every layer steps with one rate per network (`normcore.Sequential`'s step
lines them up with the parameters' leading axes). The network runs as one `Sequential`
(`DeepNet.as_sequential`); the loss is the mean softmax cross-entropy over the rows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any

import numpy as np

from ..activations import ReLU
from ..batch import BatchNorm
from ..dense import Dense, starting_weights
from ..errors import SettingError, ShapeError
from ..layer import LayerNorm, RMSNorm
from ..mode import EVAL, TRAIN
from ..sequential import Sequential, leaves, stepped
from .descent import batches, descend, network_gradients

VERSIONS = ("plain", "batch", "layer", "rms")
DEPTH = 8
WIDTH = 32
INPUTS = 64
CLASSES = 10
#: a stacked network whose loss passes this (ten times chance's log 10 ≈ 2.3) stops moving
DIVERGED = 23.0


@dataclass(frozen=True, eq=False)
class DeepNet:
    """The networks (independent runs along a leading axis): `dense` (DEPTH hidden dense layers),
    `norms` (one normaliser or None
    per hidden layer) and `output` (the last dense layer)."""

    dense: tuple[Dense, ...]
    norms: tuple[Any, ...]
    output: Dense
    relu: ReLU = dataclasses.field(default_factory=ReLU)

    @property
    def size(self) -> int:
        return int(self.output.weights.shape[0])

    def as_sequential(self) -> Sequential:
        """The network as one `Sequential`: each hidden dense layer, its normaliser (if any) and
        ReLU, then the output layer."""
        hidden = (
            layer
            for dense, norm in zip(self.dense, self.norms, strict=True)
            for layer in (dense, norm, self.relu)
            if layer is not None
        )
        return Sequential((*hidden, self.output))


def pick(net: DeepNet, index: Any) -> DeepNet:
    """Network number `index` alone (a leading axis of one), or the networks a slice
    selects; parameters and running statistics are copied."""
    if isinstance(index, slice):
        chosen = np.arange(net.size)[index]
    elif (
        isinstance(index, (int, np.integer))
        and not isinstance(index, bool)
        and (0 <= index < net.size)
    ):
        chosen = np.array([int(index)])
    else:
        raise SettingError(
            f"index: expected a whole number from 0 to {net.size - 1} or a slice, got {index!r}"
        )
    if chosen.size == 0:
        raise SettingError(f"index: {index!r} selects no network of {net.size}")

    return _restack(net, net.size, lambda v: v[chosen].copy())


def tile(net: DeepNet, copies: int) -> DeepNet:
    """`copies` identical copies of the single network `net` (a leading axis of one) along a
    leading axis."""
    if net.size != 1:
        raise SettingError(f"net: expected a single network (leading axis of one), got {net.size}")
    if isinstance(copies, bool) or not isinstance(copies, (int, np.integer)) or copies < 1:
        raise SettingError(f"copies: expected a whole number >= 1, got {copies!r}")

    return _restack(net, 1, lambda v: np.repeat(v, copies, axis=0))


def _restack(net: DeepNet, count: int, change: Any) -> DeepNet:
    """`net` with `change` applied to every array (parameters, running statistics) whose first axis
    runs over the `count` networks; other fields are kept."""

    def each(layer: Any) -> Any:
        if layer is None:
            return None
        fields = {f.name: getattr(layer, f.name) for f in dataclasses.fields(layer)}
        return dataclasses.replace(
            layer,
            **{
                k: change(v)
                for k, v in fields.items()
                if isinstance(v, np.ndarray) and v.ndim >= 1 and v.shape[0] == count
            },
        )

    return DeepNet(
        dense=tuple(each(d) for d in net.dense),
        norms=tuple(each(n) for n in net.norms),
        output=each(net.output),
        relu=net.relu,
    )


def nudged(net: DeepNet, direction: int) -> DeepNet:
    """`net` with every hidden dense weight moved by one unit in the last place, up
    (`direction` = 1) or down (-1): a change of about one part in 1e16, far below any printed
    digit, of the size by which two computers' arithmetic may differ."""
    if (
        isinstance(direction, bool)
        or not isinstance(direction, (int, np.integer))
        or (direction not in (-1, 1))
    ):
        raise SettingError(f"direction: expected 1 or -1, got {direction!r}")
    toward = np.inf * direction
    dense = tuple(
        dataclasses.replace(d, weights=np.nextafter(d.weights, toward)) for d in net.dense
    )
    return DeepNet(dense=dense, norms=net.norms, output=net.output, relu=net.relu)


def concatenate(nets: Sequence[DeepNet]) -> DeepNet:
    """Every network of `nets` along one leading axis, in order (same version and shapes)."""
    if not nets:
        raise SettingError("nets: expected at least one network")

    def joined(layers: list[Any]) -> Any:
        if layers[0] is None:
            return None
        first = layers[0]
        size = nets[0].size
        fields = {}
        for f in dataclasses.fields(first):
            value = getattr(first, f.name)
            if isinstance(value, np.ndarray) and value.ndim >= 1 and value.shape[0] == size:
                fields[f.name] = np.concatenate([getattr(layer, f.name) for layer in layers])
        return dataclasses.replace(first, **fields)

    shapes = {tuple(d.weights.shape[1:] for d in n.dense) for n in nets}
    kinds = {tuple(type(m) for m in n.norms) for n in nets}
    if len(shapes) != 1 or len(kinds) != 1:
        raise SettingError("nets: expected networks of one version and one shape")
    return DeepNet(
        dense=tuple(joined([n.dense[k] for n in nets]) for k in range(len(nets[0].dense))),
        norms=tuple(joined([n.norms[k] for n in nets]) for k in range(len(nets[0].norms))),
        output=joined([n.output for n in nets]),
        relu=nets[0].relu,
    )


@dataclass(frozen=True, eq=False)
class SideResponse:
    """What `SideBySide.forward` answers: the joined `output` (S, rows, features), the layer, and
    each part's own response (None for a part without a normaliser)."""

    output: np.ndarray
    layer: SideBySide
    parts: tuple[Any, ...]


@dataclass(frozen=True, eq=False)
class SideGradient:
    """What `SideBySide.backward` answers: the joined gradient `grad_input`, the layer, and each
    part's own gradient (None for a part without a normaliser)."""

    grad_input: np.ndarray
    layer: SideBySide
    parts: tuple[Any, ...]


@dataclass(frozen=True, eq=False)
class SideBySide:
    """Several normalisers side by side along the leading axis: `parts[i]` (a normaliser, or None
    for
    none) serves the next `counts[i]` networks, in order; `modes[i]`, when given,
    replaces the mode of every call for part i (a part in evaluation mode while another trains).

    So networks that differ only in their normalisers (the batch layer read over different
    group sizes, or eval and train mode) train as one network array: their dense layers and ReLUs
    run
    once for all of them, and each normaliser is called on its own networks' activations exactly as
    in
    a leading axis of their own (the tests hold the two to the last bit). `join` builds such a
    network
    and `split` takes it apart.
    """

    parts: tuple[Any, ...]
    counts: tuple[int, ...]
    modes: tuple[str | None, ...] | None = None

    def __post_init__(self) -> None:
        if len(self.parts) != len(self.counts) or not self.parts:
            raise SettingError("parts, counts: expected one count per part, at least one part")
        if any(isinstance(c, bool) or not isinstance(c, int) or c < 1 for c in self.counts):
            raise SettingError(f"counts: expected whole numbers >= 1, got {self.counts!r}")
        if self.modes is not None and len(self.modes) != len(self.parts):
            raise SettingError("modes: expected one mode (or None) per part")

    @property
    def slices(self) -> tuple[slice, ...]:
        """The networks each part serves."""
        ends = np.cumsum(self.counts)
        return tuple(slice(int(e - c), int(e)) for c, e in zip(self.counts, ends, strict=True))

    def _mode(self, i: int, mode: str) -> str:
        chosen = None if self.modes is None else self.modes[i]
        return mode if chosen is None else chosen

    def forward(self, x: np.ndarray, mode: str = EVAL) -> SideResponse:
        """Each part's forward pass on its networks' activations (S_i, rows, features), joined."""
        if x.ndim != 3 or x.shape[0] != sum(self.counts):
            raise ShapeError(
                f"x: expected shape ({sum(self.counts)}, rows, features), got {x.shape}"
            )
        outputs, responses = [], []
        for i, (part, where) in enumerate(zip(self.parts, self.slices, strict=True)):
            if part is None:
                responses.append(None)
                outputs.append(x[where])
                continue
            r = part.forward(x[where], self._mode(i, mode))
            responses.append(r)
            outputs.append(r.output)
        return SideResponse(output=np.concatenate(outputs), layer=self, parts=tuple(responses))

    def backward(self, response: SideResponse, grad_output: np.ndarray) -> SideGradient:
        """Each part's backward pass on its networks' gradient; the input gradients, joined."""
        if response.layer is not self:
            raise SettingError("response: expected a response of this SideBySide layer")
        down, grads = [], []
        for part, r, where in zip(self.parts, response.parts, self.slices, strict=True):
            if part is None:
                grads.append(None)
                down.append(grad_output[where])
                continue
            g = part.backward(r, grad_output[where])
            grads.append(g)
            down.append(g.grad_input)
        return SideGradient(grad_input=np.concatenate(down), layer=self, parts=tuple(grads))

    def step(self, gradient: SideGradient, rates: np.ndarray) -> SideBySide:
        """A new layer: each part stepped as `step` steps a normaliser, at its networks' rates."""
        if gradient.layer is not self:
            raise SettingError("gradient: expected a gradient of this SideBySide layer")
        parts = tuple(
            None if part is None else part.step(g, rates[where])
            for part, g, where in zip(self.parts, gradient.parts, self.slices, strict=True)
        )
        return dataclasses.replace(self, parts=parts)


def join(nets: Sequence[DeepNet], modes: Sequence[str | None] | None = None) -> DeepNet:
    """The networks of `nets` along one leading axis in order, of one shape but any normalisers:
    the dense
    layers joined along that axis, each hidden layer's normalisers side by side (`SideBySide`,
    `modes` as there). `split` gives the networks back."""
    if not nets:
        raise SettingError("nets: expected at least one network")
    bare = [dataclasses.replace(n, norms=(None,) * len(n.norms)) for n in nets]
    joined = concatenate(bare)
    counts = tuple(n.size for n in nets)
    chosen = None if modes is None else tuple(modes)
    norms = tuple(
        SideBySide(parts=tuple(n.norms[k] for n in nets), counts=counts, modes=chosen)
        for k in range(len(nets[0].norms))
    )
    return dataclasses.replace(joined, norms=norms)


def split(net: DeepNet) -> tuple[DeepNet, ...]:
    """The networks `join` put side by side, each on a leading axis of its own again (parameters and
    running statistics copied)."""
    if not net.norms or not all(isinstance(n, SideBySide) for n in net.norms):
        raise SettingError("net: expected a network made by join")
    bare = dataclasses.replace(net, norms=(None,) * len(net.norms))
    return tuple(
        dataclasses.replace(
            _restack(bare, net.size, lambda v, where=where: v[where].copy()),
            norms=tuple(n.parts[i] for n in net.norms),
        )
        for i, where in enumerate(net.norms[0].slices)
    )


def _normaliser(version: str, stack: int, width: int) -> Any:
    make = {"batch": BatchNorm.create, "layer": LayerNorm.create, "rms": RMSNorm.create}
    return make[version](width, stack=(stack,)) if version in make else None


def build(version: str, seeds: Sequence[int], depth: int = DEPTH, width: int = WIDTH) -> DeepNet:
    """One network per seed, along a leading axis in the order given (a seed may repeat). Weights
    are
    He-uniform from ``np.random.default_rng(seed)``, first layer first; biases start at 0. The
    same seed gives the same weights in every version."""
    if version not in VERSIONS:
        raise SettingError(f"version: expected one of {VERSIONS}, got {version!r}")
    if not seeds:
        raise SettingError("seeds: expected at least one seed")
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise SettingError(f"depth: expected a whole number >= 1, got {depth!r}")
    sizes = [INPUTS, *[width] * depth, CLASSES]
    layers: list[list[np.ndarray]] = [[] for _ in range(depth + 1)]
    for seed in seeds:
        rng = np.random.default_rng(seed)
        for k in range(depth + 1):
            layers[k].append(starting_weights(sizes[k], sizes[k + 1], rng))
    dense = tuple(Dense(weights=np.stack(w)) for w in layers[:-1])
    norms = tuple(_normaliser(version, len(seeds), width) for _ in range(depth))
    return DeepNet(dense=dense, norms=norms, output=Dense(weights=np.stack(layers[-1])))


def forward(net: DeepNet, x: np.ndarray, mode: str = EVAL) -> tuple[list, np.ndarray]:
    """The responses of every layer, in order, and the logits (S, rows, CLASSES). `x` is
    (rows, 64) shared by every network, or (S, rows, 64)."""
    response = net.as_sequential().forward(_inputs(net, x), mode)
    return leaves(response), response.output


def _inputs(net: DeepNet, x: np.ndarray) -> np.ndarray:
    return np.broadcast_to(x, (net.size, *x.shape[-2:])) if x.ndim == 2 else x


def gradients(net: DeepNet, x: np.ndarray, labels: np.ndarray, mode: str = TRAIN):
    """Loss (S,) and every layer's gradient, last layer first, for one mini-batch."""
    return network_gradients(net.as_sequential(), _inputs(net, x), labels, mode)


def _decayed(g: Any, decay: float) -> Any:
    """`g` with ``decay * weights`` added to the weights' gradient (L2 weight decay)."""
    if decay == 0:
        return g
    grads = dict(g.grads, weights=g.grads["weights"] + decay * g.layer.weights)
    return dataclasses.replace(g, grads=grads)


def step(net: DeepNet, grads: list, rates: np.ndarray, decay: float = 0.0) -> DeepNet:
    """A new network: every parameter moved by minus its network's rate times its gradient; with
    `decay`, each hidden dense layer's weights also shrink by rate * decay * weights."""
    hidden = {id(d) for d in net.dense}
    grads = [_decayed(g, decay) if id(g.layer) in hidden else g for g in grads]
    depth = len(net.dense)
    moved = stepped((*net.dense, *net.norms, net.output), grads, rates)
    return DeepNet(dense=moved[:depth], norms=moved[depth:-1], output=moved[-1], relu=net.relu)


def accuracy(net: DeepNet, x: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Share of rows classified right in evaluation mode, per network (S,)."""
    _, logits = forward(net, x, EVAL)
    return np.mean(np.argmax(logits, axis=-1) == labels, axis=-1)


@dataclass(frozen=True, eq=False)
class Training:
    """What `train` recorded: `loss` (steps, S) measured by each step's own forward pass,
    `accuracy` (epochs + 1, S) on the held-out rows after each epoch (row 0 before training),
    `diverged` (S,) True where a network's loss passed DIVERGED (it stopped moving there);
    `kept` maps each step asked for (0 = before the first) to the network before that step and
    the training rows the step read."""

    net: DeepNet
    loss: np.ndarray
    accuracy: np.ndarray
    diverged: np.ndarray
    kept: dict[int, tuple[DeepNet, np.ndarray]] = dataclasses.field(default_factory=dict)


def train(
    net: DeepNet,
    data: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    rates: Any,
    epochs: int = 4,
    batch: int = 64,
    order_seed: int = 0,
    keep: Sequence[int] = (),
) -> Training:
    """Mini-batch gradient descent on ``data = (x_train, y_train, x_held, y_held)``.

    Every network sees the same batches in the same order (one shuffle per epoch, from
    ``order_seed``; `descent.batches`); a partial last batch is dropped. `rates` is one rate or
    one per network. A network whose loss passes DIVERGED (or is not finite) stops
    moving from that step. For each step number in `keep`, the network before that step and its
    batch's rows are kept (`Training.kept`): measurements at those moments need no second run.
    """
    x, y, x_held, y_held = data
    rates = np.broadcast_to(np.asarray(rates, dtype=np.float64), (net.size,)).copy()
    if not np.all(np.isfinite(rates)) or np.any(rates < 0):
        raise SettingError("rates: expected finite rates >= 0")
    if isinstance(batch, bool) or not isinstance(batch, int) or not 2 <= batch <= len(y):
        raise SettingError(f"batch: expected a whole number from 2 to {len(y)}, got {batch!r}")
    per_epoch = len(y) // batch
    keep = frozenset(int(k) for k in keep)
    if keep and not (min(keep) >= 0 and max(keep) < epochs * per_epoch):
        raise SettingError(f"keep: expected step numbers from 0 to {epochs * per_epoch - 1}")
    rows = batches(len(y), batch, np.random.default_rng(order_seed))
    losses, accs = [], [accuracy(net, x_held, y_held)]
    diverged = np.zeros(net.size, dtype=bool)
    kept: dict[int, tuple[DeepNet, np.ndarray]] = {}
    read: list[np.ndarray] = []  # the rows of the steps so far (only when steps are kept)

    def reading(batches_of_epoch: Any) -> Any:
        for r in batches_of_epoch:
            read.append(r)
            yield r

    def moved(net: DeepNet, grads: list, loss: np.ndarray) -> DeepNet:
        if len(read) - 1 in keep:
            kept[len(read) - 1] = (net, read[-1])
        diverged[:] |= ~np.isfinite(loss) | (loss > DIVERGED)
        return step(net, grads, np.where(diverged, 0.0, rates))

    for _ in range(epochs):
        epoch_rows = islice(rows, per_epoch)
        net, epoch = descend(
            net, x, y, reading(epoch_rows) if keep else epoch_rows, gradients, moved
        )
        losses.extend(epoch)
        accs.append(accuracy(net, x_held, y_held))
    return Training(
        net=net,
        loss=np.array(losses),
        accuracy=np.array(accs),
        diverged=diverged,
        kept=kept,
    )
