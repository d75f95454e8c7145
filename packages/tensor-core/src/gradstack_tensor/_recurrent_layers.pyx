# cython: language_level=3
"""A float32 LSTM or GRU layer's steps in one C loop, forward and backward (Note [A
layer's steps in one C loop]): per step the packed product of ``_recurrent_gemm.pyx`` and
the fused cell's rows of ``_rnn_kernels.pyx``, written straight into the layer's outputs.

tensor-core's ``_lstm_layer``/``_gru_layer`` (``_impl_rnn.py``) run the forward loops and
graph-engine's derivative rows (``derivatives/rnn.py``) the backward ones, for float32
layers of at most 64 rows a step; anything else takes their Python steps.  Public as
``gradstack_tensor.kernels``.  Arguments are checked (dtype, layout, shapes) before
memory is touched; each function returns None where the AVX2 panel kernel cannot run.

Examples
--------
>>> import numpy as np
>>> from gradstack_tensor.kernels import gru_layer_forward, pack_panels
>>> w = pack_panels(np.zeros((3, 1), np.float32), transposed=True)
>>> gru_layer_forward(np.zeros((1, 1, 3), np.float32), np.ones((1, 1), np.float32), w)[0]
array([[[0.5]]], dtype=float32)
"""

cimport numpy as cnp
from libc.string cimport memset

from ._kernels cimport _check_input
from ._recurrent_gemm cimport panel_kernel_available, panel_matmul_into
from ._rnn_kernels cimport (
    GRU_BACKWARD, GRU_FORWARD, LSTM_BACKWARD, LSTM_FORWARD, Cell, _check_2d, _check_bias,
    _empty, _ptr, cell_threads, run_cell_rows_f32,
)

import numpy as np

cnp.import_array()

__all__ = [
    "gru_layer_backward",
    "gru_layer_forward",
    "lstm_layer_backward",
    "lstm_layer_forward",
]


# Note [A layer's steps in one C loop]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A layer's direction (tensor-core's ``_lstm_layer``/``_gru_layer``, Note [A recurrent
# layer is one op] in _impl_rnn.py) ran its steps in Python: per step the packed product,
# the cell kernel (new arrays) and copies of its results into the layer's outputs; the
# backward, per step, the sums of the incoming gradients, the cell's backward kernel, a
# copy of its gate gradients and the product by W_hh.  For the LSTM at T = 30, N = 20,
# H = 256 that was ~0.5 ms of the forward's 5.4 and ~0.8 ms of the backward's 9.3 (one
# thread, CPU time) beyond the kernels themselves.  These loops run the same steps in C:
# the packed product (``panel_matmul_into``, the bits of ``panel_matmul``) into one
# scratch array, the cell's rows (``_lstm_forward_rows`` ... ``_gru_backward_rows``, the
# bits of the cell kernels) written straight into the layer's outputs, the gradient sums
# (``grad_out[t] + gh``; the GRU's ``ghx + dhg W_hh``: one float rounding each, as
# numpy's) into scratch rows.  float32 only, with the AVX2
# panel kernel: the callers take the Python steps otherwise (float64, another CPU).

# Note [The initial state's product only when wanted]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The backward's product ``dgates W_hh`` of the forward's first step feeds nothing but
# the initial state's gradient.  A layer called without ``h0`` (zeros made inside it: the
# LSTM LM, a GRU encoder) wants none, so with ``need_hx=False`` (graph-engine passes the
# node's ``needs_input_grad``) the loops stop after that step's cell: one of the T
# products of the recurrence, ~3% of the LSTM LM layer's backward.  The other results
# are the same bits.


cdef int _check_3d(str func, str name, object a, Py_ssize_t steps, Py_ssize_t rows,
                   Py_ssize_t cols) except -1:
    if _check_input(func, name, a) != cnp.NPY_FLOAT:
        raise TypeError(f"{func}: {name} must be float32, got {a.dtype}")
    if a.ndim != 3 or a.shape[0] != steps or a.shape[1] != rows or a.shape[2] != cols:
        raise ValueError(
            f"{func}: {name} must have shape ({steps}, {rows}, {cols}), got {tuple(a.shape)}"
        )
    return 0


cdef int _check_panels(str func, object panels, Py_ssize_t k, Py_ssize_t n) except -1:
    if _check_input(func, "panels", panels) != cnp.NPY_FLOAT:
        raise TypeError(f"{func}: panels must be float32, got {panels.dtype}")
    if panels.ndim != 3 or panels.shape[0] != (n + 15) // 16 or panels.shape[1] != k \
            or panels.shape[2] != 16:
        raise ValueError(
            f"{func}: panels must have shape ({(n + 15) // 16}, {k}, 16) (pack_panels of "
            f"the ({k}, {n}) matrix), got {tuple(panels.shape)}"
        )
    return 0


cdef cnp.ndarray _empty3(Py_ssize_t a, Py_ssize_t b, Py_ssize_t c):
    cdef cnp.npy_intp dims[3]
    dims[0] = a
    dims[1] = b
    dims[2] = c
    return cnp.PyArray_EMPTY(3, dims, cnp.NPY_FLOAT, 0)


def lstm_layer_forward(input_gates, hx, cx, panels, hidden_bias=None, bint reverse=False):
    """The steps of an LSTM layer's direction in one C loop (Note [A layer's steps in one C
    loop]): per step ``h W_hh^T [+ b_hh]`` from ``W_hh^T``'s panels and the fused cell
    (:func:`lstm_cell_forward`).

    Parameters
    ----------
    input_gates : ndarray
        ``(T, N, 4 H)`` float32, C-contiguous: ``x W_ih^T + b_ih`` of every step.
    hx, cx : ndarray
        ``(N, H)`` float32: the initial states.
    panels : ndarray
        ``pack_panels(W_hh, transposed=True)``, ``(4 H / 16, H, 16)`` (rounded up).
    hidden_bias : ndarray or None
        ``(4 H,)`` float32, added to each step's product.
    reverse : bool
        Run the steps from the last to the first.

    Returns
    -------
    (output, cell_states, workspace) : tuple of ndarray or None
        ``(T, N, H)``, ``(T, N, H)``, ``(T, N, 4 H)``: every step's hidden and cell state
        and the cells' workspaces; None when the panel kernel cannot run on this CPU (the
        caller then runs the steps itself).

    Raises
    ------
    TypeError, ValueError
        Arrays that are not float32 and C-contiguous, or shapes that do not fit.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import lstm_layer_forward, pack_panels
    >>> w = np.zeros((4, 1), np.float32)
    >>> out, cells, ws = lstm_layer_forward(np.zeros((2, 1, 4), np.float32),
    ...     np.zeros((1, 1), np.float32), np.ones((1, 1), np.float32),
    ...     pack_panels(w, transposed=True))
    >>> cells.ravel().tolist()
    [0.5, 0.25]
    """
    cdef str func = "lstm_layer_forward"
    if _check_input(func, "input_gates", input_gates) != cnp.NPY_FLOAT:
        raise TypeError(f"{func}: input_gates must be float32, got {input_gates.dtype}")
    if input_gates.ndim != 3 or input_gates.shape[2] % 4:
        raise ValueError(
            f"{func}: input_gates must have shape (T, N, 4 * H), got {tuple(input_gates.shape)}"
        )
    cdef Py_ssize_t T = input_gates.shape[0], N = input_gates.shape[1]
    cdef Py_ssize_t H = input_gates.shape[2] // 4, G = 4 * H
    _check_2d(func, "hx", hx, cnp.NPY_FLOAT, N, H)
    _check_2d(func, "cx", cx, cnp.NPY_FLOAT, N, H)
    _check_panels(func, panels, H, G)
    _check_bias(func, "hidden_bias", hidden_bias, cnp.NPY_FLOAT, G)
    if not panel_kernel_available():
        return None
    cdef cnp.ndarray out = _empty3(T, N, H)
    cdef cnp.ndarray cells = _empty3(T, N, H)
    cdef cnp.ndarray work = _empty3(T, N, G)
    cdef cnp.ndarray hg = _empty(N, G, cnp.NPY_FLOAT)
    cdef const float* ig = <const float*>_ptr(input_gates)
    cdef const float* pp = <const float*>_ptr(panels)
    cdef const float* pb = NULL if hidden_bias is None else <const float*>_ptr(hidden_bias)
    cdef float* po = <float*>_ptr(out)
    cdef float* pc = <float*>_ptr(cells)
    cdef float* pw = <float*>_ptr(work)
    cdef float* phg = <float*>_ptr(hg)
    cdef const float* h = <const float*>_ptr(hx)
    cdef const float* c0 = <const float*>_ptr(cx)
    cdef Py_ssize_t i, t
    cdef int failed = 0
    cdef int nthreads = cell_threads(N, H)
    cdef Cell cell
    cell.kind = LSTM_FORWARD
    cell.H = H
    cell.a[3] = NULL
    cell.a[4] = NULL
    if N == 0 or H == 0:
        return out, cells, work
    with nogil:
        for i in range(T):
            t = T - 1 - i if reverse else i
            panel_matmul_into(h, pp, pb, phg, N, H, G)
            cell.a[0] = <void*>(ig + t * N * G)
            cell.a[1] = <void*>phg
            cell.a[2] = <void*>c0
            cell.out[0] = <void*>(po + t * N * H)
            cell.out[1] = <void*>(pc + t * N * H)
            cell.out[2] = <void*>(pw + t * N * G)
            failed = run_cell_rows_f32(&cell, N, nthreads)
            if failed:
                break
            h = po + t * N * H
            c0 = pc + t * N * H
    if failed:
        raise MemoryError(f"{func}: cannot allocate a scratch row of {G} values")
    return out, cells, work


cdef inline void _sum_rows(const float* a, const float* b, float* out,
                           Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t j
    for j in range(n):
        out[j] = a[j] + b[j]


def lstm_layer_backward(grad_output, grad_cells, cx, cells, workspace, panels,
                        bint reverse=False, bint need_hx=True):
    """The steps of an LSTM layer's backward in one C loop (Note [A layer's steps in one C
    loop]): from the forward's last step to its first, the cell's backward
    (:func:`lstm_cell_backward`) on the step's incoming gradients plus those from the step
    after it, and the hidden state's gradient ``dgates W_hh`` from ``W_hh``'s panels.

    Parameters
    ----------
    grad_output, grad_cells : ndarray or None
        ``(T, N, H)`` float32 gradients of every step's hidden and cell state (None: zero).
    cx : ndarray
        ``(N, H)``: the initial cell state.
    cells, workspace : ndarray
        ``(T, N, H)`` and ``(T, N, 4 H)``: the forward's cell states and workspaces.
    panels : ndarray
        ``pack_panels(W_hh)``, ``(H / 16, 4 H, 16)`` (rounded up).
    reverse : bool
        Whether the forward ran from the last step to the first.
    need_hx : bool
        Whether to compute ``grad_hx``: without it the first step's ``dgates W_hh`` (the
        initial state's gradient, the only use of that product) is skipped and
        ``grad_hx`` is None (Note [The initial state's product only when wanted]).

    Returns
    -------
    (grad_gates, grad_hx, grad_cx) : tuple of ndarray or None
        ``(T, N, 4 H)`` (zeros for the steps no gradient reached), ``(N, H)`` (None
        without ``need_hx``), ``(N, H)``; None when the panel kernel cannot run on this
        CPU.

    Raises
    ------
    TypeError, ValueError
        As :func:`lstm_layer_forward`.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import lstm_layer_backward, lstm_layer_forward
    >>> from gradstack_tensor.kernels import pack_panels
    >>> w = np.zeros((4, 1), np.float32)
    >>> x, h0, c0 = np.zeros((1, 1, 4), np.float32), np.zeros((1, 1), np.float32), np.ones(
    ...     (1, 1), np.float32)
    >>> out, cells, ws = lstm_layer_forward(x, h0, c0, pack_panels(w, transposed=True))
    >>> g, ghx, gcx = lstm_layer_backward(None, np.ones((1, 1, 1), np.float32), c0, cells, ws,
    ...                                   pack_panels(w))
    >>> g.ravel().tolist(), gcx.tolist()
    ([0.0, 0.25, 0.5, 0.0], [[0.5]])
    """
    cdef str func = "lstm_layer_backward"
    if _check_input(func, "workspace", workspace) != cnp.NPY_FLOAT:
        raise TypeError(f"{func}: workspace must be float32, got {workspace.dtype}")
    if workspace.ndim != 3 or workspace.shape[2] % 4:
        raise ValueError(
            f"{func}: workspace must have shape (T, N, 4 * H), got {tuple(workspace.shape)}"
        )
    cdef Py_ssize_t T = workspace.shape[0], N = workspace.shape[1]
    cdef Py_ssize_t H = workspace.shape[2] // 4, G = 4 * H
    _check_3d(func, "cells", cells, T, N, H)
    if grad_output is not None:
        _check_3d(func, "grad_output", grad_output, T, N, H)
    if grad_cells is not None:
        _check_3d(func, "grad_cells", grad_cells, T, N, H)
    _check_2d(func, "cx", cx, cnp.NPY_FLOAT, N, H)
    _check_panels(func, panels, G, H)
    if not panel_kernel_available():
        return None
    cdef cnp.ndarray dgates = _empty3(T, N, G)
    cdef cnp.ndarray gh = np.zeros((N, H), np.float32)
    cdef cnp.ndarray gc = np.zeros((N, H), np.float32)
    cdef cnp.ndarray gc_next = np.empty((N, H), np.float32)
    cdef cnp.ndarray hsum = np.zeros((N, H), np.float32)
    cdef cnp.ndarray csum = np.zeros((N, H), np.float32)
    cdef const float* go = NULL if grad_output is None else <const float*>_ptr(grad_output)
    cdef const float* gcs = NULL if grad_cells is None else <const float*>_ptr(grad_cells)
    cdef const float* pcx = <const float*>_ptr(cx)
    cdef const float* pcells = <const float*>_ptr(cells)
    cdef const float* pws = <const float*>_ptr(workspace)
    cdef const float* pp = <const float*>_ptr(panels)
    cdef float* pd = <float*>_ptr(dgates)
    cdef float* pgh = <float*>_ptr(gh)
    cdef float* pgc = <float*>_ptr(gc)
    cdef float* pgc_next = <float*>_ptr(gc_next)
    cdef float* phs = <float*>_ptr(hsum)
    cdef float* pcs = <float*>_ptr(csum)
    cdef float* swap
    cdef const float* ghy
    cdef const float* gcy
    cdef const float* c_prev
    cdef Py_ssize_t i, t, NH = N * H
    cdef bint have_h = False, have_c = False    # a step after this one had a gradient
    cdef int failed = 0
    cdef int nthreads = cell_threads(N, H)
    cdef Cell cell
    cell.kind = LSTM_BACKWARD
    cell.H = H
    if N == 0 or H == 0:
        dgates.fill(0)
        return dgates, (gh if need_hx else None), gc
    with nogil:
        for i in range(T):
            t = i if reverse else T - 1 - i     # the forward's steps, last first
            # the incoming gradients, as the Python steps: grad[t] + (the later step's)
            if go != NULL and have_h:
                _sum_rows(go + t * NH, pgh, phs, NH)
                ghy = phs
            elif go != NULL:
                ghy = go + t * NH
            elif have_h:
                ghy = pgh
            else:
                ghy = NULL
            if gcs != NULL and have_c:
                _sum_rows(gcs + t * NH, pgc, pcs, NH)
                gcy = pcs
            elif gcs != NULL:
                gcy = gcs + t * NH
            elif have_c:
                gcy = pgc
            else:
                gcy = NULL
            if ghy == NULL and gcy == NULL:
                memset(pd + t * N * G, 0, N * G * sizeof(float))
                continue
            if ghy == NULL or gcy == NULL:      # the missing one is zeros
                memset(phs if ghy == NULL else pcs, 0, NH * sizeof(float))
                if ghy == NULL:
                    ghy = phs
                else:
                    gcy = pcs
            if reverse:
                c_prev = pcx if t == T - 1 else pcells + (t + 1) * NH
            else:
                c_prev = pcx if t == 0 else pcells + (t - 1) * NH
            cell.a[0] = <void*>ghy
            cell.a[1] = <void*>gcy
            cell.a[2] = <void*>c_prev
            cell.a[3] = <void*>(pcells + t * NH)
            cell.a[4] = <void*>(pws + t * N * G)
            cell.out[0] = <void*>(pd + t * N * G)
            cell.out[1] = <void*>pgc_next
            failed = run_cell_rows_f32(&cell, N, nthreads)
            if failed:
                break
            swap = pgc
            pgc = pgc_next
            pgc_next = swap
            have_c = True
            if i == T - 1 and not need_hx:
                break
            panel_matmul_into(pd + t * N * G, pp, NULL, pgh, N, G, H)
            have_h = True
    if failed:
        raise MemoryError(f"{func}: cannot allocate a scratch row of {H} values")
    # the last gradient of the cell state is in whichever buffer pgc points to
    grad_cx = gc if pgc == <float*>_ptr(gc) else gc_next
    if not have_c:
        grad_cx = np.zeros((N, H), np.float32)
    return dgates, (gh if need_hx else None), grad_cx


def gru_layer_forward(input_gates, hx, panels, hidden_bias=None, bint reverse=False):
    """The steps of a GRU layer's direction in one C loop (Note [A layer's steps in one C
    loop]): per step ``h W_hh^T [+ b_hh]`` from ``W_hh^T``'s panels and the fused cell
    (:func:`gru_cell_forward`).

    Parameters
    ----------
    input_gates : ndarray
        ``(T, N, 3 H)`` float32, C-contiguous: ``x W_ih^T + b_ih`` of every step.
    hx : ndarray
        ``(N, H)`` float32: the initial state.
    panels : ndarray
        ``pack_panels(W_hh, transposed=True)``, ``(3 H / 16, H, 16)`` (rounded up).
    hidden_bias : ndarray or None
        ``(3 H,)`` float32, added to each step's product.
    reverse : bool
        Run the steps from the last to the first.

    Returns
    -------
    (output, workspace) : tuple of ndarray or None
        ``(T, N, H)`` and ``(T, N, 5 H)``; None when the panel kernel cannot run on this
        CPU (the caller then runs the steps itself).

    Raises
    ------
    TypeError, ValueError
        Arrays that are not float32 and C-contiguous, or shapes that do not fit.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import gru_layer_forward, pack_panels
    >>> out, ws = gru_layer_forward(np.zeros((2, 1, 3), np.float32), np.ones((1, 1), np.float32),
    ...                             pack_panels(np.zeros((3, 1), np.float32), transposed=True))
    >>> out.ravel().tolist()
    [0.5, 0.25]
    """
    cdef str func = "gru_layer_forward"
    if _check_input(func, "input_gates", input_gates) != cnp.NPY_FLOAT:
        raise TypeError(f"{func}: input_gates must be float32, got {input_gates.dtype}")
    if input_gates.ndim != 3 or input_gates.shape[2] % 3:
        raise ValueError(
            f"{func}: input_gates must have shape (T, N, 3 * H), got {tuple(input_gates.shape)}"
        )
    cdef Py_ssize_t T = input_gates.shape[0], N = input_gates.shape[1]
    cdef Py_ssize_t H = input_gates.shape[2] // 3, G = 3 * H, W = 5 * H
    _check_2d(func, "hx", hx, cnp.NPY_FLOAT, N, H)
    _check_panels(func, panels, H, G)
    _check_bias(func, "hidden_bias", hidden_bias, cnp.NPY_FLOAT, G)
    if not panel_kernel_available():
        return None
    cdef cnp.ndarray out = _empty3(T, N, H)
    cdef cnp.ndarray work = _empty3(T, N, W)
    cdef cnp.ndarray hg = _empty(N, G, cnp.NPY_FLOAT)
    cdef const float* ig = <const float*>_ptr(input_gates)
    cdef const float* pp = <const float*>_ptr(panels)
    cdef const float* pb = NULL if hidden_bias is None else <const float*>_ptr(hidden_bias)
    cdef float* po = <float*>_ptr(out)
    cdef float* pw = <float*>_ptr(work)
    cdef float* phg = <float*>_ptr(hg)
    cdef const float* h = <const float*>_ptr(hx)
    cdef Py_ssize_t i, t
    cdef int failed = 0
    cdef int nthreads = cell_threads(N, H)
    cdef Cell cell
    cell.kind = GRU_FORWARD
    cell.H = H
    cell.a[3] = NULL
    cell.a[4] = NULL
    if N == 0 or H == 0:
        return out, work
    with nogil:
        for i in range(T):
            t = T - 1 - i if reverse else i
            panel_matmul_into(h, pp, pb, phg, N, H, G)
            cell.a[0] = <void*>(ig + t * N * G)
            cell.a[1] = <void*>phg
            cell.a[2] = <void*>h
            cell.out[0] = <void*>(po + t * N * H)
            cell.out[1] = <void*>(pw + t * N * W)
            failed = run_cell_rows_f32(&cell, N, nthreads)
            if failed:
                break
            h = po + t * N * H
    if failed:
        raise MemoryError(f"{func}: cannot allocate a scratch row of {2 * H} values")
    return out, work


def gru_layer_backward(grad_output, workspace, panels, bint reverse=False,
                       bint need_hx=True):
    """The steps of a GRU layer's backward in one C loop (Note [A layer's steps in one C
    loop]): from the forward's last step to its first, the cell's backward
    (:func:`gru_cell_backward`) on the step's output gradient plus the one from the step
    after it, which is ``grad_hx + grad_hidden_gates W_hh`` (``W_hh``'s panels).

    Parameters
    ----------
    grad_output : ndarray
        ``(T, N, H)`` float32: the gradient of every step's hidden state.
    workspace : ndarray
        ``(T, N, 5 H)``: the forward's workspaces.
    panels : ndarray
        ``pack_panels(W_hh)``, ``(H / 16, 3 H, 16)`` (rounded up).
    reverse : bool
        Whether the forward ran from the last step to the first.
    need_hx : bool
        Whether to compute ``grad_hx``: without it the first step's ``dgates W_hh`` is
        skipped and ``grad_hx`` is None (Note [The initial state's product only when
        wanted]).

    Returns
    -------
    (grad_input_gates, grad_hidden_gates, grad_hx) : tuple of ndarray or None
        ``(T, N, 3 H)`` twice and ``(N, H)`` (None without ``need_hx``); None when the
        panel kernel cannot run on this CPU.

    Raises
    ------
    TypeError, ValueError
        As :func:`gru_layer_forward`.

    Examples
    --------
    >>> import numpy as np
    >>> from gradstack_tensor.kernels import gru_layer_backward, gru_layer_forward
    >>> from gradstack_tensor.kernels import pack_panels
    >>> w = np.zeros((3, 1), np.float32)
    >>> out, ws = gru_layer_forward(np.zeros((1, 1, 3), np.float32), np.ones((1, 1), np.float32),
    ...                             pack_panels(w, transposed=True))
    >>> gi, gh, ghx = gru_layer_backward(np.ones((1, 1, 1), np.float32), ws, pack_panels(w))
    >>> gi.ravel().tolist(), gh.ravel().tolist(), ghx.tolist()
    ([0.0, 0.25, 0.5], [0.0, 0.25, 0.25], [[0.5]])
    """
    cdef str func = "gru_layer_backward"
    if _check_input(func, "workspace", workspace) != cnp.NPY_FLOAT:
        raise TypeError(f"{func}: workspace must be float32, got {workspace.dtype}")
    if workspace.ndim != 3 or workspace.shape[2] % 5:
        raise ValueError(
            f"{func}: workspace must have shape (T, N, 5 * H), got {tuple(workspace.shape)}"
        )
    cdef Py_ssize_t T = workspace.shape[0], N = workspace.shape[1]
    cdef Py_ssize_t H = workspace.shape[2] // 5, G = 3 * H, W = 5 * H
    _check_3d(func, "grad_output", grad_output, T, N, H)
    _check_panels(func, panels, G, H)
    if not panel_kernel_available():
        return None
    cdef cnp.ndarray dig = _empty3(T, N, G)
    cdef cnp.ndarray dhg = _empty3(T, N, G)
    cdef cnp.ndarray gh = np.zeros((N, H), np.float32)
    cdef cnp.ndarray ghx = np.empty((N, H), np.float32)
    cdef cnp.ndarray prod = np.empty((N, H), np.float32)
    cdef cnp.ndarray hsum = np.empty((N, H), np.float32)
    cdef const float* go = <const float*>_ptr(grad_output)
    cdef const float* pws = <const float*>_ptr(workspace)
    cdef const float* pp = <const float*>_ptr(panels)
    cdef float* pdi = <float*>_ptr(dig)
    cdef float* pdh = <float*>_ptr(dhg)
    cdef float* pgh = <float*>_ptr(gh)
    cdef float* pghx = <float*>_ptr(ghx)
    cdef float* pprod = <float*>_ptr(prod)
    cdef float* phs = <float*>_ptr(hsum)
    cdef const float* ghy
    cdef Py_ssize_t i, t, NH = N * H
    cdef bint have_h = False
    cdef int nthreads = cell_threads(N, H)
    cdef Cell cell
    cell.kind = GRU_BACKWARD
    cell.H = H
    if N == 0 or H == 0:
        return dig, dhg, (gh if need_hx else None)
    with nogil:
        for i in range(T):
            t = i if reverse else T - 1 - i     # the forward's steps, last first
            if have_h:                          # grad_out[t] + gh, as the Python steps
                _sum_rows(go + t * NH, pgh, phs, NH)
                ghy = phs
            else:
                ghy = go + t * NH
            cell.a[0] = <void*>ghy
            cell.a[1] = <void*>(pws + t * N * W)
            cell.out[0] = <void*>(pdi + t * N * G)
            cell.out[1] = <void*>(pdh + t * N * G)
            cell.out[2] = <void*>pghx
            run_cell_rows_f32(&cell, N, nthreads)
            if i == T - 1 and not need_hx:
                break
            panel_matmul_into(pdh + t * N * G, pp, NULL, pprod, N, G, H)
            _sum_rows(pghx, pprod, pgh, NH)     # ghx + dhg W_hh
            have_h = True
    return dig, dhg, (gh if need_hx else None)
