# The small-array C loops (Note [Small float arrays take C loops] in _loops.pyx).
cimport numpy as cnp

cdef enum BinCode:
    B_ADD = 1
    B_SUB = 2
    B_MUL = 3
    B_DIV = 4

cdef enum UnCode:
    U_NEG = 1
    U_EXP = 2
    U_LOG = 3
    U_SQRT = 4
    U_SIN = 5
    U_COS = 6
    U_TANH = 7
    U_SIGMOID = 8
    U_RELU = 9
    U_ABS = 10

# (the op name -> code maps are the Python dicts BINARY_CODES and UNARY_CODES)


cdef inline bint is_float_num(int num) noexcept:
    """Whether a numpy type number is a float dtype (float16, float32, float64)."""
    return num == cnp.NPY_FLOAT or num == cnp.NPY_DOUBLE or num == cnp.NPY_FLOAT16


cdef inline bint small_float(cnp.ndarray a):
    """Whether ``a`` is a C-contiguous float32/float64 array a C loop takes."""
    return (cnp.PyArray_SIZE(a) <= 4096 and cnp.PyArray_ISCARRAY_RO(a)
            and (cnp.PyArray_TYPE(a) == cnp.NPY_FLOAT or cnp.PyArray_TYPE(a) == cnp.NPY_DOUBLE))

cdef object small_binary(int code, object x, object y)
cdef object small_unary(int code, cnp.ndarray ax)
cdef object small_sum(cnp.ndarray x)
cdef object relu_float(cnp.ndarray x)
cdef object pow_double_by_number(cnp.ndarray x, double y)
cdef Py_ssize_t unary_limit(int code, int num) noexcept
cdef bint has_zero(cnp.ndarray a)
cdef bint sigmoid_tail(cnp.ndarray x, cnp.ndarray out)
