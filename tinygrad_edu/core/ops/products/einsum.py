"""torch.einsum (issue 30): the equation parsed ('...' and an implicit output included)
into the Einsum primitive, whose backward is an einsum per operand. A letter repeated
within one operand is refused with grad, by name. Core layer.
"""

from __future__ import annotations

import string
from typing import Any

import numpy as np

from ... import source
from ...errors import DataError, ShapeError, message
from ...function import Function
from ..common import broadcast_to, is_array, sum_to
from .shared import _tensor


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
