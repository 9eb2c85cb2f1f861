"""Learner-written ops: subclass tg.Function, check with tg.gradcheck, read its report."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

import tinygrad_edu as tg


class Swish(tg.Function):
    """x * sigmoid(x), with its own hand-written backward."""

    @staticmethod
    def forward(ctx, x):
        s = 1 / (1 + np.exp(-x))
        ctx.save_for_backward(x, s)
        return x * s

    @staticmethod
    def backward(ctx, grad_output):
        x, s = ctx.saved_tensors
        return grad_output * (s + x * s * (1 - s))  # d(x s)/dx = s + x s (1 - s)


class LinearFn(tg.Function):
    """x @ w + b, skipping the gradients nobody needs."""

    @staticmethod
    def forward(ctx, x, w, b):
        ctx.save_for_backward(x, w)
        return x @ w + b

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        nx, nw, nb = ctx.needs_input_grad
        ctx.seen_needs = (nx, nw, nb)
        return (g @ w.T if nx else None), (x.T @ g if nw else None), (g.sum(0) if nb else None)


class WrongSwish(Swish):
    @staticmethod
    def backward(ctx, grad_output):
        x, s = ctx.saved_tensors
        return grad_output * s  # forgot the x s (1 - s) term


def test_learner_function_passes_gradcheck():
    x = tg.randn(3, 2, requires_grad=True)
    assert tg.gradcheck(Swish.apply, [x])
    y = Swish.apply(x)
    assert y.grad_fn.name == "SwishBackward" and y.grad_fn.next_functions[0][0].variable is x
    np.testing.assert_allclose(y.numpy(), x.numpy() / (1 + np.exp(-x.numpy())))


def test_needs_input_grad_and_none_gradients():
    x, w = tg.randn(4, 3), tg.randn(3, 2, requires_grad=True)
    b = tg.zeros(2, requires_grad=True)
    y = LinearFn.apply(x, w, b)
    node = y.grad_fn
    assert node.needs_input_grad == (False, True, True)
    y.sum().backward()
    assert node.seen_needs == (False, True, True)
    np.testing.assert_allclose(w.grad.numpy(), x.numpy().T @ np.ones((4, 2)))
    np.testing.assert_allclose(b.grad.numpy(), [4.0, 4.0])
    assert x.grad is None
    assert tg.gradcheck(LinearFn.apply, [tg.randn(4, 3, requires_grad=True), w, b])


def test_saved_tensors_are_visible_and_freed():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = Swish.apply(x)
    saved_x, saved_s = y.grad_fn.saved_tensors
    np.testing.assert_array_equal(saved_x, x.numpy())
    y.sum().backward()
    with pytest.raises(tg.GraphFreedError):
        _ = y.grad_fn.saved_tensors


def test_learner_function_in_no_grad_records_nothing():
    x = tg.randn(3, requires_grad=True)
    with tg.no_grad():
        y = Swish.apply(x)
    assert y.grad_fn is None and not y.requires_grad


def test_learner_functions_are_not_in_the_op_registry():
    from tinygrad_edu.core.function import OPS

    assert "Swish" not in OPS and "Mul" in OPS


def test_gradcheck_reports_the_wrong_backward():
    x = tg.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True, name="x")

    def fn(x):
        return WrongSwish.apply(x)

    line = next(
        n
        for n, text in enumerate(open(__file__, encoding="utf-8"), 1)
        if text.strip() == "return WrongSwish.apply(x)"
    )
    # gradcheck reduces a non-scalar output with fixed weights uniform(0.5, 1.5), seed 0
    weight = np.random.default_rng(0).uniform(0.5, 1.5, size=(2, 2))[0, 0]
    s = 1 / (1 + np.exp(-0.5))
    analytic, numeric = weight * s, weight * (s + 0.5 * s * (1 - s))  # at index (0, 0)
    site = f"{os.path.relpath(__file__)}, line {line}: return WrongSwish.apply(x)"
    text = (
        f"gradcheck: gradient of input 0 ('x') differs at index (0, 0): autograd gives "
        f"{analytic:.6g}, finite differences give {numeric:.6g} (4 of 4 elements differ)\n"
        f"  built at: {site}\n"
        "  hint: check the backward of WrongSwishBackward and of the ops before it "
        "(tg.debug.check_nodes(loss) finds the node)"
    )
    with pytest.raises(tg.GradcheckError, match="^" + re.escape(text) + "$"):
        tg.gradcheck(fn, [x])
    assert tg.gradcheck(fn, [x], raise_exception=False) is False


def test_gradcheck_checks_float32_inputs_in_float64():
    x = tg.tensor(np.array([0.3, -0.7], dtype=np.float32), requires_grad=True)
    assert tg.gradcheck(lambda t: (t * t).tanh().sum(), x)
    assert x.dtype == np.float32  # the learner's tensor is untouched
