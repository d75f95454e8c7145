# cython: language_level=3, embedsignature=True, embedsignature.format=clinic
"""The Tensor's composite methods: the methods written as compositions of others.

``CompositeMethods`` is one link of the Tensor's class chain (see ``_tensor_base.pyx``)::

    TensorBase <- ElementwiseMethods <- ReductionMethods <- ShapeMethods <- SearchMethods
    <- CompositeMethods <- Tensor

It holds the methods of the functions that tensor-core writes in Python as compositions
of its ops (``composites.py``, ``elementwise_composites.py``, ``matrix_builders.py``,
``order_statistics.py``, ``searching.py`` ...: those modules import ``_tensor``, so each
method calls its function through ``ABOVE``, Note [Methods bound from above] in
``_above.py``), the methods of ops that no group module
declares (the special functions ``erf``, ``lgamma`` ..., the indexed writes
``scatter``, ``index_add`` ...), the aliases and in-place forms torch programs call,
made of other methods (``erf_`` is ``copy_(erf())``, ``unsafe_split`` is ``split``), and
the new tensors like this one (``new_tensor``, ``new_zeros`` ..., made by the factories).

The examples assume ``import gradstack_tensor as gt``.
"""
cimport cython

import numpy as np

from ._dispatch cimport dispatch
from . import _op_table  # no-cython-lint: imported to declare the ops looked up below
from ._dispatch import OPS
from ._above import ABOVE  # Note [Methods bound from above]
from ._tensor_base cimport TensorBase
from ._shapes cimport shape_from_args
from ._tensor_search cimport SearchMethods


@cython.binding(False)      # Note [Cython methods check self] in _tensor_base.pyx
cdef class CompositeMethods(SearchMethods):
    """The composite methods of :class:`gradstack_tensor.Tensor`: aliases, in-place forms and
    the functions of the Python composite modules."""

    # -- composites (gradstack_tensor/composites.py) --------------------------------------

    def put(self, index, source, accumulate=False):
        """:func:`gradstack_tensor.put` of ``self``.

        Examples
        --------
        >>> gt.zeros(3).put(gt.tensor([2]), gt.tensor([5.0])).tolist()
        [0.0, 0.0, 5.0]
        """
        put = ABOVE.put
        return put(self, index, source, accumulate)

    def put_(self, index, source, accumulate=False):
        """In-place :meth:`put`; returns ``self``."""
        put = ABOVE.put
        return self.copy_(put(self, index, source, accumulate))

    def renorm(self, p, dim, maxnorm):
        """:func:`gradstack_tensor.renorm` of ``self``.

        Examples
        --------
        >>> gt.tensor([[3.0, 4.0], [0.0, 0.5]]).renorm(2, 0, 1.0).tolist()[1]
        [0.0, 0.5]
        """
        renorm = ABOVE.renorm
        return renorm(self, p, dim, maxnorm)

    def renorm_(self, p, dim, maxnorm):
        """In-place :meth:`renorm`; returns ``self``."""
        renorm = ABOVE.renorm
        return self.copy_(renorm(self, p, dim, maxnorm))

    def lerp(self, end, weight):
        """``self + weight * (end - self)``; see :func:`gradstack_tensor.lerp`.

        Examples
        --------
        >>> gt.tensor([0., 10.]).lerp(gt.tensor([10., 20.]), 0.25).tolist()
        [2.5, 12.5]
        """
        lerp = ABOVE.lerp
        return lerp(self, end, weight)

    def lerp_(self, end, weight):
        """In-place :meth:`lerp`."""
        lerp = ABOVE.lerp
        return self.copy_(lerp(self, end, weight))

    def addcmul(self, tensor1, tensor2, *, value=1):
        """``self + value * tensor1 * tensor2``; see :func:`gradstack_tensor.addcmul`."""
        addcmul = ABOVE.addcmul
        return addcmul(self, tensor1, tensor2, value=value)

    def addcmul_(self, tensor1, tensor2, *, value=1):
        """In-place :meth:`addcmul`."""
        addcmul = ABOVE.addcmul
        return self.copy_(addcmul(self, tensor1, tensor2, value=value))

    def addcdiv(self, tensor1, tensor2, *, value=1):
        """``self + value * tensor1 / tensor2``; see :func:`gradstack_tensor.addcdiv`."""
        addcdiv = ABOVE.addcdiv
        return addcdiv(self, tensor1, tensor2, value=value)

    def addcdiv_(self, tensor1, tensor2, *, value=1):
        """In-place :meth:`addcdiv`."""
        addcdiv = ABOVE.addcdiv
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
        mvlgamma = ABOVE.mvlgamma
        return mvlgamma(self, p)

    def masked_select(self, mask):
        """The elements where ``mask`` is True, as a 1-d tensor.

        Examples
        --------
        >>> gt.tensor([1, 2, 3]).masked_select(gt.tensor([True, False, True])).tolist()
        [1, 3]
        """
        masked_select = ABOVE.masked_select
        return masked_select(self, mask)

    # -- aliases and in-place forms made of other methods -------------------------------

    def split_with_sizes(self, split_sizes, dim=0):
        """``self.split(list(split_sizes), dim)``; torch's TypeError for sizes that are not
        a sequence of ints."""
        if not isinstance(split_sizes, (list, tuple)):
            raise TypeError(
                "split_with_sizes(): argument 'split_sizes' (position 1) must be tuple of "
                f"ints, not {type(split_sizes).__name__}"
            )
        for pos, size in enumerate(split_sizes):
            if not isinstance(size, (int, TensorBase)) or isinstance(size, bool):
                raise TypeError(
                    "split_with_sizes(): argument 'split_sizes' (position 1) must be tuple "
                    f"of ints, but found element of type {type(size).__name__} at pos {pos}"
                )
        return self.split(list(split_sizes), dim)

    def unsafe_split(self, split_size, dim=0):
        """``self.split(split_size, dim)``."""
        return self.split(split_size, dim)

    def unsafe_chunk(self, chunks, dim=0):
        """``self.chunk(chunks, dim)``."""
        return self.chunk(chunks, dim)

    def select_scatter(self, src, dim, index):
        """See :func:`gradstack_tensor.select_scatter`."""
        select_scatter = ABOVE.select_scatter
        return select_scatter(self, src, dim, index)

    def slice_scatter(self, src, dim=0, start=None, end=None, step=1):
        """See :func:`gradstack_tensor.slice_scatter`."""
        slice_scatter = ABOVE.slice_scatter
        return slice_scatter(self, src, dim, start, end, step)

    def diagonal_scatter(self, src, offset=0, dim1=0, dim2=1):
        """See :func:`gradstack_tensor.diagonal_scatter`."""
        diagonal_scatter = ABOVE.diagonal_scatter
        return diagonal_scatter(self, src, offset, dim1, dim2)

    def matrix_exp(self):
        """The matrix exponential of each square matrix; see
        :func:`gradstack_tensor.matrix_exp`."""
        matrix_exp = ABOVE.matrix_exp
        return matrix_exp(self)

    def narrow_copy(self, dim, start, length):
        """A copy of ``self.narrow(dim, start, length)``."""
        return self.narrow(dim, start, length).clone()

    def sum_to_size(self, *size):
        """The sum over the dims that broadcasting ``size`` to this shape would expand."""
        size = shape_from_args(size, "sum_to_size")
        shape = tuple(self.shape)
        lead = len(shape) - len(size)
        if lead < 0 or any(s not in (1, n) for s, n in zip(size, shape[lead:])):
            raise RuntimeError(
                f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}."
            )
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
        if not isinstance(index, TensorBase):
            raise TypeError(
                f"take(): argument 'index' (position 1) must be Tensor, not "
                f"{type(index).__name__}"
            )
        flat = index.reshape(-1)
        n = self.numel()
        if flat.numel():
            low, high = int(flat.min().item()), int(flat.max().item())
            for i in (low, high):
                if not -n <= i < n:
                    raise IndexError(
                        f"out of range: tried to access index {i} on a tensor of {n} elements."
                    )
            if low < 0:  # torch's take wraps negative indices
                flat = flat + (flat < 0).long() * n
        return self.reshape(-1).gather(0, flat).reshape(tuple(index.shape))

    def vdot(self, other):
        """``self.dot(other)`` (real tensors)."""
        vdot = ABOVE.vdot
        return vdot(self, other)

    def rot90(self, k=1, dims=(0, 1)):
        """Rotated by 90 degrees ``k`` times in the plane of ``dims``; see
        :func:`gradstack_tensor.rot90`."""
        rot90 = ABOVE.rot90
        return rot90(self, k, dims)

    def erfc(self):
        """``1 - erf(self)``, computed without cancelling (Note [erfc is its own function]
        in ``_activation_kernels.pyx``)."""
        return dispatch(OPS["erfc"], (self,))

    def erfc_(self):
        """In-place :meth:`erfc`."""
        return self.copy_(dispatch(OPS["erfc"], (self,)))

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

    # -- the in-place forms of the composite methods (torch's Tensor has them all) --------
    # Each writes its out-of-place result into ``self`` with torch's checks (the result's
    # shape must be ``self``'s, its dtype castable to ``self``'s: ``_write_inplace``);
    # the aliases are the in-place methods they name.

    def absolute_(self):
        """Alias of :meth:`abs_`."""
        return self.abs_()

    def arccos_(self):
        """Alias of :meth:`acos_`."""
        return self.acos_()

    def arcsin_(self):
        """Alias of :meth:`asin_`."""
        return self.asin_()

    def arctan_(self):
        """Alias of :meth:`atan_`."""
        return self.atan_()

    def arctan2_(self, other):
        """Alias of :meth:`atan2_`."""
        return self.atan2_(other)

    def divide_(self, other, *, rounding_mode=None):
        """Alias of :meth:`div_`."""
        return self.div_(other, rounding_mode=rounding_mode)

    def true_divide_(self, other):
        """Alias of :meth:`div_` (true division)."""
        return self.div_(other)

    def multiply_(self, other):
        """Alias of :meth:`mul_`."""
        return self.mul_(other)

    def negative_(self):
        """Alias of :meth:`neg_`."""
        return self.neg_()

    def subtract_(self, other, *, alpha=1):
        """Alias of :meth:`sub_`."""
        return self.sub_(other, alpha=alpha)

    def fix_(self):
        """Alias of :meth:`trunc_`."""
        return self.trunc_()

    def greater_(self, other):
        """Alias of :meth:`gt_`."""
        return self.gt_(other)

    def greater_equal_(self, other):
        """Alias of :meth:`ge_`."""
        return self.ge_(other)

    def less_(self, other):
        """Alias of :meth:`lt_`."""
        return self.lt_(other)

    def less_equal_(self, other):
        """Alias of :meth:`le_`."""
        return self.le_(other)

    def not_equal_(self, other):
        """Alias of :meth:`ne_`."""
        return self.ne_(other)

    def conj_physical_(self):
        """In-place :meth:`conj_physical`: a real tensor is its own conjugate."""
        return self

    def copysign_(self, other):
        """In-place :meth:`copysign`.

        Examples
        --------
        >>> gt.tensor([1.0, 2.0]).copysign_(-1.0).tolist()
        [-1.0, -2.0]
        """
        return _inplace("copysign_", self, self.copysign(other))

    def cumprod_(self, dim, *, dtype=None):
        """In-place :meth:`cumprod`."""
        return _inplace("cumprod_", self, self.cumprod(dim, dtype=dtype))

    def deg2rad_(self):
        """In-place :meth:`deg2rad` (a float tensor: an integer one cannot hold it).

        Examples
        --------
        >>> gt.tensor([180.0]).deg2rad_().tolist()
        [3.1415927410125732]
        """
        return _inplace("deg2rad_", self, self.deg2rad())

    def rad2deg_(self):
        """In-place :meth:`rad2deg`."""
        return _inplace("rad2deg_", self, self.rad2deg())

    def frac_(self):
        """In-place :meth:`frac`."""
        return _inplace("frac_", self, self.frac())

    def float_power_(self, exponent):
        """In-place :meth:`float_power`: ``self`` must be float64 (or complex128), the
        dtype of the result, as torch's.

        Examples
        --------
        >>> gt.tensor([2.0], dtype=gt.float64).float_power_(3).tolist()
        [8.0]
        """
        result = self.float_power(exponent)
        if result.dtype is not self.dtype:
            _name = ABOVE._name
            raise RuntimeError(
                f"the base given to float_power_ has dtype {_name(self.dtype)} but the "
                f"operation's result requires dtype {_name(result.dtype)}"
            )
        return _inplace("float_power_", self, result)

    def ldexp_(self, other):
        """In-place :meth:`ldexp`."""
        return _inplace("ldexp_", self, self.ldexp(other))

    def logical_and_(self, other):
        """In-place :meth:`logical_and` (1 or 0 in ``self``'s dtype).

        Examples
        --------
        >>> gt.tensor([1.0, 0.0]).logical_and_(gt.tensor([2.0, 2.0])).tolist()
        [1.0, 0.0]
        """
        return _inplace("logical_and_", self, self.logical_and(other))

    def logical_or_(self, other):
        """In-place :meth:`logical_or` (1 or 0 in ``self``'s dtype)."""
        return _inplace("logical_or_", self, self.logical_or(other))

    def logical_xor_(self, other):
        """In-place :meth:`logical_xor` (1 or 0 in ``self``'s dtype)."""
        return _inplace("logical_xor_", self, self.logical_xor(other))

    def logit_(self, eps=None):
        """In-place :meth:`logit`."""
        return _inplace("logit_", self, self.logit(eps))

    def mvlgamma_(self, p):
        """In-place :meth:`mvlgamma`."""
        return _inplace("mvlgamma_", self, self.mvlgamma(p))

    def nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
        """In-place :meth:`nan_to_num`.

        Examples
        --------
        >>> gt.tensor([float("nan"), 1.0]).nan_to_num_(-1.0).tolist()
        [-1.0, 1.0]
        """
        return _inplace("nan_to_num_", self, self.nan_to_num(nan, posinf, neginf))

    def sinc_(self):
        """In-place :meth:`sinc`."""
        return _inplace("sinc_", self, self.sinc())

    def xlogy_(self, other):
        """In-place :meth:`xlogy`."""
        return _inplace("xlogy_", self, self.xlogy(other))

    def addmm_(self, mat1, mat2, *, beta=1, alpha=1):
        """In-place :meth:`addmm`."""
        return _inplace("addmm_", self, self.addmm(mat1, mat2, beta=beta, alpha=alpha))

    def addmv_(self, mat, vec, *, beta=1, alpha=1):
        """In-place :meth:`addmv`."""
        return _inplace("addmv_", self, self.addmv(mat, vec, beta=beta, alpha=alpha))

    def addr_(self, vec1, vec2, *, beta=1, alpha=1):
        """In-place :meth:`addr`."""
        return _inplace("addr_", self, self.addr(vec1, vec2, beta=beta, alpha=alpha))

    def addbmm_(self, batch1, batch2, *, beta=1, alpha=1):
        """In-place :meth:`addbmm`."""
        return _inplace("addbmm_", self, self.addbmm(batch1, batch2, beta=beta, alpha=alpha))

    def baddbmm_(self, batch1, batch2, *, beta=1, alpha=1):
        """In-place :meth:`baddbmm`."""
        return _inplace("baddbmm_", self,
                        self.baddbmm(batch1, batch2, beta=beta, alpha=alpha))

    def dist(self, other, p=2):
        """The ``p``-norm of ``self - other``; see :func:`gradstack_tensor.dist`."""
        dist = ABOVE.dist
        return dist(self, other, p)

    def svd(self, some=True, compute_uv=True):
        """The legacy singular value decomposition ``(U, S, V)``; see
        :func:`gradstack_tensor.svd`."""
        svd = ABOVE.svd
        return svd(self, some, compute_uv)

    # -- matrix_factorizations.py ------------------------------------------------------

    def qr(self, some=True):
        """The QR decomposition (deprecated in torch); see :func:`gradstack_tensor.qr`."""
        qr = ABOVE.qr
        return qr(self, some)

    def lu(self, pivot=True, get_infos=False):
        """The packed LU decomposition (deprecated in torch); see
        :func:`gradstack_tensor.lu`."""
        lu = ABOVE.lu
        return lu(self, pivot, get_infos)

    def lu_solve(self, LU_data, LU_pivots):
        """``X`` with ``A X = self`` from ``A``'s LU; see :func:`gradstack_tensor.lu_solve`."""
        lu_solve = ABOVE.lu_solve
        return lu_solve(self, LU_data, LU_pivots)

    def triangular_solve(self, A, upper=True, transpose=False, unitriangular=False):
        """``X`` with ``A X = self`` for triangular ``A``; see
        :func:`gradstack_tensor.triangular_solve`."""
        triangular_solve = ABOVE.triangular_solve
        return triangular_solve(self, A, upper, transpose, unitriangular)

    def cholesky_solve(self, input2, upper=False):
        """``X`` with ``L L^H X = self``; see :func:`gradstack_tensor.cholesky_solve`."""
        cholesky_solve = ABOVE.cholesky_solve
        return cholesky_solve(self, input2, upper)

    def cholesky_inverse(self, upper=False):
        """The inverse from a Cholesky factor; see :func:`gradstack_tensor.cholesky_inverse`."""
        cholesky_inverse = ABOVE.cholesky_inverse
        return cholesky_inverse(self, upper)

    def geqrf(self):
        """LAPACK's ``geqrf`` factors; see :func:`gradstack_tensor.geqrf`."""
        geqrf = ABOVE.geqrf
        return geqrf(self)

    def orgqr(self, input2):
        """The ``Q`` of ``geqrf``'s factors; see :func:`gradstack_tensor.orgqr`."""
        orgqr = ABOVE.orgqr
        return orgqr(self, input2)

    def ormqr(self, input2, input3, left=True, transpose=False):
        """A product with the ``Q`` of ``geqrf``'s factors; see
        :func:`gradstack_tensor.ormqr`."""
        ormqr = ABOVE.ormqr
        return ormqr(self, input2, input3, left, transpose)

    def pinverse(self, rcond=1e-15):
        """The pseudo-inverse; see :func:`gradstack_tensor.pinverse`."""
        pinverse = ABOVE.pinverse
        return pinverse(self, rcond)

    def angle(self):
        """The argument of each element: pi for a negative real number, else 0 (NaN
        stays NaN; integers give the default float dtype); its gradient is zero.

        Examples
        --------
        >>> gt.tensor([-2.0, 0.0, 3.0]).angle().tolist()
        [3.1415927410125732, 0.0, 0.0]
        """
        angle = ABOVE.angle
        return angle(self)

    # -- elementwise_composites.py --------------------------------------------------------

    def greater(self, *args, **kwargs):
        """See :func:`gradstack_tensor.greater` (``self`` its first argument)."""
        greater = ABOVE.greater
        return greater(self, *args, **kwargs)

    def greater_equal(self, *args, **kwargs):
        """See :func:`gradstack_tensor.greater_equal` (``self`` its first argument)."""
        greater_equal = ABOVE.greater_equal
        return greater_equal(self, *args, **kwargs)

    def less(self, *args, **kwargs):
        """See :func:`gradstack_tensor.less` (``self`` its first argument)."""
        less = ABOVE.less
        return less(self, *args, **kwargs)

    def less_equal(self, *args, **kwargs):
        """See :func:`gradstack_tensor.less_equal` (``self`` its first argument)."""
        less_equal = ABOVE.less_equal
        return less_equal(self, *args, **kwargs)

    def not_equal(self, *args, **kwargs):
        """See :func:`gradstack_tensor.not_equal` (``self`` its first argument)."""
        not_equal = ABOVE.not_equal
        return not_equal(self, *args, **kwargs)

    def arccos(self, *args, **kwargs):
        """See :func:`gradstack_tensor.arccos` (``self`` its first argument)."""
        arccos = ABOVE.arccos
        return arccos(self, *args, **kwargs)

    def arcsin(self, *args, **kwargs):
        """See :func:`gradstack_tensor.arcsin` (``self`` its first argument)."""
        arcsin = ABOVE.arcsin
        return arcsin(self, *args, **kwargs)

    def arctan(self, *args, **kwargs):
        """See :func:`gradstack_tensor.arctan` (``self`` its first argument)."""
        arctan = ABOVE.arctan
        return arctan(self, *args, **kwargs)

    def arctan2(self, *args, **kwargs):
        """See :func:`gradstack_tensor.arctan2` (``self`` its first argument)."""
        arctan2 = ABOVE.arctan2
        return arctan2(self, *args, **kwargs)

    def fix(self, *args, **kwargs):
        """See :func:`gradstack_tensor.fix` (``self`` its first argument)."""
        fix = ABOVE.fix
        return fix(self, *args, **kwargs)

    def positive(self, *args, **kwargs):
        """See :func:`gradstack_tensor.positive` (``self`` its first argument)."""
        positive = ABOVE.positive
        return positive(self, *args, **kwargs)

    def deg2rad(self, *args, **kwargs):
        """See :func:`gradstack_tensor.deg2rad` (``self`` its first argument)."""
        deg2rad = ABOVE.deg2rad
        return deg2rad(self, *args, **kwargs)

    def rad2deg(self, *args, **kwargs):
        """See :func:`gradstack_tensor.rad2deg` (``self`` its first argument)."""
        rad2deg = ABOVE.rad2deg
        return rad2deg(self, *args, **kwargs)

    def frac(self, *args, **kwargs):
        """See :func:`gradstack_tensor.frac` (``self`` its first argument)."""
        frac = ABOVE.frac
        return frac(self, *args, **kwargs)

    def signbit(self, *args, **kwargs):
        """See :func:`gradstack_tensor.signbit` (``self`` its first argument)."""
        signbit = ABOVE.signbit
        return signbit(self, *args, **kwargs)

    def logaddexp(self, *args, **kwargs):
        """See :func:`gradstack_tensor.logaddexp` (``self`` its first argument)."""
        logaddexp = ABOVE.logaddexp
        return logaddexp(self, *args, **kwargs)

    def logaddexp2(self, *args, **kwargs):
        """See :func:`gradstack_tensor.logaddexp2` (``self`` its first argument)."""
        logaddexp2 = ABOVE.logaddexp2
        return logaddexp2(self, *args, **kwargs)

    def xlogy(self, *args, **kwargs):
        """See :func:`gradstack_tensor.xlogy` (``self`` its first argument)."""
        xlogy = ABOVE.xlogy
        return xlogy(self, *args, **kwargs)

    def nan_to_num(self, *args, **kwargs):
        """See :func:`gradstack_tensor.nan_to_num` (``self`` its first argument)."""
        nan_to_num = ABOVE.nan_to_num
        return nan_to_num(self, *args, **kwargs)

    def sinc(self, *args, **kwargs):
        """See :func:`gradstack_tensor.sinc` (``self`` its first argument)."""
        sinc = ABOVE.sinc
        return sinc(self, *args, **kwargs)

    def logit(self, *args, **kwargs):
        """See :func:`gradstack_tensor.logit` (``self`` its first argument)."""
        logit = ABOVE.logit
        return logit(self, *args, **kwargs)

    def float_power(self, *args, **kwargs):
        """See :func:`gradstack_tensor.float_power` (``self`` its first argument)."""
        float_power = ABOVE.float_power
        return float_power(self, *args, **kwargs)

    def ldexp(self, *args, **kwargs):
        """See :func:`gradstack_tensor.ldexp` (``self`` its first argument)."""
        ldexp = ABOVE.ldexp
        return ldexp(self, *args, **kwargs)

    def nansum(self, *args, **kwargs):
        """See :func:`gradstack_tensor.nansum` (``self`` its first argument)."""
        nansum = ABOVE.nansum
        return nansum(self, *args, **kwargs)

    def nanmean(self, *args, **kwargs):
        """See :func:`gradstack_tensor.nanmean` (``self`` its first argument)."""
        nanmean = ABOVE.nanmean
        return nanmean(self, *args, **kwargs)

    def aminmax(self, *args, **kwargs):
        """See :func:`gradstack_tensor.aminmax` (``self`` its first argument)."""
        aminmax = ABOVE.aminmax
        return aminmax(self, *args, **kwargs)

    def take_along_dim(self, *args, **kwargs):
        """See :func:`gradstack_tensor.take_along_dim` (``self`` its first argument)."""
        take_along_dim = ABOVE.take_along_dim
        return take_along_dim(self, *args, **kwargs)

    def cross(self, *args, **kwargs):
        """See :func:`gradstack_tensor.cross` (``self`` its first argument)."""
        cross = ABOVE.cross
        return cross(self, *args, **kwargs)

    def cumprod(self, *args, **kwargs):
        """See :func:`gradstack_tensor.cumprod` (``self`` its first argument)."""
        cumprod = ABOVE.cumprod
        return cumprod(self, *args, **kwargs)

    def baddbmm(self, *args, **kwargs):
        """See :func:`gradstack_tensor.baddbmm` (``self`` its first argument)."""
        baddbmm = ABOVE.baddbmm
        return baddbmm(self, *args, **kwargs)

    def addbmm(self, *args, **kwargs):
        """See :func:`gradstack_tensor.addbmm` (``self`` its first argument)."""
        addbmm = ABOVE.addbmm
        return addbmm(self, *args, **kwargs)

    def addmv(self, *args, **kwargs):
        """See :func:`gradstack_tensor.addmv` (``self`` its first argument)."""
        addmv = ABOVE.addmv
        return addmv(self, *args, **kwargs)

    def addr(self, *args, **kwargs):
        """See :func:`gradstack_tensor.addr` (``self`` its first argument)."""
        addr = ABOVE.addr
        return addr(self, *args, **kwargs)

    def square_(self):
        """In place ``self * self`` (``pow_(2)``, as torch)."""
        return self.pow_(2)

    def clamp_min_(self, min):
        """In place ``clamp_(min=min)``; ``min`` is a number or a tensor (None is torch's
        TypeError)."""
        if min is None:
            raise TypeError(
                "clamp_min_() received an invalid combination of arguments - got (Tensor, "
                "NoneType), but expected (Tensor input, Tensor min) or (Tensor input, "
                "Number min)"
            )
        return self.clamp_(min=min)

    def clamp_max_(self, max):
        """In place ``clamp_(max=max)``; ``max`` is a number or a tensor (None is torch's
        TypeError)."""
        if max is None:
            raise TypeError(
                "clamp_max_() received an invalid combination of arguments - got (Tensor, "
                "NoneType), but expected (Tensor input, Tensor max) or (Tensor input, "
                "Number max)"
            )
        return self.clamp_(max=max)

    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        """See :func:`gradstack_tensor.isclose`."""
        isclose = ABOVE.isclose
        return isclose(self, other, rtol, atol, equal_nan)

    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        """See :func:`gradstack_tensor.allclose`."""
        allclose = ABOVE.allclose
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

    def scatter_reduce(self, dim, index, src, reduce, *, include_self=True):
        """A copy with ``src[i][j]`` combined into ``[index[i][j]][j]`` (dim 0) by
        ``reduce`` (``"sum"``, ``"prod"``, ``"mean"``, ``"amax"``, ``"amin"``); with
        ``include_self=False`` the positions written forget their own values.

        Examples
        --------
        >>> gt.ones(3).scatter_reduce(0, gt.tensor([0, 0]), gt.tensor([2.0, 3.0]), "prod").tolist()
        [6.0, 1.0, 1.0]
        """
        return dispatch(OPS["scatter_reduce"], (self, dim, index, src, reduce, include_self))

    def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
        """In-place :meth:`scatter_reduce`."""
        return dispatch(OPS["scatter_reduce_"], (self, dim, index, src, reduce, include_self))

    def index_reduce(self, dim, index, source, reduce, *, include_self=True):
        """A copy with ``source``'s slices combined into the slices at positions ``index``
        of ``dim`` by ``reduce`` (``"prod"``, ``"mean"``, ``"amax"``, ``"amin"``).

        Examples
        --------
        >>> gt.ones(3).index_reduce(0, gt.tensor([2, 2]), gt.tensor([2.0, 5.0]), "amax").tolist()
        [1.0, 1.0, 5.0]
        """
        return dispatch(OPS["index_reduce"], (self, dim, index, source, reduce, include_self))

    def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
        """In-place :meth:`index_reduce`."""
        return dispatch(OPS["index_reduce_"], (self, dim, index, source, reduce, include_self))

    def hash_tensor(self, dim=(), *, keepdim=False, mode=0):
        """See :func:`gradstack_tensor.hash_tensor`."""
        hash_tensor = ABOVE.hash_tensor
        return hash_tensor(self, dim, keepdim=keepdim, mode=mode)

    def stft(self, n_fft, hop_length=None, win_length=None, window=None, center=True,
             pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
             align_to_window=None):
        """See :func:`gradstack_tensor.stft`."""
        stft = ABOVE.stft
        return stft(self, n_fft, hop_length, win_length, window, center, pad_mode, normalized,
                    onesided, return_complex, align_to_window)

    def istft(self, n_fft, hop_length=None, win_length=None, window=None, center=True,
              normalized=False, onesided=None, length=None, return_complex=False):
        """See :func:`gradstack_tensor.istft`."""
        istft = ABOVE.istft
        return istft(self, n_fft, hop_length, win_length, window, center, normalized,
                     onesided, length, return_complex)

    # -- Python callables, nonzero_static, the activations torch has as methods ----------

    def apply_(self, callable):
        """Replace each element ``v`` by ``callable(v)`` (a Python function of a Python
        number; slow, for tensors that do not require grad, as torch's).

        Examples
        --------
        >>> gt.tensor([1.0, 2.0]).apply_(lambda v: v * 10).tolist()
        [10.0, 20.0]
        """
        return _python_map(self, "apply_", callable, ())

    def map_(self, tensor, callable):
        """Replace each element ``v`` by ``callable(v, w)``, ``w`` the element of
        ``tensor`` (broadcast to this shape) at the same position."""
        if not isinstance(tensor, TensorBase):
            raise TypeError(
                f"map_(): argument 'tensor' must be Tensor, not {type(tensor).__name__}"
            )
        return _python_map(self, "map_", callable, (tensor,))

    def map2_(self, x, y, callable):
        """Replace each element ``v`` by ``callable(v, a, b)``, ``a`` and ``b`` the elements
        of ``x`` and ``y`` (broadcast to this shape) at the same position."""
        for arg, value in (("x", x), ("y", y)):
            if not isinstance(value, TensorBase):
                raise TypeError(
                    f"map2_(): argument '{arg}' must be Tensor, not {type(value).__name__}"
                )
        return _python_map(self, "map2_", callable, (x, y))

    def nonzero_static(self, *, size, fill_value=-1):
        """The indices of the nonzero elements (as :meth:`nonzero`), exactly ``size`` rows:
        the first ``size``, or padded with rows of ``fill_value``.

        Examples
        --------
        >>> gt.tensor([0, 1, 0, 2]).nonzero_static(size=3).flatten().tolist()
        [1, 3, -1]
        """
        tensor = ABOVE.tensor
        if type(size) is not int:
            raise TypeError(
                f"nonzero_static(): argument 'size' must be int, not {type(size).__name__}"
            )
        if size < 0:
            raise RuntimeError(
                f"nonzero_static: 'size' must be an non-negative integer, got {size}"
            )
        found = self.nonzero().numpy()
        out = np.full((size, found.shape[1]), fill_value, dtype=found.dtype)
        kept = min(size, found.shape[0])
        out[:kept] = found[:kept]
        return tensor(out)

    def hardshrink(self, lambd=0.5):
        """``x`` where ``|x| > lambd``, 0 elsewhere; see :func:`gradstack_tensor.hardshrink`."""
        hardshrink = ABOVE.hardshrink
        return hardshrink(self, lambd)

    def prelu(self, weight):
        """``x`` where positive, ``weight * x`` elsewhere; see
        :func:`gradstack_tensor.prelu`."""
        prelu = ABOVE.prelu
        return prelu(self, weight)

    # -- new tensors like this one ----------------------------------------------------------

    def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
        """A new leaf tensor from ``data``, with this tensor's dtype unless ``dtype`` is given
        and its device unless ``device`` is (torch's keyword-only ``dtype``, ``device`` and
        ``requires_grad``)."""
        tensor = ABOVE.tensor
        try:
            return tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                          requires_grad=requires_grad)
        except RuntimeError as e:  # (torch's new_tensor: a TypeError for data of no dtype)
            if "could not infer dtype" not in str(e):
                raise
            raise TypeError(f"new_tensor(): {e}") from None

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
        """A tensor of zeros of ``size``, with this tensor's dtype unless ``dtype`` is given.

        Examples
        --------
        >>> gt.tensor([1], dtype=gt.int32).new_zeros(2).dtype
        gradstack.int32
        """
        zeros = ABOVE.zeros
        return zeros(*size, dtype=dtype or self.dtype, device=device or self.device,
                     requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        """A tensor of ones of ``size``, with this tensor's dtype unless ``dtype`` is given."""
        ones = ABOVE.ones
        return ones(*size, dtype=dtype or self.dtype, device=device or self.device,
                    requires_grad=requires_grad)

    def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False):
        """A tensor of ``size`` filled with ``fill_value``, with this tensor's dtype by default
        (``size`` a sequence of ints, as torch's)."""
        checker = ABOVE.checker
        full = ABOVE.full
        checker("new_full", "size size, float fill_value", 0)(size, fill_value)
        return full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device,
                    requires_grad=requires_grad)

    def is_distributed(self):
        """False: a gradstack tensor lives in one process (torch's answer for a tensor that
        is not a distributed RPC tensor)."""
        return False

    def new(self, *args, device=None):
        """torch's legacy constructor with this tensor's dtype: ``t.new()`` (empty),
        ``t.new(2, 3)`` or ``t.new(Size)`` (uninitialised), ``t.new(data)`` (a copy of a
        sequence), ``t.new(tensor)`` (an alias of that tensor, which must have this dtype:
        a view of its storage in the graph, ``AliasBackward0``, as torch's).

        Examples
        --------
        >>> x = gt.ones(2, dtype=gt.float64)
        >>> x.new([1, 2]).dtype, tuple(x.new(2, 3).shape), tuple(x.new().shape)
        (gradstack.float64, (2, 3), (0,))
        """
        tensor, empty = ABOVE.tensor, ABOVE.empty
        if not args:
            return empty(0, dtype=self.dtype, device=device)
        if len(args) == 1 and isinstance(args[0], TensorBase):
            if args[0].dtype is not self.dtype:
                raise TypeError(
                    f"new(): expected a tensor of dtype {self.dtype}, got one of dtype "
                    f"{args[0].dtype}; convert it with .to({self.dtype})"
                )
            return dispatch(OPS["alias"], (args[0],))
        if all(type(a) is int for a in args) or (
            len(args) == 1 and type(args[0]).__name__ == "Size"
        ):
            return empty(*args, dtype=self.dtype, device=device)
        if len(args) == 1 and not isinstance(args[0], (int, float, complex)):
            try:
                return tensor(args[0], dtype=self.dtype, device=device)
            except RuntimeError as e:  # (data it cannot read: torch's TypeError)
                raise TypeError(str(e)) from None
        raise TypeError(
            "new(): expected sizes (ints), a Size, a sequence of data or a tensor, got "
            f"({', '.join(type(a).__name__ for a in args)})"
        )

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
        """An uninitialised tensor of ``size``, with this tensor's dtype by default."""
        empty = ABOVE.empty
        return empty(*size, dtype=dtype or self.dtype, device=device or self.device,
                     requires_grad=requires_grad)


def _python_map(TensorBase self, str name, fn, tuple others):
    """Write ``fn(self_value, *other_values)`` into each element, with Python numbers."""
    if self._requires_grad:
        raise RuntimeError(
            f"Can't call {name}() on Variable that requires grad. Use "
            f"var.detach().{name}() instead."
        )
    arrays = [np.broadcast_to(o.numpy(force=True), (<object>self._data).shape)
              for o in others]
    out = (<object>self._data)
    columns = [out.ravel().tolist()] + [a.ravel().tolist() for a in arrays]
    values = [fn(*items) for items in zip(*columns)]
    if values:
        out[...] = np.asarray(values, dtype=out.dtype).reshape(out.shape)
    self.bump_version(name)
    return self


def _scatter_src(src, value):
    """scatter's ``src`` (a tensor or a number) or its ``value=`` keyword."""
    if src is None and value is None:
        raise TypeError("scatter() missing required argument 'src' (or 'value')")
    if src is not None and value is not None:
        raise TypeError("scatter() got both 'src' and 'value'")
    return src if src is not None else value


def _inplace(name, self, result):
    _write_inplace = ABOVE._write_inplace
    return _write_inplace(name, self, result)
