"""PyTorch's in-place methods (`x.relu_()`, `x.exp_()`, ...) change the tensor's own numbers,
and follow PyTorch's rules: a node that saved the old numbers refuses its backward, and an op
that saves its own result (relu_, exp_, sigmoid_, tanh_) refuses once that result changes.

Each program runs here and, where torch is installed, in PyTorch; the expected outcomes are
written out, so the tests also run without torch.
"""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_edu as tg

REFUSED = "refused"


def _both(program):
    """`program(lib)` in tinygrad_edu and, where installed, in PyTorch: a refusal (PyTorch's
    RuntimeError, our InplaceError) becomes REFUSED."""
    libs = [tg]
    try:
        import torch

        libs.append(torch)
    except ImportError:
        pass
    results = []
    for lib in libs:
        try:
            results.append(program(lib))
        except RuntimeError as e:
            assert "in place" in str(e) or "inplace" in str(e), e
            results.append(REFUSED)
    return results


def _leaf(lib, values=(-1.0, 2.0, 0.5)):
    return lib.tensor([list(values)], dtype=lib.float64, requires_grad=True)


def _grad(t):
    g = t.grad
    return np.asarray(g.detach() if hasattr(g, "detach") else g.numpy()).round(12).tolist()


METHODS = {
    "relu_": (lambda h: h.relu_(), [[0.0, 2.0, 0.5]], [[0.0, 1.0, 1.0]]),
    "neg_": (lambda h: h.neg_(), [[1.0, -2.0, -0.5]], [[-1.0, -1.0, -1.0]]),
    "abs_": (lambda h: h.abs_(), [[1.0, 2.0, 0.5]], [[-1.0, 1.0, 1.0]]),
    "clamp_": (lambda h: h.clamp_(-0.5, 1.0), [[-0.5, 1.0, 0.5]], [[0.0, 0.0, 1.0]]),
    "pow_": (lambda h: h.pow_(2.0), [[1.0, 4.0, 0.25]], [[-2.0, 4.0, 1.0]]),
    "masked_fill_": (lambda h: h.masked_fill_(h > 1.0, 0.0), [[-1.0, 0.0, 0.5]], [[1.0, 0.0, 1.0]]),
    "exp_": (
        lambda h: h.exp_(),
        [[0.367879441171, 7.389056098931, 1.6487212707]],
        [[0.367879441171, 7.389056098931, 1.6487212707]],
    ),
}


@pytest.mark.parametrize("name", list(METHODS))
def test_an_in_place_method_changes_the_numbers_and_passes_the_gradient(name):
    change, values, grad = METHODS[name]

    def program(lib):
        x = _leaf(lib)
        h = x * 1.0
        out = change(h)
        assert out is h  # the same tensor, changed
        h.sum().backward()
        return np.asarray(h.detach() if lib is not tg else h.numpy()).round(12).tolist(), _grad(x)

    for result in _both(program):
        np.testing.assert_allclose(result[0], values, rtol=1e-11)
        np.testing.assert_allclose(result[1], grad, rtol=1e-11)


@pytest.mark.parametrize("first, then", [("sigmoid", "relu_"), ("tanh", "clamp_"), ("exp", "neg_")])
def test_changing_a_result_that_its_op_saved_is_refused(first, then):
    # sigmoid, tanh and exp keep their result for backward: it must not change
    def program(lib):
        x = _leaf(lib)
        h = getattr(x, first)()
        getattr(h, then)(*((-0.5, 1.0) if then == "clamp_" else ()))
        h.sum().backward()
        return _grad(x)

    assert _both(program) == [REFUSED] * len(_both(program))


@pytest.mark.parametrize("op", ["relu_", "exp_", "sigmoid_", "tanh_"])
def test_an_in_place_op_that_saves_its_result_refuses_a_later_change_of_it(op):
    def program(lib):
        x = _leaf(lib)
        h = x * 1.0
        getattr(h, op)()
        h.mul_(2.0)  # the result op saved is gone
        h.sum().backward()
        return _grad(x)

    assert set(_both(program)) == {REFUSED}


def test_a_result_saved_in_a_view_is_watched_through_its_base():
    def program(lib):
        x = _leaf(lib)
        base = x * 1.0
        base[0, 1:].exp_()
        base.mul_(2.0)  # changes exp's result, which lives in base's numbers
        base.sum().backward()
        return _grad(x)

    assert set(_both(program)) == {REFUSED}


@pytest.mark.parametrize("op", ["tanh_", "exp_"])
def test_a_second_derivative_through_a_saved_result_in_a_view_reaches_the_base(op):
    # the retained gradient of the base counts what flows through the saved result: PyTorch
    # sends it through the view's node, past the base
    def program(lib):
        x = lib.tensor([[0.3, 0.2]], dtype=lib.float64, requires_grad=True)
        base = x**0.5
        view = base[0, 1]
        base.retain_grad()
        getattr(view, op)()
        loss = (2.0**base * 0.7).sum()
        grad = tg.grad if lib is tg else lib.autograd.grad
        (g,) = grad(loss, [x], create_graph=True)
        (g * g).sum().backward()
        return _grad(base), _grad(x)

    expected = {  # PyTorch 2.13's
        "tanh_": ([[1.290401342755, 0.416387481168]], [[-0.866845069705, -2.00131790711]]),
        "exp_": ([[1.290401342755, 18.203573170668]], [[-0.866845069705, -2.138862435267]]),
    }[op]
    for grads in _both(program):
        np.testing.assert_allclose(grads[0], expected[0], rtol=1e-9)
        np.testing.assert_allclose(grads[1], expected[1], rtol=1e-9)


def test_writing_a_tensors_own_numbers_into_a_view_of_it_is_allowed():
    # v is x's numbers in another shape; v[0:1] = x writes them into themselves (broadcast)
    def program(lib):
        x = lib.tensor([0.5, 1.0, 2.0], dtype=lib.float64)
        v = x.reshape(1, 3)
        v[0:1] = x
        return x.tolist()

    assert all(r == [0.5, 1.0, 2.0] for r in _both(program))
