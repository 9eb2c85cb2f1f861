"""Backward programs: static gradients vs the eager engine and vs finite differences."""

import numpy as np
import pytest
from static_helpers import numeric_grad
from test_static_trace import OP_TABLE, _inputs

import tinygrad_edu as tg

NOT_DIFFERENTIABLE = {"Compare", "FloorDivide"}  # floor_divide: no derivative, as PyTorch


@pytest.mark.parametrize("name", sorted(set(OP_TABLE) - NOT_DIFFERENTIABLE))
def test_grad_program_matches_eager_engine_on_new_inputs(name):
    fn, shapes, positive = OP_TABLE[name]
    weights = None

    def loss(*xs):
        out = fn(*xs)
        return (out * tg.tensor(weights)).sum()

    weights = np.random.randn(*fn(*[tg.tensor(a) for a in _inputs(shapes, positive)]).shape)
    g = tg.static.trace(loss, *[tg.tensor(a) for a in _inputs(shapes, positive)]).grad()
    new = _inputs(shapes, positive)
    ts = [tg.tensor(a, requires_grad=True) for a in new]
    loss(*ts).backward()
    got = g(*new)
    got = got if isinstance(got, tuple) else (got,)
    for t, gg in zip(ts, got):
        np.testing.assert_allclose(gg.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_grad_vs_finite_differences_and_relu_mask_follows_new_inputs():
    def f(x, w):
        return ((x @ w).relu() ** 2.0).sum()

    x0, w0 = np.random.randn(4, 3), np.random.randn(3, 2)
    g = tg.static.trace(f, x0, w0)
    dg = g.grad(wrt=["x", "w"])
    x1, w1 = np.random.randn(4, 3), np.random.randn(3, 2)  # other signs: other relu masks
    gx, gw = dg(x1, w1)
    np.testing.assert_allclose(
        gx.numpy(), numeric_grad(lambda a, b: g(a, b), [x1, w1], 0), rtol=1e-6, atol=1e-8
    )
    np.testing.assert_allclose(
        gw.numpy(), numeric_grad(lambda a, b: g(a, b), [x1, w1], 1), rtol=1e-6, atol=1e-8
    )


def test_backward_program_text_calls_each_ops_own_backward():
    g = tg.static.trace(lambda x: (x * x).sum(), tg.tensor([1.0, 2.0])).grad(with_value=True)
    lines = [line.split("  #")[0].rstrip() for line in str(g).splitlines()]
    assert lines == [
        "grad_f(x: float64[2]):",
        "    one: float64[] = const 1.",
        "    %2: float64[2] = Mul(x, x)",
        "    %3: float64[] = Sum(%2, axis=None, keepdims=False)",
        "    %5: float64[2] = Sum.backward(one, ctx=%3)",
        "    %6: float64[2], %7: float64[2] = Mul.backward(%5, ctx=%2)",
        "    %8: float64[2] = Add(%6, %7)",
        "    return %3, %8",
    ]
    value, grad = g(tg.tensor([3.0, 4.0]))
    assert value.item() == 25.0 and grad.tolist() == [6.0, 8.0]
    assert g.backward_program is not None


def test_grad_of_unused_input_is_zero_and_non_scalar_is_refused():
    g = tg.static.trace(lambda x, y: (x * 2).sum(), tg.tensor([1.0]), tg.tensor([1.0, 1.0]))
    gx, gy = g.grad()(tg.tensor([1.0]), tg.tensor([5.0, 5.0]))
    assert gx.tolist() == [2.0] and gy.tolist() == [0.0, 0.0]
    h = tg.static.trace(lambda x: x * 2, tg.tensor([1.0, 2.0]))
    with pytest.raises(tg.TracingError, match="grad: output 0 has shape \\(2,\\), but a gradient"):
        h.grad()
    with pytest.raises(tg.TracingError, match="grad: 'z' is not an input of this graph"):
        g.grad(wrt=["z"])


def _moons(n=100):
    rng = np.random.RandomState(0)
    t = rng.rand(n) * np.pi
    half = n // 2
    x = np.concatenate(
        [
            np.stack([np.cos(t[:half]), np.sin(t[:half])], 1),
            np.stack([1 - np.cos(t[half:]), 0.5 - np.sin(t[half:])], 1),
        ]
    )
    y = np.concatenate([-np.ones(half), np.ones(n - half)])[:, None]
    return x + 0.1 * rng.randn(n, 2), y


def mlp_step(x, y, w1, b1, w2, b2, w3, b3, lr=0.05):
    params = [w1, b1, w2, b2, w3, b3]
    out = ((x @ w1 + b1).relu() @ w2 + b2).relu() @ w3 + b3
    loss = (1.0 - y * out).relu().mean()  # hinge loss
    grads = tg.static.grad(loss, params)
    return (loss, *[p - lr * g for p, g in zip(params, grads)])


def test_traced_training_step_replays_forward_backward_and_sgd_like_eager():
    x, y = _moons()
    shapes = [(2, 16), (16,), (16, 16), (16,), (16, 1), (1,)]
    params = [np.random.randn(*s) * 0.5 for s in shapes]
    step = tg.static.trace(mlp_step, x, y, *params)
    assert "ReLU.backward" in str(step)
    eager = [tg.tensor(p, requires_grad=True) for p in params]
    static = [p.copy() for p in params]
    for _ in range(5):
        loss_e, *new = mlp_step(tg.tensor(x), tg.tensor(y), *eager)
        eager = [tg.tensor(p.numpy(), requires_grad=True) for p in new]
        loss_s, *new_s = step(x, y, *static)
        static = [p.numpy() for p in new_s]
        assert abs(loss_e.item() - loss_s.item()) < 1e-12
    for e, s in zip(eager, static):
        np.testing.assert_allclose(s, e.numpy(), rtol=1e-10)
    assert loss_s.item() < step(x, y, *params)[0].item()  # it trains


def test_eager_backward_inside_a_trace_warns_that_gradients_are_frozen():
    def f(w):
        loss = (w * w).sum()
        loss.backward()
        return w - 0.1 * w.grad

    with pytest.warns(tg.static.TracerWarning, match="gradients it computed are frozen"):
        tg.static.trace(f, tg.tensor([1.0], requires_grad=True))


def test_inputs_are_named_by_the_traced_functions_parameters():
    class MLP(tg.nn.Module):
        def __init__(self):
            super().__init__()
            self.l1, self.l2 = tg.nn.Linear(2, 3), tg.nn.Linear(3, 1)

        def forward(self, x):
            return self.l2(self.l1(x).relu())

    net = MLP()
    assert [p.name for p in net.parameters()] == ["l1.weight", "l1.bias", "l2.weight", "l2.bias"]

    def loss(x, w1, b1):  # the learner's names win over the tensors' own ("l1.weight")
        return ((x @ w1.T + b1).relu() ** 2.0).sum()

    x0 = np.random.randn(4, 2)
    g = tg.static.trace(loss, x0, net.l1.weight, net.l1.bias)
    assert [s.name for s in g.inputs] == ["x", "w1", "b1"]
    gw1 = g.grad(wrt=["w1"])(x0, net.l1.weight, net.l1.bias)
    w = tg.tensor(net.l1.weight.numpy(), requires_grad=True)
    loss(tg.tensor(x0), w, net.l1.bias).backward()
    np.testing.assert_allclose(gw1.numpy(), w.grad.numpy(), rtol=1e-12)
    # *args take the tensors' own names: a module's qualified parameter names
    star = tg.static.trace(lambda *ps: sum(p.sum() for p in ps), *net.parameters())
    assert [s.name for s in star.inputs] == ["l1.weight", "l1.bias", "l2.weight", "l2.bias"]
    assert star.grad(wrt=["l2.bias"])(*net.parameters()).tolist() == [1.0]
    # a Module is named by its forward's parameters; a placeholder keeps its own name
    assert [s.name for s in tg.static.trace(net, x0).inputs] == ["x"]
    cell = tg.nn.RNNCell(1, 2)
    assert [s.name for s in tg.static.trace(cell, np.ones(1), np.ones(2)).inputs] == ["x", "hx"]
    p = tg.static.placeholder((4, 2), name="batch")
    assert [s.name for s in tg.static.trace(loss, p, net.l1.weight, net.l1.bias).inputs] == [
        "batch",
        "w1",
        "b1",
    ]
