"""The reference's convolution rows (normcore.reference_conv) held to PyTorch: every row marked
"agrees" is compared number for number with torch (float64), and every PyTorch sentence is
checked against what the installed torch does."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from normcore import Conv2d, ImageBatchNorm, StandardisedConv2d, fold_into_conv
from normcore.errors import FoldError
from normcore.image import GroupNorm
from normcore.reference_conv import CONV_LAYERS, conv_statements, example, fold_refused

pytestmark = pytest.mark.numeric  # figures from float arithmetic: make test-arith reruns it


@pytest.fixture(scope="module")
def rows() -> dict[tuple[str, str], dict[str, str]]:
    return {(r["layer"], r["statement"]): r for r in conv_statements()}


@pytest.fixture
def torch(oracle: Any) -> Any:
    """PyTorch, or a skip (a failure in CI) when it is not installed."""
    return oracle("torch")


def test_every_layer_has_rows_and_every_measurement_held(rows: dict) -> None:
    assert {layer for layer, _ in rows} == set(CONV_LAYERS)
    assert all(r["agree"] in ("yes", "no") for r in rows.values())
    assert not any("not below" in r["normcore"] for r in rows.values())
    assert rows[("Conv2d", "kernel")]["normcore"] == "not flipped (a cross-correlation)"
    assert "1.000 of it" in rows[("Conv2d", "starting weights")]["normcore"]
    assert fold_refused() is FoldError
    assert "FoldError" in rows[("fold_into_conv", "what folds")]["normcore"]


def test_a_flipped_kernel_would_be_caught() -> None:
    """The 'kernel' row can fail: a kernel flipped by hand reads the far corner."""
    conv, _ = example()
    image = np.arange(25.0).reshape(1, 1, 5, 5)
    one_hot = np.zeros((1, 1, 3, 3))
    one_hot[0, 0, 2, 2] = 1.0  # the top-left 1, flipped
    assert Conv2d(weights=one_hot).forward(image).output[0, 0, 0, 0] == 12.0


def test_conv2d_agrees_with_torch(torch: Any, rows: dict) -> None:
    conv, x = example()
    want = torch.nn.functional.conv2d(
        torch.tensor(x),
        torch.tensor(conv.weights),
        torch.tensor(conv.bias),
        stride=conv.stride,
        padding=conv.padding,
    ).numpy()
    got = conv.forward(x).output
    assert got.shape == want.shape  # the layout and output-size rows
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert str(tuple(want.shape)) in rows[("Conv2d", "layout")]["normcore"]
    assert rows[("Conv2d", "output size")]["normcore"].endswith(f"= {want.shape[-1]}")


def test_conv2d_slopes_agree_with_torch_autograd(torch: Any) -> None:
    conv, x = example()
    r = conv.forward(x, "training")
    d = np.random.default_rng(1).normal(size=r.output.shape)
    g = conv.backward(r, d)
    tx = torch.tensor(x, requires_grad=True)
    tw = torch.tensor(conv.weights, requires_grad=True)
    tb = torch.tensor(conv.bias, requires_grad=True)
    out = torch.nn.functional.conv2d(tx, tw, tb, stride=conv.stride, padding=conv.padding)
    (out * torch.tensor(d)).sum().backward()
    np.testing.assert_allclose(g.slopes["weights"], tw.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g.slopes["bias"], tb.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g.passed_down, tx.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_torchs_default_start_is_what_the_row_says(torch: Any, rows: dict) -> None:
    torch.manual_seed(0)
    layer = torch.nn.Conv2d(8, 64, 3)
    bound = 1 / np.sqrt(8 * 3 * 3)
    for p in (layer.weight, layer.bias):
        largest = float(p.detach().abs().max())
        assert 0.98 * bound < largest <= bound
    assert rows[("Conv2d", "starting weights")]["agree"] == "no"


def test_torch_offers_what_normcore_does_not(torch: Any) -> None:
    layer = torch.nn.Conv2d(1, 1, 3, dilation=2, groups=1, padding="same", padding_mode="reflect")
    assert layer.dilation == (2, 2) and layer.padding_mode == "reflect"
    with pytest.raises(TypeError):
        Conv2d(weights=np.ones((1, 1, 3, 3)), dilation=2)  # type: ignore[call-arg]


def test_weight_standardisation_against_torch(torch: Any, rows: dict) -> None:
    """Autograd through the paper's kernel agrees with normcore; the authors' PyTorch layer
    (unbiased deviation + 1e-5) runs a different kernel."""
    conv, x = example()
    ws = StandardisedConv2d(
        weights=conv.weights, bias=conv.bias, stride=conv.stride, padding=conv.padding
    )
    r = ws.forward(x, "training")
    d = np.random.default_rng(2).normal(size=r.output.shape)
    g = ws.backward(r, d)
    tw = torch.tensor(conv.weights, requires_grad=True)
    mean = tw.mean(dim=(1, 2, 3), keepdim=True)
    var = tw.var(dim=(1, 2, 3), keepdim=True, unbiased=False)
    kernel = (tw - mean) / torch.sqrt(var + ws.epsilon)
    out = torch.nn.functional.conv2d(
        torch.tensor(x), kernel, torch.tensor(conv.bias), stride=2, padding=1
    )
    np.testing.assert_allclose(r.output, out.detach().numpy(), rtol=1e-12, atol=1e-12)
    (out * torch.tensor(d)).sum().backward()
    np.testing.assert_allclose(g.slopes["weights"], tw.grad.numpy(), rtol=1e-10, atol=1e-12)
    std, m = torch.std_mean(torch.tensor(conv.weights), dim=(1, 2, 3), keepdim=True)
    authors = ((torch.tensor(conv.weights) - m) / (std + 1e-5)).numpy()
    assert np.abs(authors - ws.effective_weights).max() > 1e-3  # a different kernel
    assert rows[("StandardisedConv2d", "kernel run")]["agree"] == "no"
    assert rows[("StandardisedConv2d", "gradients")]["agree"] == "yes"


def test_fold_agrees_with_torchs_fuse_conv_bn_eval(torch: Any) -> None:
    from torch.nn.utils.fusion import fuse_conv_bn_eval

    conv, x = example()
    rng = np.random.default_rng(3)
    batch = ImageBatchNorm(
        scale=rng.uniform(0.5, 2, 4),
        shift=rng.normal(size=4),
        running_mean=rng.normal(size=4),
        running_variance=rng.uniform(0.5, 2, 4),
    )
    tconv = torch.nn.Conv2d(3, 4, 3, stride=2, padding=1).double()
    tbn = torch.nn.BatchNorm2d(4, eps=batch.epsilon).double()
    with torch.no_grad():
        tconv.weight.copy_(torch.tensor(conv.weights))
        tconv.bias.copy_(torch.tensor(conv.bias))
        tbn.weight.copy_(torch.tensor(batch.scale))
        tbn.bias.copy_(torch.tensor(batch.shift))
        tbn.running_mean.copy_(torch.tensor(batch.running_mean))
        tbn.running_var.copy_(torch.tensor(batch.running_variance))
    with pytest.raises(AssertionError):  # "eval mode only (asserted)"
        fuse_conv_bn_eval(tconv.train(), tbn.train())
    fused = fuse_conv_bn_eval(tconv.eval(), tbn.eval())
    folded = fold_into_conv(conv, batch)
    np.testing.assert_allclose(folded.weights, fused.weight.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(folded.bias, fused.bias.detach().numpy(), rtol=1e-12, atol=1e-12)
    with pytest.raises(FoldError):
        fold_into_conv(conv, GroupNorm.create(4, 2))
    with pytest.raises(Exception):  # torch's fusion takes a BatchNorm module only  # noqa: B017
        fuse_conv_bn_eval(tconv.eval(), torch.nn.GroupNorm(2, 4).double().eval())
