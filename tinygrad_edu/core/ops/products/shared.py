"""What the products family shares: Tensor, read lazily. Core layer."""

from __future__ import annotations

from typing import Any


def _t() -> Any:
    from ...tensor import Tensor  # here, not at the top: tensor.py imports this module

    return Tensor


def _tensor(x: Any) -> Any:
    return x if isinstance(x, _t()) else _t()(x)
