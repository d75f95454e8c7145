"""Sphinx configuration of gradstack's documentation site.

    hatch run docs          # -> build/docs/index.html (offline; warnings are errors)

Note [Sphinx, not MkDocs]
~~~~~~~~~~~~~~~~~~~~~~~~~
Both were tried on ``Tensor``, ``Tensor.add`` (a method of a Cython cdef class compiled
with ``embedsignature.format=clinic``), ``gradstack.sin`` (a function made by a factory in
tensor-core), ``gradstack.nn.Linear`` and ``gradstack.autograd.grad``:

* Sphinx's autodoc reads a Cython method's signature from its ``__text_signature__``
  (``Tensor.add(other, *, alpha=1)``), a factory-made function's from ``inspect``
  (``gradstack.sin(input, *, out=None)``) and resolves ``gradstack.sin`` by importing it.
* mkdocstrings (griffe) reads source files first: ``gradstack.sin`` failed the build
  ("Could not resolve alias gradstack.sin pointing at gradstack_tensor.functions.sin")
  until every layer was listed in ``preload_modules``, and then showed the factory's inner
  ``def fn(input, *, out=None)`` as its source; Cython signatures needed
  ``force_inspection``; ``Linear`` listed ``__annotations__``, ``__doc__`` and
  ``__module__`` as members.  Its build of those five entries took 27 s of CPU against
  Sphinx's 3.5 s, most of it loading the layers statically.
* The seed tutorial is a sphinx-gallery script, the format PyTorch's tutorials are written
  in: sphinx-gallery runs it as it stands and renders its reStructuredText (math, notes).
  MkDocs would need it converted to a notebook with its text in Markdown.
* ``-W`` with ``nitpicky`` fails the build on any reference that does not resolve, in
  docstrings as in pages; MkDocs' ``--strict`` checks links between pages only.

numpy-style docstrings are read by napoleon rather than numpydoc: numpydoc renders a
docstring's first paragraph apart from the rest, which breaks the summaries that end in
``::`` before their literal block (nn-mini's optimisers show their algorithm that way), where
napoleon keeps the docstring's own reStructuredText and only rewrites its sections.

Note [The repository is the source folder]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Sphinx reads the repository's root (``include_patterns`` below), so that the Markdown files
the repository already has are the site's pages as they are, and the links between them
(``docs/distributed.md`` to ``packages/distributed/README.md``, a package README to the root
README) resolve as they do on a code host: the README, each package's README, the READMEs
the README links to (the examples, the real programs, the fuzzer), and every
page of ``docs/`` (a new one is listed in the site's contents by the glob at the end of
``docs/index.md``).  The pages' addresses keep their paths (``build/docs/docs/index.html``);
``build/docs/index.html`` sends the reader there.
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(DOCS / "_ext"))

import gradstack_tutorial  # noqa: E402

project = "gradstack"
author = "the gradstack authors"
copyright = "the gradstack authors"

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
    "gradstack_api",
    "gradstack_mathml",
]
html_math_renderer = "mathml"  # Note [Math without MathJax] in _ext/gradstack_mathml.py

# Note [The repository is the source folder]
root_doc = "docs/index"
include_patterns = [
    "README.md",
    "packages/*/README.md",
    "examples/README.md",
    "tests/real_programs/README.md",
    "tests/fuzz/README.md",
    "docs/**",
]
exclude_patterns = [
    "build",
    "dist",
    ".git",
    ".asv",
    "docs/_ext",
    "docs/_generated",
    "docs/tutorial/*.py",
    "docs/tutorial/*.ipynb",
    "docs/tutorial/*.zip",
    "docs/tutorial/*.md5",
    "docs/tutorial/*.codeobj.json",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}

# every reference must resolve, in pages and in docstrings (CI builds with -W)
nitpicky = True
nitpick_ignore_regex = [
    # standard-library and numpy types in signatures and docstrings: the build is offline
    # (no intersphinx inventories), so they are shown as text, not links
    ("py:class", r"(collections(\.abc)?|typing|pathlib|argparse|numpy|types)\.\w+"),
    ("py:class", r"defaultdict"),
    ("py:mod", r"(?!gradstack).*"),
    # private names have no entry on purpose (a docstring or an annotation may name one)
    (r"py:.*", r"(.*\.)?_[A-Za-z]\w*"),
]

# numpy-style docstrings (Note [Sphinx, not MkDocs] for napoleon over numpydoc)
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_param = False  # parameter types as written, not links guessed from the words
napoleon_use_rtype = False
autodoc_member_order = "bysource"
autodoc_typehints_format = "short"

# MyST: anchors for the headings of the Markdown pages (links such as README.md#set-up)
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath", "substitution"]
# the census of torch's names (tools/census.py, `hatch run census`) is linked where it
# exists, and named where it does not: a link to a missing page would fail the build
_CENSUS = DOCS / "census.md"
myst_substitutions = {
    "census": (
        "Name by name, with the reason of each group: [the census of torch's names]"
        "(../census.md) (`docs/census.md`, generated by `tools/census.py`)."
        if _CENSUS.exists()
        else "Name by name, with the reason of each group: the census of torch's names "
        "(`docs/census.md`, generated by `tools/census.py`)."
    ),
}

# the executed tutorial (docs/_ext/gradstack_tutorial.py writes the script from the seed)
_TUTORIAL_SRC = gradstack_tutorial.write(DOCS / "_generated" / "tutorial_src")
sphinx_gallery_conf = {
    "examples_dirs": [str(_TUTORIAL_SRC.relative_to(ROOT))],
    "gallery_dirs": ["docs/tutorial"],
    "filename_pattern": r".*\.py$",  # run every script (the default runs plot_*.py only)
    # run it on every build, not only when its source changed: its output is gradstack's
    "run_stale_examples": True,
    "download_all_examples": False,
    "remove_config_comments": True,
    "plot_gallery": "True",
    "abort_on_example_error": True,
    "show_memory": False,
    "show_signature": False,
    "reset_modules": ("matplotlib",),
    "matplotlib_animations": False,
    "write_computation_times": False,
}

html_theme = "pydata_sphinx_theme"
html_title = "gradstack"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "navbar_align": "left",
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_show_sourcelink = False
html_copy_source = False
