"""Containers: ``Sequential``, ``ModuleList``, ``ModuleDict``, ``ParameterList`` and
``ParameterDict``, and torch's deprecated ``Container``."""

from __future__ import annotations

import operator
import warnings
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping

from gradstack_tensor import Tensor

from ..parameter import Parameter
from .module import Module, _addindent

__all__ = [
    "Container",
    "Sequential",
    "ModuleList",
    "ModuleDict",
    "ParameterList",
    "ParameterDict",
]


def _index(idx: int, size: int, what: str) -> int:
    idx = operator.index(idx)
    if not -size <= idx < size:
        raise IndexError(f"index {idx} is out of range for a {what} of length {size}")
    return idx % size


def _delete_renumbered(container: Sequential | ModuleList, idx, what: str) -> None:
    """``del container[idx]`` (an index or a slice) for a ``Sequential`` or a
    ``ModuleList`` (``what``, for the index error), the modules left named ``0, 1, 2 ...``
    again in order, as torch does."""
    keys = list(container._modules)
    if isinstance(idx, slice):
        for key in keys[idx]:
            delattr(container, key)
    else:
        delattr(container, keys[_index(idx, len(container), what)])
    modules = list(container._modules.values())
    container._modules.clear()
    for i, m in enumerate(modules):
        container._modules[str(i)] = m


class Container(Module):
    """torch's deprecated base container: a ``Module`` whose keyword arguments become its
    submodules.  Constructing one warns (``FutureWarning``, torch's words); subclass
    ``Module`` instead.

    Examples
    --------
    >>> import warnings
    >>> from gradstack_nn import Linear
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     c = Container(fc=Linear(1, 2))
    >>> list(dict(c.named_children()))
    ['fc']
    """

    def __init__(self, **kwargs: Module | None) -> None:
        warnings.warn(
            "`nn.Container` is deprecated. All of its functionality is now implemented in "
            "`nn.Module`. Subclass that instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)


class Sequential(Module):
    """Modules applied one after the other: ``Sequential(a, b)(x) == b(a(x))``.

    Build it from modules (named ``"0"``, ``"1"`` ...) or from an ``OrderedDict`` of names.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> from gradstack_nn import Linear, ReLU
    >>> net = Sequential(Linear(4, 8), ReLU(), Linear(8, 2))
    >>> net(gt.ones(3, 4)).shape
    gradstack.Size([3, 2])
    >>> net[0]
    Linear(in_features=4, out_features=8, bias=True)
    """

    def __init__(self, *args) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_index(idx, len(self), "Sequential")]

    def __setitem__(self, idx: int, module: Module) -> None:
        key = list(self._modules)[_index(idx, len(self), "Sequential")]
        setattr(self, key, module)

    def __delitem__(self, idx) -> None:
        _delete_renumbered(self, idx, "Sequential")

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> Sequential:
        """Add ``module`` at the end."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> Sequential:
        for m in modules:
            self.append(m)
        return self

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input


class ModuleList(Module):
    """A list of modules, registered (so their parameters are the list's) but not called.

    >>> from gradstack_nn import Linear
    >>> layers = ModuleList([Linear(2, 2) for _ in range(3)])
    >>> len(list(layers.parameters()))
    6
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __repr__(self) -> str:
        """torch's repr: runs of modules with the same repr are shown once, as
        ``(0-2): 3 x Linear(...)``."""
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        runs: list[tuple[int, int, str]] = [(0, 0, reprs[0])]
        for i, r in enumerate(reprs[1:], 1):
            if r == runs[-1][2]:
                runs[-1] = (runs[-1][0], i, r)
            else:
                runs.append((i, i, r))
        lines = []
        for start, end, r in runs:
            if start == end:
                lines.append(_addindent(f"({start}): {r}", 2))
            else:
                lines.append(_addindent(f"({start}-{end}): {end - start + 1} x {r}", 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(_index(idx, len(self), "ModuleList"))]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, str(_index(idx, len(self), "ModuleList")), module)

    def __delitem__(self, idx) -> None:
        _delete_renumbered(self, idx, "ModuleList")

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def append(self, module: Module) -> ModuleList:
        """Add ``module`` at the end."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        """Add each of ``modules`` at the end."""
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        """Insert ``module`` before position ``index``."""
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(modules):
            self.add_module(str(i), m)

    def forward(self, *args, **kwargs):
        raise NotImplementedError("ModuleList is not callable: iterate over it in your forward()")


class ModuleDict(Module):
    """An ordered dict of modules, registered under their keys (so ``state_dict`` keys are
    ``"<key>.weight"``), but not called.

    >>> from gradstack_nn import Linear, ReLU
    >>> d = ModuleDict({"fc": Linear(2, 2), "act": ReLU()})
    >>> list(d.keys()), [n for n, _ in d.named_parameters()]
    (['fc', 'act'], ['fc.weight', 'fc.bias'])
    """

    def __init__(self, modules: Mapping[str, Module] | Iterable | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key) -> bool:
        return key in self._modules

    def clear(self) -> None:
        """Remove every module."""
        self._modules.clear()

    def pop(self, key: str) -> Module:
        """Remove the module at ``key`` and return it."""
        module = self[key]
        del self[key]
        return module

    def keys(self):
        """The keys, in insertion order."""
        return self._modules.keys()

    def items(self):
        """``(key, module)`` pairs, in insertion order."""
        return self._modules.items()

    def values(self):
        """The modules, in insertion order."""
        return self._modules.values()

    def update(self, modules) -> None:
        """Add the modules of a mapping, or of an iterable of ``(key, module)`` pairs."""
        if isinstance(modules, (OrderedDict, ModuleDict, Mapping)):
            for key, module in modules.items():
                self[key] = module
            return
        if isinstance(modules, (str, bytes)) or not isinstance(modules, Iterable):
            raise TypeError(
                "ModuleDict.update should be called with an iterable of key/value pairs, but "
                f"got {type(modules).__name__}"
            )
        for j, m in enumerate(modules):
            if not isinstance(m, Iterable) or isinstance(m, (str, bytes)):
                raise TypeError(
                    f"ModuleDict update sequence element #{j} should be Iterable; is "
                    f"{type(m).__name__}"
                )
            if len(m) != 2:
                raise ValueError(
                    f"ModuleDict update sequence element #{j} has length {len(m)}; 2 is required"
                )
            self[m[0]] = m[1]


class ParameterList(Module):
    """A list of parameters, registered under ``"0"``, ``"1"`` ... (so the optimisers and
    ``state_dict`` see them); tensors appended to it become :class:`Parameter` objects.

    >>> import gradstack_tensor as gt
    >>> ps = ParameterList([Parameter(gt.zeros(3, 4)), Parameter(gt.zeros(3))])
    >>> print(ps)
    ParameterList(
        (0): Parameter containing: [gradstack.float32 of size 3x4]
        (1): Parameter containing: [gradstack.float32 of size 3]
    )
    >>> list(ps.state_dict())
    ['0', '1']
    """

    def __init__(self, values: Iterable | None = None) -> None:
        super().__init__()
        object.__setattr__(self, "_size", 0)
        if values is not None:
            self += values

    def _get_abs_string_index(self, idx) -> str:
        idx = operator.index(idx)
        if not -len(self) <= idx < len(self):
            raise IndexError(f"index {idx} is out of range")
        return str(idx % len(self))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)([self[i] for i in range(len(self))[idx]])
        return getattr(self, self._get_abs_string_index(idx))

    def __setitem__(self, idx, param) -> None:
        key = self._get_abs_string_index(idx)
        if isinstance(param, Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, key, param)

    def __len__(self) -> int:
        return self._size

    def __iter__(self):
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters: Iterable) -> ParameterList:
        return self.extend(parameters)

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, value) -> ParameterList:
        """Add ``value`` at the end (a Tensor becomes a Parameter)."""
        new_idx = len(self)
        object.__setattr__(self, "_size", new_idx + 1)
        self[new_idx] = value
        return self

    def extend(self, values: Iterable) -> ParameterList:
        """Add each of ``values`` at the end."""
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError(
                "ParameterList.extend should be called with an iterable, but got "
                f"{type(values).__name__}"
            )
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        lines = []
        for k, p in enumerate(self):
            if isinstance(p, Tensor):
                size = "x".join(str(s) for s in p.shape)
                kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
                lines.append(f"  ({k}): {kind} containing: [{p.dtype} of size {size}]")
            else:
                lines.append(f"  ({k}): Object of type: {type(p).__name__}")
        return "\n".join(lines)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """An ordered dict of parameters, registered under their keys (so the optimisers and
    ``state_dict`` see them); tensors stored in it become :class:`Parameter` objects,
    other values are kept as plain attributes, as torch's.

    A plain ``dict`` given to the constructor or to :meth:`update` is added in the order
    of its sorted keys; an ``OrderedDict``, a ``ParameterDict`` or an iterable of pairs in
    its own order (torch's rule).

    >>> import gradstack_tensor as gt
    >>> pd = ParameterDict({"w": gt.zeros(2, 3), "b": Parameter(gt.zeros(2))})
    >>> list(pd), list(pd.state_dict())
    (['b', 'w'], ['b', 'w'])
    >>> print(pd)
    ParameterDict(
        (b): Parameter containing: [gradstack.FloatTensor of size 2]
        (w): Parameter containing: [gradstack.FloatTensor of size 2x3]
    )
    """

    def __init__(self, parameters=None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    def _key_to_attr(self, key) -> str:
        if not isinstance(key, str):
            raise TypeError(
                "Index given to ParameterDict cannot be used as a key as it is not a string "
                f"(type is '{type(key).__name__}'). Open an issue on github if you need "
                "non-string keys."
            )
        return key

    def __getitem__(self, key: str):
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key: str, value) -> None:
        # (every way of adding an entry ends here: the one place that wraps tensors)
        self._keys[key] = None
        attr = self._key_to_attr(key)
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, attr, value)

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(self._keys)

    def __contains__(self, key) -> bool:
        return key in self._keys

    def copy(self) -> ParameterDict:
        """A new ParameterDict holding the same parameters."""
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key: str, default=None):
        """``self[key]``, after setting it to ``default`` if ``key`` is absent."""
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        """Remove every entry."""
        for k in self._keys.copy():
            del self[k]

    def pop(self, key: str):
        """Remove the entry at ``key`` and return its value."""
        v = self[key]
        del self[key]
        return v

    def popitem(self) -> tuple:
        """Remove and return the last inserted ``(key, value)`` pair."""
        k, _ = self._keys.popitem()
        self._keys[k] = None
        val = self[k]
        del self[k]
        return k, val

    def get(self, key: str, default=None):
        """``self[key]`` if ``key`` is present, else ``default``."""
        return self[key] if key in self else default

    def fromkeys(self, keys: Iterable[str], default=None) -> ParameterDict:
        """A new ParameterDict with ``keys``, each set to ``default``."""
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        """The keys, in insertion order."""
        return self._keys.keys()

    def items(self):
        """``(key, value)`` pairs, in insertion order."""
        return ((k, self[k]) for k in self._keys)

    def values(self):
        """The values, in insertion order."""
        return (self[k] for k in self._keys)

    def update(self, parameters) -> None:
        """Add the entries of a mapping (a plain dict in sorted key order) or of an
        iterable of ``(key, value)`` pairs, overwriting existing keys."""
        if not isinstance(parameters, Iterable):
            raise TypeError(
                "ParametersDict.update should be called with an iterable of key/value pairs, "
                f"but got {type(parameters).__name__}"
            )
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            for key, parameter in parameters.items():
                self[key] = parameter
        elif isinstance(parameters, Mapping):
            for key, parameter in sorted(parameters.items()):
                self[key] = parameter
        else:
            for j, p in enumerate(parameters):
                if not isinstance(p, Iterable):
                    raise TypeError(
                        f"ParameterDict update sequence element #{j} should be Iterable; "
                        f"is{type(p).__name__}"
                    )
                if len(p) != 2:
                    raise ValueError(
                        f"ParameterDict update sequence element #{j} has length {len(p)}; 2 "
                        "is required"
                    )
                self[p[0]] = p[1]

    def extra_repr(self) -> str:
        lines = []
        for k, p in self.items():
            if isinstance(p, Tensor):
                size = "x".join(str(s) for s in p.shape)
                kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
                lines.append(f"  ({k}): {kind} containing: [{p.type()} of size {size}]")
            else:
                lines.append(f"  ({k}): Object of type: {type(p).__name__}")
        return "\n".join(lines)

    def __call__(self, input):
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other: ParameterDict) -> ParameterDict:
        copy = self.copy()
        copy.update(other)
        return copy

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        copy = other.copy()
        copy.update(self)
        return copy

    def __ior__(self, other: ParameterDict) -> ParameterDict:
        self.update(other)
        return self
