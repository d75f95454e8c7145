"""What the fuzzer's regression tests share (``test_fuzz_regressions.py``,
``test_fuzz_regressions_views.py``): a program ``program(lib)`` runs with ``lib`` gradstack
or torch; these give the library's ``no_grad`` and ``grad``, and run a program in both.
Imported as ``gradstack_autograd_tests_fuzz_programs`` (Note [Test helpers import by name]
in the workspace's conftest.py)."""

from __future__ import annotations

import gradstack_autograd
import gradstack_tensor as gt
import numpy as np
import torch


def _no_grad(lib):
    return gradstack_autograd.no_grad() if lib is gt else torch.no_grad()


def _grad(lib):
    return gradstack_autograd.grad if lib is gt else torch.autograd.grad


def _both(program):
    out = []
    for lib in (gt, torch):
        try:
            out.append(("ok", [np.asarray(v.tolist()).tolist() for v in program(lib)]))
        except (RuntimeError, TypeError, IndexError, ValueError) as e:
            out.append(("raises", type(e).__name__))
    return out
