"""Values and gradients equal PyTorch's (skipped cleanly where torch is not installed)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_edu as tg  # noqa: E402

pytestmark = pytest.mark.torch


def micrograd_readme(lib, to_tensor):
    """The expression from micrograd's README, written once for both libraries."""
    a = to_tensor(-4.0)
    b = to_tensor(2.0)
    c = a + b
    d = a * b + b**3
    c = c + c + 1
    c = c + 1 + c + (-a)
    d = d + d * 2 + (b + a).relu()
    d = d + 3 * d + (b - a).relu()
    e = c - d
    f = e**2
    g = f / 2.0
    g = g + 10.0 / f
    g.backward()
    return a, b, g


def test_micrograd_readme_expression():
    a, b, g = micrograd_readme(tg, lambda v: tg.tensor(v, requires_grad=True))
    ta, tb, tgv = micrograd_readme(
        torch, lambda v: torch.tensor(v, dtype=torch.float64, requires_grad=True)
    )
    assert g.item() == pytest.approx(tgv.item(), rel=1e-12)  # 24.7041
    assert a.grad.item() == pytest.approx(ta.grad.item(), rel=1e-12)  # 138.8338
    assert b.grad.item() == pytest.approx(tb.grad.item(), rel=1e-12)  # 645.5773
    assert round(g.item(), 4) == 24.7041 and round(a.grad.item(), 4) == 138.8338


GRAPHS = {
    "mlp-tanh-mse": lambda m, x, w1, w2: (((m.tanh(x @ w1)) @ w2 - 1.0) ** 2).mean(),
    "softmax-xent": lambda m, x, w1, w2: (
        -m.log_softmax(x @ w1, -1)[np.arange(4), [0, 2, 1, 2]].mean() + (w2 * w2).sum() * 0.0
    ),
    "broadcast-diamond": lambda m, x, w1, w2: (
        (x[:, :1] * w2.T[:, :1] + x.sum(0)).exp().sum() / (1 + (w1**2).sum())
    ),
    "sigmoid-max-clip": lambda m, x, w1, w2: (
        m.amax(m.sigmoid(x @ w1), 0) + m.clip(x, -0.5, 0.5).abs().sqrt().sum(1)[:3] * 0.5
    ).sum(),
    "cat-stack-where": lambda m, x, w1, w2: (
        (m.where(x > 0, x, x * 0.1) @ m.cat([w1, w2.T[:, :3]], 0)[:3]).sum()
        + m.stack([w1[0], w1[1]], 0).softmax(-1)[0, 1]
    ),
}


class TG:
    tanh = staticmethod(lambda t: t.tanh())
    sigmoid = staticmethod(lambda t: t.sigmoid())
    log_softmax = staticmethod(lambda t, axis: t.log_softmax(axis))
    clip = staticmethod(lambda t, lo, hi: t.clip(lo, hi))
    amax = staticmethod(lambda t, axis: t.max(axis=axis))  # numpy's axis= returns the values
    where, cat, stack = staticmethod(tg.where), staticmethod(tg.cat), staticmethod(tg.stack)


class TORCH:
    tanh = staticmethod(torch.tanh)
    sigmoid = staticmethod(torch.sigmoid)
    log_softmax = staticmethod(lambda t, axis: torch.log_softmax(t, axis))
    clip = staticmethod(torch.clamp)
    amax = staticmethod(torch.amax)
    where = staticmethod(torch.where)
    cat = staticmethod(lambda ts, axis: torch.cat(ts, axis))
    stack = staticmethod(lambda ts, axis: torch.stack(ts, axis))


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_tensor_graphs_match_pytorch(name):
    rng = np.random.default_rng(3)
    values = [rng.standard_normal((4, 3)), rng.standard_normal((3, 3)), rng.standard_normal((3, 4))]
    ours = [tg.tensor(v, requires_grad=True) for v in values]
    theirs = [torch.tensor(v, requires_grad=True) for v in values]
    out = GRAPHS[name](TG, *ours)
    ref = GRAPHS[name](TORCH, *theirs)
    if isinstance(ref, torch.Tensor) and ref.dim() == 1:
        out, ref = out.sum(), ref.sum()
    out.backward()
    ref.backward()
    np.testing.assert_allclose(out.item(), ref.item(), rtol=1e-12)
    for t, r in zip(ours, theirs):
        expected = np.zeros_like(t.numpy()) if r.grad is None else r.grad.numpy()
        got = np.zeros_like(t.numpy()) if t.grad is None else t.grad.numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


def test_second_derivative_matches_pytorch():
    x = tg.tensor([0.3, -1.1, 2.0], requires_grad=True)
    tx = torch.tensor([0.3, -1.1, 2.0], dtype=torch.float64, requires_grad=True)
    (g,) = tg.grad((x.sigmoid() * x.tanh()).sum(), x, create_graph=True)
    (tgr,) = torch.autograd.grad((tx.sigmoid() * tx.tanh()).sum(), tx, create_graph=True)
    (gg,) = tg.grad((g * g).sum(), x)
    (tgg,) = torch.autograd.grad((tgr * tgr).sum(), tx)
    np.testing.assert_allclose(g.numpy(), tgr.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(gg.numpy(), tgg.numpy(), rtol=1e-10)


def test_float32_matmul_mlp_matches_pytorch():
    rng = np.random.default_rng(5)
    x, w = rng.random((8, 5), dtype=np.float32), rng.standard_normal((5, 3)).astype(np.float32)
    tw, ow = torch.tensor(w, requires_grad=True), tg.tensor(w, requires_grad=True)
    (tg.tensor(x) @ ow).relu().log_softmax(1).mean().backward()
    (torch.tensor(x) @ tw).relu().log_softmax(1).mean().backward()
    assert ow.grad.dtype == np.float32
    np.testing.assert_allclose(ow.grad.numpy(), tw.grad.numpy(), rtol=1e-5, atol=1e-6)
