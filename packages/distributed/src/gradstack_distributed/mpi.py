"""Loading MPI through mpi4py: lazily, once, with errors that say what to install.

Importing :mod:`gradstack_distributed` does not touch MPI: ``import gradstack`` must stay
cheap and side-effect free in programs that never call ``init_process_group``.
:func:`load` imports ``mpi4py.MPI`` (which loads the MPI library, but does not start MPI),
and :func:`start` calls ``MPI_Init_thread`` unless someone (mpi4py's own import, or the
user) already did.

Note [Who finalizes MPI]
mpi4py finalizes MPI at interpreter exit when ``mpi4py.rc.finalize`` is true; we set it
together with ``rc.initialize = False`` before the first import of ``mpi4py.MPI``, so MPI
is started by :func:`start` and finalized by mpi4py's exit hook.  MPI cannot be started
twice in one process: ``destroy_process_group`` frees communicators but leaves MPI up, so
that ``init_process_group`` may be called again, as torch allows.
"""

from __future__ import annotations

import sys

import numpy as np

__all__ = ["MPIUnavailableError", "load", "start", "datatype_of", "library_version"]

_MPI = None
_LOAD_ERROR: BaseException | None = None

_INSTALL_HINT = (
    "gradstack.distributed needs mpi4py and an MPI library.  On a workstation or in CI: "
    '`pip install "gradstack-distributed[mpich]"` (mpi4py plus PyPI\'s MPICH, mpiexec '
    "included).  On a cluster, load the site's MPI (e.g. `module load openmpi`) so that "
    "its libmpi is on LD_LIBRARY_PATH, or name it with MPI4PY_LIBMPI=/path/to/libmpi.so "
    "(see docs/distributed.md)."
)


class MPIUnavailableError(RuntimeError):
    """mpi4py or an MPI library could not be loaded (the message says what to install)."""


def load():
    """The ``mpi4py.MPI`` module, imported without starting MPI; raises
    :class:`MPIUnavailableError` when mpi4py or the MPI library is missing."""
    global _MPI, _LOAD_ERROR
    if _MPI is not None:
        return _MPI
    if _LOAD_ERROR is not None:
        raise MPIUnavailableError(f"{_INSTALL_HINT}\nThe error was: {_LOAD_ERROR}")
    try:
        import mpi4py

        if "mpi4py.MPI" not in sys.modules:  # see Note [Who finalizes MPI]
            mpi4py.rc.initialize = False
            mpi4py.rc.finalize = True
        from mpi4py import MPI
    except (ImportError, RuntimeError, OSError) as exc:  # no mpi4py, or no libmpi
        _LOAD_ERROR = exc
        raise MPIUnavailableError(f"{_INSTALL_HINT}\nThe error was: {exc}") from exc
    _MPI = MPI
    return MPI


def start():
    """Start MPI (``MPI_Init_thread``) if it is not running yet; returns ``mpi4py.MPI``."""
    MPI = load()
    if MPI.Is_finalized():
        raise RuntimeError(
            "MPI was already finalized in this process; it cannot be started again "
            "(init_process_group must come before MPI_Finalize)"
        )
    if not MPI.Is_initialized():
        MPI.Init_thread(MPI.THREAD_MULTIPLE)
    return MPI


def library_version() -> str:
    """The first line of the MPI library's version string (``MPICH Version: 5.0.2``)."""
    return load().Get_library_version().strip().splitlines()[0].strip()


_DATATYPES: dict | None = None


def datatype_of(dtype: np.dtype):
    """The MPI datatype for a numpy dtype of a gradstack tensor (TypeError if none)."""
    global _DATATYPES
    MPI = load()
    if _DATATYPES is None:
        table = {
            np.dtype(np.bool_): MPI.C_BOOL,
            np.dtype(np.uint8): MPI.UINT8_T,
            np.dtype(np.int8): MPI.INT8_T,
            np.dtype(np.int16): MPI.INT16_T,
            np.dtype(np.int32): MPI.INT32_T,
            np.dtype(np.int64): MPI.INT64_T,
            np.dtype(np.float32): MPI.FLOAT,
            np.dtype(np.float64): MPI.DOUBLE,
        }
        half = getattr(MPI, "FLOAT16_T", MPI.DATATYPE_NULL)
        if half != MPI.DATATYPE_NULL:
            table[np.dtype(np.float16)] = half
        _DATATYPES = table
    try:
        return _DATATYPES[np.dtype(dtype)]
    except KeyError:
        raise TypeError(
            f"gradstack.distributed cannot communicate tensors of dtype {np.dtype(dtype)} "
            f"with this MPI library ({library_version()}); supported: "
            f"{', '.join(str(d) for d in _DATATYPES)}"
        ) from None
