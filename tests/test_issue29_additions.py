"""The measurements chapters 5-7 gained in issue 29, held against definitions and slow routes."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from normcore.errors import NormcoreError
from normcore.exercises import ch05
from normcore.experiments import comparison, network, weightnorm
from normcore.experiments import rates as R

pytestmark = pytest.mark.numeric  # figures from float arithmetic: make test-arith reruns it


@pytest.fixture(scope="module")
def two_seeds():
    blocks = comparison.fold_blocks((0, 1))
    scores = {a: comparison.compare_variant(a, blocks, epochs=40) for a in ("none", "batch")}
    return blocks, scores


def test_people_correct_puts_each_verdict_at_its_person(two_seeds):
    blocks, scores = two_seeds
    s = scores["batch"]
    assert s.held_correct.shape == (2, 25)
    np.testing.assert_allclose(s.held_correct.mean(axis=1), s.held_accuracy)
    # person i sits in fold i % 5, at position i // 5 of that fold's held rows
    logits = network.forward(s.net, blocks.x_held).logits
    right = (logits > 0) == (blocks.y_held > 0.5)
    for seed in range(2):
        for person in range(25):
            run = seed * 5 + person % 5
            assert s.held_correct[seed, person] == right[run, person // 5]


def test_paired_people_against_itself_is_zero_and_intervals_are_ordered(two_seeds):
    _, scores = two_seeds
    same = comparison.paired_people(scores, "none", "none")
    assert same.difference == 0 and same.worse == same.better == 0
    assert same.people_interval == (0.0, 0.0)
    p = comparison.paired_people(scores, "batch")
    assert p.people_interval[0] <= p.difference <= p.people_interval[1]
    assert p.seed_interval[0] <= p.difference <= p.seed_interval[1]
    np.testing.assert_allclose(
        p.difference, scores["batch"].held_accuracy.mean() - scores["none"].held_accuracy.mean()
    )
    assert p.worse + p.better <= 25


def test_recalibrated_statistics_are_the_training_rows_own(two_seeds):
    blocks, scores = two_seeds
    acc = comparison.recalibrated_held_accuracy(scores["batch"], blocks)
    assert acc.shape == (2,) and np.all((0 <= acc) & (acc <= 1))
    # asked in evaluation mode with recomputed figures, the training rows are standardised exactly
    # as training mode standardises them (biased variance, same epsilon)
    net = scores["batch"].net
    from normcore.sequential import Sequential

    seen = Sequential((net.hidden, net.relu)).forward(blocks.x_train).output
    fixed = dataclasses.replace(
        net,
        norm=dataclasses.replace(
            net.norm, running_mean=seen.mean(axis=-2), running_var=seen.var(axis=-2)
        ),
    )
    np.testing.assert_allclose(
        network.forward(fixed, blocks.x_train, "eval").logits,
        network.forward(net, blocks.x_train, "train").logits,
        rtol=1e-10,
        atol=1e-12,
    )
    with pytest.raises(NormcoreError):
        comparison.recalibrated_held_accuracy(scores["none"], blocks)


def test_whole_crowd_losses_stack_the_curves():
    stacked = comparison.whole_crowd_losses("layer", (0, 3), epochs=30)
    for k, seed in enumerate((0, 3)):
        one = comparison.curves(["layer"], seed=seed, epochs=30)["layer"].loss
        np.testing.assert_allclose(stacked[:, k], one, rtol=1e-12, atol=1e-14)
    assert comparison.spikes(np.array([1.0, 1.2, 1.0, 1.05, 1.5])) == 2


def test_length_gap_and_second_order_constant_against_the_steps():
    case = weightnorm.make_case(seed=11)
    for rate in (0.01, 0.1, 0.3):
        step = weightnorm.one_step(case, rate)
        np.testing.assert_allclose(
            step.length_dense - step.length_weightnorm,
            weightnorm.length_gap(case, rate),
            rtol=1e-7,
            atol=1e-15,
        )
    c = weightnorm.second_order_constant(case)
    ratio = weightnorm.one_step(case, 1e-3).distance / 1e-6
    assert abs(ratio / c - 1) < 5e-3
    np.testing.assert_allclose(weightnorm.turning_factor(case.weightnorm), 1.0, rtol=1e-12)


def test_data_dependent_start_standardises_the_batch():
    x = np.random.default_rng(3).normal(size=(30, 2)) * [1.0, 5.0] + [2.0, -1.0]
    layer = weightnorm.make_case().weightnorm
    started = weightnorm.data_dependent_start(layer, x)
    t = started.forward(x).output
    np.testing.assert_allclose(t.mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(t.std(axis=0), 1, rtol=1e-12)
    np.testing.assert_array_equal(started.direction, layer.direction)
    with pytest.raises(NormcoreError):
        weightnorm.data_dependent_start(layer, np.ones((4, 2)))


def test_gap_factor_checker_names_the_first_order_mistake():
    assert ch05.check_gap_factor(4).right
    assert "first order" in ch05.check_gap_factor(2)
    assert not ch05.check_gap_factor(8).right


def test_batch_probabilities_agree_with_predict_in_any_order():
    data = R.subscribers()
    net = R.train(R.RUN_SEEDS[0], 0.05, True).net
    orders = np.stack([np.random.default_rng(k).permutation(len(data.y_test)) for k in range(3)])
    stacked = R.batch_probabilities(net, data.x_test, orders)
    for order, row in zip(orders, stacked, strict=True):
        np.testing.assert_allclose(
            row, R.predict(net, data.x_test, "batch", order=order), rtol=1e-12, atol=1e-15
        )
    spread = R.order_spread(net, data.x_test, data.y_test, orders=20, seed=0)
    assert spread.accuracies.shape == (20,) and 0 <= spread.percentile_of_in_order <= 100
    sorted_by = R.sorted_orders(data.x_test, data.y_test, features=[0])
    labels = np.asarray(data.y_test)[sorted_by["label, ones last"]]
    assert np.all(np.diff(labels) >= 0)
    with pytest.raises(NormcoreError):
        R.batch_probabilities(net, data.x_test, orders[:, :10])


def test_stable_bracket_brackets():
    b = R.stable_bracket([5.0, 10.0, 12.5], False)
    assert (b.last_stable, b.first_unstable) == (10.0, 12.5)
    assert np.all(b.losses[:2] < 1) and not np.all(b.losses[2] < 1)
    with pytest.raises(NormcoreError):
        R.stable_bracket([10.0, 5.0], False)


def test_batch_before_relu_is_stacking_invariant_and_differs_from_after():
    both = comparison.batch_before_relu((0, 1), epochs=30)
    alone = comparison.batch_before_relu((1,), epochs=30)
    assert both.shape == (2,) and alone[0] == both[1]
    after = comparison.compare(["batch"], (0, 1), epochs=30)["batch"].held_accuracy
    assert np.all((0 <= both) & (both <= 1))
    # the order makes a different network: its first forward pass already differs
    net = network.build("batch", [0])
    from normcore.sequential import Sequential

    x = comparison.fold_blocks((0,)).x_train[:1]
    pre = Sequential((net.hidden, net.norm, net.relu, net.output)).forward(x, "train")
    post = network.forward(net, x, "train")
    assert not np.allclose(pre.output[..., 0], post.logits)
    assert after.shape == (2,)
