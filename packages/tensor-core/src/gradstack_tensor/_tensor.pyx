# cython: language_level=3, embedsignature=True, embedsignature.format=clinic
"""``Tensor``: the last link of the Tensor's class chain, with its attributes and conversions.

The class chain (``_tensor_base.pyx`` explains it)::

    TensorBase <- ElementwiseMethods <- ReductionMethods <- ShapeMethods <- CompositeMethods
    <- Tensor

This module adds what is about the tensor itself rather than an op on it: ``shape``,
``dtype``, ``grad`` and the other attributes, ``item``/``tolist``/``numpy``, dtype
conversion (``to``, ``float`` ...), ``new_*`` factories, copying, printing, and the
autograd methods (``backward``, ``register_hook`` ...), which delegate to the autograd
layer when it is installed.  The methods written as compositions of others are
``CompositeMethods``' (``_tensor_composites.pyx``).  At import it registers ``Tensor`` as
the class the kernels make (``_tensor_base.wrap``).

The examples assume ``import gradstack_tensor as gt``.
"""
cimport cython
cimport numpy as cnp

import numpy as np

from . import dtypes as _dt
from ._dispatch cimport Op, dispatch
from . import _op_table  # no-cython-lint: imported to declare the ops looked up below
from ._dispatch import OPS
from ._above import ABOVE  # Note [Methods bound from above]
from ._loops cimport is_float_num
from ._shapes cimport shape_from_args
from ._shapes import Size, _normalize_dim, _size_of_scalar_dim
from ._tensor_base cimport (
    TensorBase, as_ndarray, autograd_extension, dtype_of_array, expect_other, need_autograd,
    new_empty_tensor, shape_of,
)
from ._tensor_base import _register_tensor_class
from ._tensor_composites cimport CompositeMethods
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
    no_data_error = ABOVE.no_data_error
    return no_data_error(what)

from cpython.object cimport PyObject, PyTypeObject


cdef extern from "Python.h":
    void PyType_Modified(PyTypeObject*)

cdef Op OP_DETACH = OPS["detach"]
cdef Op OP_CLONE = OPS["clone"]
cdef Op OP_TO_DTYPE = OPS["to_dtype"]


@cython.binding(False)      # Note [Cython methods check self] in _tensor_base.pyx
cdef class Tensor(CompositeMethods):
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
        """The tensor whose storage this view aliases, or None if it is not a view (a
        lazy conj/neg view's is the tensor it mirrors, as torch's)."""
        if self._view_base is None and _lazy_kind(self) is not None:
            return self._gs_lazy_view.base
        return self._view_base

    def _is_view(self):
        """Whether this tensor is a view of another tensor's storage."""
        return self._view_base is not None or _lazy_kind(self) is not None

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

    # Note [The other devices' and layouts' flags]: torch's tensors answer False for the
    # devices, layouts and kinds gradstack has none of; programs test them before choosing
    # a path (pytorch/examples' DCGAN: ``if (input.is_cuda or input.is_xpu) and ...``)

    @property
    def is_xpu(self):
        """Always False (Note [The other devices' and layouts' flags])."""
        return False

    @property
    def is_mps(self):
        """Always False (Note [The other devices' and layouts' flags])."""
        return False

    @property
    def is_xla(self):
        """Always False (Note [The other devices' and layouts' flags])."""
        return False

    @property
    def is_ipu(self):
        """Always False (Note [The other devices' and layouts' flags])."""
        return False

    @property
    def is_maia(self):
        """Always False (Note [The other devices' and layouts' flags])."""
        return False

    @property
    def is_mtia(self):
        """Always False (Note [The other devices' and layouts' flags])."""
        return False

    @property
    def is_vulkan(self):
        """Always False (Note [The other devices' and layouts' flags])."""
        return False

    @property
    def is_mkldnn(self):
        """Always False (Note [The other devices' and layouts' flags])."""
        return False

    @property
    def is_nested(self):
        """Always False (Note [The other devices' and layouts' flags])."""
        return False

    @property
    def is_quantized(self):
        """Always False (Note [The other devices' and layouts' flags])."""
        return False

    @property
    def is_sparse(self):
        """Always False (Note [The other devices' and layouts' flags])."""
        return False

    @property
    def is_sparse_csr(self):
        """Always False (Note [The other devices' and layouts' flags])."""
        return False

    @property
    def layout(self):
        """Always :data:`strided` (gradstack has no sparse layouts)."""
        from .layouts import strided
        return strided

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
        if _is_meta(self):  # Note [A meta tensor's strides] (meta.py)
            strides = (<object>self._data).el_strides
        else:
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
        if _is_meta(self):  # Note [A meta tensor's strides] (meta.py)
            return (<object>self._data).el_offset
        if self._view_base is None:
            return 0
        base = self._view_base._data
        return (self._data.__array_interface__["data"][0]
                - base.__array_interface__["data"][0]) // self._data.itemsize

    def data_ptr(self):
        """The address of the first element."""
        return self._data.__array_interface__["data"][0]

    def is_contiguous(self, *, memory_format=None):
        """Whether the elements are laid out in row-major order without gaps.

        Examples
        --------
        >>> gt.zeros(2, 3).is_contiguous(), gt.zeros(2, 3).t().is_contiguous()
        (True, False)

        With ``memory_format=channels_last`` (or ``_3d``): whether they are laid out
        channels last (``gradstack_tensor.layouts``).
        """
        if memory_format is not None:
            from . import layouts
            layouts.check_memory_format(memory_format, "is_contiguous")
            if memory_format in (layouts.channels_last, layouts.channels_last_3d):
                return layouts.is_laid_out(self.shape, self.stride(), memory_format)
        if _is_meta(self):
            return (<object>self._data).is_contiguous_layout()
        return bool(self._data.flags.c_contiguous)

    def is_floating_point(self):
        """Whether the dtype is a floating-point one (float16, bfloat16, float32, float64)."""
        cdef int num = cnp.PyArray_TYPE(self._data)
        if num >= 256:      # NPY_USERDEF: ml_dtypes' bfloat16 is a numpy user type
            return dtype_of_array(self._data).is_floating_point
        return is_float_num(num)

    def is_complex(self):
        """Whether the dtype is complex (complex64, complex128)."""
        return bool(cnp.PyArray_ISCOMPLEX(self._data))

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
        if type(requires_grad) is not bool and not isinstance(requires_grad, np.bool_):
            raise TypeError(
                "requires_grad_(): argument 'requires_grad' (position 1) must be bool, not "
                f"{type(requires_grad).__name__}"
            )
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
                    f"{list(shape_of((<TensorBase>value)._data))} vs tensor shape "
                    f"{list(shape_of(self._data))}"
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
        if _lazy_kind(self) is not None:
            raise _lazy_numpy_error(self)
        return self._data

    def __array__(self, dtype=None, copy=None):
        if _is_meta(self):
            raise _no_data("numpy.asarray()")
        if _lazy_kind(self) is not None:
            raise _lazy_numpy_error(self)
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
        _check_one_element(self)
        return float(self.item())

    def __int__(self):
        _check_one_element(self)
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
        default = (d is _dt.get_default_dtype() or d is _dt.int64 or d is _dt.bool_
                   or d is _dt.get_default_dtype().to_complex())
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
        memory_format = kwargs.pop("memory_format", None)
        if kwargs:
            raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
        if memory_format is not None:
            from . import layouts
            layouts.check_memory_format(memory_format, "to")
            if memory_format is not layouts.preserve_format:
                # the conversion, then the layout asked for (self when both hold)
                return self.to(*args, dtype=dtype, device=device, copy=copy).contiguous(
                    memory_format=memory_format
                )
        for a in args:
            if a is None:  # (an argument left unchanged: ``to(device, None)``)
                continue
            if isinstance(a, TensorBase):
                dtype = a.dtype
            elif isinstance(a, _dt.dtype) or (isinstance(a, type) and a in (float, int, bool)):
                dtype = a
            elif device is not None:  # (torch's to() takes one device)
                raise TypeError(
                    "to() received an invalid combination of arguments: two devices "
                    f"({device!r}, {a!r}); pass to(device, dtype)"
                )
            else:
                device = a
        if device is not None and _device_type(device).type == "meta":
            return _to_meta(self, dtype)
        _check_device(device)
        if _is_meta(self) and device is None and dtype is not None:
            return _to_meta(self, dtype)  # a cast on the meta device stays there
        if _is_meta(self) and (device is not None or copy):
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
        if type(non_blocking) is not bool:
            raise TypeError(
                "type(): argument 'non_blocking' (position 2) must be bool, not "
                f"{type(non_blocking).__name__}"
            )
        if dtype is None:
            return f"gradstack.{_TYPE_NAMES[self.dtype.name]}"
        if isinstance(dtype, (str, type)) and dtype not in (float, int, bool):
            legacy_type = ABOVE.legacy_type

            dtype = legacy_type(dtype)
        return self.to(dtype)

    # -- small methods torch programs call (casts, flags) -------------------------------

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
        """Whether this tensor is a lazy conjugate view (``conj()`` of a complex tensor,
        and its views; Note [The conjugate and negative bits] in ``lazy_views.py``)."""
        return _lazy_kind(self) == "conj"

    def is_neg(self):
        """Whether this tensor is a lazy negative view (``imag`` of a conjugate view)."""
        return _lazy_kind(self) == "neg"

    def resolve_conj(self):
        """A copy with the conjugate bit resolved (``clone()``), or ``self`` without it.

        Examples
        --------
        >>> c = gt.tensor([1 + 2j]).conj()
        >>> c.is_conj(), c.resolve_conj().is_conj(), c.resolve_conj().tolist()
        (True, False, [(1-2j)])
        """
        if _lazy_kind(self) == "conj":
            return dispatch(<Op>OPS["clone"], (self,))
        return self

    def resolve_neg(self):
        """A copy with the negative bit resolved (``clone()``), or ``self`` without it."""
        if _lazy_kind(self) == "neg":
            return dispatch(<Op>OPS["clone"], (self,))
        return self

    def conj(self):
        """The complex conjugate, a lazy view (``is_conj()``: writes into it reach ``self``,
        conjugated); ``self`` if real (Note [The conjugate and negative bits]).

        Examples
        --------
        >>> z = gt.tensor([1 + 2j])
        >>> c = z.conj()
        >>> c.tolist(), c.is_conj()
        ([(1-2j)], True)
        >>> c[0] = 3 + 3j
        >>> z.tolist()
        [(3-3j)]
        """
        if cnp.PyArray_ISCOMPLEX(self._data):
            return dispatch(<Op>OPS["conj"], (self,))
        return self

    def conj_physical(self):
        """The complex conjugate, always computed (a copy of a real tensor)."""
        return dispatch(<Op>OPS["conj_physical"], (self,))

    def conj_physical_(self):
        """Conjugate in place (nothing to do for a real tensor)."""
        if cnp.PyArray_ISCOMPLEX(self._data):
            self.copy_(self.conj_physical())
        return self

    @property
    def real(self):
        """The real part: a view of a complex tensor, ``self`` if real."""
        if cnp.PyArray_ISCOMPLEX(self._data):
            real = ABOVE.real
            return real(self)
        return self

    def cfloat(self):
        """``self.to(complex64)``."""
        return self.to(_dt.complex64)

    def cdouble(self):
        """``self.to(complex128)``."""
        return self.to(_dt.complex128)

    @property
    def imag(self):
        """The imaginary part of a complex tensor, a view (an error if real)."""
        imag = ABOVE.imag
        return imag(self)

    def is_pinned(self, device=None):
        """False: no page-locked memory without an accelerator (``device``, when given, is
        a device, its string or its index, as torch's)."""
        if device is not None:
            if isinstance(device, str):
                _device_type(device)  # (torch's RuntimeError for an unknown device string)
            elif type(device) is bool or not isinstance(device, (int, _device_type)):
                raise TypeError(
                    "is_pinned(): argument 'device' (position 1) must be torch.device, not "
                    f"{type(device).__name__}"
                )
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
        # (objects: an ndarray's .shape is a C pointer)
        cdef object a = (<TensorBase>self)._data, b = (<TensorBase>other)._data
        return a.shape == b.shape and bool(np.array_equal(a, b))

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

    def bfloat16(self):
        """``to(bfloat16)`` (Note [bfloat16 is stored by ml_dtypes and computed in float32]).

        Examples
        --------
        >>> gt.tensor([1.0, 1.0 / 3]).bfloat16().tolist()
        [1.0, 0.333984375]
        """
        return _convert(self, _dt.as_dtype(_dt.bfloat16), False)

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
        if type(non_blocking) is not bool:
            raise TypeError(
                "cuda(): argument 'non_blocking' (position 2) must be bool, not "
                f"{type(non_blocking).__name__}"
            )
        if device is not None and not isinstance(device, (str, int, _device_type)):
            raise TypeError(
                f"cuda(): argument 'device' (position 1) must be torch.device, not "
                f"{type(device).__name__}"
            )
        _check_device("cuda")


# ----------------------------------------------------------------------------------------
# Making tensors
#
# Note [One constructor for the class chain]
# Tensor adds no field to TensorBase (the method groups add none either), so a Tensor is
# made by TensorBase's tp_new and freed by TensorBase's tp_dealloc.  Cython would give each
# class of the chain its own tp_new and tp_dealloc, each calling its base's (with a GC
# untrack/track around the call): a call more per link for each tensor made and freed
# (~1.5% of a small op when the chain had four links).  So Tensor's tp_new and tp_dealloc
# slots are TensorBase's (checked: same instance size), and wrap() calls that tp_new
# directly (Cython's Tensor.__new__(Tensor) would call its own generated function, the
# first link of the chain).

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
    if t._vc.lazy_views is not None:
        _inherit_lazy(t, base)
    return t


# Note [The conjugate and negative bits] is in lazy_views.py: a lazy view's record is in
# its __dict__, and the views of a lazy view (which alias its mirror) share it
cdef inline object _lazy_kind(TensorBase t):
    """"conj", "neg" or None (no lazy view of this storage: one C check)."""
    if t._vc is None or t._vc.lazy_views is None:
        return None
    rec = getattr(t, "_gs_lazy_view", None)
    return None if rec is None else rec.kind


cdef void _inherit_lazy(TensorBase t, TensorBase base) except *:
    rec = getattr(base, "_gs_lazy_view", None)
    if rec is not None:
        t._gs_lazy_view = rec


cdef object _lazy_numpy_error(TensorBase t):
    if _lazy_kind(t) == "conj":
        return RuntimeError(
            "Can't call numpy() on Tensor that has conjugate bit set. Use "
            "tensor.resolve_conj().numpy() instead."
        )
    return RuntimeError(
        "Can't call numpy() on Tensor that has negative bit set. Use "
        "tensor.resolve_neg().numpy() instead."
    )


def _lazy_view_kind(TensorBase t not None):
    """"conj", "neg" or None: what lazy view ``t`` is (for lazy_views.py and complex_ops)."""
    return _lazy_kind(t)


def _share_version(TensorBase t not None, TensorBase base not None):
    """Give the fresh tensor ``t`` ``base``'s version counter (returned): the two alias one
    storage without ``t`` being a view of ``base`` for autograd (a lazy view)."""
    t._vc = base.version_counter()
    t._is_inference = base._is_inference
    return t._vc


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
    if t._vc.lazy_views is not None:
        _inherit_lazy(t, src)
    return t


cdef object _to_meta(Tensor t, object dtype):
    """``t.to('meta')``: a meta tensor of ``t``'s shape (and dtype, unless ``dtype`` is
    given), a leaf that requires grad if ``t`` does (Note [Meta tensors carry no data])."""
    meta_array = ABOVE.meta_array
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
               "bfloat16": "BFloat16Tensor",
               "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor",
               "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor",
               "uint16": "UInt16Tensor", "uint32": "UInt32Tensor", "uint64": "UInt64Tensor"}


cdef object _convert(TensorBase t, object dtype, bint copy):
    """``t`` itself when it already has ``dtype`` (as torch's ``to``), else a converted copy."""
    if not copy and dtype_of_array(t._data) is dtype:
        return t
    return dispatch(OP_TO_DTYPE, (t, dtype, copy))


cdef inline _check_one_element(TensorBase t):
    """torch's ValueError for ``float(t)``/``int(t)`` of a tensor that has not exactly one
    element (``t.item()`` raises a RuntimeError instead, as torch's)."""
    if not _is_meta(t) and cnp.PyArray_SIZE(t._data) != 1:
        raise ValueError(
            "only one element tensors can be converted to Python scalars "
            f"(this one has {cnp.PyArray_SIZE(t._data)}: index it or reduce it first)"
        )
