"""Math as MathML, written at build time: the site loads no script from a CDN.

Note [Math without MathJax]
~~~~~~~~~~~~~~~~~~~~~~~~~~~
Sphinx's default math renderer loads MathJax from cdn.jsdelivr.net, which an offline site
cannot reach (the browser test fails on any request leaving the local server).  The
browsers render MathML themselves (Chromium since 109, Firefox, Safari), and docutils
converts LaTeX to MathML (``docutils.utils.math.latex2mathml``), so this renderer writes
MathML into the pages and no script is needed.  docutils has no ``array`` environment; an
``array`` whose columns are all centred (the tutorial's Jacobian, ``{ccc}``) is
``matrix``, and is converted as one.  LaTeX that docutils cannot convert fails the build
with the formula and docutils' reason.
"""

from __future__ import annotations

import re

from docutils import nodes
from docutils.utils.math import MathError
from docutils.utils.math.latex2mathml import tex2mathml
from sphinx.util import logging

logger = logging.getLogger(__name__)
_CENTRED_ARRAY = re.compile(r"\\begin\{array\}\{c+\}")


def to_mathml(latex: str, block: bool) -> str:
    latex = _CENTRED_ARRAY.sub(r"\\begin{matrix}", latex).replace(r"\end{array}", r"\end{matrix}")
    return tex2mathml(latex, as_block=block)


def _render(self, node, block: bool) -> None:
    latex = node.astext()
    try:
        mathml = to_mathml(latex, block)
    except MathError as e:
        logger.warning("cannot write %r as MathML: %s", latex, e, location=node)
        mathml = f"<code>{self.encode(latex)}</code>"
    if block:
        self.body.append(f'<div class="math notranslate nohighlight">{mathml}</div>')
    else:
        self.body.append(f'<span class="math notranslate nohighlight">{mathml}</span>')
    raise nodes.SkipNode


def visit_inline(self, node) -> None:
    _render(self, node, block=False)


def visit_block(self, node) -> None:
    _render(self, node, block=True)


def setup(app):
    app.add_html_math_renderer("mathml", (visit_inline, None), (visit_block, None))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
