# cython: language_level=3, embedsignature=True, embedsignature.format=clinic
"""The Tensor's shape methods: views, reshaping, joining and indexing.

``ShapeMethods`` is one link of the Tensor's class chain (see ``_tensor_base.pyx``).
Views (``view``, ``t``, ``transpose``, ``expand``, ``narrow``, ``select``, basic
indexing ...) share storage and the version counter with ``self``: an in-place write
through one is seen by the other.  Sizes may be given as separate ints or one tuple
(``view(2, 3)`` or ``view((2, 3))``).

The examples assume ``import gradstack_tensor as gt``.
"""
cimport cython
cimport numpy as cnp

from . import dtypes as _dt
from ._dispatch cimport Op, dispatch
from . import _op_table  # no-cython-lint: imported to declare the ops looked up below
from ._dispatch import OPS
from ._above import ABOVE  # Note [Methods bound from above]
from ._shapes cimport dim_arg, shape_from_args
from ._shapes import _normalize_dim
from ._tensor_base cimport (
    TensorBase, autograd_extension, expect_other, make_view, new_empty_tensor, shape_of,
)
from ._tensor_reductions cimport ReductionMethods
from ._tensor_reductions import NO_DIM

import functools
import operator
import warnings

import numpy as np

cdef Op OP_VIEW = OPS["view"]
cdef Op OP_RESHAPE = OPS["reshape"]
cdef Op OP_TRANSPOSE = OPS["transpose"]
cdef Op OP_PERMUTE = OPS["permute"]
cdef Op OP_T = OPS["t"]
cdef Op OP_SQUEEZE = OPS["squeeze"]
cdef Op OP_UNSQUEEZE = OPS["unsqueeze"]
cdef Op OP_EXPAND = OPS["expand"]
cdef Op OP_FLATTEN = OPS["flatten"]
cdef Op OP_NARROW = OPS["narrow"]
cdef Op OP_SELECT = OPS["select"]
cdef Op OP_DIAGONAL = OPS["diagonal"]
cdef Op OP_UNFOLD = OPS["unfold"]
cdef Op OP_SPLIT = OPS["split"]
cdef Op OP_CHUNK = OPS["chunk"]
cdef Op OP_UNBIND = OPS["unbind"]
cdef Op OP_CONTIGUOUS = OPS["contiguous"]
cdef Op OP_CLONE = OPS["clone"]
cdef Op OP_REPEAT = OPS["repeat"]
cdef Op OP_FLIP = OPS["flip"]
cdef Op OP_TRIL = OPS["tril"]
cdef Op OP_TRIU = OPS["triu"]
cdef Op OP_INDEX_SELECT = OPS["index_select"]
cdef Op OP_GATHER = OPS["gather"]
cdef Op OP_DIAG = OPS["diag"]
cdef Op OP_TRACE = OPS["trace"]
cdef Op OP_SORT = OPS["sort"]
cdef Op OP_TOPK = OPS["topk"]
cdef Op OP_GETITEM = OPS["getitem"]
cdef Op OP_SETITEM_ = OPS["setitem_"]
cdef Op OP_TO_DTYPE = OPS["to_dtype"]


# Note [In-place view ops change the tensor's metadata]
# ``unsqueeze_``, ``squeeze_``, ``t_``, ``transpose_`` (``swapaxes_``, ``swapdims_``) and
# ``resize_`` give ``self`` a new shape and strides over the same storage: the tensor's
# array is replaced by the view's, and the version counter moves (torch's do too).  torch
# records a node for a non-leaf that requires grad (``TBackward1`` ...); gradstack does
# not yet, so under grad mode a tensor that requires grad is refused with a clear error
# (a leaf with torch's own message) rather than given a silently wrong history.


cdef _check_metadata_inplace(TensorBase self, str name):
    ext = autograd_extension()
    if not self._requires_grad or ext is None or not ext.is_grad_enabled():
        return
    if self._grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    raise NotImplementedError(
        f"Tensor.{name} on a tensor that requires grad (with grad mode on) is not supported "
        f"by gradstack: use the out-of-place {name[:-1]}(), which returns a view"
    )


cdef object _set_metadata(TensorBase self, object view, str name):
    self._data = (<TensorBase>view)._data
    self.bump_version(name)
    return self


cdef object _storage_root(object a):
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


cdef cnp.ndarray _resized(cnp.ndarray a, tuple shape):
    """A C-contiguous array of ``shape`` over ``a``'s storage from ``a``'s first element,
    or over a new block holding that storage's elements when it is too small."""
    root = _storage_root(a)
    cdef Py_ssize_t itemsize = a.itemsize
    cdef Py_ssize_t n = 1
    for d in shape:
        n *= d
    offset = 0
    if a.size and root.size:
        offset = a.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    available = (root.nbytes - offset) // itemsize if root.size else 0
    if n <= available and root.flags.c_contiguous and root.flags.writeable:
        return np.ndarray(shape, dtype=a.dtype, buffer=root, offset=offset)
    grown = np.empty(n, dtype=a.dtype)  # (torch leaves the new elements uninitialised)
    if available and root.flags.c_contiguous:
        old = np.ndarray((min(available, n),), dtype=a.dtype, buffer=root, offset=offset)
        grown[:old.shape[0]] = old
    elif a.size:
        flat = a.reshape(-1)
        grown[:min(flat.shape[0], n)] = flat[:n]
    return grown.reshape(shape)


cdef cnp.ndarray _restrided(cnp.ndarray a, tuple shape, order):
    """``_resized`` to ``shape`` laid out in ``memory_format``: row-major (``order`` None)
    or in the dims' ``order`` (channels last), over the storage from ``a``'s first element.

    Note [resize_ with a memory format restrides]: torch's ``resize_(size,
    memory_format=f)`` resizes the storage, then gives the tensor ``f``'s dense strides
    whatever its strides were (``empty_tensor_restride``): the elements of the storage are
    read again in the new layout, as they are when the size changes."""
    cdef Py_ssize_t n = 1
    for d in shape:
        n *= d
    flat = _resized(a, (n,))
    if order is None:
        return flat.reshape(shape)
    back = [0] * len(order)
    for i, d in enumerate(order):
        back[d] = i
    return flat.reshape(tuple(shape[d] for d in order)).transpose(back)


@cython.binding(False)      # Note [Cython methods check self] in _tensor_base.pyx
cdef class ShapeMethods(ReductionMethods):
    """The shape, view and indexing methods of :class:`gradstack_tensor.Tensor`."""

    # -- views and reshaping --------------------------------------------------------------

    def view(self, *shape):
        """A view with another shape (one size may be -1); ``view(dtype)`` reinterprets the
        elements as another dtype of the same size.

        Examples
        --------
        >>> t = gt.arange(6.)
        >>> v = t.view(2, -1)
        >>> v.shape, v._base is t
        (gradstack.Size([2, 3]), True)
        """
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer, tuple, list)):
            return dispatch(OP_TO_DTYPE, (self, _dt.as_dtype(shape[0]), False))  # view(dtype)
        return dispatch(OP_VIEW, (self, shape_from_args(shape, "view")))

    def as_subclass(self, cls):
        """This tensor as an instance of ``cls`` (a subclass of Tensor): an alias sharing its
        storage and version counter, attached to the graph (``AliasBackward0``), as torch's.

        Examples
        --------
        >>> class Marked(gt.Tensor):
        ...     pass
        >>> m = gt.tensor([1.0, 2.0]).as_subclass(Marked)
        >>> type(m).__name__, m.tolist()
        ('Marked', [1.0, 2.0])
        """
        if not isinstance(cls, type):
            raise TypeError(f"cls must be a type (got {type(cls).__name__})")
        if not issubclass(cls, TensorBase):  # (Tensor is its one public subclass)
            raise TypeError(
                "Creating a Tensor subclass from a class that does not inherit from Tensor is "
                "not possible. Make sure your class inherits from Tensor."
            )
        cdef TensorBase a = <TensorBase>dispatch(OPS["alias"], (self,))
        cdef TensorBase t = new_empty_tensor(cls)   # Note [as_subclass moves an alias]
        t._data = a._data
        t._vc = a.version_counter()
        t._view_base = a._view_base
        t._requires_grad = a._requires_grad
        t._grad = a._grad
        t._grad_fn = a._grad_fn
        t._output_nr = a._output_nr
        t._autograd_meta = a._autograd_meta
        t._fw_grad = a._fw_grad
        t._is_inference = a._is_inference
        return t

    # Note [as_subclass moves an alias]
    # torch's as_subclass wraps ``self.alias()`` in a ``cls`` object.  A cdef class's
    # ``__class__`` cannot be reassigned to a Python subclass, so the alias op's result (a
    # view recorded as AliasBackward0) hands its fields to a fresh ``cls`` instance, which
    # takes its place; the alias object itself is dropped.

    def view_as(self, other):
        """``view(other.shape)``."""
        return dispatch(OP_VIEW, (self, shape_of(expect_other(other, "view_as")._data)))

    def reshape(self, *shape):
        """The elements with another shape: a view when the layout allows, else a copy.

        Examples
        --------
        >>> gt.arange(6).reshape(3, 2).tolist()
        [[0, 1], [2, 3], [4, 5]]
        """
        return dispatch(OP_RESHAPE, (self, shape_from_args(shape, "reshape")))

    def reshape_as(self, other):
        """``reshape(other.shape)``."""
        return dispatch(OP_RESHAPE, (self, shape_of(expect_other(other, "reshape_as")._data)))

    def transpose(self, dim0, dim1):
        """A view with dims ``dim0`` and ``dim1`` swapped.

        Examples
        --------
        >>> gt.zeros(2, 3, 4).transpose(0, 2).shape
        gradstack.Size([4, 3, 2])
        """
        return dispatch(OP_TRANSPOSE, (self, dim0, dim1))

    def swapaxes(self, axis0, axis1):
        """:meth:`transpose` under numpy's name (torch names its arguments ``axis0`` and
        ``axis1``)."""
        _normalize_dim(axis0, self._data.ndim, "axis0")
        _normalize_dim(axis1, self._data.ndim, "axis1")
        return dispatch(OP_TRANSPOSE, (self, axis0, axis1))

    def permute(self, *dims):
        """A view with the dims in the order ``dims`` (separate ints or one tuple).

        Examples
        --------
        >>> gt.zeros(2, 3, 4).permute(2, 0, 1).shape
        gradstack.Size([4, 2, 3])
        """
        if not dims:
            raise TypeError('permute() missing 1 required positional arguments: "dims"')
        return dispatch(OP_PERMUTE, (self, shape_from_args(dims, "permute")))

    def movedim(self, source, destination):
        """``self`` with dims ``source`` moved to ``destination``; see
        :func:`gradstack_tensor.movedim`.

        >>> gt.zeros(2, 3, 4).movedim(0, -1).shape
        gradstack.Size([3, 4, 2])
        """
        movedim = ABOVE.movedim
        return movedim(self, source, destination)

    def moveaxis(self, source, destination):
        """Alias of :meth:`movedim` (numpy's name)."""
        movedim = ABOVE.movedim
        return movedim(self, source, destination)

    def t(self):
        """The transpose of a tensor of at most 2 dims (a view).

        Examples
        --------
        >>> gt.tensor([[1, 2, 3]]).t().tolist()
        [[1], [2], [3]]
        """
        return dispatch(OP_T, (self,))

    @property
    def T(self):
        """All dims reversed (the transpose for 2 dims), a view."""
        if self._data.ndim <= 2:
            return dispatch(OP_T, (self,))
        return dispatch(OP_PERMUTE, (self, tuple(range(self._data.ndim - 1, -1, -1))))

    @property
    def mT(self):
        """The last two dims swapped (a batch of matrices transposed), a view.

        As torch: a 0-d tensor is returned as it is (with torch's deprecation warning), a
        1-d tensor is a RuntimeError.

        Examples
        --------
        >>> gt.zeros(5, 2, 3).mT.shape
        gradstack.Size([5, 3, 2])
        """
        cdef int nd = self._data.ndim
        if nd == 0:
            # a C method has no frame of its own: stacklevel 1 is the caller's line
            warnings.warn(
                "Tensor.mT is deprecated on 0-D tensors. This function is the identity in "
                "these cases.", UserWarning, stacklevel=1
            )
            return self
        if nd == 1:
            raise RuntimeError(
                "tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor."
            )
        return dispatch(OP_TRANSPOSE, (self, -2, -1))

    @property
    def mH(self):
        """The conjugate transpose of a batch of matrices (the last two dims swapped), a
        view; for real dtypes it is :attr:`mT`, with torch's errors (``mH``'s words).

        Examples
        --------
        >>> gt.zeros(5, 2, 3).mH.shape
        gradstack.Size([5, 3, 2])
        """
        return _conj_transpose(self, "tensor.mH")

    def adjoint(self):
        """The conjugate transpose of a batch of matrices, as :attr:`mH` (a view).

        Examples
        --------
        >>> gt.tensor([[1.0, 2.0]]).adjoint().tolist()
        [[1.0], [2.0]]
        """
        return _conj_transpose(self, "tensor.adjoint()")

    @property
    def H(self):
        """The conjugate transpose of a matrix (2-d; a view); for real dtypes it is
        :attr:`T`.  torch's errors for other dims (``mH`` for batches of matrices).

        Examples
        --------
        >>> gt.tensor([[1.0, 2.0]]).H.tolist()
        [[1.0], [2.0]]
        """
        cdef int nd = self._data.ndim
        if nd == 0:
            warnings.warn(
                "Tensor.H is deprecated on 0-D tensors. Consider using x.conj().",
                UserWarning, stacklevel=1,
            )
            return self
        if nd != 2:
            extra = (
                ". For batches of matrices, consider using tensor.mH" if nd > 2 else ""
            )
            raise RuntimeError(
                f"tensor.H is only supported on matrices (2-D tensors). Got {nd}-D tensor"
                f"{extra}" + ("" if extra else ".")
            )
        out = dispatch(OP_TRANSPOSE, (self, -2, -1))
        return out.conj() if out.is_complex() else out

    def squeeze(self, dim=NO_DIM, *, axis=None):
        """A view without the dims of size 1 (only ``dim`` when given; ``axis`` is torch's
        alias of ``dim``).

        Examples
        --------
        >>> gt.zeros(1, 2, 1).squeeze().shape, gt.zeros(1, 2, 1).squeeze(0).shape
        (gradstack.Size([2]), gradstack.Size([2, 1]))
        """
        if axis is not None:
            if dim is not NO_DIM:
                raise TypeError("squeeze() received both 'dim' and its alias 'axis'; pass one "
                                "of them")
            dim = axis
        if dim is NO_DIM:
            dim = None
        elif dim is None:  # torch has squeeze() and squeeze(dim), no squeeze(None)
            raise TypeError("squeeze(): argument 'dim' must be int or tuple of ints, not NoneType")
        return dispatch(OP_SQUEEZE, (self, dim_arg(dim)))

    def unsqueeze(self, dim):
        """A view with a new dim of size 1 at ``dim``.

        Examples
        --------
        >>> gt.zeros(3).unsqueeze(0).shape
        gradstack.Size([1, 3])
        """
        return dispatch(OP_UNSQUEEZE, (self, dim))

    def unsqueeze_(self, dim):
        """In place :meth:`unsqueeze`: ``self`` gets the new dim (Note [In-place view ops
        change the tensor's metadata]).

        Examples
        --------
        >>> x = gt.zeros(3)
        >>> x.unsqueeze_(0).shape
        gradstack.Size([1, 3])
        """
        _check_metadata_inplace(self, "unsqueeze_")
        return _set_metadata(self, self.unsqueeze(dim), "unsqueeze_")

    def squeeze_(self, dim=NO_DIM):
        """In place :meth:`squeeze`.

        Examples
        --------
        >>> gt.zeros(1, 3, 1).squeeze_().shape
        gradstack.Size([3])
        """
        _check_metadata_inplace(self, "squeeze_")
        return _set_metadata(self, self.squeeze(dim), "squeeze_")

    def t_(self):
        """In place :meth:`t`.

        Examples
        --------
        >>> gt.zeros(2, 3).t_().shape
        gradstack.Size([3, 2])
        """
        _check_metadata_inplace(self, "t_")
        return _set_metadata(self, self.t(), "t_")

    def transpose_(self, dim0, dim1):
        """In place :meth:`transpose`.

        Examples
        --------
        >>> gt.zeros(2, 3, 4).transpose_(0, 2).shape
        gradstack.Size([4, 3, 2])
        """
        _check_metadata_inplace(self, "transpose_")
        return _set_metadata(self, self.transpose(dim0, dim1), "transpose_")

    def swapaxes_(self, axis0, axis1):
        """In place :meth:`swapaxes`."""
        _normalize_dim(axis0, self._data.ndim, "axis0")
        _normalize_dim(axis1, self._data.ndim, "axis1")
        return self.transpose_(axis0, axis1)
    swapdims_ = transpose_

    def resize_(self, *sizes, memory_format=None):
        """Give ``self`` the shape ``sizes``, C-contiguous over its storage from its first
        element; a larger size moves the storage to a new block holding the old elements
        first, the rest uninitialised (as torch's).  A tensor that requires grad is refused,
        as torch's.  Views of the old storage keep it when it moves (torch's views follow
        the storage).

        Examples
        --------
        >>> x = gt.tensor([[1, 2, 3], [4, 5, 6]])
        >>> x.resize_(3, 2).tolist()
        [[1, 2], [3, 4], [5, 6]]
        >>> x.resize_(2).tolist()
        [1, 2]

        ``memory_format`` (``contiguous_format``, ``channels_last``, ``channels_last_3d``)
        gives the resized tensor that format's dense strides, over the same storage
        (``Note [resize_ with a memory format restrides]``).
        """
        shape = shape_from_args(sizes, "resize_")
        for d in shape:
            if d < 0:
                raise RuntimeError(
                    f"Trying to create tensor with negative dimension {d}: {list(shape)}"
                )
        order = None
        if memory_format is not None:
            from . import layouts
            layouts.check_memory_format(memory_format, "resize_")
            if memory_format is layouts.preserve_format:
                raise RuntimeError("Unsupported memory formatPreserve")
            order = layouts.channels_last_order(memory_format, len(shape), "resize_")
        if self._requires_grad:
            raise RuntimeError("cannot resize variables that require grad")
        if memory_format is None:
            if shape == shape_of(self._data):
                return self
            self._data = _resized(self._data, shape)
        else:
            self._data = _restrided(self._data, shape, order)
        self.bump_version("resize_")
        return self

    def as_strided(self, size, stride, storage_offset=None):
        """A view of ``self``'s storage with shape ``size``, element strides ``stride``,
        starting ``storage_offset`` elements into the storage (default: ``self``'s offset),
        with torch's bounds and argument checks.  Writes through it reach ``self``.  Not
        yet under autograd: a tensor that requires grad, with grad mode on, is refused
        (use indexing, ``unfold`` or ``expand``, which record their gradients).

        Examples
        --------
        >>> gt.arange(6.0).as_strided((2, 2), (1, 2)).tolist()
        [[0.0, 2.0], [1.0, 3.0]]
        """
        checker = ABOVE.checker
        checker("as_strided", "size size, size stride, int? storage_offset", 0)(
            size, stride, storage_offset)
        cdef TensorBase base = self._view_base if self._view_base is not None else self
        size = tuple(int(d) for d in size)
        stride = tuple(int(s) for s in stride)
        if len(size) != len(stride):
            raise RuntimeError("mismatch in length of strides and shape")
        if any(s < 0 for s in stride):
            raise RuntimeError(
                "as_strided: Negative strides are not supported at the moment, got strides: "
                f"{list(stride)}"
            )
        if any(d < 0 for d in size):
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {min(size)}: {list(size)}"
            )
        ext = autograd_extension()
        if self._requires_grad and ext is not None and ext.is_grad_enabled():
            raise NotImplementedError(
                "Tensor.as_strided on a tensor that requires grad (with grad mode on) is not "
                "supported by gradstack yet: use indexing, unfold or expand"
            )
        offset = self.storage_offset() if storage_offset is None else int(storage_offset)
        if offset < 0:
            raise RuntimeError(f"Tensor: invalid storage offset {offset}")
        if self.is_meta:
            # no storage to bound-check or view: the shape and strides (meta.py's Note
            # [A meta tensor's strides])
            return ABOVE.meta_tensor(size, self._data.dtype, stride, offset)
        root = _storage_root(base._data)
        item = self._data.itemsize
        base_start = base._data.__array_interface__["data"][0] if base._data.size else 0
        root_start = root.__array_interface__["data"][0] if root.size else 0
        base_offset = (base_start - root_start) // item if base._data.size else 0
        available = root.nbytes // item - base_offset
        needed = 0
        if all(d > 0 for d in size):
            needed = offset + 1 + sum((d - 1) * s for d, s in zip(size, stride))
        if needed * item > available * item or not root.flags.c_contiguous:
            if not root.flags.c_contiguous:
                raise RuntimeError("as_strided: the tensor's storage is not one block")
            raise RuntimeError(
                f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
                f"{offset}, and itemsize {item} requiring a storage size of {needed * item} "
                f"are out of bounds for storage of size {available * item}"
            )
        flat = np.ndarray((max(available, 0),), dtype=self._data.dtype, buffer=root,
                          offset=base_offset * item)
        view = np.lib.stride_tricks.as_strided(
            flat[offset:] if needed else flat[:0], size, tuple(s * item for s in stride)
        )
        if view.dtype != flat.dtype:    # (a numpy user dtype, bfloat16, comes back as void)
            view = view.view(flat.dtype)
        return make_view(view, base)

    def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None,
                          requires_grad=False, pin_memory=False):
        """An uninitialised tensor of ``size`` and ``stride``, of this tensor's dtype by
        default; see :func:`gradstack_tensor.empty_strided`."""
        empty_strided = ABOVE.empty_strided
        return empty_strided(size, stride, dtype=dtype or self.dtype,
                             requires_grad=requires_grad)

    def resize(self, *sizes):
        """torch's deprecated out-of-place resize: this tensor reshaped to ``sizes``, which
        must hold as many elements (autograd's ``Resize``), with torch's warning."""
        warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=1)
        if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
            sizes = tuple(sizes[0])
        return _autograd_resize(self, sizes)

    def resize_as(self, tensor):
        """torch's deprecated out-of-place ``resize_as``: :meth:`resize` to ``tensor``'s
        shape."""
        warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=1)
        if not isinstance(tensor, TensorBase):
            raise TypeError(
                f"resize_as(): argument 'tensor' must be Tensor, not {type(tensor).__name__}"
            )
        return _autograd_resize(self, tuple(tensor.shape))

    def as_strided_(self, size, stride, storage_offset=None):
        """In place, :meth:`as_strided`: this tensor becomes that view of its storage."""
        view = self.as_strided(size, stride, storage_offset)
        self._data = (<TensorBase>view)._data
        self.bump_version("as_strided_")
        return self

    def as_strided_scatter(self, src, size, stride, storage_offset=None):
        """A copy of this tensor with ``src`` written into its ``as_strided(size, stride,
        storage_offset)`` view."""
        if not isinstance(src, TensorBase):
            raise TypeError(
                f"as_strided_scatter(): argument 'src' must be Tensor, not {type(src).__name__}"
            )
        out = self.clone()
        out.as_strided(size, stride, storage_offset).copy_(src)
        return out

    def resize_as_(self, other, *, memory_format=None):
        """In place, ``self.resize_(other.shape)``.

        Examples
        --------
        >>> gt.zeros(4).resize_as_(gt.zeros(2, 2)).shape
        gradstack.Size([2, 2])
        """
        if not isinstance(other, TensorBase):  # (torch's name of the argument)
            raise TypeError(
                "resize_as_(): argument 'the_template' (position 1) must be Tensor, not "
                f"{type(other).__name__}"
            )
        return self.resize_(tuple(shape_of((<TensorBase>other)._data)),
                            memory_format=memory_format)

    def expand(self, *sizes, size=None):
        """A view broadcast to ``sizes`` (-1 keeps a dim); no data is copied.

        Examples
        --------
        >>> gt.tensor([[1], [2]]).expand(2, 3).tolist()
        [[1, 1, 1], [2, 2, 2]]
        """
        if size is not None:
            if sizes:
                raise TypeError("expand() got multiple values for argument 'size'")
            sizes = (size,)
        elif not sizes:
            # torch's: its one overload takes a size (``expand(())`` is the 0-d one)
            raise TypeError('expand() missing 1 required positional arguments: "size"')
        return dispatch(OP_EXPAND, (self, shape_from_args(sizes, "expand")))

    def expand_as(self, other):
        """``expand(other.shape)``."""
        return dispatch(OP_EXPAND, (self, shape_of(expect_other(other, "expand_as")._data)))

    def flatten(self, start_dim=0, end_dim=-1):
        """The dims ``start_dim`` to ``end_dim`` merged into one (a view when possible).

        As torch documents, when nothing is merged (``start_dim == end_dim``, or a 1-d
        tensor) the result is ``self`` itself, so autograd sees the same tensor; a 0-d tensor
        becomes a 1-d one.

        Examples
        --------
        >>> gt.zeros(2, 3, 4).flatten(1).shape
        gradstack.Size([2, 12])
        >>> t = gt.zeros(3)
        >>> t.flatten() is t
        True
        """
        cdef Py_ssize_t nd = self._data.ndim
        if nd > 0 and isinstance(start_dim, int) and isinstance(end_dim, int):
            s = _normalize_dim(start_dim, nd, "start_dim")
            e = _normalize_dim(end_dim, nd, "end_dim")
            if s > e:
                raise RuntimeError(
                    "flatten() has invalid args: start_dim cannot come after end_dim"
                )
            if s == e:
                return self
        return dispatch(OP_FLATTEN, (self, start_dim, end_dim))

    def ravel(self):
        """The elements as a 1-d tensor: ``contiguous().view(-1)``, as torch's (a view of
        ``self`` when it is contiguous, else of a contiguous copy, never of a strided
        ``self``: ``x[:, 0].ravel()`` does not see later writes to ``x``).

        Examples
        --------
        >>> x = gt.zeros(2, 2)
        >>> r = x[:, 0].ravel()
        >>> _ = x.fill_(1.0)
        >>> r.tolist()
        [0.0, 0.0]
        """
        return dispatch(OP_VIEW, (self.contiguous(), (-1,)))

    def narrow(self, dim, start, length):
        """The view of ``length`` elements from ``start`` along ``dim``."""
        return dispatch(OP_NARROW, (self, dim, start, length))

    def select(self, dim, index):
        """The view at ``index`` along ``dim``, which is removed."""
        if not isinstance(index, (int, np.integer, TensorBase)) or isinstance(index, bool):
            # torch's TypeError (numpy's IndexError about its own indices leaked)
            raise TypeError(
                f"select(): argument 'index' (position 2) must be int, not {type(index).__name__}"
            )
        return dispatch(OP_SELECT, (self, dim, index))

    def diagonal(self, offset=0, dim1=0, dim2=1):
        """The view of the diagonal ``offset`` above the main one (below it if negative) of
        the matrices spanned by ``dim1`` and ``dim2``; it becomes the last dim.

        Examples
        --------
        >>> x = gt.zeros(3, 3)
        >>> _ = x.diagonal().add_(1.0)  # a view: the write reaches x
        >>> x.tolist()
        [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
        >>> gt.arange(6).reshape(2, 3).diagonal(1).tolist()
        [1, 5]
        """
        return dispatch(OP_DIAGONAL, (self, offset, dim1, dim2))

    def unfold(self, dimension, size, step):
        """The view of the windows of ``size`` elements, ``step`` apart, along
        ``dimension``: that dim counts the windows, a new last dim holds their elements.

        Examples
        --------
        >>> gt.arange(5).unfold(0, 2, 2).tolist()
        [[0, 1], [2, 3]]
        """
        return dispatch(OP_UNFOLD, (self, dimension, size, step))

    def split(self, split_size, dim=0):
        """Views of ``split_size`` elements along ``dim`` (the last may be shorter), or of the
        sizes in a list.

        Examples
        --------
        >>> [p.tolist() for p in gt.arange(5).split(2)]
        [[0, 1], [2, 3], [4]]
        """
        return dispatch(OP_SPLIT, (self, split_size, dim))

    def chunk(self, chunks, dim=0):
        """At most ``chunks`` views of equal size (the last may be shorter) along ``dim``."""
        return dispatch(OP_CHUNK, (self, chunks, dim))

    def unbind(self, dim=0):
        """The views at each index along ``dim``, as a tuple."""
        return dispatch(OP_UNBIND, (self, dim))

    def contiguous(self, *, memory_format=None):
        """``self`` if it is C-contiguous, else a C-contiguous copy.

        Examples
        --------
        >>> t = gt.zeros(2, 3)
        >>> t.contiguous() is t, t.t().contiguous().is_contiguous()
        (True, True)

        ``memory_format=channels_last`` (``_3d``): ``self`` if it is laid out channels
        last, else a copy that is (``gradstack_tensor.layouts``).
        """
        if memory_format is not None:
            from . import layouts
            layouts.check_memory_format(memory_format, "contiguous")
            if memory_format is layouts.preserve_format and not cnp.PyArray_IS_C_CONTIGUOUS(
                    self._data):
                raise RuntimeError(
                    "preserve memory format is unsupported by the contiguous operator"
                )
            order = layouts.channels_last_order(memory_format, self._data.ndim, "contiguous")
            if order is not None:
                if layouts.is_laid_out(self.shape, self.stride(), memory_format):
                    return self
                return _channels_last_copy(self, order)
        if cnp.PyArray_IS_C_CONTIGUOUS(self._data):
            return self
        if self.is_meta and self.is_contiguous():  # (its array is a broadcast element)
            return self
        return dispatch(OP_CONTIGUOUS, (self,))

    def clone(self, *, memory_format=None):
        """A copy with its own storage (recorded by autograd: gradients flow back), in
        ``self``'s layout, row-major with ``memory_format=contiguous_format``, or channels
        last with ``memory_format=channels_last`` (``_3d``)."""
        if memory_format is not None:
            from . import layouts
            layouts.check_memory_format(memory_format, "clone")
            order = layouts.channels_last_order(memory_format, self._data.ndim, "clone")
            if order is not None:
                return _channels_last_copy(self, order)
            if memory_format is layouts.contiguous_format and not self.is_contiguous():
                # a row-major copy (the clone that torch records, CloneBackward0), where
                # clone's own kernel keeps the layout (preserve_format)
                return dispatch(OP_CONTIGUOUS, (self,))
        return dispatch(OP_CLONE, (self,))

    def repeat(self, *sizes):
        """The tensor tiled ``sizes[i]`` times along each dim (a copy).

        Examples
        --------
        >>> gt.tensor([1, 2]).repeat(2).tolist()
        [1, 2, 1, 2]
        """
        return dispatch(OP_REPEAT, (self, shape_from_args(sizes, "repeat")))

    def flip(self, *dims):
        """A copy with the order of the elements reversed along ``dims``."""
        return dispatch(OP_FLIP, (self, shape_from_args(dims, "flip")))

    def tril(self, diagonal=0):
        """A copy with the elements above the ``diagonal``-th diagonal set to 0."""
        return dispatch(OP_TRIL, (self, diagonal))

    def triu(self, diagonal=0):
        """A copy with the elements below the ``diagonal``-th diagonal set to 0."""
        return dispatch(OP_TRIU, (self, diagonal))

    def diag(self, diagonal=0):
        """The ``diagonal``-th diagonal of a 2-d tensor, or the square matrix with a 1-d tensor
        on it."""
        return dispatch(OP_DIAG, (self, diagonal))

    def trace(self):
        """The sum of the main diagonal of a 2-d tensor."""
        return dispatch(OP_TRACE, (self,))

    # -- indexing and sorting ----------------------------------------------------------

    def index_select(self, dim, index):
        """The elements at the int64 ``index`` positions along ``dim`` (a copy).

        Examples
        --------
        >>> gt.tensor([10, 20, 30]).index_select(0, gt.tensor([2, 0])).tolist()
        [30, 10]
        """
        return dispatch(OP_INDEX_SELECT, (self, dim, index))

    def gather(self, dim, index):
        """``out[i][j] = self[index[i][j]][j]`` for ``dim=0`` (and so on for other dims)."""
        return dispatch(OP_GATHER, (self, dim, index))

    def sort(self, dim=-1, descending=False):
        """``(values, indices)`` sorted along ``dim``.

        Examples
        --------
        >>> gt.tensor([3., 1., 2.]).sort().values.tolist()
        [1.0, 2.0, 3.0]
        """
        if type(descending) is not bool and not isinstance(descending, np.bool_):
            raise TypeError(
                f"sort(): argument 'descending' must be bool, not {type(descending).__name__}"
            )
        return dispatch(OP_SORT, (self, dim, descending))

    def topk(self, k, dim=-1, largest=True, sorted=True):
        """``(values, indices)`` of the ``k`` largest (or smallest) elements along ``dim``."""
        return dispatch(OP_TOPK, (self, k, dim, largest, sorted))

    def __getitem__(self, index):
        return dispatch(OP_GETITEM, (self, index))

    def __setitem__(self, index, value):
        # Note [x[False] = v and x[True] = v]
        # torch's setitem writes nothing for a lone False index and records no op (no
        # version bump, no grad_fn): only the value's type is checked.  A lone True is
        # torch's x[None] = v, a copy (which casts), not an index_put.
        if index is False:
            if not isinstance(value, (TensorBase, int, float, np.number, np.bool_)):
                raise TypeError(
                    f"can't assign a {type(value).__name__} to a {self.dtype} tensor; assign "
                    "a number or a Tensor"
                )
            return
        if index is True:
            index = None
        dispatch(OP_SETITEM_, (self, index, value))

    def __delitem__(self, index):
        # (Cython's default for a class with __setitem__ is a NotImplementedError)
        raise TypeError("'Tensor' object does not support item deletion")

    def __contains__(self, element):
        if isinstance(element, TensorBase):
            element = (<TensorBase>element)._data
        return bool((self._data == element).any())

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return shape_of(self._data)[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self.select(0, i) for i in range(shape_of(self._data)[0]))


_ZERO_DIM_WARNINGS = {"tensor.mH": "Tensor.mH", "tensor.adjoint()": "adjoint()"}


def _conj_transpose(self, what):
    """``self``'s last two dims swapped, conjugated where the dtype is complex (torch's
    ``mH``/``adjoint``): the checks and warning name ``what``."""
    nd = self.dim()
    if nd == 0:
        # (compiled: no frame of its own, so stacklevel 1 is the caller's line)
        warnings.warn(
            _ZERO_DIM_WARNINGS[what] + " is deprecated on 0-D tensors. Consider using x.conj().",
            UserWarning, stacklevel=1,
        )
        return self
    if nd == 1:
        raise RuntimeError(
            f"{what} is only supported on matrices or batches of matrices. Got 1-D tensor."
        )
    out = dispatch(OP_TRANSPOSE, (self, -2, -1))
    return out.conj() if out.is_complex() else out


def _autograd_resize(TensorBase self, tuple sizes):
    """autograd's ``Resize`` of torch's deprecated ``resize``: a view of the contiguous
    tensor, which must keep its number of elements.  As torch's, the element count is the
    product of ``sizes`` as given (sizes that do not multiply are a TypeError, sizes whose
    product is not the count a RuntimeError), then the sizes are read as a shape."""
    numel = functools.reduce(operator.mul, sizes, 1)
    if numel != self.numel():
        raise RuntimeError(
            f"requested resize to {'x'.join(str(d) for d in sizes)} ({numel} elements in "
            f"total), but the given tensor has a size of "
            f"{'x'.join(str(d) for d in self.shape)} ({self.numel()} elements). autograd's "
            "resize can only change the shape of a given tensor, while preserving the "
            "number of elements. "
        )
    return self.contiguous().view(shape_from_args(sizes, "resize"))


def _channels_last_copy(t, order):
    """A copy of ``t`` laid out in the dims' ``order`` (channels last), as ops: the
    permuted tensor copied row-major, permuted back."""
    back = [0] * len(order)
    for i, d in enumerate(order):
        back[d] = i
    p = t.permute(*order)
    c = p.contiguous()
    if c is p:  # (already laid out so: still a copy)
        c = p.clone()
    return c.permute(*back)
