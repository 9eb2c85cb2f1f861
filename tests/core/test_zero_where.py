"""relu's backward on big arrays clears bits instead of branching (core/ops/common.py,
`zero_where`): the numbers must be np.where's to the last bit, nan, inf and -0.0 included,
in eager mode, in a static replay, and against PyTorch's threshold_backward."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tinygrad_edu as tg
from tinygrad_edu.core.ops.common import BRANCH_FREE_FROM, zero_where

SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -3.5]  # 1e-40: subnormal in float32


def _gradient(rng, shape, dtype):
    g = rng.standard_normal(shape).astype(dtype)
    flat = g.reshape(-1)
    picks = rng.integers(0, flat.size, size=flat.size // 8)
    flat[picks] = rng.choice(np.array(SPECIAL, dtype=dtype), size=picks.size)
    return g


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    size=st.sampled_from([10, BRANCH_FREE_FROM - 1, BRANCH_FREE_FROM, 3 * BRANCH_FREE_FROM + 7]),
    dtype=st.sampled_from(["float16", "float32", "float64"]),
    layout=st.sampled_from(["contiguous", "transposed", "strided"]),
)
def test_zero_where_is_np_where_bit_for_bit(seed, size, dtype, layout):
    rng = np.random.default_rng(seed)
    g = _gradient(rng, (size, 2) if layout != "contiguous" else (size,), dtype)
    if layout == "transposed":
        g = g.T
    elif layout == "strided":
        g = g[:, 0]
    dead = rng.random(g.shape) < 0.5
    got, want = zero_where(dead, g), np.where(dead, 0.0, g)
    assert got.dtype == want.dtype == g.dtype and got.shape == want.shape
    bits = np.dtype(f"u{g.dtype.itemsize}")
    np.testing.assert_array_equal(got.view(bits), want.view(bits))  # also tells -0.0 from 0.0
    assert np.shares_memory(got, g) is False  # a new array: the gradient g is left as it was


def test_a_broadcast_mask_or_gradient_falls_back_to_np_where():
    g = np.arange(2 * BRANCH_FREE_FROM, dtype=np.float32)
    dead = np.zeros(1, dtype=bool)  # broadcast against g: not the bit-clearing case
    np.testing.assert_array_equal(zero_where(dead, g), g)
    g_row = np.broadcast_to(np.float32(-1.0), (BRANCH_FREE_FROM, 2))  # read-only, strides 0
    dead_all = np.ones((BRANCH_FREE_FROM, 2), dtype=bool)
    assert not zero_where(dead_all, g_row).any()


def _big_relu_input(dtype):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((128, 96)).astype(dtype)  # 12,288 elements: the bit-clearing path
    x[0, :4] = [0.0, -0.0, np.nan, 1.0]
    return x


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_relu_backward_of_a_big_array_gives_zero_not_nan_under_an_infinite_gradient(dtype):
    x = tg.tensor(_big_relu_input(dtype), requires_grad=True)
    x.relu().sqrt().sum().backward()  # d sqrt(0) = inf arrives where relu is flat
    g = x.grad.numpy()
    flat = x.detach().numpy() <= 0
    assert np.all(g[flat] == 0) and np.all(np.signbit(g[flat]) == 0)  # +0.0, not nan
    assert np.isnan(g[0, 2])  # relu(nan) is nan: its gradient passes through as nan
    assert g.dtype == np.dtype(dtype)


def test_a_big_relu_replays_with_the_core_rule_bit_for_bit():
    x = _big_relu_input("float32")
    cot = np.random.default_rng(4).standard_normal(x.shape).astype("float32")

    def loss(x):
        return (x.relu() * tg.tensor(cot)).sum()

    grad = tg.static.trace(loss, x).grad()
    assert "zero_where(" in grad.python_source
    t = tg.tensor(x, requires_grad=True)
    loss(t).backward()
    np.testing.assert_array_equal(grad(x).numpy().view("u4"), t.grad.numpy().view("u4"))


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_relu_backward_of_a_big_array_matches_pytorch(dtype):
    torch = pytest.importorskip("torch")
    x = _big_relu_input(dtype)
    g = _gradient(np.random.default_rng(5), x.shape, dtype)
    t = tg.tensor(x, requires_grad=True)
    t.relu().backward(tg.tensor(g))
    tt = torch.tensor(x, requires_grad=True)
    tt.relu().backward(torch.tensor(g))
    np.testing.assert_array_equal(t.grad.numpy(), tt.grad.numpy())
