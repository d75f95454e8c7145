# cython: language_level=3
# What the layer loops of _recurrent_layers.pyx take from the cells' module: the kinds of
# cell, the Cell struct the row drivers run, and the argument checks.

cimport numpy as cnp

cdef enum:
    LSTM_FORWARD = 0
    LSTM_BACKWARD = 1
    GRU_FORWARD = 2
    GRU_BACKWARD = 3


cdef struct Cell:
    int kind
    Py_ssize_t H
    void* a[6]      # inputs
    void* out[3]    # outputs


cdef inline void* _ptr(object a):
    return cnp.PyArray_DATA(<cnp.ndarray>a)


cdef int run_cell_rows_f32(const Cell* c, Py_ssize_t rows, int nthreads) noexcept nogil
cdef int cell_threads(Py_ssize_t rows, Py_ssize_t H) noexcept nogil
cdef int _check_2d(str func, str name, object a, int typenum, Py_ssize_t rows,
                   Py_ssize_t cols) except -1
cdef int _check_bias(str func, str name, object b, int typenum, Py_ssize_t cols) except -1
cdef cnp.ndarray _empty(Py_ssize_t rows, Py_ssize_t cols, int typenum)
