"""The glossary defines the terms the prose leans on, standard terms and the book's plain words."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

GLOSSARY = Path(__file__).resolve().parent.parent / "book" / "glossary.md"
TERMS = re.compile(r"^([a-zA-Z][\w ()'-]*)\n  \S", re.MULTILINE)
REQUIRED = [
    "gradient",
    "grad",
    "learning rate",
    "running mean",
    "running variance",
    "running statistics",
    "training mode",
    "evaluation mode",
    "mode",
    "logit",
    "dead unit",
    "variant",
    "crowd",
    "momentum",
    "eps",
    "biased variance",
    "oracle",
    "passed down",
    "the three routes",
    "layer normalisation",
    "RMS normalisation",
    "instance normalisation",
    "group normalisation",
    "batch layer",
    "held out",
    "fold",
    "epoch",
    "random seed",
]


def defined() -> set[str]:
    return set(TERMS.findall(GLOSSARY.read_text(encoding="utf-8")))


@pytest.mark.parametrize("term", REQUIRED)
def test_term_is_defined(term: str):
    assert term in defined(), f"the glossary does not define {term!r}"


def test_no_stride_for_the_learning_rate():
    """'stride' is a convolution's step; the book says learning rate."""
    book = GLOSSARY.parent
    for md in sorted(book.glob("[0-9][0-9]-*.md")):
        prose = re.sub(r"```.*?```", "", md.read_text(encoding="utf-8"), flags=re.DOTALL)
        if "{term}`convolution`" in prose:  # a chapter with convolutions: stride is their step
            continue
        assert not re.search(r"\bstride\b", prose, re.IGNORECASE), md.name
