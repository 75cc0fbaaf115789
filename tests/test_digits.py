"""The shipped 8 x 8 digits: the file is the published one, and the loader refuses bad text."""

from __future__ import annotations

import numpy as np
import pytest

from normcore import DtypeError, NormcoreError, SettingError, ShapeError
from normcore.data import Digits, load_digits, split_digits
from normcore.data.digits import SHA256, checksum, parse_digits

# The UCI description of optdigits.tes (the set scikit-learn ships) lists these class counts.
UCI_TEST_COUNTS = [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]


def test_file_is_the_published_copy() -> None:
    assert checksum() == SHA256


def test_shape_labels_and_range() -> None:
    d = load_digits()
    assert isinstance(d, Digits) and len(d) == 1797
    assert d.images.shape == (1797, 64) and d.images.dtype == np.float64
    assert np.bincount(d.labels).tolist() == UCI_TEST_COUNTS
    assert d.images.min() == 0 and d.images.max() == 16
    np.testing.assert_array_equal(d.images, np.round(d.images))
    assert 0 <= d.scaled.min() and d.scaled.max() == 1
    with pytest.raises(ValueError):
        d.images[0, 0] = 1.0  # read-only, shared by every caller


def test_first_image_is_a_zero() -> None:
    # the first line of the file, an image of a 0 with an empty centre column
    d = load_digits()
    assert d.labels[0] == 0
    image = d.images[0].reshape(8, 8)
    assert image[3:5, 3:5].sum() == 0 and image[:, 0].sum() == 0 and image[:, 2].sum() > 0


def _line(pixels: list[str], label: str = "3") -> str:
    return ",".join([*pixels, label])


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("", ShapeError),
        (_line(["0"] * 63), ShapeError),
        (_line(["0"] * 63 + ["x"]), DtypeError),
        (_line(["0"] * 63 + ["1.5"]), DtypeError),
        (_line(["0"] * 63 + ["17"]), SettingError),
        (_line(["0"] * 63 + ["-1"]), SettingError),
        (_line(["0"] * 64, "10"), SettingError),
    ],
)
def test_bad_text_is_refused(text: str, error: type[NormcoreError]) -> None:
    with pytest.raises(error):
        parse_digits(text)


def test_one_good_line_parses() -> None:
    d = parse_digits(_line([str(i % 17) for i in range(64)], "7"))
    assert d.images.shape == (1, 64) and d.labels.tolist() == [7]
    assert d.images[0, 16] == 16


def test_split_is_a_partition_and_seeded() -> None:
    train, held = split_digits(0.2, seed=3)
    assert len(held) == round(0.2 * 1797) and len(train) + len(held) == 1797
    assert np.intersect1d(train, held).size == 0
    again = split_digits(0.2, seed=3)
    np.testing.assert_array_equal(train, again[0])
    assert not np.array_equal(held, split_digits(0.2, seed=4)[1])


@pytest.mark.parametrize(
    ("held_out", "seed"),
    [
        (0, 0),
        (1, 0),
        (-0.1, 0),
        ("0.2", 0),
        (True, 0),
        (0.2, -1),
        (0.2, 1.5),
        (0.2, True),
        (1e-6, 0),
    ],
)
def test_bad_split_is_refused(held_out: object, seed: object) -> None:
    with pytest.raises(SettingError):
        split_digits(held_out, seed)
