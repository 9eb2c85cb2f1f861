"""The numpy a careful person writes by hand for the ops a training step is made of.

codegen.py compiles an equation to a call of its op's own `forward` or `backward`. For
the ops below it writes the numpy expression instead: `v9 = x @ w1` in place of
`v9 = MatMul_forward(new_ctx(MatMul), x, w1)`, and `v42 = x.T @ v40` for the matmul's
gradient. A replay step then makes no context objects and calls no Python function
between numpy calls, and a backward line reads the forward's values by name, so it
is clear which values the backward keeps alive.

Each rule here is its core op's rule (core/ops/) written out for plain arrays, with the
same numpy calls in the same order, so replay gives the eager engine's numbers to the
last bit (tests/static/test_numpy_lines.py checks every rule against its core class).
An op or a case that is not here (a batched matmul, a learner's own op) keeps the call.

Static layer: imports numpy and the standard library only.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..core.ops.common import BRANCH_FREE_FROM


class Grad(NamedTuple):
    """The gradient of one input: a numpy expression, what decides its dtype, its shape.

    `operands` are the names (or Python numbers, which numpy treats as "weak") whose
    promotion gives the result's dtype; `shape` is None for an elementwise rule, whose
    result has the shape its operands broadcast to. `also_reads` are the other names the
    expression reads (relu's output, which selects but does not promote).
    """

    expr: str
    operands: tuple
    shape: tuple | None = None
    also_reads: tuple = ()

    def reads(self) -> set:
        """The value names the expression reads (what the printer's passes walk)."""
        return {o for o in self.operands + self.also_reads if isinstance(o, str)}


def _is_matrix_product(ins: list) -> bool:
    """Two matrices: the case written out (1-D and batched operands keep the core call)."""
    return len(ins[0].shape) == 2 and len(ins[1].shape) == 2


def _transposed(name: str, axes: Any) -> str:
    return f"{name}.T" if axes is None else f"{name}.transpose({axes!r})"


def forward_expr(op: str, ins: list, names: list, attrs: dict, consts: tuple) -> str | None:
    """`out = <expr>` for op `op` on the values `names` (Vars `ins`), or None: keep the call.

    `consts` holds the value of each input that is a constant of the program (else None).
    """
    a = names[0]
    if op in _BINARY and len(names) == 2:
        return f"{a} {_BINARY[op]} {names[1]}"
    if op == "MatMul":
        return f"{a} @ {names[1]}" if _is_matrix_product(ins) else None
    if op in _UNARY:
        return _UNARY[op].format(a=a)
    if not all(_plain(v) for v in attrs.values()):  # e.g. an axis given as a numpy int
        return None
    if op == "Transpose" and set(attrs) == {"axes"}:
        return _transposed(a, attrs["axes"])
    if op == "Pow" and _is_number_power(consts[1]):
        return f"{a} ** {names[1]}"
    if op == "Sum" and set(attrs) == {"axis", "keepdims"}:
        keepdims = ", keepdims=True" if attrs["keepdims"] else ""
        return f"np.add.reduce({a}, axis={attrs['axis']!r}{keepdims})"
    return None


def _plain(value: Any) -> bool:
    """An attribute that reads back from its repr as itself: None, a bool, an int, or a
    tuple of ints (what the written lines put in the code as text)."""
    if type(value) is tuple:
        return all(type(v) is int for v in value)
    return value is None or type(value) in (bool, int)


def _smaller_than(shape: tuple, size: int) -> bool:
    """Known to hold fewer than `size` elements (False for a shape with a symbolic size)."""
    return all(type(n) is int for n in shape) and int(np.prod(shape)) < size


def _is_number_power(exponent: Any) -> bool:
    """`x ** 2`: a constant number as exponent, for which the core rule (PyTorch's Tensor **
    Scalar) is the plain power rule. Kept as a call: x ** 0 (slope 0), and x ** 0.5, whose
    slope the core takes as 1 / sqrt(x) (PyTorch's sign at -0.0)."""
    return exponent is not None and np.ndim(exponent) == 0 and bool(exponent not in (0, 0.5))


_BINARY = {"Add": "+", "Sub": "-", "Mul": "*", "Div": "/"}
_UNARY = {
    "Neg": "-{a}",
    "ReLU": "np.maximum(0, {a})",  # as the core op: relu(-0.0) is -0.0, as in PyTorch
    "Exp": "np.exp({a})",
    "Log": "np.log({a})",
    "Tanh": "np.tanh({a})",
}


def backward_exprs(
    op: str, ins: list, names: list, out: str, g: str, attrs: dict, out_shape: tuple
) -> list:
    """One `Grad` per input of the forward line `out = op(*names)`, for cotangent `g`.

    None for an input whose gradient is not written out here (the op then keeps its call
    wherever that gradient is wanted). The derivative of each rule is in the comment
    beside it in core/ops/.
    """
    a, b = names[0], names[1] if len(names) > 1 else None
    if op == "Add":
        return [Grad(g, (g,)), Grad(g, (g,))]
    if op == "Sub":
        return [Grad(g, (g,)), Grad(f"-{g}", (g,))]
    if op == "Mul":
        return [Grad(f"{g} * {b}", (g, b)), Grad(f"{g} * {a}", (g, a))]
    if op == "Div":  # d/db = -(a/b)/b, in that order, as the core rule (PyTorch's infinities)
        return [Grad(f"{g} / {b}", (g, b)), Grad(f"-{g} * ({a} / {b} / {b})", (g, a, b))]
    if op == "MatMul":
        return [
            Grad(f"{g} @ {b}.T", (g, b), ins[0].shape),
            Grad(f"{a}.T @ {g}", (a, g), ins[1].shape),
        ]
    if op == "Pow":  # d(a^b)/da = b a^(b-1), for a number b; d/db (a^b ln a) keeps the call
        return [Grad(f"{g} * {b} * {a} ** ({b} - 1)", (g, b, a, 1)), None]
    if op == "Neg":
        return [Grad(f"-{g}", (g,))]
    if op == "ReLU":  # selected, not multiplied by a mask: an infinite g gives 0, not nan
        if not _smaller_than(ins[0].shape, BRANCH_FREE_FROM):  # big: as the core rule does it
            return [Grad(f"zero_where({out} <= 0, {g})", (g,), also_reads=(out,))]
        return [Grad(f"np.where({out} <= 0, 0.0, {g})", (g, 0.0), also_reads=(out,))]
    if op == "Exp":
        return [Grad(f"{g} * {out}", (g, out))]
    if op == "Log":
        return [Grad(f"{g} / {a}", (g, a))]
    if op == "Tanh":
        return [Grad(f"{g} * (1 - {out} * {out})", (g, 1, out))]
    if op == "Transpose":
        axes = attrs["axes"]
        inverse = None if axes is None else tuple(int(i) for i in np.argsort(axes))
        return [Grad(_transposed(g, inverse), (g,), ins[0].shape)]
    if op == "Sum":
        kept = out_shape if attrs["keepdims"] else _kept_shape(ins[0].shape, attrs["axis"])
        return [Grad(f"broadcast_to({g}.reshape({kept!r}), {ins[0].shape!r})", (g,), ins[0].shape)]
    raise AssertionError(f"no backward written out for {op}")  # forward_expr said yes


def _kept_shape(shape: tuple, axis: Any) -> tuple:
    """The summed shape with the summed axes kept (size 1): core/ops/reduce.py's rule."""
    if axis is None:
        return (1,) * len(shape)
    axes = {a % len(shape) for a in (axis if isinstance(axis, tuple) else (axis,))}
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def sum_to_expr(expr: str, got: tuple, shape: tuple) -> str:
    """`expr` (of shape `got`) summed down to `shape`, the input it was broadcast from.

    The axes are found now, once: what `sum_to` (core/ops/common.py) finds on every call.
    """
    lead = len(got) - len(shape)
    lead_axes = tuple(range(lead))
    kept = tuple(i + lead for i, n in enumerate(shape) if n == 1 and got[i + lead] != 1)
    if not kept:  # e.g. a bias: (batch, n) -> (n,)
        return f"np.add.reduce({expr}, axis={lead_axes!r})"
    summed = f"np.add.reduce({expr}, axis={lead_axes + kept!r}, keepdims=True)"
    return summed if not lead else f"{summed}.reshape({shape!r})"
