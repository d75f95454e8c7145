"""Shared fixtures of the profiler tests.

Every test is followed by a check that the profiler left nothing behind: the dispatch
point holds only the layers it held before the test, and no engine observer is set
(the profiler must register itself only while a profile is active).
"""

from __future__ import annotations

import gradstack_autograd  # noqa: F401 - the autograd layer
import gradstack_tensor as gt
import pytest
from gradstack_autograd import _engine


@pytest.fixture(autouse=True)
def _nothing_left_registered():
    before = gt.registered_layers()
    assert _engine._node_observer is None
    yield
    assert gt.registered_layers() == before, "a profiler layer is still registered"
    assert _engine._node_observer is None, "a node observer is still installed"


@pytest.fixture
def tutorial_tensors():
    """x, y, z of the tutorial's profiler cell (2x3, requiring grad)."""
    gt.manual_seed(0)
    x = gt.randn(2, 3, requires_grad=True)
    y = gt.rand(2, 3, requires_grad=True)
    z = gt.ones(2, 3, requires_grad=True)
    return x, y, z
