"""gsfuzz: random torch programs, run by gradstack and by PyTorch, compared.

A program is a list of statements of torch code (:mod:`.program`), made by
:func:`.generate.generate` from ``(seed, index)`` alone.  :func:`.execute.execute` runs it
with ``torch`` bound to either library and records what each statement produced;
:func:`.compare.compare` puts the two records side by side and names the first difference
(a :class:`.compare.Verdict` in one of :data:`.compare.CATEGORIES`).  :mod:`.runner` runs
batches in child processes so that a segfault is counted instead of ending the run, and
:mod:`.shrink` reduces a failing program to a minimal standalone script.

Note [One text, two libraries]
Every program is plain torch code.  gradstack's API has torch's shape, so the same text runs
with ``import gradstack as torch``; nothing in a program names either library except
through the ``torch`` variable.  The printed repro is therefore a script a colleague can run
under both imports.
"""

__all__ = ["compare", "execute", "generate", "program", "runner", "shrink"]
