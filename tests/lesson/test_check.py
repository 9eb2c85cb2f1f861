"""Check-cell helpers: True on a right answer, an exact friendly message on a wrong one."""

import re

import numpy as np
import pytest

import tinygrad_edu as tg
from tinygrad_edu.lesson.check import (
    check_grad,
    expect_close,
    expect_equal,
    expect_prediction,
    expect_written,
)


def test_expect_close_accepts_tensors_arrays_lists_and_rounding():
    y = tg.tensor([0.1, 0.2]) * 3
    assert expect_close(y, [0.3, 0.6], "y") is True
    assert expect_close(np.array(2.0), 2.0 + 1e-12) is True
    assert expect_close(tg.tensor([[1.0, 2.0]]), np.array([[1.0, 2.0]])) is True


def test_expect_close_names_the_first_differing_element_and_counts():
    actual = tg.tensor([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(
        AssertionError,
        match=re.escape(
            "check: w.grad differs at index (1, 0): expected 3.5, got 3 (2 of 4 elements differ)"
        ),
    ):
        expect_close(actual, [[1.0, 2.0], [3.5, 4.5]], "w.grad")


def test_expect_close_scalar_message_has_no_index():
    with pytest.raises(
        AssertionError,
        match=re.escape("check: loss differs: expected 0.25, got 0.5 (1 of 1 elements differ)"),
    ):
        expect_close(tg.tensor(0.5), 0.25, "loss")


def test_expect_close_refuses_broadcasting_and_explains_shape():
    msg = (
        "check: b.grad has shape (3,), expected shape (3, 1)\n"
        "  hint: compare the shapes of the tensors that went into it; .reshape() or "
        ".sum(axis) may be missing"
    )
    with pytest.raises(AssertionError, match=f"^{re.escape(msg)}$"):
        expect_close(tg.tensor([1.0, 1.0, 1.0]), [[1.0], [1.0], [1.0]], "b.grad")


def test_expect_close_nan_never_passes():
    with pytest.raises(AssertionError, match=re.escape("expected nan, got nan")):
        expect_close([float("nan")], [float("nan")], "y")


def test_expect_close_rejects_non_numbers():
    with pytest.raises(
        AssertionError, match=re.escape("check: y should be numbers, got str 'abc'")
    ):
        expect_close("abc", 1.0, "y")


def test_expect_equal():
    x = tg.tensor(2.0, requires_grad=True)
    y = x * x
    assert expect_equal(y.grad_fn.name, "MulBackward", "y.grad_fn.name") is True
    with pytest.raises(AssertionError, match=re.escape("check: y.is_leaf is False, expected True")):
        expect_equal(y.is_leaf, True, "y.is_leaf")
    with pytest.raises(
        AssertionError,
        match=re.escape("hint: use expect_close(y, expected) for numbers in tensors or arrays"),
    ):
        expect_equal(y, 4.0, "y")


def test_check_grad_compares_the_gradient():
    x = tg.tensor([1.0, -2.0], requires_grad=True, name="x")
    (x * x * x).sum().backward()
    assert check_grad(x, 3 * x.numpy() ** 2) is True
    with pytest.raises(
        AssertionError, match=re.escape("check: x.grad differs at index (1,): expected -12, got 12")
    ):
        check_grad(x, [3.0, -12.0])


@pytest.mark.parametrize(
    "case, msg",
    [
        (
            "no_backward",
            "check: x.grad is None: no backward() has reached it yet\n"
            "  hint: call loss.backward() on a result that was computed from it",
        ),
        (
            "no_requires_grad",
            "check: x.grad is None: x has requires_grad=False, so backward skips "
            "it\n  hint: create it with requires_grad=True, e.g. "
            "tg.tensor(..., requires_grad=True)",
        ),
        (
            "non_leaf",
            "check: h.grad is None: h is not a leaf, and only leaves keep .grad\n"
            "  hint: call h.retain_grad() before backward() to keep its gradient",
        ),
    ],
)
def test_check_grad_says_why_a_gradient_is_missing(case, msg):
    x = tg.tensor([1.0, 2.0], requires_grad=case != "no_requires_grad", name="x")
    target = x
    if case == "non_leaf":
        target = x * 2
        target.name = "h"
        target.sum().backward()
    with pytest.raises(AssertionError, match=f"^{re.escape(msg)}$"):
        check_grad(target, [1.0, 1.0])


def test_check_grad_wants_the_tensor_not_its_grad():
    x = tg.tensor([1.0], requires_grad=True)
    (x * 2).sum().backward()
    with pytest.raises(
        AssertionError,
        match=re.escape("hint: pass the tensor itself (x), not its gradient (x.grad)"),
    ):
        check_grad(x.grad.numpy(), [2.0])


def test_a_lesson_can_add_the_hint_it_knows():
    with pytest.raises(AssertionError, match=r"differs(.|\n)*hint: divide by the count"):
        expect_close([2.0], [1.0], "mean", hint="divide by the count")
    with pytest.raises(AssertionError, match=r"is 3, expected 2\n  hint: count the ops"):
        expect_equal(3, 2, "ops", hint="count the ops")


def test_a_lessons_hint_follows_the_difference():
    with pytest.raises(AssertionError) as e:
        expect_equal([1, 2], [1, 3], "bad_steps", hint="the step number is `step`, not the batch")
    assert str(e.value) == (
        "check: bad_steps is [1, 2], expected [1, 3]\n"
        "  hint: the step number is `step`, not the batch"
    )
    with pytest.raises(AssertionError) as e:
        expect_close(0.5, 0.9, "accuracy", hint="train longer")
    assert str(e.value).endswith(
        "expected 0.9, got 0.5 (1 of 1 elements differ)\n  hint: train longer"
    )
    assert expect_close(1.0, 1.0, "x", hint="unused") and expect_equal(1, 1, "x", hint="unused")


def test_an_answer_left_at_none_says_it_is_not_written_yet():
    # lessons set `answer = None` before a solution region, so a stale value from an
    # earlier cell can never be checked in its place
    with pytest.raises(AssertionError) as e:
        expect_close(None, [1.0, 2.0], "dloss_dx")
    assert str(e.value) == (
        "check: dloss_dx is None: no answer has been written yet\n"
        "  hint: replace the `raise NotImplementedError` stub above with your answer"
    )
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).sum().backward()
    with pytest.raises(AssertionError, match="the expected value is None: no answer"):
        check_grad(x, None)


def test_expect_written_says_a_model_or_program_is_not_written_yet():
    # for answers that are not numbers: a check would otherwise call None (TypeError)
    assert expect_written(tg.nn.Linear(2, 1), "model") is True
    with pytest.raises(AssertionError) as e:
        expect_written(None, "traced", hint="trace your function with tg.static.trace")
    assert str(e.value) == (
        "check: traced is None: no answer has been written yet\n"
        "  hint: trace your function with tg.static.trace"
    )


# a prediction's check must never print the value it expects: that would be the answer
@pytest.mark.parametrize(
    "predicted, actual, says, secret",
    [
        (10, 13, "check: n is 10, which is not what the program does", "13"),
        ((2, 1), (2, 7), "check: n is wrong at index (1,) (1 of 2 elements differ", "7"),
        ([5.0, -1.0], tg.tensor([5.0, -1.5]), "check: n is wrong at index (1,)", "1.5"),
        ([1.0, 2.0], [[1.0], [2.0]], "check: n has shape (2,), not the shape of what", "(2, 1)"),
        ([1, 3], [1, 2, 9], "check: n has shape (2,), not the shape", "9"),
        ("AddBackward", "MulBackward", "check: n is 'AddBackward', which is not", "Mul"),
        ({"x[1]": True}, {"x[1]": False}, "check: n is {'x[1]': True}, which is not", "False"),
        (np.array([1.0, 2.0]), ["Add", "Mul"], "check: n is array([1., 2.]), which is", "Mul"),
    ],
)
def test_expect_prediction_says_what_is_wrong_but_never_the_answer(predicted, actual, says, secret):
    with pytest.raises(AssertionError) as err:
        expect_prediction(predicted, actual, "n", hint="work it for one step first")
    text = str(err.value)
    assert text.startswith(says), text
    assert text.endswith("\n  hint: work it for one step first")
    assert secret not in text


def test_expect_prediction_passes_a_right_prediction_of_any_kind():
    assert expect_prediction(12, 12) is True
    assert expect_prediction([5.0, -1.0], tg.tensor([5.0, -1.0 + 1e-12])) is True
    assert expect_prediction((2, 2), (2, 2)) is True
    assert expect_prediction({"a": True}, {"a": True}) is True
    assert expect_prediction([1, 3], [1, 3]) is True


def test_expect_prediction_of_none_says_it_is_not_written():
    with pytest.raises(
        AssertionError,
        match=re.escape(
            "check: predicted_ops is None: no answer has been written yet\n"
            "  hint: replace None with your prediction"
        ),
    ):
        expect_prediction(None, 12, "predicted_ops")
