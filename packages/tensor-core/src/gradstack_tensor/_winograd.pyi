"""Type stub for ``gradstack_tensor._winograd`` (see _winograd.pyx)."""

from typing import TypeVar

import numpy as np
import numpy.typing as npt

__all__ = [
    "winograd_input_tiles",
    "winograd_output_tiles",
    "winograd_grad_tiles",
    "winograd_input_grad",
    "winograd_filter_tiles",
    "winograd_filter_grad",
]

_Float = TypeVar("_Float", np.float32, np.float64)
_Array = npt.NDArray[_Float]

def winograd_input_tiles(
    x: _Array[_Float],
    padding: tuple[int, int],
    th: int,
    tw: int,
    out: _Array[_Float] | None = None,
    max_threads: int | None = None,
) -> _Array[_Float]: ...
def winograd_output_tiles(
    m: _Array[_Float],
    n: int,
    oh: int,
    ow: int,
    out: _Array[_Float] | None = None,
    max_threads: int | None = None,
) -> _Array[_Float]: ...
def winograd_grad_tiles(
    g: _Array[_Float], out: _Array[_Float] | None = None, max_threads: int | None = None
) -> _Array[_Float]: ...
def winograd_input_grad(
    z: _Array[_Float],
    n: int,
    h: int,
    w: int,
    padding: tuple[int, int],
    th: int,
    tw: int,
    out: _Array[_Float] | None = None,
    max_threads: int | None = None,
) -> _Array[_Float]: ...
def winograd_filter_tiles(w: _Array[_Float]) -> _Array[_Float]: ...
def winograd_filter_grad(du: _Array[_Float]) -> _Array[_Float]: ...
