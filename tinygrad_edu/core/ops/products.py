"""PyTorch's products and norms (issue 30): einsum, outer, kron, tensordot, trace, cdist,
torch.linalg.norm / vector_norm, and a tensor's multinomial.

Einsum and VectorNorm are primitives (forward and backward side by side); the rest are
built from them and the core's ops. VectorNorm's gradient is 0 where the norm is 0 (a
zero row in cdist or normalize), as PyTorch's, where sqrt's would be nan. Core layer.
"""

from __future__ import annotations

import numbers
import string
import types
from typing import Any

import numpy as np

from .. import source
from ..errors import DataError, ShapeError, message
from ..function import Function
from .common import broadcast_to, data, is_array, sum_to, where
from .indexing import _dims


def _t() -> Any:
    from ..tensor import Tensor  # here, not at the top: tensor.py imports this module

    return Tensor


def _tensor(x: Any) -> Any:
    return x if isinstance(x, _t()) else _t()(x)


# --- einsum --------------------------------------------------------------------------------


def _parse(equation: str, shapes: list[tuple[int, ...]]) -> tuple[list[list[str]], list[str]]:
    """'ij,jk->ik' as ([['i','j'], ['j','k']], ['i','k']), with '...' spelled out as letters
    no operand uses (so backward can name every axis) and the implicit output filled in."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ShapeError(
            message(
                "einsum",
                f"{equation!r} names {len(terms)} operands, got {len(shapes)}",
                source.here(),
            )
        )
    free = [c for c in string.ascii_letters if c not in eq]
    most = max((len(s) - len(t.replace("...", "")) for t, s in zip(terms, shapes)), default=0)
    dots = free[:most]
    subs: list[list[str]] = []
    for t, shape in zip(terms, shapes):
        n = len(shape) - len(t.replace("...", ""))
        letters = list(t.replace("...", "." * 1)) if "..." in t else list(t)
        if "..." in t:
            i = letters.index(".")
            letters[i : i + 1] = dots[most - n :] if n else []
        if len(letters) != len(shape):
            raise ShapeError(
                message(
                    "einsum",
                    f"operand {len(subs)} has shape {tuple(shape)!r}, but {t!r} names "
                    f"{len(t.replace('...', ''))} axes",
                    source.here(),
                )
            )
        subs.append(letters)
    if arrow:
        out = list(rhs.replace("...", "".join(dots))) if "..." in rhs else list(rhs)
    else:  # implicit: the broadcast axes, then the letters used once, in order
        counts = {c: sum(s.count(c) for s in subs) for c in set().union(*map(set, subs))}
        out = dots + sorted(c for c, k in counts.items() if k == 1 and c not in dots)
    return subs, out


class Einsum(Function):
    @staticmethod
    def forward(ctx: Any, *arrays: Any, subs: list[list[str]], out: list[str]) -> Any:
        ctx.subs, ctx.out, ctx.shapes = subs, out, [a.shape for a in arrays]
        ctx.save_for_backward(*arrays)
        spec = ",".join("".join(s) for s in subs) + "->" + "".join(out)
        return np.asarray(np.einsum(spec, *arrays, optimize=len(arrays) > 2))

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        ops = ctx.saved_tensors
        grads: list[Any] = []
        for k, (sub, shape) in enumerate(zip(ctx.subs, ctx.shapes)):
            if not ctx.needs_input_grad[k]:
                grads.append(None)
                continue
            others = [(s, o) for j, (s, o) in enumerate(zip(ctx.subs, ops)) if j != k]
            seen = set(ctx.out).union(*[set(s) for s, _ in others])
            keep = [c for c in dict.fromkeys(sub) if c in seen]  # letters we can compute
            part = _einsum([ctx.out, *[s for s, _ in others]], keep, [g, *[o for _, o in others]])
            # letters only this operand has were summed: the gradient repeats along them
            full = [part.shape[keep.index(c)] if c in keep else 1 for c in sub]
            part = part.reshape(tuple(full))
            grads.append(sum_to(broadcast_to(part, np.broadcast_shapes(full, shape)), shape))
        return tuple(grads)


def _einsum(subs: list[list[str]], out: list[str], operands: list[Any]) -> Any:
    if all(is_array(o) for o in operands):
        spec = ",".join("".join(s) for s in subs) + "->" + "".join(out)
        return np.asarray(np.einsum(spec, *operands, optimize=len(operands) > 2))
    return Einsum.apply(*operands, subs=subs, out=out)


def einsum(equation: str, *operands: Any) -> Any:
    """Sums of products named by subscripts, as `torch.einsum('ij,jk->ik', a, b)`."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    ts = [_tensor(o) for o in operands]
    if len({t.dtype for t in ts}) > 1:  # PyTorch does not promote inside einsum
        raise DataError(
            message(
                "einsum",
                "the operands must have one dtype, got " + ", ".join(str(t.dtype) for t in ts),
                source.here(),
                "convert them first (.float(), .double())",
            )
        )
    subs, out = _parse(equation, [t.shape for t in ts])
    for s, t in zip(subs, ts):
        if len(set(s)) != len(s) and t.requires_grad:
            # NOTE: PyTorch differentiates this too; we do not, so we say so instead
            raise NotImplementedError(
                message(
                    "einsum",
                    f"a letter repeated within one operand ({''.join(s)!r}, shape {t.shape!r}) "
                    "takes a diagonal; its gradient is not supported here",
                    source.here(),
                    "use torch.diagonal(x, 0, d1, d2) or x.trace() for the diagonal first",
                )
            )
    return Einsum.apply(*ts, subs=subs, out=out)


# --- norms ---------------------------------------------------------------------------------


class VectorNorm(Function):
    """(sum |x|^p)^(1/p) over `axes` (inf: max |x|, 0: the count of non-zeros)."""

    saved_names = ("self", "result")

    @staticmethod
    def forward(ctx: Any, a: Any, p: float, axes: tuple[int, ...], keepdims: bool) -> Any:
        ctx.p, ctx.axes, ctx.keepdims, ctx.shape = p, axes, keepdims, a.shape
        x = np.abs(a)
        if p == np.inf:
            out = np.max(x, axis=axes, keepdims=True, initial=0)
        elif p == -np.inf:
            out = np.min(x, axis=axes, keepdims=True)
        elif p == 0:
            out = np.sum(x != 0, axis=axes, keepdims=True).astype(a.dtype)
        elif p == 1:
            out = np.sum(x, axis=axes, keepdims=True)
        elif p == 2:
            out = np.sqrt(np.sum(x * x, axis=axes, keepdims=True))
        else:
            out = np.sum(x**p, axis=axes, keepdims=True) ** (1.0 / p)
        ctx.save_for_backward(a, out)
        return out if keepdims else np.squeeze(out, axis=axes)

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        a, out = ctx.saved_tensors  # out kept with its axes
        if not ctx.keepdims:
            g = g.reshape(out.shape)
        p, x, n = ctx.p, data(a), data(out)
        sign = np.sign(x)
        if p == 0:
            return (broadcast_to(g * 0, ctx.shape),)
        if p == 1:
            return (g * sign,)
        if p in (np.inf, -np.inf):  # the extreme elements share the gradient, as PyTorch
            hit = np.abs(x) == n
            share = sign * hit / np.maximum(hit.sum(axis=ctx.axes, keepdims=True), 1)
            return (g * share.astype(x.dtype),)
        # d||x||/dx = x |x|^(p-2) / ||x||^(p-1), and 0 where the norm is 0 (PyTorch's);
        # written with ops arrays and Tensors share, so a second derivative is right too
        zero = n == 0
        safe = where(zero, 1.0, out)
        if p == 2:
            return (where(zero, 0.0, g * a / safe),)
        size = np.abs(a) if is_array(a) else a.abs()
        return (where(zero, 0.0, g * sign * size ** (p - 1) / safe ** (p - 1)),)


def vector_norm(
    x: Any,
    ord: Any = 2,  # noqa: A002 - PyTorch's name
    dim: Any = None,
    keepdim: bool = False,
    *,
    dtype: Any = None,
) -> Any:
    x = _tensor(x)
    if dtype is not None:
        x = x.to(dtype)
    if x.dtype.kind != "f":
        raise DataError(
            message(
                "vector_norm",
                f"needs a float tensor, got {x.dtype}, as in PyTorch",
                source.here(),
                ".float()",
            )
        )
    axes = tuple(range(x.ndim)) if dim is None else _dims(x, dim, "vector_norm")
    p = float(ord) if not isinstance(ord, str) else ord
    if isinstance(p, str):
        raise ValueError(message("vector_norm", f"ord must be a number, got {ord!r}"))
    return VectorNorm.apply(x, p=p, axes=axes, keepdims=keepdim)


def norm(
    A: Any,  # noqa: N803 - PyTorch's name for a matrix
    ord: Any = None,  # noqa: A002 - PyTorch's name
    dim: Any = None,
    keepdim: bool = False,
    *,
    dtype: Any = None,
) -> Any:
    """`torch.linalg.norm`: the vector norm, or for two dims 'fro' and the 1 / inf matrix
    norms (the largest column / row sum of |A|). Norms built on singular values are refused."""
    A = _tensor(A)  # noqa: N806 - PyTorch's name for a matrix
    if dim is None and ord is not None and A.ndim == 2:
        dim = (0, 1)
    if dim is None or isinstance(dim, numbers.Integral) or len(tuple(dim)) == 1:
        return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
    d0, d1 = _dims(A, dim, "linalg.norm")
    if ord in (None, "fro"):
        return vector_norm(A, 2, (d0, d1), keepdim, dtype=dtype)
    if ord in (1, -1, np.inf, -np.inf):
        over, then = (d0, d1) if ord in (1, -1) else (d1, d0)  # column sums, or row sums
        sums = A.abs().sum(over, keepdims=True)
        pick = sums.amax(then, keepdim=True) if ord > 0 else sums.amin(then, keepdim=True)
        return pick if keepdim else pick.squeeze(max(d0, d1)).squeeze(min(d0, d1))
    raise NotImplementedError(
        message(
            "linalg.norm",
            f"ord={ord!r} over two dims needs singular values, which are not supported",
            source.here(),
            "use 'fro', 1, -1, inf or -inf, or a vector norm over one dim",
        )
    )


linalg = types.SimpleNamespace(norm=norm, vector_norm=vector_norm)


# --- products ------------------------------------------------------------------------------


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
    from .indexing import diagonal

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
    from ..torch_api import multinomial as draw

    return draw(self, num_samples, replacement, generator=generator)


METHODS = {
    "outer": outer,
    "ger": outer,
    "kron": kron,
    "trace": trace,
    "multinomial": multinomial,
}
FUNCTIONS = {
    "einsum": einsum,
    "tensordot": tensordot,
    "cdist": cdist,
    "linalg": linalg,
}
