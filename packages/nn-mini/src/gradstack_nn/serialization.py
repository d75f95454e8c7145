"""``save``/``load`` (``gradstack.save``/``gradstack.load``): tensors, state dicts and nested
containers in a file that cannot execute code when loaded; other objects (a whole
``nn.Module``) pickled, as torch, and loaded only with ``weights_only=False``.

Note [The file format]
~~~~~~~~~~~~~~~~~~~~~~
A gradstack file is a ZIP archive, readable as a numpy ``.npz``:

- ``gradstack.json``: the manifest, ``{"format": "gradstack", "version": 1, "root": node}``
  where a node is one of
  ``{"t": "tensor", "id": i, "requires_grad": b, "parameter": b}``,
  ``{"t": "ndarray", "id": i}``, ``{"t": "dict"|"odict", "items": [[key, value], ...]}``,
  ``{"t": "list"|"tuple", "items": [...]}``, ``{"t": "int", "v": 7}``,
  ``{"t": "float", "v": "0x1.8p+1"}`` (``float.hex``, exact, inf and nan included),
  ``{"t": "bool", "v": true}``, ``{"t": "str", "v": "..."}``, ``{"t": "none"}``;
- ``<i>.npy`` for each array ``i``: numpy's own format, read with ``allow_pickle=False``.

Loading parses JSON and raw arrays of plain dtypes, and nothing else, so a file can never
run code (unlike pickle, which ``torch.load`` used before ``weights_only``).  Values are
stored byte for byte, so they round-trip bit-exactly.  A tensor that appears several times
in the saved object is stored once and loads as one tensor; distinct tensors that share
storage (views) load as independent tensors.  The archive's CRC-32 checksums catch
corrupted bytes.

Note [Pickled objects, as torch.save]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
``torch.save(model)`` pickles the whole module, and torch 2.13 loads such a file only with
``weights_only=False``: its default refuses pickled classes, because unpickling runs code
named by the file.  gradstack does the same.  An object the format above cannot hold
(a Module, an optimizer, any other picklable object) is written with the manifest's root
``{"t": "pickle"}`` and a member ``data.pkl``: a pickle whose tensors are persistent ids
(``("tensor", node)`` with a tensor node as above, its array an ``<i>.npy`` member), so
tensors keep the safe array format and gradstack's tensors stay unpicklable on their own.
``load`` with ``weights_only=True`` (the default) unpickles only what imports nothing
beyond an allowlist: ``collections.OrderedDict``, ``set``, ``frozenset``, ``complex``,
``slice``, ``bytearray``, and the globals the user allowed with
:func:`add_safe_globals` or ``with safe_globals([...]):`` (torch's API); anything else is
refused before it is imported, with ``pickle.UnpicklingError`` naming the global and how to
allow it, as torch does.  ``weights_only=False`` unpickles everything.

Note [Loading refuses what save never writes]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A file is data from anywhere, so the loader accepts exactly what :func:`save` writes and
raises :class:`SerializationError` for everything else, before allocating memory for it:

- members are stored, never compressed (a compressed member could inflate far beyond the
  file's size: a zip bomb), and named ``gradstack.json``, ``<n>.npy`` or ``data.pkl``,
  once each (no path-like names, no duplicates);
- an array's header declares a plain dtype and a shape of non-negative dims whose bytes
  must equal what the member holds, so an array never takes more memory than the file
  gives it;
- the manifest's fields have their exact types (a 5,000-digit int, a ``requires_grad``
  flag on an integer tensor ... are errors of the file, not Python exceptions).

Note [Saving through an unpredictable temporary file]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Saving to a path writes a temporary file created exclusively (``O_CREAT | O_EXCL``,
which refuses an existing name and a symlink planted there) under a random name in the
target's directory, then renames it over the target: an interrupted save never leaves a
truncated file, and nobody who can predict the name can redirect the write.  The rename
replaces a symlink at the target path itself, never the file it points to.

Examples
--------
>>> import io
>>> import gradstack_tensor as gt
>>> buf = io.BytesIO()
>>> save({"w": gt.tensor([1.5, -2.0]), "step": 3}, buf)
>>> _ = buf.seek(0)
>>> obj = load(buf)
>>> obj["w"].tolist(), obj["step"]
([1.5, -2.0], 3)
"""

from __future__ import annotations

import _compat_pickle
import io
import json
import math
import os
import pickle
import re
import secrets
import stat
import zipfile
from collections import OrderedDict

import gradstack_tensor as gt
import numpy as np
from gradstack_tensor import Tensor
from gradstack_tensor.device import check_device
from gradstack_tensor.extension import data_of as _data

from .parameter import Parameter, UninitializedParameter, is_lazy

__all__ = [
    "save",
    "load",
    "SerializationError",
    "add_safe_globals",
    "clear_safe_globals",
    "get_safe_globals",
    "safe_globals",
]

_MANIFEST = "gradstack.json"
_PICKLE = "data.pkl"
_FORMAT = "gradstack"
_VERSION = 1
_DTYPES = {
    np.dtype(d)
    for d in ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool")
}
_BFLOAT16 = gt.bfloat16.numpy
_ND_DTYPES = _DTYPES | {
    np.dtype(d) for d in ("uint16", "uint32", "uint64", "complex64", "complex128")
}


class SerializationError(RuntimeError):
    """The file is not a gradstack file, or it is corrupt, truncated or malformed."""


_ARRAY_MEMBER = re.compile(r"(0|[1-9][0-9]{0,9})\.npy")
_MAX_DIM = 2**62  # a dim or a byte count beyond this is malformed (numpy's intp is 64-bit)


# -------------------------------------------------------------------------------------
# save


def save(
    obj, f, pickle_module=None, pickle_protocol=None, _use_new_zipfile_serialization=True
) -> None:
    """Write ``obj`` to ``f`` (a path or a binary file object).

    A Tensor (or Parameter), a numpy array, a number, a string, None, or a dict /
    OrderedDict / list / tuple nesting them (model and optimiser state dicts included; dict
    keys strings, numbers, booleans or None) is written in gradstack's safe format, which
    :func:`load` reads without running code.  Anything else (a whole ``nn.Module``, as
    ``torch.save(model)``) is pickled with its tensors in the safe array format, and loads
    only with ``load(f, weights_only=False)``, as in torch 2.13 (Note [Pickled objects, as
    torch.save]).

    Writing to a path goes through a temporary file renamed at the end, so an interrupted
    save never leaves a truncated file under the final name.

    Raises
    ------
    pickle.PicklingError, AttributeError, TypeError
        If ``obj`` is neither in the safe format nor picklable (a lambda, a local class).

    Examples
    --------
    >>> import io
    >>> from gradstack_nn import Linear
    >>> buf = io.BytesIO()
    >>> save(Linear(2, 1), buf)
    >>> _ = buf.seek(0)
    >>> type(load(buf, weights_only=False)).__name__
    'Linear'
    """
    if pickle_module is not None and pickle_module is not pickle:
        raise ValueError(
            "gradstack.save pickles with the pickle module only: pickle_module "
            "must be None or pickle"
        )
    arrays: list[np.ndarray] = []
    pickled = None
    try:
        root = _encode(obj, arrays, {}, "obj")
    except TypeError:
        arrays = []
        pickled = _pickle(obj, arrays, pickle_protocol)
        root = {"t": "pickle"}
    manifest = json.dumps(
        {"format": _FORMAT, "version": _VERSION, "root": root},
        allow_nan=False,
        separators=(",", ":"),
    ).encode()
    if isinstance(f, (str, os.PathLike)):
        _save_to_path(os.fspath(f), manifest, arrays, pickled)
    else:
        _write(f, manifest, arrays, pickled)


class _TensorPickler(pickle.Pickler):
    """A pickler that stores tensors as safe array members (Note [Pickled objects, as
    torch.save])."""

    def __init__(self, fh, protocol, arrays):
        super().__init__(fh, protocol=protocol)
        self.arrays = arrays
        self.memo_tensors: dict = {}

    def persistent_id(self, obj):
        if not isinstance(obj, Tensor):
            return None
        if is_lazy(obj):
            return ("uninitialized", bool(obj.requires_grad), str(obj.dtype))
        return ("tensor", _encode(obj, self.arrays, self.memo_tensors, "obj"))


def _pickle(obj, arrays, protocol) -> bytes:
    buf = io.BytesIO()
    _TensorPickler(buf, 2 if protocol is None else protocol, arrays).dump(obj)
    return buf.getvalue()


def _save_to_path(path: str, manifest: bytes, arrays: list[np.ndarray], pickled=None) -> None:
    """Note [Saving through an unpredictable temporary file]."""
    directory = os.path.dirname(os.path.abspath(path))
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    flags |= getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = os.path.join(directory, f".{os.path.basename(path)}.{secrets.token_hex(16)}.tmp")
        try:
            fd = os.open(tmp, flags, 0o666)  # the umask applies, as for open(path, "wb")
        except FileExistsError:
            continue  # taken (or a planted link): another random name
        break
    else:  # pragma: no cover - 100 collisions of 128 random bits
        raise FileExistsError(f"gradstack.save: no free temporary name in {directory}")
    try:
        try:
            os.fchmod(fd, stat.S_IMODE(os.stat(path).st_mode))  # keep the target's mode
        except (FileNotFoundError, AttributeError):
            pass
        with os.fdopen(fd, "wb") as fh:
            _write(fh, manifest, arrays, pickled)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _write(fh, manifest: bytes, arrays: list[np.ndarray], pickled=None) -> None:
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        zf.writestr(_MANIFEST, manifest)
        if pickled is not None:
            zf.writestr(_PICKLE, pickled)
        for i, arr in enumerate(arrays):
            with zf.open(f"{i}.npy", "w", force_zip64=True) as out:
                np.lib.format.write_array(out, arr, allow_pickle=False)


def _encode(obj, arrays, memo, where):
    if isinstance(obj, Tensor):
        key = id(obj)
        if key not in memo:
            data = _data(obj)
            # Note [bfloat16 is saved as its bits]: .npy has no bfloat16 (numpy writes the
            # ml_dtypes array as void, "|V2"): its uint16 bits are saved, the node says so
            arrays.append(data.view(np.uint16) if data.dtype == _BFLOAT16 else data)
            memo[key] = (len(arrays) - 1, obj)  # keep obj alive: ids stay unique
        node = {
            "t": "tensor",
            "id": memo[key][0],
            "requires_grad": bool(obj.requires_grad),
            "parameter": isinstance(obj, Parameter),
        }
        if obj.dtype is gt.bfloat16:
            node["dtype"] = "bfloat16"
        return node
    if isinstance(obj, np.ndarray):
        if obj.dtype not in _ND_DTYPES:
            raise TypeError(
                f"gradstack.save: cannot save a numpy array of dtype {obj.dtype} "
                f"(at {where}); only plain numeric and bool dtypes are supported"
            )
        key = id(obj)
        if key not in memo:
            arrays.append(obj)
            memo[key] = (len(arrays) - 1, obj)
        return {"t": "ndarray", "id": memo[key][0]}
    if obj is None:
        return {"t": "none"}
    if isinstance(obj, (bool, np.bool_)):
        return {"t": "bool", "v": bool(obj)}
    if isinstance(obj, (int, np.integer)):
        return {"t": "int", "v": int(obj)}
    if isinstance(obj, (float, np.floating)):
        return {"t": "float", "v": float(obj).hex()}
    if isinstance(obj, str):
        return {"t": "str", "v": obj}
    if isinstance(obj, dict):
        items = []
        for k, v in obj.items():
            if not (k is None or isinstance(k, (str, int, float, bool))):
                raise TypeError(
                    f"gradstack.save: dict keys must be str, int, float, bool or "
                    f"None, got {type(k).__name__} (at {where})"
                )
            items.append(
                [_encode(k, arrays, memo, where), _encode(v, arrays, memo, f"{where}[{k!r}]")]
            )
        return {"t": "odict" if isinstance(obj, OrderedDict) else "dict", "items": items}
    if isinstance(obj, (list, tuple)):
        return {
            "t": "list" if isinstance(obj, list) else "tuple",
            "items": [_encode(v, arrays, memo, f"{where}[{i}]") for i, v in enumerate(obj)],
        }
    hint = " (save its state_dict() instead)" if hasattr(obj, "state_dict") else ""
    raise TypeError(
        f"gradstack.save: cannot save an object of type {type(obj).__name__} (at {where}){hint}; "
        "supported: tensors, numpy arrays, numbers, strings, None, and dicts, lists and "
        "tuples of them"
    )


# -------------------------------------------------------------------------------------
# load


def load(
    f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None, **pickle_load_args
):
    """Read an object written by :func:`save` from ``f`` (a path or a binary file object).

    Only JSON and raw arrays are parsed: nothing in the file is executed.  Tensors come
    back with their dtype, shape, values (bit for bit) and ``requires_grad``; Parameters
    come back as Parameters.  ``map_location`` may name the CPU (the only device).  A file
    holding a pickled object (``save(model)``) loads only with ``weights_only=False``, which
    runs the code the pickle names: use it only for files from a trusted source (Note
    [Pickled objects, as torch.save]).

    Raises
    ------
    SerializationError
        If the file is not a gradstack file (a pickle, a PyTorch checkpoint, anything
        else), or is corrupt or truncated.
    pickle.UnpicklingError
        If the file holds a pickled object and ``weights_only`` is true, as torch's.
    """
    if pickle_module is not None and pickle_module is not pickle:
        raise ValueError(
            "gradstack.load unpickles with the pickle module only: pickle_module "
            "must be None or pickle"
        )
    if weights_only is None:
        weights_only = True  # torch 2.13: None means the default, True
    if isinstance(map_location, (str, gt.device)):
        check_device(map_location)
    name = os.fspath(f) if isinstance(f, (str, os.PathLike)) else getattr(f, "name", "<file>")
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return _read(fh, name, weights_only)
    return _read(f, name, weights_only)


def _sniff(fh, name) -> None:
    start = fh.tell()
    head = fh.read(4)
    fh.seek(start)
    if head[:2] == b"PK":
        return
    if not head:
        raise SerializationError(f"{name} is empty: not a gradstack file")
    if head[:1] == b"\x80":
        raise SerializationError(
            f"{name} looks like a pickle file (e.g. from pickle.dump or torch's legacy "
            "torch.save format). gradstack.load never unpickles, because loading a pickle can "
            "execute arbitrary code. Convert it where you trust it: load it there and save "
            "the tensors' values with numpy (np.savez) or gradstack.save."
        )
    if head[:4] == b"\x93NUM":
        raise SerializationError(
            f"{name} is a single numpy .npy array, not a gradstack file: read it with "
            "np.load(path, allow_pickle=False) and wrap it with gradstack.from_numpy"
        )
    raise SerializationError(
        f"{name} is not a gradstack file (it is not a ZIP archive; it starts with {head!r})"
    )


def _read(fh, name, weights_only=True):
    _sniff(fh, name)
    try:
        return _read_archive(fh, name, weights_only)
    except (SerializationError, pickle.UnpicklingError):
        raise
    except (
        ValueError,
        TypeError,
        KeyError,
        IndexError,
        OverflowError,
        MemoryError,
        RecursionError,
        EOFError,
        OSError,
        NotImplementedError,
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
    ) as e:
        # whatever a malformed file makes zipfile, json or numpy raise is an error of the file
        raise SerializationError(
            f"{name} is corrupt or malformed ({type(e).__name__}: {str(e)[:200]})"
        ) from None


def _read_archive(fh, name, weights_only=True):
    try:
        zf = zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as e:
        raise SerializationError(
            f"{name} is corrupt or truncated: it is not a readable ZIP archive ({e})"
        ) from None
    with zf:
        names = set(zf.namelist())
        if _MANIFEST not in names:
            if any(n.endswith("data.pkl") for n in names):
                raise SerializationError(
                    f"{name} is a PyTorch checkpoint (torch.save); its structure is a pickle, "
                    "which gradstack.load refuses to run. Load it with torch "
                    "(torch.load(path, weights_only=True)), convert the tensors with "
                    ".numpy(), and save them with gradstack.save."
                )
            raise SerializationError(
                f"{name} is a ZIP archive but not a gradstack file (no {_MANIFEST} in it)"
            )
        _check_members(zf, name)
        try:
            manifest = json.loads(_read_member(zf, _MANIFEST, name).decode("utf-8"))
        except (ValueError, RecursionError) as e:  # includes over-long ints, bad UTF-8
            raise SerializationError(f"{name}: the manifest is corrupt ({str(e)[:200]})") from None
        if not isinstance(manifest, dict) or manifest.get("format") != _FORMAT:
            raise SerializationError(f"{name}: the manifest is not a gradstack manifest")
        version = manifest.get("version")
        if version != _VERSION:
            raise SerializationError(
                f"{name} was written by format version {version!r}; this gradstack reads "
                f"version {_VERSION} (upgrade gradstack-nn-mini)"
            )
        decoder = _Decoder(zf, name)
        if manifest.get("root") == {"t": "pickle"}:
            return _unpickle(zf, name, decoder, weights_only)
        try:
            return decoder.decode(manifest.get("root"))
        except RecursionError:
            raise SerializationError(f"{name}: the manifest nests too deeply") from None


class _TensorUnpickler(pickle.Unpickler):
    def __init__(self, fh, decoder):
        super().__init__(fh)
        self.decoder = decoder

    def persistent_load(self, pid):
        if isinstance(pid, tuple) and len(pid) == 3 and pid[0] == "uninitialized":
            return UninitializedParameter(requires_grad=bool(pid[1]))
        if not (isinstance(pid, tuple) and len(pid) == 2 and pid[0] == "tensor"):
            raise pickle.UnpicklingError(f"unknown persistent id {pid!r:.80}")
        return self.decoder.decode(pid[1])


# the globals a weights-only load imports without being told: containers and values whose
# construction from data runs no code of the file's choosing (torch allows these too)
_SAFE_BY_DEFAULT = {
    "collections.OrderedDict": OrderedDict,
    "builtins.set": set,
    "builtins.frozenset": frozenset,
    "builtins.complex": complex,
    "builtins.slice": slice,
    "builtins.bytearray": bytearray,
}
_safe_globals: dict = {}  # "module.qualname" -> object, by add_safe_globals


def _global_name(obj) -> str:
    return f"{obj.__module__}.{obj.__qualname__}"


def _named(entries) -> dict:
    out = {}
    for entry in entries:
        if isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[1], str):
            obj, name = entry  # torch's (object, "module.name") form
        elif callable(entry):
            obj, name = entry, _global_name(entry)
        else:
            raise TypeError(
                "safe globals are classes or functions, or (object, 'module.name') pairs; "
                f"got {entry!r:.80}"
            )
        out[name] = obj
    return out


def add_safe_globals(safe_globals) -> None:
    """Allow ``load(..., weights_only=True)`` to import these classes or functions (or
    ``(object, "module.name")`` pairs) from a pickled file (torch's
    ``torch.serialization.add_safe_globals``; Note [Pickled objects, as torch.save]).

    Examples
    --------
    >>> from gradstack_nn import Linear
    >>> add_safe_globals([Linear]); Linear in get_safe_globals()
    True
    >>> clear_safe_globals()
    """
    _safe_globals.update(_named(safe_globals))


def get_safe_globals() -> list:
    """The globals :func:`add_safe_globals` allowed."""
    return list(_safe_globals.values())


def clear_safe_globals() -> None:
    """Forget the globals :func:`add_safe_globals` allowed."""
    _safe_globals.clear()


class safe_globals:  # noqa: N801 - torch's name
    """``with safe_globals([Net]):`` allows these globals for the loads inside the block
    only (torch's ``torch.serialization.safe_globals``)."""

    def __init__(self, safe_globals):
        self._entries = _named(safe_globals)
        self._saved: dict = {}

    def __enter__(self):
        self._saved = dict(_safe_globals)
        _safe_globals.update(self._entries)
        return self

    def __exit__(self, *exc):
        _safe_globals.clear()
        _safe_globals.update(self._saved)
        return False


class _WeightsOnlyUnpickler(_TensorUnpickler):
    """Unpickles only the allowlist's globals (Note [Pickled objects, as torch.save])."""

    def find_class(self, module, name):
        # protocol 2 names Python 2's modules (``__builtin__.set``), as pickle's own
        # find_class maps them (no Python 3 module has those names)
        module, name = _compat_pickle.NAME_MAPPING.get((module, name), (module, name))
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        full = f"{module}.{name}"
        allowed = _SAFE_BY_DEFAULT.get(full) or _safe_globals.get(full)
        if allowed is None:
            short = name.rsplit(".", 1)[-1]
            raise pickle.UnpicklingError(
                "Weights only load failed. This file holds a pickled object that imports "
                f"{full}, which is not an allowed global: unpickling runs code the file "
                "names, so gradstack.load refuses it by default, as torch.load does since "
                "PyTorch 2.6. If you trust the file, allow the global with "
                f"gradstack.serialization.add_safe_globals([{short}]) or the "
                f"gradstack.serialization.safe_globals([{short}]) context manager, or "
                "re-run gradstack.load with weights_only=False; or save the model's "
                "state_dict() instead, which loads safely."
            )
        return allowed


def _unpickle(zf, name, decoder, weights_only):
    """Note [Pickled objects, as torch.save]."""
    if _PICKLE not in zf.NameToInfo:
        raise SerializationError(f"{name}: the manifest names a pickle but {_PICKLE} is missing")
    data = _read_member(zf, _PICKLE, name)
    if weights_only:
        return _WeightsOnlyUnpickler(io.BytesIO(data), decoder).load()
    return _TensorUnpickler(io.BytesIO(data), decoder).load()


def _check_members(zf: zipfile.ZipFile, name: str) -> None:
    """Note [Loading refuses what save never writes]: member names, storage, sizes."""
    seen = set()
    for info in zf.infolist():
        member = info.filename
        if member not in (_MANIFEST, _PICKLE) and not _ARRAY_MEMBER.fullmatch(member):
            raise SerializationError(
                f"{name}: unexpected member {member!r:.80} (a gradstack file holds only "
                f"{_MANIFEST}, <n>.npy and {_PICKLE})"
            )
        if member in seen:
            raise SerializationError(f"{name}: member {member!r} appears twice")
        seen.add(member)
        if info.compress_type != zipfile.ZIP_STORED:
            raise SerializationError(
                f"{name}: member {member!r} is compressed; gradstack files store their "
                "members uncompressed, and a compressed one could inflate without bound "
                "(a zip bomb), so it is refused"
            )
        if info.file_size != info.compress_size:
            raise SerializationError(
                f"{name}: member {member!r} declares {info.file_size} bytes but stores "
                f"{info.compress_size}"
            )


def _read_member(zf: zipfile.ZipFile, member: str, name: str) -> bytes:
    try:
        return zf.read(member)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, zipfile.LargeZipFile) as e:
        raise SerializationError(
            f"{name} is corrupt or truncated: reading {member} failed ({e})"
        ) from None


class _Decoder:
    def __init__(self, zf, name):
        self.zf = zf
        self.name = name
        self.arrays: dict[int, np.ndarray] = {}
        self.tensors: dict[int, Tensor] = {}

    def fail(self, what):
        raise SerializationError(f"{self.name}: the manifest is corrupt ({what})")

    def array(self, i, allowed):
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < 10**10:
            self.fail(f"bad array id {i!r:.40}")
        if i not in self.arrays:
            member = f"{i}.npy"
            if member not in self.zf.NameToInfo:
                self.fail(f"array {member} is missing")
            info = self.zf.getinfo(member)
            try:
                # streamed from the archive into one buffer sized by the checked header; the
                # CRC is checked as the member is read to its end
                with self.zf.open(member) as fh:
                    arr = _read_npy(fh, info.file_size, allowed, f"{self.name}: array {member}")
                    if fh.read(1):
                        raise SerializationError(
                            f"{self.name}: array {member} has trailing bytes after its data"
                        )
            except SerializationError:
                raise
            except Exception as e:  # noqa: BLE001 - zipfile/numpy raise various errors on bad bytes
                raise SerializationError(
                    f"{self.name}: array {member} is corrupt or truncated "
                    f"({type(e).__name__}: {str(e)[:200]})"
                ) from None
            self.arrays[i] = arr
        arr = self.arrays[i]
        if arr.dtype.newbyteorder("=") not in allowed:
            self.fail(f"array {i} has unsupported dtype {arr.dtype}")
        return arr

    def decode(self, node):
        if not isinstance(node, dict) or "t" not in node:
            self.fail(f"bad node {node!r:.80}")
        t = node["t"]
        if t == "tensor":
            i = node.get("id")
            requires_grad = node.get("requires_grad", False)
            parameter = node.get("parameter", False)
            if type(requires_grad) is not bool or type(parameter) is not bool:
                self.fail("tensor flags requires_grad/parameter must be true or false")
            if i in self.tensors:
                return self.tensors[i]
            bits = node.get("dtype") == "bfloat16"  # Note [bfloat16 is saved as its bits]
            if node.get("dtype", "bfloat16") != "bfloat16":
                self.fail(f"unknown tensor dtype {node['dtype']!r:.40}")
            arr = self.array(i, {np.dtype(np.uint16)} if bits else _DTYPES)
            if not arr.dtype.isnative:
                arr = arr.astype(arr.dtype.newbyteorder("="))
            if bits:
                arr = arr.view(_BFLOAT16)
            if requires_grad and arr.dtype.kind != "f" and not bits:
                self.fail(
                    f"a {arr.dtype} tensor flagged requires_grad (only floating-point tensors "
                    "can require gradients)"
                )
            tensor = gt.from_numpy(arr)
            if parameter:
                tensor = Parameter(tensor, requires_grad=requires_grad)
            elif requires_grad:
                tensor.requires_grad_(True)
            self.tensors[i] = tensor
            return tensor
        if t == "ndarray":
            return self.array(node.get("id"), _ND_DTYPES)
        if t == "none":
            return None
        if t in ("bool", "int", "str"):
            v = node.get("v")
            expected = {"bool": bool, "int": int, "str": str}[t]
            if type(v) is not expected:
                self.fail(f"{t} node holds {v!r:.80}")
            return v
        if t == "float":
            try:
                return float.fromhex(node["v"])
            except (KeyError, TypeError, ValueError, OverflowError):
                self.fail(f"bad float {node.get('v')!r:.80}")
        if t not in ("dict", "odict", "list", "tuple"):
            self.fail(f"unknown node type {t!r:.40}")
        items = node.get("items")
        if not isinstance(items, list):
            self.fail(f"{t} node without items")
        if t in ("dict", "odict"):
            out = OrderedDict() if t == "odict" else {}
            for pair in items:
                if not isinstance(pair, list) or len(pair) != 2:
                    self.fail("bad dict item")
                key = self.decode(pair[0])
                if not (key is None or isinstance(key, (str, int, float, bool))):
                    self.fail("bad dict key")
                out[key] = self.decode(pair[1])
            return out
        if t == "list":
            return [self.decode(v) for v in items]
        return tuple(self.decode(v) for v in items)


def _read_npy(fh, size: int, allowed, what: str) -> np.ndarray:
    """One ``.npy`` array of ``size`` bytes from ``fh``, its header checked before any
    allocation (Note [Loading refuses what save never writes])."""
    version = np.lib.format.read_magic(fh)
    if version == (1, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
    elif version == (2, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
    else:
        raise SerializationError(f"{what} has an unsupported .npy format version {version}")
    if dtype.hasobject:
        raise SerializationError(f"{what} holds Python objects, which are never loaded")
    if dtype.newbyteorder("=") not in allowed:
        raise SerializationError(f"{what} has unsupported dtype {dtype}")
    if not isinstance(fortran, bool) or not isinstance(shape, tuple):
        raise SerializationError(f"{what} has a malformed header")
    for d in shape:
        if not isinstance(d, int) or isinstance(d, bool) or not 0 <= d <= _MAX_DIM:
            raise SerializationError(f"{what} declares an invalid shape {shape!r:.80}")
    count = math.prod(shape)
    nbytes = count * dtype.itemsize
    header = fh.tell()
    if nbytes > _MAX_DIM or nbytes != size - header:
        raise SerializationError(
            f"{what} declares shape {list(shape)} of {dtype} ({nbytes} bytes) but the member "
            f"holds {size - header} bytes of data"
        )
    flat = np.empty(count, dtype=dtype)
    view = memoryview(flat).cast("B") if nbytes else memoryview(b"")
    filled = 0
    while filled < nbytes:
        n = fh.readinto(view[filled:])
        if not n:
            raise SerializationError(f"{what} is truncated ({filled} of {nbytes} bytes)")
        filled += n
    return flat.reshape(shape, order="F" if fortran else "C")
