"""The reference: what each layer states, and what it does at the edges, found by running it.

* `statements()` asks every layer of normcore the questions a complete
  implementation must settle (its axis, its variance, epsilon's place, scale and shift, its
  modes, running statistics, backward routes, parameter gradients, weight norm's projection). Each
  finding is read from a fresh layer or measured on a small input, not typed.
* `edge_cases()` runs every edge case and sorts the outcome into one of three kinds:
  ``'refused'`` (a typed error, named with its message), ``'arithmetic'`` (computed as the
  arithmetic says) and ``'worth knowing'`` (computed, and the result deserves a remark).
* `pytorch_differences()` sets normcore's convention beside PyTorch's, worked from the formulas
  both use (no torch is imported).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import (
    BatchNorm,
    Dense,
    GhostBatchNorm,
    GroupNorm,
    ImageBatchNorm,
    InstanceNorm,
    LayerNorm,
    NormcoreError,
    ReLU,
    RMSNorm,
    WeightNormDense,
)
from .fold import fold_batch_norm
from .mode import EVAL, TRAIN
from .oracle import finite_difference
from .worked import FOUR_ROWS

__all__ = [
    "FAST_VARIANCE_MEAN",
    "framework_defaults",
    "EdgeCase",
    "KINDS",
    "Outcome",
    "STATEMENTS",
    "edge_cases",
    "pytorch_differences",
    "run_case",
    "statements",
]

KINDS = ("refused", "arithmetic", "worth knowing")

#: the mean of Flax's fast-variance example (unit spread, float32)
FAST_VARIANCE_MEAN = 3000.0

#: The worked block of the book: four rows, two features (`normcore.worked`).
FOUR = FOUR_ROWS

STATEMENTS = (
    "axis",
    "variance",
    "eps",
    "scale and shift",
    "modes (default)",
    "running statistics start",
    "running rule and moment",
    "running variance",
    "backward routes",
    "parameter gradients",
    "weight norm",
)


# ------------------------------------------------------------------------------ statements
def _layers() -> dict[str, tuple[Any, np.ndarray]]:
    """Each layer with a small input it takes (rows of FOUR, or images built from them)."""
    images = np.arange(2 * 4 * 2 * 3, dtype=float).reshape(2, 4, 2, 3) ** 1.5 % 7.0
    rng = np.random.default_rng(0)
    return {
        "BatchNorm": (BatchNorm.create(2), FOUR),
        "GhostBatchNorm": (GhostBatchNorm.create(2, 2), FOUR),
        "ImageBatchNorm": (ImageBatchNorm.create(4), images),
        "LayerNorm": (LayerNorm.create(2), FOUR),
        "RMSNorm": (RMSNorm.create(2), FOUR),
        "InstanceNorm": (InstanceNorm.create(4), images),
        "GroupNorm": (GroupNorm.create(4, 2), images),
        "WeightNormDense": (WeightNormDense.create(2, 3, rng), FOUR),
    }


def _axis(layer: Any, x: np.ndarray) -> str:
    view, axes = layer.statistics_layout(x)
    names = {2: ("rows", "features"), 4: ("images", "channels", "height", "width")}[x.ndim]
    if view.ndim != x.ndim and x.ndim == 2:  # ghost batch norm: (groups, rows in a group, ...)
        names = ("groups", f"rows in a group of {view.shape[1]}", "features")
    elif view.ndim != x.ndim:  # group norm: (images, groups, channels in group, height, width)
        names = ("images", "groups", "channels in a group", "height", "width")
    over = ", ".join(names[a] for a in axes)
    return f"over ({over}); one figure per {_per(names, axes)}"


def _per(names: tuple[str, ...], axes: tuple[int, ...]) -> str:
    kept = [n for i, n in enumerate(names) if i not in axes]
    return " and ".join(n.rstrip("s") if n.endswith("s") else n for n in kept)


def _variance(layer: Any, x: np.ndarray) -> str:
    if layer.name in ("RMS",):
        return "mean square (no centring)"
    st = layer.forward(x, "train").cache
    view, axes = layer.statistics_layout(x)
    n = st.count
    biased = np.var(view, axis=axes, keepdims=True)
    return (
        "biased (÷ n)"
        if np.allclose(st.variance, biased)
        else ("unbiased (÷ n−1)" if np.allclose(st.variance, biased * n / (n - 1)) else "other")
    )


def _epsilon(layer: Any, x: np.ndarray) -> str:
    st = layer.forward(x, "train").cache
    var = st.variance
    under = np.allclose(st.divisor, np.sqrt(var + layer.eps))
    return f"{layer.eps:g}, " + ("under the root" if under else "elsewhere")


def _start(layer: Any) -> str:
    scale, shift = np.unique(layer.scale), np.unique(layer.shift)
    learned = "learned" if layer.affine else "fixed"
    return f"{learned}; start {', '.join(f'{v:g}' for v in scale)} and " + ", ".join(
        f"{v:g}" for v in shift
    )


def _modes(layer: Any, x: np.ndarray) -> str:
    default = inspect.signature(layer.forward).parameters["mode"].default
    same = np.allclose(layer.forward(x, "train").output, layer.forward(x, "eval").output)
    return f"{TRAIN}, {EVAL} (default {default}); " + (
        "both return the same" if same else "they differ"
    )


def _running(layer: Any) -> tuple[str, str, str]:
    if not hasattr(layer, "running_mean"):
        return "none kept", "none", "none"
    start = (
        f"mean {', '.join(f'{v:g}' for v in np.unique(layer.running_mean))}, "
        f"variance {', '.join(f'{v:g}' for v in np.unique(layer.running_var))}"
    )
    x = FOUR if layer.features == 2 else _layers()["ImageBatchNorm"][1]
    response = layer.forward(x, "train")
    moved_by_forward = not np.array_equal(layer.running_mean, np.zeros_like(layer.running_mean))
    stepped = layer.step(layer.backward(response, np.zeros_like(response.output)), 0.0)
    m = layer.momentum
    stats = response.statistics
    rule = np.allclose(stepped.running_mean, m * layer.running_mean + (1 - m) * stats.mean)
    moment = "in step, once per batch" if not moved_by_forward else "in forward"
    rule_text = f"momentum·old + (1 − momentum)·batch, momentum {m:g}" if rule else "other"
    view, axes = layer.statistics_layout(x)
    biased = np.var(view, axis=axes)
    if view.ndim != x.ndim:  # ghost batch norm: the batch's figures are the groups' average
        biased = biased.mean(axis=0)
        if rule and np.allclose(stats.mean, view.mean(axis=axes).mean(axis=0)):
            rule_text += " (batch: the groups' average)"
    folded = (stepped.running_var - m * layer.running_var) / (1 - m)
    bias = "biased" if np.allclose(folded, biased) else "unbiased"
    return start, f"{rule_text}; {moment}", bias


def _routes(layer: Any, x: np.ndarray) -> str:
    response = layer.forward(x, "train")
    d = np.cos(np.arange(response.output.size, dtype=float)).reshape(response.output.shape)
    passed = layer.backward(response, d).grad_input
    oracle = finite_difference(lambda b: float(np.sum(layer.forward(b, "train").output * d)), x)
    agrees = np.allclose(passed, oracle, atol=1e-5)
    if layer.name == "RMS":
        routes = "two: own value, mean square"
    elif isinstance(layer, GhostBatchNorm):
        routes = "three, within each group: own value, mean, variance"
    else:
        routes = "three: own value, mean, variance"
    return f"{routes}; {'agrees' if agrees else 'DISAGREES'} with the oracle"


def _grads(layer: Any, x: np.ndarray) -> str:
    response = layer.forward(x, "train")
    d = np.sin(1.0 + np.arange(response.output.size, dtype=float)).reshape(response.output.shape)
    grads = layer.backward(response, d).grads
    names = []
    for name in grads:
        value = getattr(layer, name)

        def f(p: np.ndarray, name: str = name) -> float:
            import dataclasses

            moved = dataclasses.replace(layer, **{name: p})
            return float(np.sum(moved.forward(x, "train").output * d))

        ok = np.allclose(grads[name], finite_difference(f, value), atol=1e-5)
        names.append(f"{name} {'✓' if ok else '✗'}")
    return ", ".join(names) + " (held against the oracle)"


def _weight_norm(layer: Any, x: np.ndarray) -> str:
    if not isinstance(layer, WeightNormDense):
        return "—"
    response = layer.forward(x, "train")
    grads = layer.backward(response, np.ones_like(response.output)).grads
    radial = float(np.max(np.abs(np.sum(grads["direction"] * layer.direction, axis=0))))
    try:
        WeightNormDense(direction=np.zeros((2, 3)))
        zero = "accepted"
    except NormcoreError as exc:
        zero = f"refused ({type(exc).__name__})"
    projected = "radial part removed" if radial < 1e-12 else "radial part KEPT"
    return f"direction gradient · direction ≈ 0 ({projected}); zero direction {zero}"


def statements() -> list[dict[str, str]]:
    """One row per layer, one column per statement of `STATEMENTS`, each measured."""
    rows = []
    for name, (layer, x) in _layers().items():
        if isinstance(layer, WeightNormDense):
            rows.append(
                {
                    "layer": name,
                    "axis": "none (rescales weights per neuron)",
                    "variance": "—",
                    "eps": "—",
                    "scale and shift": "magnitude starts at ‖direction‖, bias at 0",
                    "modes (default)": _modes(layer, x),
                    "running statistics start": "none kept",
                    "running rule and moment": "none",
                    "running variance": "none",
                    "backward routes": "dense gradient, then split",
                    "parameter gradients": _grads_dense(layer, x),
                    "weight norm": _weight_norm(layer, x),
                }
            )
            continue
        start, rule, bias = _running(layer)
        rows.append(
            {
                "layer": name,
                "axis": _axis(layer, x),
                "variance": _variance(layer, x),
                "eps": _epsilon(layer, x),
                "scale and shift": _start(layer),
                "modes (default)": _modes(layer, x),
                "running statistics start": start,
                "running rule and moment": rule,
                "running variance": bias,
                "backward routes": _routes(layer, x),
                "parameter gradients": _grads(layer, x),
                "weight norm": "—",
            }
        )
    return rows


def _grads_dense(layer: WeightNormDense, x: np.ndarray) -> str:
    response = layer.forward(x, "train")
    d = np.sin(1.0 + np.arange(response.output.size, dtype=float)).reshape(response.output.shape)
    grads = layer.backward(response, d).grads
    out = []
    for name in ("magnitude", "direction", "bias"):

        def f(p: np.ndarray, name: str = name) -> float:
            kw = {"direction": layer.direction, "bias": layer.bias, "magnitude": layer.magnitude}
            kw[name] = p
            return float(np.sum(WeightNormDense(**kw).forward(x).output * d))

        ok = np.allclose(grads[name], finite_difference(f, getattr(layer, name)), atol=1e-5)
        out.append(f"{name} {'✓' if ok else '✗'}")
    return ", ".join(out) + " (held against the oracle)"


# ------------------------------------------------------------------------------ edge cases
@dataclass(frozen=True)
class Outcome:
    """What running a case gave: its kind, the error's type and message (if refused), and a
    short account of the output (if the layer returned one)."""

    kind: str
    error: str
    message: str
    answer: str


@dataclass(frozen=True)
class EdgeCase:
    """One edge: which layer, what is tried, how to run it, and (when the layer returns an
    output) whether the output is plain arithmetic or worth a remark, with the remark."""

    key: str
    layer: str
    case: str
    run: Callable[[], Any]
    answered_kind: str = "arithmetic"
    remark: str = ""


def _bn(**kw: Any) -> BatchNorm:
    return BatchNorm.create(2, **kw)


def _short(a: Any) -> str:
    if isinstance(a, str):
        return a
    a = np.asarray(a)
    if a.size <= 4:
        return np.array2string(np.round(a, 4).ravel() + 0.0, separator=", ", max_line_width=200)
    return f"shape {a.shape}, {a.dtype}, values from {a.min():.4g} to {a.max():.4g}"


def _train_out(layer: Any, x: Any) -> np.ndarray:
    return layer.forward(x, "train").output


def _look_then_predict() -> str:
    layer = _bn()
    before = layer.forward(FOUR[:1]).output
    layer.forward(FOUR, "train")  # a look: no step follows
    after = layer.forward(FOUR[:1]).output
    return f"evaluation output before {_short(before)}, after the look {_short(after)}"


def _fresh_predict() -> np.ndarray:
    return _bn().forward(FOUR).output[-1]


def _momentum_zero() -> np.ndarray:
    layer = _bn(momentum=0.0)
    r = layer.forward(FOUR, "train")
    return layer.step(layer.backward(r, np.zeros((4, 2))), 0.0).running_mean


def _foreign_gradient() -> Any:
    a, b = _bn(), _bn()
    return b.step(a.backward(a.forward(FOUR, "train"), np.ones((4, 2))), 0.1)


def _foreign_response() -> Any:
    a, b = _bn(), LayerNorm.create(2)
    return b.backward(a.forward(FOUR, "train"), np.ones((4, 2)))


def _relu_gets_dense_gradient() -> Any:
    dense = Dense(np.eye(2))
    gradient = dense.backward(dense.forward(FOUR), np.ones((4, 2)))
    return ReLU().step(gradient, 0.1)


def _ghost(group_rows: Any = 2) -> GhostBatchNorm:
    return GhostBatchNorm.create(2, group_rows)


def _ghost_one_group() -> str:
    ghost, plain = _train_out(_ghost(4), FOUR), _train_out(_bn(), FOUR)
    same = "the same as BatchNorm's" if np.array_equal(ghost, plain) else "NOT BatchNorm's"
    return f"{_short(ghost[:, 0])}, {same}"


def _two_number_row() -> np.ndarray:
    return LayerNorm.create(2).forward(np.array([[3.0, 11.0]])).output


def _tiny_direction() -> np.ndarray:
    w = np.array([[1e-300, 0.0], [0.0, 2e-300]])
    return WeightNormDense(direction=w, magnitude=np.array([1.0, 1.0])).effective_weights


def _cases() -> list[EdgeCase]:
    col = np.array([[5.0, 1.0], [5.0, 2.0], [5.0, 4.0]])
    images = np.ones((2, 4, 2, 2))
    return [
        # refused
        EdgeCase(
            "bn-rank-1",
            "BatchNorm",
            "a row of rank 1 (no batch axis)",
            lambda: _bn().forward(np.array([1.0, 2.0])),
        ),
        EdgeCase(
            "bn-rank-3",
            "BatchNorm",
            "an input of rank 3 for a layer without leading model axes",
            lambda: _bn().forward(np.ones((2, 4, 2))),
        ),
        EdgeCase(
            "bn-features",
            "BatchNorm",
            "three features for a two-feature layer",
            lambda: _bn().forward(np.ones((4, 3))),
        ),
        EdgeCase(
            "bn-empty",
            "BatchNorm",
            "an empty batch (0 rows)",
            lambda: _bn().forward(np.ones((0, 2)), "train"),
        ),
        EdgeCase(
            "bn-nan",
            "BatchNorm",
            "a NaN in the batch",
            lambda: _bn().forward(np.array([[1.0, np.nan], [2.0, 3.0]]), "train"),
        ),
        EdgeCase(
            "bn-inf",
            "BatchNorm",
            "+inf in the batch",
            lambda: _bn().forward(np.array([[1.0, np.inf], [2.0, 3.0]]), "train"),
        ),
        EdgeCase(
            "bn-neg-inf",
            "BatchNorm",
            "−inf in the batch",
            lambda: _bn().forward(np.array([[1.0, -np.inf], [2.0, 3.0]]), "train"),
        ),
        EdgeCase(
            "bn-1e200",
            "BatchNorm",
            "values of 1e200 (squares overflow)",
            lambda: _bn().forward(FOUR * 1e200, "train"),
        ),
        EdgeCase("bn-eps-0", "BatchNorm", "epsilon 0", lambda: _bn(eps=0.0)),
        EdgeCase("bn-eps-neg", "BatchNorm", "epsilon −1e-5", lambda: _bn(eps=-1e-5)),
        EdgeCase("bn-momentum-1", "BatchNorm", "momentum 1", lambda: _bn(momentum=1.0)),
        EdgeCase("bn-momentum-neg", "BatchNorm", "momentum −0.1", lambda: _bn(momentum=-0.1)),
        EdgeCase(
            "bn-mode",
            "BatchNorm",
            "mode 'Train' (a near miss)",
            lambda: _bn().forward(FOUR, "Train"),
        ),
        EdgeCase(
            "bn-bool",
            "BatchNorm",
            "an input of booleans",
            lambda: _bn().forward(FOUR > 5, "train"),
        ),
        EdgeCase(
            "bn-foreign-gradient",
            "BatchNorm",
            "a gradient from another batch layer",
            _foreign_gradient,
        ),
        EdgeCase("gbn-group-rows", "GhostBatchNorm", "group_rows 0", lambda: _ghost(0)),
        EdgeCase(
            "gbn-rows",
            "GhostBatchNorm",
            "three rows while training in groups of 2",
            lambda: _ghost().forward(FOUR[:3], "train"),
        ),
        EdgeCase(
            "ln-foreign-response", "LayerNorm", "a response from a batch layer", _foreign_response
        ),
        EdgeCase(
            "relu-dense-gradient",
            "ReLU",
            "a dense layer's gradient handed to step",
            _relu_gets_dense_gradient,
        ),
        EdgeCase(
            "ln-trailing",
            "LayerNorm",
            "trailing axis 3 for normalized_shape 2",
            lambda: LayerNorm.create(2).forward(np.ones((4, 3))),
        ),
        EdgeCase(
            "gn-groups", "GroupNorm", "3 groups for 4 channels", lambda: GroupNorm.create(4, 3)
        ),
        EdgeCase(
            "in-rank",
            "InstanceNorm",
            "a (rows, features) input instead of images",
            lambda: InstanceNorm.create(2).forward(FOUR),
        ),
        EdgeCase(
            "wn-zero",
            "WeightNormDense",
            "a neuron whose direction is all zeros",
            lambda: WeightNormDense(direction=np.array([[1.0, 0.0], [2.0, 0.0]])),
        ),
        EdgeCase(
            "dense-features",
            "Dense",
            "three inputs for a two-input layer",
            lambda: Dense(np.eye(2)).forward(np.ones((4, 3))),
        ),
        EdgeCase(
            "fold-layer-norm",
            "fold_batch_norm",
            "folding a layer norm into the dense layer before it",
            lambda: fold_batch_norm(Dense(np.eye(2)), LayerNorm.create(2)),
        ),
        # answered as the arithmetic says
        EdgeCase(
            "bn-constant",
            "BatchNorm",
            "a constant column while training",
            lambda: _train_out(_bn(), col)[:, 0],
        ),
        EdgeCase(
            "bn-1e150",
            "BatchNorm",
            "values of 1e150",
            lambda: _train_out(_bn(), FOUR * 1e150)[:, 0],
        ),
        EdgeCase(
            "bn-float32",
            "BatchNorm",
            "a float32 input",
            lambda: str(_train_out(_bn(), FOUR.astype(np.float32)).dtype),
        ),
        EdgeCase(
            "bn-int",
            "BatchNorm",
            "an integer input",
            lambda: _train_out(_bn(), FOUR.astype(int))[:, 0],
        ),
        EdgeCase(
            "ln-constant",
            "LayerNorm",
            "a constant row",
            lambda: LayerNorm.create(2).forward(np.array([[4.0, 4.0]])).output[0],
        ),
        EdgeCase(
            "in-constant",
            "InstanceNorm",
            "constant images",
            lambda: float(np.abs(InstanceNorm.create(4).forward(images).output).max()),
        ),
        EdgeCase(
            "gbn-one-group",
            "GhostBatchNorm",
            "one group of all four rows while training",
            _ghost_one_group,
        ),
        EdgeCase(
            "bn-momentum-0", "BatchNorm", "momentum 0: running mean after one step", _momentum_zero
        ),
        # answered, and worth knowing
        EdgeCase(
            "bn-one-row",
            "BatchNorm",
            "a batch of one row while training",
            lambda: _train_out(_bn(), FOUR[:1])[0],
            "worth knowing",
            "all zeros, no error: the row is its own mean, so nothing is learned from it",
        ),
        EdgeCase(
            "bn-one-row-predict",
            "BatchNorm",
            "a batch of one row in evaluation mode",
            lambda: _bn().forward(FOUR[:1]).output[0],
            "worth knowing",
            "the running statistics standardise it, so one row is fine in evaluation mode",
        ),
        EdgeCase(
            "gbn-three-predict",
            "GhostBatchNorm",
            "three rows in evaluation mode, in groups of 2",
            lambda: _ghost().forward(FOUR[:3]).output[-1],
            "worth knowing",
            "standardised by the running statistics: evaluation mode reads no group, so any number "
            "of rows will do, though training mode refuses three",
        ),
        EdgeCase(
            "ln-two-numbers",
            "LayerNorm",
            "a row of two numbers",
            _two_number_row,
            "worth knowing",
            "(3, 11) becomes ∓1: two numbers far apart beside √epsilon do; closer ones do not",
        ),
        EdgeCase(
            "bn-look",
            "BatchNorm",
            "a training pass made for a look, no step",
            _look_then_predict,
            "worth knowing",
            "the evaluation-mode output is unchanged: only step moves running statistics",
        ),
        EdgeCase(
            "bn-fresh",
            "BatchNorm",
            "evaluation mode through a fresh layer",
            _fresh_predict,
            "worth knowing",
            "the last row (23, 7), divided by sqrt(1 + epsilon): almost unchanged",
        ),
        EdgeCase(
            "bn-1e-150",
            "BatchNorm",
            "values of 1e-150 while training",
            lambda: f"{np.abs(_train_out(_bn(), FOUR * 1e-150)).max():.2g}",
            "worth knowing",
            "largest |output|: epsilon dwarfs a variance of 1e-300, so the column is "
            "flattened towards 0, not standardised",
        ),
        EdgeCase(
            "wn-tiny",
            "WeightNormDense",
            "directions of length 1e-300",
            _tiny_direction,
            "worth knowing",
            "effective weights: the length is found after rescaling, so a tiny direction "
            "still has a unit vector",
        ),
    ]


def run_case(case: EdgeCase) -> Outcome:
    """Run one case and sort what happened."""
    try:
        answer = case.run()
    except NormcoreError as exc:
        return Outcome("refused", type(exc).__name__, str(exc), "")
    if isinstance(answer, (BatchNorm, LayerNorm, GroupNorm, WeightNormDense)):
        answer = "accepted"
    text = _short(answer)
    if case.remark:
        text = f"{text}: {case.remark}"
    return Outcome(case.answered_kind, "", "", text)


def edge_cases() -> list[tuple[EdgeCase, Outcome]]:
    """Every case run, sorted by kind (refused, arithmetic, worth knowing), then layer."""
    done = [(c, run_case(c)) for c in _cases()]
    return sorted(done, key=lambda p: (KINDS.index(p[1].kind), p[0].layer))


# ------------------------------------------------------------------------------ PyTorch
def pytorch_differences() -> list[dict[str, str]]:
    """normcore's convention beside PyTorch's, each with the number both give on the first
    column of the worked mini-batch (1, 1, 7, 23), starting from running mean 0 and variance 1.

    PyTorch's figures are computed from the formulas its documentation gives for
    ``BatchNorm1d``: running = (1 − momentum)·running + momentum·batch, with the unbiased
    variance; modules start in training mode; a training batch of one row is refused."""
    col = FOUR[:, 0]
    mean, n = float(col.mean()), col.size
    biased, unbiased = float(col.var()), float(col.var(ddof=1))
    ours = BatchNorm.create(1)
    r = ours.forward(col[:, None], "train")
    stepped = ours.step(ours.backward(r, np.zeros((n, 1))), 0.0)
    torch_momentum = 0.1
    rows = [
        {
            "difference": "momentum's name",
            "normcore": "momentum 0.9 keeps 0.9: running mean "
            f"{float(stepped.running_mean[0]):.4g}",
            "PyTorch": f"momentum 0.1 takes 0.1: running mean "
            f"{(1 - torch_momentum) * 0 + torch_momentum * mean:.4g}; "
            f"momentum=0.9 given by mistake: {(1 - 0.9) * 0 + 0.9 * mean:.4g}",
        },
        {
            "difference": "running variance",
            "normcore": f"biased ({biased:.4g} taken in): {float(stepped.running_var[0]):.4g}",
            "PyTorch": f"unbiased ({unbiased:.4g} taken in): "
            f"{(1 - torch_momentum) * 1 + torch_momentum * unbiased:.4g}",
        },
    ]
    fresh_pred = float(ours.forward(col[:, None]).output[-1, 0])
    fresh_train = float(r.output[-1, 0])
    rows.append(
        {
            "difference": "default mode",
            "normcore": f"evaluation: 23 gives {fresh_pred:.4f}",
            "PyTorch": f"training: 23 gives {fresh_train:.4f}",
        }
    )
    one = float(ours.forward(col[:1, None], "train").output[0, 0])
    rows.append(
        {
            "difference": "one-row training batch",
            "normcore": f"returned: {one:.4g}",
            "PyTorch": "refused (ValueError: more than 1 value per channel expected)",
        }
    )
    # ghost batch norm in groups of 2, (1, 1) and (7, 23): normcore folds in the groups' average
    # once; PyTorch has no such layer, and BatchNorm1d run on each group in turn folds in each
    # group's unbiased variance, one update a group
    ghost = GhostBatchNorm.create(1, 2)
    g = ghost.step(ghost.backward(ghost.forward(col[:, None], "train"), np.zeros((n, 1))), 0.0)
    t_mean, t_var = 0.0, 1.0
    for group in (col[:2], col[2:]):
        t_mean = (1 - torch_momentum) * t_mean + torch_momentum * float(group.mean())
        t_var = (1 - torch_momentum) * t_var + torch_momentum * float(group.var(ddof=1))
    rows.append(
        {
            "difference": "ghost batch, groups of 2",
            "normcore": f"GhostBatchNorm, one step: running mean "
            f"{float(g.running_mean[0]):.4g}, variance {float(g.running_var[0]):.4g}",
            "PyTorch": f"no such layer; BatchNorm1d on each group in turn: running mean "
            f"{t_mean:.4g}, variance {t_var:.4g}",
        }
    )
    return rows


def framework_defaults() -> list[dict[str, str]]:
    """The defaults and traps of the frameworks readers use, each beside normcore's convention.

    Each entry has ``framework``, ``setting`` (the call or flag), ``behaviour`` (what it does by
    default) and ``normcore`` (the book's convention, or "same"). The PyTorch entries are held
    against PyTorch itself in ``tests/test_reference.py`` when it is installed, the Keras and
    Flax entries against Keras (3.15, any backend) and Flax (``flax.linen``) themselves in
    ``tests/test_reference_frameworks.py`` when they are installed. The figures in the traps'
    lines are computed here, from the update rules the frameworks document (PyTorch's running
    statistics after one batch of the column 1, 1, 7, 23) or from float32 itself (the spacing of
    float32 numbers near the squares of Flax's example), and the tests run the frameworks on the
    same numbers."""
    col = FOUR[:, 0]
    torch_mean, torch_var = 0.1 * float(col.mean()), 0.9 + 0.1 * float(col.var(ddof=1))
    by_batch = float(BatchNorm.create(1).forward(col[:, None], "train").output[-1, 0])
    squares = float(FAST_VARIANCE_MEAN) ** 2
    spacing = float(np.spacing(np.float32(squares)))
    return [
        {
            "framework": "PyTorch",
            "setting": "BatchNorm1d/2d(momentum=0.1, eps=1e-5)",
            "behaviour": "momentum is the share taken from the batch; running variance updated "
            "with the unbiased variance",
            "normcore": "momentum 0.9 is the share kept; running variance updated with the "
            "biased variance",
        },
        {
            "framework": "PyTorch",
            "setting": "BatchNorm(momentum=None)",
            "behaviour": "a cumulative average: every batch so far weighs the same",
            "normcore": "no such mode",
        },
        {
            "framework": "PyTorch",
            "setting": "BatchNorm2d, training, one image",
            "behaviour": "allowed when height x width > 1 (statistics over the pixels)",
            "normcore": "ImageBatchNorm likewise (statistics over the pixels)",
        },
        {
            "framework": "PyTorch",
            "setting": "BatchNorm1d, training, one row",
            "behaviour": "refused (ValueError)",
            "normcore": "returns the shift (zeros)",
        },
        {
            "framework": "PyTorch",
            "setting": "InstanceNorm2d()",
            "behaviour": "affine=False, track_running_stats=False: no scale, no shift, no "
            "running statistics",
            "normcore": "InstanceNorm has a scale and a shift (affine=True)",
        },
        {
            "framework": "PyTorch",
            "setting": "RMSNorm(eps=None)",
            "behaviour": "a scale and no shift; eps None means the dtype's machine epsilon",
            "normcore": "a scale, and a shift that starts at 0 and is learned; epsilon 1e-5",
        },
        {
            "framework": "PyTorch",
            "setting": "model.eval() / torch.no_grad()",
            "behaviour": "two switches: eval() puts batch layers in evaluation mode (and turns "
            "dropout off); no_grad() only stops gradients",
            "normcore": "the mode argument",
        },
        {
            "framework": "PyTorch",
            "setting": "a fresh module",
            "behaviour": "in training mode",
            "normcore": "a fresh layer is in evaluation mode",
        },
        {
            "framework": "PyTorch",
            "setting": "bn.eval(), then model.train()",
            "behaviour": "model.train() sets every submodule back to training mode, the batch "
            "layers switched to eval() one by one included; a loop that calls model.train() "
            "each epoch undoes them",
            "normcore": "the mode is an argument of each call",
        },
        {
            "framework": "PyTorch",
            "setting": "bn.requires_grad_(False)",
            "behaviour": "stops the scale and shift (weight, bias) learning; in training mode "
            "the running statistics still move: after the column 1, 1, 7, 23, running mean "
            f"{torch_mean:.4g} and running variance {torch_var:.4g}",
            "normcore": "running statistics move only in step, whatever the gradients",
        },
        {
            "framework": "PyTorch",
            "setting": "BatchNorm(track_running_stats=False)",
            "behaviour": "keeps no running statistics (running_mean is None): in eval mode it "
            "standardises by the batch's own statistics, as in training (23 in the column "
            f"1, 1, 7, 23 gives {by_batch:.4f} in both modes)",
            "normcore": "no such option: evaluation mode always reads the running statistics",
        },
        {
            "framework": "PyTorch",
            "setting": "torchvision.ops.FrozenBatchNorm2d(eps=1e-5)",
            "behaviour": "frozen batch norm as detection code uses it: running statistics, weight "
            "and bias are all buffers, fixed; it computes x·γ/√(running_var + eps) + β − "
            "running_mean·γ/√(running_var + eps) in every mode, so train() changes nothing",
            "normcore": "no such layer: evaluation mode fixes the statistics, a step still "
            "moves scale and shift",
        },
        {
            "framework": "PyTorch",
            "setting": "SyncBatchNorm; DistributedDataParallel(forward_sync_buffers=None)",
            "behaviour": "SyncBatchNorm pools a mini-batch's statistics over every process "
            "(in one process it is BatchNorm); DDP's buffer sync (True by default; the flag "
            "was called broadcast_buffers before 2.13) copies rank 0's buffers to every rank at "
            "each forward, so with plain BatchNorm the running statistics are rank 0's, from "
            "its own images alone",
            "normcore": "one process: GhostBatchNorm averages its groups' statistics",
        },
        {
            "framework": "PyTorch",
            "setting": "LayerNorm(eps=1e-5, elementwise_affine=True, bias=True)",
            "behaviour": "eps 1e-5; bias=False keeps the scale (weight) and drops the shift",
            "normcore": "same epsilon; scale and shift always learned",
        },
        {
            "framework": "PyTorch",
            "setting": "GroupNorm(num_groups, num_channels, eps=1e-5, affine=True)",
            "behaviour": "eps 1e-5; a scale and shift per channel; bias=False drops the shift",
            "normcore": "same epsilon, scale and shift per channel",
        },
        {
            "framework": "Keras",
            "setting": "BatchNormalization(momentum=0.99, epsilon=1e-3)",
            "behaviour": "momentum is the share kept, as in normcore; running variance updated "
            "with the biased variance; "
            "epsilon 100 times PyTorch's",
            "normcore": "same naming and variance, momentum 0.9, epsilon 1e-5",
        },
        {
            "framework": "Keras",
            "setting": "BatchNormalization(axis=-1)",
            "behaviour": "axis names the kept (feature) axis, statistics over the others",
            "normcore": "no axis argument: each layer's kind fixes its statistics' axis",
        },
        {
            "framework": "Keras",
            "setting": "layer.trainable = False",
            "behaviour": "BatchNormalization then runs in inference mode, with its running "
            "statistics, even when called with training=True, and stops updating them",
            "normcore": "the mode argument",
        },
        {
            "framework": "Keras",
            "setting": "LayerNormalization(epsilon=1e-3)",
            "behaviour": "epsilon 1e-3; rms_scaling=False (True drops the mean, as RMS norm)",
            "normcore": "epsilon 1e-5",
        },
        {
            "framework": "Keras",
            "setting": "RMSNormalization(epsilon=1e-6)",
            "behaviour": "a scale and no shift; epsilon 1e-6",
            "normcore": "a scale, and a shift that starts at 0 and is learned; epsilon 1e-5",
        },
        {
            "framework": "Flax",
            "setting": "nn.BatchNorm(momentum=0.99, epsilon=1e-5)",
            "behaviour": "momentum is the share kept; running variance updated with the biased "
            "variance; "
            "use_running_average chooses evaluation mode; the running statistics live in the "
            "batch_stats collection",
            "normcore": "same naming and variance, momentum 0.9",
        },
        {
            "framework": "Flax",
            "setting": "nn.LayerNorm(epsilon=1e-6)",
            "behaviour": "epsilon 1e-6",
            "normcore": "epsilon 1e-5",
        },
        {
            "framework": "Flax",
            "setting": "nn.LayerNorm(use_fast_variance=True)",
            "behaviour": "the variance as E[x²] − E[x]², in one pass (BatchNorm and GroupNorm "
            f"share the default): float32 inputs of mean {FAST_VARIANCE_MEAN:g} and unit "
            f"spread square to about {squares:.0e}, where float32 numbers are {spacing:g} "
            "apart, as wide as the variance itself, so the outputs' spread is far from 1; "
            "use_fast_variance=False subtracts the mean first",
            "normcore": "subtracts the mean first (in float64 unless given float32)",
        },
        {
            "framework": "Flax",
            "setting": "nn.RMSNorm(epsilon=1e-6)",
            "behaviour": "a scale and no shift; epsilon 1e-6",
            "normcore": "a scale, and a shift that starts at 0 and is learned; epsilon 1e-5",
        },
    ]
