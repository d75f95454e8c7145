"""What the torch.func comparisons share (``test_func_transforms``, ``test_func_vmap``,
``test_func_nested_forward``): one array as a gradstack tensor and a torch tensor, and the
check of our results against torch's.  Imported as ``gradstack_functional_tests_func_compare``
(Note [Test helpers import by name] in the workspace's conftest.py)."""

from __future__ import annotations

import gradstack_tensor as gt
import numpy as np
import pytest
import torch


def both(a):
    a = np.asarray(a, dtype=np.float64)
    return gt.tensor(a), torch.tensor(a)


def close(ours, theirs, atol=1e-9, *, rtol=1e-7, strict=False):
    """Our results (tensors, nested in tuples, lists and dicts) against torch's: one
    structure (``strict``: the same container types and dict order) and shapes, values
    within ``atol`` and ``rtol``."""
    if isinstance(theirs, (tuple, list)):
        same = type(ours) is type(theirs) if strict else isinstance(ours, (tuple, list))
        assert same and len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            close(o, t, atol, rtol=rtol, strict=strict)
        return
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs) if strict else sorted(ours) == sorted(theirs)
        for k in theirs:
            close(ours[k], theirs[k], atol, rtol=rtol, strict=strict)
        return
    assert tuple(ours.shape) == tuple(theirs.shape), (ours.shape, theirs.shape)
    np.testing.assert_allclose(
        np.asarray(ours.tolist()), theirs.detach().numpy(), atol=atol, rtol=rtol
    )


def same_error(fn_ours, fn_theirs, *, message="exact", renames=()):
    """Our call raises what torch's raises: the same exception type, and a message (with
    torch's names in it replaced by ours: ``renames``, ``(old, new)`` pairs) equal to
    torch's (``message="exact"``), starting with it (``"prefix"``) or not compared
    (None)."""
    with pytest.raises(Exception) as theirs:
        fn_theirs()
    with pytest.raises(Exception) as ours:
        fn_ours()
    assert type(ours.value) is type(theirs.value), (ours.value, theirs.value)
    expected = str(theirs.value)
    for old, new in renames:
        expected = expected.replace(old, new)
    if message == "exact":
        assert str(ours.value) == expected
    elif message == "prefix":
        assert str(ours.value).startswith(expected)
    else:
        assert message is None, message
