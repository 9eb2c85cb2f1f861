"""Every op in docs/design.md: forward against numpy, backward against finite differences.

One table drives it all: each row is (id, fn on Tensors, numpy reference, input shapes,
input domain). Rows cover broadcasting pairs, 1-D and batched matmul, every axis form
of the reductions and both kinds of indexing. Hypothesis then varies shapes and values,
and a few rows are checked to second order (`create_graph=True`).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tinygrad_edu as tg
from tests.strategies import arrays, arrays_away_from, broadcastable_pair, shapes


def _log_softmax(a, axis=-1):
    s = a - a.max(axis=axis, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))


def _softmax(a, axis=-1):
    return np.exp(_log_softmax(a, axis))


MASK = np.array([[True, False, True, True], [False, True, False, True], [True, True, False, False]])
ROWS, COLS = np.array([0, 2, 2, 1]), np.array([3, 0, 0, 1])  # repeated (2, 0): grads add up

# (id, fn(*tensors), numpy(*arrays), input shapes, domain) -- domain: "any" values in
# [-2, 2] kept off kinks at 0, "pos" values in [0.5, 2] (log, sqrt, pow base, divisor)
BROADCAST = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 3, 4), (3, 1)), ((1, 4), (3, 1)), ((), (2, 3))]
OPS = []
for sa, sb in BROADCAST:
    tag = f"{sa}-{sb}"
    OPS += [
        (f"add{tag}", lambda a, b: a + b, np.add, (sa, sb), "any"),
        (f"sub{tag}", lambda a, b: a - b, np.subtract, (sa, sb), "any"),
        (f"mul{tag}", lambda a, b: a * b, np.multiply, (sa, sb), "any"),
        (f"div{tag}", lambda a, b: a / b, np.divide, (sa, sb), "pos"),
        (f"pow{tag}", lambda a, b: a**b, np.power, (sa, sb), "pos"),
    ]
OPS += [
    ("radd-scalar", lambda a: 2.0 + a, lambda a: 2.0 + a, [(3,)], "any"),
    ("rsub-scalar", lambda a: 2.0 - a, lambda a: 2.0 - a, [(3,)], "any"),
    ("rmul-scalar", lambda a: 3 * a, lambda a: 3 * a, [(3,)], "any"),
    ("rdiv-scalar", lambda a: 3.0 / a, lambda a: 3.0 / a, [(3,)], "pos"),
    ("pow-scalar", lambda a: a**3, lambda a: a**3, [(2, 3)], "any"),
    ("rpow-scalar", lambda a: 2.0**a, lambda a: 2.0**a, [(2, 3)], "any"),
    ("neg", lambda a: -a, np.negative, [(2, 3)], "any"),
    ("matmul-2d", lambda a, b: a @ b, np.matmul, [(3, 4), (4, 2)], "any"),
    ("matmul-vec-mat", lambda a, b: a @ b, np.matmul, [(4,), (4, 2)], "any"),
    ("matmul-mat-vec", lambda a, b: a @ b, np.matmul, [(3, 4), (4,)], "any"),
    ("matmul-vec-vec", lambda a, b: a @ b, np.matmul, [(4,), (4,)], "any"),
    ("matmul-batched", lambda a, b: a @ b, np.matmul, [(2, 3, 4), (2, 4, 2)], "any"),
    ("matmul-broadcast-batch", lambda a, b: a @ b, np.matmul, [(2, 3, 4), (4, 5)], "any"),
    ("sum", lambda a: a.sum(), np.sum, [(3, 4)], "any"),
    ("sum-axis0", lambda a: a.sum(0), lambda a: a.sum(0), [(3, 4)], "any"),
    (
        "sum-axis-neg-keep",
        lambda a: a.sum(-1, keepdims=True),
        lambda a: a.sum(-1, keepdims=True),
        [(2, 3, 4)],
        "any",
    ),
    ("sum-axes-tuple", lambda a: a.sum((0, 2)), lambda a: a.sum((0, 2)), [(2, 3, 4)], "any"),
    ("mean", lambda a: a.mean(), np.mean, [(3, 4)], "any"),
    (
        "mean-axis1-keep",
        lambda a: a.mean(1, keepdims=True),
        lambda a: a.mean(1, keepdims=True),
        [(3, 4)],
        "any",
    ),
    ("max", lambda a: a.max(), np.max, [(3, 4)], "any"),
    ("max-axis1", lambda a: a.max(axis=1), lambda a: a.max(1), [(3, 4)], "any"),
    (
        "max-axis0-keep",
        lambda a: a.max(0, keepdims=True),
        lambda a: a.max(0, keepdims=True),
        [(3, 4)],
        "any",
    ),
    ("min", lambda a: a.min(), np.min, [(3, 4)], "any"),
    ("min-axis-neg", lambda a: a.min(axis=-1), lambda a: a.min(-1), [(2, 3, 4)], "any"),
    ("reshape", lambda a: a.reshape(4, 3), lambda a: a.reshape(4, 3), [(3, 4)], "any"),
    ("reshape-infer", lambda a: a.reshape(-1), lambda a: a.reshape(-1), [(2, 3, 2)], "any"),
    ("transpose", lambda a: a.transpose(), np.transpose, [(3, 4)], "any"),
    (
        "transpose-axes",
        lambda a: a.transpose(2, 0, 1),
        lambda a: a.transpose(2, 0, 1),
        [(2, 3, 4)],
        "any",
    ),
    ("T", lambda a: a.T, lambda a: a.T, [(3, 4)], "any"),
    ("exp", lambda a: a.exp(), np.exp, [(3, 4)], "any"),
    ("log", lambda a: a.log(), np.log, [(3, 4)], "pos"),
    ("tanh", lambda a: a.tanh(), np.tanh, [(3, 4)], "any"),
    ("relu", lambda a: a.relu(), lambda a: np.maximum(a, 0), [(3, 4)], "any"),
    ("sigmoid", lambda a: a.sigmoid(), lambda a: 1 / (1 + np.exp(-a)), [(3, 4)], "any"),
    ("softmax", lambda a: a.softmax(), _softmax, [(3, 4)], "any"),
    ("softmax-axis0", lambda a: a.softmax(0), lambda a: _softmax(a, 0), [(3, 4)], "any"),
    ("log_softmax", lambda a: a.log_softmax(), _log_softmax, [(3, 4)], "any"),
    (
        "log_softmax-axis0",
        lambda a: a.log_softmax(axis=0),
        lambda a: _log_softmax(a, 0),
        [(3, 4)],
        "any",
    ),
    ("abs", lambda a: a.abs(), np.abs, [(3, 4)], "any"),
    ("sqrt", lambda a: a.sqrt(), np.sqrt, [(3, 4)], "pos"),
    ("clip", lambda a: a.clip(-0.5, 0.5), lambda a: np.clip(a, -0.5, 0.5), [(3, 4)], "any"),
    (
        "clip-min-only",
        lambda a: a.clip(min=0.25),
        lambda a: np.clip(a, 0.25, None),
        [(3, 4)],
        "any",
    ),
    ("index-int", lambda a: a[1], lambda a: a[1], [(3, 4)], "any"),
    ("index-slice", lambda a: a[1:, ::2], lambda a: a[1:, ::2], [(3, 4)], "any"),
    ("index-negative-ellipsis", lambda a: a[..., -1], lambda a: a[..., -1], [(2, 3, 4)], "any"),
    ("index-newaxis", lambda a: a[None, :, 2], lambda a: a[None, :, 2], [(3, 4)], "any"),
    ("index-int-array-repeats", lambda a: a[ROWS, COLS], lambda a: a[ROWS, COLS], [(3, 4)], "any"),
    ("index-list", lambda a: a[[2, 0, 2]], lambda a: a[[2, 0, 2]], [(3, 4)], "any"),
    (
        "index-tensor-labels",
        lambda a: a[np.arange(3), tg.tensor([1.0, 3.0, 3.0])],
        lambda a: a[np.arange(3), [1, 3, 3]],
        [(3, 4)],
        "any",
    ),
    ("index-bool-mask", lambda a: a[MASK], lambda a: a[MASK], [(3, 4)], "any"),
    (
        "cat-axis0",
        lambda a, b: tg.cat([a, b]),
        lambda a, b: np.concatenate([a, b]),
        [(2, 3), (1, 3)],
        "any",
    ),
    (
        "cat-axis-neg",
        lambda a, b, c: tg.cat([a, b, c], axis=-1),
        lambda a, b, c: np.concatenate([a, b, c], axis=-1),
        [(2, 1), (2, 3), (2, 2)],
        "any",
    ),
    (
        "stack-axis0",
        lambda a, b: tg.stack([a, b]),
        lambda a, b: np.stack([a, b]),
        [(2, 3), (2, 3)],
        "any",
    ),
    (
        "stack-axis-last",
        lambda a, b, c: tg.stack([a, b, c], axis=-1),
        lambda a, b, c: np.stack([a, b, c], axis=-1),
        [(2, 3)] * 3,
        "any",
    ),
    (
        "where",
        lambda a, b: tg.where(MASK, a, b),
        lambda a, b: np.where(MASK, a, b),
        [(3, 4), (3, 4)],
        "any",
    ),
    (
        "where-broadcast",
        lambda a, b: tg.where(MASK, a, b),
        lambda a, b: np.where(MASK, a, b),
        [(4,), (3, 1)],
        "any",
    ),
    (
        "where-scalar",
        lambda a: tg.where(a > 0, a, 0.0),
        lambda a: np.where(a > 0, a, 0.0),
        [(3, 4)],
        "any",
    ),
]


def make_inputs(shapes_: list, domain: str, seed: int = 0) -> list[np.ndarray]:
    """Values in [-2, 2] at least 0.05 away from 0 and from +-0.5/0.25 (kinks), or in [0.5, 2]."""
    rng = np.random.default_rng(seed)
    out = []
    for shape in shapes_:
        if domain == "pos":
            out.append(rng.uniform(0.5, 2.0, shape))
        else:
            a = rng.uniform(0.05, 2.0, shape) * rng.choice([-1.0, 1.0], shape)
            for kink in (0.5, -0.5, 0.25):
                a = np.where(np.abs(a - kink) < 0.05, a + 0.1, a)
            out.append(np.asarray(a))
    return out


@pytest.mark.parametrize("name, fn, ref, in_shapes, domain", OPS, ids=[r[0] for r in OPS])
def test_forward_matches_numpy(name, fn, ref, in_shapes, domain):
    arrays_ = make_inputs(in_shapes, domain)
    out = fn(*[tg.tensor(a, requires_grad=True) for a in arrays_])
    expected = ref(*arrays_)
    assert isinstance(out, tg.Tensor)
    assert type(out.numpy()) is np.ndarray  # never a numpy scalar
    assert out.shape == np.shape(expected)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12, atol=1e-12)
    assert out.requires_grad and out.grad_fn is not None


@pytest.mark.parametrize("name, fn, ref, in_shapes, domain", OPS, ids=[r[0] for r in OPS])
def test_gradcheck(name, fn, ref, in_shapes, domain):
    inputs = [tg.tensor(a, requires_grad=True) for a in make_inputs(in_shapes, domain)]
    assert tg.gradcheck(fn, inputs)


@pytest.mark.parametrize("name, fn, ref, in_shapes, domain", OPS, ids=[r[0] for r in OPS])
def test_float32_stays_float32(name, fn, ref, in_shapes, domain):
    inputs = [
        tg.tensor(a.astype(np.float32), requires_grad=True) for a in make_inputs(in_shapes, domain)
    ]
    out = fn(*inputs)
    assert out.dtype == np.float32
    out.sum().backward()
    for t in inputs:
        assert t.grad.dtype == np.float32 and t.grad.shape == t.shape


SECOND_ORDER = [
    "mul(3, 4)-(4,)",
    "div(3, 4)-(3, 4)",
    "pow(3, 4)-(3, 4)",
    "exp",
    "log",
    "tanh",
    "sigmoid",
    "softmax",
    "log_softmax",
    "matmul-2d",
    "sqrt",
]
# linear ops have a constant first derivative; square the input so the second one is not zero
SECOND_ORDER_LINEAR = [
    ("max-axis1", lambda a: (a * a).max(axis=1)),
    ("index-int-array-repeats", lambda a: (a * a)[ROWS, COLS]),
    ("where", lambda a: tg.where(MASK, a * a, a.exp())),
    ("cat", lambda a: tg.cat([a * a, a], axis=1)),
    ("reshape-transpose", lambda a: (a * a).reshape(4, 3).T),
    ("sum-mean", lambda a: (a * a).sum(0) + (a * a * a).mean(1, keepdims=True)),
]


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_double_backward_gradcheck(name):
    """The first derivative, built with create_graph=True, is itself differentiable."""
    _, fn, _, in_shapes, domain = next(r for r in OPS if r[0] == name)
    inputs = [tg.tensor(a, requires_grad=True) for a in make_inputs(in_shapes, domain)]
    weights = np.random.default_rng(1).uniform(0.5, 1.5, fn(*inputs).shape)

    @tg.enable_grad()  # gradcheck's finite differences run under no_grad
    def first_derivative(*xs):
        grads = tg.grad((fn(*xs) * weights).sum(), xs, create_graph=True)
        return tg.cat([g.reshape(-1) for g in grads])

    assert tg.gradcheck(first_derivative, inputs)


@pytest.mark.parametrize("name, fn", SECOND_ORDER_LINEAR, ids=[r[0] for r in SECOND_ORDER_LINEAR])
def test_double_backward_through_linear_ops(name, fn):
    x = tg.tensor(make_inputs([(3, 4)], "any")[0], requires_grad=True)

    @tg.enable_grad()
    def first_derivative(x):
        return tg.grad(fn(x).sum(), x, create_graph=True)[0]

    assert tg.gradcheck(first_derivative, [x])


@pytest.mark.parametrize("name", ["exp", "log", "tanh", "sigmoid", "sqrt", "relu", "abs"])
def test_double_backward_of_0d_outputs(name):
    """numpy returns scalars for 0-d results: the saved output must still be recognised."""
    fn = next(r for r in OPS if r[0] == name)[1]
    x = tg.tensor(0.7, requires_grad=True)

    @tg.enable_grad()
    def first_derivative(x):
        return tg.grad(fn(x) * x, x, create_graph=True)[0]

    assert tg.gradcheck(first_derivative, [x])


def test_second_derivative_values():
    x = tg.tensor([0.3, -1.2], requires_grad=True)
    (dy,) = tg.grad(x.tanh().sum(), x, create_graph=True)
    (d2y,) = tg.grad(dy.sum(), x)
    t = np.tanh(x.numpy())
    np.testing.assert_allclose(dy.numpy(), 1 - t**2)
    np.testing.assert_allclose(d2y.numpy(), -2 * t * (1 - t**2))


@pytest.mark.parametrize(
    "symbol, ufunc",
    [
        ("<", np.less),
        ("<=", np.less_equal),
        (">", np.greater),
        (">=", np.greater_equal),
        ("==", np.equal),
        ("!=", np.not_equal),
    ],
)
def test_comparisons_give_no_grad_tensors(symbol, ufunc):
    a = tg.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    b = tg.tensor([[2.0], [1.0]], requires_grad=True)
    out = eval(f"a {symbol} b")  # noqa: S307 - the operator under test
    expected = ufunc(a.numpy(), b.numpy())
    assert out.dtype == np.bool_ and out.shape == (2, 3)
    np.testing.assert_array_equal(out.numpy(), expected)
    assert not out.requires_grad and out.grad_fn is None
    scalar = eval(f"a {symbol} 2.0")  # noqa: S307
    np.testing.assert_array_equal(scalar.numpy(), ufunc(a.numpy(), 2.0))
    assert not scalar.requires_grad


def test_reductions_return_arrays_not_numpy_scalars():
    x = tg.tensor([1.0, 5.0, 2.0])
    for out in (x.sum(), x.mean(), x.max(), x.min()):
        assert type(out.numpy()) is np.ndarray and out.shape == ()
    assert x.max().item() == 5.0


@pytest.mark.parametrize("n", [7, (1 << 16) + 1])  # a filled copy below the limit, a view above
def test_sum_backward_spreads_the_gradient_small_and_large(n):
    x = tg.tensor(np.ones((n, 2)), requires_grad=True)
    (x.sum(axis=1) * tg.tensor(np.arange(n, dtype=float))).sum().backward()
    np.testing.assert_array_equal(
        x.grad.numpy(), np.repeat(np.arange(n, dtype=float)[:, None], 2, 1)
    )
    y = tg.tensor(np.ones((n,)), requires_grad=True)
    (y.sum() * 3.0).backward()
    assert y.grad.shape == (n,) and set(np.unique(y.grad.numpy())) == {3.0}


def test_max_ties_share_the_gradient():
    x = tg.tensor([3.0, 1.0, 3.0], requires_grad=True)
    x.max().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.5, 0.0, 0.5])


def test_relu_and_abs_derivative_at_zero_is_zero_like_pytorch():
    x = tg.tensor([0.0, 0.0], requires_grad=True)
    (x.relu() + x.abs()).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0])


# --- properties over shapes and values ------------------------------------------------------

BINARY = {
    "add": (lambda a, b: a + b, np.add),
    "sub": (lambda a, b: a - b, np.subtract),
    "mul": (lambda a, b: a * b, np.multiply),
}


@given(pair=broadcastable_pair(), op=st.sampled_from(sorted(BINARY)), data=st.data())
def test_binary_ops_broadcast_like_numpy_and_unbroadcast_grads(pair, op, data):
    fn, ref = BINARY[op]
    a_np, b_np = data.draw(arrays(pair[0])), data.draw(arrays(pair[1]))
    a, b = tg.tensor(a_np, requires_grad=True), tg.tensor(b_np, requires_grad=True)
    out = fn(a, b)
    np.testing.assert_allclose(out.numpy(), ref(a_np, b_np))
    out.sum().backward()
    assert a.grad.shape == a.shape and b.grad.shape == b.shape
    # d(sum(a*b))/da is b summed over the axes a was broadcast along, etc.
    ones = np.ones(out.shape)
    expect_a = {"add": ones, "sub": ones, "mul": np.broadcast_to(b_np, out.shape)}[op]
    lead = out.ndim - a.ndim
    summed = expect_a.sum(axis=tuple(range(lead))) if lead else expect_a
    axes = tuple(i for i, n in enumerate(a.shape) if n == 1 and summed.shape[i] != 1)
    np.testing.assert_allclose(
        a.grad.numpy(), summed.sum(axis=axes, keepdims=True).reshape(a.shape)
    )


UNARY = [
    "exp",
    "tanh",
    "sigmoid",
    "relu",
    "abs",
    "softmax",
    "log_softmax",
    "sum",
    "mean",
    "max",
    "min",
    "T",
]


@given(shape=shapes, name=st.sampled_from(UNARY), data=st.data())
def test_unary_ops_gradcheck_on_random_shapes(shape, name, data):
    row = next(r for r in OPS if r[0] == name)
    values = data.draw(arrays_away_from(shape, kinks=(0.0,), margin=0.05))
    if name in ("max", "min") and np.unique(values).size != values.size:
        values = values + np.arange(values.size).reshape(shape) * 1e-3  # no ties
    if name in ("softmax", "log_softmax") and values.ndim == 0:
        values = values.reshape(1)
    x = tg.tensor(values, requires_grad=True)
    np.testing.assert_allclose(row[1](x).numpy(), row[2](values), rtol=1e-12, atol=1e-12)
    assert tg.gradcheck(row[1], [x])


@given(
    pair=st.sampled_from(
        [((2, 3), (3, 4)), ((3,), (3, 2)), ((2, 2, 3), (3,)), ((1, 2, 3), (4, 3, 1))]
    ),
    data=st.data(),
)
def test_matmul_gradcheck_on_random_values(pair, data):
    a = tg.tensor(data.draw(arrays(pair[0])), requires_grad=True)
    b = tg.tensor(data.draw(arrays(pair[1])), requires_grad=True)
    np.testing.assert_allclose((a @ b).numpy(), a.numpy() @ b.numpy())
    assert tg.gradcheck(lambda a, b: a @ b, [a, b])
