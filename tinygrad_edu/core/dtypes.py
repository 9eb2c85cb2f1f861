"""PyTorch's dtype and device names, and the default floating dtype.

`tg.float32`, `tg.long`, ... are numpy dtypes, so `x.dtype == tg.float64` and
`np.zeros(2, tg.int64)` both work. As in PyTorch, `tg.float` is float32 and `tg.double`
float64; unlike PyTorch, Python floats become float64 unless `tg.set_default_dtype`
says otherwise (lessons compare with numpy, which computes in float64).

There is one device, the CPU: `device="cpu"` (or `tg.device("cpu")`) is accepted
wherever PyTorch takes it, and any other device is refused with a message instead of
being ignored. Core layer: numpy and the standard library only.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from . import source
from .errors import DataError, message

float16 = half = np.dtype(np.float16)
float32 = float = np.dtype(np.float32)  # noqa: A001 - PyTorch's name (torch.float is float32)
float64 = double = np.dtype(np.float64)
int8 = np.dtype(np.int8)
uint8 = np.dtype(np.uint8)
int16 = short = np.dtype(np.int16)
int32 = int = np.dtype(np.int32)  # noqa: A001 - PyTorch's name (torch.int is int32)
int64 = long = np.dtype(np.int64)
bool = np.dtype(np.bool_)  # noqa: A001 - PyTorch's name

_default = [float64]  # a list, so that `set_default_dtype` changes it for every importer


def get_default_dtype() -> np.dtype:
    """The dtype Python floats (and `zeros`, `randn`, layers, ...) get: float64 unless set."""
    return _default[0]


def set_default_dtype(dtype: Any) -> None:
    r"""Make `dtype` (float32 or float64) the dtype of new floating tensors, as in PyTorch.

    Example:
        >>> import tinygrad_edu as tg
        >>> tg.set_default_dtype(tg.float32)
        >>> tg.tensor([1.5]).dtype
        dtype('float32')
        >>> tg.set_default_dtype(tg.float64)
    """
    dt = np.dtype(dtype) if not isinstance(dtype, np.dtype) else dtype
    if dt not in (float32, float64):
        raise DataError(
            message(
                "set_default_dtype",
                f"the default dtype must be float32 or float64, got {dt}",
                source.here(),
                "tg.set_default_dtype(tg.float32)",
            )
        )
    _default[0] = dt


class device:  # noqa: N801 - PyTorch's name
    r"""A device name; only the CPU exists here (`tg.device("cpu")`).

    Example:
        >>> import tinygrad_edu as tg
        >>> tg.device("cpu")
        device(type='cpu')
    """

    __slots__ = ("type",)

    def __init__(self, kind: Any = "cpu") -> None:
        self.type = check_device(kind, "device")

    def __eq__(self, other: Any) -> builtins.bool:
        return isinstance(other, (device, str)) and str(other).split(":")[0] == self.type

    def __hash__(self) -> builtins.int:
        return hash(self.type)

    def __str__(self) -> str:
        return self.type

    def __repr__(self) -> str:
        return f"device(type={self.type!r})"


def check_device(kind: Any, op: str) -> str:
    """ "cpu" for None, "cpu", "cpu:0" or `device("cpu")`; a clear error for anything else."""
    if kind is None:
        return "cpu"
    name = kind.type if isinstance(kind, device) else kind
    if isinstance(name, str) and name.split(":")[0] == "cpu":
        return "cpu"
    raise ValueError(
        message(
            op,
            f"device {str(name)!r} is not available: tinygrad_edu computes "
            "with numpy on the CPU only",
            source.here(),
            "use device='cpu' (tg.cuda.is_available() is False, so the usual "
            "`'cuda' if torch.cuda.is_available() else 'cpu'` picks it)",
        )
    )


class _NoAccelerator:
    """`tg.cuda` / `tg.backends.mps`: present so device checks run, and always unavailable."""

    @staticmethod
    def is_available() -> builtins.bool:
        return False

    @staticmethod
    def device_count() -> builtins.int:
        return 0

    @staticmethod
    def manual_seed(seed: Any) -> None:
        pass  # nothing to seed: there is no accelerator

    manual_seed_all = manual_seed


cuda = _NoAccelerator()


class _Backends:
    mps = _NoAccelerator()
    cuda = _NoAccelerator()


backends = _Backends()
