"""Exact texts of the errors a learner can cause in the core (docs/design.md, "Errors are part of
the lesson"): op, what happened with the values, `built at:` this file's line and source,
and `hint:`. Every expected text is written out whole and matched with re.escape."""

from __future__ import annotations

import operator
import os
import re
import sys

import numpy as np
import pytest

import tinygrad_edu as tg

HERE = os.path.relpath(__file__)


def at(code: str) -> str:
    """`built at:` text of the first line below the caller's that contains `code`."""
    frame = sys._getframe(1)
    lines = open(frame.f_code.co_filename, encoding="utf-8").read().splitlines()
    lineno = next(n for n in range(frame.f_lineno + 1, len(lines) + 1) if code in lines[n - 1])
    return f"{HERE}, line {lineno}: {lines[lineno - 1].strip()}"


def expect(exc_type, text: str):
    return pytest.raises(exc_type, match="^" + re.escape(text) + "$")


BROADCAST_HINT = (
    "shapes broadcast when, compared from the right, each pair of sizes is equal or "
    "one of them is 1; reshape or transpose one operand"
)


# --- shapes -----------------------------------------------------------------------------------


def test_matmul_shape_mismatch_suggests_transpose():
    x, w = tg.randn(2, 3), tg.randn(2, 3)
    site = at("y = x @ w")
    with expect(
        tg.ShapeError,
        "matmul: cannot multiply (2, 3) @ (2, 3): inner sizes 3 and 2 "
        f"differ\n  built at: {site}\n  hint: did you mean x @ w.T? w.T has shape (3, 2), "
        "and the product shape (2, 2)",
    ):
        y = x @ w  # noqa: F841


def test_matmul_hint_for_left_transpose_and_no_hint_case():
    a, b = tg.randn(3, 2), tg.randn(3, 4)
    site = at("a @ b")
    with expect(
        tg.ShapeError,
        "matmul: cannot multiply (3, 2) @ (3, 4): inner sizes 2 and 3 "
        f"differ\n  built at: {site}\n  hint: did you mean a.T @ b? a.T has shape (2, 3), "
        "and the product shape (2, 4)",
    ):
        a @ b
    c = tg.randn(5)
    site = at("a @ c")
    with expect(
        tg.ShapeError,
        "matmul: cannot multiply (3, 2) @ (5,): inner sizes 2 and 5 differ\n"
        f"  built at: {site}\n  hint: the last axis of the left operand must equal the "
        "second-to-last axis of the right one",
    ):
        a @ c


def test_matmul_of_a_scalar():
    s, m = tg.tensor(2.0), tg.randn(2, 2)
    site = at("s @ m")
    with expect(
        tg.ShapeError,
        "matmul: cannot multiply () @ (2, 2): @ needs at least one axis on "
        f"each side\n  built at: {site}\n  hint: use * to scale by a single number",
    ):
        s @ m


@pytest.mark.parametrize(
    "fn, op",
    [
        (operator.add, "add"),
        (operator.sub, "sub"),
        (operator.mul, "mul"),
        (operator.truediv, "div"),
        (operator.pow, "pow"),
    ],
)
def test_every_binary_op_names_the_clashing_axis(fn, op):
    a, b = tg.ones(2, 3), tg.ones(4, 1, 2)
    site = at("fn(a, b)")
    with expect(
        tg.ShapeError,
        f"{op}: cannot broadcast shapes (2, 3) and (4, 1, 2): axis -1 has "
        f"sizes 3 and 2\n  built at: {site}\n  hint: {BROADCAST_HINT}",
    ):
        fn(a, b)


@pytest.mark.parametrize(
    "fn, symbol",
    [
        (operator.lt, "<"),
        (operator.le, "<="),
        (operator.gt, ">"),
        (operator.ge, ">="),
        (operator.eq, "=="),
        (operator.ne, "!="),
    ],
)
def test_comparisons_broadcast_errors(fn, symbol):
    a, b = tg.ones(2, 3), tg.ones(2)
    site = at("fn(a, b)")
    with expect(
        tg.ShapeError,
        f"{symbol}: cannot broadcast shapes (2, 3) and (2,): axis -1 has "
        f"sizes 3 and 2\n  built at: {site}\n  hint: {BROADCAST_HINT}",
    ):
        fn(a, b)


def test_reversed_operands_and_numpy_left_operand():
    a = tg.ones(3)
    site = at("np.ones(2) + a")
    with expect(
        tg.ShapeError,
        "add: cannot broadcast shapes (2,) and (3,): axis -1 has sizes 2 "
        f"and 3\n  built at: {site}\n  hint: {BROADCAST_HINT}",
    ):
        np.ones(2) + a


def test_where_broadcast_error():
    x = tg.ones(2, 3)
    site = at("tg.where(np.ones(5, dtype=bool), x, 0.0)")
    with expect(
        tg.ShapeError,
        "where: cannot broadcast shapes (5,) and (2, 3): axis -1 has sizes "
        f"5 and 3\n  built at: {site}\n  hint: {BROADCAST_HINT}",
    ):
        tg.where(np.ones(5, dtype=bool), x, 0.0)


def test_reshape_error():
    x = tg.ones(2, 3)
    site = at("x.reshape(4, 2)")
    with expect(
        tg.ShapeError,
        "reshape: cannot reshape (2, 3) (6 elements) into (4, 2)\n"
        f"  built at: {site}\n  hint: the new shape must hold the same number of "
        "elements; one size may be -1 to infer it",
    ):
        x.reshape(4, 2)


@pytest.mark.parametrize(
    "index, text",
    [
        (5, "index 5 is out of bounds for axis 0 with size 2"),
        ((0, -4), "index -4 is out of bounds for axis 1 with size 3"),
        (np.array([0, 7]), "index 7 is out of bounds for axis 0 with size 2"),
    ],
)
def test_index_out_of_range(index, text):
    x = tg.ones(2, 3)
    site = at("x[index]")
    with expect(
        tg.ShapeError,
        f"index: {text} (tensor shape (2, 3))\n  built at: {site}\n"
        "  hint: valid positions along an axis of size n are 0 .. n-1 (or -n .. -1)",
    ):
        x[index]


def test_cat_and_stack_mismatch():
    a, b = tg.ones(2, 3), tg.ones(2, 2)
    site = at("tg.cat([a, b])")
    with expect(
        tg.ShapeError,
        f"cat: cannot join shapes (2, 3), (2, 2) along axis 0\n  built at: "
        f"{site}\n  hint: all sizes must match except along the joining axis",
    ):
        tg.cat([a, b])
    site = at("tg.stack([a, b], axis=1)")
    with expect(
        tg.ShapeError,
        "stack: cannot stack shapes (2, 3), (2, 2): they must all be equal\n"
        f"  built at: {site}\n  hint: reshape or pad the tensors to one shape first",
    ):
        tg.stack([a, b], axis=1)


def test_axis_out_of_range():
    x = tg.ones(2, 3)
    site = at("x.sum(axis=3)")
    with expect(
        np.exceptions.AxisError,
        "sum: failed on inputs of shape (2, 3): axis 3 is out of "
        f"bounds for array of dimension 2\n  built at: {site}\n  hint: a tensor with 2 "
        "axes has axes 0 .. 1 (or -1 .. -2)",
    ):
        x.sum(axis=3)


# --- backward ---------------------------------------------------------------------------------


def test_backward_on_non_scalar_without_gradient_names_the_building_line():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    site = at("y = x * 2.0")
    y = x * 2.0
    with expect(
        tg.BackwardError,
        "backward: this tensor has shape (2,), but backward() without "
        f"`gradient` needs a single number\n  built at: {site}\n  hint: call y.sum()"
        ".backward(), or pass gradient= a tensor of shape (2,)",
    ):
        y.backward()
    named = tg.tensor([[1.0, 2.0]], requires_grad=True, name="logits")
    site = at("named.backward()")
    with expect(
        tg.BackwardError,
        "backward: tensor 'logits' has shape (1, 2), but backward() "
        f"without `gradient` needs a single number\n  built at: {site}\n  hint: call "
        "logits.sum().backward(), or pass gradient= a tensor of shape (1, 2)",
    ):
        named.backward()


def test_backward_with_wrong_gradient_shape():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2.0
    site = at("y.backward(tg.ones(3))")
    with expect(
        tg.ShapeError,
        "backward: gradient has shape (3,) but this tensor has shape (2,)\n"
        f"  built at: {site}\n  hint: pass a gradient of the same shape as the tensor",
    ):
        y.backward(tg.ones(3))


def test_backward_of_a_tensor_without_grad():
    t = tg.tensor(3.0)
    site = at("t.backward()")
    with expect(
        tg.BackwardError,
        "backward: this tensor (shape ()) does not require grad and has "
        f"no grad_fn, so there is nothing to differentiate\n  built at: {site}\n  hint: "
        "create the inputs with requires_grad=True, outside any `with tg.no_grad():` "
        "block",
    ):
        t.backward()


def test_backward_twice_through_a_freed_graph():
    a = tg.tensor(3.0, requires_grad=True)
    site = at("y = a * a")
    y = a * a
    y.backward()
    with expect(
        tg.GraphFreedError,
        "MulBackward.backward: the values this op saved for backward "
        "were freed by an earlier backward() through the same graph\n"
        f"  built at: {site}\n  hint: pass retain_graph=True to the first backward() if "
        "you need to go through the graph twice, or rebuild the graph by running forward "
        "again",
    ):
        y.backward()


def test_inplace_after_save_names_both_lines():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2.0
    built = at("z = h.log()")
    z = h.log()
    changed = at("h += 1.0")
    h += 1.0
    with expect(
        tg.InplaceError,
        "LogBackward.backward: a tensor this op saved for backward was "
        f"modified in place at {changed} (version 0 when saved, 1 now)\n"
        f"  built at: {built}\n  hint: use an out-of-place op (x = x + 1 rather than "
        "x += 1), or modify a .clone()",
    ):
        z.sum().backward()


def test_inplace_on_a_leaf_that_requires_grad():
    w = tg.tensor([1.0, 2.0], requires_grad=True, name="w")
    site = at("w += 1.0")
    with expect(
        tg.InplaceError,
        "add_: tensor 'w' is a leaf that requires grad; changing it in "
        f"place would hide the change from autograd\n  built at: {site}\n  hint: update "
        "it inside `with tg.no_grad():` (as optimizers do), or write w = w ... out of "
        "place",
    ):
        w += 1.0


def test_grad_of_unused_input():
    a, b = tg.tensor(1.0, requires_grad=True), tg.tensor(2.0, requires_grad=True, name="b")
    site = at("tg.grad(a * 2.0, [a, b])")
    with expect(
        tg.BackwardError,
        "grad: tensor 'b' was not used to compute the outputs, so it has "
        f"no gradient\n  built at: {site}\n  hint: pass allow_unused=True to get None "
        "for it instead",
    ):
        tg.grad(a * 2.0, [a, b])


# --- values -----------------------------------------------------------------------------------


def test_item_on_non_scalar():
    t = tg.ones(2, 3)
    site = at("t.item()")
    with expect(
        ValueError,
        "item: only a tensor with one element converts to a Python number, "
        f"got shape (2, 3)\n  built at: {site}\n  hint: reduce it first (t.sum().item()) "
        "or pick one element (t[0].item())",
    ):
        t.item()


@pytest.mark.parametrize(
    "data, what",
    [
        ("abc", "cannot make a tensor from 'abc': it holds text, not real numbers"),
        (["1", "2"], "cannot make a tensor from ['1', '2']: it holds text, not real numbers"),
        ({"a": 1}, "cannot make a tensor from {'a': 1}: it holds Python objects, not real numbers"),
        (
            [1.5, None],
            "cannot make a tensor from [1.5, None]: it holds Python objects, not real numbers",
        ),
        (
            np.array([1j]),
            "cannot make a tensor from array([0.+1.j]): it holds complex numbers, not real numbers",
        ),
    ],
)
def test_bad_data(data, what):
    site = at("tg.tensor(data)")
    with expect(
        tg.DataError,
        f"tensor: {what}\n  built at: {site}\n  hint: pass numbers: a "
        "number, a (nested) list of numbers or a numpy array",
    ):
        tg.tensor(data)


def test_ragged_lists():
    site = at("tg.tensor([[1.0, 2.0], [3.0]])")
    with expect(
        tg.DataError,
        "tensor: rows of different lengths [2, 1] cannot form a rectangular "
        f"array\n  built at: {site}\n  hint: pad the rows to one length, or keep them as "
        "separate tensors",
    ):
        tg.tensor([[1.0, 2.0], [3.0]])


def test_list_of_tensors():
    site = at("tg.tensor([tg.ones(2), tg.ones(2)])")
    with expect(
        tg.DataError,
        f"tensor: got a list of Tensors\n  built at: {site}\n  hint: use "
        "tg.stack([...]) to join tensors (it keeps the graph)",
    ):
        tg.tensor([tg.ones(2), tg.ones(2)])


def test_integer_tensor_cannot_require_grad():
    site = at("tg.tensor(np.arange(3), requires_grad=True)")
    with expect(
        tg.DataError,
        "tensor: only floating-point tensors can require grad, got int64\n"
        f"  built at: {site}\n  hint: make it a float: tg.tensor(data, dtype='float64')",
    ):
        tg.tensor(np.arange(3), requires_grad=True)


# --- learner-written Functions ----------------------------------------------------------------


class TwoGrads(tg.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2, g  # one too many


class WrongShape(tg.Function):
    @staticmethod
    def forward(ctx, x):
        return x.sum()

    @staticmethod
    def backward(ctx, g):
        return np.ones(5)  # the input has shape (2, 3)


def test_function_returning_wrong_number_of_grads():
    x = tg.randn(3, requires_grad=True)
    site = at("y = TwoGrads.apply(x).sum()")
    y = TwoGrads.apply(x).sum()
    with expect(
        tg.BackwardError,
        f"TwoGradsBackward: backward returned 2 gradient(s) for 1 "
        f"input(s)\n  built at: {site}\n  hint: return one gradient per input of forward "
        "(None where none is needed)",
    ):
        y.backward()


def test_function_returning_wrong_grad_shape():
    x = tg.randn(2, 3, requires_grad=True)
    site = at("y = WrongShape.apply(x)")
    y = WrongShape.apply(x)
    with expect(
        tg.ShapeError,
        "WrongShapeBackward: backward returned a gradient of shape (5,) for "
        f"an input of shape (2, 3)\n  built at: {site}\n  hint: each gradient must have "
        "its input's shape",
    ):
        y.backward()


def test_errors_do_not_chain_a_numpy_traceback():
    x = tg.ones(2, 3)
    for fn in (
        lambda: x.reshape(5),
        lambda: x[9],
        lambda: tg.cat([x, tg.ones(3)]),
        lambda: x @ x,
        lambda: x + tg.ones(4),
    ):
        with pytest.raises(ValueError) as info:
            fn()
        assert info.value.__cause__ is None and info.value.__suppress_context__
        assert "Traceback" not in str(info.value)
