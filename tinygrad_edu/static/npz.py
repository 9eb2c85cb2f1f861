"""Read an .npz archive safely: every array's size is checked from its .npy header first.

`np.load` reads an array whole before anything can be checked, so a small compressed
file can expand to gigabytes. Here each member's header (dtype, shape, fortran order)
is read and checked, and the size it declares compared with the zip entry's, before
any data: all arrays together may hold at most `MAX_ARRAY_BYTES`. Object arrays are
never read (that would need pickle). Errors are `NpzError`, which `io.load` reports
as a `FormatError` naming the file.

Static layer: numpy and the standard library only.
"""

from __future__ import annotations

import os
import zipfile
import zlib
from typing import Any

import numpy as np

DTYPES = (
    "float16",
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "bool",
)
MAX_ELEMENTS = (
    50_000_000  # per array or variable: a hostile file must not make us allocate terabytes
)
MAX_ARRAY_BYTES = 256 * 2**20  # all arrays of one .npz together, checked from their headers
MAX_ARRAYS = 100_000  # members of one .npz


class NpzError(ValueError):
    """The .npz archive is malformed or too large (the text says how)."""


def read_npz(npath: str) -> dict:
    """`{key: array}` from an .npz, checking each .npy header before reading its data.

    An array of a dtype we never read (objects: that needs pickle) maps to the reason
    instead, so the error names the constant or attribute that uses it.
    """
    if not os.path.exists(npath):
        raise FileNotFoundError(npath)
    try:
        with zipfile.ZipFile(npath) as zf:
            headers = _npz_headers(zf)
            return {
                key: head if isinstance(head, str) else _npy_data(zf, info, head)
                for key, (info, head) in headers.items()
            }
    except (
        zipfile.BadZipFile,
        zlib.error,
        EOFError,
        OSError,
        ValueError,
        KeyError,
        NotImplementedError,
        RuntimeError,
    ) as e:
        if isinstance(e, (NpzError, FileNotFoundError)):
            raise
        raise NpzError(f"not a readable .npz archive ({type(e).__name__}: {e})") from None


def _npz_headers(zf: zipfile.ZipFile) -> dict:
    """Check every member's .npy header: name, dtype, shape, and the size it declares."""
    infos = zf.infolist()
    if len(infos) > MAX_ARRAYS:
        raise NpzError(f"{len(infos)} arrays, more than the {MAX_ARRAYS} allowed")
    out: dict[str, tuple[zipfile.ZipInfo, Any]] = {}  # (info, header) or (info, why not)
    total = 0
    for info in infos:
        key = info.filename[:-4]
        if not info.filename.endswith(".npy") or key in out:
            raise NpzError(f"member {info.filename!r} is not a uniquely named .npy array")
        shape, fortran, dtype, offset = _npy_header(zf, info, key)
        if dtype.hasobject:  # (reading it would need pickle): an error where it is used
            out[key] = (info, "is not a plain numeric array")
            continue
        if dtype.name not in DTYPES:
            out[key] = (info, f"has unsupported dtype {dtype.name}")
            continue
        size = 1
        for d in shape:
            size *= d
        if size > MAX_ELEMENTS:
            raise NpzError(
                f"array {key!r} declares shape {shape!r}, {size} elements, more "
                f"than the {MAX_ELEMENTS} allowed"
            )
        total += size * dtype.itemsize
        if total > MAX_ARRAY_BYTES:
            raise NpzError(
                f"the arrays declare more than the {MAX_ARRAY_BYTES} bytes "
                f"allowed (array {key!r} has shape {shape!r} {dtype.name})"
            )
        if info.file_size != offset + size * dtype.itemsize:
            raise NpzError(
                f"array {key!r}: its header declares {size * dtype.itemsize} "
                f"bytes of data, the archive holds {info.file_size - offset}"
            )
        out[key] = (info, (shape, fortran, dtype, offset))
    return out


def _npy_header(zf: zipfile.ZipFile, info: zipfile.ZipInfo, key: str) -> tuple:
    """One member's header: shape, Fortran order, dtype, and where its data starts."""
    with zf.open(info) as f:
        version = np.lib.format.read_magic(f)
        if version not in ((1, 0), (2, 0)):
            raise NpzError(f"array {key!r} has unsupported .npy version {version}")
        read = (
            np.lib.format.read_array_header_1_0
            if version == (1, 0)
            else np.lib.format.read_array_header_2_0
        )
        shape, fortran, dtype = read(f, max_header_size=10_000)
        return shape, fortran, dtype, f.tell()


def _npy_data(zf: zipfile.ZipFile, info: zipfile.ZipInfo, head: tuple) -> np.ndarray:
    shape, fortran, dtype, offset = head
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    with zf.open(info) as f:
        f.read(offset)
        data = f.read(nbytes)
    if len(data) != nbytes:
        raise NpzError(f"array {info.filename[:-4]!r} is truncated")
    arr = np.frombuffer(data, dtype=dtype).reshape(shape, order="F" if fortran else "C")
    return arr.copy()
