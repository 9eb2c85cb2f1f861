"""What the search family shares: a dim read as PyTorch reads it. Core layer."""

from __future__ import annotations

from typing import Any

from ..indexing import _dims


def _t() -> Any:
    from ...tensor import Tensor  # here, not at the top: tensor.py imports this module

    return Tensor


def _axis(t: Any, dim: Any, op: str) -> int:
    return _dims(t, dim, op)[0]
