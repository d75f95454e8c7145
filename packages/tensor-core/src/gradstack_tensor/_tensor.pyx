# cython: language_level=3, embedsignature=True, embedsignature.format=clinic
"""``Tensor``: the last link of the Tensor's class chain, with its attributes and conversions.

The class chain (``_tensor_base.pyx`` explains it)::

    TensorBase <- ElementwiseMethods <- ReductionMethods <- ShapeMethods <- Tensor

This module adds what is about the tensor itself rather than an op on it: ``shape``,
``dtype``, ``grad`` and the other attributes, ``item``/``tolist``/``numpy``, dtype
conversion (``to``, ``float`` ...), ``new_*`` factories, copying, printing, and the
autograd methods (``backward``, ``register_hook`` ...), which delegate to the autograd
layer when it is installed.  At import it registers ``Tensor`` as the class the kernels
make (``_tensor_base.wrap``).

The examples assume ``import gradstack_tensor as gt``.
"""
cimport cython
cimport numpy as cnp

import numpy as np

from . import dtypes as _dt
from ._dispatch cimport Op, dispatch
from . import _op_table  # noqa: F401 - declares the ops looked up below
from ._dispatch import OPS
from ._loops cimport is_float_num
from ._shapes cimport shape_from_args
from ._shapes import Size, _normalize_dim, _size_of_scalar_dim
from ._tensor_base cimport (
    TensorBase, as_ndarray, autograd_extension, dtype_of_array, expect_other, need_autograd,
    new_empty_tensor, shape_of,
)
from ._tensor_base import _register_tensor_class
from ._tensor_shape cimport ShapeMethods
from .device import check_device as _check_device
from .device import cpu as _cpu
from .device import device as _device_type

# Note [Meta tensors carry no data] (meta.py): the class of a meta tensor's array, set by
# meta.py when it is imported (it imports this module)
cdef object _meta_storage = None
_META = _device_type("meta")


def _set_meta_storage(cls):
    global _meta_storage
    _meta_storage = cls


cdef inline bint _is_meta(TensorBase t):
    return _meta_storage is not None and type(t._data) is _meta_storage


cdef object _no_data(str what):
    from .meta import no_data_error
    return no_data_error(what)

from cpython.object cimport PyObject, PyTypeObject


cdef extern from "Python.h":
    void PyType_Modified(PyTypeObject*)

cdef Op OP_DETACH = OPS["detach"]
cdef Op OP_CLONE = OPS["clone"]
cdef Op OP_TO_DTYPE = OPS["to_dtype"]


@cython.binding(False)      # Note [Cython methods check self] in _tensor_base.pyx
cdef class Tensor(ShapeMethods):
    """A multi-dimensional array of one dtype, stored as a numpy array.

    Create tensors with :func:`gradstack_tensor.tensor`, :func:`zeros`, :func:`randn` ...;
    ``Tensor(data)`` is torch's legacy constructor (a float32 copy of ``data``) and
    ``Tensor(2, 3)`` an uninitialised float32 tensor of that size.

    Examples
    --------
    >>> import gradstack_tensor as gt
    >>> t = gt.tensor([[1., 2.], [3., 4.]])
    >>> t.shape
    gradstack.Size([2, 2])
    >>> (t * 2).sum().item()
    20.0
    >>> t.t().is_contiguous()
    False
    """

    __array_priority__ = 1000   # ndarray (op) Tensor defers to the Tensor's reflected op

    def __init__(self, *args, **kwargs):
        cdef cnp.ndarray data
        if kwargs:
            raise TypeError(f"Tensor() takes no keyword arguments, got {sorted(kwargs)}")
        if len(args) == 0:
            data = np.empty((0,), dtype=np.float32)
        elif len(args) == 1 and not isinstance(args[0], (int, np.integer)):
            src = args[0]
            if isinstance(src, TensorBase):
                data = (<TensorBase>src)._data.astype(np.float32)
            else:
                data = np.array(src, dtype=np.float32)
        else:
            data = np.empty(shape_from_args(args, "Tensor"), dtype=np.float32)
        self._data = data

    @staticmethod
    def _make_subclass(cls, TensorBase data not None, bint require_grad=False):
        """A ``cls`` instance sharing ``data``'s storage and version counter (for Parameter)."""
        cdef TensorBase t = new_empty_tensor(cls)   # tp_new only: not a subclass's __new__
        t._data = data._data
        t._vc = data.version_counter()
        t._view_base = data._view_base
        if require_grad:
            t.requires_grad_(True)
        return t

    # -- attributes -----------------------------------------------------------------------

    def _bump_version(self, str op_name="an in-place op"):
        """Record an in-place write (for kernels written in Python)."""
        self.bump_version(op_name)

    @property
    def _version(self):
        """How many in-place writes this tensor's storage has seen (shared with views)."""
        return self._vc.value if self._vc is not None else 0

    @property
    def _version_counter(self):
        """The :class:`VersionCounter` shared with this tensor's views."""
        return self.version_counter()

    @property
    def _base(self):
        """The tensor whose storage this view aliases, or None if it is not a view."""
        return self._view_base

    def _is_view(self):
        """Whether this tensor is a view of another tensor's storage."""
        return self._view_base is not None

    @property
    def shape(self):
        """The size of each dimension, a :class:`Size`."""
        return Size(shape_of(self._data))

    def size(self, dim=None):
        """The shape, or the size of dimension ``dim``.

        Examples
        --------
        >>> t = gt.zeros(2, 3)
        >>> t.size(), t.size(1), t.size(-1)
        (gradstack.Size([2, 3]), 3, 3)
        """
        if dim is None:
            return Size(shape_of(self._data))
        return shape_of(self._data)[_normalize_dim(dim, self._data.ndim)] if self._data.ndim \
            else _size_of_scalar_dim(dim)

    @property
    def ndim(self):
        """The number of dimensions (as :meth:`dim`)."""
        return self._data.ndim

    def dim(self):
        """The number of dimensions.

        Examples
        --------
        >>> gt.zeros(2, 3).dim(), gt.tensor(1.).dim()
        (2, 0)
        """
        return self._data.ndim

    def ndimension(self):
        """The number of dimensions (as :meth:`dim`)."""
        return self._data.ndim

    def numel(self):
        """The number of elements.

        Examples
        --------
        >>> gt.zeros(2, 3).numel()
        6
        """
        return cnp.PyArray_SIZE(self._data)

    def nelement(self):
        """The number of elements (as :meth:`numel`)."""
        return cnp.PyArray_SIZE(self._data)

    @property
    def dtype(self):
        """The element type (``gradstack_tensor.float32`` ...)."""
        return dtype_of_array(self._data)

    @property
    def device(self):
        """The CPU, or the meta device for a tensor without data (Note [Meta tensors carry
        no data])."""
        return _META if _is_meta(self) else _cpu

    @property
    def is_meta(self):
        """Whether this is a meta tensor (a shape and a dtype, no data)."""
        return _is_meta(self)

    @property
    def is_cuda(self):
        """Always False: gradstack runs on the CPU."""
        return False

    @property
    def layout(self):
        """Always ``"strided"``."""
        return "strided"

    def element_size(self):
        """The size of one element in bytes."""
        return self._data.itemsize

    def stride(self, dim=None):
        """Strides in elements (torch's convention; numpy counts bytes).

        Examples
        --------
        >>> t = gt.zeros(2, 3)
        >>> t.stride(), t.t().stride()
        ((3, 1), (1, 3))
        """
        cdef Py_ssize_t item = self._data.itemsize
        strides = tuple(s // item for s in (<object>self._data).strides)
        if dim is None:
            return strides
        return strides[_normalize_dim(dim, self._data.ndim)]

    def storage_offset(self):
        """Offset in elements of the first element from the start of the base's storage.

        Examples
        --------
        >>> gt.arange(6).view(2, 3)[1].storage_offset()
        3
        """
        if self._view_base is None:
            return 0
        base = self._view_base._data
        return (self._data.__array_interface__["data"][0]
                - base.__array_interface__["data"][0]) // self._data.itemsize

    def data_ptr(self):
        """The address of the first element."""
        return self._data.__array_interface__["data"][0]

    def is_contiguous(self, memory_format=None):
        """Whether the elements are laid out in row-major order without gaps.

        Examples
        --------
        >>> gt.zeros(2, 3).is_contiguous(), gt.zeros(2, 3).t().is_contiguous()
        (True, False)
        """
        return bool(self._data.flags.c_contiguous)

    def is_floating_point(self):
        """Whether the dtype is a floating-point one (float16, float32, float64)."""
        return is_float_num(cnp.PyArray_TYPE(self._data))

    def is_complex(self):
        """Always False: gradstack has no complex dtypes."""
        return False

    @property
    def is_leaf(self):
        """True for tensors that were not produced by a recorded op (``grad_fn is None``)."""
        return self._grad_fn is None

    @property
    def requires_grad(self):
        """Whether autograd records ops on this tensor."""
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self._set_requires_grad(bool(value))

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` in place and return ``self``.

        Examples
        --------
        >>> gt.zeros(2).requires_grad_().requires_grad
        True
        """
        self._set_requires_grad(bool(requires_grad))
        return self

    @property
    def grad_fn(self):
        """The node that produced this tensor, or None for leaves."""
        if self._view_base is not None and self._autograd_meta is not None \
                and autograd_extension() is not None:
            # torch regenerates a view's grad_fn when it is read (the autograd layer's
            # Note [A view whose grad_fn torch has not regenerated yet])
            autograd_extension().on_grad_fn_read(self)
        return self._grad_fn

    @property
    def grad(self):
        """The accumulated gradient (a Tensor) or None."""
        if self._grad is None and autograd_extension() is not None:
            if self._grad_fn is not None:
                autograd_extension().on_nonleaf_grad_access(self)
            if self._autograd_meta is not None:
                # zeros that zero_grad() left to be made now (graph-engine's Note
                # [zero_grad() leaves zeros to be made on first read])
                return autograd_extension().on_none_grad_read(self)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, TensorBase):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of type "
                    f"{type(value).__name__}"
                )
            if shape_of((<TensorBase>value)._data) != shape_of(self._data):
                raise RuntimeError(
                    f"assigned grad has data of a different size: grad shape "
                    f"{list(shape_of((<TensorBase>value)._data))} vs tensor shape {list(shape_of(self._data))}"
                )
            if (<TensorBase>value)._data.dtype != self._data.dtype:
                raise RuntimeError(
                    f"assigned grad has data of a different type: grad is "
                    f"{(<TensorBase>value).dtype} but the tensor is {self.dtype}"
                )
        self._grad = value
        if self._autograd_meta is not None and autograd_extension() is not None:
            autograd_extension().on_grad_assigned(self)

    @grad.deleter
    def grad(self):
        self._grad = None
        if self._autograd_meta is not None and autograd_extension() is not None:
            autograd_extension().on_grad_assigned(self)

    @property
    def output_nr(self):
        """Which output of its ``grad_fn`` this tensor is (0 for most ops)."""
        return self._output_nr

    @property
    def data(self):
        """A tensor sharing this one's storage, outside autograd (``requires_grad=False``).

        In-place changes through ``.data`` are not seen by autograd's version checks.
        """
        cdef Tensor t = wrap(self._data)
        return t

    @data.setter
    def data(self, value):
        if not isinstance(value, TensorBase):
            raise TypeError(f"Tensor.data must be set to a Tensor, not {type(value).__name__}")
        self._data = (<TensorBase>value)._data

    def is_inference(self):
        """Whether this tensor was created in inference mode."""
        return self._is_inference

    # -- autograd methods (implemented by the layer above) ----------------------------

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Compute the gradient of this tensor w.r.t. graph leaves (see gradstack_autograd)."""
        return need_autograd("backward()").backward(
            self, gradient, retain_graph, create_graph, inputs)

    def register_hook(self, hook):
        """Register ``hook(grad) -> Tensor or None``, called with this tensor's gradient."""
        return need_autograd("register_hook()").register_hook(self, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Register ``hook(tensor)``, called after a leaf's ``.grad`` was accumulated."""
        return need_autograd("register_post_accumulate_grad_hook()") \
            .register_post_accumulate_grad_hook(self, hook)

    def retain_grad(self):
        """Keep ``.grad`` for this non-leaf tensor during backward."""
        return need_autograd("retain_grad()").retain_grad(self)

    @property
    def retains_grad(self):
        """True if this non-leaf tensor keeps its ``.grad`` (see :meth:`retain_grad`)."""
        if autograd_extension() is None:
            return False
        return autograd_extension().retains_grad(self)

    def detach(self):
        """A new tensor sharing storage (and version counter), outside the graph."""
        return dispatch(OP_DETACH, (self,))

    def detach_(self):
        """Detach this tensor from the graph in place: it becomes a leaf."""
        if autograd_extension() is not None:
            return autograd_extension().detach_(self)
        self._grad_fn = None
        self._requires_grad = False
        return self

    # -- conversion -----------------------------------------------------------------------

    def numpy(self, *, force=False):
        """The numpy array behind this tensor (shares memory).

        Examples
        --------
        >>> t = gt.tensor([1., 2.])
        >>> a = t.numpy(); a[0] = 5.; t.tolist()
        [5.0, 2.0]
        """
        if self._requires_grad and not force:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead."
            )
        if _is_meta(self):
            raise _no_data("numpy()")
        return self._data

    def __array__(self, dtype=None, copy=None):
        if _is_meta(self):
            raise _no_data("numpy.asarray()")
        if self._requires_grad:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead."
            )
        if dtype is not None and dtype != self._data.dtype:
            return self._data.astype(dtype)
        if copy:
            return self._data.copy()
        return self._data

    def item(self):
        """The single value of a one-element tensor as a Python number.

        Examples
        --------
        >>> gt.tensor([[2.5]]).item()
        2.5
        """
        if _is_meta(self):
            raise _no_data("Tensor.item()")
        if cnp.PyArray_SIZE(self._data) != 1:
            raise RuntimeError(
                f"a Tensor with {cnp.PyArray_SIZE(self._data)} elements cannot be converted "
                "to Scalar; item() needs exactly one element (index it or reduce it first)"
            )
        return self._data.reshape(()).item()

    def tolist(self):
        """The values as (nested) Python lists, or a number for a 0-d tensor.

        Examples
        --------
        >>> gt.tensor([[1, 2], [3, 4]]).tolist()
        [[1, 2], [3, 4]]
        """
        if _is_meta(self):
            raise _no_data("tolist()")
        return self._data.tolist()

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self._data.dtype.kind not in "iub" or cnp.PyArray_SIZE(self._data) != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self):
        if cnp.PyArray_SIZE(self._data) != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with more than one value is ambiguous "
                f"(this one has {cnp.PyArray_SIZE(self._data)}); use .any() or .all()"
            )
        return bool(self._data.reshape(()).item())

    def __copy__(self):
        """``copy.copy``: a tensor sharing this one's storage, as torch's (matplotlib copies
        the tensors it plots this way)."""
        cdef TensorBase t = new_empty_tensor(type(self))
        t._data = self._data
        t._vc = self.version_counter()
        t._view_base = self._view_base
        t._requires_grad = self._requires_grad
        vars(t).update(vars(self))
        return t

    def __deepcopy__(self, memo):
        """``copy.deepcopy``: an independent leaf with copied values, ``requires_grad`` and
        ``.grad`` (graph leaves only, as in torch)."""
        if self._grad_fn is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the "
                "deepcopy protocol; deep-copy x.detach() instead")
        if id(self) in memo:
            return memo[id(self)]
        import copy
        cdef TensorBase t = new_empty_tensor(type(self))
        memo[id(self)] = t
        t._data = self._data.copy(order="K")
        t._requires_grad = self._requires_grad
        if self._grad is not None:
            t._grad = copy.deepcopy(self._grad, memo)
        vars(t).update(copy.deepcopy(vars(self), memo))
        return t

    def __reduce_ex__(self, protocol):
        raise TypeError(
            "gradstack tensors are not pickled (pickle can execute code when loaded); use "
            "gradstack.save / gradstack.load, or .numpy() for the values."
        )

    def __repr__(self):
        from ._format import format_tensor
        suffixes = []
        if self._grad_fn is not None:
            suffixes.append(f"grad_fn=<{type(self._grad_fn).__name__}>")
        elif self._requires_grad:
            suffixes.append("requires_grad=True")
        d = dtype_of_array(self._data)
        default = d is _dt.get_default_dtype() or d is _dt.int64 or d is _dt.bool_
        if _is_meta(self):  # torch's words
            size = tuple((<object>self._data).shape)
            parts = ["...", "device='meta'", f"size={size}"]
            if d is not _dt.get_default_dtype():  # (int64 and bool too, unlike values)
                parts.append(f"dtype={d!r}")
            return "tensor(" + ", ".join(parts + suffixes) + ")"
        return format_tensor(self._data, dtype_name=repr(d), is_default_dtype=default,
                             suffixes=suffixes)

    def __format__(self, spec):
        if self._data.ndim == 0:
            return self._data.item().__format__(spec)
        return object.__format__(self, spec)

    # -- dtype conversion -----------------------------------------------------------------

    def to(self, *args, **kwargs):
        """``to(dtype)``, ``to(device)``, ``to(other)``, ``to(device, dtype)``: a converted copy,
        or ``self`` when nothing changes (``copy=True`` forces a copy)."""
        dtype = kwargs.pop("dtype", None)
        device = kwargs.pop("device", None)
        copy = kwargs.pop("copy", False)
        kwargs.pop("non_blocking", None)
        if kwargs:
            raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
        for a in args:
            if isinstance(a, TensorBase):
                dtype = a.dtype
            elif isinstance(a, _dt.dtype) or (isinstance(a, type) and a in (float, int, bool)):
                dtype = a
            else:
                device = a
        if device is not None and _device_type(device).type == "meta":
            return _to_meta(self, dtype)
        _check_device(device)
        if _is_meta(self) and (device is not None or dtype is not None or copy):
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        if dtype is None:
            return dispatch(OP_CLONE, (self,)) if copy else self
        return _convert(self, _dt.as_dtype(dtype), bool(copy))

    def type(self, dtype=None, non_blocking=False, **kwargs):
        """The type name (``"gradstack.FloatTensor"``) without ``dtype``, else ``to(dtype)``.

        ``dtype`` is a dtype, a legacy type (``gt.LongTensor``) or its name as a string
        (``"torch.LongTensor"``), as torch's ``Tensor.type``.

        Examples
        --------
        >>> gt.zeros(1).type(), gt.zeros(1).type(gt.float64).dtype
        ('gradstack.FloatTensor', gradstack.float64)
        >>> gt.zeros(1).type("torch.LongTensor").dtype
        gradstack.int64
        """
        if dtype is None:
            return f"gradstack.{_TYPE_NAMES[self.dtype.name]}"
        if isinstance(dtype, (str, type)) and dtype not in (float, int, bool):
            from .legacy import legacy_type  # (legacy imports this module)

            dtype = legacy_type(dtype)
        return self.to(dtype)

    # -- composites (gradstack_tensor/composites.py; the module imports this one) ---------

    def lerp(self, end, weight):
        """``self + weight * (end - self)``; see :func:`gradstack_tensor.lerp`.

        Examples
        --------
        >>> gt.tensor([0., 10.]).lerp(gt.tensor([10., 20.]), 0.25).tolist()
        [2.5, 12.5]
        """
        from .composites import lerp
        return lerp(self, end, weight)

    def lerp_(self, end, weight):
        """In-place :meth:`lerp`."""
        from .composites import lerp
        return self.copy_(lerp(self, end, weight))

    def addcmul(self, tensor1, tensor2, *, value=1):
        """``self + value * tensor1 * tensor2``; see :func:`gradstack_tensor.addcmul`."""
        from .composites import addcmul
        return addcmul(self, tensor1, tensor2, value=value)

    def addcmul_(self, tensor1, tensor2, *, value=1):
        """In-place :meth:`addcmul`."""
        from .composites import addcmul
        return self.copy_(addcmul(self, tensor1, tensor2, value=value))

    def addcdiv(self, tensor1, tensor2, *, value=1):
        """``self + value * tensor1 / tensor2``; see :func:`gradstack_tensor.addcdiv`."""
        from .composites import addcdiv
        return addcdiv(self, tensor1, tensor2, value=value)

    def addcdiv_(self, tensor1, tensor2, *, value=1):
        """In-place :meth:`addcdiv`."""
        from .composites import addcdiv
        return self.copy_(addcdiv(self, tensor1, tensor2, value=value))

    def erf(self):
        """The error function, elementwise; see :func:`gradstack_tensor.erf`."""
        return dispatch(OPS["erf"], (self,))

    def erfinv(self):
        """The inverse error function, elementwise; see :func:`gradstack_tensor.erfinv`."""
        return dispatch(OPS["erfinv"], (self,))

    def lgamma(self):
        """``log|gamma(x)|``, elementwise; see :func:`gradstack_tensor.lgamma`."""
        return dispatch(OPS["lgamma"], (self,))

    def digamma(self):
        """The digamma function, elementwise; see :func:`gradstack_tensor.digamma`."""
        return dispatch(OPS["digamma"], (self,))

    def polygamma(self, n):
        """The ``n``-th derivative of digamma; see :func:`gradstack_tensor.polygamma`."""
        return dispatch(OPS["polygamma"], (self, n))

    def mvlgamma(self, p):
        """The multivariate log-gamma function; see :func:`gradstack_tensor.mvlgamma`."""
        from .functions import mvlgamma
        return mvlgamma(self, p)

    def masked_select(self, mask):
        """The elements where ``mask`` is True, as a 1-d tensor.

        Examples
        --------
        >>> gt.tensor([1, 2, 3]).masked_select(gt.tensor([True, False, True])).tolist()
        [1, 3]
        """
        from .composites import masked_select
        return masked_select(self, mask)

    # -- small methods torch programs call (casts, flags, aliases, in-place forms) --------

    def byte(self):
        """``self.to(uint8)``."""
        return self.to(_dt.uint8)

    def char(self):
        """``self.to(int8)``."""
        return self.to(_dt.int8)

    def short(self):
        """``self.to(int16)``."""
        return self.to(_dt.int16)

    def get_device(self):
        """-1: a CPU tensor (torch's answer for CPU)."""
        return -1

    @property
    def is_cpu(self):
        """True: gradstack's tensors live on the CPU."""
        return True

    @property
    def nbytes(self):
        """The number of bytes of the elements (``numel() * itemsize``)."""
        return self.numel() * self.element_size()

    @property
    def itemsize(self):
        """The size of one element in bytes."""
        return self.element_size()

    def is_signed(self):
        """Whether the dtype is signed (False for uint8 and bool)."""
        return self.dtype.name not in ("uint8", "bool")

    def is_same_size(self, other):
        """Whether ``other`` has this tensor's shape."""
        if not isinstance(other, Tensor):
            raise TypeError(
                f"is_same_size(): argument 'other' (position 1) must be Tensor, not "
                f"{type(other).__name__}"
            )
        return tuple(self.shape) == tuple(other.shape)

    def is_nonzero(self):
        """The truth value of a one-element tensor (torch's errors otherwise)."""
        n = self.numel()
        if n == 0:
            raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
        if n > 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def is_conj(self):
        """False: real tensors have no conjugate bit."""
        return False

    def is_neg(self):
        """False: real tensors have no negative bit."""
        return False

    def resolve_conj(self):
        """``self`` (real tensors have no conjugate bit)."""
        return self

    def resolve_neg(self):
        """``self`` (real tensors have no negative bit)."""
        return self

    def conj(self):
        """``self``: the conjugate of a real tensor."""
        return self

    def conj_physical(self):
        """A copy: the conjugate of a real tensor."""
        return self.clone()

    @property
    def real(self):
        """``self``: the real part of a real tensor."""
        return self

    def is_pinned(self, device=None):
        """False: no page-locked memory without an accelerator."""
        return False

    def pin_memory(self, device=None):
        """``self`` (pinning has no effect without an accelerator)."""
        return self

    def is_shared(self):
        """False: the storage is not in shared memory."""
        return False

    def share_memory_(self):
        """``self`` (process-shared storage is not used by gradstack)."""
        return self

    def split_with_sizes(self, split_sizes, dim=0):
        """``self.split(list(split_sizes), dim)``."""
        return self.split(list(split_sizes), dim)

    def unsafe_split(self, split_size, dim=0):
        """``self.split(split_size, dim)``."""
        return self.split(split_size, dim)

    def unsafe_chunk(self, chunks, dim=0):
        """``self.chunk(chunks, dim)``."""
        return self.chunk(chunks, dim)

    def narrow_copy(self, dim, start, length):
        """A copy of ``self.narrow(dim, start, length)``."""
        return self.narrow(dim, start, length).clone()

    def sum_to_size(self, *size):
        """The sum over the dims that broadcasting ``size`` to this shape would expand."""
        if len(size) == 1 and not isinstance(size[0], int):
            size = tuple(size[0])
        shape = tuple(self.shape)
        lead = len(shape) - len(size)
        if lead < 0 or any(s not in (1, n) for s, n in zip(size, shape[lead:])):
            raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
        dims = tuple(range(lead)) + tuple(
            lead + i for i, (s, n) in enumerate(zip(size, shape[lead:])) if s == 1 and n != 1
        )
        out = self.sum(dims, keepdim=True) if dims else self
        return out.reshape(tuple(size))

    def msort(self):
        """``self.sort(0)`` values."""
        return self.sort(0)[0]

    def take(self, index):
        """The elements at the flat positions ``index`` (of the row-major flattening)."""
        if not isinstance(index, Tensor):
            raise TypeError(
                f"take(): argument 'index' (position 1) must be Tensor, not "
                f"{type(index).__name__}"
            )
        return self.reshape(-1).gather(0, index.reshape(-1)).reshape(tuple(index.shape))

    def vdot(self, other):
        """``self.dot(other)`` (real tensors)."""
        return self.dot(other)

    def rot90(self, k=1, dims=(0, 1)):
        """Rotated by 90 degrees ``k`` times in the plane of ``dims`` (flips and a
        transpose, as torch)."""
        d0, d1 = dims
        k = k % 4
        if k == 1:
            return self.flip(d1).transpose(d0, d1)
        if k == 2:
            return self.flip(d0, d1)
        if k == 3:
            return self.flip(d0).transpose(d0, d1)
        return self.clone()

    def erfc(self):
        """``1 - erf(self)``."""
        return 1 - self.erf()

    def erfc_(self):
        """In-place :meth:`erfc`."""
        return self.copy_(1 - self.erf())

    def erf_(self):
        """In-place :meth:`erf`."""
        return self.copy_(self.erf())

    def lgamma_(self):
        """In-place :meth:`lgamma`."""
        return self.copy_(self.lgamma())

    def digamma_(self):
        """In-place :meth:`digamma`."""
        return self.copy_(self.digamma())

    def polygamma_(self, n):
        """In-place :meth:`polygamma`."""
        return self.copy_(self.polygamma(n))

    def erfinv_(self):
        """In-place :meth:`erfinv`."""
        return self.copy_(self.erfinv())

    def cumsum_(self, dim, *, dtype=None):
        """In-place :meth:`cumsum`."""
        return self.copy_(self.cumsum(dim, dtype=dtype))

    def tril_(self, diagonal=0):
        """In-place :meth:`tril`."""
        return self.copy_(self.tril(diagonal))

    def triu_(self, diagonal=0):
        """In-place :meth:`triu`."""
        return self.copy_(self.triu(diagonal))

    def eq_(self, other):
        """In place: 1 where ``self == other``, else 0, in ``self``'s dtype."""
        return self.copy_(self == other)

    def ne_(self, other):
        """In-place ``!=`` (see :meth:`eq_`)."""
        return self.copy_(self != other)

    def lt_(self, other):
        """In-place ``<`` (see :meth:`eq_`)."""
        return self.copy_(self < other)

    def le_(self, other):
        """In-place ``<=`` (see :meth:`eq_`)."""
        return self.copy_(self <= other)

    def gt_(self, other):
        """In-place ``>`` (see :meth:`eq_`)."""
        return self.copy_(self > other)

    def ge_(self, other):
        """In-place ``>=`` (see :meth:`eq_`)."""
        return self.copy_(self >= other)

    # -- elementwise_composites.py (it imports this module) ------------------------------

    def greater(self, *args, **kwargs):
        """See :func:`gradstack_tensor.greater` (``self`` its first argument)."""
        from .elementwise_composites import greater
        return greater(self, *args, **kwargs)

    def greater_equal(self, *args, **kwargs):
        """See :func:`gradstack_tensor.greater_equal` (``self`` its first argument)."""
        from .elementwise_composites import greater_equal
        return greater_equal(self, *args, **kwargs)

    def less(self, *args, **kwargs):
        """See :func:`gradstack_tensor.less` (``self`` its first argument)."""
        from .elementwise_composites import less
        return less(self, *args, **kwargs)

    def less_equal(self, *args, **kwargs):
        """See :func:`gradstack_tensor.less_equal` (``self`` its first argument)."""
        from .elementwise_composites import less_equal
        return less_equal(self, *args, **kwargs)

    def not_equal(self, *args, **kwargs):
        """See :func:`gradstack_tensor.not_equal` (``self`` its first argument)."""
        from .elementwise_composites import not_equal
        return not_equal(self, *args, **kwargs)

    def arccos(self, *args, **kwargs):
        """See :func:`gradstack_tensor.arccos` (``self`` its first argument)."""
        from .elementwise_composites import arccos
        return arccos(self, *args, **kwargs)

    def arcsin(self, *args, **kwargs):
        """See :func:`gradstack_tensor.arcsin` (``self`` its first argument)."""
        from .elementwise_composites import arcsin
        return arcsin(self, *args, **kwargs)

    def arctan(self, *args, **kwargs):
        """See :func:`gradstack_tensor.arctan` (``self`` its first argument)."""
        from .elementwise_composites import arctan
        return arctan(self, *args, **kwargs)

    def arctan2(self, *args, **kwargs):
        """See :func:`gradstack_tensor.arctan2` (``self`` its first argument)."""
        from .elementwise_composites import arctan2
        return arctan2(self, *args, **kwargs)

    def fix(self, *args, **kwargs):
        """See :func:`gradstack_tensor.fix` (``self`` its first argument)."""
        from .elementwise_composites import fix
        return fix(self, *args, **kwargs)

    def positive(self, *args, **kwargs):
        """See :func:`gradstack_tensor.positive` (``self`` its first argument)."""
        from .elementwise_composites import positive
        return positive(self, *args, **kwargs)

    def deg2rad(self, *args, **kwargs):
        """See :func:`gradstack_tensor.deg2rad` (``self`` its first argument)."""
        from .elementwise_composites import deg2rad
        return deg2rad(self, *args, **kwargs)

    def rad2deg(self, *args, **kwargs):
        """See :func:`gradstack_tensor.rad2deg` (``self`` its first argument)."""
        from .elementwise_composites import rad2deg
        return rad2deg(self, *args, **kwargs)

    def frac(self, *args, **kwargs):
        """See :func:`gradstack_tensor.frac` (``self`` its first argument)."""
        from .elementwise_composites import frac
        return frac(self, *args, **kwargs)

    def signbit(self, *args, **kwargs):
        """See :func:`gradstack_tensor.signbit` (``self`` its first argument)."""
        from .elementwise_composites import signbit
        return signbit(self, *args, **kwargs)

    def logaddexp(self, *args, **kwargs):
        """See :func:`gradstack_tensor.logaddexp` (``self`` its first argument)."""
        from .elementwise_composites import logaddexp
        return logaddexp(self, *args, **kwargs)

    def logaddexp2(self, *args, **kwargs):
        """See :func:`gradstack_tensor.logaddexp2` (``self`` its first argument)."""
        from .elementwise_composites import logaddexp2
        return logaddexp2(self, *args, **kwargs)

    def xlogy(self, *args, **kwargs):
        """See :func:`gradstack_tensor.xlogy` (``self`` its first argument)."""
        from .elementwise_composites import xlogy
        return xlogy(self, *args, **kwargs)

    def nan_to_num(self, *args, **kwargs):
        """See :func:`gradstack_tensor.nan_to_num` (``self`` its first argument)."""
        from .elementwise_composites import nan_to_num
        return nan_to_num(self, *args, **kwargs)

    def sinc(self, *args, **kwargs):
        """See :func:`gradstack_tensor.sinc` (``self`` its first argument)."""
        from .elementwise_composites import sinc
        return sinc(self, *args, **kwargs)

    def logit(self, *args, **kwargs):
        """See :func:`gradstack_tensor.logit` (``self`` its first argument)."""
        from .elementwise_composites import logit
        return logit(self, *args, **kwargs)

    def float_power(self, *args, **kwargs):
        """See :func:`gradstack_tensor.float_power` (``self`` its first argument)."""
        from .elementwise_composites import float_power
        return float_power(self, *args, **kwargs)

    def ldexp(self, *args, **kwargs):
        """See :func:`gradstack_tensor.ldexp` (``self`` its first argument)."""
        from .elementwise_composites import ldexp
        return ldexp(self, *args, **kwargs)

    def nansum(self, *args, **kwargs):
        """See :func:`gradstack_tensor.nansum` (``self`` its first argument)."""
        from .elementwise_composites import nansum
        return nansum(self, *args, **kwargs)

    def nanmean(self, *args, **kwargs):
        """See :func:`gradstack_tensor.nanmean` (``self`` its first argument)."""
        from .elementwise_composites import nanmean
        return nanmean(self, *args, **kwargs)

    def aminmax(self, *args, **kwargs):
        """See :func:`gradstack_tensor.aminmax` (``self`` its first argument)."""
        from .elementwise_composites import aminmax
        return aminmax(self, *args, **kwargs)

    def take_along_dim(self, *args, **kwargs):
        """See :func:`gradstack_tensor.take_along_dim` (``self`` its first argument)."""
        from .elementwise_composites import take_along_dim
        return take_along_dim(self, *args, **kwargs)

    def cross(self, *args, **kwargs):
        """See :func:`gradstack_tensor.cross` (``self`` its first argument)."""
        from .elementwise_composites import cross
        return cross(self, *args, **kwargs)

    def cumprod(self, *args, **kwargs):
        """See :func:`gradstack_tensor.cumprod` (``self`` its first argument)."""
        from .elementwise_composites import cumprod
        return cumprod(self, *args, **kwargs)

    def baddbmm(self, *args, **kwargs):
        """See :func:`gradstack_tensor.baddbmm` (``self`` its first argument)."""
        from .elementwise_composites import baddbmm
        return baddbmm(self, *args, **kwargs)

    def addbmm(self, *args, **kwargs):
        """See :func:`gradstack_tensor.addbmm` (``self`` its first argument)."""
        from .elementwise_composites import addbmm
        return addbmm(self, *args, **kwargs)

    def addmv(self, *args, **kwargs):
        """See :func:`gradstack_tensor.addmv` (``self`` its first argument)."""
        from .elementwise_composites import addmv
        return addmv(self, *args, **kwargs)

    def addr(self, *args, **kwargs):
        """See :func:`gradstack_tensor.addr` (``self`` its first argument)."""
        from .elementwise_composites import addr
        return addr(self, *args, **kwargs)

    def square_(self):
        """In place ``self * self`` (``pow_(2)``, as torch)."""
        return self.pow_(2)

    def clamp_min_(self, min):
        """In place ``clamp_(min=min)``."""
        return self.clamp_(min=min)

    def clamp_max_(self, max):
        """In place ``clamp_(max=max)``."""
        return self.clamp_(max=max)

    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        """See :func:`gradstack_tensor.isclose`."""
        from .functions import isclose
        return isclose(self, other, rtol, atol, equal_nan)

    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        """See :func:`gradstack_tensor.allclose`."""
        from .functions import allclose
        return allclose(self, other, rtol, atol, equal_nan)

    # -- indexed writes (_impl_scatter.py) ----------------------------------------------

    def scatter(self, dim, index, src=None, *, value=None, reduce=None):
        """A copy with ``src[i][j]`` (or a number) written at ``[index[i][j]][j]`` for
        ``dim=0`` (and so on for other dims).

        Examples
        --------
        >>> gt.zeros(3, 4).scatter(1, gt.tensor([[1], [3], [0]]), 1.0).tolist()[1]
        [0.0, 0.0, 0.0, 1.0]
        """
        return dispatch(OPS["scatter"], (self, dim, index, _scatter_src(src, value), reduce))

    def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
        """In-place :meth:`scatter` (``reduce="add"``/``"multiply"`` combine instead)."""
        return dispatch(OPS["scatter_"], (self, dim, index, _scatter_src(src, value), reduce))

    def scatter_add(self, dim, index, src):
        """A copy with ``src[i][j]`` added at ``[index[i][j]][j]`` (dim 0); repeats add up."""
        return dispatch(OPS["scatter_add"], (self, dim, index, src))

    def scatter_add_(self, dim, index, src):
        """In-place :meth:`scatter_add`."""
        return dispatch(OPS["scatter_add_"], (self, dim, index, src))

    def index_add(self, dim, index, source, *, alpha=1):
        """A copy with ``alpha * source``'s slices added at positions ``index`` of ``dim``.

        Examples
        --------
        >>> gt.zeros(3).index_add(0, gt.tensor([2, 2]), gt.tensor([1.0, 2.0])).tolist()
        [0.0, 0.0, 3.0]
        """
        return dispatch(OPS["index_add"], (self, dim, index, source, alpha))

    def index_add_(self, dim, index, source, *, alpha=1):
        """In-place :meth:`index_add`."""
        return dispatch(OPS["index_add_"], (self, dim, index, source, alpha))

    def index_copy(self, dim, index, source):
        """A copy with ``source``'s slices written at positions ``index`` of ``dim``."""
        return dispatch(OPS["index_copy"], (self, dim, index, source))

    def index_copy_(self, dim, index, source):
        """In-place :meth:`index_copy`."""
        return dispatch(OPS["index_copy_"], (self, dim, index, source))

    def index_fill(self, dim, index, value):
        """A copy with the slices at positions ``index`` of ``dim`` set to ``value`` (a
        number or a 0-d tensor)."""
        return dispatch(OPS["index_fill"], (self, dim, index, value))

    def index_fill_(self, dim, index, value):
        """In-place :meth:`index_fill`."""
        return dispatch(OPS["index_fill_"], (self, dim, index, value))

    # -- searching.py, arrangements.py and contractions.py (they import this module) -------

    def nonzero(self, *, as_tuple=False):
        """The indices of the nonzero elements; see :func:`gradstack_tensor.nonzero`.

        Examples
        --------
        >>> gt.tensor([0, 3, 0, 5]).nonzero().tolist()
        [[1], [3]]
        """
        from .searching import nonzero
        return nonzero(self, as_tuple=as_tuple)

    def argwhere(self):
        """``self.nonzero()``; see :func:`gradstack_tensor.argwhere`."""
        from .searching import argwhere
        return argwhere(self)

    def argsort(self, dim=-1, descending=False, *, stable=False):
        """The indices that sort ``self`` along ``dim``; see :func:`gradstack_tensor.argsort`."""
        from .searching import argsort
        return argsort(self, dim, descending, stable=stable)

    def median(self, dim=None, keepdim=False):
        """The lower median; see :func:`gradstack_tensor.median`."""
        from .order_statistics import median
        return median(self, dim, keepdim)

    def nanmedian(self, dim=None, keepdim=False):
        """The lower median ignoring NaN; see :func:`gradstack_tensor.nanmedian`."""
        from .order_statistics import nanmedian
        return nanmedian(self, dim, keepdim)

    def kthvalue(self, k, dim=-1, keepdim=False):
        """The ``k``-th smallest element; see :func:`gradstack_tensor.kthvalue`."""
        from .order_statistics import kthvalue
        return kthvalue(self, k, dim, keepdim)

    def mode(self, dim=-1, keepdim=False):
        """The most frequent value; see :func:`gradstack_tensor.mode`."""
        from .order_statistics import mode
        return mode(self, dim, keepdim)

    def quantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
        """The ``q``-th quantiles; see :func:`gradstack_tensor.quantile`."""
        from .order_statistics import quantile
        return quantile(self, q, dim, keepdim, interpolation=interpolation)

    def nanquantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
        """The ``q``-th quantiles ignoring NaN; see :func:`gradstack_tensor.nanquantile`."""
        from .order_statistics import nanquantile
        return nanquantile(self, q, dim, keepdim, interpolation=interpolation)

    def cummax(self, dim):
        """The running maximum and its indices; see :func:`gradstack_tensor.cummax`."""
        from .order_statistics import cummax
        return cummax(self, dim)

    def cummin(self, dim):
        """The running minimum and its indices; see :func:`gradstack_tensor.cummin`."""
        from .order_statistics import cummin
        return cummin(self, dim)

    def inverse(self):
        """The inverse of each square matrix; see :func:`gradstack_tensor.linalg.inv`."""
        from .linalg import inv
        return inv(self)

    def det(self):
        """The determinant of each square matrix; see :func:`gradstack_tensor.linalg.det`."""
        from .linalg import det
        return det(self)

    def slogdet(self):
        """``(sign, logabsdet)``; see :func:`gradstack_tensor.slogdet`."""
        from .matrix_functions import slogdet
        return slogdet(self)

    def logdet(self):
        """The log of each determinant; see :func:`gradstack_tensor.logdet`."""
        from .matrix_functions import logdet
        return logdet(self)

    def cholesky(self, upper=False):
        """The Cholesky factor (deprecated in torch); see :func:`gradstack_tensor.cholesky`."""
        from .matrix_functions import cholesky
        return cholesky(self, upper)

    def matrix_power(self, n):
        """``self`` to the matrix power ``n``; see :func:`gradstack_tensor.linalg.matrix_power`."""
        from .linalg import matrix_power
        return matrix_power(self, n)

    def fill_diagonal_(self, fill_value, wrap=False):
        """Write ``fill_value`` on the main diagonal; see
        :func:`gradstack_tensor.arrangements.fill_diagonal_`."""
        from .arrangements import fill_diagonal_
        return fill_diagonal_(self, fill_value, wrap)

    def diag_embed(self, offset=0, dim1=-2, dim2=-1):
        """A tensor whose diagonals (in ``dim1``, ``dim2``) are ``self``'s last dim; see :mod:`gradstack_tensor.matrix_composites`."""
        from .matrix_composites import diag_embed
        return diag_embed(self, offset, dim1, dim2)

    def diagflat(self, offset=0):
        """The flattened ``self`` on diagonal ``offset`` of a square matrix; see :mod:`gradstack_tensor.matrix_composites`."""
        from .matrix_composites import diagflat
        return diagflat(self, offset)

    def cov(self, *, correction=1, fweights=None, aweights=None):
        """The covariance of the variables in ``self``'s rows; see :mod:`gradstack_tensor.matrix_composites`."""
        from .matrix_composites import cov
        return cov(self, correction=correction, fweights=fweights, aweights=aweights)

    def corrcoef(self):
        """The correlation coefficients of the variables in ``self``'s rows; see :mod:`gradstack_tensor.matrix_composites`."""
        from .matrix_composites import corrcoef
        return corrcoef(self)

    def bincount(self, weights=None, minlength=0):
        """The count (or weight sum) of each value of a 1-d int tensor; see :mod:`gradstack_tensor.matrix_composites`."""
        from .matrix_composites import bincount
        return bincount(self, weights, minlength)

    def logcumsumexp(self, dim):
        """``log(cumsum(exp(self)))`` along ``dim``, computed stably; see :mod:`gradstack_tensor.matrix_composites`."""
        from .matrix_composites import logcumsumexp
        return logcumsumexp(self, dim)

    def hypot(self, other):
        """``sqrt(self**2 + other**2)`` without overflow; see :mod:`gradstack_tensor.matrix_composites`."""
        from .matrix_composites import hypot
        return hypot(self, other)

    def hypot_(self, other):
        """In-place :meth:`hypot`; see :mod:`gradstack_tensor.matrix_composites`."""
        from .matrix_composites import hypot_
        return hypot_(self, other)

    def gcd(self, other):
        """The greatest common divisor (integers); see :mod:`gradstack_tensor.matrix_composites`."""
        from .matrix_composites import gcd
        return gcd(self, other)

    def gcd_(self, other):
        """In-place :meth:`gcd`; see :mod:`gradstack_tensor.matrix_composites`."""
        from .matrix_composites import gcd_
        return gcd_(self, other)

    def lcm(self, other):
        """The least common multiple (integers); see :mod:`gradstack_tensor.matrix_composites`."""
        from .matrix_composites import lcm
        return lcm(self, other)

    def lcm_(self, other):
        """In-place :meth:`lcm`; see :mod:`gradstack_tensor.matrix_composites`."""
        from .matrix_composites import lcm_
        return lcm_(self, other)

    def heaviside(self, values):
        """The Heaviside step function (``values`` where ``self`` is 0); see :mod:`gradstack_tensor.matrix_composites`."""
        from .matrix_composites import heaviside
        return heaviside(self, values)

    def heaviside_(self, values):
        """In-place :meth:`heaviside`; see :mod:`gradstack_tensor.matrix_composites`."""
        from .matrix_composites import heaviside_
        return heaviside_(self, values)

    def index_put(self, indices, values, accumulate=False):
        """A copy with ``values`` put at ``indices`` (summed with ``accumulate``); see :mod:`gradstack_tensor.matrix_composites`."""
        from .matrix_composites import index_put
        return index_put(self, indices, values, accumulate)

    def index_put_(self, indices, values, accumulate=False):
        """Put ``values`` at ``indices`` in place (summed with ``accumulate``); see :mod:`gradstack_tensor.matrix_composites`."""
        from .matrix_composites import index_put_
        return index_put_(self, indices, values, accumulate)

    def masked_scatter(self, mask, source):
        """A copy with ``source``'s elements where ``mask`` is True; see :mod:`gradstack_tensor.matrix_composites`."""
        from .matrix_composites import masked_scatter
        return masked_scatter(self, mask, source)

    def masked_scatter_(self, mask, source):
        """In-place :meth:`masked_scatter`; see :mod:`gradstack_tensor.matrix_composites`."""
        from .matrix_composites import masked_scatter_
        return masked_scatter_(self, mask, source)

    def copysign(self, other):
        """``|self|`` with ``other``'s sign; see :func:`gradstack_tensor.copysign`."""
        from .elementwise_composites import copysign
        return copysign(self, other)

    def fmax(self, other):
        """The maximum ignoring NaN; see :func:`gradstack_tensor.fmax`."""
        from .elementwise_composites import fmax
        return fmax(self, other)

    def fmin(self, other):
        """The minimum ignoring NaN; see :func:`gradstack_tensor.fmin`."""
        from .elementwise_composites import fmin
        return fmin(self, other)

    def isposinf(self):
        """Where ``self`` is +inf; see :func:`gradstack_tensor.isposinf`."""
        from .elementwise_composites import isposinf
        return isposinf(self)

    def isneginf(self):
        """Where ``self`` is -inf; see :func:`gradstack_tensor.isneginf`."""
        from .elementwise_composites import isneginf
        return isneginf(self)

    def isreal(self):
        """Everywhere True for a real tensor; see :func:`gradstack_tensor.isreal`."""
        from .elementwise_composites import isreal
        return isreal(self)

    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
        """The distinct elements; see :func:`gradstack_tensor.unique`."""
        from .searching import unique
        return unique(self, sorted, return_inverse, return_counts, dim)

    def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
        """Runs of equal elements kept once; see :func:`gradstack_tensor.unique_consecutive`."""
        from .searching import unique_consecutive
        return unique_consecutive(self, return_inverse, return_counts, dim)

    def broadcast_to(self, size):
        """``self.expand(size)``; see :func:`gradstack_tensor.broadcast_to`."""
        from .arrangements import broadcast_to
        return broadcast_to(self, size)

    def tile(self, *dims):
        """``self`` repeated along each dim; see :func:`gradstack_tensor.tile`."""
        from .arrangements import tile
        return tile(self, dims[0] if len(dims) == 1 and not isinstance(dims[0], int) else dims)

    def repeat_interleave(self, repeats=None, dim=None, *, output_size=None):
        """Each element repeated in a row; see :func:`gradstack_tensor.repeat_interleave`."""
        from .arrangements import repeat_interleave
        return repeat_interleave(self, repeats, dim, output_size=output_size)

    def roll(self, shifts, dims=None):
        """Elements shifted with wrap-around; see :func:`gradstack_tensor.roll`."""
        from .arrangements import roll
        return roll(self, shifts, dims)

    def diff(self, n=1, dim=-1, prepend=None, append=None):
        """The ``n``-th forward difference; see :func:`gradstack_tensor.diff`."""
        from .arrangements import diff
        return diff(self, n, dim, prepend, append)

    def swapdims(self, dim0, dim1):
        """``self.transpose(dim0, dim1)``."""
        return self.transpose(dim0, dim1)

    def fliplr(self):
        """Flipped along dim 1; see :func:`gradstack_tensor.fliplr`."""
        from .arrangements import fliplr
        return fliplr(self)

    def flipud(self):
        """Flipped along dim 0; see :func:`gradstack_tensor.flipud`."""
        from .arrangements import flipud
        return flipud(self)

    def unflatten(self, dim, sizes):
        """Dim ``dim`` viewed as ``sizes``; see :func:`gradstack_tensor.unflatten`."""
        from .arrangements import unflatten
        return unflatten(self, dim, sizes)

    def tensor_split(self, indices_or_sections, dim=0):
        """Views along ``dim``; see :func:`gradstack_tensor.tensor_split`."""
        from .arrangements import tensor_split
        return tensor_split(self, indices_or_sections, dim)

    def hsplit(self, indices_or_sections):
        """See :func:`gradstack_tensor.hsplit`."""
        from .arrangements import hsplit
        return hsplit(self, indices_or_sections)

    def vsplit(self, indices_or_sections):
        """See :func:`gradstack_tensor.vsplit`."""
        from .arrangements import vsplit
        return vsplit(self, indices_or_sections)

    def dsplit(self, indices_or_sections):
        """See :func:`gradstack_tensor.dsplit`."""
        from .arrangements import dsplit
        return dsplit(self, indices_or_sections)

    def inner(self, other):
        """Sums of products over the last dims; see :func:`gradstack_tensor.inner`."""
        from .contractions import inner
        return inner(self, other)

    def kron(self, other):
        """The Kronecker product; see :func:`gradstack_tensor.kron`."""
        from .contractions import kron
        return kron(self, other)

    def histc(self, bins=100, min=0, max=0):
        """A histogram with ``bins`` equal bins; see :func:`gradstack_tensor.histc`."""
        from .histograms import histc
        return histc(self, bins, min, max)

    def histogram(self, bins=100, *, range=None, weight=None, density=False):
        """``(hist, bin_edges)`` of this tensor's values; see
        :func:`gradstack_tensor.histogram`."""
        from .histograms import histogram
        return histogram(self, bins, range=range, weight=weight, density=density)

    def equal(self, other):
        """True if ``other`` has the same shape and the same values (``torch.equal``).

        Values compare after type promotion; NaN equals nothing, as in torch.

        Examples
        --------
        >>> gt.ones(2).equal(gt.ones(2, dtype=gt.float64)), gt.ones(2).equal(gt.ones(1))
        (True, False)
        """
        if not isinstance(other, Tensor):
            raise TypeError(
                f"equal(): argument 'other' (position 2) must be Tensor, not "
                f"{type(other).__name__}"
            )
        cdef object a = (<TensorBase>self)._data, b = (<TensorBase>other)._data  # (objects:
        return a.shape == b.shape and bool(np.array_equal(a, b))  # an ndarray's .shape is a C pointer)

    def type_as(self, other):
        """``to(other.dtype)``."""
        return self.to(expect_other(other, "type_as").dtype)

    def float(self):
        """``to(float32)``."""
        return _convert(self, _dt.float32, False)

    def double(self):
        """``to(float64)``."""
        return _convert(self, _dt.float64, False)

    def half(self):
        """``to(float16)``."""
        return _convert(self, _dt.float16, False)

    def long(self):
        """``to(int64)``."""
        return _convert(self, _dt.int64, False)

    def int(self):
        """``to(int32)``."""
        return _convert(self, _dt.int32, False)

    def bool(self):
        """``to(bool)``."""
        return _convert(self, _dt.bool_, False)

    def cpu(self):
        """``self``: gradstack tensors live on the CPU (a meta tensor has nothing to copy)."""
        if _is_meta(self):
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        return self

    def cuda(self, device=None, non_blocking=False):
        """Raises: gradstack has no CUDA device (``gradstack.cuda.is_available()`` is False)."""
        _check_device("cuda")

    # -- new tensors like this one ----------------------------------------------------------

    def new_tensor(self, data, dtype=None, requires_grad=False):
        """A new leaf tensor from ``data``, with this tensor's dtype unless ``dtype`` is given."""
        from .creation import tensor
        return tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad)

    def new_zeros(self, *size, dtype=None, requires_grad=False):
        """A tensor of zeros of ``size``, with this tensor's dtype unless ``dtype`` is given.

        Examples
        --------
        >>> gt.tensor([1], dtype=gt.int32).new_zeros(2).dtype
        gradstack.int32
        """
        from .creation import zeros
        return zeros(*size, dtype=dtype or self.dtype, requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, requires_grad=False):
        """A tensor of ones of ``size``, with this tensor's dtype unless ``dtype`` is given."""
        from .creation import ones
        return ones(*size, dtype=dtype or self.dtype, requires_grad=requires_grad)

    def new_full(self, size, fill_value, dtype=None, requires_grad=False):
        """A tensor of ``size`` filled with ``fill_value``, with this tensor's dtype by default."""
        from .creation import full
        return full(size, fill_value, dtype=dtype or self.dtype, requires_grad=requires_grad)

    def new_empty(self, *size, dtype=None, requires_grad=False):
        """An uninitialised tensor of ``size``, with this tensor's dtype by default."""
        from .creation import empty
        return empty(*size, dtype=dtype or self.dtype, requires_grad=requires_grad)


# ----------------------------------------------------------------------------------------
# Making tensors
#
# Note [One constructor for the class chain]
# Tensor adds no field to TensorBase (the method groups add none either), so a Tensor is
# made by TensorBase's tp_new and freed by TensorBase's tp_dealloc.  Cython would give each
# class of the chain its own tp_new and tp_dealloc, each calling its base's (with a GC
# untrack/track around the call): 4 more calls per tensor made and freed, ~1.5% of a
# small op.  So Tensor's tp_new and tp_dealloc slots are TensorBase's (checked: same
# instance size), and wrap() calls that tp_new directly (Cython's Tensor.__new__(Tensor)
# would call its own generated function, the first link of the chain).

_register_tensor_class(Tensor)


cdef PyTypeObject* _TENSOR = <PyTypeObject*>Tensor
cdef tuple _NO_ARGS = ()


cdef int _share_base_slots() except -1:
    cdef PyTypeObject* base = <PyTypeObject*>TensorBase
    if _TENSOR.tp_basicsize != base.tp_basicsize:
        raise SystemError("Tensor must not add C fields to TensorBase")
    _TENSOR.tp_new = base.tp_new
    _TENSOR.tp_dealloc = base.tp_dealloc
    PyType_Modified(_TENSOR)
    return 0


_share_base_slots()


cdef inline Tensor _new_tensor():
    return <Tensor>_TENSOR.tp_new(Tensor, <PyObject*>_NO_ARGS, NULL)


cdef Tensor wrap(cnp.ndarray data):
    """A new leaf tensor over ``data`` (no copy)."""
    cdef Tensor t = _new_tensor()
    t._data = data
    return t


cdef Tensor wrap_view(cnp.ndarray data, TensorBase base):
    """A new tensor over ``data``, a view of ``base``'s storage: shares its version counter."""
    cdef Tensor t = _new_tensor()
    t._data = data
    t._vc = base.version_counter()
    t._view_base = base._view_base if base._view_base is not None else base
    t._is_inference = base._is_inference
    return t


cdef Tensor expect_tensor(object x, str name):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be a Tensor, not {type(x).__name__}")
    return <Tensor>x


# Python-level access for kernels written in Python: public as gradstack_tensor.extension's
# wrap, wrap_view, wrap_detached and data_of

def _wrap(data):
    """wrap(array): a new leaf tensor over the numpy ``array`` (no copy), of its dtype.

    numpy scalars (what numpy reductions return) become 0-d tensors.
    """
    return wrap(as_ndarray(data))


def _wrap_view(data, TensorBase base not None):
    """wrap_view(array, base): a new tensor over ``array``, which must alias ``base``'s
    storage: a view of ``base`` that shares its version counter."""
    return wrap_view(as_ndarray(data), base)


def _wrap_detached(TensorBase src not None):
    """wrap_detached(src): a tensor over ``src``'s storage that shares its version counter,
    but is neither a view of it nor in the graph (what ``detach()`` returns)."""
    cdef Tensor t = wrap(src._data)
    t._vc = src.version_counter()
    t._is_inference = src._is_inference
    return t


cdef object _to_meta(Tensor t, object dtype):
    """``t.to('meta')``: a meta tensor of ``t``'s shape (and dtype, unless ``dtype`` is
    given), a leaf that requires grad if ``t`` does (Note [Meta tensors carry no data])."""
    from .meta import meta_array
    d = _dt.as_dtype(dtype) if dtype is not None else dtype_of_array(t._data)
    if _is_meta(t) and d is dtype_of_array(t._data):
        return t
    cdef Tensor m = wrap(meta_array((<object>t._data).shape, d.numpy))
    if t._requires_grad:
        m._set_requires_grad(True)
    return m


def _data(TensorBase t not None):
    """data_of(tensor): the numpy array behind ``tensor`` (shares memory).

    Writes into it bypass the version counter: bump it with ``tensor._bump_version()``.
    """
    return t._data

_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
               "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor",
               "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor"}


cdef object _convert(TensorBase t, object dtype, bint copy):
    """``t`` itself when it already has ``dtype`` (as torch's ``to``), else a converted copy."""
    if not copy and dtype_of_array(t._data) is dtype:
        return t
    return dispatch(OP_TO_DTYPE, (t, dtype, copy))


def _scatter_src(src, value):
    """scatter's ``src`` (a tensor or a number) or its ``value=`` keyword."""
    if src is None and value is None:
        raise TypeError("scatter() missing required argument 'src' (or 'value')")
    if src is not None and value is not None:
        raise TypeError("scatter() got both 'src' and 'value'")
    return src if src is not None else value
