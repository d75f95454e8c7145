"""Attributes set on a tensor (``t.foo = 1``), as torch tensors take them, and the instance
dict that holds them, made on first use (Note [An instance dict is made on first use] in
tensor-core's ``hatch_build.py``)."""

import copy
import gc
import weakref

import gradstack_tensor as gt
import numpy as np
import pytest


def _instance_dicts(t):
    """The dicts the tensor holds (its ``__dict__`` slot, once made), by the cyclic GC's
    own traversal of the object."""
    return [r for r in gc.get_referents(t) if type(r) is dict]


def test_a_new_tensor_has_no_instance_dict_yet():
    # Fails if the build's rewrite of Cython's tp_new stopped applying (a Cython version
    # that words the statement otherwise): the dict would be made for every tensor again.
    for t in (gt.ones(2, 3), gt.tensor([1.0]) * 2, gt.zeros(()), gt.arange(4).view(2, 2)):
        assert _instance_dicts(t) == []


def test_setting_an_attribute_makes_the_dict():
    t = gt.ones(2)
    t.note = "weights"
    t.count = 3
    assert (t.note, t.count) == ("weights", 3)
    assert _instance_dicts(t) == [{"note": "weights", "count": 3}]
    assert vars(t) == {"note": "weights", "count": 3}
    del t.note
    assert vars(t) == {"count": 3}
    with pytest.raises(AttributeError, match="note"):
        _ = t.note


def test_reading_the_dict_first_makes_it_empty_and_shared():
    t = gt.ones(2)
    d = t.__dict__
    assert d == {}
    d["tag"] = 1  # the dict returned is the instance's own
    assert t.tag == 1
    assert t.__dict__ is d


def test_a_missing_attribute_raises_attribute_error_without_a_dict():
    t = gt.ones(2)
    with pytest.raises(AttributeError, match="not_there"):
        _ = t.not_there
    assert getattr(t, "not_there", None) is None
    assert not hasattr(t, "not_there")
    assert _instance_dicts(t) == []


def test_attributes_survive_copies_and_follow_the_object():
    t = gt.tensor([1.0, 2.0])
    t.meta = {"a": [1, 2]}
    c = copy.copy(t)
    d = copy.deepcopy(t)
    assert c.meta == {"a": [1, 2]} and d.meta == {"a": [1, 2]}
    assert d.meta is not t.meta
    np.testing.assert_array_equal(d.numpy(), [1.0, 2.0])
    assert vars(copy.deepcopy(gt.ones(3))) == {}


def test_an_attribute_cycle_through_the_tensor_is_collected():
    t = gt.ones(2)
    t.me = t  # a cycle through the instance dict
    ref = weakref.ref(t)
    del t
    gc.collect()
    assert ref() is None


def test_ops_do_not_carry_attributes_to_their_results():
    t = gt.ones(2)
    t.tag = "x"
    assert not hasattr(t + 1, "tag")
    assert not hasattr(t.view(2), "tag")
