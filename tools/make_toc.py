"""Write _toc.yml from the chapters present: book/NN-*.md in order, then the back matter
(book/glossary.md, book/bibliography.md).

Jupyter Book fails on a toc entry whose file is missing, so the toc lists only what exists.
The first chapter found (normally book/00-preface) is the root page.

    python tools/make_toc.py           # rewrite _toc.yml
    python tools/make_toc.py --check   # exit 1 if _toc.yml is out of date
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHAPTER = re.compile(r"^\d\d-[a-z0-9-]+\.md$")
EXTRA = ("glossary", "bibliography")  # pages listed after the chapters, when present


def entries(root: Path = ROOT) -> list[str]:
    book = root / "book"
    chapters = sorted(p.stem for p in book.glob("*.md") if CHAPTER.match(p.name))
    extra = [name for name in EXTRA if (book / f"{name}.md").is_file()]
    return [f"book/{name}" for name in chapters + extra]


def render(docs: list[str]) -> str:
    """The toc: the first page as root, the numbered chapters as one part, the back matter
    (glossary) as another, unnumbered. Numbering the chapters gives each figure a number that
    is unique in the book (Fig. 3.2 is chapter 3's second) and agrees with the file's NN."""
    if not docs:
        raise SystemExit("make_toc: no book/NN-*.md chapter found")
    lines = [
        "# Written by tools/make_toc.py from the files in book/; re-run it, do not edit.",
        "format: jb-book",
        f"root: {docs[0]}",
    ]
    back = [doc for doc in docs[1:] if doc.removeprefix("book/") in EXTRA]
    chapters = [doc for doc in docs[1:] if doc not in back]
    parts = [("Chapters", True, chapters), ("Back matter", False, back)]
    if chapters or back:
        lines.append("parts:")
    for caption, numbered, files in parts:
        if not files:
            continue
        lines.append(f"  - caption: {caption}")
        if numbered:
            lines.append("    numbered: true")
        lines.append("    chapters:")
        lines += [f"      - file: {doc}" for doc in files]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report whether it is current")
    args = parser.parse_args(argv)
    text = render(entries())
    target = ROOT / "_toc.yml"
    if args.check:
        current = target.read_text(encoding="utf-8") if target.exists() else ""
        if current != text:
            print("_toc.yml is out of date: run python tools/make_toc.py", file=sys.stderr)
            return 1
        return 0
    target.write_text(text, encoding="utf-8")
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
