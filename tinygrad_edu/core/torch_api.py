"""PyTorch's spellings of Tensor methods: `pow`, `sin`, `mm`, `norm`, `topk`, `size()`, `to`, ...

`Tensor` inherits them from `TorchMethods`, so tensor.py keeps the numpy-flavoured core
and this file holds what a PyTorch tutorial calls. Each method is built from the core's
ops (only sin, cos and erf are new ops, in ops/trig.py), so graphs and gradients are the
ones the core already checks. Where PyTorch and numpy disagree, PyTorch wins here.
Core layer: numpy and the standard library only.
"""

from __future__ import annotations

import builtins
import math
import numbers
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, Union, cast

import numpy as np

import tinygrad_edu.core.tensor as _tensor  # imported before Tensor exists: read `.Tensor` when used

from . import grad_mode, source, views
from .dtypes import check_device, device
from .errors import DataError, ShapeError, message
from .ops.common import refuse_dtype
from .ops.elementwise import Fill
from .ops.movement import Index
from .ops.reduce import whole_total_dtype
from .ops.search import _order
from .ops.trig import Cos, Erf, Sin

if TYPE_CHECKING:
    from .op_methods import OpMethods  # the methods core/ops installs, declared (op_methods.pyi)
    from .tensor import Tensor
else:
    OpMethods = object  # at run time tensor.py sets those methods on Tensor itself

# what PyTorch's arithmetic methods take: a tensor, a number or an array
Operand = Union["Tensor", float, np.ndarray]


class Size(tuple[Any, ...]):
    """`t.size()`: a tuple of sizes with PyTorch's `numel()`."""

    def numel(self) -> int:
        return math.prod(self)

    def __repr__(self) -> str:
        return f"Size({list(self)})"


class SizeOrCount(int):
    r"""`t.size`: numpy's element count (an int); called, PyTorch's `size()` / `size(dim)`.

    Example:
        >>> import tinygrad_edu as tg
        >>> t = tg.zeros(2, 3)
        >>> t.size, t.size(), t.size(1), t.size(-1)
        (6, Size([2, 3]), 3, 3)
    """

    _shape: tuple[int, ...]

    def __new__(cls, shape: tuple[Any, ...]) -> SizeOrCount:
        self = super().__new__(cls, math.prod(shape))
        self._shape = shape
        return self

    def __call__(self, dim: int | None = None) -> Any:
        if dim is None:
            return Size(self._shape)
        n = len(self._shape)
        if not -n <= dim < n:
            raise IndexError(
                message(
                    "size",
                    f"dim {dim} is out of range for a tensor with {n} axes (shape {self._shape!r})",
                    source.here(),
                )
            )
        return self._shape[dim]


class ValuesIndices(NamedTuple):
    """What `max(dim)`, `min(dim)` and `topk` return, as PyTorch's named tuples do."""

    values: Any
    indices: Any


def return_type(op: str) -> type[ValuesIndices]:
    """`torch.return_types.<op>`: a ValuesIndices printed as PyTorch prints it (issue 30)."""
    if op not in _RETURN_TYPES:
        made = type(op, (ValuesIndices,), {"__slots__": (), "__repr__": _shown})
        _RETURN_TYPES[op] = cast("type[ValuesIndices]", made)  # type() says only `type`
    return _RETURN_TYPES[op]


def _shown(self: Any) -> str:
    return f"torch.return_types.{type(self).__name__}(\nvalues={self.values!r},\nindices={self.indices!r})"


_RETURN_TYPES: dict[str, type[ValuesIndices]] = {}


def _dim(t: Any, dim: int, op: str) -> int:
    n = max(t.ndim, 1)
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or not -n <= dim < n:
        raise ShapeError(
            message(
                op,
                f"dim {dim!r} is out of range for a tensor with {t.ndim} axes (shape {t.shape!r})",
                source.here(),
                f"use a dim in -{n} .. {n - 1}",
            )
        )
    return int(dim) % n


def gather(t: TorchMethods, dim: int, index: Any) -> Tensor:
    r"""`out[i][j] = t[index[i][j]][j]` for dim=0 (and so on), as `torch.gather`.

    The gradient goes back to the gathered positions only (integer-array indexing).

    Example:
        >>> import tinygrad_edu as tg
        >>> tg.tensor([[1.0, 2.0], [3.0, 4.0]]).gather(1, tg.tensor([[1], [0]]).long())
        tensor([[2.],
                [3.]])
    """
    idx = np.asarray(index._data if isinstance(index, _tensor.Tensor) else index)
    if idx.dtype.kind not in "iu":
        raise DataError(
            message(
                "gather",
                f"index must hold integers, got {idx.dtype}",
                source.here(),
                "convert it with .long()",
            )
        )
    if t.ndim == 0:
        return t[()] if idx.size else t.reshape(0)
    dim = _dim(t, dim, "gather")
    if idx.ndim != t.ndim:
        raise ShapeError(
            message(
                "gather",
                f"index has {idx.ndim} axes but the input has {t.ndim} (shape {t.shape!r})",
                source.here(),
                "give the index as many axes as the input (unsqueeze it)",
            )
        )
    # an open grid over every axis, with `index` along `dim`: numpy's take_along_axis
    grid = list(np.ogrid[tuple(slice(n) for n in idx.shape)])
    grid[dim] = idx
    return Index.apply(t, index=tuple(grid))


def reduce_with_index(t: Any, op: str, dim: int, keepdim: bool) -> ValuesIndices:
    """`t.max(dim)` / `t.min(dim)`: the extreme values and where they are (first on ties)."""
    d = _dim(t, dim, op)
    arg = np.argmax if op == "max" else np.argmin
    _tensor._notify_concrete(t, op)  # numpy finds the index: no node a tracer could replay
    if t.ndim == 0:
        return return_type(op)(t.clone(), _tensor.Tensor._make(np.asarray(0)))  # bool stays bool
    idx = arg(t._data, axis=d, keepdims=True)
    values = gather(t, d, idx)
    if not keepdim:
        values, idx = values.squeeze(d), idx.squeeze(d)
    return return_type(op)(values, _tensor.Tensor._make(np.asarray(idx, dtype=np.int64)))


def _stored(op: str, value: Any, t: Any) -> np.ndarray:
    """A number as `t`'s dtype stores it (truncated into ints), refused where it does not fit,
    as PyTorch refuses -2.7 for a uint8 tensor instead of wrapping it around. A whole number
    down to -255 goes into uint8 wrapped around (-1 is 255), as PyTorch's check allows."""
    v = np.asarray(value)
    if t.dtype.kind in "iu" and v.dtype.kind in "fiu":
        info, whole = np.iinfo(t.dtype), np.trunc(v) if v.dtype.kind == "f" else v
        lowest = info.min if v.dtype.kind == "f" or t.dtype.kind == "i" else -int(info.max)
        if not (np.isfinite(v).all() and lowest <= whole.min() and whole.max() <= info.max):
            raise DataError(
                message(
                    op,
                    f"the value {value!r} cannot be stored in this {t.dtype} tensor "
                    f"(shape {t.shape!r}) without overflow, as in PyTorch",
                    source.here(),
                )
            )
    return v.astype(t.dtype)  # numpy's cast wraps a negative int around, as PyTorch's


def _same_dims(op: str, a: Any, b: Any, n: int, what: str) -> None:
    if a.ndim != n or b.ndim != n:
        raise ShapeError(
            message(
                op,
                f"expected two {what}, got shapes {a.shape!r} and {b.shape!r}",
                source.here(),
                "use torch.matmul (or @) for other shapes",
            )
        )


def _parse_to(t: Any, args: tuple[Any, ...], kwargs: dict[Any, Any]) -> Any:
    """The dtype asked for by `t.to(...)`: a dtype, a device, a tensor, or several."""
    dtype = kwargs.get("dtype")
    check_device(kwargs.get("device"), "to")
    for a in args:
        if isinstance(a, _tensor.Tensor):
            dtype = a.dtype
        elif isinstance(a, (str, device)):
            check_device(a, "to")
        elif a is not None:
            dtype = a
    return dtype


_TYPE_NAMES = {
    "float32": "FloatTensor",
    "float64": "DoubleTensor",
    "float16": "HalfTensor",
    "int64": "LongTensor",
    "int32": "IntTensor",
    "int16": "ShortTensor",
    "int8": "CharTensor",
    "uint8": "ByteTensor",
    "bool": "BoolTensor",
}


class TorchMethods(OpMethods):
    """Tensor methods under PyTorch's names and signatures (mixed into `Tensor`)."""

    __slots__ = ()

    if TYPE_CHECKING:  # what the methods below use of Tensor (tensor.py defines each)
        _data: np.ndarray

        @property
        def shape(self) -> tuple[int, ...]: ...
        @property
        def ndim(self) -> int: ...
        @property
        def requires_grad(self) -> builtins.bool: ...
        @property
        def dtype(self) -> np.dtype[Any]: ...
        def _inplace(
            self, op_name: str, fn: Callable[[Tensor], Tensor], other: Any = None, ufunc: Any = None
        ) -> Tensor: ...
        def reshape(self, *shape: Any) -> Tensor: ...
        def view(self, *shape: Any) -> Tensor: ...
        def transpose(self, *axes: Any) -> Tensor: ...
        def permute(self, *dims: Any) -> Tensor: ...
        def expand(self, *sizes: Any) -> Tensor: ...
        def clip(self, min: float | None = None, max: float | None = None) -> Tensor: ...  # noqa: A002
        def abs(self) -> Tensor: ...
        def exp(self) -> Tensor: ...
        def log(self) -> Tensor: ...
        def clone(self) -> Tensor: ...
        def detach(self) -> Tensor: ...
        def astype(self, dtype: Any) -> Tensor: ...
        def mean(
            self,
            axis: Any = None,
            keepdims: builtins.bool = False,
            *,
            dim: Any = None,
            keepdim: builtins.bool = False,
            dtype: Any = None,
        ) -> Tensor: ...
        def __getitem__(self, index: Any) -> Tensor: ...
        def __add__(self, other: Any) -> Tensor: ...
        def __radd__(self, other: Any) -> Tensor: ...
        def __sub__(self, other: Any) -> Tensor: ...
        def __rsub__(self, other: Any) -> Tensor: ...
        def __mul__(self, other: Any) -> Tensor: ...
        def __rmul__(self, other: Any) -> Tensor: ...
        def __truediv__(self, other: Any) -> Tensor: ...
        def __rtruediv__(self, other: Any) -> Tensor: ...
        def __pow__(self, other: Any) -> Tensor: ...
        def __neg__(self) -> Tensor: ...

    # --- elementwise ----------------------------------------------------------------------

    def pow(self, exponent: Tensor | float) -> Tensor:
        return self**exponent

    def sin(self) -> Tensor:
        return Sin.apply(self)

    def cos(self) -> Tensor:
        return Cos.apply(self)

    def erf(self) -> Tensor:
        return Erf.apply(self)

    def square(self) -> Tensor:
        x = self.long() if self.dtype == np.bool_ else self  # PyTorch squares bools as int64
        return x * x

    def neg(self) -> Tensor:
        return -self

    def reciprocal(self) -> Tensor:
        return 1.0 / self

    def add(self, other: Operand, *, alpha: float = 1) -> Tensor:
        return self + (other * alpha if alpha != 1 else other)

    def sub(self, other: Operand, *, alpha: float = 1) -> Tensor:
        return self - (other * alpha if alpha != 1 else other)

    def mul(self, other: Operand) -> Tensor:
        return self * other

    def copy_(self, src: Any) -> Tensor:
        """Write `src`'s numbers (broadcast, converted to this dtype) into this tensor, in place.

        As in PyTorch, the gradient flows to `src`; the old values stop mattering.
        """
        if src is self and not grad_mode.is_grad_enabled():
            views.bump(self)  # as PyTorch: nothing to write (even into a broadcast view)
            return cast("Tensor", self)
        src = src if isinstance(src, _tensor.Tensor) else _tensor.Tensor(src)
        if src.dtype != self.dtype:
            src = src.astype(self.dtype)
        return self._inplace("copy_", lambda t: Fill.apply(t, value=0.0) + src, src)

    # In place, as PyTorch's `x.relu_()`: the result is written into this tensor's storage
    # (`Tensor._inplace`), its version goes up, and a node that saved the old numbers (say,
    # sigmoid's result) then refuses its backward, as in PyTorch.

    def relu_(self) -> Tensor:
        return self._inplace("relu_", lambda t: t.relu())

    def sigmoid_(self) -> Tensor:
        return self._inplace("sigmoid_", lambda t: t.sigmoid())

    def tanh_(self) -> Tensor:
        return self._inplace("tanh_", lambda t: t.tanh())

    def exp_(self) -> Tensor:
        return self._inplace("exp_", lambda t: t.exp())

    def log_(self) -> Tensor:
        return self._inplace("log_", lambda t: t.log())

    def sqrt_(self) -> Tensor:
        return self._inplace("sqrt_", lambda t: t.sqrt())

    def abs_(self) -> Tensor:
        return self._inplace("abs_", lambda t: t.abs())

    def neg_(self) -> Tensor:
        return self._inplace("neg_", lambda t: -t)

    def pow_(self, exponent: Any) -> Tensor:
        return self._inplace("pow_", lambda t: t**exponent, exponent)

    __ipow__ = pow_  # `x **= 2` changes x in place (and keeps its dtype), as in PyTorch

    def masked_fill_(self, mask: Any, value: Any) -> Tensor:
        return self._inplace("masked_fill_", lambda t: t.masked_fill(mask, value), value)

    def uniform_(self, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
        """Fill in place with uniform samples in [a, b) (the generator's, else numpy's global)."""
        from .creation import random_source  # a seeded Generator was ignored (issue 30)

        return self.copy_(_tensor.Tensor._make(random_source(generator).uniform(a, b, self.shape)))

    def normal_(self, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
        """Fill in place with normal samples (the generator's, else numpy's global)."""
        from .creation import random_source

        return self.copy_(
            _tensor.Tensor._make(random_source(generator).normal(mean, std, self.shape))
        )

    def masked_fill(self, mask: Any, value: Any) -> Tensor:
        """`value` where `mask` is True. The value is stored in this tensor's dtype, as
        PyTorch stores it (2.7 into an int tensor is 2, not a float result)."""
        from .creation import where

        if isinstance(value, _tensor.Tensor):
            value = value if value.dtype == self.dtype else value.to(self.dtype)
        else:
            value = _stored("masked_fill", value, self)
        return where(mask, value, self)

    # --- products -------------------------------------------------------------------------

    def matmul(self, other: Tensor) -> Tensor:
        return self @ other

    def mm(self, other: Tensor) -> Tensor:
        """Matrix product of two 2-D tensors (no broadcasting), as `torch.mm`."""
        _same_dims("mm", self, other, 2, "matrices (2-D tensors)")
        return self @ other

    def bmm(self, other: Tensor) -> Tensor:
        """Batched matrix product of (b, n, m) and (b, m, p), as `torch.bmm`."""
        _same_dims("bmm", self, other, 3, "batches of matrices (3-D tensors)")
        return self @ other

    def dot(self, other: Tensor) -> Tensor:
        """Inner product of two 1-D tensors of one length, as `torch.dot`."""
        _same_dims("dot", self, other, 1, "vectors (1-D tensors)")
        return self @ other

    # --- reductions -----------------------------------------------------------------------

    def norm(self, p: Any = "fro", dim: Any = None, keepdim: builtins.bool = False) -> Tensor:
        r"""The vector p-norm over `dim` (all elements by default): 2 ("fro"), 1 or inf.

        Example:
            >>> import tinygrad_edu as tg
            >>> tg.tensor([3.0, 4.0]).norm()
            tensor(5.)
        """
        from .ops.products.norms import vector_norm

        # one primitive, whose gradient is 0 where the norm is 0 (as PyTorch's; sqrt of a
        # sum of squares gave nan for a zero row)
        p = {"fro": 2, "inf": math.inf}.get(p, p) if isinstance(p, str) else p
        if isinstance(p, numbers.Real) and not isinstance(p, builtins.bool):
            return cast("Tensor", vector_norm(self, p, dim, keepdim))
        raise ValueError(
            message("norm", f"p must be a positive number, 'fro' or inf, got {p!r}", source.here())
        )

    def var(
        self,
        dim: Any = None,
        unbiased: builtins.bool = True,
        keepdim: builtins.bool = False,
        *,
        correction: Any = None,
    ) -> Tensor:
        """Variance over `dim`, divided by n - 1 unless `unbiased=False` (PyTorch's default)."""
        if self.dtype.kind != "f":  # PyTorch has no whole-number kernel for it
            refuse_dtype("var", self, "a float tensor")
        c = (1 if unbiased else 0) if correction is None else correction
        centred = self - self.mean(dim, keepdims=True)
        total = (centred * centred).sum(dim, keepdims=keepdim)
        n = self._data.size // max(total._data.size, 1) if total._data.size else 0
        return total / max(n - c, 0)

    def std(
        self,
        dim: Any = None,
        unbiased: builtins.bool = True,
        keepdim: builtins.bool = False,
        *,
        correction: Any = None,
    ) -> Tensor:
        from .creation import where

        if self.dtype.kind != "f":
            refuse_dtype("std", self, "a float tensor")
        v = self.var(dim, unbiased, keepdim, correction=correction)
        # where the spread is 0 the gradient is 0, as PyTorch's (sqrt's 1 / (2 * 0) times
        # var's 0 was nan); sqrt sees 1 there, so its own gradient stays finite
        flat = v == 0
        return where(flat, v, where(flat, 1.0, v).sqrt())

    def topk(
        self,
        k: int,
        dim: int = -1,
        largest: builtins.bool = True,
        sorted: builtins.bool = True,  # noqa: A002 - PyTorch's name
    ) -> ValuesIndices:
        r"""The `k` largest (or smallest) values along `dim` and their indices, as `torch.topk`.

        Example:
            >>> import tinygrad_edu as tg
            >>> tg.tensor([1.0, 5.0, 3.0]).topk(2)
            torch.return_types.topk(
            values=tensor([5., 3.]),
            indices=tensor([1, 2]))
        """
        if self.dtype == np.bool_:
            refuse_dtype("topk", self, "numbers")
        d = _dim(self, dim, "topk")
        n = self.shape[d] if self.ndim else 1
        if not 0 <= k <= n:
            raise ValueError(
                message("topk", f"k={k} is out of range for a dimension of size {n}", source.here())
            )
        _tensor._notify_concrete(cast("Tensor", self), "topk")  # numpy orders them: no node
        if self.ndim == 0:  # the number and index 0, both 0-d, as PyTorch's
            return return_type("topk")(self.clone(), _tensor.Tensor._make(np.asarray(0)))
        # sort's order (ops/search/order.py): stable, nan counts as the largest, as PyTorch's
        idx = np.take(_order(self._data, d, largest), np.arange(k), axis=d)
        return return_type("topk")(gather(self, d, idx), _tensor.Tensor._make(idx.astype(np.int64)))

    def gather(self, dim: int, index: Any) -> Tensor:
        return gather(self, dim, index)

    def unique(
        self,
        sorted: builtins.bool = True,  # noqa: A002 - PyTorch's name
        return_inverse: builtins.bool = False,
        return_counts: builtins.bool = False,
        dim: Any = None,
    ) -> Tensor | tuple[Tensor, ...]:
        """The distinct values, sorted (PyTorch sorts on CPU whatever `sorted` says).

        Not differentiable, as in PyTorch: the result is a new tensor outside the graph.
        """
        if dim is not None:
            raise NotImplementedError(
                message("unique", "dim= is not supported; unique over all values", source.here())
            )
        _tensor._notify_concrete(cast("Tensor", self), "unique")  # numpy: no node to replay
        values, inverse, counts = np.unique(self._data, return_inverse=True, return_counts=True)
        out = [_tensor.Tensor._make(values.astype(self.dtype, copy=False))]
        if return_inverse:  # where each element's value sits in `values`
            out.append(_tensor.Tensor._make(inverse.reshape(self.shape).astype(np.int64)))
        if return_counts:
            out.append(_tensor.Tensor._make(counts.astype(np.int64)))
        return out[0] if len(out) == 1 else tuple(out)

    def prod(self, dim: Any = None, keepdim: builtins.bool = False) -> Tensor:
        """The product along `dim` (of everything by default), as a tree of multiplications:
        its gradient is right even where some factors are zero. Bool and small whole numbers
        multiply in int64, as in PyTorch."""
        wide = whole_total_dtype(self.dtype)  # sum's rule; whole numbers need no gradient
        if wide is not None and self.dtype != wide:
            self = self.to(wide)
        if dim is not None and self.ndim == 0:  # a number over its dim 0 (or -1): itself
            _dim(self.reshape(1), dim, "prod")  # any other dim is refused
            return self * 1
        x = self.reshape(-1) if dim is None else self.movedim(_dim(self, dim, "prod"), -1)
        while x.shape[-1] > 1:
            if x.shape[-1] % 2:  # an odd count: pair the last factor with a 1
                x = _cat([x, _tensor.Tensor._make(np.ones(x.shape[:-1] + (1,), x.dtype))], -1)
            x = x[..., 0::2] * x[..., 1::2]
        out = x.squeeze(-1) if x.shape[-1] == 1 else x.sum(-1) * 0 + 1  # empty product: 1
        if keepdim:
            out = (
                out.unsqueeze(_dim(self, dim, "prod"))
                if dim is not None
                else out.reshape((1,) * self.ndim)
            )
        return out

    def tril(self, diagonal: int = 0) -> Tensor:
        """Keep the lower triangle (on and below `diagonal`), zeros elsewhere."""
        return _triangle(self, np.tril, diagonal)

    def triu(self, diagonal: int = 0) -> Tensor:
        """Keep the upper triangle (on and above `diagonal`), zeros elsewhere."""
        return _triangle(self, np.triu, diagonal)

    def split(self, split_size: Any, dim: int = 0) -> tuple[Any, ...]:
        """Pieces of `split_size` along `dim` (the last may be smaller), or of the given sizes."""
        d = _dim(self, dim, "split")
        n = self.shape[d]
        sizes = (
            [int(split_size)] * (n // int(split_size))
            + ([n % int(split_size)] if n % int(split_size) else [])
            if isinstance(split_size, numbers.Integral)
            else list(split_size)
        ) or [0]  # an empty dim splits into one empty piece, as PyTorch's
        cuts = np.cumsum([0, *sizes])
        index = (slice(None),) * d
        parts = tuple(self[index + (slice(int(a), int(b)),)] for a, b in zip(cuts[:-1], cuts[1:]))
        return views.pieces(parts, "split")

    def chunk(self, chunks: int, dim: int = 0) -> tuple[Any, ...]:
        n = self.shape[_dim(self, dim, "chunk")]
        if n == 0:  # PyTorch gives `chunks` empty pieces (a size of 0 would divide by 0)
            return self.split([0] * chunks, dim)
        return self.split(-(-n // chunks), dim)

    def unbind(self, dim: int = 0) -> tuple[Any, ...]:
        d = _dim(self, dim, "unbind")
        parts = tuple(self[(slice(None),) * d + (i,)] for i in range(self.shape[d]))
        return views.pieces(parts, "unbind")

    def repeat(self, *sizes: Any) -> Tensor:
        """Tile the tensor `sizes[i]` times along axis i (numpy's tile), as `torch.repeat`."""
        sizes = (
            tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else sizes
        )
        shape = (1,) * (len(sizes) - self.ndim) + self.shape
        # (s0, s1) -> (1, s0, 1, s1) -> expand to (r0, s0, r1, s1) -> (r0 s0, r1 s1)
        x = self.reshape(tuple(v for n in shape for v in (1, n)))
        x = x.expand(tuple(v for r, n in zip(sizes, shape) for v in (r, n)))
        return x.reshape(tuple(r * n for r, n in zip(sizes, shape)))

    def round(self, decimals: int = 0) -> Tensor:
        if self.dtype == np.bool_:
            refuse_dtype("round", self, "numbers")
        return _constant_like(self, np.round(self._data, decimals))

    def floor(self) -> Tensor:
        return _constant_like(self, np.floor(self._data))

    def ceil(self) -> Tensor:
        return _constant_like(self, np.ceil(self._data))

    def log1p(self) -> Tensor:
        return (self + 1.0).log()

    def expm1(self) -> Tensor:
        return self.exp() - 1.0

    # --- shape ----------------------------------------------------------------------------

    def numel(self) -> int:
        return int(self._data.size)

    nelement = numel

    def dim(self) -> int:
        return self.ndim

    def t(self) -> Tensor:
        """The transpose of a matrix (a vector or a number: a view of the same numbers)."""
        if self.ndim > 2:
            raise ShapeError(
                message(
                    "t",
                    f"expects a tensor with at most 2 axes, got shape {self.shape!r}",
                    source.here(),
                    "use .transpose(a, b) or .permute(...)",
                )
            )
        # a new view even when nothing moves, as in PyTorch: hooks and retain_grad on it
        # belong to it, not to the tensor it views
        return self.transpose() if self.ndim == 2 else self.view(self.shape)

    def contiguous(self) -> Tensor:
        """Itself when its numbers are laid out in order; else a copy that is (`view` needs it)."""
        return cast("Tensor", self) if self._data.flags.c_contiguous else self.clone()

    def view_as(self, other: Any) -> Tensor:
        return self.view(other.shape)

    def reshape_as(self, other: Any) -> Tensor:
        return self.reshape(other.shape)

    def expand_as(self, other: Any) -> Tensor:
        return self.expand(other.shape)

    # --- dtype and device -----------------------------------------------------------------

    def long(self) -> Tensor:
        return self.to(np.int64)  # itself when already int64, as in PyTorch

    def int(self) -> Tensor:
        return self.to(np.int32)  # itself when already int32, as in PyTorch

    def bool(self) -> Tensor:
        return self.to(np.bool_)  # itself when already bool_, as in PyTorch

    def half(self) -> Tensor:
        return self.to(np.float16)  # itself when already float16, as in PyTorch

    def type(self, dtype: Any = None) -> Tensor | str:
        """`t.type(torch.float)` converts; `t.type()` names the type ('torch.FloatTensor')."""
        if dtype is not None:
            return self.astype(dtype)
        return f"torch.{_TYPE_NAMES.get(self.dtype.name, self.dtype.name)}"

    def type_as(self, other: Any) -> Tensor:
        return self.to(other.dtype)

    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        r"""`t.to(dtype)`, `t.to("cpu")`, `t.to(other)`: a converted copy (or `t` itself).

        Rules: as in PyTorch, the same tensor comes back when nothing changes; the only
        device is the CPU, and asking for another is an error.

        Example:
            >>> import tinygrad_edu as tg
            >>> tg.tensor([1.5]).to(tg.float32).dtype, tg.tensor([1.5]).to("cpu").dtype
            (dtype('float32'), dtype('float64'))
        """
        dtype = _parse_to(self, args, kwargs)
        if dtype is None or np.dtype(dtype) == self.dtype:
            return self.clone() if kwargs.get("copy") else cast("Tensor", self)
        return self.astype(dtype)

    def cpu(self) -> Tensor:
        return cast("Tensor", self)

    def cuda(self, *args: Any, **kwargs: Any) -> Tensor:
        check_device("cuda", "cuda")  # raises: the only device is the CPU
        return cast("Tensor", self)

    @property
    def device(self) -> device:
        return device("cpu")

    is_cuda = False

    def is_floating_point(self) -> builtins.bool:
        return self.dtype.kind == "f"

    # --- comparisons ----------------------------------------------------------------------

    def equal(self, other: Any) -> builtins.bool:
        return equal(self, other)

    def allclose(
        self, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: builtins.bool = False
    ) -> builtins.bool:
        return allclose(self, other, rtol, atol, equal_nan)

    def isclose(
        self, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: builtins.bool = False
    ) -> Tensor:
        return isclose(self, other, rtol, atol, equal_nan)


def _cat(tensors: list[Any], axis: int) -> Tensor:
    from .creation import cat

    return cat(tensors, axis=axis)


def _triangle(t: TorchMethods, keep: Any, diagonal: int) -> Tensor:
    from .creation import where

    mask = keep(np.ones(t.shape[-2:], dtype=bool), diagonal)
    return where(mask, t, _tensor.Tensor._make(np.zeros((), t.dtype)))


def _constant_like(t: TorchMethods, values: Any) -> Tensor:
    """A step function's result: these values, with gradient 0 (as PyTorch's round, sign)."""
    out = _tensor.Tensor._make(values.astype(t.dtype, copy=False))
    return t * 0 + out if t.requires_grad else out


def multinomial(
    probs: Any, num_samples: int, replacement: bool = False, *, generator: Any = None
) -> Any:
    r"""Draw `num_samples` class indices per row, with probability proportional to `probs`.

    Example:
        >>> import tinygrad_edu as tg
        >>> g = tg.Generator().manual_seed(0)
        >>> tg.multinomial(tg.tensor([0.0, 1.0, 0.0]), 2, replacement=True, generator=g)
        tensor([1, 1])
    """
    from .creation import random_source

    p = np.asarray(probs._data if isinstance(probs, _tensor.Tensor) else probs, dtype=np.float64)
    rows = p.reshape(-1, p.shape[-1])
    if (rows < 0).any() or not np.isfinite(rows).all() or (rows.sum(1) <= 0).any():
        raise ValueError(
            message(
                "multinomial",
                "probabilities must be finite, non-negative and not all zero in a row",
                source.here(),
            )
        )
    if not replacement and num_samples > rows.shape[-1]:  # PyTorch refuses it too
        raise ValueError(
            message(
                "multinomial",
                f"cannot draw {num_samples} samples without replacement from {rows.shape[-1]} "
                "categories",
                source.here(),
                "pass replacement=True",
            )
        )
    rng = random_source(generator)
    out = np.stack(
        [rng.choice(len(r), size=num_samples, replace=replacement, p=r / r.sum()) for r in rows]
    )
    return _tensor.Tensor._make(out.reshape(p.shape[:-1] + (num_samples,)).astype(np.int64))


def _values(x: Any) -> np.ndarray:
    return x._data if isinstance(x, _tensor.Tensor) else np.asarray(x)


def equal(a: Any, b: Any) -> bool:
    r"""True when `a` and `b` have the same shape and the same values, as `torch.equal`.

    Example:
        >>> import tinygrad_edu as tg
        >>> tg.equal(tg.tensor([1.0, 2.0]), tg.tensor([1.0, 2.0]))
        True
    """
    x, y = _values(a), _values(b)
    return x.shape == y.shape and bool(np.array_equal(x, y))


def isclose(
    a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> Tensor:
    """Elementwise |a - b| <= atol + rtol * |b|, a boolean tensor (`torch.isclose`)."""
    return _tensor.Tensor._make(
        np.asarray(np.isclose(_values(a), _values(b), rtol, atol, equal_nan))
    )


def allclose(
    a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> bool:
    """True when every element is close (`torch.allclose`, same tolerances)."""
    return bool(np.allclose(_values(a), _values(b), rtol, atol, equal_nan))


def maximum(a: Any, b: Any) -> Tensor:
    """The larger of `a` and `b` elementwise; where they tie, each gets half the gradient."""
    from .creation import where

    a, b = _in_one_dtype(a if isinstance(a, _tensor.Tensor) else _tensor.Tensor(a), b)
    return where(a > b, a, where(a < b, b, _tie(a, b)))


def minimum(a: Any, b: Any) -> Tensor:
    """The smaller of `a` and `b` elementwise (ties share the gradient, as in PyTorch)."""
    from .creation import where

    a, b = _in_one_dtype(a if isinstance(a, _tensor.Tensor) else _tensor.Tensor(a), b)
    return where(a < b, a, where(a > b, b, _tie(a, b)))


def _in_one_dtype(a: Any, b: Any) -> tuple[Any, Any]:
    """Two tensors in PyTorch's result dtype first: a 0-d int tensor takes the other's int
    dtype, wrapped around as PyTorch stores it (-3 into uint8 is 253), not compared as -3."""
    if isinstance(b, _tensor.Tensor) and b.dtype != a.dtype:
        from .ops.arith import as_dtype, result_dtype

        dt = result_dtype(a, b)
        return as_dtype(a, dt), as_dtype(b, dt)
    return a, b


def _tie(a: Any, b: Any) -> Any:
    """Where a == b: their mean, so each gets half the gradient (floats); whole numbers have
    no gradient to share, and their mean would turn an int result into a float one."""
    b_kind = b.dtype.kind if hasattr(b, "dtype") else np.asarray(b).dtype.kind
    return (a + b) * 0.5 if "f" in (a.dtype.kind, b_kind) else a
