"""Chapter 7's experiment: the learning rate a batch layer allows, dead units, and the three ways
to ask a trained network.

A 12-16-1 network is trained on the fictional subscriber table at four learning rates, with and
without a batch layer, two runs each, and held against the table a plain-Python reference program
printed. The package is split by job:

* `data`: the settings, the subscriber table and the printed reference figures (the oracle);
* `network`: the network as a `normcore.Sequential`, and the ways of asking it (`predict`,
  `dead_units`, `three_ways`);
* `trainer`: one batch (`train_step`), one run (`train`), many runs along a leading axis
  (`train_many`);
* `replay`: the reference program's arithmetic, operation by operation, each sum in a stated order
  (`train_in_order`), to measure what the order of adding changes;
* `results`: the sweep over every setting (`sweep`);
* `tables`: the sweep as the chapter shows it, and each cell beside the printed one;
* `lengths`: the hidden weights' lengths at the start and the end of the sweep's runs, and the
  effective rate they set behind the batch layer (`lengths`, `scale_change`).

Everything a chapter or a test needs is importable from here: ``from normcore.experiments import
rates as R``; ``R.sweep()``.
"""

from __future__ import annotations

from .data import (
    BATCH,
    CLIP,
    COLUMNS,
    DECIMALS,
    EPOCHS,
    EPSILON,
    HIDDEN,
    MOMENTUM,
    RATES,
    REFERENCE_SETUP,
    REFERENCE_TABLE,
    REFERENCE_THREE_WAYS,
    RUN_SEEDS,
    SENSITIVE,
    subscribers,
)
from .lengths import (
    BLIND_BELOW,
    BRAKE_AT_LEAST,
    BRAKE_RATES,
    FALLS_FROM,
    SEES_LENGTH,
    Lengths,
    length_table,
    lengths,
    scale_change,
    scaled,
    unit_lengths,
)
from .network import (
    SubscriberNet,
    ThreeWays,
    accuracy,
    build,
    build_many,
    clipped_loss,
    dead_units,
    predict,
    three_ways,
)
from .orders import (
    NEAR_SUBSCRIBERS,
    SORTED_DEVIATIONS,
    TEN_NEAR_SUBSCRIBERS,
    OrderSpread,
    batch_probabilities,
    order_spread,
    sorted_orders,
)
from .replay import OrderNet, nan_units, train_in_order, train_in_order_many
from .results import Bracket, SweepRow, largest_stable_rate, stable_bracket, sweep
from .tables import CHAOTIC, Cell, compare_with_reference, comparison_table, shown, sweep_table
from .trainer import Run, pin_lengths, train, train_many, train_step

__all__ = [
    "BLIND_BELOW",
    "BRAKE_AT_LEAST",
    "BRAKE_RATES",
    "FALLS_FROM",
    "SEES_LENGTH",
    "NEAR_SUBSCRIBERS",
    "SORTED_DEVIATIONS",
    "TEN_NEAR_SUBSCRIBERS",
    "BATCH",
    "CHAOTIC",
    "CLIP",
    "COLUMNS",
    "DECIMALS",
    "EPOCHS",
    "EPSILON",
    "HIDDEN",
    "MOMENTUM",
    "RATES",
    "REFERENCE_SETUP",
    "REFERENCE_TABLE",
    "REFERENCE_THREE_WAYS",
    "RUN_SEEDS",
    "SENSITIVE",
    "Bracket",
    "Cell",
    "Lengths",
    "OrderSpread",
    "OrderNet",
    "Run",
    "SubscriberNet",
    "SweepRow",
    "ThreeWays",
    "accuracy",
    "batch_probabilities",
    "build",
    "build_many",
    "clipped_loss",
    "compare_with_reference",
    "comparison_table",
    "dead_units",
    "largest_stable_rate",
    "length_table",
    "lengths",
    "nan_units",
    "order_spread",
    "predict",
    "shown",
    "scale_change",
    "scaled",
    "sorted_orders",
    "stable_bracket",
    "subscribers",
    "sweep",
    "sweep_table",
    "three_ways",
    "train",
    "train_in_order",
    "train_in_order_many",
    "train_many",
    "train_step",
    "pin_lengths",
    "unit_lengths",
]
