"""repeat_interleave (int or tensor counts, and `torch.repeat_interleave(counts)`),
unflatten, movedim and meshgrid (issue 30), built on indexing and the core's views.
Core layer.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ... import source
from ...errors import DataError, ShapeError, message
from ..common import values_read
from .shared import _dims, _t


def repeat_interleave(self: Any, repeats: Any, dim: Any = None, *, output_size: Any = None) -> Any:
    """Each element (or slice along `dim`) `repeats` times in a row: `repeats` is an int, or
    an int tensor of one count per slice (or of one count for all)."""
    if self.ndim == 0 and dim is not None:
        raise ShapeError(
            message(
                "repeat_interleave",
                f"dim={dim!r} given for a number (shape ())",
                source.here(),
                "leave out dim, or make it a vector with .reshape(1)",
            )
        )
    x = self.reshape(-1) if dim is None else self
    (d,) = (0,) if dim is None else _dims(self, dim, "repeat_interleave")
    counts = _counts(repeats, x.shape[d], d)
    total = int(counts.sum()) * (x.shape[d] if counts.ndim == 0 else 1)  # one count: for all
    if output_size is not None and int(output_size) != total:
        raise ShapeError(
            message(
                "repeat_interleave",
                f"output_size={output_size!r}, but the repeats make {total} along dim {d}",
                source.here(),
                f"pass output_size={total} or leave it out",
            )
        )
    picks = np.repeat(np.arange(x.shape[d]), counts)
    return x[(slice(None),) * d + (picks,)]


def _counts(repeats: Any, size: int, d: int) -> np.ndarray:
    """The repeat counts as PyTorch takes them: a non-negative int, or an int32/int64 tensor
    with no axis or one, holding one count or `size` of them."""
    op = "repeat_interleave"
    if isinstance(repeats, _t()):
        values_read(repeats, op)  # the counts decide the result's shape
        counts: np.ndarray = repeats._data
        if counts.dtype not in (np.int64, np.int32):  # PyTorch's kernel takes only these
            raise DataError(
                message(
                    op,
                    f"repeats must hold int64 or int32 counts, got {counts.dtype}",
                    source.here(),
                    "convert them with .long()",
                )
            )
        if counts.ndim > 1:
            raise ShapeError(
                message(
                    op,
                    f"repeats must have no axis or one, got shape {counts.shape!r}",
                    source.here(),
                )
            )
        if counts.size != 1 and counts.size != size:
            raise ShapeError(
                message(
                    op,
                    f"repeats has {counts.size} counts but the tensor has {size} along dim {d}",
                    source.here(),
                    f"give one count, or {size} of them",
                )
            )
    elif isinstance(repeats, numbers.Integral):
        counts = np.asarray(int(repeats))
    else:  # PyTorch takes no list or float: the counts are an int or an int tensor
        raise DataError(
            message(
                op,
                f"repeats must be an int or an int tensor, got {type(repeats).__name__} "
                f"{repeats!r}",
                source.here(),
                "wrap a list of counts in torch.tensor(...)",
            )
        )
    if (counts < 0).any():
        raise DataError(
            message(op, f"repeats must not be negative, got {counts.tolist()!r}", source.here())
        )
    return counts.reshape(()) if counts.size == 1 else counts.reshape(-1)


def repeat_interleave_counts(repeats: Any, *args: Any, **kwargs: Any) -> Any:
    """`torch.repeat_interleave(x, repeats, dim)`, or with one argument, a vector of counts:
    `torch.repeat_interleave(torch.tensor([2, 0, 1]))` is `tensor([0, 0, 2])`, each index
    as many times as its count (in the counts' dtype)."""
    if args or "repeats" in kwargs:
        x = repeats if isinstance(repeats, _t()) else _t()(repeats)
        return repeat_interleave(x, *args, **kwargs)
    if not isinstance(repeats, _t()) or repeats.ndim != 1:
        shape = getattr(repeats, "shape", None)
        raise ShapeError(
            message(
                "repeat_interleave",
                f"with one argument it takes a vector of counts, got shape {shape!r}",
                source.here(),
                "pass the counts as a 1-D int tensor, e.g. torch.tensor([2, 0, 1])",
            )
        )
    index = _t()._make(np.arange(repeats.shape[0]).astype(repeats.dtype))
    return repeat_interleave(index, repeats, **kwargs)


def unflatten(self: Any, dim: int, sizes: Any) -> Any:
    (d,) = _dims(self, dim, "unflatten")
    return self.reshape(self.shape[:d] + tuple(sizes) + self.shape[d + 1 :])


def movedim(self: Any, source_: Any, destination: Any) -> Any:
    """Move axes `source` to the places `destination` (ints or tuples), as PyTorch."""
    src = _dims(self, source_, "movedim")
    dst = _dims(self, destination, "movedim")
    if len(src) != len(dst):
        raise ShapeError(
            message(
                "movedim",
                f"source {source_!r} and destination {destination!r} differ in length",
                source.here(),
            )
        )
    order = [i for i in range(self.ndim) if i not in src]
    for s, t in sorted(zip(dst, src)):
        order.insert(s, t)
    return self.permute(*order)


def meshgrid(*tensors: Any, indexing: str = "ij") -> tuple[Any, ...]:
    """Grids from vectors: `indexing='ij'` (PyTorch's default) or 'xy' (numpy's)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing not in ("ij", "xy"):
        raise ValueError(message("meshgrid", f"indexing must be 'ij' or 'xy', got {indexing!r}"))
    if len({t.dtype for t in tensors}) > 1:
        raise DataError(
            message(
                "meshgrid",
                "expects all tensors to have the same dtype, got "
                + ", ".join(str(t.dtype) for t in tensors),
                source.here(),
                "convert them first (.float(), .long())",
            )
        )
    vecs = [t.reshape(-1) for t in tensors]
    shape = tuple(v.shape[0] for v in vecs)
    out = []
    for i, v in enumerate(vecs):
        view = (1,) * i + (shape[i],) + (1,) * (len(vecs) - i - 1)
        out.append(v.reshape(view).expand(shape))
    if indexing == "xy" and len(out) >= 2:  # numpy's: the first two axes swapped
        out = [o.swapaxes(0, 1) for o in out]
    return tuple(out)
