"""Tests of normcore.data: the crowd and the subscriber table of seed 004."""

from __future__ import annotations

from importlib import resources

import numpy as np
import pytest

from normcore.data import Crowd, Subscribers, load_crowd, load_subscribers, make_crowd
from normcore.data.subscribers import (
    FIELDS,
    batch_order,
    init_weights,
    shuffled_indices,
    shuffled_test_order,
    stream,
)

pytestmark = pytest.mark.numeric  # figures from float arithmetic: make test-arith reruns it

# --------------------------------------------------------------------------- the crowd


def test_crowd_shapes_and_dtypes() -> None:
    crowd = load_crowd()
    assert isinstance(crowd, Crowd)
    assert len(crowd) == 25
    assert crowd.features.shape == (25, 2)
    assert crowd.features.dtype == np.float64
    assert crowd.labels.shape == (25,)
    assert crowd.labels.dtype == np.float64
    assert set(crowd.labels.tolist()) == {0.0, 1.0}
    np.testing.assert_array_equal(crowd.features[:, 0], crowd.height)
    np.testing.assert_array_equal(crowd.features[:, 1], crowd.weight)


def test_crowd_is_plausible_and_correlated() -> None:
    crowd = load_crowd()
    assert np.all((crowd.height >= 140) & (crowd.height <= 200))
    assert np.all((crowd.weight >= 40) & (crowd.weight <= 110))
    np.testing.assert_array_equal(np.round(crowd.features, 1), crowd.features)
    assert np.corrcoef(crowd.height, crowd.weight)[0, 1] > 0.5


def test_crowd_csv_equals_what_make_crowd_regenerates() -> None:
    shipped = resources.files("normcore.data").joinpath("crowd.csv").read_text(encoding="utf-8")
    assert shipped == make_crowd.render_csv(*make_crowd.generate())
    assert shipped.startswith("#")


def test_crowd_classes_overlap_in_the_middle() -> None:
    crowd = load_crowd()
    zero, one = crowd.label == 0, crowd.label == 1
    assert 5 <= zero.sum() <= 20 and 5 <= one.sum() <= 20
    # label 1 is taller and heavier on average ...
    assert crowd.height[one].mean() > crowd.height[zero].mean()
    assert crowd.weight[one].mean() > crowd.weight[zero].mean()
    # ... but some label-0 person is taller / heavier than some label-1 person
    assert crowd.height[zero].max() > crowd.height[one].min()
    assert crowd.weight[zero].max() > crowd.weight[one].min()
    # several people of each label stand in the band where both labels occur (by height)
    low, high = crowd.height[one].min(), crowd.height[zero].max()
    band = (crowd.height >= low) & (crowd.height <= high)
    assert (band & zero).sum() >= 3 and (band & one).sum() >= 3


def test_crowd_arrays_are_read_only() -> None:
    crowd = load_crowd()
    with pytest.raises(ValueError):
        crowd.height[0] = 0.0


# --------------------------------------------------------------------------- subscribers


def test_subscriber_shapes() -> None:
    data = load_subscribers()
    assert isinstance(data, Subscribers)
    assert data.x_train.shape == (300, 12) and data.x_train.dtype == np.float64
    assert data.y_train.shape == (300,) and data.y_train.dtype == np.float64
    assert data.x_test.shape == (252, 12) and data.x_test.dtype == np.float64
    assert data.y_test.shape == (252,) and data.y_test.dtype == np.float64
    assert data.fields == FIELDS and len(data.fields) == 12
    assert set(np.unique(np.concatenate([data.y_train, data.y_test])).tolist()) == {0.0, 1.0}
    assert len(data.rows) == 1260 and len(data.train_rows) == 300 and len(data.test_rows) == 252


def test_subscriber_figures_printed_by_seed_004() -> None:
    """The seed's printed figures: a 12-16-1 network with 225 parameters, 300 training and
    252 test rows, baseline 0.7579, linear model 0.8016, decision tree 0.7857 (4 decimals)."""
    data = load_subscribers()
    assert f"{data.baseline:.4f}" == "0.7579"
    assert f"{data.linear_line:.4f}" == "0.8016"
    assert f"{data.tree_line:.4f}" == "0.7857"
    assert data.baseline == np.mean(data.y_test == 0.0)
    layers = init_weights(20260218 + 1, [(len(data.fields), 16), (16, 1)])
    assert sum(w.size + b.size for w, b in layers) == 225
    assert (len(data.y_train), len(data.y_test)) == (300, 252)


def test_training_columns_are_standardised() -> None:
    data = load_subscribers()
    np.testing.assert_allclose(data.x_train.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(data.x_train.std(axis=0), 1.0, rtol=1e-12)
    raw = np.array([[row.value(f) for f in data.fields] for row in data.test_rows], dtype=float)
    np.testing.assert_allclose(data.x_test, (raw - data.mean) / data.std, rtol=1e-15, atol=0)
    area = data.x_train[
        :, [data.fields.index(f"area_{a}") for a in ("north", "south", "east", "west", "central")]
    ]
    assert np.all((area > 0).sum(axis=1) == 1)  # exactly one area per subscriber


def test_load_subscribers_is_cached_and_read_only() -> None:
    assert load_subscribers() is load_subscribers()
    with pytest.raises(ValueError):
        load_subscribers().x_train[0, 0] = 1.0


def test_stream_and_shuffles() -> None:
    draw = stream(20260218)
    values = [draw() for _ in range(1000)]
    assert all(0.0 <= v < 1.0 for v in values)
    again = stream(20260218)
    assert values == [again() for _ in range(1000)]
    for n in (1, 2, 300):
        assert sorted(shuffled_indices(7, n)) == list(range(n))
    first, second = batch_order(0), batch_order(1)
    assert first.shape == (300,) and sorted(first.tolist()) == list(range(300))
    assert not np.array_equal(first, second)
    np.testing.assert_array_equal(batch_order(0), first)
    order = shuffled_test_order()
    assert order.shape == (252,) and sorted(order.tolist()) == list(range(252))


def test_init_weights_layout_and_range() -> None:
    layers = init_weights(5, [(12, 16), (16, 1)], gain=2.0)
    (w1, b1), (w2, b2) = layers
    assert w1.shape == (12, 16) and b1.shape == (16,)
    assert w2.shape == (16, 1) and b2.shape == (1,)
    assert np.all(b1 == 0.0) and np.all(b2 == 0.0)
    assert np.all(np.abs(w1) < np.sqrt(6 * 2.0 / 12))
    assert np.all(np.abs(w2) < np.sqrt(6 * 2.0 / 16))
    # draw j * fan_in + k of the first layer lands in W[k, j]
    draw = stream(5)
    limit = np.sqrt(6 * 2.0 / 12)
    first_unit = [(draw() * 2 - 1) * limit for _ in range(12)]
    np.testing.assert_array_equal(w1[:, 0], first_unit)
    assert (draw() * 2 - 1) * limit == w1[0, 1]
