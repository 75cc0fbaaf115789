"""Chapter 6's comparison: folds, stacking, determinism."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import numpy as np
import pytest

from normcore.data import load_crowd
from normcore.errors import NormcoreError, SettingError
from normcore.experiments import comparison, network

pytestmark = pytest.mark.numeric  # figures from float arithmetic: make test-arith reruns it


def test_folds_hold_everyone_out_once():
    folds = comparison.deal_folds()
    assert folds.shape == (25,)
    assert np.array_equal(np.bincount(folds), [5] * 5)


def test_standardised_on_training_rows_only():
    blocks = comparison.fold_data((0,))
    np.testing.assert_allclose(blocks.x_train.mean(axis=1), 0, atol=1e-12)
    np.testing.assert_allclose(blocks.x_train.std(axis=1), 1, atol=1e-12)
    # the held-out rows use the training rows' figures, worked out here independently
    crowd = load_crowd()
    x = crowd.features
    train = np.arange(25) % 5 != 2
    expected = (x[~train] - x[train].mean(axis=0)) / x[train].std(axis=0)
    np.testing.assert_allclose(blocks.x_held[2], expected, atol=1e-12)


@pytest.mark.parametrize("variant", network.VARIANTS)
def test_stacked_runs_reproduce_single_runs(variant):
    blocks = comparison.fold_data((0, 1))
    net = network.build(variant, blocks.run_seeds)
    _, stacked = network.train(net, blocks.x_train, blocks.y_train, epochs=10)
    for r in (0, 3, 7):
        one = slice(r, r + 1)
        single_net = network.build(variant, [blocks.run_seeds[r]])
        _, single = network.train(single_net, blocks.x_train[one], blocks.y_train[one], epochs=10)
        assert single.loss[0, 0] == stacked.loss[0, r]
        np.testing.assert_allclose(single.loss[:, 0], stacked.loss[:, r], rtol=0, atol=1e-12)


def test_lean_training_matches_the_watching_route():
    blocks = comparison.fold_data((0,))
    for variant in network.VARIANTS:
        a = network.train(
            network.build(variant, blocks.run_seeds),
            blocks.x_train,
            blocks.y_train,
            epochs=30,
            two_ways=True,
        )[1]
        b = network.train(
            network.build(variant, blocks.run_seeds),
            blocks.x_train,
            blocks.y_train,
            epochs=30,
            watch=True,
        )[1]
        assert np.array_equal(a.loss, b.loss)
        assert np.array_equal(a.accuracy_predicting, b.accuracy_predicting)
        assert np.array_equal(a.accuracy_batch, b.accuracy_batch)


def _summary() -> dict:
    r = comparison.run_all(epochs=40)
    return {
        k: [s.held_accuracy.tolist(), s.train_loss.tolist(), r.curves[k].loss.tolist()]
        for k, s in r.scores.items()
    }


def test_deterministic_in_process_and_across_processes():
    first = _summary()
    assert first == _summary()
    code = "import json, tests.test_comparison as t; print(json.dumps(t._summary()))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=str(__import__("pathlib").Path(__file__).parent.parent),
    )
    assert json.loads(out.stdout) == json.loads(json.dumps(first))


def test_run_all_stays_in_one_process(monkeypatch):
    import os

    def no_fork():
        raise AssertionError("run_all must not fork: notebook kernels hold ZMQ and BLAS threads")

    monkeypatch.setattr(os, "fork", no_fork)
    r = comparison.run_all(variants=("none",), epochs=3)
    assert set(r.scores) == set(r.curves) == {"none"}


@pytest.fixture(scope="module")
def table_runs():
    return comparison.run_all()


def _shown(scores: comparison.Scores) -> tuple[str, ...]:
    """The figures chapter 6's table prints for one variant, as printed."""
    return (
        f"{scores.train_accuracy.mean():.3f}",
        f"{scores.held_accuracy.mean():.3f}",
        f"{scores.held_accuracy.min():.2f}",
        f"{scores.held_accuracy.max():.2f}",
        f"{scores.train_loss.mean():.4f}",
        f"{scores.held_loss.mean():.3f}",
    )


@pytest.mark.parametrize("variant", network.VARIANTS)
def test_printed_table_survives_a_last_bit_nudge(table_runs, variant):
    """Every figure chapter 6 prints is the same when every starting weight of all 25 runs moves
    by one unit in the last place: the chapter's run length is not chaotic."""
    built = table_runs.scores[variant]
    blocks = comparison.fold_data()
    net = comparison.nudged(network.build(variant, blocks.run_seeds))
    net, history = network.train(
        net, blocks.x_train, blocks.y_train, comparison.EPOCHS, comparison.RATE
    )
    moved = comparison.score(variant, blocks, net, history.loss)
    assert not np.array_equal(history.loss, built.run_loss)  # the nudge did reach the arithmetic
    assert _shown(moved) == _shown(built)


def test_the_story_is_the_same_at_400_epochs():
    """The chapter trains for 200 epochs because 400 are chaotic; the verdicts it draws hold at
    400 too (held out below the plain network's worst seed for every inserted layer, weight
    normalisation inside its range)."""
    long = comparison.compare(epochs=2 * comparison.EPOCHS)
    verdict = comparison.spread_verdict(long)
    assert [verdict[k] for k in ("batch", "layer", "rms", "weight")] == ["below"] * 3 + ["inside"]


def test_first_under_and_verdict():
    assert comparison.first_under(np.array([0.9, 0.5, 0.29, 0.1])) == 3
    assert comparison.first_under(np.array([0.9, 0.5])) is None
    a, b = np.array([0.5, 0.4, 0.3, 0.2]), np.array([0.5, 0.405, 0.32, 0.2])
    assert comparison.first_apart(a, b) == 3  # counted from 1, strictly more than 0.01
    assert comparison.first_apart(a, b, tolerance=0.05) is None
    overlap = comparison.in_overlap()
    assert overlap.shape == (25,) and overlap.dtype == bool
    # with every other person as a neighbour, "the overlap" is the smaller class (12 of 24 or more)
    labels = np.asarray(load_crowd().labels).ravel()
    assert np.array_equal(comparison.in_overlap(24), [np.sum(labels != y) >= 12 for y in labels])
    s = {
        "none": comparison.Scores(
            "none",
            np.zeros(3),
            np.array([0.6, 0.7, 0.8]),
            np.zeros(3),
            np.zeros(3),
            np.zeros((1, 3)),
        ),
        "a": comparison.Scores(
            "a", np.zeros(3), np.array([0.5, 0.5, 0.5]), np.zeros(3), np.zeros(3), np.zeros((1, 3))
        ),
        "b": comparison.Scores(
            "b", np.zeros(3), np.array([0.9, 0.9, 0.9]), np.zeros(3), np.zeros(3), np.zeros((1, 3))
        ),
    }
    assert comparison.spread_verdict(s) == {"none": "inside", "a": "below", "b": "above"}


# ------------------------------------------------------------- the network is its layers in order
def _by_hand(net, x, y, epochs, rate, naive=False):
    """The crowd network trained by calling every layer by hand, in the order the network is
    written (hidden, ReLU, normaliser, output; back again; every layer stepped): the reference
    that `network.train`, which hands the layers to one `Sequential`, is held to."""
    from normcore.loss import binary_cross_entropy
    from normcore.standardise import naive_backward

    hidden, relu, norm, output = net.hidden, net.relu, net.norm, net.output
    losses = []
    for _ in range(epochs):
        h = hidden.forward(x, "train")
        a = relu.forward(h.output, "train")
        n = norm.forward(a.output, "train") if norm is not None else None
        o = output.forward(n.output if n is not None else a.output, "train")
        loss = binary_cross_entropy(o.output[..., 0], y, stack_axes=1)
        losses.append(loss.value)
        g_out = output.backward(o, loss.grad[..., None])
        d = g_out.grad_input
        if norm is not None:
            g_norm = norm.backward(n, d)
            d = (
                naive_backward(n.cache, d * norm.aligned(norm.scale, d))
                if naive
                else g_norm.grad_input
            )
            norm = norm.step(g_norm, rate)
        g_hidden = hidden.backward(h, relu.backward(a, d).grad_input)
        hidden, output = hidden.step(g_hidden, rate), output.step(g_out, rate)
    return network.CrowdNetwork(hidden=hidden, norm=norm, output=output, relu=relu), losses


@pytest.mark.parametrize("variant", network.VARIANTS)
def test_sequential_training_is_the_layers_called_by_hand(variant):
    blocks = comparison.fold_data((0, 3))
    for naive in (False, True) if variant in ("batch", "layer", "rms") else (False,):
        start = network.build(variant, blocks.run_seeds)
        net, history = network.train(start, blocks.x_train, blocks.y_train, 25, 0.7, naive=naive)
        ref, losses = _by_hand(start, blocks.x_train, blocks.y_train, 25, 0.7, naive=naive)
        assert np.array_equal(history.loss, np.array(losses))
        for mine, theirs in zip(net.layers, ref.layers, strict=True):
            for field in (
                "weights",
                "direction",
                "magnitude",
                "bias",
                "scale",
                "shift",
                "running_mean",
                "running_var",
            ):
                if hasattr(theirs, field):
                    assert np.array_equal(getattr(mine, field), getattr(theirs, field)), field
    # the naive route does change the training (it is not the true backward pass)
    if variant == "batch":
        true = network.train(start, blocks.x_train, blocks.y_train, 25, 0.7)[1].loss
        assert not np.array_equal(true, history.loss)


def test_forward_names_the_sequential_parts():
    net = network.build("batch", [0, 1])
    x = comparison.fold_data((0,)).x_train[:2]
    p = network.forward(net, x, "train")
    h, a, n, o = p.responses
    assert h.layer is net.hidden and a.layer is net.relu and n.layer is net.norm
    assert o.layer is net.output
    assert np.array_equal(p.read, n.output) and p.logits.shape == (2, 20)
    assert network.forward(network.build("none", [0]), x[:1]).responses[2] is None


# --------------------------------------------------------------------- the chapter's shortcuts
def test_losses_one_at_a_time_are_the_slow_route():
    losses = comparison.losses_one_at_a_time("rms", seeds=(1,), epochs=4)
    slow = comparison.compare_one_at_a_time("rms", seeds=(1,), epochs=4)
    assert losses.shape == (4, 5) and np.array_equal(losses, slow.run_loss)


def test_sensitivities_continue_the_same_runs():
    """One run of 60 epochs scored at 30 and 60 says what two runs of 30 and 60 say."""
    short, long = comparison.sensitivities("layer", seeds=(4,), lengths=(30, 60))
    assert short == comparison.sensitivity("layer", seeds=(4,), epochs=30)
    assert long == comparison.sensitivity("layer", seeds=(4,), epochs=60)
    assert (short.epochs, long.epochs) == (30, 60)
    # worked out here from two separate stacks, built and nudged: the nudge moves the losses
    blocks = comparison.fold_data((4,))
    built = network.train(
        network.build("layer", blocks.run_seeds),
        blocks.x_train,
        blocks.y_train,
        30,
        comparison.RATE,
    )[0]
    moved = network.train(
        comparison.nudged(network.build("layer", blocks.run_seeds)),
        blocks.x_train,
        blocks.y_train,
        30,
        comparison.RATE,
    )[0]
    a = comparison.score("layer", blocks, built, np.zeros((1, 5)))
    b = comparison.score("layer", blocks, moved, np.zeros((1, 5)))
    np.testing.assert_allclose(
        short.train_loss, np.max(np.abs(a.train_loss - b.train_loss)), rtol=0.5, atol=1e-15
    )
    assert 0 < short.train_loss < 1e-6
    with pytest.raises(SettingError):
        comparison.sensitivities("layer", lengths=(60, 30))


def test_nudged_moves_only_the_runs_asked():
    net = network.build("weight", [0, 1])
    moved = comparison.nudged(net, slice(1, None))
    assert np.array_equal(moved.hidden.direction[0], net.hidden.direction[0])
    assert np.all(moved.hidden.direction[1] > net.hidden.direction[1])


def test_chapter_6_checkers():
    from normcore.exercises import PROMPT, ch06

    scores = comparison.compare(["none", "rms"])
    people = round(float(scores["none"].held_accuracy[0]) * 25)
    assert ch06.check_held_out_people(None) == PROMPT
    assert ch06.check_held_out_people(people) == "right"
    assert ch06.check_held_out_people(people + 1).startswith("not yet")
    first = comparison.curves(["none"], rate=0.5)["none"].first_under
    assert ch06.check_first_under_half_rate(first) == "right"
    assert ch06.check_first_under_half_rate(first - 1).startswith("not yet")
    # counted here seed by seed, in people out of 25
    count = sum(
        round(r * 25) >= round(n * 25)
        for r, n in zip(scores["rms"].held_accuracy, scores["none"].held_accuracy, strict=True)
    )
    assert ch06.check_rms_seeds_holding_up(None) == PROMPT
    assert ch06.check_rms_seeds_holding_up(count) == "right"
    assert ch06.check_rms_seeds_holding_up(count + 1).startswith("not yet")


# ------------------------------------------------------------------------------------ the widget
@pytest.fixture(scope="module")
def short_runs():
    return comparison.run_all(epochs=20).scores


def test_widget_averages_the_seeds_ticked(short_runs):
    from normcore.widgets import comparison_model as cm
    from normcore.widgets.comparison import comparison_widget

    w = comparison_widget(short_runs)
    assert w.state == {"variants": list(network.VARIANTS), "seeds": [0, 1, 2, 3, 4]}
    w.act(cm.toggle_seed, 2, False)
    w.act(cm.toggle_variant, "layer", False)
    w.act(cm.toggle_variant, "layer", True)  # ticked again: shown in the book's order
    w.act(cm.toggle_variant, "none", False)
    f = w.figures_for()
    assert f["variants"] == ["batch", "layer", "rms", "weight"] and f["seeds"] == 4
    for i, key in enumerate(f["variants"]):
        s = short_runs[key]
        at = [0, 1, 3, 4]
        for field in cm.FIELDS:
            assert f[field][i] == pytest.approx(getattr(s, field)[at].mean(), rel=1e-11)
        assert f["held_low"][i] == pytest.approx(s.held_accuracy[at].min(), rel=1e-11)
        assert f["held_high"][i] == pytest.approx(s.held_accuracy[at].max(), rel=1e-11)
    # every figure the widget stores has 12 significant figures at most
    for per_field in w.results["figures"].values():
        for values in per_field.values():
            assert all(float(f"{v:.12g}") == v for v in values)


def test_widget_errors_are_sentences(short_runs):
    from normcore.widgets import comparison_model as cm
    from normcore.widgets.comparison import comparison_widget

    w = comparison_widget(short_runs, variants=("none",), seeds=(0,))
    w.act(cm.toggle_seed, 0, False)
    assert w.figures_for() == {
        "error": "Tick at least one seed: every figure is a mean over the seeds ticked."
    }
    w.state = {"variants": [], "seeds": [0]}
    assert w.figures_for()["error"].startswith("Tick at least one variant")
    w.state = {"variants": ["none", "group"], "seeds": [0, 9]}
    assert w.figures_for() == {"error": "The chapter has no runs for group, 9."}
    with pytest.raises(SettingError):
        cm.figures(w.state, w.results)


def test_widget_says_where_it_runs():
    from normcore.widgets._esm import bundle

    js = bundle("comparison.js")
    assert "Runs in this page" in js and "no kernel needed" in js


@pytest.mark.parametrize("seeds", [(0, 1, 2, 3, 4), (0, 3), (2,)])
def test_widget_pairs_people_as_the_chapter_does(short_runs, seeds):
    """The widget's paired table, over the seeds ticked, is `comparison.paired_people` over
    those seeds' verdicts (the chapter's bootstrap draws, the same generator)."""
    import dataclasses

    from normcore.widgets.comparison import comparison_widget

    w = comparison_widget(short_runs, seeds=seeds)
    f = w.figures_for()
    assert f["paired"] == ["batch", "layer", "rms", "weight"]
    at = [comparison.SEEDS.index(s) for s in seeds]
    subset = {
        k: dataclasses.replace(s, held_correct=s.held_correct[at]) for k, s in short_runs.items()
    }
    for i, key in enumerate(f["paired"]):
        p = comparison.paired_people(subset, key)
        q = comparison.paired_exact(subset, key)  # the widget's interval over seeds uses t
        assert f["paired_gap"][i] == pytest.approx(p.difference, rel=1e-12, abs=1e-15)
        assert f["paired_people_low"][i] == pytest.approx(p.people_interval[0], abs=1e-12)
        assert f["paired_people_high"][i] == pytest.approx(p.people_interval[1], abs=1e-12)
        assert f["paired_seed_low"][i] == pytest.approx(q.seed_interval[0], abs=1e-12)
        assert f["paired_seed_high"][i] == pytest.approx(q.seed_interval[1], abs=1e-12)
        assert (f["paired_worse"][i], f["paired_better"][i]) == (p.worse, p.better)


@pytest.fixture(scope="module")
def two_seeds():
    blocks = comparison.fold_data((0, 1))
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
            net.norm,
            running_mean=seen.mean(axis=-2),
            running_var=seen.var(axis=-2),
            running_divisor=None,
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


def test_batch_before_relu_is_stacking_invariant_and_differs_from_after():
    both = comparison.batch_before_relu((0, 1), epochs=30)
    alone = comparison.batch_before_relu((1,), epochs=30)
    assert both.shape == (2,) and alone[0] == both[1]
    after = comparison.compare(["batch"], (0, 1), epochs=30)["batch"].held_accuracy
    assert np.all((0 <= both) & (both <= 1))
    # the order makes a different network: its first forward pass already differs
    net = network.build("batch", [0])
    from normcore.sequential import Sequential

    x = comparison.fold_data((0,)).x_train[:1]
    pre = Sequential((net.hidden, net.norm, net.relu, net.output)).forward(x, "train")
    post = network.forward(net, x, "train")
    assert not np.allclose(pre.output[..., 0], post.logits)
    assert after.shape == (2,)
