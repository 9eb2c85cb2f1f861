"""A detach() or a no_grad block inside a traced function cuts the gradient as eagerly."""

import numpy as np
import pytest

import tinygrad_edu as tg


def _detached_square(x):
    return (x.detach() * x).sum()  # d/dx = x.detach(): the detached factor is a constant


def _no_grad_inside(x):
    with tg.no_grad():
        c = x * 3  # no gradient flows back through c
    return (c * x).sum()


@pytest.mark.parametrize("fn", [_detached_square, _no_grad_inside])
def test_detach_and_no_grad_inside_cut_the_gradient_as_eagerly(fn):
    def grad_of(run):
        x = tg.tensor([1.0, 2.0, -0.5], requires_grad=True)
        run(x).backward()
        return x.grad.numpy()

    eager = grad_of(fn)
    assert np.abs(eager).sum() > 0
    compiled = tg.static.function(fn)
    np.testing.assert_allclose(grad_of(compiled), eager)
    np.testing.assert_allclose(grad_of(compiled), eager)  # the replay, not the first trace
    x = tg.tensor([1.0, 2.0, -0.5], requires_grad=True)
    with tg.no_grad():  # traced under no_grad: the program still has the gradient
        traced = tg.static.trace(fn, x)
    g = traced.grad(wrt=["x"])(x)  # one gradient: a Tensor
    np.testing.assert_allclose(g.numpy(), eager)
    assert "Detach" in traced.ops
