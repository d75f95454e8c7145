"""Event names: what an op, a backward node or a labelled block is called in a profile.

Note [Event naming scheme]
~~~~~~~~~~~~~~~~~~~~~~~~~~
A profile of gradstack should read like a profile of the same code under torch, so that
people can compare the two line by line:

- an op that torch also has is named as torch's dispatcher names it, ``aten::<op>``
  (``aten::mul``, ``aten::div``, ``aten::add_``, ``aten::sum``).  Which name that is, is
  declared with the op, in tensor-core's op table (``Op.aten``: a few gradstack ops have a
  different torch name, ``to_dtype`` is ``aten::to``); this module keeps no list of ops.  A
  test checks each name against torch when torch is installed;
- an op without an ``aten`` counterpart, or one registered by an extension with
  ``gradstack_tensor.register_op`` (without ``aten=``), is ``gradstack::<op>``
  (``gradstack::getitem``: torch spreads indexing over ``aten::select``/``aten::slice``/
  ``aten::index``; gradstack runs it as one op);
- a backward node run by the engine is named by its class, as ``grad_fn`` prints it
  (``MulBackward0``, ``AccumulateGrad``).  torch wraps each one in an extra
  ``autograd::engine::evaluate_function: MulBackward0`` event; gradstack records one event;
- a ``record_function(name)`` block is named ``name``;
- bytes freed outside any event are ``[memory]`` events, as in torch.
"""

from __future__ import annotations

from gradstack_tensor import OPS

__all__ = ["event_name"]

_cache: dict[str, str] = {}


def event_name(op_name: str) -> str:
    """The profile's name for the op called ``op_name`` (Note [Event naming scheme]).

    >>> event_name("mul"), event_name("to_dtype"), event_name("getitem")
    ('aten::mul', 'aten::to', 'gradstack::getitem')
    """
    name = _cache.get(op_name)
    if name is None:
        op = OPS.get(op_name)
        aten = None if op is None else op.aten
        name = f"aten::{aten}" if aten else f"gradstack::{op_name}"
        if op is not None:  # (an op registered later may still take the name)
            _cache[op_name] = name
    return name
