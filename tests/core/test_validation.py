"""Bad input that PyTorch refuses gets a clear house error here too (op, shapes, the
learner's line, a hint), never a silently wrong result or a raw numpy message."""

import re

import numpy as np
import pytest

import tinygrad_edu as tg

HERE = r"built at: .*test_validation\.py, line \d+"


def test_a_hook_that_changes_the_gradients_shape_is_refused():
    x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)

    def shrink(g):
        return g[:2]

    x.register_hook(shrink)
    with pytest.raises(tg.ShapeError) as info:
        (x * 2).sum().backward()
    text = str(info.value)
    assert text.startswith(
        "hook: hook 'shrink' returned a gradient of shape (2,) for a gradient of shape (3,)\n"
    )
    assert text.endswith(
        "hint: a hook may change the gradient's values, not its shape; return None to keep it"
    )


def test_a_hook_on_a_non_leaf_is_checked_too():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.register_hook(lambda g: tg.zeros(2, 2))
    with pytest.raises(
        tg.ShapeError,
        match=re.escape(
            "hook: hook '<lambda>' returned a gradient of shape (2, 2) for a gradient of shape (2,)"
        ),
    ):
        y.sum().backward()


def test_assigning_a_grad_of_another_shape_or_dtype_is_refused():
    x = tg.zeros(3, requires_grad=True)
    with pytest.raises(tg.ShapeError) as info:
        x.grad = tg.zeros(2, 3)
    assert str(info.value).startswith(
        "grad: cannot assign a gradient of shape (2, 3) and dtype float64 to this tensor, which "
        "has shape (3,) and dtype float64\n"
    )
    assert re.search(HERE, str(info.value))
    with pytest.raises(tg.ShapeError, match="dtype float32"):
        x.grad = tg.zeros(3, dtype=np.float32)
    x.grad = tg.ones(3)
    x.grad = None
    assert x.grad is None


def test_only_floating_tensors_can_require_grad():
    t = tg.zeros(3, dtype=np.int64)
    with pytest.raises(tg.DataError) as info:
        t.requires_grad = True
    assert str(info.value).startswith(
        "requires_grad: only floating-point tensors can require grad, got int64\n"
    )
    assert str(info.value).endswith("hint: make it a float first: x.astype('float64')")
    assert not t.requires_grad


def test_a_computed_tensor_cannot_stop_requiring_grad():
    y = tg.tensor([1.0], requires_grad=True) * 2
    y.requires_grad = True  # already true: allowed, as in PyTorch
    with pytest.raises(
        tg.BackwardError,
        match=re.escape(
            "requires_grad: this tensor (shape (1,)) was computed (grad_fn=MulBackward), and "
            "only a leaf's requires_grad can be switched off"
        ),
    ):
        y.requires_grad = False


def test_an_integer_cast_leaves_the_graph():
    x = tg.tensor([1.5, 2.5], requires_grad=True)
    i = x.astype(np.int64)
    assert not i.requires_grad and i.grad_fn is None
    assert (x * 2).astype(np.float32).requires_grad  # a float cast stays in the graph


def test_minus_zero_is_not_confused_with_zero():
    x = tg.tensor([1.0, 2.0])
    _ = x * 0.0  # caches the constant 0.0
    assert np.all(np.isneginf((1 / (x * -0.0)).numpy()))
    assert np.all(np.isposinf((1 / (x * 0.0)).numpy()))


def test_data_nested_too_deeply_is_a_data_error():
    deep = [1.0]
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(tg.DataError) as info:
        tg.tensor(deep)
    assert str(info.value).startswith("tensor: the data is nested too deeply to read (")
    assert str(info.value).endswith(
        "hint: build the array with numpy first (np.array) or reshape a flat list"
    )


def _no_backward_op():
    class Double(tg.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

    x = tg.tensor([1.0], requires_grad=True)
    Double.apply(x).sum().backward()


BAD = {
    "zeros(-1)": (
        lambda: tg.zeros(-1),
        tg.ShapeError,
        "zeros: sizes must be non-negative whole numbers, got (-1,)",
    ),
    "randn(2.5)": (
        lambda: tg.randn(2.5),
        tg.ShapeError,
        "randn: sizes must be non-negative whole numbers, got (2.5,)",
    ),
    "reshape('a')": (
        lambda: tg.zeros(4).reshape("a"),
        tg.ShapeError,
        "reshape: sizes must be whole numbers (or -1), got ('a',)",
    ),
    "dtype='bogus'": (
        lambda: tg.tensor([1.0], dtype="bogus"),
        tg.DataError,
        "tensor: unknown dtype 'bogus'",
    ),
    "astype(str)": (
        lambda: tg.zeros(2).astype(str),
        tg.DataError,
        "astype: a tensor holds real numbers or booleans, not text (dtype <U0)",
    ),
    "where(float mask)": (
        lambda: tg.where(tg.ones(2), tg.ones(2), 0.0),
        tg.DataError,
        "where: the condition must be boolean (such as x > 0), got dtype float64",
    ),
    "clip('a')": (
        lambda: tg.zeros(2).clip("a"),
        tg.DataError,
        "clip: the bounds must be numbers or None, got 'a'",
    ),
    "permute(0, 0)": (
        lambda: tg.zeros(2, 2).permute(0, 0),
        tg.ShapeError,
        "permute: axes (0, 0) do not reorder the 2 axes of a tensor of shape (2, 2)",
    ),
    "expand(2)": (
        lambda: tg.zeros(3).expand(2),
        tg.ShapeError,
        "broadcast_to: cannot broadcast shape (3,) to (2,)",
    ),
    "register_hook(3)": (
        lambda: tg.zeros(2, requires_grad=True).register_hook(3),
        TypeError,
        "register_hook: a hook must be a function taking the gradient, got 3",
    ),
    "gradcheck(3, x)": (
        lambda: tg.gradcheck(3, tg.zeros(2, requires_grad=True)),
        TypeError,
        "gradcheck: the first argument must be the function to check, got int",
    ),
    "Function without backward": (
        _no_backward_op,
        NotImplementedError,
        "DoubleBackward: this Function has no backward, so no gradient can pass it",
    ),
    "mask of the wrong length": (
        lambda: tg.zeros(3).__setitem__(tg.tensor([True, False]), 1.0),
        tg.ShapeError,
        "setitem: boolean index did not match",
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_gets_a_house_error(case):
    run, kind, start = BAD[case]
    with pytest.raises(kind) as info:
        run()
    assert str(info.value).startswith(start)


def test_a_list_of_booleans_is_a_boolean_mask():
    mask = tg.tensor([True, False, True])
    assert mask.dtype == np.bool_
    np.testing.assert_array_equal(tg.tensor([1.0, 2.0, 3.0])[mask].numpy(), [1.0, 3.0])


@pytest.mark.parametrize(
    "shape, axis, expected",
    [((0,), None, np.nan), ((0, 3), 0, [np.nan] * 3), ((0, 3), 1, []), ((2, 0), 1, [np.nan] * 2)],
)
def test_the_mean_of_no_numbers_is_nan_as_in_pytorch(shape, axis, expected):
    x = tg.zeros(*shape, requires_grad=True)
    m = x.mean(axis=axis)
    np.testing.assert_array_equal(m.numpy(), np.asarray(expected))
    m.sum().backward()
    assert x.grad.shape == shape
