"""PyTorch habits (dim=, f-strings, @no_grad) and errors that must stay in the house format.
Views and in-place changes are tested in test_storage.py."""

import re

import numpy as np
import pytest

import tinygrad_edu as tg


def test_dim_is_accepted_as_pytorchs_spelling_of_axis():
    x = tg.tensor([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(x.sum(dim=0).numpy(), [4.0, 6.0])
    np.testing.assert_array_equal(x.mean(dim=1).numpy(), [1.5, 3.5])
    np.testing.assert_array_equal(x.max(dim=1).values.numpy(), [2.0, 4.0])  # (values, indices)
    np.testing.assert_allclose(x.softmax(dim=0).numpy().sum(axis=0), [1.0, 1.0])
    assert tg.cat([x, x], dim=1).shape == (2, 4)
    assert tg.stack([x, x], dim=2).shape == (2, 2, 2)


def test_fstring_formats_a_one_element_tensor_like_a_number():
    loss = tg.tensor([[0.123456]])
    assert f"{loss:.3f}" == "0.123"
    assert f"{tg.tensor([1.0, 2.0])}" == "tensor([1., 2.])"


def test_no_grad_works_as_a_bare_decorator():
    @tg.no_grad
    def double(t):
        return t * 2

    assert double(tg.tensor([1.0], requires_grad=True)).requires_grad is False


def test_mean_and_swapaxes_with_a_bad_axis_use_the_house_format():
    x = tg.ones(2, 3)
    with pytest.raises(
        np.exceptions.AxisError,
        match=re.escape(
            "sum: failed on inputs of shape (2, 3): axis 2 is out of bounds for array of "
            "dimension 2"
        ),
    ):
        x.mean(axis=2)
    with pytest.raises(
        tg.ShapeError,
        match=re.escape("swapaxes: axis 2 is out of range for a tensor with 2 axes (shape (2, 3))"),
    ):
        x.swapaxes(0, 2)


def test_where_names_the_pair_of_shapes_that_clash():
    x = tg.ones(2, 2)
    with pytest.raises(
        tg.ShapeError,
        match=re.escape(
            "where: cannot broadcast shapes (2, 2) and (3,): axis -1 has sizes 2 and 3"
        ),
    ):
        tg.where(x > 0, x, tg.tensor([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_binary_cross_entropy_on_a_saturated_sigmoid_has_finite_gradients(dtype):
    z = tg.tensor(np.array([40.0, -40.0, 200.0], dtype=dtype), requires_grad=True)
    tg.nn.functional.binary_cross_entropy(z.sigmoid(), [1.0, 0.0, 0.0]).backward()
    assert np.all(np.isfinite(z.grad.numpy()))
