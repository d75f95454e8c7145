"""The examples of the site's guides (docs/**/*.md) run and print what they show.

A guide's examples are ``pycon`` blocks (``>>>`` lines and their output) in Markdown.
Everything outside them is blanked before doctest reads the file (the line numbers stay):
a closing fence is not taken for expected output, and a ``>>>`` quoted inside another
block (a docstring shown in a ``python`` block of docs/architecture.md) is not run.
"""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "```pycon" in p.read_text(encoding="utf-8"))


def pycon_only(text: str) -> str:
    """``text`` with every line outside its ``pycon`` blocks (fences included) blanked."""
    kept, inside = [], False
    for line in text.splitlines():
        fence = line.strip().startswith(("```", "~~~"))
        if fence:
            inside = not inside and line.strip()[3:].strip() == "pycon"
            kept.append("")
        else:
            kept.append(line if inside else "")
    return "\n".join(kept) + "\n"


FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def test_the_guides_have_examples():
    names = {p.relative_to(DOCS).as_posix() for p in PAGES}
    assert {"guides/coming-from-pytorch.md", "guides/extending.md", "guides/installing.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(DOCS).as_posix() for p in PAGES])
def test_guide_examples(page):
    text = pycon_only(page.read_text(encoding="utf-8"))
    test = doctest.DocTestParser().get_doctest(text, {}, page.name, str(page), 0)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0
    assert result.failed == 0, f"{page.name}: {result.failed} example(s) failed (see above)"
