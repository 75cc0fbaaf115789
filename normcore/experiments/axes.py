"""Chapter 4's computations: the same standardising move along other axes.

* rows against columns: :func:`two_number_rows` (layer norm on height and weight) and
  :func:`rms_rows` (RMS norm on the same people);
* trailing ``normalized_shape``: :func:`trailing_shape`;
* the image axes: :func:`image_layer` builds batch, layer, instance or group norm for an image
  batch, :func:`coverage` marks the cells one statistic covers (read from the layer's own axes),
  :func:`image_check` holds each against the finite-difference oracle;
* :func:`adain_example` and :func:`lrn_example`: a small worked case of each.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..batch import BatchNorm, ImageBatchNorm
from ..data import load_crowd
from ..errors import SettingError, ShapeError
from ..image import GroupNorm, InstanceNorm, adain, local_response_normalisation
from ..layer import LayerNorm, RMSNorm
from ..mode import TRAIN
from ..oracle import finite_difference
from ..standardise import standardise
from ..worked import FOUR_ROWS
from .routes import counting_grad

#: A block with three features per row, for the layer-norm comparison (the worked four with a
#: third unit added).
THREE_FEATURE_X = np.column_stack([FOUR_ROWS, [4.0, 2.0, 5.0, 3.0]])

#: The row every two-number figure starts from (the worked four's first).
WORKED_ROW = np.array(FOUR_ROWS[:1])

IMAGE_AXES = ("batch", "layer", "instance", "group")


def crowd_rows(count: int = 20) -> np.ndarray:
    """The first `count` people of the crowd as (height cm, weight kg) rows, unscaled."""
    return load_crowd().features[:count]


@dataclass(frozen=True, eq=False)
class TwoNumberRows:
    """Twenty people standardised along the row (layer norm) and down the columns (batch)."""

    people: np.ndarray
    along_rows: np.ndarray
    down_columns: np.ndarray
    row_grad: np.ndarray  # the input gradient under the counting gradient, along the row

    @property
    def distance_from_one(self) -> float:
        """The widest distance of any row-standardised value from +1 or -1."""
        return float(np.max(np.abs(np.abs(self.along_rows) - 1.0)))

    @property
    def largest_row_grad(self) -> float:
        return float(np.max(np.abs(self.row_grad)))

    @property
    def distinct_rows(self) -> int:
        """How many different rows the row layer leaves (rounded to 6 places)."""
        return len({tuple(r) for r in np.round(self.along_rows, 6)})

    @property
    def distinct_column_rows(self) -> int:
        return len({tuple(r) for r in np.round(self.down_columns, 6)})


def two_number_rows(count: int = 20, eps: float = 1e-5) -> TwoNumberRows:
    """Layer norm on `count` of the crowd's (height, weight) rows, and batch norm on the same."""
    people = crowd_rows(count)
    layer = LayerNorm.create(2, eps=eps)
    response = layer.forward(people, TRAIN)
    grad = layer.backward(response, counting_grad(people.shape)).grad_input
    batch = BatchNorm.create(2, eps=eps).forward(people, TRAIN)
    return TwoNumberRows(
        people=people, along_rows=response.output, down_columns=batch.output, row_grad=grad
    )


@dataclass(frozen=True, eq=False)
class RMSRows:
    people: np.ndarray
    output: np.ndarray
    root: np.ndarray  # per row, epsilon inside

    @property
    def proportion_gap(self) -> float:
        """The largest change in any row's weight-to-height ratio (RMS keeps proportions)."""
        before = self.people[:, 1] / self.people[:, 0]
        after = self.output[:, 1] / self.output[:, 0]
        return float(np.max(np.abs(after - before)))

    @property
    def distinct_rows(self) -> int:
        return len({tuple(r) for r in np.round(self.output, 6)})


def rms_rows(rows: Any | None = None, eps: float = 1e-5) -> RMSRows:
    """RMS norm on `rows` (default: twenty of the crowd): each row over its root mean square."""
    people = crowd_rows(20) if rows is None else np.array(rows, dtype=np.float64)
    layer = RMSNorm.create(people.shape[1], eps=eps)
    response = layer.forward(people)
    return RMSRows(people=people, output=response.output, root=response.cache.divisor[:, 0])


@dataclass(frozen=True, eq=False)
class TrailingShape:
    x: np.ndarray
    normalized_shape: tuple[int, ...]
    output: np.ndarray
    statistics_shape: tuple[int, ...]
    row_form: np.ndarray  # the same input reshaped to rows, layer-normed, reshaped back

    @property
    def row_gap(self) -> float:
        return float(np.max(np.abs(self.output - self.row_form)))


def trailing_shape(
    shape: tuple[int, ...] = (2, 3, 4, 5), normalized: tuple[int, ...] = (4, 5), seed: int = 0
) -> TrailingShape:
    """An input of `shape` normalised over its trailing axes `normalized`, and the same input
    reshaped to rows of prod(normalized) values, layer-normed per row."""
    shape, normalized = tuple(shape), tuple(normalized)
    if shape[len(shape) - len(normalized) :] != normalized:
        raise ShapeError(f"normalized_shape {normalized} must end the input's shape {shape}")
    x = np.random.default_rng(seed).normal(size=shape)
    layer = LayerNorm.create(normalized)
    response = layer.forward(x)
    width = int(np.prod(normalized))
    rows = LayerNorm.create(width).forward(x.reshape(-1, width)).output.reshape(shape)
    stats = response.cache.mean.shape[: len(shape) - len(normalized)]
    return TrailingShape(
        x=x,
        normalized_shape=normalized,
        output=response.output,
        statistics_shape=tuple(stats),
        row_form=rows,
    )


def image_batch(shape: tuple[int, int, int, int] = (2, 4, 3, 3), seed: int = 0) -> np.ndarray:
    """A small random image batch (N, C, H, W), with a different level per channel."""
    rng = np.random.default_rng(seed)
    levels = np.arange(shape[1], dtype=np.float64)[None, :, None, None]
    return rng.normal(size=shape) + levels


AXES = ("batch", "layer", "rms", "instance", "group")


def image_layer(axis: str, shape: tuple[int, ...], groups: int = 2) -> Any:
    """A fresh normaliser whose statistics run along `axis`, for an input (rows, features) or an
    image batch (N, C, H, W) of `shape`. On images, layer and RMS norm run over (C, H, W)."""
    if axis not in AXES:
        raise SettingError(f"axis: expected one of {AXES}, got {axis!r}")
    if len(shape) == 2:
        features = shape[1]
        if axis in ("instance", "group"):
            raise SettingError(
                f"{axis} norm reads image axes: it needs an image batch (N, C, H, W), not a "
                "(rows, features) input"
            )
        return {
            "batch": lambda: BatchNorm.create(features),
            "layer": lambda: LayerNorm.create(features),
            "rms": lambda: RMSNorm.create(features),
        }[axis]()
    if len(shape) != 4:
        raise ShapeError(f"expected (rows, features) or (N, C, H, W), got shape {tuple(shape)}")
    _, c, h, w = shape
    return {
        "batch": lambda: ImageBatchNorm.create(c),
        "layer": lambda: LayerNorm.create((c, h, w)),
        "rms": lambda: RMSNorm.create((c, h, w)),
        "instance": lambda: InstanceNorm.create(c),
        "group": lambda: GroupNorm.create(c, groups),
    }[axis]()


def statistic_labels(layer: Any, shape: tuple[int, ...]) -> np.ndarray:
    """For every cell of an input of `shape`, the index of the statistic it is counted in, read
    from the layer's own view of the input and the axes its statistics run along."""
    ids = np.arange(int(np.prod(shape))).reshape(shape)
    view, axes = layer.statistics_layout(ids)
    kept = [a for a in range(view.ndim) if a not in axes]
    index = np.indices(view.shape)
    label = np.zeros(view.shape, dtype=np.int64)
    for a in kept:
        label = label * view.shape[a] + index[a]
    return label.reshape(shape)


def coverage(layer: Any, shape: tuple[int, ...], cell: tuple[int, ...] = (0, 0, 0, 0)):
    """True for the cells that share one statistic with `cell`."""
    labels = statistic_labels(layer, shape)
    return labels == labels[cell]


def reach(layer: Any, x: np.ndarray, cell: tuple[int, ...] = (0, 0, 0, 0)) -> np.ndarray:
    """True for the cells whose input the output at `cell` depends on, read from the backward
    pass: an upstream gradient of one at `cell` alone gives an input gradient that is non-zero
    exactly there."""
    response = layer.forward(x, TRAIN)
    d = np.zeros_like(x)
    d[cell] = 1.0
    return np.abs(layer.backward(response, d).grad_input) > 1e-12


@dataclass(frozen=True, eq=False)
class AxisCheck:
    """One normaliser on one (rows, features) input or image batch: its statistics, its output, and
    its input gradient held against the oracle and the structural check."""

    axis: str
    statistics_shape: tuple[int, ...]
    count: int  # values per statistic
    output: np.ndarray
    true: np.ndarray
    true_gap: float
    largest_true: float
    largest_sum: float  # largest sum of the true block over one statistic's cells
    centred: bool


def image_check(axis: str, x: Any, groups: int = 2, step: float = 1e-6) -> AxisCheck:
    """One normaliser's input gradient against the finite difference of sum(d * output),
    with d counting across the batch (scaled to at most one)."""
    x = np.array(x, dtype=np.float64)
    layer = image_layer(axis, x.shape, groups)
    d = counting_grad(x.shape) / x.size
    response = layer.forward(x, TRAIN)
    true = layer.backward(response, d).grad_input

    def objective(b: np.ndarray) -> float:
        return float(np.sum(d * layer.forward(b, TRAIN).output))

    oracle = finite_difference(objective, x, step)
    st = response.cache
    stats_shape = tuple(s for i, s in enumerate(st.z.shape) if i not in st.axes)
    sums = np.sum(true.reshape(st.z.shape), axis=st.axes)
    return AxisCheck(
        axis=axis,
        statistics_shape=stats_shape,
        count=st.count,
        output=response.output,
        true=true,
        true_gap=float(np.max(np.abs(true - oracle))),
        largest_true=float(np.max(np.abs(true))),
        largest_sum=float(np.max(np.abs(sums))),
        centred=st.mean is not None,
    )


@dataclass(frozen=True, eq=False)
class AdainExample:
    content: np.ndarray
    style: np.ndarray
    output: np.ndarray
    style_mean: np.ndarray
    style_deviation: np.ndarray
    output_mean: np.ndarray
    output_deviation: np.ndarray


def adain_example(eps: float = 1e-5) -> AdainExample:
    """One image, two channels, 2x2 content restyled by a 2x2 style."""
    content = np.array([[[[1.0, 2.0], [3.0, 6.0]], [[0.0, 4.0], [4.0, 8.0]]]])
    style = np.array([[[[10.0, 14.0], [10.0, 14.0]], [[-1.0, 1.0], [3.0, 5.0]]]])
    out = adain(content, style, eps)
    s = standardise(style, (2, 3), eps)
    o = standardise(out, (2, 3), eps)
    return AdainExample(
        content=content,
        style=style,
        output=out,
        style_mean=s.mean[0, :, 0, 0],
        style_deviation=s.divisor[0, :, 0, 0],
        output_mean=o.mean[0, :, 0, 0],
        output_deviation=np.sqrt(o.variance[0, :, 0, 0]),
    )


@dataclass(frozen=True, eq=False)
class LRNExample:
    activations: np.ndarray  # (channels,) at one pixel
    window_squares: np.ndarray  # sum of squares over each channel's window
    divisor: np.ndarray
    output: np.ndarray
    size: int
    alpha: float
    beta: float
    k: float


def lrn_example(
    activations: Any = (1.0, 2.0, 3.0, 4.0, 5.0),
    size: int = 3,
    alpha: float = 0.3,
    beta: float = 0.75,
    k: float = 2.0,
) -> LRNExample:
    """Local response normalisation at one pixel of one image, channels as given."""
    a = np.array(activations, dtype=np.float64)
    out = local_response_normalisation(a[None, :, None, None], size, alpha, beta, k)[0, :, 0, 0]
    half = size // 2
    windows = np.array([np.sum(a[max(0, i - half) : i + half + 1] ** 2) for i in range(a.size)])
    divisor = (k + alpha / size * windows) ** beta
    return LRNExample(
        activations=a,
        window_squares=windows,
        divisor=divisor,
        output=out,
        size=size,
        alpha=alpha,
        beta=beta,
        k=k,
    )


# --- statistics axes against parameter axes ------------------------------------------------

#: PyTorch's module for each normaliser, its defaults as its documentation states them, and the
#: shapes of its statistics and of its learned scale (``weight``) and shift (``bias``) for an input
#: (N, C, H, W), or (N, C) for the batch layer of rows. Held to torch itself by
#: tests/test_torch_agreement.py wherever torch is installed.
PYTORCH_LAYERS = {
    "batch": ("BatchNorm1d(C)", "(C,)", "(C,), (C,)"),
    "image batch": ("BatchNorm2d(C)", "(C,)", "(C,), (C,)"),
    "layer": ("LayerNorm((C, H, W))", "(N,)", "(C, H, W), (C, H, W)"),
    "RMS": ("RMSNorm((C, H, W))", "(N,)", "(C, H, W), none"),
    "instance": ("InstanceNorm2d(C)", "(N, C)", "none (affine=False)"),
    "group": ("GroupNorm(G, C)", "(N, G)", "(C,), (C,)"),
}


def _named(shape: tuple[int, ...], names: dict[int, str]) -> str:
    """A shape written with letters: (4, 3, 3) with {4: 'C', 3: 'H'} gives '(C, H, H)'."""
    inner = ", ".join(names.get(s, str(s)) for s in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


@dataclass(frozen=True, eq=False)
class AxesRow:
    """One normaliser's statistics and parameters on one input, read from a normcore layer."""

    name: str
    statistics_shape: tuple[int, ...]
    scale_shape: tuple[int, ...]
    shift_shape: tuple[int, ...]
    count: int  # values per statistic


def axes_rows(shape: tuple[int, int, int, int] = (2, 8, 3, 5), groups: int = 4) -> list[AxesRow]:
    """For each normaliser, the shape of its statistics (the kept axes, size-1 axes dropped) and
    of its scale and shift, read from a fresh normcore layer run on an image batch of `shape`
    (the batch layer of rows reads the batch's (N, C) corner)."""
    n, c, h, w = shape
    x = np.random.default_rng(0).normal(size=shape)
    built = {
        "batch": (BatchNorm.create(c), x[:, :, 0, 0]),
        "image batch": (ImageBatchNorm.create(c), x),
        "layer": (LayerNorm.create((c, h, w)), x),
        "RMS": (RMSNorm.create((c, h, w)), x),
        "instance": (InstanceNorm.create(c), x),
        "group": (GroupNorm.create(c, groups), x),
    }
    rows = []
    for name, (layer, block) in built.items():
        st = layer.forward(block, TRAIN).cache
        stats = tuple(s for i, s in enumerate(st.z.shape) if i not in st.axes)
        rows.append(
            AxesRow(
                name=name,
                statistics_shape=stats,
                scale_shape=tuple(layer.scale.shape),
                shift_shape=tuple(layer.shift.shape),
                count=st.count,
            )
        )
    return rows


def axes_table_rows(shape: tuple[int, int, int, int] = (2, 8, 3, 5), groups: int = 4):
    """The rows of the chapter's table: normcore's shapes written with the axis letters, beside
    PyTorch's module and shapes (from :data:`PYTORCH_LAYERS`)."""
    n, c, h, w = shape
    if len({n, c, h, w, groups}) < 5:
        raise SettingError(f"shape {shape} and groups {groups}: N, C, H, W and G must differ")
    names = {n: "N", c: "C", h: "H", w: "W", groups: "G"}
    table = []
    for row in axes_rows(shape, groups):
        module, stats, params = PYTORCH_LAYERS[row.name]
        table.append(
            [
                row.name,
                _named(row.statistics_shape, names),
                _named(row.scale_shape, names) + ", " + _named(row.shift_shape, names),
                module,
                stats,
                params,
            ]
        )
    return table


# --- why layer norm: Ba et al.'s invariances ---------------------------------------------------

#: The six changes of Ba et al.'s Table 1, applied to the inputs x (cases, inputs) or to the
#: weights W (inputs, units) of the linear map whose output a = x W the layer normalises.
INVARIANCES = (
    "weight matrix re-scaling",
    "weight matrix re-centring",
    "weight vector re-scaling",
    "dataset re-scaling",
    "dataset re-centring",
    "single case re-scaling",
)


def invariance_table(
    seed: int = 0, cases: int = 8, inputs: int = 5, units: int = 6, eps: float = 1e-12
):
    """Which of the six changes leave each normaliser's output unchanged, computed by running
    the layers. Epsilon is set tiny (1e-12) so that only the exact invariances count: with the
    usual 1e-5 a rescaling moves the output by about epsilon / variance, which a row of small
    spread can push past any fixed tolerance. "Unchanged" means within 1e-6.

    Returns a dict: normaliser name ('batch', 'layer', 'RMS') -> tuple of six booleans in the
    order of :data:`INVARIANCES`."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(cases, inputs))
    weights = rng.normal(size=(inputs, units))
    delta = rng.normal(size=(inputs, 1))  # added to every unit's weight vector
    shift = rng.normal(size=(1, inputs)) * 3  # added to every case
    changed = {
        "weight matrix re-scaling": (x, weights * 3.0),
        "weight matrix re-centring": (x, weights + delta),
        "weight vector re-scaling": (x, weights * np.array([3.0] + [1.0] * (units - 1))),
        "dataset re-scaling": (x * 3.0, weights),
        "dataset re-centring": (x + shift, weights),
        "single case re-scaling": (x * np.array([[3.0]] + [[1.0]] * (cases - 1)), weights),
    }
    layers = {
        "batch": BatchNorm.create(units, eps=eps),
        "layer": LayerNorm.create(units, eps=eps),
        "RMS": RMSNorm.create(units, eps=eps),
    }
    table = {}
    for name, layer in layers.items():
        before = layer.forward(x @ weights, TRAIN).output
        table[name] = tuple(
            bool(np.max(np.abs(layer.forward(cx @ cw, TRAIN).output - before)) < 1e-6)
            for cx, cw in (changed[k] for k in INVARIANCES)
        )
    return table


#: Ba et al.'s Table 1 (batch and layer normalisation), for the comparison.
BA_TABLE = {
    "batch": (True, False, True, True, True, False),
    "layer": (True, True, False, True, False, True),
}


# --- instance norm is the image batch layer on one image ---------------------------------------


def one_image_gap(images: np.ndarray) -> float:
    """The largest gap between the image batch layer (training) run on each image alone and
    instance norm on the whole batch: one image's per-channel statistics are instance norm's."""
    x = np.asarray(images, dtype=np.float64)
    c = x.shape[1]
    alone = np.concatenate(
        [ImageBatchNorm.create(c).forward(x[i : i + 1], TRAIN).output for i in range(len(x))]
    )
    return float(np.max(np.abs(alone - InstanceNorm.create(c).forward(x).output)))


# --- the geometry of layer and RMS norm ---------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Geometry:
    """Rows after RMS and after layer norm, with the two facts the figure draws: the squared
    length of every row (m, but for epsilon) and the sum of every layer-norm row (zero)."""

    people: np.ndarray
    rms: np.ndarray
    layer: np.ndarray

    @property
    def width(self) -> int:
        return int(self.people.shape[1])

    @property
    def rms_radius_gap(self) -> float:
        """Largest |sum of squares - m| over the RMS rows (epsilon's doing)."""
        return float(np.max(np.abs(np.sum(self.rms**2, axis=1) - self.width)))

    @property
    def layer_radius_gap(self) -> float:
        return float(np.max(np.abs(np.sum(self.layer**2, axis=1) - self.width)))

    @property
    def layer_sum(self) -> float:
        """Largest |row sum| over the layer-norm rows (the plane sum x = 0)."""
        return float(np.max(np.abs(np.sum(self.layer, axis=1))))


def geometry(rows: Any | None = None) -> Geometry:
    """RMS and layer norm (epsilon 1e-5) on `rows` (default: twenty of the crowd)."""
    people = crowd_rows(20) if rows is None else np.array(rows, dtype=np.float64)
    m = people.shape[1]
    return Geometry(
        people=people,
        rms=RMSNorm.create(m).forward(people).output,
        layer=LayerNorm.create(m).forward(people).output,
    )


# --- axis traps ----------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class SequenceTrap:
    """A (B, T, D) input through a per-feature batch layer, laid out two ways.

    `right`: features as channels, (B, D, T), as PyTorch's BatchNorm1d expects (N, C, L): one
    statistic per feature over B * T values. `wrong`: the input passed unchanged, so the T time
    steps are taken for channels: one statistic per time step over B * D values. `rows` is the
    per-feature layer of rows on the input reshaped to (B * T, D)."""

    x: np.ndarray
    right: np.ndarray
    wrong: np.ndarray
    rows: np.ndarray
    right_count: int
    wrong_count: int

    @property
    def right_gap(self) -> float:
        return float(np.max(np.abs(self.right - self.rows)))

    @property
    def wrong_gap(self) -> float:
        return float(np.max(np.abs(self.wrong - self.rows)))


def sequence_trap(shape: tuple[int, int, int] = (4, 6, 6), seed: int = 0) -> SequenceTrap:
    """A random (B, T, D) input whose features have different levels, normalised per feature
    the right way and with the time axis mistaken for channels (T = D by default, so a framework
    that checks only the channel count lets the mistake through)."""
    b, t, d = shape
    rng = np.random.default_rng(seed)
    x = rng.normal(size=shape) * (1.0 + np.arange(d)) + 3.0 * np.arange(d)
    right_layer = ImageBatchNorm.create(d)
    right = right_layer.forward(x.transpose(0, 2, 1)[..., None], TRAIN)
    wrong_layer = ImageBatchNorm.create(t)
    wrong = wrong_layer.forward(x[..., None], TRAIN)
    rows = BatchNorm.create(d).forward(x.reshape(b * t, d), TRAIN).output.reshape(shape)
    return SequenceTrap(
        x=x,
        right=right.output[..., 0].transpose(0, 2, 1),
        wrong=wrong.output[..., 0],
        rows=rows,
        right_count=right.cache.count,
        wrong_count=wrong.cache.count,
    )


@dataclass(frozen=True, eq=False)
class ChannelsLast:
    """Layer norm over C at each pixel of a channels-last batch (N, H, W, C), as ConvNeXt-style
    code does, against layer norm over (C, H, W) of the same images channels-first."""

    per_pixel: np.ndarray  # (N, H, W, C)
    whole_image: np.ndarray  # (N, H, W, C), transposed back
    per_pixel_count: int
    whole_count: int

    @property
    def gap(self) -> float:
        return float(np.max(np.abs(self.per_pixel - self.whole_image)))


def channels_last(shape: tuple[int, int, int, int] = (2, 3, 3, 4), seed: int = 0) -> ChannelsLast:
    """A random channels-last batch (N, H, W, C) layer-normed both ways."""
    n, h, w, c = shape
    x = np.random.default_rng(seed).normal(size=shape) + np.arange(c)
    per_pixel = LayerNorm.create(c).forward(x)
    first = x.transpose(0, 3, 1, 2)
    whole = LayerNorm.create((c, h, w)).forward(first)
    return ChannelsLast(
        per_pixel=per_pixel.output,
        whole_image=whole.output.transpose(0, 2, 3, 1),
        per_pixel_count=per_pixel.cache.count,
        whole_count=whole.cache.count,
    )
