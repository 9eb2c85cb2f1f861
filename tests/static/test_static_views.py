"""Views (x.T, slices, reshapes) share their base's version counter but are other values.

Regression tests: the tracer once keyed tensors by their version counter, so after
`x.T` it took `x` for its transpose and replayed wrong numbers (or failed).
"""

import re

import numpy as np
import pytest

import tinygrad_edu as tg


def test_a_transpose_does_not_replace_its_base():
    w = tg.tensor(np.random.randn(3, 3))

    def f(x):
        return x.T.sum() * 2.0 + (x * w).sum()

    g = tg.static.trace(f, tg.tensor(np.random.randn(3, 3)))
    x1 = np.random.randn(3, 3)
    np.testing.assert_allclose(g(x1).numpy(), f(tg.tensor(x1)).numpy(), rtol=1e-12)
    assert g.ops == ("Transpose", "Sum", "Mul", "Mul", "Sum", "Add")


def test_slices_and_reshapes_of_one_input_stay_apart():
    def f(x):
        return (x[0] * x[1]).sum() + (x.reshape(6) * x.reshape(6)).sum() + x[:, 0].sum()

    g = tg.static.trace(f, tg.tensor(np.random.randn(2, 3)))
    x1 = np.random.randn(2, 3)
    np.testing.assert_allclose(g(x1).numpy(), f(tg.tensor(x1)).numpy(), rtol=1e-12)


def test_detached_alias_is_the_same_input_and_inplace_through_a_view_is_refused():
    g = tg.static.trace(lambda x: x.detach() * x, tg.tensor([1.0, 2.0]))
    assert g(tg.tensor([3.0, 4.0])).tolist() == [9.0, 16.0] and len(g.program.consts) == 0

    def edit(x):
        y = x * 1.0
        v = y.T
        v += 1.0  # changes y too: the trace cannot record that
        return y * 2

    with pytest.raises(
        tg.TracingError,
        match=re.escape(
            "trace: a traced tensor was changed in place; a static graph records values, not "
            "updates to them"
        ),
    ):
        tg.static.trace(edit, tg.tensor([[1.0, 2.0]]))


def test_rnn_cell_unrolled_three_steps_replays_like_eager_with_gradients():
    cell = tg.nn.RNNCell(2, 3)

    def unroll(x, h):
        for t in range(3):
            h = cell(x[t], h)  # weight_ih.T and weight_hh.T made again every step
        return (h * h).sum()

    def step(x, h):
        loss = unroll(x, h)
        return (loss, *tg.static.grad(loss, [x, h, *cell.parameters()]))

    g = tg.static.trace(step, tg.tensor(np.random.randn(3, 2)), tg.tensor(np.random.randn(3)))
    x1, h1 = np.random.randn(3, 2), np.random.randn(3)
    xt, ht = tg.tensor(x1, requires_grad=True), tg.tensor(h1, requires_grad=True)
    cell.zero_grad()
    eager = unroll(xt, ht)
    eager.backward()
    loss, *grads = g(x1, h1)
    np.testing.assert_allclose(loss.numpy(), eager.numpy(), rtol=1e-12)
    for got, want in zip(grads, [xt, ht, *cell.parameters()]):
        np.testing.assert_allclose(got.numpy(), want.grad.numpy(), rtol=1e-10, atol=1e-14)
    # the StaticGraph's own backward program agrees too
    gx, gh = tg.static.trace(unroll, tg.tensor(x1), tg.tensor(h1)).grad()(x1, h1)
    np.testing.assert_allclose(gx.numpy(), xt.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(gh.numpy(), ht.grad.numpy(), rtol=1e-10)
