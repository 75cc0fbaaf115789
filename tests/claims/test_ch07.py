"""Chapter 7's conclusions, re-run on starting weights the chapter never uses.

The chapter's two runs start from the reference program's weights for two seeds; here fresh seeds
give fresh starting weights (the same initialiser), and the subscriber table stays the chapter's.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from normcore.claims import fresh, record
from normcore.experiments import rates as R

PAIRS = 10  # pairs of fresh seeds, each pair one "two runs" setting as in the chapter
PLAIN_GRID = (5.0, 7.5, 10.0, 12.5, 15.0, 17.5, 20.0)
NORM_GRID = (15.0, 20.0, 25.0, 30.0, 35.0, 40.0, 50.0, 60.0)
NETS = fresh(20, start=2000)
SEEDS_ONLY = ("initial seeds",)
SEEDS_AND_ORDERS = ("initial seeds", "row orders")


def _pairs():
    seeds = fresh(2 * PAIRS)
    return [seeds[2 * k : 2 * k + 2] for k in range(PAIRS)]


@cache
def brackets() -> list[tuple[R.Bracket, R.Bracket]]:
    return [
        (R.stable_bracket(PLAIN_GRID, False, pair), R.stable_bracket(NORM_GRID, True, pair))
        for pair in _pairs()
    ]


GRID_SETTING = (
    f"{PAIRS} pairs of fresh starting weights (seeds {fresh()[0]}-{fresh()[0] + 2 * PAIRS - 1}),"
    " both runs under a loss of 1 after 30 epochs, grids in steps of 2.5 from 5 (plain) and of 5"
    " to 10 from 15 (normalised)"
)


def test_normalised_network_allows_a_larger_rate():
    """'On every fresh pair the normalised network was stable at a rate where the plain one was
    not', and 'the ratio of the two last stable rates was at least 2 on most pairs' (and 3, the
    printed pair's figure, on some, and more than 3 on at most one pair in ten: 'about two to
    three times')."""
    beyond = twice = three = more = 0
    for plain, norm in brackets():
        assert plain.last_stable and plain.first_unstable and norm.last_stable
        assert norm.first_unstable, "the normalised grid must reach an unstable rate"
        beyond += norm.last_stable >= plain.first_unstable
        ratio = norm.last_stable / plain.last_stable
        twice += ratio >= 2
        three += ratio >= 3
        more += ratio > 3
    record(
        "ch07",
        "normalised_stable_beyond_plain",
        held=int(beyond),
        of=PAIRS,
        setting=GRID_SETTING,
        resampled=SEEDS_ONLY,
    )
    record(
        "ch07",
        "factor_at_least_two",
        held=int(twice),
        of=PAIRS,
        setting=GRID_SETTING,
        resampled=SEEDS_ONLY,
    )
    record(
        "ch07",
        "factor_three",
        held=int(three),
        of=PAIRS,
        setting=GRID_SETTING,
        resampled=SEEDS_ONLY,
    )
    record(
        "ch07",
        "factor_above_three",
        held=int(more),
        of=PAIRS,
        setting=GRID_SETTING,
        resampled=SEEDS_ONLY,
    )
    assert beyond == PAIRS
    assert twice > PAIRS / 2
    assert 0 < three < PAIRS
    assert more <= PAIRS / 10


@cache
def nets():
    return [run.net for run in R.train_many(list(NETS), [0.05] * len(NETS), True)]


ORDER_SETTING = (
    f"{len(NETS)} normalised networks from fresh seeds {NETS[0]}-{NETS[-1]}, rate 0.05, "
    "batches of 20, 400 random orders each"
)


@cache
def spreads():
    data = R.subscribers()
    out = []
    for k, net in enumerate(nets()):
        spread = R.order_spread(net, data.x_test, data.y_test, orders=400, seed=k)
        homogeneous = [
            R.accuracy(R.batch_probabilities(net, data.x_test, order[None])[0], data.y_test)
            for order in R.sorted_orders(data.x_test, data.y_test).values()
        ]
        out.append((spread, max(homogeneous)))
    return out


def test_no_systematic_inflation_from_batch_statistics():
    """'The average over orders was within five subscribers of the running statistics' answer'
    (every fresh network) 'and above it on fewer than half': batch statistics do not inflate it."""
    n = len(NETS) and len(spreads())
    rows = len(R.subscribers().y_test)
    gains = np.array([(s.mean - s.running) * rows for s, _ in spreads()])
    near, above = int(np.sum(np.abs(gains) <= R.NEAR_SUBSCRIBERS)), int(np.sum(gains > 0))
    record(
        "ch07",
        "order_mean_near_running",
        held=near,
        of=n,
        setting=ORDER_SETTING,
        resampled=SEEDS_AND_ORDERS,
    )
    record(
        "ch07",
        "order_mean_above_running",
        held=above,
        of=n,
        setting=ORDER_SETTING,
        resampled=SEEDS_AND_ORDERS,
    )
    assert near == n
    assert above < n / 2


def test_label_sorted_batches_cost_accuracy():
    """'Label-sorted batches scored below the running statistics on every fresh network, and more
    than two deviations below the random orders' mean' (every one)."""
    below = sum(best < s.running for s, best in spreads())
    far = sum(best < s.mean - R.SORTED_DEVIATIONS * s.sd for s, best in spreads())
    n = len(spreads())
    record(
        "ch07",
        "sorted_below_running",
        held=int(below),
        of=n,
        setting=ORDER_SETTING,
        resampled=SEEDS_AND_ORDERS,
    )
    record(
        "ch07",
        "sorted_below_spread",
        held=int(far),
        of=n,
        setting=ORDER_SETTING,
        resampled=SEEDS_AND_ORDERS,
    )
    assert below == n
    assert far == n


def test_smaller_batches_widen_the_spread():
    """Exercise 3: 'batches of ten widened the spread over orders on every fresh network, and
    moved the average down on most, never by more than two subscribers'."""
    data = R.subscribers()
    wider = lower = near = 0
    for k, (net, (twenty, _)) in enumerate(zip(nets(), spreads(), strict=True)):
        ten = R.order_spread(net, data.x_test, data.y_test, orders=400, seed=k, batch=10)
        wider += ten.sd > twenty.sd
        lower += ten.mean < twenty.mean
        near += abs(ten.mean - twenty.mean) * len(data.y_test) <= R.TEN_NEAR_SUBSCRIBERS
    n = len(NETS)
    setting = ORDER_SETTING.replace("batches of 20", "batches of 10 against 20")
    record("ch07", "ten_wider", held=int(wider), of=n, setting=setting, resampled=SEEDS_AND_ORDERS)
    record(
        "ch07", "ten_mean_lower", held=int(lower), of=n, setting=setting, resampled=SEEDS_AND_ORDERS
    )
    record(
        "ch07",
        "ten_mean_within_two",
        held=int(near),
        of=n,
        setting=setting,
        resampled=SEEDS_AND_ORDERS,
    )
    assert wider == n
    assert near == n
    assert lower >= 0.75 * n  # "most"


BRAKE_SEEDS = fresh(20)
BRAKE_SETTING = (
    f"{len(BRAKE_SEEDS)} fresh starting weights (seeds {BRAKE_SEEDS[0]}-{BRAKE_SEEDS[-1]}), "
    f"normalised at rates {', '.join(f'{r:g}' for r in R.BRAKE_RATES)}, 30 epochs"
)


@cache
def brakes() -> dict[float, R.Lengths]:
    """The hidden weights' lengths of every fresh normalised run at the chapter's table's rates,
    trained as one stack."""
    seeds = [s for _ in R.BRAKE_RATES for s in BRAKE_SEEDS]
    rates = [r for r in R.BRAKE_RATES for _ in BRAKE_SEEDS]
    runs = R.train_many(seeds, rates, True)
    n = len(BRAKE_SEEDS)
    return {r: R.lengths(runs[k * n : (k + 1) * n]) for k, r in enumerate(R.BRAKE_RATES)}


def test_lengths_grow_more_at_larger_rates():
    """'Every unit lengthened and the lengths rose with the rate' (every fresh seed): the
    gradient behind the batch layer is at right angles to the weights."""
    settings = list(brakes().values())
    every_unit = np.all([b.end > b.start for b in settings], axis=(0, 2))  # (seeds,)
    rising = np.all(np.diff([b.end.mean(axis=-1) for b in settings], axis=0) > 0, axis=0)
    n = len(BRAKE_SEEDS)
    grew = int(np.sum(every_unit & rising))
    record(
        "ch07",
        "lengths_grow_with_rate",
        held=grew,
        of=n,
        setting=BRAKE_SETTING,
        resampled=SEEDS_ONLY,
    )
    assert grew == n


def test_effective_rate_ends_lower_at_the_top_rate():
    """'The effective rate ended lower at 30 than at 5' (the mean over units, every fresh seed:
    past rate 5 the brake more than keeps up with the rate), and 'at 30 every unit's effective
    rate ended below eta / 100' (every fresh seed)."""
    settings = brakes()
    top = max(settings)
    lower = int(np.sum(settings[top].effective < settings[R.FALLS_FROM].effective))
    braked = int(np.sum(settings[top].largest_effective < top / R.BRAKE_AT_LEAST))
    n = len(BRAKE_SEEDS)
    record(
        "ch07",
        "effective_lower_at_top",
        held=lower,
        of=n,
        setting=BRAKE_SETTING,
        resampled=SEEDS_ONLY,
    )
    record("ch07", "brake_at_top", held=braked, of=n, setting=BRAKE_SETTING, resampled=SEEDS_ONLY)
    assert lower == n
    assert braked == n


def test_plain_loss_sees_the_length():
    """'Doubling the hidden weights moved the plain loss by more than 1 %' (every fresh seed,
    trained at 0.05), where the normalised network's moves by epsilon's share."""
    rate = min(R.BRAKE_RATES)
    plain = R.train_many(list(BRAKE_SEEDS), [rate] * len(BRAKE_SEEDS), False)
    normalised = R.train_many(list(BRAKE_SEEDS), [rate] * len(BRAKE_SEEDS), True)
    sees = sum(R.scale_change(run.net) > R.SEES_LENGTH for run in plain)
    setting = (
        f"{len(BRAKE_SEEDS)} plain networks from fresh seeds {BRAKE_SEEDS[0]}-{BRAKE_SEEDS[-1]},"
        f" rate {rate:g}, hidden weights and biases doubled"
    )
    record(
        "ch07",
        "plain_sees_length",
        held=int(sees),
        of=len(plain),
        setting=setting,
        resampled=SEEDS_ONLY,
    )
    assert sees == len(plain)
    assert all(R.scale_change(run.net) < R.BLIND_BELOW for run in normalised)  # structural


#: the rates of the pinning test: a low one (pinning alone does not spoil training), the plain
#: network's bracket and the normalised network's largest stable rates of the chapter's table
PIN_RATES = (5.0, 10.0, 20.0, 30.0)
PIN_SETTING = (
    f"{len(BRAKE_SEEDS)} fresh starting weights (seeds {BRAKE_SEEDS[0]}-{BRAKE_SEEDS[-1]}), "
    f"normalised, 30 epochs, each unit's length pinned after every step or left free, "
    f"rates {', '.join(f'{r:g}' for r in PIN_RATES)}"
)


@cache
def pinned_losses() -> dict[tuple[bool, float], np.ndarray]:
    """Final training losses of every fresh normalised run, lengths free and pinned, by rate."""
    seeds = [s for _ in PIN_RATES for s in BRAKE_SEEDS]
    rates = [r for r in PIN_RATES for _ in BRAKE_SEEDS]
    n = len(BRAKE_SEEDS)
    out = {}
    for pin in (False, True):
        runs = R.train_many(seeds, rates, True, pinned=pin)
        losses = np.array([run.loss for run in runs])
        for k, r in enumerate(PIN_RATES):
            out[pin, r] = losses[k * n : (k + 1) * n]
    return out


def test_pinning_the_lengths_removes_the_headroom():
    """The intervention: with each unit's length pinned after every step (the function
    unchanged), the effective rate no longer shrinks, and the normalised network fails (final
    loss above 1) at rates where it trained with its lengths free; at rate 5 pinning alone does
    not stop it training."""
    losses = pinned_losses()
    n = len(BRAKE_SEEDS)
    resampled = ("initial seeds",)
    counts = {}
    for pin, word in ((False, "free"), (True, "pinned")):
        for r in PIN_RATES:
            stable = int(np.sum(losses[pin, r] < 1.0))
            counts[pin, r] = record(
                "ch07",
                f"{word}_stable_at_{r:g}".replace(".", "_"),
                held=stable,
                of=n,
                setting=PIN_SETTING,
                resampled=resampled,
            ).held
    # lengths free: stable up to 20 (the chapter's table's largest stable rate) on (nearly)
    # every seed; at 30 on some only (fresh seeds' limits differ), which is recorded, not asserted
    for r in (5.0, 10.0, 20.0):
        assert counts[False, r] >= n - 2
    # pinned: still trains at 5 on (nearly) every seed, fails at 20 and 30 on (nearly) every
    # seed; at 10 it is recorded (about half, measured when this test was written)
    assert counts[True, 5.0] >= n - 2
    assert counts[True, 20.0] <= 2 and counts[True, 30.0] <= 2
    # and pinned ends with the larger loss than free at 20 and 30 on every seed
    worse = np.sum(losses[True, 20.0] > losses[False, 20.0]) + np.sum(
        losses[True, 30.0] > losses[False, 30.0]
    )
    record(
        "ch07",
        "pinned_worse_at_20_and_30",
        held=int(worse),
        of=2 * n,
        setting=PIN_SETTING,
        resampled=resampled,
    )
    assert worse >= 2 * n - 2


def test_no_unit_dies_in_training_mode():
    """'This network cannot lose one': asked as training asks it (each mini-batch of 20 by its
    own statistics) no unit of a normalised run is zero on every row, at every rate of the table
    (a proof: each mini-batch leaves every unit with mean zero); asked with the running
    statistics (evaluation mode), the count the sweep's table shows, none either."""
    from normcore.mode import TRAIN

    seeds = [s for _ in R.BRAKE_RATES for s in BRAKE_SEEDS]
    rates = [r for r in R.BRAKE_RATES for _ in BRAKE_SEEDS]
    runs = R.train_many(seeds, rates, True)
    alive_train = sum(R.dead_units(run.net, mode=TRAIN) == 0 for run in runs)
    alive_eval = sum(R.dead_units(run.net) == 0 for run in runs)
    setting = BRAKE_SETTING
    a = record(
        "ch07",
        "no_dead_unit_training_mode",
        held=int(alive_train),
        of=len(runs),
        setting=setting,
        resampled=("initial seeds",),
    )
    b = record(
        "ch07",
        "no_dead_unit_evaluation_mode",
        held=int(alive_eval),
        of=len(runs),
        setting=setting,
        resampled=("initial seeds",),
    )
    assert a.every  # structural
    assert b.held >= 0.9 * b.of
