"""``Module``: the base class of every layer and model, with torch's interface.

A module owns three ordered dictionaries filled by plain attribute assignment:
``_parameters`` (:class:`Parameter` values), ``_buffers`` (tensors registered with
:meth:`Module.register_buffer`) and ``_modules`` (sub-modules).  Everything else
(``parameters()``, ``state_dict()``, ``zero_grad()``, ``train()``, the repr ...) walks them.

Examples
--------
>>> import gradstack_tensor as gt
>>> from gradstack_nn import Module, Linear, ReLU
>>> class TinyModel(Module):
...     def __init__(self):
...         super().__init__()
...         self.layer1 = Linear(4, 3)
...         self.relu = ReLU()
...         self.layer2 = Linear(3, 2)
...     def forward(self, x):
...         return self.layer2(self.relu(self.layer1(x)))
>>> m = TinyModel()
>>> [name for name, _ in m.named_parameters()]
['layer1.weight', 'layer1.bias', 'layer2.weight', 'layer2.bias']
>>> m(gt.ones(5, 4)).shape
gradstack.Size([5, 2])
>>> print(m)
TinyModel(
  (layer1): Linear(in_features=4, out_features=3, bias=True)
  (relu): ReLU()
  (layer2): Linear(in_features=3, out_features=2, bias=True)
)
"""

from __future__ import annotations

import itertools
from collections import OrderedDict, namedtuple
from collections.abc import Iterator, Mapping

import gradstack_autograd as ag
from gradstack_tensor import Tensor, empty_like
from gradstack_tensor.device import check_device
from gradstack_tensor.dtypes import as_dtype
from gradstack_tensor.dtypes import dtype as dtype_type

from ..parameter import Buffer, Parameter, is_lazy
from ..zeroed_grads import zero_grads

__all__ = ["Module"]


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What :meth:`Module.load_state_dict` returns: the keys it did not match."""

    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(s: str, num_spaces: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join(num_spaces * " " + line for line in lines)


class _RemovableHandle:
    """Returned by the hook registrations: ``handle.remove()`` unregisters the hook."""

    _next_id = 0

    def __init__(self, hooks: dict):
        self._hooks = hooks
        self.id = _RemovableHandle._next_id
        _RemovableHandle._next_id += 1

    def remove(self) -> None:
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class Module:
    """Base class for all neural-network modules; subclass it and define ``forward``.

    Sub-modules, parameters and buffers assigned as attributes in ``__init__`` (after
    ``super().__init__()``) are registered, so that the methods below see them.

    Attributes
    ----------
    training : bool
        Whether the module is in training mode (:meth:`train`) or evaluation mode
        (:meth:`eval`).
    """

    training: bool

    def __init__(self, *args, **kwargs) -> None:
        if args or kwargs:
            raise TypeError(
                f"{type(self).__name__}.__init__() got unexpected arguments: Module.__init__ "
                "takes none (pass your own arguments to your subclass's __init__)"
            )
        # Note [Module state goes through object.__setattr__]
        # __setattr__ below routes Parameters/Modules into these dicts, so the dicts
        # themselves must be created without going through it.
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", {})
        setattr_(self, "_buffers", {})
        setattr_(self, "_non_persistent_buffers_set", set())
        setattr_(self, "_modules", {})
        setattr_(self, "_forward_hooks", OrderedDict())
        setattr_(self, "_forward_pre_hooks", OrderedDict())

    # -- forward ---------------------------------------------------------------------------

    def forward(self, *args, **kwargs):
        """Define the computation of the module; every subclass overrides it."""
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    def __call__(self, *args, **kwargs):
        if not self._forward_pre_hooks and not self._forward_hooks:
            return self.forward(*args, **kwargs)
        for hook in list(self._forward_pre_hooks.values()):
            result = hook(self, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
        output = self.forward(*args, **kwargs)
        for hook in list(self._forward_hooks.values()):
            result = hook(self, args, output)
            if result is not None:
                output = result
        return output

    def register_forward_pre_hook(self, hook) -> _RemovableHandle:
        """Call ``hook(module, args)`` before each ``forward``; a non-None result replaces
        the positional arguments."""
        handle = _RemovableHandle(self._forward_pre_hooks)
        self._forward_pre_hooks[handle.id] = hook
        return handle

    def register_forward_hook(self, hook) -> _RemovableHandle:
        """Call ``hook(module, args, output)`` after each ``forward``; a non-None result
        replaces the output."""
        handle = _RemovableHandle(self._forward_hooks)
        self._forward_hooks[handle.id] = hook
        return handle

    # -- registration ------------------------------------------------------------------

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add ``param`` (or None, a placeholder) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name(self, name, "parameter", "_parameters")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                "(gradstack.nn.Parameter or None required)"
            )
        if param is not None and param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must "
                "be created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method."
            )
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a tensor that is state but not a parameter (running statistics ...).

        Persistent buffers are part of :meth:`state_dict`; ``persistent=False`` ones are not.
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name(self, name, "buffer", "_buffers")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                "(gradstack Tensor or None required)"
            )
        if isinstance(tensor, Buffer):
            persistent = tensor.persistent
            tensor = tensor.detach()
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module under ``name`` (also what ``self.name = module`` does)."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {type(name).__name__}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name: str, value) -> None:
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            _remove_from(
                self,
                name,
                self.__dict__,
                self._buffers,
                self._modules,
                self._non_persistent_buffers_set,
            )
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                    "(gradstack.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
            return
        modules = self.__dict__.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            _remove_from(
                self,
                name,
                self.__dict__,
                self._parameters,
                self._buffers,
                self._non_persistent_buffers_set,
            )
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as child module '{name}' "
                    "(gradstack.nn.Module or None expected)"
                )
            modules[name] = value
            return
        buffers = self.__dict__.get("_buffers")
        if isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                    "(gradstack Tensor or None expected)"
                )
            if isinstance(value, Buffer) or name not in buffers:
                self.register_buffer(name, value)
            else:
                buffers[name] = value
            return
        object.__setattr__(self, name, value)

    def __getattr__(self, name: str):
        # only called when normal lookup failed
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for store in (self._parameters, self._buffers, self._modules):
            if name in store:
                del store[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = itertools.chain(object.__dir__(self), self._parameters, self._buffers, self._modules)
        return sorted(k for k in set(keys) if not k[:1].isdigit())

    def get_submodule(self, target: str) -> Module:
        """The sub-module at dotted path ``target`` (``""`` is the module itself)."""
        mod = self
        if target == "":
            return mod
        for item in target.split("."):
            if item not in mod._modules:
                raise AttributeError(
                    f"{mod._get_name()} has no attribute `{item}` (looking up '{target}')"
                )
            mod = mod._modules[item]
        return mod

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path ``target`` (``"layer1.weight"``)."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if name not in mod._parameters:
            raise AttributeError(f"`{name}` is not an nn.Parameter of {mod._get_name()}")
        return mod._parameters[name]

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path ``target``."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if name not in mod._buffers:
            raise AttributeError(f"`{name}` is not a buffer of {mod._get_name()}")
        return mod._buffers[name]

    # -- iteration ---------------------------------------------------------------------

    def named_modules(
        self, memo=None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Module]]:
        """``(name, module)`` for this module and every descendant, depth first.

        Walked with an explicit stack (Note [No recursion]), so very deep ``Sequential``
        chains do not hit Python's recursion limit.
        """
        if memo is None:
            memo = set()
        stack = [(prefix, self)]
        while stack:
            name, mod = stack.pop()
            if remove_duplicate:
                if mod in memo:
                    continue
                memo.add(mod)
            yield name, mod
            children = [
                (name + ("." if name else "") + child_name, child)
                for child_name, child in mod._modules.items()
                if child is not None
            ]
            stack.extend(reversed(children))

    def modules(self) -> Iterator[Module]:
        """This module and every descendant (each once)."""
        for _, mod in self.named_modules():
            yield mod

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """``(name, module)`` for the direct children (each once)."""
        seen = set()
        for name, mod in self._modules.items():
            if mod is not None and mod not in seen:
                seen.add(mod)
                yield name, mod

    def children(self) -> Iterator[Module]:
        """The direct children."""
        for _, mod in self.named_children():
            yield mod

    def _named_members(self, store, prefix="", recurse=True, remove_duplicate=True):
        seen = set()
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        for mod_prefix, mod in modules:
            for name, value in getattr(mod, store).items():
                if value is None:
                    continue
                if remove_duplicate:
                    if id(value) in seen:
                        continue
                    seen.add(id(value))
                yield (mod_prefix + ("." if mod_prefix else "") + name), value

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """``(dotted name, parameter)`` pairs, each parameter once (shared ones included
        under their first name)."""
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """The parameters of this module (and, with ``recurse``, of its descendants)."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        """``(dotted name, buffer)`` pairs."""
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """The buffers of this module (and its descendants)."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # -- modes and gradients -----------------------------------------------------------

    def train(self, mode: bool = True) -> Module:
        """Set training mode (``mode=True``) or evaluation mode on this module and its
        descendants; returns ``self``."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for mod in self.modules():
            object.__setattr__(mod, "training", mode)
        return self

    def eval(self) -> Module:
        """Evaluation mode: ``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set ``requires_grad`` on every parameter (freeze with False); returns ``self``."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool | None = None) -> None:
        """Reset the gradients of all parameters.

        By default ``.grad`` becomes None, reading as zeros (the autograd tutorial prints
        zeros), and until it is written again optimisers skip the parameter as torch's skip
        a None gradient (Note [Zeroed gradients count as None] in ``zeroed_grads.py``).
        ``set_to_none=False`` is a plain in-place zero; ``set_to_none=True`` sets None.
        """
        zero_grads(self.parameters(), set_to_none)

    # -- state -------------------------------------------------------------------------

    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False):
        """An ordered dict of every parameter and persistent buffer by dotted name.

        Values are detached tensors sharing storage with the module's own (``keep_vars``
        keeps the Parameters themselves).
        """
        if args:  # torch's deprecated positional form state_dict(destination, prefix, keep_vars)
            destination = args[0]
            if len(args) > 1:
                prefix = args[1]
            if len(args) > 2:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
        for mod_prefix, mod in self.named_modules(
            prefix=prefix.rstrip("."), remove_duplicate=False
        ):
            dot = mod_prefix + "." if mod_prefix else ""
            for name, p in mod._parameters.items():
                if p is not None:
                    # Note [A lazy parameter in a state dict]: torch's LazyModuleMixin
                    # stores an UninitializedParameter itself (printed
                    # `<UninitializedParameter>`), not a detached empty tensor, so that
                    # loading such a dict into a lazy module leaves it lazy.
                    keep = keep_vars or is_lazy(p)
                    destination[dot + name] = p if keep else p.detach()
            for name, b in mod._buffers.items():
                if b is not None and name not in mod._non_persistent_buffers_set:
                    destination[dot + name] = b if keep_vars else b.detach()
        return destination

    def load_state_dict(self, state_dict: Mapping, strict: bool = True, assign: bool = False):
        """Copy parameters and buffers from ``state_dict`` into this module.

        With ``strict=True`` (the default) the keys must match :meth:`state_dict`'s
        exactly: missing or unexpected keys raise ``RuntimeError``, as do shape
        mismatches.  Returns ``(missing_keys, unexpected_keys)``.  ``assign=True`` puts the
        given tensors in place of the current ones instead of copying into them.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        for key, param in own.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                errors.append(
                    f'While copying the parameter named "{key}", expected gradstack Tensor '
                    f"from checkpoint but received {type(value)}"
                )
                continue
            if is_lazy(value):
                # A lazy value (the state dict of a lazy module, Note [A lazy parameter in a
                # state dict]) keeps a lazy parameter lazy, and has no shape to give an
                # initialised one: torch raises this RuntimeError from the shape access.
                if is_lazy(param):
                    continue
                raise RuntimeError(
                    "Can't access the shape of an uninitialized parameter or buffer. This "
                    "error usually happens in `load_state_dict` when trying to load an "
                    "uninitialized parameter into an initialized one. Call `forward` to "
                    "initialize the parameters before accessing their attributes."
                )
            if is_lazy(param):
                # Note [Loading into a lazy module]
                # As torch's LazyModuleMixin load hook: the loaded shape materialises the
                # parameter (its dtype stays), then the values are copied as for any other.
                param.materialize(value.shape)
            if param.dim() == 0 and value.dim() == 1 and value.shape[0] == 1:
                value = value[0]
            if value.shape != param.shape:
                errors.append(
                    f"size mismatch for {key}: copying a param with shape {value.shape} from "
                    f"checkpoint, the shape in current model is {param.shape}."
                )
                continue
            try:
                if assign:
                    _assign(self, key, param, value)
                else:
                    with ag.no_grad():
                        param.copy_(value)
            except Exception as e:  # noqa: BLE001 - reported with the key, as torch does
                errors.append(
                    f'While copying the parameter named "{key}", whose dimensions in the model '
                    f"are {param.shape} and whose dimensions in the checkpoint are "
                    f"{value.shape}, an exception occurred : {e.args}."
                )
        if strict:
            if unexpected:
                errors.insert(
                    0,
                    "Unexpected key(s) in state_dict: {}. ".format(
                        ", ".join(f'"{k}"' for k in unexpected)
                    ),
                )
            if missing:
                errors.insert(
                    0,
                    "Missing key(s) in state_dict: {}. ".format(
                        ", ".join(f'"{k}"' for k in missing)
                    ),
                )
        if errors:
            raise RuntimeError(
                "Error(s) in loading state_dict for {}:\n\t{}".format(
                    type(self).__name__, "\n\t".join(errors)
                )
            )
        return _IncompatibleKeys(missing, unexpected)

    # -- conversion --------------------------------------------------------------------

    def _apply(self, fn) -> Module:
        """Replace every parameter's and buffer's data by ``fn(tensor)`` (in place for
        parameters, so optimisers holding them stay valid)."""
        for mod in self.modules():
            for p in mod._parameters.values():
                if p is None:
                    continue
                with ag.no_grad():
                    new = fn(p)
                if new is not p:
                    p.data = new
                    if p.grad is not None:
                        with ag.no_grad():
                            p.grad = fn(p.grad)
            for name, b in mod._buffers.items():
                if b is None:
                    continue
                if is_lazy(b):  # an UninitializedBuffer keeps its class, as a parameter
                    with ag.no_grad():
                        new = fn(b)
                    if new is not b:
                        b.data = new
                else:
                    mod._buffers[name] = fn(b)
        return self

    def to_empty(self, *, device, recurse: bool = True) -> Module:
        """Give every parameter and buffer new, uninitialised storage on ``device`` (its
        shape and dtype kept): how a model built on the meta device gets real memory, to be
        filled by ``load_state_dict`` or an initialisation (torch's ``Module.to_empty``).
        ``recurse=False`` leaves the submodules' tensors alone.  Returns ``self``.

        >>> from gradstack_nn import Linear
        >>> m = Linear(2, 3, device="meta").to_empty(device="cpu")
        >>> m.weight.is_meta, tuple(m.weight.shape)
        (False, (3, 2))
        """
        modules = self.modules() if recurse else (self,)
        for mod in modules:
            for p in mod._parameters.values():
                if p is not None:
                    with ag.no_grad():
                        p.data = empty_like(p, device=device)
            for name, b in mod._buffers.items():
                if b is not None:
                    mod._buffers[name] = empty_like(b, device=device)
        return self

    def apply(self, fn) -> Module:
        """Call ``fn(module)`` on every descendant (children first) and then on ``self``;
        used for custom initialisation.  Returns ``self``."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    def to(self, *args, **kwargs) -> Module:
        """Move and/or cast parameters and buffers: ``to(dtype)``, ``to(device)``,
        ``to(device, dtype)``, ``to(tensor)``.  Only floating-point tensors change dtype;
        the devices are the CPU and ``meta`` (a model without data, for
        ``functional_call``).  Returns ``self``."""
        dtype = kwargs.pop("dtype", None)
        device = kwargs.pop("device", None)
        kwargs.pop("non_blocking", None)
        if kwargs:
            raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
        for a in args:
            if isinstance(a, Tensor):
                dtype = a.dtype
            elif isinstance(a, dtype_type):
                dtype = a
            else:
                device = a
        if device is not None and str(device).split(":")[0] == "meta":
            # parameters and buffers become meta tensors: shapes and dtypes, no data
            # (Note [Meta tensors carry no data] in gradstack_tensor.meta)
            if dtype is not None:
                dtype = as_dtype(dtype)
            return self._apply(
                lambda t: (
                    t.to("meta", dtype)
                    if dtype is not None and t.is_floating_point()
                    else t.to("meta")
                )
            )
        check_device(device)  # raises for anything but the CPU (and meta, above)
        if dtype is not None:
            dtype = as_dtype(dtype)
            if not dtype.is_floating_point:
                raise TypeError(
                    f"nn.Module.to only accepts floating point dtypes, but got desired "
                    f"dtype={dtype}"
                )
            return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)
        return self

    def float(self) -> Module:
        """Cast floating-point parameters and buffers to float32."""
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self) -> Module:
        """Cast floating-point parameters and buffers to float64."""
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self) -> Module:
        """Cast floating-point parameters and buffers to float16."""
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self) -> Module:
        """Cast floating-point parameters and buffers to bfloat16."""
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def cpu(self) -> Module:
        """A no-op: gradstack computes on the CPU."""
        return self

    def cuda(self, device=None) -> Module:
        """Raises: gradstack has no CUDA backend."""
        raise RuntimeError("gradstack has no CUDA backend: keep the module on the CPU")

    def type(self, dst_type) -> Module:
        """Cast all parameters and buffers to ``dst_type``."""
        return self._apply(lambda t: t.type(dst_type))

    # -- repr --------------------------------------------------------------------------

    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The text between the parentheses of this module's repr; override it in layers."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [
            f"({key}): " + _addindent(repr(mod), 2) for key, mod in self._modules.items()
        ]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def __setstate__(self, state):
        self.__dict__.update(state)


def _check_name(module, name, what, store):
    if not isinstance(name, str):
        raise TypeError(f"{what} name should be a string. Got {type(name).__name__}")
    if "." in name:
        raise KeyError(f'{what} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{what} name can\'t be empty string ""')
    if hasattr(module, name) and name not in getattr(module, store):
        raise KeyError(f"attribute '{name}' already exists")


def _remove_from(module, name, *stores):
    for d in stores:
        if name in d:
            if isinstance(d, set):
                d.discard(name)
            else:
                del d[name]


def _assign(module, key, current, value):
    module_path, _, name = key.rpartition(".")
    mod = module.get_submodule(module_path)
    if isinstance(current, Parameter):
        mod._parameters[name] = (
            value
            if isinstance(value, Parameter)
            else Parameter(value, requires_grad=current.requires_grad)
        )
    else:
        mod._buffers[name] = value
