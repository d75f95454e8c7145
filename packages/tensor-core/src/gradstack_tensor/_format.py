"""Tensor printing: ``repr(tensor)`` byte for byte as PyTorch writes it.

This is a port of ``torch/_tensor_str.py`` (PyTorch 2.x) onto numpy arrays, restricted
to what gradstack has: dense CPU tensors of the real dtypes (float16/32/64, int8/16/32/64,
uint8, bool). :func:`format_tensor` takes a tensor's numpy storage plus what the Tensor
knows about itself (its dtype's printed name, whether that dtype is a default one, and the
autograd suffixes) and returns the string; the print options are module state, changed
with :func:`set_printoptions` exactly as ``torch.set_printoptions`` changes torch's.

The pipeline is the same as torch's:

1. *Summarise.* Above ``threshold`` elements, keep only ``edgeitems`` entries at each end
   of every long axis (:func:`_summarized`).
2. *Choose a style* from the kept values: one format and one column width for the whole
   tensor (:func:`_float_style`, :func:`_cells`).
3. *Lay out* the cells: vectors wrap at ``linewidth``, higher dimensions nest with one
   blank line per extra dimension, ``...`` marks what summarising dropped
   (:func:`_render`).
4. *Append suffixes* (``size=``, ``dtype=``, ``requires_grad=``/``grad_fn=``), breaking
   the line before one that would not fit (:func:`_add_suffixes`).

Examples
--------
>>> import math
>>> import numpy as np
>>> from gradstack_tensor._format import format_tensor
>>> a = np.linspace(0.0, 2 * math.pi, 25, dtype=np.float32)
>>> print(format_tensor(a, dtype_name="gradstack.float32", is_default_dtype=True,
...                     suffixes=["requires_grad=True"]))
tensor([0.0000, 0.2618, 0.5236, 0.7854, 1.0472, 1.3090, 1.5708, 1.8326, 2.0944,
        2.3562, 2.6180, 2.8798, 3.1416, 3.4034, 3.6652, 3.9270, 4.1888, 4.4506,
        4.7124, 4.9742, 5.2360, 5.4978, 5.7596, 6.0214, 6.2832],
       requires_grad=True)
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import ml_dtypes
import numpy as np

__all__ = ["format_tensor", "set_printoptions", "get_printoptions", "printoptions"]

_BFLOAT16 = np.dtype(ml_dtypes.bfloat16)


@dataclasses.dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrintOptions()

_PROFILES: dict[str, dict[str, Any]] = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set the options used to print tensors (``torch.set_printoptions``).

    Parameters
    ----------
    precision : int, optional
        Digits after the decimal point for floating point values (default 4).
    threshold : float, optional
        Tensors with more elements than this are summarised (default 1000).
    edgeitems : int, optional
        Entries kept at each end of every axis when summarising (default 3).
    linewidth : int, optional
        Characters per line before a vector wraps (default 80).
    profile : {"default", "short", "full"}, optional
        Preset applied first; the other arguments then override it. ``"short"`` is
        precision 2 with 2 edge items, ``"full"`` never summarises. Any other name is
        ignored, as torch ignores it.
    sci_mode : bool, optional
        Force (True) or forbid (False) scientific notation. Unlike the other options
        this one is always assigned: omitting it resets it to ``None``, which lets each
        tensor's values decide (see Note [When scientific notation is used]).

    Examples
    --------
    >>> import numpy as np
    >>> set_printoptions(precision=2)
    >>> print(format_tensor(np.array([1.12345]), dtype_name="gradstack.float64",
    ...                     is_default_dtype=False))
    tensor([1.12], dtype=gradstack.float64)
    >>> set_printoptions(threshold=5)
    >>> print(format_tensor(np.arange(10), dtype_name="gradstack.int64",
    ...                     is_default_dtype=True))
    tensor([0, 1, 2,  ..., 7, 8, 9])
    >>> set_printoptions(profile="default")
    >>> get_printoptions()["precision"]
    4
    """
    if profile is not None:
        for name, value in _PROFILES.get(profile, {}).items():
            setattr(PRINT_OPTS, name, value)
    for name, value in [
        ("precision", precision),
        ("threshold", threshold),
        ("edgeitems", edgeitems),
        ("linewidth", linewidth),
    ]:
        if value is not None:
            setattr(PRINT_OPTS, name, value)
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """Return the current print options as a dict accepted by :func:`set_printoptions`.

    Returns
    -------
    dict
        Keys ``precision``, ``threshold``, ``edgeitems``, ``linewidth`` and ``sci_mode``.

    Examples
    --------
    >>> get_printoptions()
    {'precision': 4, 'threshold': 1000, 'edgeitems': 3, 'linewidth': 80, 'sci_mode': None}
    """
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """Temporarily change the print options (``torch._tensor_str.printoptions``).

    Parameters
    ----------
    **kwargs
        As for :func:`set_printoptions`.

    Examples
    --------
    >>> import numpy as np
    >>> with printoptions(precision=1):
    ...     print(format_tensor(np.array([0.25, 0.5]), dtype_name="gradstack.float64",
    ...                         is_default_dtype=True))
    tensor([0.2, 0.5])
    >>> get_printoptions()["precision"]
    4
    """
    saved = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**saved)


def format_tensor(
    data: np.ndarray,
    *,
    dtype_name: str,
    is_default_dtype: bool,
    suffixes: Sequence[str] = (),
    prefix: str = "tensor(",
) -> str:
    """Format a tensor's values the way ``repr(torch.Tensor)`` does.

    Parameters
    ----------
    data : numpy.ndarray
        The tensor's values, of any shape (0-d and zero-size included) and strides.
        Its dtype must be a real numpy dtype (float, signed or unsigned int, bool).
    dtype_name : str
        Printed after ``dtype=``, e.g. ``"gradstack.float16"``.
    is_default_dtype : bool
        True when the ``dtype=`` suffix is omitted: torch omits it for the default
        floating dtype, int64 and bool. Empty tensors show it for every dtype but the
        default floating one (see Note [dtype of an empty tensor]).
    suffixes : sequence of str, optional
        Extra ``key=value`` strings appended in order after ``size=`` and ``dtype=``,
        e.g. ``"requires_grad=True"`` or ``"grad_fn=<MulBackward0>"``.
    prefix : str, optional
        Opens the string; continuation lines are indented by its length.

    Returns
    -------
    str
        The repr, identical to torch's for the same values, dtype, shape, suffixes
        and print options.

    Examples
    --------
    >>> import numpy as np
    >>> print(format_tensor(np.array([1.0, 2.0, 3.0], dtype=np.float32),
    ...                     dtype_name="gradstack.float32", is_default_dtype=True))
    tensor([1., 2., 3.])
    >>> print(format_tensor(np.array(math.pi), dtype_name="gradstack.float64",
    ...                     is_default_dtype=False, suffixes=["requires_grad=True"]))
    tensor(3.1416, dtype=gradstack.float64, requires_grad=True)
    >>> print(format_tensor(np.array([[1e-5, 1.0], [np.nan, -np.inf]]),
    ...                     dtype_name="gradstack.float64", is_default_dtype=True))
    tensor([[1.0000e-05, 1.0000e+00],
            [       nan,       -inf]])
    >>> print(format_tensor(np.zeros((0, 3), dtype=np.int64),
    ...                     dtype_name="gradstack.int64", is_default_dtype=True))
    tensor([], size=(0, 3), dtype=gradstack.int64)
    """
    data = np.asarray(data)
    if data.dtype == _BFLOAT16:  # its values exactly, in float32 (numpy kind "V")
        data = data.astype(np.float32)
    if data.dtype.kind not in "fiubc":
        raise TypeError(
            f"format_tensor: unsupported dtype {data.dtype} (expected a float, "
            "complex, integer or bool array)"
        )
    indent = len(prefix)
    leading = []
    if data.size == 0:
        # Note [dtype of an empty tensor]
        # ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
        # With no values to show, torch prints ``dtype=`` for every dtype except the
        # default floating one, so ``tensor([], dtype=torch.int64)`` even though int64
        # is otherwise implicit. ``is_default_dtype`` on a floating array means exactly
        # "this is the default floating dtype"; on int64 or bool it does not count.
        if data.ndim != 1:
            leading.append(f"size={data.shape}")
        if not (is_default_dtype and data.dtype.kind == "f"):
            leading.append(f"dtype={dtype_name}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            leading.append(f"size={data.shape}")
        if not is_default_dtype:
            leading.append(f"dtype={dtype_name}")
        body = _tensor_body(data, indent)
    return _add_suffixes(prefix + body, [*leading, *suffixes], indent)


def _tensor_body(data: np.ndarray, indent: int) -> str:
    """The bracketed values of a non-empty tensor (torch's ``_tensor_str``)."""
    edge = PRINT_OPTS.edgeitems
    summarize = data.size > PRINT_OPTS.threshold
    if summarize and not edge and data.ndim:
        return "[...]"
    cut = tuple(summarize and n > 2 * edge for n in data.shape)
    shown = _summarized(data, cut, edge)
    cells, width = _cells(shown)
    return _render(cells, indent, cut, width)


def _summarized(data: np.ndarray, cut: tuple[bool, ...], edge: int) -> np.ndarray:
    """Keep the first and last ``edge`` entries of every axis flagged in ``cut``.

    Note [Summarising is a per-axis take]
    ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    torch's ``get_summarized_data`` recurses row by row and stacks the pieces, but every
    sub-tensor at a given depth has the same length, so the result is simply the
    elements at indices ``[0, edge) + [n - edge, n)`` along each long axis. These are
    exactly the elements that get printed, and the only ones that decide the style.
    """
    for axis, is_cut in enumerate(cut):
        if is_cut:
            n = data.shape[axis]
            data = data.take(np.r_[0:edge, n - edge : n], axis=axis)
    return data


def _cells(shown: np.ndarray) -> tuple[np.ndarray, int]:
    """Format every shown value, right-aligned to a common width (torch's ``_Formatter``).

    Returns an object array of strings shaped like ``shown``, and the column width.
    Non-finite values and zeros do not widen the column (for floats), and cells longer
    than the width (``-inf``, ``-0.``) are left unpadded, both as in torch.
    """
    if shown.dtype.kind == "c":
        return _complex_cells(shown)
    if shown.dtype.kind == "f":
        # Note [Format the float64 values]
        # ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
        # torch formats ``tensor.tolist()`` / ``.item()``: Python floats, i.e. the exact
        # float64 images of the float16/float32 values, and decides its style in
        # float64 too. Working on a float64 copy reproduces both: a float32 ``1e-4`` is
        # 9.99999974e-05, below the 1e-4 cut-off, so torch prints ``1.0000e-04``; and the
        # digits come from the exact binary value, not from numpy's shortest repr.
        values = shown.astype(np.float64)
        keep = np.isfinite(values) & (values != 0)
        fmt = _float_formatter(values[keep])
        strs = [fmt(v) for v in values.ravel().tolist()]
        sized = [s for s, k in zip(strs, keep.ravel().tolist(), strict=True) if k]
    else:
        strs = [str(v) for v in shown.ravel().tolist()]
        sized = strs
    width = max(1, *map(len, sized)) if sized else 1
    cells = np.empty(len(strs), dtype=object)
    cells[:] = [s.rjust(width) for s in strs]
    return cells.reshape(shown.shape), width


def _part_strings(part: np.ndarray) -> tuple[list[str], int]:
    """One real part (``.real`` or ``.imag``) of a complex tensor, formatted as torch's
    ``_Formatter`` of that part formats it: each string padded to the part's width."""
    values = part.astype(np.float64)
    keep = np.isfinite(values) & (values != 0)
    fmt = _float_formatter(values[keep])
    strs = [fmt(v) for v in values.ravel().tolist()]
    sized = [s for s, k in zip(strs, keep.ravel().tolist(), strict=True) if k]
    width = max(1, *map(len, sized)) if sized else 1
    return [s.rjust(width) for s in strs], width


def _complex_cells(shown: np.ndarray) -> tuple[np.ndarray, int]:
    """Note [A complex value is two formatted parts]
    ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    torch formats the real and the imaginary parts with a formatter each (its own style
    and width, decided from that part's values), pads the real part to its width, and
    writes the imaginary part stripped of its padding with ``j`` and a sign:
    ``1.+2.j``, ``3.-1.j``.  A row wraps as if every cell were ``real width + imaginary
    width + 1`` wide (torch's ``_vector_str``), which is the width returned.
    """
    reals, w_real = _part_strings(shown.real)
    imags, w_imag = _part_strings(shown.imag)
    strs = []
    for r, i in zip(reals, imags, strict=True):
        i = (i + "j").lstrip()
        strs.append(r + i if i[0] in "+-" else r + "+" + i)
    cells = np.empty(len(strs), dtype=object)
    cells[:] = strs
    return cells.reshape(shown.shape), w_real + w_imag + 1


def _float_formatter(nonzero_finite: np.ndarray) -> Callable[[float], str]:
    """The unpadded formatter for a floating tensor, given its nonzero finite values."""
    precision = PRINT_OPTS.precision
    int_mode, sci_mode = _float_style(nonzero_finite)
    if sci_mode:
        return lambda v: f"{v:.{precision}e}"
    if int_mode:
        # The trailing "." marks a floating tensor whose values are all integers.
        return lambda v: f"{v:.0f}." if math.isfinite(v) else f"{v:.0f}"
    return lambda v: f"{v:.{precision}f}"


def _float_style(nonzero_finite: np.ndarray) -> tuple[bool, bool]:
    """Return ``(int_mode, sci_mode)`` for a float tensor's nonzero finite values.

    Note [When scientific notation is used]
    ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    Unless ``sci_mode`` is forced, torch switches to ``%e`` when the nonzero finite
    magnitudes span more than three decades (max / min > 1000), or any exceeds 1e8, or
    any falls below 1e-4. Zeros, nans and infs never take part. When there is no
    nonzero finite value at all the tensor prints in integer mode (``0.``, ``nan``) even
    if ``sci_mode=True`` was set: torch's formatter returns before reading the option.
    """
    if nonzero_finite.size == 0:
        return True, False
    int_mode = bool(np.all(nonzero_finite == np.ceil(nonzero_finite)))
    if PRINT_OPTS.sci_mode is not None:
        return int_mode, PRINT_OPTS.sci_mode
    magnitude = np.abs(nonzero_finite)
    lo, hi = float(magnitude.min()), float(magnitude.max())
    # Python float division overflows to inf (1e300 / 1e-300), as torch's double does.
    return int_mode, hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4


def _render(cells: np.ndarray, indent: int, cut: tuple[bool, ...], width: int) -> str:
    """Lay out formatted cells as nested brackets (torch's ``_tensor_str_with_formatter``).

    Sub-tensors are separated by a comma, one newline per remaining dimension (so a
    blank line between matrices of a 3-d tensor) and an indent one past the bracket.
    """
    if cells.ndim == 0:
        return cells.item()
    if cells.ndim == 1:
        return _render_vector(cells.tolist(), indent, cut[0], width)
    parts = [_render(sub, indent + 1, cut[1:], width) for sub in cells]
    if cut[0]:
        parts.insert(PRINT_OPTS.edgeitems, "...")
    separator = "," + "\n" * (cells.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(parts) + "]"


def _render_vector(items: list[str], indent: int, is_cut: bool, width: int) -> str:
    """One bracketed row, wrapped so each line fits ``linewidth`` (torch's ``_vector_str``).

    Every cell counts as ``width + 2`` characters (", "); the `` ...`` marker of a
    summarised row is one more item on the line.
    """
    if is_cut:
        items.insert(PRINT_OPTS.edgeitems, " ...")
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / (width + 2)))
    lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _add_suffixes(text: str, suffixes: Sequence[str], indent: int) -> str:
    """Append ``, key=value`` suffixes and the closing parenthesis.

    Note [Suffix line breaks]
    ~~~~~~~~~~~~~~~~~~~~~~~~~
    A suffix goes on its own line (indented to the opening bracket) only when the
    current line would exceed ``linewidth``; a multi-line tensor does not force it.
    torch measures the current line as ``len(text) - text.rfind("\\n") + 1``, i.e. two
    more than its visible length, and after a break as ``indent + len(suffix)``; we keep
    that arithmetic verbatim because it decides where the breaks fall.

    Note [Suffixes are measured as torch spells them]
    ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    gradstack names its dtypes ``gradstack.float64``, four characters longer than torch's
    ``torch.float64``, so measured as printed a ``dtype=`` suffix would break its line where
    torch's fits: a program's output would differ from torch's in its line breaks, not
    only in the library's name.  A suffix is measured with ``gradstack.`` spelled
    ``torch.``, so the breaks fall where torch's do (a line may then run four characters
    past ``linewidth``).
    """
    out = [text]
    line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        width = len(suffix.replace("gradstack.", "torch."))
        if line_len + width + 2 > PRINT_OPTS.linewidth:
            out.append(",\n" + " " * indent + suffix)
            line_len = indent + width
        else:
            out.append(", " + suffix)
            line_len += width + 2
    out.append(")")
    return "".join(out)
