"""The ops replay writes out as numpy (static/numpy_lines.py) give the core op's numbers.

Each rule is its core class's forward and backward spelled out, so a replayed value
and gradient must equal the eager engine's to the last bit and in dtype, broadcasting,
0-d values and mixed dtypes included. Cases that keep the core call stay calls.
"""

import numpy as np
import pytest

import tinygrad_edu as tg

RNG = np.random.default_rng(7)


def _array(shape, dtype, positive=False):
    a = RNG.standard_normal(shape)
    a = np.abs(a) + 0.5 if positive else a
    return np.asarray(a, dtype=dtype)


def _check_against_eager(f, arrays, wrt=None):
    """Replay of f and of its gradient program equal eager, bit for bit and in dtype."""
    wrt = list(range(len(arrays))) if wrt is None else wrt
    traced = tg.static.trace(f, *arrays)
    eager = f(*[tg.tensor(a) for a in arrays])
    got = traced(*arrays)
    assert got.dtype == eager.dtype
    np.testing.assert_array_equal(got.numpy(), eager.numpy())
    cot = _array(eager.shape, eager.dtype)  # a cotangent that is not all ones

    def loss(*xs):
        return (f(*xs) * tg.tensor(cot)).sum()

    grads = tg.static.trace(loss, *arrays).grad(wrt=wrt)(*arrays)
    grads = grads if isinstance(grads, tuple) else (grads,)
    ts = [tg.tensor(a, requires_grad=i in wrt) for i, a in enumerate(arrays)]
    want = tg.grad(loss(*ts), [ts[i] for i in wrt])
    for g, w in zip(grads, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    return traced


BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
}
SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((), (3,)), ((2, 3, 4), (3, 1))]
DTYPES = [("float64", "float64"), ("float32", "float32"), ("float32", "float64")]


@pytest.mark.parametrize("op", list(BINARY))
@pytest.mark.parametrize("shapes", SHAPES)
@pytest.mark.parametrize("dtypes", DTYPES)
def test_binary_ops_replay_like_eager(op, shapes, dtypes):
    arrays = [_array(s, d, positive=op == "div") for s, d in zip(shapes, dtypes)]
    traced = _check_against_eager(BINARY[op], arrays)
    assert "_forward" not in traced.python_source  # written out, no op call
    _check_against_eager(BINARY[op], arrays, wrt=[1])


UNARY = {
    "neg": lambda a: -a,
    "relu": lambda a: a.relu(),
    "exp": lambda a: a.exp(),
    "log": lambda a: a.log(),
    "tanh": lambda a: a.tanh(),
    "T": lambda a: a.T,
    "permute": lambda a: a.permute(2, 0, 1),
    "square": lambda a: a**2,
    "cube": lambda a: a**3,
    "root": lambda a: a**0.5,
    "inverse": lambda a: a**-1,
    "sum": lambda a: a.sum(),
    "sum0": lambda a: a.sum(0),
    "sum_keep": lambda a: a.sum(axis=(0, -1), keepdims=True),
    "sum_last": lambda a: a.sum(-1),
}


@pytest.mark.parametrize("op", list(UNARY))
@pytest.mark.parametrize("shape", [(2, 3, 4), (5,), ()])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_unary_ops_replay_like_eager(op, shape, dtype):
    if (op == "permute" and len(shape) != 3) or (
        op.startswith("sum") and op != "sum" and not shape
    ):
        pytest.skip("the op needs more axes")
    if op == "sum_keep" and len(shape) < 2:
        pytest.skip("the op needs two axes")
    arrays = [_array(shape, dtype, positive=op in ("log", "root", "inverse"))]
    traced = _check_against_eager(UNARY[op], arrays)
    # x ** 0.5 keeps the core's call: its slope is 1 / sqrt(x) there (PyTorch's sign at -0.0)
    assert ("_forward" in traced.python_source) == (op == "root")


@pytest.mark.parametrize("dtypes", DTYPES)
def test_a_matrix_product_replays_like_eager(dtypes):
    arrays = [_array((3, 4), dtypes[0]), _array((4, 2), dtypes[1])]
    traced = _check_against_eager(lambda a, b: a @ b, arrays)
    assert traced.python_source.splitlines()[1].strip() == "v3 = a @ b"
    _check_against_eager(lambda a, b: a @ b, arrays, wrt=[0])


@pytest.mark.parametrize("shapes", [((4,), (4, 2)), ((3, 4), (4,)), ((2, 3, 4), (4, 2))])
def test_vector_and_batched_products_keep_the_core_call(shapes):
    arrays = [_array(s, "float64") for s in shapes]
    traced = _check_against_eager(lambda a, b: a @ b, arrays)
    assert "MatMul_forward(" in traced.python_source


def test_relu_of_an_infinite_gradient_is_zero_where_relu_is_flat_as_eagerly():
    x = np.array([-1.0, 0.0, 2.0])
    f = tg.static.trace(lambda x: (x.relu().sqrt()).sum(), x).grad()
    t = tg.tensor(x, requires_grad=True)
    t.relu().sqrt().sum().backward()
    np.testing.assert_array_equal(f(x).numpy(), t.grad.numpy())  # 0, not nan, at x <= 0


def test_a_gradient_made_of_constants_is_computed_once_and_returned_as_a_copy():
    g = tg.static.trace(lambda x: x.mean(), np.ones(3)).grad()
    src = g.python_source
    assert "(constants only: computed once, at compile time)" in src
    first = g(np.ones(3))
    first.numpy()[:] = 7.0  # a caller writing into a result ...
    np.testing.assert_array_equal(g(np.ones(3)).numpy(), np.full(3, 1 / 3))  # ... changes no run


def test_the_w1_step_reads_like_numpy_written_by_hand():
    x, w, b = _array((5, 2), "float64"), _array((2, 3), "float64"), _array((3,), "float64")

    def step(x, w, b):
        loss = (x @ w + b).relu().mean()
        gw, gb = tg.static.grad(loss, [w, b])
        return loss, w - 0.1 * gw, b - 0.1 * gb

    src = tg.static.trace(step, x, w, b).python_source
    for line in ("v4 = x @ w", "v5 = v4 + b", "v6 = np.maximum(0, v5)", "np.where(v6 <= 0, 0.0"):
        assert line in src, src
    assert "x.T @ " in src and "np.add.reduce(" in src and "ctx" not in src


def test_inputs_named_like_the_modules_the_lines_use_do_not_shadow_them():
    def f(np, broadcast_to):  # the written-out lines call np.* and broadcast_to
        return (np @ broadcast_to).relu().sum()

    arrays = [_array((3, 2), "float64"), _array((2, 4), "float64")]
    traced = _check_against_eager(f, arrays)
    assert "def replay(v1, v2):" in traced.python_source  # renamed, not shadowing


def test_a_power_of_zero_a_square_root_or_an_input_power_keeps_the_core_call():
    a = _array((3,), "float64", positive=True)
    traced = _check_against_eager(lambda a: a**0, [a])  # slope 0, the core's special case
    assert "Pow_forward(" in traced.python_source
    traced = _check_against_eager(lambda a: a**0.5, [-np.zeros(3)])  # slope -inf at -0.0
    assert "Pow_forward(" in traced.python_source
    b = np.asarray(2.0)  # an input exponent: its gradient, a^b ln a, is the core's
    traced = _check_against_eager(lambda a, b: a**b, [a, b])
    assert "Pow_forward(" in traced.python_source
