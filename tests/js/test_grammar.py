"""The page and Python read a reader's text the same way: one grammar (normcore/widgets/_input.py,
written into every bundle as CONFIG.input), two readers, held to the same answers under node.

Every text below, and every text drawn from an alphabet of troublesome characters (Unicode digits
and spaces, control characters, line and paragraph separators, a byte-order mark, characters
outside the Basic Multilingual Plane, signs, points and exponents), gets from js/input.js exactly
what Python's `parse_number` and `parse_matrix` give: the same number, or the same sentence.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from js.node import run
from normcore.errors import NormcoreError
from normcore.widgets._input import LONGEST, parse_matrix, parse_number

# A number box and a block box, each text under each limit (the widgets' own limits).
LIMITS = [1e9, 1e6, 1000.0]
TROUBLE = [
    "５",
    "٣",
    "۳",
    "߃",
    "१",
    "𝟓",
    "¹",
    "½",
    "Ⅻ",  # Unicode digits and numbers
    "\u00a0",
    "\u2007",
    "\u202f",
    "\u3000",
    "\u2009",
    "\u1680",
    "\u205f",  # Unicode spaces
    "\x0c",
    "\x0b",
    "\x1c",
    "\x1d",
    "\x1e",
    "\x1f",
    "\x85",
    "\x00",
    "\x7f",  # controls
    "\u2028",
    "\u2029",
    "\ufeff",
    "\u200b",
    "\u200e",  # separators, BOM, zero-width, marks
    "\t",
    "\n",
    "\r",
    " ",
    ",",
    ";",
    "'",
    '"',
    "\\",
    "…",
    "é",
    "😀",
]
NUMBERS = [
    "0",
    "1",
    "-1",
    "+1",
    "1.",
    ".5",
    "-.5",
    "1e3",
    "1E-3",
    "1e+3",
    "-0",
    "+0.0",
    "007",
    "1e400",
    "-1e400",
    "1e-400",
    "2e9",
    "1e9",
    "-1e9",
    "999999999.9",
    "1000000000.0000001",
    "9" * 39,
    "1" * 40,
    "1" * 41,
    "1e",
    "e1",
    "1e1.5",
    "--1",
    "+-1",
    "1..2",
    ".",
    "+",
    "-",
    "0x10",
    "1_000",
    "nan",
    "NaN",
    "inf",
    "-Infinity",
    "abc",
    "",
    " ",
    "\t7\t",
    "  7  ",
]
FIXED = (
    NUMBERS
    + [c + "1" for c in TROUBLE]
    + ["1" + c for c in TROUBLE]
    + ["1" + c + "2" for c in TROUBLE]
    + [c for c in TROUBLE]
    + [
        "x" * 100_000,
        "1," * 1500,
        "1\n" * 700,
        "1 2\n3 4",
        "1;2",
        "1,2;3,4",
        "1\r\n2",
        "\ufeff1, 2",
    ]
)
TEXTS = st.text(alphabet=st.sampled_from(TROUBLE + list("0123456789+-.eE ")), max_size=LONGEST + 5)

SCRIPT = """
const out = input.map(([text, limit]) => {
  const number = m.parseNumber(text, "box", limit);
  let block;
  try {
    block = {value: m.readMatrix(text, "block", limit, 12, 6)};
  } catch (error) {
    if (!(error instanceof m.InputError)) throw error;
    block = {error: error.message};
  }
  return {number, block, friendly: number.error === undefined ? null : m.friendly(number.error)};
});
answer(out);
"""


def python(text: str, limit: float) -> dict:
    """What Python's readers answer, in the page's form."""
    try:
        number: dict = {"value": parse_number(text, "box", limit)}
    except NormcoreError as error:
        number = {"error": str(error)}
    try:
        block: dict = {"value": parse_matrix(text, "block", limit, 12, 6)}
    except NormcoreError as error:
        block = {"error": str(error)}
    return {"number": number, "block": block}


def check(node: str, texts: list[str]) -> None:
    from normcore.widgets._input import friendly

    cases = [[t, limit] for t in texts for limit in LIMITS]
    page = run(node, "input.js", SCRIPT, cases)
    assert len(page) == len(cases)
    for (text, limit), got in zip(cases, page, strict=True):
        want = python(text, limit)
        for reader in ("number", "block"):
            if "error" in want[reader]:
                assert got[reader] == want[reader], (reader, text[:60], limit)
            else:
                assert "error" not in got[reader], (reader, text[:60], got[reader])
                assert got[reader]["value"] == want[reader]["value"], (reader, text[:60])
                assert all(math.isfinite(v) for v in [want[reader]["value"]] if reader == "number")
        if "error" in want["number"]:
            assert got["friendly"] == friendly(want["number"]["error"])


def test_the_two_readers_agree_on_adversarial_text(oracle) -> None:
    check(oracle("node"), FIXED)


@settings(
    max_examples=5,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(st.lists(TEXTS, min_size=200, max_size=200))
def test_the_two_readers_agree_on_random_troublesome_text(oracle, texts: list[str]) -> None:
    check(oracle("node"), texts)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("５", "box: '\\uff15' is not a number"),
        ("\ufeff1", "box: '\\ufeff1' is not a number"),
        ("1\x0c2", "box: '1\\u000c2' is not a number"),
        ("𝟓", "box: '\\U0001d7d3' is not a number"),
        ("it's", "box: 'it\\'s' is not a number"),
    ],
)
def test_a_refused_text_is_quoted_with_its_codes(text: str, want: str) -> None:
    with pytest.raises(NormcoreError) as caught:
        parse_number(text, "box")
    assert str(caught.value) == want


def test_a_block_breaks_rows_only_at_line_breaks_and_semicolons() -> None:
    assert parse_matrix("1, 2\n3 4", "b", 10, 4, 4) == [[1.0, 2.0], [3.0, 4.0]]
    assert parse_matrix("1;2\r\n3", "b", 10, 4, 4) == [[1.0], [2.0], [3.0]]
    for separator in ("\x0c", "\x0b", "\u2028", "\u2029", "\x85", "\x1e"):
        with pytest.raises(NormcoreError, match="not a number"):
            parse_matrix(f"1{separator}2", "b", 10, 4, 4)
