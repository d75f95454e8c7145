# cython: language_level=3, embedsignature=True, embedsignature.format=clinic
"""The Tensor's search, arrangement and contraction methods: the methods of
``searching.py``, ``arrangements.py``, ``contractions.py``, ``order_statistics.py`` and
their neighbours (``nonzero``, ``argsort``, ``median``, ``roll``, ``tensordot`` ...).

``SearchMethods`` is one link of the Tensor's class chain (see ``_tensor_base.pyx``)::

    TensorBase <- ElementwiseMethods <- ReductionMethods <- ShapeMethods <- SearchMethods
    <- CompositeMethods <- Tensor

Like ``CompositeMethods`` (``_tensor_composites.pyx``), each method calls its function,
written in Python on top of the Tensor, through ``ABOVE`` (Note [Methods bound from above]
in ``_above.py``).

The examples assume ``import gradstack_tensor as gt``.
"""
cimport cython

from ._above import ABOVE  # Note [Methods bound from above]
from ._tensor_shape cimport ShapeMethods


def _bool_arg(str name, str arg, object value):
    """``value``, which must be a bool, as torch's (``t.median(0, None)`` is a TypeError)."""
    if type(value) is bool or type(value).__name__ == "bool_":
        return bool(value)
    raise TypeError(f"{name}(): argument '{arg}' must be bool, not {type(value).__name__}")


@cython.binding(False)      # Note [Cython methods check self] in _tensor_base.pyx
cdef class SearchMethods(ShapeMethods):
    """The search, arrangement and contraction methods of :class:`gradstack_tensor.Tensor`."""

    # -- searching.py, arrangements.py and contractions.py -------------------------------------

    def nonzero(self, *, as_tuple=False):
        """The indices of the nonzero elements; see :func:`gradstack_tensor.nonzero`.

        Examples
        --------
        >>> gt.tensor([0, 3, 0, 5]).nonzero().tolist()
        [[1], [3]]
        """
        nonzero = ABOVE.nonzero
        return nonzero(self, as_tuple=as_tuple)

    def argwhere(self):
        """``self.nonzero()``; see :func:`gradstack_tensor.argwhere`."""
        argwhere = ABOVE.argwhere
        return argwhere(self)

    def argsort(self, dim=-1, descending=False, *, stable=False):
        """The indices that sort ``self`` along ``dim``; see :func:`gradstack_tensor.argsort`."""
        argsort = ABOVE.argsort
        return argsort(self, dim, descending, stable=stable)

    def median(self, *args, **kwargs):
        """The lower median; see :func:`gradstack_tensor.median`."""
        median = ABOVE.median
        return median(self, *args, **kwargs)

    def nanmedian(self, *args, **kwargs):
        """The lower median ignoring NaN; see :func:`gradstack_tensor.nanmedian`."""
        nanmedian = ABOVE.nanmedian
        return nanmedian(self, *args, **kwargs)

    def kthvalue(self, k, dim=-1, keepdim=False):
        """The ``k``-th smallest element; see :func:`gradstack_tensor.kthvalue`."""
        kthvalue = ABOVE.kthvalue
        return kthvalue(self, k, dim, keepdim)

    def mode(self, dim=-1, keepdim=False):
        """The most frequent value; see :func:`gradstack_tensor.mode`."""
        mode = ABOVE.mode
        return mode(self, dim, _bool_arg("mode", "keepdim", keepdim))

    def quantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
        """The ``q``-th quantiles; see :func:`gradstack_tensor.quantile`."""
        quantile = ABOVE.quantile
        return quantile(self, q, dim, keepdim, interpolation=interpolation)

    def nanquantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
        """The ``q``-th quantiles ignoring NaN; see :func:`gradstack_tensor.nanquantile`."""
        nanquantile = ABOVE.nanquantile
        return nanquantile(self, q, dim, keepdim, interpolation=interpolation)

    def cummax(self, dim):
        """The running maximum and its indices; see :func:`gradstack_tensor.cummax`."""
        cummax = ABOVE.cummax
        return cummax(self, dim)

    def cummin(self, dim):
        """The running minimum and its indices; see :func:`gradstack_tensor.cummin`."""
        cummin = ABOVE.cummin
        return cummin(self, dim)

    def inverse(self):
        """The inverse of each square matrix; see :func:`gradstack_tensor.linalg.inv`."""
        inv = ABOVE.linalg.inv
        return inv(self)

    def det(self):
        """The determinant of each square matrix; see :func:`gradstack_tensor.linalg.det`."""
        det = ABOVE.linalg.det
        return det(self)

    def slogdet(self):
        """``(sign, logabsdet)``; see :func:`gradstack_tensor.slogdet`."""
        slogdet = ABOVE.slogdet
        return slogdet(self)

    def logdet(self):
        """The log of each determinant; see :func:`gradstack_tensor.logdet`."""
        logdet = ABOVE.logdet
        return logdet(self)

    def cholesky(self, upper=False):
        """The Cholesky factor (deprecated in torch); see :func:`gradstack_tensor.cholesky`."""
        cholesky = ABOVE.cholesky
        return cholesky(self, upper)

    def matrix_power(self, n):
        """``self`` to the matrix power ``n``; see :func:`gradstack_tensor.linalg.matrix_power`."""
        matrix_power = ABOVE.linalg.matrix_power
        return matrix_power(self, n)

    def fill_diagonal_(self, fill_value, wrap=False):
        """Write ``fill_value`` on the main diagonal; see
        :func:`gradstack_tensor.arrangements.fill_diagonal_`."""
        fill_diagonal_ = ABOVE.fill_diagonal_
        return fill_diagonal_(self, fill_value, _bool_arg("fill_diagonal_", "wrap", wrap))

    def diag_embed(self, offset=0, dim1=-2, dim2=-1):
        """A tensor whose diagonals (in ``dim1``, ``dim2``) are ``self``'s last dim; see
        :mod:`gradstack_tensor.matrix_builders`."""
        diag_embed = ABOVE.diag_embed
        return diag_embed(self, offset, dim1, dim2)

    def diagflat(self, offset=0):
        """The flattened ``self`` on diagonal ``offset`` of a square matrix; see
        :mod:`gradstack_tensor.matrix_builders`."""
        diagflat = ABOVE.diagflat
        return diagflat(self, offset)

    def cov(self, *, correction=1, fweights=None, aweights=None):
        """The covariance of the variables in ``self``'s rows; see
        :mod:`gradstack_tensor.covariance`."""
        cov = ABOVE.cov
        return cov(self, correction=correction, fweights=fweights, aweights=aweights)

    def corrcoef(self):
        """The correlation coefficients of the variables in ``self``'s rows; see
        :mod:`gradstack_tensor.covariance`."""
        corrcoef = ABOVE.corrcoef
        return corrcoef(self)

    def bincount(self, weights=None, minlength=0):
        """The count (or weight sum) of each value of a 1-d int tensor; see
        :mod:`gradstack_tensor.counting`."""
        bincount = ABOVE.bincount
        return bincount(self, weights, minlength)

    def logcumsumexp(self, dim):
        """``log(cumsum(exp(self)))`` along ``dim``, computed stably; see
        :mod:`gradstack_tensor.scans`."""
        logcumsumexp = ABOVE.logcumsumexp
        return logcumsumexp(self, dim)

    def hypot(self, other):
        """``sqrt(self**2 + other**2)`` without overflow; see
        :mod:`gradstack_tensor.elementwise_composites`."""
        hypot = ABOVE.hypot
        return hypot(self, other)

    def hypot_(self, other):
        """In-place :meth:`hypot`; see :mod:`gradstack_tensor.elementwise_composites`."""
        hypot_ = ABOVE.hypot_
        return hypot_(self, other)

    def gcd(self, other):
        """The greatest common divisor (integers); see
        :mod:`gradstack_tensor.elementwise_composites`."""
        gcd = ABOVE.gcd
        return gcd(self, other)

    def gcd_(self, other):
        """In-place :meth:`gcd`; see :mod:`gradstack_tensor.elementwise_composites`."""
        gcd_ = ABOVE.gcd_
        return gcd_(self, other)

    def lcm(self, other):
        """The least common multiple (integers); see
        :mod:`gradstack_tensor.elementwise_composites`."""
        lcm = ABOVE.lcm
        return lcm(self, other)

    def lcm_(self, other):
        """In-place :meth:`lcm`; see :mod:`gradstack_tensor.elementwise_composites`."""
        lcm_ = ABOVE.lcm_
        return lcm_(self, other)

    def heaviside(self, values):
        """The Heaviside step function (``values`` where ``self`` is 0); see
        :mod:`gradstack_tensor.elementwise_composites`."""
        heaviside = ABOVE.heaviside
        return heaviside(self, values)

    def heaviside_(self, values):
        """In-place :meth:`heaviside`; see :mod:`gradstack_tensor.elementwise_composites`."""
        heaviside_ = ABOVE.heaviside_
        return heaviside_(self, values)

    def index_put(self, indices, values, accumulate=False):
        """A copy with ``values`` put at ``indices`` (summed with ``accumulate``); see
        :mod:`gradstack_tensor.indexed_writes`."""
        index_put = ABOVE.index_put
        return index_put(self, indices, values, accumulate)

    def index_put_(self, indices, values, accumulate=False):
        """Put ``values`` at ``indices`` in place (summed with ``accumulate``); see
        :mod:`gradstack_tensor.indexed_writes`."""
        index_put_ = ABOVE.index_put_
        return index_put_(self, indices, values, accumulate)

    def masked_scatter(self, mask, source):
        """A copy with ``source``'s elements where ``mask`` is True; see
        :mod:`gradstack_tensor.indexed_writes`."""
        masked_scatter = ABOVE.masked_scatter
        return masked_scatter(self, mask, source)

    def masked_scatter_(self, mask, source):
        """In-place :meth:`masked_scatter`; see :mod:`gradstack_tensor.indexed_writes`."""
        masked_scatter_ = ABOVE.masked_scatter_
        return masked_scatter_(self, mask, source)

    def copysign(self, other):
        """``|self|`` with ``other``'s sign; see :func:`gradstack_tensor.copysign`."""
        copysign = ABOVE.copysign
        return copysign(self, other)

    def fmax(self, other):
        """The maximum ignoring NaN; see :func:`gradstack_tensor.fmax`."""
        fmax = ABOVE.fmax
        return fmax(self, other)

    def fmin(self, other):
        """The minimum ignoring NaN; see :func:`gradstack_tensor.fmin`."""
        fmin = ABOVE.fmin
        return fmin(self, other)

    def isposinf(self):
        """Where ``self`` is +inf; see :func:`gradstack_tensor.isposinf`."""
        isposinf = ABOVE.isposinf
        return isposinf(self)

    def isneginf(self):
        """Where ``self`` is -inf; see :func:`gradstack_tensor.isneginf`."""
        isneginf = ABOVE.isneginf
        return isneginf(self)

    def isreal(self):
        """Everywhere True for a real tensor; see :func:`gradstack_tensor.isreal`."""
        isreal = ABOVE.isreal
        return isreal(self)

    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
        """The distinct elements; see :func:`gradstack_tensor.unique`."""
        unique = ABOVE.unique
        return unique(self, sorted, return_inverse, return_counts, dim)

    def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
        """Runs of equal elements kept once; see :func:`gradstack_tensor.unique_consecutive`."""
        unique_consecutive = ABOVE.unique_consecutive
        return unique_consecutive(self, return_inverse, return_counts, dim)

    def broadcast_to(self, size):
        """``self.expand(size)``; see :func:`gradstack_tensor.broadcast_to`."""
        broadcast_to = ABOVE.broadcast_to
        return broadcast_to(self, size)

    def tile(self, *dims):
        """``self`` repeated along each dim; see :func:`gradstack_tensor.tile`."""
        tile = ABOVE.tile
        return tile(self, dims[0] if len(dims) == 1 and not isinstance(dims[0], int) else dims)

    def repeat_interleave(self, *args, **kwargs):
        """Each element repeated in a row; see :func:`gradstack_tensor.repeat_interleave`."""
        repeat_interleave = ABOVE.repeat_interleave
        return repeat_interleave(self, *args, **kwargs)

    def roll(self, shifts, dims=None):
        """Elements shifted with wrap-around; see :func:`gradstack_tensor.roll`."""
        roll = ABOVE.roll
        return roll(self, shifts, dims)

    def diff(self, n=1, dim=-1, prepend=None, append=None):
        """The ``n``-th forward difference; see :func:`gradstack_tensor.diff`."""
        diff = ABOVE.diff
        return diff(self, n, dim, prepend, append)

    def swapdims(self, dim0, dim1):
        """``self.transpose(dim0, dim1)``."""
        return self.transpose(dim0, dim1)

    def fliplr(self):
        """Flipped along dim 1; see :func:`gradstack_tensor.fliplr`."""
        fliplr = ABOVE.fliplr
        return fliplr(self)

    def flipud(self):
        """Flipped along dim 0; see :func:`gradstack_tensor.flipud`."""
        flipud = ABOVE.flipud
        return flipud(self)

    def unflatten(self, dim, sizes):
        """Dim ``dim`` viewed as ``sizes``; see :func:`gradstack_tensor.unflatten`."""
        unflatten = ABOVE.unflatten
        return unflatten(self, dim, sizes)

    def tensor_split(self, indices_or_sections, dim=0):
        """Views along ``dim``; see :func:`gradstack_tensor.tensor_split`."""
        tensor_split = ABOVE.tensor_split
        return tensor_split(self, indices_or_sections, dim)

    def hsplit(self, indices_or_sections):
        """See :func:`gradstack_tensor.hsplit`."""
        hsplit = ABOVE.hsplit
        return hsplit(self, indices_or_sections)

    def vsplit(self, indices_or_sections):
        """See :func:`gradstack_tensor.vsplit`."""
        vsplit = ABOVE.vsplit
        return vsplit(self, indices_or_sections)

    def dsplit(self, indices_or_sections):
        """See :func:`gradstack_tensor.dsplit`."""
        dsplit = ABOVE.dsplit
        return dsplit(self, indices_or_sections)

    def inner(self, other):
        """Sums of products over the last dims; see :func:`gradstack_tensor.inner`."""
        inner = ABOVE.inner
        return inner(self, other)

    def kron(self, other):
        """The Kronecker product; see :func:`gradstack_tensor.kron`."""
        kron = ABOVE.kron
        return kron(self, other)

    def histc(self, bins=100, min=0, max=0):
        """A histogram with ``bins`` equal bins; see :func:`gradstack_tensor.histc`."""
        histc = ABOVE.histc
        return histc(self, bins, min, max)

    def histogram(self, bins=100, *, range=None, weight=None, density=False):
        """``(hist, bin_edges)`` of this tensor's values; see
        :func:`gradstack_tensor.histogram`."""
        histogram = ABOVE.histogram
        return histogram(self, bins, range=range, weight=weight, density=density)
