"""Replay: the program compiled to Python, per-run contexts, planned unbroadcasting."""

import traceback

import numpy as np
import pytest
from static_helpers import numeric_grad

import tinygrad_edu as tg
from tinygrad_edu.core.function import OPS
from tinygrad_edu.core.ops.elementwise import ReLU
from tinygrad_edu.core.ops.linalg import MatMul
from tinygrad_edu.static import codegen


def test_replay_context_class_runs_the_core_rules_and_leaves_the_op_registry_alone():
    sub = codegen.replay_class(MatMul)
    assert sub is codegen.replay_class(MatMul)  # made once per op class
    assert issubclass(sub, MatMul) and sub.forward is MatMul.forward
    assert sub.backward is MatMul.backward
    assert OPS["MatMul"] is MatMul and OPS["ReLU"] is ReLU
    ctx = object.__new__(sub)
    a, b = np.arange(6.0).reshape(2, 3), np.ones((3, 2))
    np.testing.assert_array_equal(MatMul.forward(ctx, a, b), a @ b)
    assert ctx.saved_tensors == (a, b)  # a plain attribute: no version checks in replay


def test_broadcast_gradients_are_summed_to_every_input_shape():
    # a bias (4,), a column (3, 1) and a row (1, 4) all broadcast against (3, 4)
    def f(x, col, row, bias):
        return (((x + col) * row + bias).relu() ** 2.0).sum()

    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s) for s in ((3, 4), (3, 1), (1, 4), (4,))]
    dg = tg.static.trace(f, *arrays).grad(wrt=["x", "col", "row", "bias"])
    value = tg.static.trace(f, *arrays)
    arrays = [rng.standard_normal(a.shape) for a in arrays]  # new inputs, new relu mask
    grads = dg(*arrays)
    for i, g in enumerate(grads):
        assert g.shape == arrays[i].shape
        np.testing.assert_allclose(
            g.numpy(), numeric_grad(lambda *a: value(*a), arrays, i), rtol=1e-6, atol=1e-8
        )


def test_each_run_keeps_its_own_relu_mask():
    step = tg.static.trace(lambda x: tg.static.grad(x.relu().sum(), [x])[0], np.ones(3))
    up = step.run_arrays([np.array([1.0, -1.0, 2.0])])[0]
    down = step.run_arrays([np.array([-1.0, 1.0, -2.0])])[0]
    assert up.tolist() == [1.0, 0.0, 1.0] and down.tolist() == [0.0, 1.0, 0.0]


def test_fitter_plans_the_unbroadcast_sum_and_falls_back_for_other_shapes():
    g = np.arange(24.0).reshape(2, 3, 4)
    for shape in ((4,), (3, 1), (1, 4), (2, 1, 4), (1, 3, 1)):
        fit = codegen._fitter(g.shape, shape)
        want = g.sum(axis=tuple(range(3 - len(shape))))
        want = want.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1), keepdims=True)
        np.testing.assert_array_equal(fit(g), want.reshape(shape))
    # not a broadcast of (2, 3): the general path (the eager engine's rule) refuses to
    # spread a number over an input that forward never broadcast, as PyTorch does
    with pytest.raises(
        tg.ShapeError, match=r"gradient of shape \(\) for an input of shape \(2, 3\)"
    ):
        codegen._fitter((), (2, 3), "MulBackward")(np.asarray(2.0))
    np.testing.assert_array_equal(codegen._fitter((3,), ())(np.ones(3)), 3.0)


def test_python_source_is_one_numpy_line_per_op_in_program_order():
    g = tg.static.trace(lambda x, w: (x @ w).relu().sum(), np.ones((2, 3)), np.ones((3, 1)))
    assert g.python_source == (
        "def replay(x, w):\n"
        "    v3 = x @ w\n"
        "    v4 = np.maximum(0, v3)\n"
        "    v5 = np.asarray(np.add.reduce(v4, axis=None))\n"
        "    return [v5]\n"
    )
    dg = g.grad(wrt=["w"])
    src = dg.python_source
    # the backward lines read the forward's values by name (no context objects); the
    # gradient of the matmul has the input's shape, so it needs no fitting line
    assert "= np.where(v4 <= 0, 0.0, v" in src
    assert "x.T @ v" in src
    assert "ctx" not in src


def test_an_op_without_a_numpy_line_keeps_its_context_for_backward():
    g = tg.static.trace(lambda x, w: (x @ w).sum(), np.ones(3), np.ones((3, 2))).grad(wrt=["w"])
    src = g.python_source  # a vector times a matrix: the core op's own call
    assert "ctx3 = new_ctx(MatMul); v3 = MatMul_forward(ctx3, x, w)" in src
    assert "ctx3.needs_input_grad = (False, True); g = MatMul_backward(ctx3, v" in src


def test_generated_names_never_shadow_what_the_code_uses():
    # parameters named like the generated code's own names and helpers
    def f(type, g, env, tape, MatMul, ndarray, v3, ctx3, replay):  # noqa: A002, N803
        h = (type @ g + env) * tape - MatMul
        return (h.relu() * ndarray + v3 - ctx3 + replay).sum()

    rng = np.random.default_rng(0)
    arrays = [
        rng.standard_normal(s)
        for s in ((2, 3), (3, 4), (4,), (2, 4), (), (2, 4), (2, 4), (1, 4), ())
    ]
    traced = tg.static.trace(f, *arrays)
    eager = f(*[tg.tensor(a) for a in arrays])
    np.testing.assert_allclose(traced(*arrays).numpy(), eager.numpy())
    grads = traced.grad(wrt=["type", "tape", "ndarray", "replay"])(*arrays)
    ts = [tg.tensor(a, requires_grad=True) for a in arrays]
    f(*ts).backward()
    for got, t in zip(grads, [ts[0], ts[3], ts[5], ts[8]]):
        np.testing.assert_allclose(got.numpy(), t.grad.numpy())


class ListOp(tg.Function):
    """A learner's op that returns lists, forward and backward."""

    @staticmethod
    def forward(ctx, x):
        if (x < -100).any():
            raise ValueError("ListOp: inputs below -100")
        return (x * 2).tolist()

    @staticmethod
    def backward(ctx, g):
        return ((2.0 * np.asarray(g)).tolist(),)  # one gradient, a list: made an array


def test_a_learners_op_output_and_gradient_are_made_arrays_of_the_right_shape():
    f = tg.static.trace(lambda x: ListOp.apply(x).sum(), np.ones(3))
    assert "if type(v2) is not ndarray: v2 = asarray(v2)" in f.python_source
    assert f(np.array([1.0, 2.0, 3.0])).item() == 12.0
    gx = f.grad()(np.array([1.0, 2.0, 3.0]))
    x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    ListOp.apply(x).sum().backward()  # eager makes the list an array the same way
    assert gx.shape == (3,) and gx.numpy().tolist() == x.grad.numpy().tolist() == [2.0, 2.0, 2.0]


def test_a_traceback_through_replay_shows_the_generated_line():
    f = tg.static.trace(lambda x: ListOp.apply(x * 1.0), np.ones(2))
    with pytest.raises(ValueError, match="ListOp: inputs below -100") as info:
        f(np.array([-200.0, 1.0]))
    text = "".join(traceback.format_exception(info.value))
    assert "<tinygrad_edu.static compiled #" in text
    assert "v4 = ListOp_forward(new_ctx(ListOp), v3)" in text


def test_attributes_that_are_not_literals_reach_the_code_as_globals():
    idx = np.array([2, 0])
    f = tg.static.trace(lambda x: x[1:, idx] * 1.0, np.arange(12.0).reshape(3, 4))
    x = np.arange(12.0).reshape(3, 4) + 5
    np.testing.assert_array_equal(f(x).numpy(), x[1:, idx])
    assert "index=" in f.python_source


def test_replay_drops_big_values_after_their_last_use():
    # a careful hand-written step frees a big intermediate once nothing reads it, so its
    # memory is reused by the next one; small values are left alone (a `del` costs more)
    x = np.linspace(-1, 1, 200 * 100).reshape(200, 100)
    w = np.linspace(0, 1, 100 * 100).reshape(100, 100)
    g = tg.static.trace(lambda x, w: ((x @ w).tanh() * 2).sum(), x, w)
    lines = g.python_source.splitlines()
    matmul = next(i for i, line in enumerate(lines) if "x @ w" in line)
    assert lines[matmul + 2].strip() == "del v3"  # right after Tanh, its only reader
    dg = g.grad(wrt=["w"])
    src = dg.python_source
    assert "del" in src and "return" in src
    w_t = tg.tensor(w, requires_grad=True)
    ((tg.tensor(x) @ w_t).tanh() * 2).sum().backward()
    np.testing.assert_array_equal(np.asarray(dg(x, w)), w_t.grad.numpy())
    small = tg.static.trace(lambda x: (x * 2).tanh().sum(), np.ones(3))
    assert "del" not in small.grad(wrt=[0]).python_source


def test_a_batched_product_whose_operand_pytorch_copies_replays_like_eager():
    # a permuted batch operand: matmul saves a copy of it (as PyTorch's), which a replay
    # must read as a plain array, both interpreted and compiled
    def step(a, b):
        return tg.static.grad((a.permute(0, 2, 1) @ b).sum(), [a, b])

    a = tg.tensor(np.random.randn(2, 3, 4), requires_grad=True)
    b = tg.tensor(np.random.randn(3, 5), requires_grad=True)
    traced = tg.static.trace(step, a, b)
    expected = tg.grad((a.permute(0, 2, 1) @ b).sum(), [a, b])
    for got in (traced(a, b), traced.optimize()(a, b)):
        for g, e in zip(got, expected, strict=True):
            np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-12)


def test_the_interpreter_runs_a_program_with_control_flow_and_its_gradient_like_eager():
    # runtime.interpret is the program's meaning: one equation at a time, by each op's class
    from tinygrad_edu.static import runtime

    def f(x, w):
        h = tg.static.while_loop(lambda h: h.abs().sum() > 1.0, lambda h: h * 0.5, x @ w)
        return tg.static.cond(h.sum() > 0, lambda a: a.relu(), lambda a: -a, h).sum()

    x, w = np.array([[1.0, -2.0, 3.0]]), np.linspace(-1, 1, 6).reshape(3, 2)
    g = tg.static.trace(f, x, w)
    dg = g.grad(wrt=["w"])
    xt, wt = tg.tensor(x), tg.tensor(w, requires_grad=True)
    f(xt, wt).backward()
    (value,) = runtime.interpret(g.program, [x, w])
    (grad_w,) = runtime.interpret(dg.program, [x, w])
    np.testing.assert_allclose(value, f(xt, tg.tensor(w)).item(), rtol=1e-12)
    np.testing.assert_allclose(grad_w, wt.grad.numpy(), rtol=1e-12)


def test_a_compiled_run_that_differs_from_the_interpreter_is_reported(monkeypatch):
    # the printer's numpy for tanh replaced by a wrong one: the check (on in every static
    # test, tests/static/conftest.py) names the difference
    from tinygrad_edu.static import numpy_lines

    monkeypatch.setitem(numpy_lines._UNARY, "Tanh", "np.sin({a})")
    g = tg.static.trace(lambda x: x.tanh(), np.array([0.5]))
    with pytest.raises(AssertionError, match="compiled replay differs from the interpreter"):
        g(np.array([0.5]))
