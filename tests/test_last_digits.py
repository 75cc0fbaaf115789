"""Chapter 11: the nudge experiment (`normcore.experiments.lastbits`) and the PyTorch facts of
its GPU section, held against the installed PyTorch (a CPU build: what it shows is its defaults,
its documentation and deterministic mode's refusals on the CPU)."""

from __future__ import annotations

import numpy as np
import pytest

from normcore.errors import SettingError
from normcore.experiments import deepnet, digits_rates, lastbits

pytestmark = pytest.mark.numeric  # figures from float arithmetic: make test-arith reruns it


@pytest.fixture(scope="module")
def data():
    x, y, xh, yh = digits_rates.digits_data()
    return x[:256], y[:256], xh[:64], yh[:64]


def test_pair_is_the_built_stack_beside_its_nudge() -> None:
    p = lastbits.pair((0, 3), direction=-1)
    built, nudged = p.halves()
    start = deepnet.build(lastbits.VERSION, [0, 3])
    for a, b, s in zip(built.dense, nudged.dense, start.dense, strict=True):
        np.testing.assert_array_equal(a.weights, s.weights)
        np.testing.assert_array_equal(b.weights, np.nextafter(s.weights, -np.inf))
    # the starting gap is one unit in the last place of the largest weight
    largest = max(float(np.max(np.abs(d.weights))) for d in start.dense)
    assert p.nudge() == pytest.approx(np.spacing(largest), rel=0.5)
    assert p.epochs == 0 and p.rate == lastbits.RATE


def test_gap_of_identical_halves_is_zero_and_training_separates_them(data) -> None:
    start = deepnet.build("batch", [0])
    same = lastbits.Pair(deepnet.concatenate([start, start]), (0,), 0.3)
    gap = same.gap(data)
    assert gap.weights.tolist() == [0.0] and gap.changed.tolist() == [0]
    assert same.further(1, data).gap(data).weights.tolist() == [0.0]  # no nudge, no gap
    nudged = lastbits.pair((0,)).further(1, data)
    assert nudged.epochs == 1 and 0 < nudged.gap(data).weights[0] < 1e-9
    assert gap.held_out == 64


def test_growth_trains_in_stretches_and_refuses_bad_marks(data) -> None:
    gaps = lastbits.growth((0,), data, marks=(1, 2))
    by_hand = lastbits.pair((0,)).further(1, data)
    np.testing.assert_array_equal(gaps[0].weights, by_hand.gap(data).weights)
    np.testing.assert_array_equal(gaps[1].weights, by_hand.further(1, data).gap(data).weights)
    for bad in ((), (2, 1), (0, 2), (1, 1)):
        with pytest.raises(SettingError):
            lastbits.growth((0,), data, marks=bad)
    with pytest.raises(SettingError):
        lastbits.pair((0,)).further(0, data)


def test_gpu_section_defaults_hold_in_pytorch(oracle) -> None:
    """Benchmarking off and cuDNN's deterministic flag off by default; TF32 allowed for cuDNN
    convolutions and not for matrix products; float32 matrix products at full precision."""
    torch = oracle("torch")
    assert torch.backends.cudnn.benchmark is False
    assert torch.backends.cudnn.deterministic is False
    assert torch.backends.cudnn.allow_tf32 is True
    assert torch.backends.cuda.matmul.allow_tf32 is False
    assert torch.get_float32_matmul_precision() == "highest"


def test_deterministic_mode_as_the_section_states(oracle) -> None:
    """use_deterministic_algorithms: a RuntimeError on an operation without a deterministic
    implementation (put_ without accumulation is one, on the CPU too), a warning instead with
    warn_only=True; its documentation covers CUDA convolutions and no longer asks for
    CUBLAS_WORKSPACE_CONFIG."""
    torch = oracle("torch")
    doc = torch.use_deterministic_algorithms.__doc__
    assert "torch.nn.Conv2d` when called on CUDA tensor" in doc and "RuntimeError" in doc
    assert "CUBLAS_WORKSPACE_CONFIG" not in doc
    before = torch.are_deterministic_algorithms_enabled()
    try:
        torch.use_deterministic_algorithms(True)
        with pytest.raises(RuntimeError, match="deterministic"):
            torch.zeros(3).put_(torch.tensor([0, 0]), torch.tensor([1.0, 2.0]))
        torch.use_deterministic_algorithms(True, warn_only=True)
        with pytest.warns(UserWarning, match="deterministic"):
            torch.zeros(3).put_(torch.tensor([0, 0]), torch.tensor([1.0, 2.0]))
    finally:
        torch.use_deterministic_algorithms(before)


def test_exercise_checker_knows_the_last_place_and_its_mistakes() -> None:
    from normcore.exercises import ch11

    assert np.spacing(3.0) == 2.0**-51  # computed by hand in the solution
    assert ch11.check_last_place(-51) == "right"
    assert "machine epsilon" in ch11.check_last_place(-52)
    assert "half the last place of 1.0" in ch11.check_last_place(-53)
    assert "count the bits" in ch11.check_last_place(-50)
    assert ch11.check_last_place(-51.5).startswith("not yet")
    assert ch11.check_last_place(None).startswith("waiting")
