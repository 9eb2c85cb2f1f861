"""The replay runner: list slots, per-run contexts, precomputed unbroadcasting."""

import numpy as np
from static_helpers import numeric_grad

import tinygrad_edu as tg
from tinygrad_edu.core.function import OPS
from tinygrad_edu.core.ops.elementwise import ReLU
from tinygrad_edu.core.ops.linalg import MatMul
from tinygrad_edu.static import runtime


def test_replay_context_class_runs_the_core_rules_and_leaves_the_op_registry_alone():
    sub = runtime._replay_class(MatMul)
    assert sub is runtime._replay_class(MatMul)  # made once per op class
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
        np.testing.assert_allclose(g.data, numeric_grad(lambda *a: value(*a), arrays, i),
                                   rtol=1e-6, atol=1e-8)


def test_each_run_keeps_its_own_relu_mask():
    step = tg.static.trace(lambda x: tg.static.grad(x.relu().sum(), [x])[0], np.ones(3))
    up = step.run_arrays([np.array([1.0, -1.0, 2.0])])[0]
    down = step.run_arrays([np.array([-1.0, 1.0, -2.0])])[0]
    assert up.tolist() == [1.0, 0.0, 1.0] and down.tolist() == [0.0, 1.0, 0.0]


def test_unbroadcast_plan_matches_sum_to_and_refuses_non_broadcast_shapes():
    g = np.arange(24.0).reshape(2, 3, 4)
    for shape in ((4,), (3, 1), (1, 4), (2, 1, 4), (1, 3, 1)):
        plan = runtime._unbroadcast(g.shape, shape)
        want = g.sum(axis=tuple(range(3 - len(shape))))
        want = want.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1), keepdims=True)
        np.testing.assert_array_equal(plan(g), want.reshape(shape))
    assert runtime._unbroadcast((2, 3), (3, 2)) is None
    assert runtime._unbroadcast((3,), (2, 3)) is None
