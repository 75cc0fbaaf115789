"""The convnet chapter's experiment: its layouts are the image normalisers exactly, its stacked
networks train as each alone, its gradients meet the oracle, and its after-training tools
(precise statistics, folding, variance ratios, pooled counts) do what they say."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import normcore as nc
from normcore.experiments import convnet as cn
from normcore.loss import softmax_cross_entropy

pytestmark = pytest.mark.numeric  # figures from float arithmetic: make test-arith reruns it


@pytest.fixture(scope="module")
def data():
    return cn.digits_images()


def test_images_are_standardised_as_pictures(data) -> None:
    x, y, xh, yh = data
    assert x.shape[1:] == (1, 8, 8) and xh.shape[1:] == (1, 8, 8)
    assert len(x) + len(xh) == 1797
    assert abs(x.mean()) < 1e-12 and abs(x.std() - 1) < 1e-12


def test_batch_layout_is_image_batch_norm() -> None:
    rng = np.random.default_rng(0)
    a = rng.normal(size=(3, 4, 8, 5, 5))
    norm = cn.make_norm("batch", 3, 4, 5)
    out = cn.from_layout(norm, norm.forward(cn.to_layout(norm, a), "training").output, a.shape)
    for s in range(3):
        alone = nc.ImageBatchNorm.create(8).forward(a[s], "training").output
        np.testing.assert_allclose(out[s], alone, atol=1e-12)


@pytest.mark.parametrize(("version", "groups"), [("layer", 1), ("instance", 8), ("group", 2)])
def test_per_image_layout_is_group_norm_per_network(version: str, groups: int) -> None:
    rng = np.random.default_rng(1)
    a = rng.normal(size=(3, 4, 8, 4, 4))
    norm = cn.make_norm(version, 3, 4, 4)
    out = cn.from_layout(norm, norm.forward(cn.to_layout(norm, a)).output, a.shape)
    for s in range(3):
        alone = nc.GroupNorm.create(8, groups).forward(a[s]).output
        np.testing.assert_allclose(out[s], alone, atol=1e-12)


def test_ghost_groups_read_per_device_statistics() -> None:
    rng = np.random.default_rng(2)
    a = rng.normal(size=(1, 8, 8, 4, 4))
    norm = cn.make_norm("batch", 1, 2, 4)
    out = cn.from_layout(norm, norm.forward(cn.to_layout(norm, a), "training").output, a.shape)
    for device in range(4):
        images = slice(2 * device, 2 * device + 2)
        alone = nc.ImageBatchNorm.create(8).forward(a[0, images], "training").output
        np.testing.assert_allclose(out[0, images], alone, atol=1e-12)


@pytest.mark.parametrize("version", cn.VERSIONS)
def test_gradients_meet_the_oracle(version: str, data) -> None:
    x, y = data[0][:8], data[1][:8]
    net = cn.build(version, seeds=(3,), per_device=4 if version == "batch" else cn.BATCH)
    _, grads = cn.gradients(net, x, y)
    by_layer = {id(g.layer): g for g in grads}
    claimed = by_layer[id(net.convs[0])].slopes["weights"]

    def loss(w):
        kind = type(net.convs[0])
        conv = kind(weights=w, padding=1)
        moved = dataclasses.replace(net, convs=(conv, net.convs[1]))
        return float(softmax_cross_entropy(cn.forward(moved, x, "training")[1], y).value[0])

    assert nc.check_slope(loss, net.convs[0].weights, claimed).relative_gap < 1e-6


def test_stacked_seeds_train_as_each_alone(data) -> None:
    stacked = cn.train(cn.build("batch", seeds=(4, 5)), data, steps=3)
    alone = cn.train(cn.build("batch", seeds=(5,)), data, steps=3)
    np.testing.assert_allclose(stacked.loss[:, 1], alone.loss[:, 0], rtol=1e-10)
    np.testing.assert_array_equal(stacked.accuracy[1:], alone.accuracy)


def test_a_seed_starts_every_version_from_the_same_weights() -> None:
    kernels = {v: cn.build(v, seeds=(6,)).convs[0].weights for v in cn.VERSIONS}
    for v in cn.VERSIONS:
        np.testing.assert_array_equal(kernels[v], kernels["none"])


def test_precise_statistics_are_the_sample_statistics(data) -> None:
    net = cn.train(cn.build("batch", seeds=(7,), per_device=2), data, steps=2).net
    x = data[0][:64]
    precise = cn.precise(net, x)
    z = net.convs[0].forward(x[None]).output
    np.testing.assert_allclose(precise.norms[0].running_mean[0], z.mean(axis=(1, 3, 4))[0])
    np.testing.assert_allclose(precise.norms[0].running_variance[0], z.var(axis=(1, 3, 4))[0])
    # the scale and shift are kept; the original network is unchanged
    np.testing.assert_array_equal(precise.norms[1].scale, net.norms[1].scale)
    assert not np.allclose(net.norms[0].running_mean, precise.norms[0].running_mean)


def test_folded_network_predicts_as_the_original(data) -> None:
    net = cn.train(cn.build("batch", seeds=(8, 9), per_device=8), data, steps=3).net
    assert cn.fold_gap(net, data[2][:50]).shape == (2,)
    assert np.all(cn.fold_gap(net, data[2][:50]) < 1e-12)
    assert cn.folded(net).version == "none"
    with pytest.raises(nc.SettingError):
        cn.folded(cn.build("group", seeds=(8,)))


def test_variance_ratios(data) -> None:
    net = cn.build("batch", seeds=(10, 11))
    r = cn.variance_ratios(net, data[0][:64], 8)
    assert r.shape == (8, 2, cn.CHANNELS)
    whole = cn.variance_ratios(net, data[0][:64], 64)
    np.testing.assert_allclose(whole, 1.0)
    with pytest.raises(nc.SettingError):
        cn.variance_ratios(net, data[0][:4], 8)


def test_variance_ratios_by_size_run_the_convolution_once_and_agree(data) -> None:
    net = cn.build("batch", seeds=(10, 11))
    x = data[0][:70]  # 70 images: each size uses its own whole number of devices
    by_size = cn.variance_ratios_by_size(net, x, (2, 4, 32))
    for b, ratios in by_size.items():
        want = cn.variance_ratios(net, x, b)
        assert ratios.shape == (70 // b, 2, cn.CHANNELS)
        np.testing.assert_array_equal(ratios, want)
    with pytest.raises(nc.SettingError):
        cn.variance_ratios_by_size(net, x, (2, 0))


def test_pooled_counts() -> None:
    assert cn.pooled("batch", 2) == (2 * 64, 2 * 16)
    assert cn.pooled("batch", 32) == (32 * 64, 32 * 16)
    assert cn.pooled("layer", 2) == (8 * 64, 8 * 16)
    assert cn.pooled("instance", 32) == (64, 16)
    assert cn.pooled("group", 2) == (4 * 64, 4 * 16)
    with pytest.raises(nc.SettingError):
        cn.pooled("none", 2)


def test_resnet_pooled_counts() -> None:
    # ResNet-50's maps at its 224-pixel input: five halvings, 112 down to 7
    assert cn.RESNET_SIDES == tuple(cn.RESNET_INPUT // 2**k for k in range(1, 6))
    assert cn.resnet_pooled(2) == (2 * 7 * 7, 2 * 112 * 112)
    assert cn.resnet_pooled(32) == (32 * 49, 32 * 12544)
    with pytest.raises(nc.SettingError):
        cn.resnet_pooled(0)


def test_the_sweep_runs_from_two_images_to_the_whole_step() -> None:
    assert cn.SIZES[0] == 2 and cn.SIZES[-1] == cn.BATCH == 64
    assert all(cn.BATCH % b == 0 for b in cn.SIZES)
    assert all(b2 == 2 * b1 for b1, b2 in zip(cn.SIZES, cn.SIZES[1:], strict=False))


def test_bad_settings_are_refused() -> None:
    with pytest.raises(nc.SettingError):
        cn.build("rms")
    with pytest.raises(nc.SettingError):
        cn.build("batch", seeds=())
    with pytest.raises(nc.SettingError):
        cn.build("batch", per_device=3)
    with pytest.raises(nc.SettingError):
        cn.train(cn.build("none", seeds=(0,)), cn.digits_images(), steps=0)


def test_published_table_is_wu_and_he_s() -> None:
    # the abstract's "10.6% lower error" at 2 images per GPU
    wh = cn.WU_HE_ERROR
    assert round(wh["batch"][2] - wh["group"][2], 1) == 10.6
    assert sorted(wh["batch"]) == sorted(wh["group"]) == [2, 4, 8, 16, 32]


def test_exercise_checkers_accept_the_answer_and_name_the_mistakes() -> None:
    from normcore.exercises import ch10 as ex

    assert ex.check_shapes(None, None, None).startswith("waiting")
    assert ex.check_shapes((8,), (32, 2), (8,)).right
    assert "instance or layer" in ex.check_shapes((32, 8), (32, 2), (8,))
    assert "per image too" in ex.check_shapes((8,), (2,), (8,))
    assert "per channel, not per group" in ex.check_shapes((8,), (32, 2), (2,))
    kernel = np.array([[1.0, 2.0], [0.0, -1.0]])
    k = 3.0 / np.sqrt(4.0)  # the factor worked by hand, epsilon left out
    assert ex.check_folded(kernel * k, (0.5 - 1.5) * k - 1.0).right
    assert "running mean" in ex.check_folded(kernel * k, 0.5 * k - 1.0)
    assert "shift" in ex.check_folded(kernel * k, (0.5 - 1.5) * k)
    assert "deviation" in ex.check_folded(kernel * 3.0 / 4.0, -2.5)
    assert "scaled too" in ex.check_folded(kernel * k, 0.5 * k - 1.5 - 1.0)
    assert ex.check_small_batch("batch", 2 * 16).right
    assert "one image at a time" in ex.check_small_batch("group", 32)
    assert "dense layer" in ex.check_small_batch("batch", 2)
    assert "8 x 8" in ex.check_small_batch("batch", 128)
    assert "every channel" in ex.check_small_batch("batch", 256)


def test_fine_tuning_frozen_keeps_the_running_figures(data) -> None:
    x, y = data[0], data[1]
    net = cn.train(cn.build("batch", seeds=(12,)), data, steps=2).net
    frozen = cn.fine_tune(net, x, y, "predicting")
    training = cn.fine_tune(net, x, y, "training")
    for before, kept, moved in zip(net.norms, frozen.norms, training.norms, strict=True):
        np.testing.assert_array_equal(kept.running_mean, before.running_mean)
        assert not np.allclose(moved.running_mean, before.running_mean)
        assert not np.allclose(kept.scale, before.scale)  # frozen statistics, learning scale
    assert training.per_device == cn.TUNE_BATCH
    with pytest.raises(nc.SettingError):
        cn.fine_tune(cn.build("group", seeds=(12,)), x, y, "training")


def test_fainter_cuts_the_contrast_around_the_background(data) -> None:
    x = data[0]
    faint = cn.fainter(x)
    background = x.min()
    assert faint.min() == background
    np.testing.assert_allclose(faint - background, cn.FAINT * (x - background))
