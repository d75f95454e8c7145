"""The ``device`` type.  gradstack computes on the CPU only; ``cuda`` is never available.

Examples
--------
>>> device("cpu")
device(type='cpu')
>>> device("cuda:0").index
0
"""

from __future__ import annotations

__all__ = ["device", "cpu", "get_default_device", "set_default_device", "factory_on_meta"]

_KNOWN_TYPES = ("cpu", "cuda", "mps", "meta")


class device:  # noqa: N801 - torch spells it in lower case
    """A device description, as ``torch.device``: ``device("cpu")``, ``device("cuda", 0)``."""

    __slots__ = ("type", "index")

    def __init__(self, type="cpu", index=None):  # noqa: A002 - torch's parameter name
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, int) and not isinstance(type, bool) and index is None:
            # torch: an index alone names a device of the accelerator, which there is none of
            raise RuntimeError(
                f"Cannot access accelerator device when none is available (device({type}) "
                "names an accelerator's device; gradstack computes on the CPU only)."
            )
        if not isinstance(type, str):
            raise TypeError(f"device(): expected a string such as 'cpu', got {type!r}")
        if ":" in type:
            if index is not None:
                raise ValueError(
                    f"device(): type {type!r} already has an index; pass one or the other"
                )
            type, _, idx = type.partition(":")
            if not idx.isdigit():
                raise ValueError(f"device(): invalid device string {type + ':' + idx!r}")
            index = int(idx)
        if type not in _KNOWN_TYPES:
            raise RuntimeError(
                f"Expected one of {', '.join(_KNOWN_TYPES)} device type at start of device "
                f"string: {type}"
            )
        self.type = type
        self.index = index

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    # Note [A device as a context manager]: torch's ``with torch.device('meta'):`` makes the
    # device the factories' default inside the block (``nn.Linear(...)`` built there has
    # meta parameters); the blocks nest, and the default is restored on exit.
    def __enter__(self):
        check_factory_device(self)
        _default_stack.append(self)
        return self

    def __exit__(self, *exc):
        _default_stack.pop()
        return False


cpu = device("cpu")


def check_device(dev) -> None:
    """Raise a clear error unless ``dev`` names the CPU (or is None)."""
    if dev is None:
        return
    d = dev if isinstance(dev, device) else device(dev)
    if d.type != "cpu":
        raise RuntimeError(
            f"gradstack computes on the CPU only; device {str(d)!r} is not available. "
            "Use device='cpu' (gradstack.cuda.is_available() is always False)."
        )


_default_stack: list = [cpu]  # the factories' default device, innermost last


def check_factory_device(dev) -> None:
    """Raise a clear error unless ``dev`` names the CPU or the meta device (or is None)."""
    if dev is None:
        return
    d = dev if isinstance(dev, device) else device(dev)
    if d.type != "meta":
        check_device(d)


def factory_on_meta(dev) -> bool:
    """Whether a factory called with ``device=dev`` makes a meta tensor: ``dev`` is the
    meta device, or None while the default device is (Note [Meta tensors carry no data]
    in meta.py); raises for a device gradstack does not have.

    >>> factory_on_meta(None), factory_on_meta("meta")
    (False, True)
    >>> with device("meta"):
    ...     factory_on_meta(None)
    True
    """
    if dev is None:
        return _default_stack[-1].type == "meta"
    d = dev if isinstance(dev, device) else device(dev)
    if d.type == "meta":
        return True
    check_device(d)
    return False


def get_default_device() -> device:
    """The device factories allocate on (``torch.get_default_device``): the CPU, or the
    meta device inside ``with device('meta'):`` or after ``set_default_device('meta')``.

    >>> get_default_device()
    device(type='cpu')
    """
    return _default_stack[-1]


def set_default_device(dev) -> None:
    """``torch.set_default_device``: ``None`` or a CPU device (the default) or the meta
    device (factories then make meta tensors); any other device raises, since no tensor
    could be made there.

    >>> set_default_device("cpu")
    >>> set_default_device("cuda")
    Traceback (most recent call last):
    ...
    RuntimeError: gradstack computes on the CPU only; device 'cuda' is not available. ...
    """
    check_factory_device(dev)
    _default_stack[0] = cpu if dev is None else device(dev) if isinstance(dev, str) else dev
