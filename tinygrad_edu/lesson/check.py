"""Helpers for a lesson's check cells: return True, or fail saying exactly what differs.

A check cell should end in an expression that is `True` when the learner's answer is
right (nbval then keeps the claim true forever). When it is wrong, a bare `assert`
only says `AssertionError`; these helpers say which value, which element, and what
was expected instead, in the learner's names:

    AssertionError: check: x.grad differs at index (1,): expected 4.0, got 2.0
      (1 of 3 elements differ)
      hint: ...

A prediction ("how many ops will this build?") is checked with `expect_prediction`
instead, which says what is wrong and how to look but never the right value: printed
on the first wrong try, it would be copied on the second.

They raise `AssertionError` (so `pytest` and nbval treat a wrong answer as a failed
check) with the standard message shape of `core.errors.message`. Lesson layer: may
use the public API; imports numpy and the core only.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..core.errors import message
from ..core.tensor import Tensor
from . import unanswered

# a lesson's setup cell imports these helpers: from then on, in a learner's copy, Run All
# goes on past an exercise that is not answered yet, which says so in one line
unanswered.install_here()


def _array(value: Any, name: str) -> np.ndarray:
    """A Tensor, ndarray, number or (nested) list as a float ndarray."""
    if isinstance(value, Tensor):
        return np.asarray(value)
    if value is None:  # a lesson sets `answer = None` before the solution region
        expect_written(value, name)
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise AssertionError(
            message(
                "check",
                f"{name} should be numbers, got {type(value).__name__} {value!r}",
                hint="pass a tensor, a numpy array, a number or a list of numbers",
            )
        ) from None


def expect_written(answer: Any, name: str, hint: str | None = None) -> bool:
    """Check that the learner's answer exists at all; True, or "no answer yet".

    A lesson sets `answer = None` before its solution region, so in a student copy,
    where the region is a `raise NotImplementedError` stub, the check finds None and
    says so, instead of a `NameError` or a `TypeError` from calling None. Use it first
    in a check cell whose answer is not a number (a model, a traced program).

    Example:
        >>> from tinygrad_edu.lesson.check import expect_written
        >>> expect_written(None, "model")
        Traceback (most recent call last):
        AssertionError: check: model is None: no answer has been written yet
          hint: replace the `raise NotImplementedError` stub above with your answer
    """
    if answer is not None:
        return True
    raise AssertionError(
        message(
            "check",
            f"{name} is None: no answer has been written yet",
            hint=hint or "replace the `raise NotImplementedError` stub above with your answer",
        )
    )


def _fmt(v: Any) -> str:
    return f"{float(v):.6g}"


def expect_close(
    actual: Any,
    expected: Any,
    name: str = "value",
    rtol: float = 1e-5,
    atol: float = 1e-8,
    hint: str | None = None,
) -> bool:
    r"""Check that `actual` equals `expected` up to rounding; True, or a precise failure.

    Rules: tensors, arrays, numbers and lists are compared as float arrays; shapes must
    match exactly (no broadcasting: a (3,) answer for a (3, 1) question is wrong);
    values pass when |actual - expected| <= atol + rtol * |expected| element-wise; NaN
    never passes. The failure names the first differing element and both values.

    Args:
        actual: the learner's result.
        expected: the right answer.
        name: what to call `actual` in the message, e.g. `"x.grad"`.
        rtol, atol: tolerances, as in `numpy.allclose`.
        hint: what to try when the values differ (the lesson knows the usual slips).

    Returns:
        True when every element is close.

    Raises:
        AssertionError: saying which shape or element differs, with both values.

    Example:
        >>> import tinygrad_edu as tg
        >>> from tinygrad_edu.lesson.check import expect_close
        >>> expect_close(tg.tensor([1.0, 2.0]) * 2, [2.0, 4.0], "y")
        True
        >>> expect_close(tg.tensor([1.0, 2.0]), [1.0, 3.0], "y")
        Traceback (most recent call last):
        AssertionError: check: y differs at index (1,): expected 3, got 2 (1 of 2 elements differ)
    """
    a = _array(actual, name)
    e = _array(expected, "the expected value")
    if a.shape != e.shape:
        raise AssertionError(
            message(
                "check",
                f"{name} has shape {a.shape!r}, expected shape {e.shape!r}",
                hint="compare the shapes of the tensors that went into it; .reshape() or "
                ".sum(axis) may be missing",
            )
        )
    bad = ~np.isclose(a, e, rtol=rtol, atol=atol)
    if not bad.any():
        return True
    idx = tuple(int(i) for i in np.argwhere(bad)[0])
    at = f" at index {idx}" if a.ndim else ""
    raise AssertionError(
        message(
            "check",
            f"{name} differs{at}: expected {_fmt(e[idx])}, got {_fmt(a[idx])} "
            f"({int(bad.sum())} of {bad.size} elements differ)",
            hint=hint,
        )
    )


def expect_equal(actual: Any, expected: Any, name: str = "value", hint: str | None = None) -> bool:
    """Check that `actual == expected` exactly (names, shapes, flags); True or a failure.

    Use it for things that are not floating-point numbers: `y.grad_fn.name`, a shape,
    `x.is_leaf`, a list of node names.

    Args:
        actual: the learner's result.
        expected: the right answer.
        name: what to call `actual` in the message.
        hint: what to try when they differ.

    Returns:
        True when they are equal.

    Raises:
        AssertionError: showing both values.

    Example:
        >>> from tinygrad_edu.lesson.check import expect_equal
        >>> expect_equal((2, 3), (2, 3), "y.shape")
        True
        >>> expect_equal("AddBackward", "MulBackward", "y.grad_fn.name")
        Traceback (most recent call last):
        AssertionError: check: y.grad_fn.name is 'AddBackward', expected 'MulBackward'
    """
    if isinstance(actual, (Tensor, np.ndarray)) or isinstance(expected, (Tensor, np.ndarray)):
        raise AssertionError(
            message(
                "check",
                f"expect_equal compares plain values, but {name} is an array",
                hint=f"use expect_close({name}, expected) for numbers in tensors or arrays",
            )
        )
    if actual == expected:
        return True
    raise AssertionError(
        message("check", f"{name} is {actual!r}, expected {expected!r}", hint=hint)
    )


def check_grad(
    tensor: Any, expected: Any, name: str | None = None, rtol: float = 1e-5, atol: float = 1e-8
) -> bool:
    r"""Check a tensor's `.grad` after backward; True, or a failure that says why.

    Rules: first checks that there *is* a gradient (a missing one is the commonest
    slip: no `backward()` call yet, or `requires_grad=False`, or a non-leaf without
    `retain_grad()`), then compares it with `expected` like `expect_close`.

    Args:
        tensor: the tensor whose `.grad` is checked.
        expected: the right gradient (same shape as the tensor).
        name: what to call it; defaults to the tensor's `name`, else `"tensor"`.
        rtol, atol: tolerances, as in `numpy.allclose`.

    Returns:
        True when the gradient is close to `expected`.

    Raises:
        AssertionError: saying the gradient is missing, or which element differs.

    Example:
        >>> import tinygrad_edu as tg
        >>> from tinygrad_edu.lesson.check import check_grad
        >>> x = tg.tensor([1.0, 2.0], requires_grad=True, name="x")
        >>> (x * x).sum().backward()
        >>> check_grad(x, [2.0, 4.0])
        True
        >>> w = tg.tensor([1.0], name="w")
        >>> check_grad(w, [1.0])
        Traceback (most recent call last):
        AssertionError: check: w.grad is None: w has requires_grad=False, so backward skips it
          hint: create it with requires_grad=True, e.g. tg.tensor(..., requires_grad=True)
    """
    if not isinstance(tensor, Tensor):
        raise AssertionError(
            message(
                "check",
                f"check_grad expects a tensor, got {type(tensor).__name__}",
                hint="pass the tensor itself (x), not its gradient (x.grad)",
            )
        )
    label = name or tensor.name or "tensor"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the non-leaf warning: explained below instead
        grad = tensor.grad
    if grad is None:
        if not tensor.requires_grad:
            why = f"{label} has requires_grad=False, so backward skips it"
            hint = "create it with requires_grad=True, e.g. tg.tensor(..., requires_grad=True)"
        elif not tensor.is_leaf:
            why = f"{label} is not a leaf, and only leaves keep .grad"
            hint = f"call {label}.retain_grad() before backward() to keep its gradient"
        else:
            why = "no backward() has reached it yet"
            hint = "call loss.backward() on a result that was computed from it"
        raise AssertionError(message("check", f"{label}.grad is None: {why}", hint=hint))
    return expect_close(grad, expected, f"{label}.grad", rtol=rtol, atol=atol)


def expect_prediction(
    predicted: Any,
    actual: Any,
    name: str = "your prediction",
    hint: str | None = None,
    rtol: float = 1e-5,
    atol: float = 1e-8,
) -> bool:
    r"""Check a prediction against what the program did; True, or a failure without the answer.

    A prediction exercise asks the learner to work a value out *before* seeing it. A
    check that printed the right value on a wrong try would hand the answer over, and a
    second try would be a copy. So this check says only what is wrong (the value, its
    shape, which elements) and, with `hint=`, how to look: never `actual`.

    Rules: numbers, arrays, tensors and lists of numbers are compared as by
    `expect_close` (same shape, then element by element); anything else (a tuple of
    counts with a string in it, a name, a dict) is compared with `==`.

    Args:
        predicted: the learner's prediction (`None` when not written yet).
        actual: what the program computes, measured by the check cell.
        name: what to call the prediction, e.g. `"predicted_ops"`.
        hint: how to find the right value (a smaller case to work, a thing to print).

    Returns:
        True when the prediction is right.

    Raises:
        AssertionError: saying what is wrong, never the expected value.

    Example:
        >>> from tinygrad_edu.lesson.check import expect_prediction
        >>> expect_prediction(12, 12, "predicted_ops")
        True
        >>> expect_prediction(10, 12, "predicted_ops", hint="count one step's ops first")
        Traceback (most recent call last):
        AssertionError: check: predicted_ops is 10, which is not what the program does
          hint: count one step's ops first
    """
    expect_written(predicted, name, hint="replace None with your prediction")
    wrong = f"{name} is {predicted!r}, which is not what the program does"
    try:
        p = _array(predicted, name) if _numeric(actual) else None
    except AssertionError:
        p = None  # not numbers: compared below with ==, the message says it differs
    if p is None:
        try:
            same = bool(predicted == actual)
        except (TypeError, ValueError):  # an array against a list of names: not equal
            same = False
        return True if same else _raise(wrong, hint)
    a = _array(actual, "the measured value")
    if p.shape != a.shape:
        _raise(f"{name} has shape {p.shape!r}, not the shape of what it predicts", hint)
    bad = ~np.isclose(p, a, rtol=rtol, atol=atol)
    if not bad.any():
        return True
    if p.ndim and p.size > 1:
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        wrong = (
            f"{name} is wrong at index {idx} ({int(bad.sum())} of {bad.size} elements "
            "differ from what the program does)"
        )
    return _raise(wrong, hint)


def _numeric(value: Any) -> bool:
    """True for what expect_close compares: numbers, arrays, tensors, lists of numbers."""
    if isinstance(value, (bool, str)) or value is None:
        return False
    if isinstance(value, (Tensor, np.ndarray, int, float, np.number)):
        return True
    try:
        return np.asarray(value).dtype.kind in "iuf"
    except (TypeError, ValueError):
        return False


def _raise(text: str, hint: str | None) -> bool:
    raise AssertionError(message("check", text, hint=hint))
