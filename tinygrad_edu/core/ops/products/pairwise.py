"""outer/ger, kron, tensordot, trace, cdist and a tensor's multinomial (issue 30), built
from einsum, the norms and the core's ops. Core layer.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ... import source
from ...errors import DataError, ShapeError, message
from .norms import vector_norm
from .shared import _t, _tensor


def outer(self: Any, vec2: Any) -> Any:
    self, vec2 = _tensor(self), _tensor(vec2)
    if self.ndim != 1 or vec2.ndim != 1:
        raise ShapeError(
            message(
                "outer",
                f"needs two vectors, got shapes {self.shape!r} and {vec2.shape!r}",
                source.here(),
            )
        )
    return self.reshape(-1, 1) * vec2.reshape(1, -1)


def kron(self: Any, other: Any) -> Any:
    """Every element of `self` times the whole of `other`, tiled (numpy's kron)."""
    a, b = _tensor(self), _tensor(other)
    n = max(a.ndim, b.ndim)
    sa, sb = (1,) * (n - a.ndim) + a.shape, (1,) * (n - b.ndim) + b.shape
    x = a.reshape(tuple(v for s in sa for v in (s, 1)))
    y = b.reshape(tuple(v for s in sb for v in (1, s)))
    return (x * y).reshape(tuple(i * j for i, j in zip(sa, sb)))


def tensordot(a: Any, b: Any, dims: Any = 2) -> Any:
    """Sum over the last `dims` axes of a and the first of b, or over the pairs given."""
    a, b = _tensor(a), _tensor(b)
    da: list[Any]  # ints, or numbers.Integral given by the caller
    db: list[Any]
    if isinstance(dims, numbers.Integral):
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = ([d] if isinstance(d, numbers.Integral) else list(d) for d in dims)
    da, db = [d % a.ndim for d in da], [d % b.ndim for d in db]
    if [a.shape[i] for i in da] != [b.shape[i] for i in db]:
        raise ShapeError(
            message(
                "tensordot",
                f"the contracted sizes differ: {[a.shape[i] for i in da]} of {a.shape!r} and "
                f"{[b.shape[i] for i in db]} of {b.shape!r}",
                source.here(),
            )
        )
    keep_a = [i for i in range(a.ndim) if i not in da]
    keep_b = [i for i in range(b.ndim) if i not in db]
    k = int(np.prod([a.shape[i] for i in da]))
    x = a.permute(*keep_a, *da).reshape(-1, k)
    y = b.permute(*db, *keep_b).reshape(k, -1)
    return (x @ y).reshape(tuple(a.shape[i] for i in keep_a) + tuple(b.shape[i] for i in keep_b))


def trace(self: Any) -> Any:
    if self.ndim != 2:
        raise ShapeError(
            message("trace", f"expects a matrix, got shape {self.shape!r}", source.here())
        )
    if self.dtype == np.bool_:
        raise DataError(message("trace", "has no boolean version, as in PyTorch", source.here()))
    from ..indexing import diagonal

    d = diagonal(self)
    return d.sum() if self.dtype.kind == "f" else _t()._make(np.asarray(d._data.sum(), np.int64))


def cdist(x1: Any, x2: Any, p: float = 2.0, compute_mode: Any = None) -> Any:
    """The p-norm distance between each row of x1 (..., P, M) and each row of x2 (..., R, M)."""
    x1, x2 = _tensor(x1), _tensor(x2)
    if x1.ndim < 2 or x2.ndim < 2 or x1.shape[-1] != x2.shape[-1]:
        raise ShapeError(
            message(
                "cdist",
                f"needs (..., P, M) and (..., R, M) with the same M, got {x1.shape!r} and "
                f"{x2.shape!r}",
                source.here(),
            )
        )
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)  # (..., P, R, M)
    return vector_norm(diff, p, -1)


def multinomial(
    self: Any, num_samples: int, replacement: bool = False, *, generator: Any = None
) -> Any:
    from ...torch_api import multinomial as draw

    return draw(self, num_samples, replacement, generator=generator)
