"""PyTorch's shape and indexing ops (issue 30): flip, roll, rot90, diag, diagonal,
diag_embed, nonzero, masked_select, index_select, index_add, scatter, take_along_dim,
repeat_interleave, unflatten, movedim, meshgrid, tril_/triu_.

Flip, Roll, Diagonal and DiagonalScatter are primitives (one class each, forward and
backward side by side; each backward is another of them, so `create_graph=True` works).
The rest are built from the core's indexing ops (Index, IndexAdd, IndexPut), whose
gradients the core already checks. As in PyTorch, `diagonal` is a view (writing into it
writes into the matrix) and `flip`, `roll` and `diag` are copies. Core layer.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from .. import source
from ..errors import DataError, ShapeError, message
from ..function import Function
from .common import is_array, values_read
from .movement import IndexAdd, IndexPut


def _t() -> Any:
    from ..tensor import Tensor  # here, not at the top: tensor.py imports this module

    return Tensor


def _dims(t: Any, dims: Any, op: str) -> tuple[int, ...]:
    """`dims` (an int, or a tuple or list of them) as non-negative axes of `t`."""
    dims = (dims,) if isinstance(dims, numbers.Integral) else tuple(dims)
    n = max(t.ndim, 1)
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, numbers.Integral) or not -n <= d < n:
            raise ShapeError(
                message(
                    op,
                    f"dim {d!r} is out of range for a tensor with {t.ndim} axes (shape {t.shape!r})",
                    source.here(),
                    f"use dims in -{n} .. {n - 1}",
                )
            )
    out = tuple(int(d) % n for d in dims)
    if len(set(out)) != len(out):
        raise ShapeError(message(op, f"dims {dims!r} name an axis twice", source.here()))
    return out


def _indices(index: Any, op: str) -> np.ndarray:
    """An index tensor's integers (PyTorch refuses float indices, and so do we)."""
    arr = np.asarray(index._data if isinstance(index, _t()) else index)
    if arr.dtype.kind not in "iu":
        raise DataError(
            message(
                op,
                f"index must hold integers (int64), got {arr.dtype} of shape {arr.shape!r}",
                source.here(),
                "convert it with .long()",
            )
        )
    return arr.astype(np.intp, copy=False)


def _same_dtype(op: str, t: Any, src: Any) -> None:
    """PyTorch's index_add, scatter and scatter_add refuse a source of another dtype (the
    result would have to be rounded into the tensor's or promoted away from it)."""
    if isinstance(src, _t()) and src.dtype != t.dtype:
        raise DataError(
            message(
                op,
                f"the source is {src.dtype} but the tensor is {t.dtype} (shapes {src.shape!r} "
                f"and {t.shape!r}); PyTorch needs one dtype",
                source.here(),
                f"convert the source with .to({t.dtype})",
            )
        )


# --- primitives ----------------------------------------------------------------------------


class Flip(Function):
    @staticmethod
    def forward(ctx: Any, a: Any, dims: tuple[int, ...]) -> Any:
        ctx.dims = dims
        return np.flip(a, dims).copy()  # a copy, as PyTorch's flip

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        return (np.flip(g, ctx.dims).copy() if is_array(g) else Flip.apply(g, dims=ctx.dims),)


class Roll(Function):
    @staticmethod
    def forward(ctx: Any, a: Any, shifts: tuple[int, ...], dims: tuple[int, ...]) -> Any:
        ctx.shifts, ctx.dims = shifts, dims
        return np.roll(a, shifts, dims)

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        back = tuple(-s for s in ctx.shifts)  # roll the other way
        if is_array(g):
            return (np.roll(g, back, ctx.dims),)
        return (Roll.apply(g, shifts=back, dims=ctx.dims),)


class Diagonal(Function):
    """The diagonal (`offset` above the main one) of the axes dim1, dim2, as the last axis:
    a view, as PyTorch's, and a writable one (numpy's own is read-only)."""

    _is_view = True

    @staticmethod
    def forward(ctx: Any, a: Any, offset: int, dim1: int, dim2: int) -> Any:
        ctx.a_shape, ctx.args = a.shape, (offset, dim1, dim2)
        out = np.diagonal(a, offset, dim1, dim2)
        if a.flags.writeable:
            out.flags.writeable = True
        return out

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        return (DiagonalScatter.apply(g, shape=ctx.a_shape, args=ctx.args),)


class DiagonalScatter(Function):
    """Zeros of `shape` with `g` on the diagonal `args` = (offset, dim1, dim2): the backward
    of Diagonal, and `diag_embed` / `diag` of a vector."""

    @staticmethod
    def forward(ctx: Any, g: Any, shape: tuple[int, ...], args: tuple[int, int, int]) -> Any:
        ctx.args = args
        out = np.zeros(shape, dtype=g.dtype)
        view = np.diagonal(out, *args)
        view.flags.writeable = True
        view[...] = g
        return out

    @staticmethod
    def backward(ctx: Any, gg: Any) -> Any:
        return (Diagonal.apply(gg, *(), **dict(zip(("offset", "dim1", "dim2"), ctx.args))),)


# --- the methods ---------------------------------------------------------------------------


def flip(self: Any, *given: Any, **kwargs: Any) -> Any:
    dims: Any = kwargs.pop("dims", given)  # x.flip(0), x.flip((0, 1)), x.flip(dims=[0])
    if not dims and dims != []:  # PyTorch needs them: flip() alone is not "flip everything"
        raise TypeError(
            message(
                "flip", "missing the dims to flip", source.here(), "x.flip(0) or x.flip((0, 1))"
            )
        )
    dims = dims[0] if len(dims) == 1 and not isinstance(dims[0], numbers.Integral) else dims
    return Flip.apply(self, dims=_dims(self, dims, "flip"))


def _at_least_2d(t: Any, op: str) -> None:
    if t.ndim < 2:
        raise ShapeError(
            message(op, f"needs a tensor with 2 or more axes, got shape {t.shape!r}", source.here())
        )


def fliplr(self: Any) -> Any:
    _at_least_2d(self, "fliplr")
    return flip(self, 1)


def flipud(self: Any) -> Any:
    if self.ndim < 1:
        raise ShapeError(message("flipud", "needs a tensor with axes, got a number", source.here()))
    return flip(self, 0)


def roll(self: Any, shifts: Any, dims: Any = None) -> Any:
    if dims is None:  # PyTorch: roll the flattened numbers, keep the shape
        return Roll.apply(self.reshape(-1), shifts=_ints(shifts), dims=(0,)).reshape(self.shape)
    shifts, dims = _ints(shifts), _dims(self, dims, "roll")
    if len(shifts) != len(dims):
        raise ShapeError(
            message(
                "roll",
                f"needs one shift per dim, got shifts {shifts!r} for dims {dims!r}",
                source.here(),
            )
        )
    return Roll.apply(self, shifts=shifts, dims=dims)


def _ints(x: Any) -> tuple[int, ...]:
    return (int(x),) if isinstance(x, numbers.Integral) else tuple(int(v) for v in x)


def rot90(self: Any, k: int = 1, dims: Any = (0, 1)) -> Any:
    """Turn by 90 degrees k times, from the first of `dims` toward the second."""
    d0, d1 = _dims(self, dims, "rot90") if len(dims) == 2 else (None, None)
    if d0 is None:
        raise ShapeError(message("rot90", f"needs two dims, got {dims!r}", source.here()))
    k %= 4
    if k == 1:
        return flip(self, d1).swapaxes(d0, d1)
    if k == 2:
        return flip(self, (d0, d1))
    if k == 3:
        return flip(self, d0).swapaxes(d0, d1)
    return self.clone()


def diagonal(self: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Any:
    d1, d2 = _dims(self, (dim1, dim2), "diagonal")
    return Diagonal.apply(self, offset=int(offset), dim1=d1, dim2=d2)


def diag_embed(self: Any, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Any:
    n = self.ndim + 1
    d1, d2 = (int(dim1) % n, int(dim2) % n)
    if d1 == d2:
        raise ShapeError(message("diag_embed", "dim1 and dim2 must differ", source.here()))
    size = self.shape[-1] + abs(int(offset)) if self.ndim else 1
    rest = list(self.shape[:-1])
    shape = []
    for i in range(n):
        shape.append(size if i in (d1, d2) else rest.pop(0))
    return DiagonalScatter.apply(self, shape=tuple(shape), args=(int(offset), d1, d2))


def diag(self: Any, diagonal: int = 0) -> Any:
    """A vector: the square matrix with it on the `diagonal`-th diagonal. A matrix: a copy of
    that diagonal, as `torch.diag`."""
    if self.ndim == 1:
        n = self.shape[0] + abs(int(diagonal))
        return DiagonalScatter.apply(self, shape=(n, n), args=(int(diagonal), 0, 1))
    if self.ndim == 2:
        return Diagonal.apply(self, offset=int(diagonal), dim1=0, dim2=1).clone()
    raise ShapeError(
        message(
            "diag",
            f"expects a vector or a matrix, got shape {self.shape!r}",
            source.here(),
            "use .diagonal(offset, dim1, dim2) or torch.diag_embed for more axes",
        )
    )


def tril_(self: Any, diagonal: int = 0) -> Any:
    return self._inplace("tril_", lambda t: t.tril(diagonal))


def triu_(self: Any, diagonal: int = 0) -> Any:
    return self._inplace("triu_", lambda t: t.triu(diagonal))


def nonzero(self: Any, *, as_tuple: bool = False) -> Any:
    """Where the elements are not zero: an (n, ndim) int64 tensor, or one per axis."""
    values_read(self, "nonzero")
    found = np.nonzero(np.atleast_1d(self._data))
    if as_tuple:  # a number counts as a vector of one, as in PyTorch
        return tuple(_t()._make(i.astype(np.int64)) for i in found)
    count = found[0].size if self.ndim else int(found[0].size)  # a number: 1 row or none
    return _t()._make(
        np.stack(found, axis=1).astype(np.int64)[:, : self.ndim].reshape(count, self.ndim)
    )


def argwhere(self: Any) -> Any:
    return nonzero(self)


def masked_select(self: Any, mask: Any) -> Any:
    """The elements where `mask` holds (both broadcast), as a vector in the graph."""
    if isinstance(mask, _t()):
        values_read(mask, "index")  # the mask's values choose the elements (and the shape)
    m = mask._data if isinstance(mask, _t()) else np.asarray(mask)
    if m.dtype != np.bool_:
        raise DataError(
            message("masked_select", f"mask must be boolean, got {m.dtype}", source.here(), "x > 0")
        )
    shape = np.broadcast_shapes(self.shape, m.shape)
    x = self if self.shape == shape else self.expand(shape)
    return x[np.broadcast_to(m, shape)]


def index_select(self: Any, dim: int, index: Any) -> Any:
    idx = _indices(index, "index_select")
    if idx.ndim > 1:
        raise ShapeError(
            message(
                "index_select", f"index must be a vector, got shape {idx.shape!r}", source.here()
            )
        )
    (d,) = _dims(self, dim, "index_select")
    return self[(slice(None),) * d + (idx.reshape(-1),)]


def index_add(self: Any, dim: int, index: Any, source_: Any, *, alpha: Any = 1) -> Any:
    """`self` with `alpha * source` added at `index` along `dim` (repeats add up)."""
    idx = _indices(index, "index_add")
    (d,) = _dims(self, dim, "index_add")
    _same_dtype("index_add", self, source_)
    add = source_ if alpha == 1 else source_ * alpha
    place = (slice(None),) * d + (idx.reshape(-1),)
    return self + IndexAdd.apply(add, shape=self.shape, index=place)


def index_add_(self: Any, dim: int, index: Any, source_: Any, *, alpha: Any = 1) -> Any:
    return self._inplace("index_add_", lambda t: index_add(t, dim, index, source_, alpha=alpha))


def _grid(op: str, self: Any, dim: int, index: Any) -> tuple[tuple[Any, ...], tuple[slice, ...]]:
    """numpy's index for `out[index[i][j]][j]` (dim 0, and so on): an open grid over the
    index's shape, with the index along `dim`."""
    idx = _indices(index, op)
    (d,) = _dims(self, dim, op)
    if idx.ndim != self.ndim:
        raise ShapeError(
            message(
                op,
                f"index has {idx.ndim} axes but the tensor has {self.ndim} (shape {self.shape!r})",
                source.here(),
                "give the index as many axes as the tensor",
            )
        )
    grid = list(np.ogrid[tuple(slice(n) for n in idx.shape)])
    grid[d] = idx
    return tuple(grid), tuple(slice(0, n) for n in idx.shape)


def scatter(
    self: Any, dim: int, index: Any, src: Any = None, *, value: Any = None, reduce: Any = None
) -> Any:
    """`out[index[i][j]][j] = src[i][j]` (dim 0), the rest of `self` unchanged."""
    if reduce is not None:
        raise NotImplementedError(
            message(
                "scatter",
                "reduce= is not supported",
                source.here(),
                "use scatter_reduce or scatter_add",
            )
        )
    grid, part = _grid("scatter", self, dim, index)
    src = value if src is None else src
    _same_dtype("scatter", self, src)
    vals = src[part] if isinstance(src, _t()) else np.asarray(src, dtype=self.dtype)
    return IndexPut.apply(self, vals, index=grid)


def scatter_(
    self: Any, dim: int, index: Any, src: Any = None, *, value: Any = None, reduce: Any = None
) -> Any:
    return self._inplace(
        "scatter_", lambda t: scatter(t, dim, index, src, value=value, reduce=reduce)
    )


def scatter_add(self: Any, dim: int, index: Any, src: Any) -> Any:
    grid, part = _grid("scatter_add", self, dim, index)
    _same_dtype("scatter_add", self, src)
    return self + IndexAdd.apply(src[part], shape=self.shape, index=grid)


def scatter_add_(self: Any, dim: int, index: Any, src: Any) -> Any:
    return self._inplace("scatter_add_", lambda t: scatter_add(t, dim, index, src))


def scatter_reduce(
    self: Any, dim: int, index: Any, src: Any, reduce: str, *, include_self: bool = True
) -> Any:
    """Reduce `src` into `self` at `index` along `dim`: 'sum', 'mean', 'amax' or 'amin'.

    amax/amin share the gradient evenly among the elements equal to the result, as PyTorch.
    """
    if reduce not in ("sum", "mean", "amax", "amin"):
        raise NotImplementedError(
            message(
                "scatter_reduce",
                f"reduce={reduce!r} is not supported ('sum', 'mean', 'amax', 'amin' are)",
                source.here(),
            )
        )
    grid, part = _grid("scatter_reduce", self, dim, index)
    _same_dtype("scatter_reduce", self, src)
    part_src = src[part]
    tensor = _t()
    hit = np.zeros(self.shape, dtype=np.int64)  # how many src elements land on each place
    np.add.at(hit, grid, 1)
    keep = tensor._make((hit == 0) | include_self)  # where self's own value takes part
    zero = tensor._make(np.zeros((), self.dtype))
    own = _where(keep, self, zero)
    if reduce in ("sum", "mean"):
        total = own + IndexAdd.apply(part_src, shape=self.shape, index=grid)
        if reduce == "sum":
            return total
        count = hit + keep._data
        return (
            total / tensor._make(count.astype(self.dtype))
            if self.dtype.kind == "f"
            else tensor._make(np.floor_divide(total._data, count))
        )
    best = np.where(keep._data, self._data, -np.inf if reduce == "amax" else np.inf)
    (np.maximum if reduce == "amax" else np.minimum).at(best, grid, part_src._data)
    best = best.astype(self.dtype)
    won_self = keep._data & (self._data == best)
    won_src = part_src._data == best[grid]
    count = won_self.astype(np.int64)
    np.add.at(count, grid, won_src)
    # the winners, each with its share: (sum of winners) / (their count) is the result
    share = _where(tensor._make(won_self), self, zero) + IndexAdd.apply(
        _where(tensor._make(won_src), part_src, zero), shape=self.shape, index=grid
    )
    if self.dtype.kind != "f":
        return tensor._make(best)
    return share / tensor._make(np.maximum(count, 1).astype(self.dtype))


def _where(cond: Any, a: Any, b: Any) -> Any:
    from ..creation import where

    return where(cond, a, b)


def take_along_dim(self: Any, indices: Any, dim: Any = None) -> Any:
    from ..torch_api import gather

    idx = _indices(indices, "take_along_dim")
    if dim is None:
        return gather(self.reshape(-1), 0, idx.reshape(-1))
    (d,) = _dims(self, dim, "take_along_dim")
    if idx.ndim != self.ndim:
        raise ShapeError(
            message(
                "take_along_dim",
                f"indices have {idx.ndim} axes, the tensor {self.ndim} (shape {self.shape!r})",
                source.here(),
            )
        )
    # broadcast every axis but `dim`, as PyTorch
    shape = list(np.broadcast_shapes(self.shape[:d] + (1,) + self.shape[d + 1 :],
                                      idx.shape[:d] + (1,) + idx.shape[d + 1 :]))  # fmt: skip
    x_shape, i_shape = list(shape), list(shape)
    x_shape[d], i_shape[d] = self.shape[d], idx.shape[d]
    x = self if tuple(x_shape) == self.shape else self.expand(tuple(x_shape))
    return gather(x, d, np.broadcast_to(idx, tuple(i_shape)))


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


METHODS = {
    "flip": flip,
    "fliplr": fliplr,
    "flipud": flipud,
    "roll": roll,
    "rot90": rot90,
    "diag": diag,
    "diagonal": diagonal,
    "diag_embed": diag_embed,
    "tril_": tril_,
    "triu_": triu_,
    "nonzero": nonzero,
    "argwhere": argwhere,
    "masked_select": masked_select,
    "index_select": index_select,
    "index_add": index_add,
    "index_add_": index_add_,
    "scatter": scatter,
    "scatter_": scatter_,
    "scatter_add": scatter_add,
    "scatter_add_": scatter_add_,
    "scatter_reduce": scatter_reduce,
    "take_along_dim": take_along_dim,
    "repeat_interleave": repeat_interleave,
    "unflatten": unflatten,
    "movedim": movedim,
    "moveaxis": movedim,
}
FUNCTIONS = {"meshgrid": meshgrid, "repeat_interleave": repeat_interleave_counts}
