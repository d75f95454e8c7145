"""The functions that the Tensor's methods call and modules above ``_tensor`` define.

Note [Methods bound from above]
The Tensor class (``_tensor.pyx`` and its method groups ``_tensor_shape.pyx``,
``_tensor_composites.pyx``) sits below the modules that write functions as compositions
of its ops (``composites.py``, ``linalg.py``, ``creation.py``, ``meta.py`` ...): those
import ``_tensor`` to make tensors.  Many methods are such functions (``Tensor.lerp`` is
``composites.lerp``); importing them into ``_tensor`` would make the modules import each
other.  Instead a method calls its function through :data:`ABOVE`, a namespace of
functions that the package fills as it is imported (``gradstack_tensor/__init__.py`` calls
:func:`bind` with the modules above the Tensor), as op kernels are bound to the op table
by the modules that write them (``OPS[name].set_kernel``).  ``_tensor`` depends on the
functions' names only, the modules on ``_tensor``: no import circle inside the package
(tests/test_import_cycles.py), and each module can be read with what it imports.

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_tensor._above import ABOVE
>>> ABOVE.lerp is gt.lerp
True
"""

from __future__ import annotations

from types import ModuleType

__all__ = ["ABOVE", "bind", "bind_namespace"]


class _Functions:
    """A namespace of functions; a missing one is an AttributeError that says why."""

    def __getattr__(self, name):
        raise AttributeError(
            f"gradstack_tensor: no function {name!r} is bound for the Tensor's methods; "
            "import the package gradstack_tensor (its __init__ binds them), not one of its "
            "private modules alone (Note [Methods bound from above])"
        )


ABOVE = _Functions()


def bind(module: ModuleType, *names: str) -> None:
    """Put functions of ``module`` into :data:`ABOVE`: the given ``names`` (private helpers
    too, such as an in-place form torch has as a method only), or without names, its
    public ones (``__all__``).

    A name that two modules bind differently is an ImportError: a method would not know
    which one it calls.  A namespace whose functions share names with torch's top level
    (``torch.linalg.det`` is not ``torch.det``'s twin in every case) is bound whole, by
    :func:`bind_namespace`.
    """
    functions = vars(ABOVE)
    for name in names or module.__all__:
        value = getattr(module, name)
        if not callable(value):
            continue
        other = functions.get(name)
        if other is not None and other is not value:
            raise ImportError(
                f"gradstack_tensor: {module.__name__}.{name} and {other.__module__}.{name} "
                "are both bound for the Tensor's methods; rename one (Note [Methods bound "
                "from above])"
            )
        functions[name] = value


def bind_namespace(name: str, module: ModuleType) -> None:
    """Put ``module`` into :data:`ABOVE` as ``name`` (``ABOVE.linalg.det``)."""
    if not isinstance(module, ModuleType):
        raise TypeError(f"bind_namespace({name!r}, ...) takes a module, not {module!r}")
    vars(ABOVE)[name] = module
