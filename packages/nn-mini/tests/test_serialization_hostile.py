"""Hostile files for ``load`` and hostile directories for ``save`` (issue 11).

Every malformed file raises :class:`SerializationError` (never another exception, never a
large allocation): truncations, flipped bytes, wrong magic, huge/negative/overflowing
shapes, headers that lie about the data, foreign dtypes, compressed members (zip bombs),
path-like and duplicate member names, hostile manifests.  ``save`` never writes through
a symlink planted at a temporary name (Note [Saving through an unpredictable temporary
file] in ``serialization.py``).
"""

from __future__ import annotations

import io
import json
import os
import stat
import tracemalloc
import zipfile

import gradstack_tensor as gt
import numpy as np
import pytest
from gradstack_nn import Parameter, load, save, serialization
from gradstack_nn.serialization import SerializationError

# ---------------------------------------------------------------------------------------
# helpers


def good_object():
    return {
        "w": gt.tensor([[1.5, -2.0], [0.25, 8.0]]),
        "b": Parameter(gt.tensor([0.5, -0.5])),
        "steps": [1, 2.5, "three", None, True],
        "n": 3,
    }


def good_bytes():
    buf = io.BytesIO()
    save(good_object(), buf)
    return buf.getvalue()


def load_bytes(data):
    return load(io.BytesIO(data))


def same_as_good(obj):
    ref = good_object()
    return (
        obj["w"].tolist() == ref["w"].tolist()
        and obj["b"].tolist() == ref["b"].tolist()
        and obj["steps"] == ref["steps"]
        and obj["n"] == 3
    )


def npy(array=None, *, header=None, data=b"", version=(1, 0)):
    """A .npy member: numpy's for ``array``, or a hand-made header dict and raw data."""
    out = io.BytesIO()
    if array is not None:
        np.lib.format.write_array(out, array, allow_pickle=True)
        return out.getvalue()
    writer = (  # each writes the magic string and the header
        np.lib.format.write_array_header_1_0
        if version == (1, 0)
        else np.lib.format.write_array_header_2_0
    )
    writer(out, header)
    out.write(data)
    return out.getvalue()


def archive(members, *, compression=zipfile.ZIP_STORED):
    """A ZIP archive of ``members``: a dict, or a list of pairs (duplicates allowed)."""
    buf = io.BytesIO()
    items = members.items() if isinstance(members, dict) else members
    with zipfile.ZipFile(buf, "w", compression=compression) as zf:
        for name, content in items:
            if isinstance(content, (dict, list)):
                content = json.dumps(content)
            zf.writestr(name, content)
    return buf.getvalue()


def manifest(root):
    return {"format": "gradstack", "version": 1, "root": root}


TENSOR0 = manifest({"t": "tensor", "id": 0, "requires_grad": False, "parameter": False})


def refused(data, match=None):
    with pytest.raises(SerializationError, match=match):
        load_bytes(data)


# ---------------------------------------------------------------------------------------
# damaged files


def test_every_truncation_is_refused():
    data = good_bytes()
    for cut in range(0, len(data), 3):
        refused(data[:cut])


def test_flipped_bytes_are_refused_or_harmless():
    """A flipped byte is caught (CRC, structure) unless it sits in a field load ignores
    (a timestamp ...): then the object loads unchanged, never differently."""
    data = good_bytes()
    changed = 0
    for pos in range(0, len(data)):
        bad = bytearray(data)
        bad[pos] ^= 0x5A
        try:
            obj = load_bytes(bytes(bad))
        except SerializationError:
            changed += 1
            continue
        assert same_as_good(obj), f"byte {pos} changed the loaded values"
    assert changed > len(data) // 2


@pytest.mark.parametrize(
    "head", [b"PK\x05\x06", b"PK\x03\x04" + b"\0" * 30, b"\x93NUMPY", b"\x80\x04", b"GRAD"]
)
def test_wrong_magic(head):
    refused(head + good_bytes()[len(head) :])


# ---------------------------------------------------------------------------------------
# arrays whose header does not fit their data


@pytest.mark.parametrize(
    ("header", "data", "match"),
    [
        (
            {"descr": "<f4", "fortran_order": False, "shape": (10**12,)},
            b"\0" * 16,
            "declares shape",
        ),
        ({"descr": "<f4", "fortran_order": False, "shape": (2**40, 2**40)}, b"", "declares"),
        ({"descr": "<f8", "fortran_order": False, "shape": (2**63, 2)}, b"", "invalid shape"),
        ({"descr": "<f4", "fortran_order": False, "shape": (-1,)}, b"\0" * 4, "invalid shape"),
        ({"descr": "<f4", "fortran_order": False, "shape": (0, 10**30)}, b"", "invalid shape"),
        ({"descr": "<f8", "fortran_order": False, "shape": (4,)}, b"\0" * 16, "declares shape"),
        ({"descr": "<f4", "fortran_order": False, "shape": (2,)}, b"\0" * 12, "declares shape"),
        ({"descr": "|O", "fortran_order": False, "shape": (1,)}, b"\0" * 8, "Python objects"),
        ({"descr": "<U4", "fortran_order": False, "shape": (1,)}, b"\0" * 16, "unsupported dtype"),
        ({"descr": "<c8", "fortran_order": False, "shape": (1,)}, b"\0" * 8, "unsupported dtype"),
        ({"descr": "<u2", "fortran_order": False, "shape": (1,)}, b"\0" * 2, "unsupported dtype"),
    ],
)
def test_array_headers_that_lie_are_refused_before_allocating(header, data, match):
    blob = archive({"gradstack.json": TENSOR0, "0.npy": npy(header=header, data=data)})
    tracemalloc.start()
    try:
        refused(blob, match)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20


def test_a_header_that_claims_1_gib_from_a_small_file():
    """Issue 11: a 1.04 MB file loaded as a 1 GiB tensor.  Stored: the declared shape must
    match the bytes; compressed: refused outright."""
    header = {"descr": "<f4", "fortran_order": False, "shape": (2**28,)}
    stored = archive({"gradstack.json": TENSOR0, "0.npy": npy(header=header, data=b"\0" * 4096)})
    refused(stored, "declares shape")


def test_zip_bomb_is_refused_without_inflating():
    """A DEFLATE member of 64 MiB of zeros (a 64 KiB file): refused before reading it."""
    header = {"descr": "<f4", "fortran_order": False, "shape": (2**24,)}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        zf.writestr("gradstack.json", json.dumps(TENSOR0))
        with zf.open("0.npy", "w") as member:
            member.write(npy(header=header))
            chunk = b"\0" * (1 << 20)
            for _ in range(64):
                member.write(chunk)
    data = buf.getvalue()
    assert len(data) < 1 << 20
    tracemalloc.start()
    try:
        refused(data, "compressed")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20
    # a compressed manifest is refused too
    refused(
        archive(
            {"gradstack.json": TENSOR0, "0.npy": npy(np.ones(2, np.float32))},
            compression=zipfile.ZIP_DEFLATED,
        ),
        "compressed",
    )


@pytest.mark.parametrize(
    "name",
    [
        "../0.npy",
        "/etc/0.npy",
        "a/0.npy",
        "0.npy/..",
        "..\\0.npy",
        "00.npy",
        "1e3.npy",
        "0.npy ",
        "x.npy",
    ],
)
def test_path_like_and_unexpected_member_names_are_refused(name):
    refused(
        archive({"gradstack.json": TENSOR0, "0.npy": npy(np.ones(2, np.float32)), name: b"x"}),
        "unexpected member",
    )


def test_duplicate_members_are_refused():
    members = [
        ("gradstack.json", TENSOR0),
        ("0.npy", npy(np.ones(2, np.float32))),
        ("0.npy", npy(np.zeros(2, np.float32))),
    ]
    with pytest.warns(UserWarning, match="Duplicate name"):
        data = archive(members)
    refused(data, "appears twice")


# ---------------------------------------------------------------------------------------
# hostile manifests


@pytest.mark.parametrize(
    ("root", "match"),
    [
        ({"t": "int", "v": int("7" * 4000)}, None),  # 4,000 digits: parses, then is fine
        ({"t": "tensor", "id": 0, "requires_grad": True, "parameter": False}, "requires_grad"),
        ({"t": "tensor", "id": 0, "requires_grad": True, "parameter": True}, "requires_grad"),
        ({"t": "tensor", "id": 0, "requires_grad": "yes", "parameter": False}, "true or false"),
        ({"t": "tensor", "id": 0, "requires_grad": False, "parameter": 1}, "true or false"),
        ({"t": "tensor", "id": True}, "bad array id"),
        ({"t": "tensor", "id": 10**30}, "bad array id"),
        ({"t": "tensor", "id": -1}, "bad array id"),
        ({"t": "tensor", "id": "0"}, "bad array id"),
        ({"t": "tensor", "id": 1}, "missing"),
        ({"t": "float", "v": "0x1p99999"}, "bad float"),
        ({"t": "float", "v": 1.5}, "bad float"),
        ({"t": "dict", "items": [[{"t": "list", "items": []}, {"t": "none"}]]}, "bad dict key"),
        ({"t": "dict", "items": [[1, 2, 3]]}, "bad dict item"),
        ({"t": "list", "items": {"a": 1}}, "without items"),
        ({"t": "exec", "v": "os.system"}, "unknown node type"),
        ({"t": "str", "v": 5}, "str node"),
        ([], "bad node"),
    ],
)
def test_hostile_manifest_nodes(root, match):
    ints = npy(np.array([1, 2], np.int64))
    data = archive({"gradstack.json": manifest(root), "0.npy": ints})
    if match is None:
        assert load_bytes(data) == int("7" * 4000)
        return
    refused(data, match)


def test_a_5000_digit_int_is_a_serialization_error():
    text = '{"format": "gradstack", "version": 1, "root": {"t": "int", "v": ' + "9" * 5000 + "}}"
    refused(archive({"gradstack.json": text}), "manifest is corrupt")


def test_deeply_nested_manifest():
    deep = '{"t": "list", "items": [' * 100_000 + "]}" * 100_000
    text = '{"format": "gradstack", "version": 1, "root": ' + deep + "}"
    refused(archive({"gradstack.json": text}))


def test_manifest_of_invalid_utf8_or_json():
    for blob in (
        b"\xff\xfe\x00",
        b'{"format": "gradstack", "version": 1, "root": NaN',
        b"\x00" * 10,
    ):
        refused(archive({"gradstack.json": blob}), "manifest")


def test_an_int_parameter_without_grad_is_fine():
    data = archive(
        {
            "gradstack.json": manifest(
                {"t": "tensor", "id": 0, "requires_grad": False, "parameter": True}
            ),
            "0.npy": npy(np.array([1, 2], np.int64)),
        }
    )
    p = load_bytes(data)
    assert isinstance(p, Parameter) and not p.requires_grad and p.tolist() == [1, 2]


# ---------------------------------------------------------------------------------------
# save: temporary files


def _victim(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    return victim


def test_save_ignores_a_symlink_at_the_old_predictable_name(tmp_path):
    victim = _victim(tmp_path)
    target = tmp_path / "model.gs"
    os.symlink(victim, f"{target}.tmp{os.getpid()}")
    save(good_object(), target)
    assert victim.read_text() == "precious"
    assert same_as_good(load(target))


def test_save_never_writes_through_a_symlink_planted_at_its_temporary_name(tmp_path, monkeypatch):
    """The random name is forced to collide with a planted link: the save skips it."""
    victim = _victim(tmp_path)
    target = tmp_path / "model.gs"
    names = iter(["planted", "planted", "fresh"])
    monkeypatch.setattr(serialization.secrets, "token_hex", lambda n: next(names))
    link = tmp_path / ".model.gs.planted.tmp"
    os.symlink(victim, link)
    save(good_object(), target)
    assert victim.read_text() == "precious"
    assert os.path.islink(link) and os.readlink(link) == str(victim)
    assert same_as_good(load(target))
    assert not (tmp_path / ".model.gs.fresh.tmp").exists()


def test_save_to_a_symlinked_target_replaces_the_link_not_its_file(tmp_path):
    victim = _victim(tmp_path)
    target = tmp_path / "model.gs"
    os.symlink(victim, target)
    save(good_object(), target)
    assert victim.read_text() == "precious"
    assert not os.path.islink(target) and same_as_good(load(target))


def test_interrupted_save_leaves_no_temporary_file_and_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "model.gs"
    save({"old": 1}, target)

    def boom(fh, manifest, arrays, pickled=None):
        fh.write(b"partial")
        raise OSError("disk full")

    monkeypatch.setattr(serialization, "_write", boom)
    with pytest.raises(OSError, match="disk full"):
        save(good_object(), target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.gs"]
    monkeypatch.undo()
    assert load(target) == {"old": 1}


def test_saved_file_modes(tmp_path):
    target = tmp_path / "model.gs"
    old = os.umask(0o022)
    try:
        save(good_object(), target)
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o644  # as open(path, "wb") would
    os.chmod(target, 0o600)
    save(good_object(), target)
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600  # an existing file keeps its mode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.gs"]
