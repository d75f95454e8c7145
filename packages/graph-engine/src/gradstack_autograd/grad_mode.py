"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

Each is both a context manager and a decorator (``@no_grad()``), thread-local, and nests:
leaving a block restores exactly the mode that was in force when it was entered.

Examples
--------
>>> import gradstack_tensor as gt, gradstack_autograd as ag
>>> x = gt.ones(2, requires_grad=True)
>>> with ag.no_grad():
...     y = x * 2
>>> y.requires_grad
False
>>> @ag.no_grad()
... def double(t):
...     return t * 2
>>> double(x).requires_grad
False
"""

from __future__ import annotations

import functools
import inspect
import threading

from . import _grad_mode, _node

__all__ = [
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "set_multithreading_enabled",
    "is_multithreading_enabled",
    "enforce_grad_layout_policy",
]

is_grad_enabled = _grad_mode.is_grad_enabled
is_inference_mode_enabled = _grad_mode.is_inference_mode_enabled


class _DecoratorContextManager:
    """A context manager that can also decorate functions and generator functions."""

    def __call__(self, func):
        if inspect.isclass(func):
            raise TypeError("grad-mode decorators apply to functions, not classes")
        if inspect.isgeneratorfunction(func):

            @functools.wraps(func)
            def generator(*args, **kwargs):
                gen = func(*args, **kwargs)
                # each step of the wrapped generator runs in the mode; the caller's code
                # between steps runs in its own.  Its return value (StopIteration) ends
                # this generator with the same value.
                try:
                    with self.clone():
                        response = gen.send(None)
                    while True:
                        try:
                            request = yield response
                        except GeneratorExit:
                            with self.clone():
                                gen.close()
                            raise
                        except BaseException as exc:
                            with self.clone():
                                response = gen.throw(exc)
                        else:
                            with self.clone():
                                response = gen.send(request)
                except StopIteration as stop:
                    return stop.value

            return generator

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)

        return wrapper

    def clone(self):
        return self.__class__()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """Also usable as a bare decorator: ``@no_grad`` as well as ``@no_grad()`` (torch 2.x)."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class _GradModeBlock(_NoParamDecoratorContextManager):
    """A block (or decorated function) run with grad mode ``_mode``, the previous mode
    restored after it: ``no_grad`` and ``enable_grad``."""

    _mode: bool

    def __init__(self) -> None:
        self._prev: list[bool] = []

    def __enter__(self) -> None:
        self._prev.append(_grad_mode._set_grad_enabled(self._mode))

    def __exit__(self, *exc) -> None:
        _grad_mode._set_grad_enabled(self._prev.pop())


class no_grad(_GradModeBlock):  # noqa: N801 - torch's name
    """Disable gradient recording: ops inside produce tensors with ``requires_grad=False``."""

    _mode = False


class enable_grad(_GradModeBlock):  # noqa: N801
    """Enable gradient recording (inside a ``no_grad`` block, for example)."""

    _mode = True


class set_grad_enabled(_DecoratorContextManager):  # noqa: N801
    """Set grad mode to ``mode``: at once when called, for a block, or for a function.

    >>> import gradstack_autograd as ag
    >>> _ = ag.set_grad_enabled(False); ag.is_grad_enabled()
    False
    >>> _ = ag.set_grad_enabled(True); ag.is_grad_enabled()
    True
    """

    def __init__(self, mode: bool) -> None:
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled(): mode must be a bool, got {type(mode).__name__}")
        self.mode = mode
        self.prev = _grad_mode._set_grad_enabled(mode)

    def __call__(self, func):
        # used as a decorator: undo the immediate effect of __init__
        _grad_mode._set_grad_enabled(self.prev)
        return super().__call__(func)

    def __enter__(self) -> None:
        _grad_mode._set_grad_enabled(self.mode)

    def __exit__(self, *exc) -> None:
        _grad_mode._set_grad_enabled(self.prev)

    def clone(self):
        return self.__class__(self.mode)


# Note [Multithreaded backward is a recorded switch]
# torch runs a backward pass that reaches accelerator devices on their worker threads, and
# ``set_multithreading_enabled(False)`` keeps it on the calling thread.  gradstack's backward
# always runs on the calling thread (the CPU is its only device), so the switch changes
# nothing it computes: it is kept per thread, as torch's, for the programs that set and
# read it.
_multithreading = threading.local()


def is_multithreading_enabled() -> bool:
    """Whether multithreaded backward is enabled in this thread (True unless
    :class:`set_multithreading_enabled` turned it off; Note [Multithreaded backward is a
    recorded switch])."""
    return getattr(_multithreading, "enabled", True)


class set_multithreading_enabled(_DecoratorContextManager):  # noqa: N801
    """Enable or disable multithreaded backward: at once when called, for a block, or for a
    function; gradstack's backward runs on the calling thread either way (Note
    [Multithreaded backward is a recorded switch]).

    >>> import gradstack_autograd as ag
    >>> with ag.grad_mode.set_multithreading_enabled(False):
    ...     ag.grad_mode.is_multithreading_enabled()
    False
    >>> ag.grad_mode.is_multithreading_enabled()
    True
    """

    def __init__(self, mode: bool) -> None:
        self.prev = is_multithreading_enabled()
        _multithreading.enabled = bool(mode)
        self.mode = mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        _multithreading.enabled = self.prev

    def clone(self):
        return self.__class__(self.mode)


class enforce_grad_layout_policy(_DecoratorContextManager):  # noqa: N801 - torch's name
    """Whether a leaf's new ``.grad`` is held to the gradient layout contract (its
    parameter's strides when those are dense, else row-major), torch's thread-local switch:
    at once when called, for a block, or for a function (decorated, it restores the policy
    first, as torch's).

    With ``enable=False`` a gradient that AccumulateGrad takes over (Note [A new .grad
    takes over the gradient] in ``_node.pyx``) keeps its own layout; a ``.grad`` made by
    copying keeps the rules (Note [The gradient layout policy]).  gradstack takes over only
    a writable gradient it owns, so an expanded gradient (``p.sum()``'s) is copied where
    torch keeps its zero strides.

    >>> import gradstack_tensor as gt, gradstack_autograd as ag
    >>> p = gt.zeros(2, 3, 4).permute(2, 0, 1).requires_grad_()
    >>> with ag.enforce_grad_layout_policy(False):
    ...     (p * 2).sum().backward()
    >>> p.stride(), p.grad.stride()
    ((1, 12, 4), (6, 3, 1))
    """

    def __init__(self, enable: bool = True) -> None:
        self.prev = _node.is_grad_layout_enforcement_enabled()
        _node.set_grad_layout_enforcement_enabled(enable)
        self.mode = enable

    def __call__(self, orig_func):
        _node.set_grad_layout_enforcement_enabled(self.prev)
        return super().__call__(orig_func)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        _node.set_grad_layout_enforcement_enabled(self.prev)

    def clone(self):
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):  # noqa: N801
    """No grad recording and no version bookkeeping; outputs are *inference tensors*.

    Inference tensors cannot be saved for backward later, nor updated in place outside
    inference mode (clear errors say so).  ``inference_mode(False)`` switches back to
    normal mode inside an inference block: inference off and grad mode *on*, as torch's.
    ``@inference_mode`` also works without parentheses.
    """

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # used as a bare decorator: mode is the function

    def __init__(self, mode: bool = True) -> None:
        if not isinstance(mode, bool):
            return  # __new__ returned the decorated function
        self.mode = mode
        self._prev: list[tuple[bool, bool]] = []  # (inference mode, grad mode)

    def __enter__(self) -> None:
        self._prev.append(
            (_grad_mode._set_inference_mode(self.mode), _grad_mode._set_grad_enabled(not self.mode))
        )

    def __exit__(self, *exc) -> None:
        inference, grad = self._prev.pop()
        _grad_mode._set_inference_mode(inference)
        _grad_mode._set_grad_enabled(grad)

    def clone(self):
        return self.__class__(self.mode)
