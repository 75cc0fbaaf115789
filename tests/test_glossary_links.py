r"""Every chapter links each glossary term it uses to the glossary at its first use (issue #41).

A use is the term (or its plural) in the chapter's prose, outside code cells, inline code,
mathematics, headings and roles, or a {term} link to it; a term inside a longer term belongs to
the longer one ("gradient" in "upstream gradient"). The first use of each term in `LINKED_TERMS`
must be a link: `{term}\`gradient\`` or `{term}\`gradients <gradient>\``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

BOOK = Path(__file__).resolve().parent.parent / "book"
CHAPTERS = sorted(BOOK.glob("[0-9][0-9]-*.md"))

# the rename script (issue #41) carries the same list and rules: keep the two in step
# rename: off (glossary headwords, as the glossary spells them)
LINKED_TERMS = (
    "running statistics",
    "running mean",
    "running variance",
    "momentum",
    "epsilon",
    "standardised values",
    "biased variance",
    "input gradient",
    "the three routes",
    "oracle",
    "gradient",
    "learning rate",
    "training mode",
    "evaluation mode",
    "logit",
    "dead unit",
    "random seed",
    "epoch",
    "layer normalisation",
    "RMS normalisation",
    "mini-batch",
    "batch normalisation",
    "batch layer",
    "frozen batch normalisation",
    "ReLU",
    "cross-entropy",
    "internal covariate shift",
    "covariate shift",
    "ghost batch normalisation",
    "instance normalisation",
    "group normalisation",
    "effective weights",
    "loss variation",
    "gradient predictiveness",
    "scale invariance",
    "effective learning rate",
    "weight decay",
    "Jacobian",
    "structural check",
    "He initialisation",
    "upstream gradient",
    "skewness",
    "divisor",
    "precise statistics",
    "convolution",
    "weight standardisation",
    "bootstrap",
    "paired comparison",
)
# rename: on
_MASKS = re.compile(
    r"(?ms)^(`{3,}|~{3,}).*?^\1[ \t]*$"  # fenced blocks (code cells, directives' options)
    r"|<!-- rename: off -->.*?<!-- rename: on -->"
    r"|^#{1,6} .*?$"  # headings
    r"|^\(\S+\)=[ \t]*$"  # labels
    r"|^:::.*?$|^---$"
    r"|\$\$.*?\$\$|\$[^$\n]+(?:\n[^$\n]+)?\$"  # mathematics (inline math may wrap a line)
    r"|\{[a-z:-]+\}`[^`]*`"  # roles
    r"|``[^`]+``|`[^`\n]+`"  # inline code
    r"|\]\([^)]*\)|<!--.*?-->|https?://\S+"
)
_TERM_ROLE = re.compile(r"\{term\}`([^`<]*?)\s*(?:<([^`>]*)>)?`")


def _term_pattern(term: str) -> re.Pattern:
    words = [re.escape(w) for w in term.split(" ")]
    body = r"[ \t]*\n?[ \t]*(?<=\s)".join(words)
    plural = r"(?:es|s)?" if not term.endswith("s") else ""
    return re.compile(rf"(?<![\w`{{<-]){body}{plural}(?![\w-])", re.IGNORECASE)


def term_uses(text: str, terms=LINKED_TERMS):
    """For each term, its first use in the prose: (position, linked?, match) or None. A use is a
    plain occurrence outside code, mathematics, headings and roles, or a {term} link to it; an
    occurrence inside a longer term's occurrence is that term's."""
    masked = [m.span() for m in _MASKS.finditer(text)]
    links = {}
    for m in _TERM_ROLE.finditer(text):
        target = (m.group(2) or m.group(1)).strip().lower()
        links.setdefault(target, m.start())
    covered: list[tuple[int, int]] = []
    out = {}
    for term in sorted(terms, key=len, reverse=True):
        plain = None
        for m in _term_pattern(term).finditer(text):
            a, b = m.span()
            if any(x <= a < y for x, y in masked) or any(x <= a < y for x, y in covered):
                continue
            covered.append((a, b))
            if plain is None:
                plain = m
        link = links.get(term.lower())
        if plain is None and link is None:
            out[term] = None
        elif link is not None and (plain is None or link < plain.start()):
            out[term] = (link, True, None)
        else:
            out[term] = (plain.start(), False, plain)
    return out


def link_first_uses(text: str) -> tuple[str, int]:
    """Each term's first use made a glossary link (when it is not one already)."""
    edits = []
    for term, use in term_uses(text).items():
        if use and not use[1]:
            m = use[2]
            shown = " ".join(m.group(0).split())
            role = f"{{term}}`{shown}`" if shown == term else f"{{term}}`{shown} <{term}>`"
            edits.append((m.start(), m.end(), role))
    for a, b, role in sorted(edits, reverse=True):
        text = text[:a] + role + text[b:]
    return text, len(edits)


def test_every_linked_term_is_in_the_glossary() -> None:
    glossary = (BOOK / "glossary.md").read_text(encoding="utf-8")
    headwords = set(
        re.findall(
            r"^([a-zA-Z][\w ()'-]*)\n(?=(?:[a-zA-Z][\w ()'-]*\n)*  \S)", glossary, re.MULTILINE
        )
    )
    assert set(LINKED_TERMS) <= headwords, set(LINKED_TERMS) - headwords


def test_the_first_use_is_found() -> None:
    """A baseline: an unlinked first use is found, a linked one is not reported, code and a
    longer term do not count."""
    text = (
        "# Gradient heading\n\nThe `gradient` in code, $gradient$, the upstream gradient and\n"
        "then the gradients.\n\nLater a {term}`gradient` link.\n"
    )
    uses = term_uses(text, ("gradient", "upstream gradient"))
    kind, linked, m = uses["gradient"]
    assert not linked and m.group(0) == "gradients"
    fixed, n = link_first_uses(text)
    assert n >= 1 and "{term}`gradients <gradient>`" in fixed
    assert all(use is None or use[1] for use in term_uses(fixed).values())


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_each_term_is_linked_at_its_first_use(chapter: Path) -> None:
    text = chapter.read_text(encoding="utf-8")
    unlinked = []
    for term, use in term_uses(text).items():
        if use and not use[1]:
            line = text.count("\n", 0, use[0]) + 1
            unlinked.append(f"{chapter.name}:{line}: first use of {term!r} is not a glossary link")
    assert not unlinked, "\n".join(unlinked)
