"""Chapter 9's conclusions re-run on fresh seeds: small batches with running and recomputed
statistics, fine-tuning three ways on the same data and on a genuinely shifted task, and the
gradient profiles of post- and pre-normalised residual stacks.

Each test records how often a conclusion held (`normcore.claims.record`, glued by the chapter
through `normcore.claims.held`) and asserts the conclusion as the prose states it.
"""

from __future__ import annotations

import numpy as np
import pytest

from normcore.claims import fresh
from normcore.claims import record as _record
from normcore.experiments import digits_rates, precomputed, prepost, smallbatch

SEEDS_ONLY = ("initial seeds",)


def record(*args, resampled=SEEDS_ONLY, **kwargs):
    """`normcore.claims.record`, naming what was resampled (the network starts, and with them any
    tokens, targets or read-outs drawn from the same seeds)."""
    return _record(*args, resampled=resampled, **kwargs)


SEEDS = fresh(20)
SEED_WORDS = f"fresh seeds {SEEDS[0]}-{SEEDS[-1]}"
SIZES = (2, 4, 8, 16, 64)


@pytest.fixture(scope="module")
def data():
    return digits_rates.digits_data()


@pytest.fixture(scope="module")
def sizes(data):
    return smallbatch.group_sizes(data, smallbatch.GROUP_RATE, seeds=SEEDS, sizes=SIZES)


def test_small_batches(data, sizes) -> None:
    sizes_words = ", ".join(map(str, SIZES))
    setting = f"one epoch at rate {smallbatch.GROUP_RATE:g}, B = {sizes_words}, {SEED_WORDS}"
    running, again = sizes.running, sizes.recomputed
    b = list(SIZES)
    big = running[b.index(8) :] >= digits_rates.TRAINS
    small = running[: b.index(8)] < digits_rates.TRAINS
    from8 = record("ch09", "trains_from_eight", int(big.all(axis=0).sum()), len(SEEDS), setting)
    below8 = record("ch09", "fails_below_eight", int(small.all(axis=0).sum()), len(SEEDS), setting)
    gain = again[b.index(4)] > running[b.index(4)]
    re4 = record("ch09", "recomputed_helps_at_four", int(gain.sum()), len(SEEDS), setting)
    layer = smallbatch.layer_run(data, smallbatch.LAYER_RATE, seeds=SEEDS)
    between = (layer < running[b.index(64)]) & (layer > running[b.index(2)])
    lay = record(
        "ch09",
        "layer_between",
        int(between.sum()),
        len(SEEDS),
        setting + f", the layer network at rate {smallbatch.LAYER_RATE:g}",
    )
    assert from8.held >= 0.9 * from8.of and below8.held >= 0.9 * below8.of
    # margins: 16 or 17 of 20 under different arithmetic; the prose's "most" needs >= 14
    assert re4.held >= 0.7 * re4.of  # "part of the fall is not training at all"
    assert lay.held >= 0.9 * lay.of  # "the crossing"


def test_fine_tuning_on_pairs(data, sizes) -> None:
    tuned = smallbatch.fine_tune(sizes.nets[-1], data)
    setting = (
        f"{smallbatch.TUNE_STEPS} steps on pairs at rate {smallbatch.TUNE_RATE:g} after "
        f"one epoch at B = 64, {SEED_WORDS}"
    )
    loses = record(
        "ch09",
        "training_mode_loses",
        int(np.sum(tuned.before - tuned.after_training > smallbatch.TUNE_LOSES)),
        len(SEEDS),
        setting,
    )
    keeps = record(
        "ch09",
        "frozen_keeps",
        int(np.sum(tuned.after_frozen >= tuned.before - smallbatch.TUNE_KEEPS)),
        len(SEEDS),
        setting,
    )
    restored = np.abs(tuned.after_recomputed - tuned.before) <= smallbatch.TUNE_RESTORED
    record("ch09", "recomputed_restores", int(restored.sum()), len(SEEDS), setting)
    assert loses.held >= 0.75 * loses.of and keeps.held >= 0.95 * keeps.of
    # "on most of the fresh seeds that recomputing did not restore, some weight moved by more
    # than 1" (it was "every" until the claims run found 7 of 9)
    far = record(
        "ch09",
        "unrestored_moved_far",
        int(np.sum(tuned.moved[~restored] > smallbatch.TUNE_FAR)),
        max(1, int((~restored).sum())),
        setting + ", weights moved by more than 1",
    )
    assert far.held >= 0.6 * far.of


def test_fine_tuning_on_a_shifted_task(data, sizes) -> None:
    shifted = smallbatch.shifted_task(sizes.nets[-1], data)
    setting = (
        f"{smallbatch.SHIFT_STEPS} steps of {smallbatch.SHIFT_BATCH} of "
        f"{smallbatch.SHIFT_IMAGES} labelled inverted digits at rate "
        f"{smallbatch.SHIFT_RATE:g}, {SEED_WORDS}"
    )
    beats = record(
        "ch09",
        "shift_frozen_beats_training",
        int(np.sum(shifted.frozen > shifted.training)),
        len(SEEDS),
        setting,
    )
    learns = record(
        "ch09",
        "shift_frozen_learns",
        int(
            np.sum(
                (shifted.frozen > smallbatch.SHIFT_LEARNED)
                & (shifted.before < smallbatch.SHIFT_NEAR_ZERO)
            )
        ),
        len(SEEDS),
        setting,
    )
    # the third way: the training-mode network with its statistics recomputed on the labelled
    # inverted images repairs part of the loss at most, and stays below the frozen one
    below = record(
        "ch09",
        "shift_recomputed_below_frozen",
        int(np.sum(shifted.recomputed < shifted.frozen)),
        len(SEEDS),
        setting,
    )
    repairs = record(
        "ch09",
        "shift_recomputed_above_training",
        int(np.sum(shifted.recomputed > shifted.training)),
        len(SEEDS),
        setting,
    )
    # margin: 19 or 20 of 20 under different arithmetic; the prose's "most" needs >= 15
    assert beats.held >= 0.75 * beats.of
    assert learns.held >= 0.75 * learns.of
    # "below the frozen network on k of n": a large majority, with room for the runs that move
    # with the arithmetic (17 of 20 under the SSE-era kernel and loops, 20 under the reference)
    assert below.held >= 0.75 * below.of
    assert 0 < repairs.held < repairs.of  # "above training mode on k": sometimes, not always


def test_post_and_pre_normalised_gradient_profiles() -> None:
    setting = f"{prepost.BLOCKS} blocks at initialisation, {SEED_WORDS}"
    ratio = {}
    for a in prepost.VARIANTS:
        norm = prepost.gradient_profile(a, seeds=SEEDS).norm
        ratio[a] = norm[:, -4:].mean(axis=1) / norm[:, :4].mean(axis=1)
    n = len(SEEDS)
    twice = record("ch09", "post_ln_twice", int(np.sum(ratio["post-LN"] > 2)), n, setting)
    above = record("ch09", "post_ln_above_one", int(np.sum(ratio["post-LN"] > 1)), n, setting)
    pre = record("ch09", "pre_ln_below_one", int(np.sum(ratio["pre-LN"] < 1)), n, setting)
    rms = record("ch09", "pre_rms_below_one", int(np.sum(ratio["pre-RMS"] < 1)), n, setting)
    six = prepost.gradient_profile("post-LN", seeds=SEEDS, blocks=6).norm
    mono = record(
        "ch09",
        "post_ln_six_monotone",
        int(np.all(np.diff(six, axis=1) > 0, axis=1).sum()),
        n,
        f"6 blocks at initialisation, {SEED_WORDS}",
    )
    assert above.held >= 0.75 * n  # "a tendency": the output end receives more
    assert 0 < twice.held < n  # "more than twice on k": typical, not every seed
    assert pre.held >= 0.7 * n and rms.held >= 0.7 * n  # "usually slightly smaller"
    assert mono.held < n  # "a tendency, not a law"


DEPTHS = (4, 8, 16, 32)


def test_depth_sweep_pre_against_post() -> None:
    """Xiong et al.'s 1/sqrt(L): the last block's gradient falls with depth under pre-LN, not under
    post-LN; the pre-LN stream grows in proportion to depth; DyT as the normaliser-free control."""
    setting = f"{DEPTHS[0]} and {DEPTHS[-1]} blocks at initialisation, {SEED_WORDS}"
    n = len(SEEDS)
    runs = {a: prepost.depth_profiles(a, DEPTHS, SEEDS) for a in ("post-LN", "pre-LN", "pre-DyT")}
    last = {a: np.array([p.norm[:, -1] for p in r]) for a, r in runs.items()}
    falls = {a: int(np.sum(g[-1] < g[0])) for a, g in last.items()}
    pre = record("ch09", "depth_pre_ln_falls", falls["pre-LN"], n, setting)
    post = record("ch09", "depth_post_ln_falls", falls["post-LN"], n, setting)
    dyt = record("ch09", "depth_dyt_falls", falls["pre-DyT"], n, setting)
    deep = runs["pre-LN"][-1].stream[:, -1] / DEPTHS[-1]  # the deepest stack's stream
    linear = record(
        "ch09",
        "stream_two_per_block",
        int(np.sum((deep > prepost.STREAM_RANGE[0]) & (deep < prepost.STREAM_RANGE[1]))),
        n,
        f"pre-LN, {DEPTHS[-1]} blocks at initialisation, {SEED_WORDS}",
    )
    # "in the same pre- stack with DyT the stream still grows, but more slowly"
    dyt_stream = runs["pre-DyT"][-1].stream[:, -1] / DEPTHS[-1]
    slower = record(
        "ch09",
        "dyt_stream_slower",
        int(np.sum(dyt_stream < deep)),
        n,
        f"pre-DyT against pre-LN, {DEPTHS[-1]} blocks at initialisation, {SEED_WORDS}",
    )
    assert slower.held >= 0.9 * n
    assert pre.held >= 0.75 * n  # "on most seeds" smaller at 32 blocks than at 4
    # "seed by seed the pre-LN gradient falls more slowly than 1/sqrt(L) about as often as not"
    slower = last["pre-LN"][-1] / last["pre-LN"][0] > np.sqrt(DEPTHS[0] / DEPTHS[-1])
    bound = record("ch09", "depth_pre_ln_slower_than_bound", int(slower.sum()), n, setting)
    assert 0.25 * n <= bound.held <= 0.75 * n
    assert post.held < 0.5 * n  # "on fewer than half"
    assert 0.25 * n <= dyt.held <= 0.75 * n  # "as often as not, roughly"
    assert linear.held >= 0.9 * n  # "about two per block"


def test_qk_norm_bounds_the_logits() -> None:
    from normcore.experiments import attention

    n = len(SEEDS)
    plain = attention.logits(False, seeds=SEEDS)
    normed = attention.logits(True, seeds=SEEDS)
    # structural on every seed: c^2 without QK-norm, bounded by sqrt(WIDTH) with it
    c2 = np.array(attention.SCALES)[:, None] ** 2
    np.testing.assert_allclose(
        plain.largest / plain.largest[0], np.broadcast_to(c2, plain.largest.shape), rtol=1e-9
    )
    assert np.all(normed.largest <= np.sqrt(attention.WIDTH) + 1e-9)
    assert np.allclose(normed.entropy, normed.entropy[0], rtol=1e-4)  # up to epsilon
    four = attention.SCALES.index(4.0)
    peaked = record(
        "ch09",
        "qk_plain_peaked_at_4",
        int(np.sum(plain.top[four] > attention.PEAKED)),
        n,
        f"weights x4, {attention.TOKENS} tokens of width {attention.WIDTH}, {SEED_WORDS}",
    )
    assert peaked.held >= 0.75 * n  # "on most seeds" a token's largest weight passes 0.8


def test_rms_pass_is_cheaper() -> None:
    """The sign of the saving only: a time is the machine's (the chapter prints its own)."""
    from normcore.experiments import rmscost

    saved = rmscost.saving(rows=512, features=512, trials=20, repeats=3, seed=SEEDS[0])
    assert np.median(saved) > rmscost.CLAIMED_SAVING


def test_qk_norm_when_training_grows_the_weights() -> None:
    """Trained, not imposed: without QK-norm gradient descent lengthens the query and key weights
    and the largest logit grows; with it the logits stay within sqrt(d) while the task is
    learned, and the weights, scale-invariant behind the normaliser, lengthen less."""
    from normcore.experiments import attention

    n = len(SEEDS)
    plain = attention.trained(False, seeds=SEEDS)
    normed = attention.trained(True, seeds=SEEDS)
    setting = (
        f"{attention.TRAIN_STEPS} steps at rate {attention.TRAIN_RATE:g}, "
        f"{attention.TOKENS} tokens of width {attention.WIDTH}, {SEED_WORDS}"
    )
    # structural on every seed and step: the bound sqrt(d) with QK-norm
    assert np.all(normed.largest <= np.sqrt(attention.WIDTH) + 1e-9)
    grows = record(
        "ch09",
        "qk_trained_plain_grows",
        int(np.sum(plain.largest[-1] > attention.GROWS_BY * plain.largest[0])),
        n,
        setting,
    )
    learns = record(
        "ch09",
        "qk_trained_normed_learns",
        int(np.sum(normed.loss[-1] < 0.5 * normed.loss[0])),
        n,
        setting,
    )
    longer = record(
        "ch09",
        "qk_trained_plain_lengthens_more",
        int(np.sum(plain.length[-1] / plain.length[0] > normed.length[-1] / normed.length[0])),
        n,
        setting,
    )
    assert grows.held >= 0.75 * n  # "the largest logit grows more than threefold"
    assert learns.held >= 0.75 * n  # "learned ... the loss more than halved"
    assert longer.held >= 0.75 * n  # "the weights lengthen less"


def test_small_batches_at_convergence(data) -> None:
    """The sweep trained for ten epochs (`smallbatch.converged_sweep`), the chapter's seeds
    stacked beside the fresh ones (their figures stored for the chapter)."""
    shown = len(digits_rates.SEEDS)
    out = smallbatch.converged_sweep(data, digits_rates.SEEDS + SEEDS)
    precomputed.check(
        "ch09_sweep",
        {k: v[:shown] for k, v in out.items()},
        made_by="normcore.experiments.smallbatch.converged_sweep",
        setting=f"the chapter's seeds {digits_rates.SEEDS}",
    )
    f = {k: v[shown:] for k, v in out.items()}
    n = len(SEEDS)
    sizes = ", ".join(map(str, smallbatch.CONVERGED_SIZES))
    setting = (
        f"{smallbatch.CONVERGED_EPOCHS} epochs at rate {smallbatch.GROUP_RATE:g}, B = {sizes}, "
        f"the layer network at rate {smallbatch.LAYER_RATE:g}, {SEED_WORDS}"
    )
    crossing = record(
        "ch09",
        "converged_crossing",
        int(np.sum((f["layer"] < f["b64"]) & (f["layer"] > f["b2"]))),
        n,
        setting,
    )
    fails = record(
        "ch09", "converged_two_fails", int(np.sum(f["b2"] < digits_rates.TRAINS)), n, setting
    )
    four = record(
        "ch09", "converged_four_behind", int(np.sum(f["b4"] < f["b64"] - 0.1)), n, setting
    )
    assert crossing.held >= 0.75 * n  # "the crossing, on most seeds"
    assert fails.every and four.held >= 0.9 * n


def test_two_rows_pass_back_almost_nothing(data) -> None:
    """One 64-row step of the deep digits batch network at its start, statistics over groups of
    B rows: at B = 2 the hidden weights' gradients nearly vanish (the pair's outputs are ±1 up to
    ε), and the largest ones come from near-ties, within a few √ε."""
    h = smallbatch.hidden_gradients(data, seeds=SEEDS, sizes=(2, 4, 64))
    n = len(SEEDS)
    setting = f"one 64-row step at initialisation, B = 2, 4, 64, {SEED_WORDS}"
    vanish = record(
        "ch09",
        "pair_gradients_vanish",
        int(np.sum(h.median[0] < h.median[2] / 10)),
        n,
        setting,
    )
    near = record("ch09", "pair_near_tie_within_one", int(np.sum(h.nearest[0] < 1)), n, setting)
    four = record(
        "ch09", "four_rows_pass_back", int(np.sum(h.median[1] > h.median[2] / 10)), n, setting
    )
    assert vanish.held >= 0.9 * n and four.held >= 0.9 * n  # "on k of n": 19 of 20 here
    assert near.held >= 0.75 * n  # "some pair sits within √ε of a tie on most seeds"
    # the formula, structurally: normcore's backward pass on a pair equals ε / (2 (u² + ε)^1.5)
    for u in (0.0, 1e-3, 0.1, 1.0):
        g = smallbatch.pair_input_gradient(u, (1.0, 0.0))
        np.testing.assert_allclose(g[0], smallbatch.pair_jacobian(u), rtol=1e-6)


DEEP = (4, 128, 512)


def test_dynamic_tanh_at_depth() -> None:
    """Pre-DyT at 128 and 512 blocks: the last block's gradient falls with depth after all, once
    the stream is large enough for the tanh to saturate."""
    n = len(SEEDS)
    runs = prepost.depth_profiles("pre-DyT", DEEP, SEEDS)
    g = np.array([p.norm[:, -1] for p in runs])
    rel = g / g[0]
    setting = f"pre-DyT, {DEEP[0]}, {DEEP[1]} and {DEEP[2]} blocks at initialisation, {SEED_WORDS}"
    falls128 = record("ch09", "dyt_falls_128", int(np.sum(rel[1] < 1)), n, setting)
    falls512 = record("ch09", "dyt_falls_512", int(np.sum(rel[2] < 1)), n, setting)
    precomputed.check(
        "ch09_depth",
        {
            "dyt_rel_128": np.exp(np.log(rel[1]).mean()),
            "dyt_rel_512": np.exp(np.log(rel[2]).mean()),
            "dyt_stream_512": (runs[2].stream[:, -1] / DEEP[2]).mean(),
        },
        made_by="tests/claims/test_ch09.py::test_dynamic_tanh_at_depth",
        setting=setting,
    )
    assert falls512.every and falls128.held >= 0.6 * n


def test_bf16_mean_square_needs_the_upcast() -> None:
    from normcore.experiments import rmscost

    errors = np.array([rmscost.upcast_error(rmscost.BF16_FEATURES, seed=s) for s in SEEDS])
    off = record(
        "ch09",
        "bf16_mean_square_off",
        int(np.sum(errors[:, 0] > 0.1)),
        len(SEEDS),
        f"one token of {rmscost.BF16_FEATURES} standard normal features, {SEED_WORDS}",
        resampled=("data draws",),
    )
    assert off.every and np.all(errors[:, 1] < 1e-6)


def test_qk_norm_with_a_learned_scale() -> None:
    from normcore.experiments import attention

    n = len(SEEDS)
    scaled = attention.trained_with_scale(seeds=SEEDS)
    normed = attention.trained(True, seeds=SEEDS)
    setting = (
        f"{attention.TRAIN_STEPS} steps at rate {attention.TRAIN_RATE:g}, a learned scale on "
        f"the QK-normed logits, {attention.TOKENS} tokens of width {attention.WIDTH}, {SEED_WORDS}"
    )
    passes = record(
        "ch09",
        "qk_scale_passes_bound",
        int(np.sum(scaled.run.largest[-1] > np.sqrt(attention.WIDTH))),
        n,
        setting,
    )
    lower = record(
        "ch09",
        "qk_scale_below_normed",
        int(np.sum(scaled.run.loss[-1] < normed.loss[-1])),
        n,
        setting,
    )
    assert passes.held >= 0.9 * n and lower.held >= 0.9 * n


@pytest.fixture(scope="module")
def trained():
    """The twelve-block stacks trained with Adam at `prepost.TRAIN_RATE` on the fresh seeds:
    post-LN without and with warm-up (stacked along the seed axis), pre-LN, DeepNorm and Peri-LN
    without."""
    n = len(SEEDS)
    post = prepost.train("post-LN", seeds=SEEDS * 2, warmup=np.repeat([0, prepost.WARMUP], n))
    runs = {v: prepost.train(v, seeds=SEEDS) for v in ("pre-LN", "deepnorm", "peri-LN")}
    losses = {"post-LN": post.loss[:, :n], "post-LN warm-up": post.loss[:, n:]}
    return losses | {v: r.loss for v, r in runs.items()}, {v: r.stream for v, r in runs.items()}


def _fits(loss: np.ndarray) -> np.ndarray:
    return loss[-1] < prepost.FITS * loss[0]


def test_warm_up_and_deepnorm(trained) -> None:
    """Xiong et al.'s practical point at the book's size: at an Adam rate where pre-LN fits,
    post-LN without warm-up stalls, a warm-up rescues it, and DeepNorm fits without one."""
    losses, _ = trained
    n = len(SEEDS)
    setting = (
        f"{prepost.BLOCKS} blocks, Adam at {prepost.TRAIN_RATE:g} for {prepost.TRAIN_STEPS} "
        f"steps, warm-up {prepost.WARMUP} steps where used, fits = last loss below "
        f"{prepost.FITS:g} of the first, {SEED_WORDS}"
    )
    fits = {v: _fits(loss) for v, loss in losses.items()}
    stalls = record("ch09", "post_ln_no_warmup_stalls", int((~fits["post-LN"]).sum()), n, setting)
    pre = record("ch09", "pre_ln_no_warmup_fits", int(fits["pre-LN"].sum()), n, setting)
    warm = record("ch09", "post_ln_warmup_fits", int(fits["post-LN warm-up"].sum()), n, setting)
    deep = record("ch09", "deepnorm_no_warmup_fits", int(fits["deepnorm"].sum()), n, setting)
    # the baseline beside each: pre-LN at the same rate, and post-LN itself with a warm-up
    assert stalls.held >= 0.9 * n and pre.held >= 0.9 * n
    assert warm.held >= 0.75 * n  # "rescues it on k of n"
    assert deep.held >= 0.9 * n
    # the stall is not a slow fit: the median post-LN run without warm-up ends above a quarter
    # of its first loss, the warmed-up one below the FITS line
    rel = {v: loss[-1] / loss[0] for v, loss in losses.items()}
    assert np.median(rel["post-LN"]) > 0.25 and np.median(rel["post-LN warm-up"]) < prepost.FITS
    figures = {
        f"rel_{k.replace(' ', '_').replace('-', '_').lower()}": np.median(r) for k, r in rel.items()
    }
    figures["rel_post_ln_lo"] = rel["post-LN"].min()
    precomputed.check(
        "ch09_trained",
        figures,
        made_by="tests/claims/test_ch09.py::test_warm_up_and_deepnorm (prepost.train)",
        setting=setting + ", medians of last loss / first",
    )


def test_peri_ln_holds_the_stream_below_pre_ln(trained) -> None:
    """Trained at the same rate, Peri-LN's residual stream ends far smaller than pre-LN's: each of
    its blocks adds a normalised output, of mean square 1 per feature at scale 1."""
    _, streams = trained
    n = len(SEEDS)
    setting = (
        f"{prepost.BLOCKS} blocks, Adam at {prepost.TRAIN_RATE:g} for {prepost.TRAIN_STEPS} "
        f"steps, no warm-up, {SEED_WORDS}"
    )
    pre, peri = streams["pre-LN"], streams["peri-LN"]
    # structural on every run and step: a token's root mean square is at most its own at the
    # start plus 1 per block (each block adds a layer-normalised output, at scale 1)
    x = prepost._draw(SEEDS, prepost.BLOCKS)[2]
    rms = np.sqrt((x**2).mean(axis=2))
    assert np.all(peri <= ((rms + prepost.BLOCKS) ** 2).mean(axis=1) + 1e-6)
    below = record(
        "ch09", "peri_ln_stream_below_pre", int(np.sum(peri[-1] < pre[-1] / 3)), n, setting
    )
    grows = record(
        "ch09", "pre_ln_stream_grows_tenfold", int(np.sum(pre[-1] > 10 * pre[0])), n, setting
    )
    assert below.held >= 0.9 * n and grows.held >= 0.9 * n
    precomputed.check(
        "ch09_streams",
        {
            "pre_start": np.median(pre[0]) / prepost.BLOCKS,
            "pre_end": np.median(pre[-1]) / prepost.BLOCKS,
            "peri_start": np.median(peri[0]) / prepost.BLOCKS,
            "peri_end": np.median(peri[-1]) / prepost.BLOCKS,
            "ratio": np.median(pre[-1] / peri[-1]),
        },
        made_by="tests/claims/test_ch09.py::test_peri_ln_holds_the_stream_below_pre_ln",
        setting=setting + ", medians of E|x|^2/d per block",
    )
