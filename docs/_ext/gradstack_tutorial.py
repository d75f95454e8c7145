"""The seed tutorial as an executed page: PyTorch's "The Fundamentals of Autograd", run on
gradstack when the site is built (sphinx-gallery).

The tutorial is a sphinx-gallery script (the format PyTorch's tutorials are written in), kept
byte for byte in ``tests/seeds/000_ab3f10e63ddc9797.txt`` inside an HTML wrapper.  This
module writes the script sphinx-gallery runs, changing what ``tests/test_tutorial_seed.py``
changes (the wrapper removed, entities unescaped, ``import torch`` made
``import gradstack as torch``) and, in the text only, two things a built site cannot keep:
the links to the neighbouring pages of PyTorch's tutorial series, which do not exist here,
and the embedded video (an iframe loading youtube.com: the site works offline).  A note
after the title says what the page is.  Every printed tensor, table and plot on the page
is the output of gradstack at build time.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "tests" / "seeds" / "000_ab3f10e63ddc9797.txt"
NAME = "autograd_tutorial.py"

NOTE = """
.. note::

   This is PyTorch's tutorial `The Fundamentals of Autograd
   <https://pytorch.org/tutorials/beginner/introyt/autogradyt_tutorial.html>`__ (BSD
   licence), run on gradstack: its one line ``import torch`` reads
   ``import gradstack as torch``, nothing else in its code changed.  Every tensor, table and
   plot below was computed by gradstack when this site was built.
"""


def tutorial_source() -> str:
    text = SEED.read_text(encoding="utf-8")
    match = re.search(r"<pre[^>]*>(.*)</pre>", text, re.S)
    if match is None:
        raise RuntimeError(f"{SEED} has no <pre> block")
    return html.unescape(match.group(1))


def gallery_script() -> str:
    """The script sphinx-gallery runs (see the module docstring for what changes)."""
    src = tutorial_source()
    lines = src.split("\n")
    hits = [i for i, line in enumerate(lines) if line == "import torch"]
    if len(hits) != 1:
        raise RuntimeError(f"expected one 'import torch' line in {SEED}, found {len(hits)}")
    lines[hits[0]] = "import gradstack as torch"
    src = "\n".join(lines)
    # the header docstring: drop the series' navigation line and the video, add the note
    head_end = src.index('"""', 3)
    head = src[3:head_end]
    title = re.search(r"^(The Fundamentals of Autograd\n=+\n)", head, re.M)
    if title is None:
        raise RuntimeError("the tutorial's title was not found")
    rest = head[title.end() :]
    rest = re.sub(r"\nFollow along with the video.*?</div>\n", "\n", rest, count=1, flags=re.S)
    if "iframe" in rest or "youtube" in rest:
        raise RuntimeError("the tutorial's video block was not removed: its layout changed")
    return '"""\n' + title.group(1) + NOTE + rest + src[head_end:]


def write(src_dir: Path) -> Path:
    """Write the gallery's source folder (its header and the script); returns the folder."""
    src_dir.mkdir(parents=True, exist_ok=True)
    files = {
        src_dir / "GALLERY_HEADER.rst": (
            "The seed tutorial\n=================\n\n"
            "PyTorch's autograd tutorial, executed on gradstack when the site is built.\n"
        ),
        src_dir / NAME: gallery_script(),
    }
    for path, text in files.items():
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    return src_dir
