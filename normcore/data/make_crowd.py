"""Generate ``crowd.csv``: 25 fictional people, height, weight and a 0/1 label.

Run ``python -m normcore.data.make_crowd`` to rewrite the shipped file; the tests check that the
shipped file equals what this script produces.

How the crowd is made (all draws from ``np.random.default_rng(CROWD_SEED)``, in this order):

1. labels: 13 zeros and 12 ones, put in a random order;
2. height (cm): normal with mean 168 for label 0 and 175 for label 1, standard deviation 7;
3. body-mass index (kg/m²): normal with mean 22.5 for label 0 and 24.5 for label 1,
   standard deviation 2.5; weight = index · (height in m)², so weight grows with height;
4. heights are clipped to 140–200 cm and weights to 40–110 kg, then both are rounded to 0.1.

Label 1 is therefore a group that is on average taller and heavier, but the two groups share a
middle band where people of both labels stand side by side, so no boundary separates them all.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

__all__ = ["CROWD_SEED", "COLUMNS", "generate", "render_csv", "write_csv"]

CROWD_SEED: int = 20240613

# The seeds in this module make the book's data, which stay what the page describes when
# tools/fresh_seeds.py moves every other seed (network starts, folds, shuffles).
__fixed_seeds__ = True
"""The fixed seed of the generator."""

COLUMNS: tuple[str, str, str] = ("height_cm", "weight_kg", "label")

_COUNTS = (13, 12)  # people with label 0, label 1
_HEIGHT_MEAN = (168.0, 175.0)
_HEIGHT_SD = 7.0
_BMI_MEAN = (22.5, 24.5)
_BMI_SD = 2.5


def generate(seed: int = CROWD_SEED) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Draw the crowd: ``(height, weight, label)``, each of shape (25,).

    Heights and weights are float64 rounded to one decimal; labels are int64 0/1.
    """
    rng = np.random.default_rng(seed)
    label = rng.permutation(np.repeat([0, 1], _COUNTS)).astype(np.int64)
    height = rng.normal(np.take(_HEIGHT_MEAN, label), _HEIGHT_SD)
    bmi = rng.normal(np.take(_BMI_MEAN, label), _BMI_SD)
    weight = bmi * (height / 100.0) ** 2
    height = np.round(np.clip(height, 140.0, 200.0), 1)
    weight = np.round(np.clip(weight, 40.0, 110.0), 1)
    return height, weight, label


def render_csv(height: np.ndarray, weight: np.ndarray, label: np.ndarray) -> str:
    """The CSV text: a ``#`` comment header, a column-name line, then one person per line."""
    header = [
        "# The crowd: 25 fictional people (13 with label 0, 12 with label 1), not real data.",
        f"# Made by normcore/data/make_crowd.py with numpy.random.default_rng({CROWD_SEED}):",
        "# label 1 is on average taller and heavier (height ~ N(175, 7) cm, body-mass index",
        "# ~ N(24.5, 2.5)) than label 0 (N(168, 7) cm, N(22.5, 2.5)); weight = index * height_m^2.",
        "# The two labels overlap in the middle. Heights and weights are rounded to 0.1.",
        ",".join(COLUMNS),
    ]
    body = [f"{h:.1f},{w:.1f},{int(y)}" for h, w, y in zip(height, weight, label, strict=True)]
    return "\n".join(header + body) + "\n"


def write_csv(path: Path | None = None) -> Path:
    """Generate the crowd and write it to ``path`` (default: ``crowd.csv`` beside this file)."""
    target = Path(__file__).with_name("crowd.csv") if path is None else Path(path)
    target.write_text(render_csv(*generate()), encoding="utf-8")
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="where to write (default: package)")
    print(write_csv(parser.parse_args().out))


if __name__ == "__main__":
    main()
