"""PyTorch's spellings on Tensor and at top level: same values and gradients as torch (float64)."""

import io

import numpy as np
import pytest

import tinygrad_edu as tg

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

X = np.array([[0.3, -1.2, 2.0], [1.5, 0.7, -0.4]])

# name, our function of one tensor, torch's (both must give one tensor)
UNARY = [
    ("pow", lambda t: t.pow(3), lambda t: t.pow(3)),
    ("pow-fn", lambda t: tg.pow(t, 2), lambda t: torch.pow(t, 2)),
    ("sin", lambda t: t.sin(), lambda t: t.sin()),
    ("cos-fn", lambda t: tg.cos(t), lambda t: torch.cos(t)),
    ("erf", lambda t: t.erf(), lambda t: t.erf()),
    ("clamp", lambda t: t.clamp(min=-0.5, max=1.0), lambda t: t.clamp(min=-0.5, max=1.0)),
    ("clamp-fn", lambda t: tg.clamp(t, 0.0), lambda t: torch.clamp(t, 0.0)),
    ("norm", lambda t: t.norm(), lambda t: t.norm()),
    ("norm-dim", lambda t: t.norm(dim=1), lambda t: t.norm(dim=1)),
    ("norm-p1", lambda t: tg.norm(t, p=1), lambda t: torch.norm(t, p=1)),
    ("max-dim", lambda t: t.max(1)[0], lambda t: t.max(1)[0]),
    (
        "max-dim-keep",
        lambda t: t.max(dim=0, keepdim=True).values,
        lambda t: t.max(dim=0, keepdim=True).values,
    ),
    ("min-dim", lambda t: tg.min(t, 1).values, lambda t: torch.min(t, 1).values),
    ("topk", lambda t: t.topk(2, dim=1).values, lambda t: t.topk(2, dim=1).values),
    (
        "topk-smallest",
        lambda t: tg.topk(t, 1, 0, largest=False)[0],
        lambda t: torch.topk(t, 1, 0, largest=False)[0],
    ),
    (
        "sum-keepdim",
        lambda t: tg.sum(t, dim=1, keepdim=True),
        lambda t: torch.sum(t, dim=1, keepdim=True),
    ),
    ("mean-keepdim", lambda t: t.mean(0, keepdim=True), lambda t: t.mean(0, keepdim=True)),
    ("std", lambda t: t.std(), lambda t: t.std()),
    ("var-dim", lambda t: t.var(1, unbiased=False), lambda t: t.var(1, unbiased=False)),
    ("logsumexp", lambda t: t.logsumexp(1), lambda t: t.logsumexp(1)),
    ("flatten", lambda t: t.flatten(), lambda t: t.flatten()),
    (
        "flatten-start",
        lambda t: t.reshape(2, 3, 1).flatten(1),
        lambda t: t.reshape(2, 3, 1).flatten(1),
    ),
    ("mm", lambda t: tg.mm(t, t.t()), lambda t: torch.mm(t, t.t())),
    ("matmul", lambda t: tg.matmul(t, t.T), lambda t: torch.matmul(t, t.T)),
    (
        "bmm",
        lambda t: tg.bmm(t.unsqueeze(0), t.T.unsqueeze(0)),
        lambda t: torch.bmm(t.unsqueeze(0), t.T.unsqueeze(0)),
    ),
    ("dot", lambda t: tg.dot(t[0], t[1]), lambda t: torch.dot(t[0], t[1])),
    (
        "gather",
        lambda t: t.gather(1, tg.tensor([[2, 0], [1, 1]]).long()),
        lambda t: t.gather(1, torch.tensor([[2, 0], [1, 1]])),
    ),
    ("masked_fill", lambda t: t.masked_fill(t > 0.5, 0.0), lambda t: t.masked_fill(t > 0.5, 0.0)),
    ("maximum", lambda t: tg.maximum(t, t[0]), lambda t: torch.maximum(t, t[0])),
    ("max-of-two", lambda t: tg.max(t, t * 0.0), lambda t: torch.max(t, t * 0.0)),
    ("min-of-two-ties", lambda t: t.min(t.clamp(max=0.5)), lambda t: t.min(t.clamp(max=0.5))),
    ("add-alpha", lambda t: t.add(t * t, alpha=2.0), lambda t: t.add(t * t, alpha=2.0)),
    (
        "tanh-fn",
        lambda t: tg.tanh(t) + tg.exp(t) + tg.sigmoid(t),
        lambda t: torch.tanh(t) + torch.exp(t) + torch.sigmoid(t),
    ),
    (
        "clone-to",
        lambda t: t.clone().to(tg.float64).to("cpu").cpu(),
        lambda t: t.clone().to(torch.float64).to("cpu").cpu(),
    ),
    ("prod", lambda t: t.prod(), lambda t: t.prod()),
    (
        "prod-dim-keep",
        lambda t: tg.prod(t, 1, keepdim=True),
        lambda t: torch.prod(t, 1, keepdim=True),
    ),
    (
        "prod-with-zero",
        lambda t: (t * tg.tensor([1.0, 0.0, 1.0])).prod(1),
        lambda t: (t * torch.tensor([1.0, 0.0, 1.0], dtype=torch.float64)).prod(1),
    ),
    ("cumsum", lambda t: t.cumsum(1), lambda t: t.cumsum(1)),
    ("cumsum-fn", lambda t: tg.cumsum(t, 0), lambda t: torch.cumsum(t, 0)),
    (
        "sort",
        lambda t: t.sort(1, descending=True).values,
        lambda t: t.sort(1, descending=True).values,
    ),
    ("tril", lambda t: t.tril(), lambda t: t.tril()),
    ("triu-fn", lambda t: tg.triu(t, 1), lambda t: torch.triu(t, 1)),
    ("split", lambda t: t.split(2, 1)[1], lambda t: t.split(2, 1)[1]),
    ("chunk", lambda t: tg.chunk(t, 2, 1)[0], lambda t: torch.chunk(t, 2, 1)[0]),
    ("unbind", lambda t: t.unbind(1)[2], lambda t: t.unbind(1)[2]),
    ("repeat", lambda t: t.repeat(2, 1, 3), lambda t: t.repeat(2, 1, 3)),
    (
        "round-sign",
        lambda t: t.round() + t.sign() + t.floor() + t.ceil(),
        lambda t: t.round() + t.sign() + t.floor() + t.ceil(),
    ),
    ("log1p-expm1", lambda t: t.abs().log1p() + t.expm1(), lambda t: t.abs().log1p() + t.expm1()),
    (
        "movedim",
        lambda t: t.reshape(2, 3, 1).movedim(1, 0),
        lambda t: t.reshape(2, 3, 1).movedim(1, 0),
    ),
]


@pytest.mark.parametrize("name,ours,theirs", UNARY, ids=[u[0] for u in UNARY])
def test_values_and_gradients_match_torch(name, ours, theirs):
    x = tg.tensor(X, requires_grad=True)
    tx = torch.tensor(X, requires_grad=True)
    out, tout = ours(x), theirs(tx)
    np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), rtol=1e-12, atol=1e-14)
    w = np.asarray(np.random.randn(*tout.shape))  # 0-d too: torch.tensor(float) is float32
    (out * tg.tensor(w)).sum().backward()
    (tout * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-14)


def test_max_dim_sends_the_gradient_to_the_first_tie_only():
    # numpy's axis= shares it between ties; PyTorch's dim gives it to one index
    x = tg.tensor([[1.0, 1.0, 0.0]], requires_grad=True)
    tx = torch.tensor([[1.0, 1.0, 0.0]], dtype=torch.float64, requires_grad=True)
    v, i = x.max(1)
    tv, ti = tx.max(1)
    v.sum().backward()
    tv.sum().backward()
    assert i.tolist() == ti.tolist() and i.dtype == tg.int64
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    x.grad = None
    x.max(axis=1).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0.5, 0.5, 0.0]])


def test_indices_and_comparisons_match_torch():
    a = np.array([[3.0, 1.0, 2.0], [0.0, 5.0, 5.0]])
    t, tt = tg.tensor(a), torch.tensor(a)
    assert t.argmax(dim=1).tolist() == tt.argmax(dim=1).tolist()
    assert t.argmax(1, keepdim=True).shape == tuple(tt.argmax(1, keepdim=True).shape)
    assert t.topk(2).indices.tolist() == tt.topk(2).indices.tolist()
    assert tg.equal(t, tg.tensor(a)) and not tg.equal(t, t[:1])
    assert tg.allclose(t, t + 1e-9) == torch.allclose(tt, tt + 1e-9)
    assert tg.isclose(t, t + 0.1).tolist() == torch.isclose(tt, tt + 0.1).tolist()
    assert t.numel() == tt.numel() == tg.numel(t)
    assert t.size() == tuple(tt.size()) and t.size(-1) == tt.size(-1) and t.dim() == tt.dim()
    assert t.size().numel() == 6 and t.size == 6  # numpy's count stays an int
    assert t.long().dtype == tg.long == tg.int64 and t.float().dtype == tg.float
    assert t.double().dtype == tg.double and t.int().dtype == tg.int32
    assert t.bool().dtype == tg.bool


def test_makers_take_dtype_and_device():
    assert tg.zeros(2, 3, dtype=tg.float32, device="cpu").dtype == np.float32
    assert tg.ones((2,), dtype=tg.long).dtype == np.int64
    assert tg.tensor([1.0], dtype=tg.float, device=tg.device("cpu")).dtype == np.float32
    assert tg.randn(()).shape == () and tg.rand(()).shape == ()
    assert tg.randn(2, dtype=tg.float32).dtype == np.float32
    np.testing.assert_allclose(
        tg.linspace(-3, 3, 7).numpy(), torch.linspace(-3, 3, 7, dtype=torch.float64).numpy()
    )
    assert tg.eye(3).numpy().trace() == 3.0 and tg.full((2,), 7.0).tolist() == [7.0, 7.0]
    assert tg.randint(0, 5, (4,)).dtype == np.int64 and tg.randperm(4).tolist() != []
    assert tg.zeros_like(tg.ones(2), dtype=tg.long).dtype == np.int64
    assert tg.full_like(tg.ones(2), 3.0).tolist() == [3.0, 3.0]
    assert tg.rand_like(tg.ones(2, 2)).shape == (2, 2) and tg.empty(3).shape == (3,)
    assert tg.is_tensor(tg.ones(1)) and not tg.is_tensor(1.0)


def test_another_device_is_refused_with_a_message():
    with pytest.raises(ValueError) as e:
        tg.zeros(2, device="cuda")
    assert str(e.value).startswith(
        "zeros: device 'cuda' is not available: tinygrad_edu computes with numpy on the CPU only"
    )
    with pytest.raises(ValueError, match="^to: device 'cuda:0'"):
        tg.ones(2).to("cuda:0")
    with pytest.raises(ValueError, match="^cuda: device 'cuda'"):
        tg.ones(2).cuda()
    assert tg.cuda.is_available() is False and tg.backends.mps.is_available() is False
    assert tg.ones(2).device == "cpu" and tg.ones(2).device == tg.device("cpu")


def test_default_dtype_can_be_float32():
    assert tg.get_default_dtype() == tg.float64
    tg.set_default_dtype(tg.float32)
    try:
        assert tg.tensor([1.5]).dtype == tg.zeros(2).dtype == tg.randn(2).dtype == np.float32
        assert tg.linspace(0, 1, 3).dtype == np.float32
    finally:
        tg.set_default_dtype(tg.float64)
    with pytest.raises(
        tg.DataError,
        match="^set_default_dtype: the default dtype must be float32 or float64, got int64",
    ):
        tg.set_default_dtype(tg.int64)


def test_generator_gives_its_own_repeatable_stream():
    a = tg.randn(3, generator=tg.Generator().manual_seed(1))
    np.random.seed(5)
    b = tg.randn(3, generator=tg.Generator().manual_seed(1))
    assert tg.equal(a, b)
    tg.manual_seed(3)
    c = tg.rand(2)
    tg.manual_seed(3)
    assert tg.equal(c, tg.rand(2))


def test_set_grad_enabled_as_call_block_and_decorator():
    x = tg.tensor([1.0], requires_grad=True)
    tg.set_grad_enabled(False)
    try:
        assert not (x * 2).requires_grad
    finally:
        tg.set_grad_enabled(True)
    with tg.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert (x * 2).requires_grad

    @tg.no_grad()
    def f(t):
        return t * 2

    @tg.inference_mode()
    def g(t):
        return t * 2

    assert not f(x).requires_grad and not g(x).requires_grad and tg.is_grad_enabled()


def test_autograd_function_sees_tensors_like_pytorchs():
    class Legendre3(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return 0.5 * (5 * x**3 - 3 * x)

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return grad_output * 1.5 * (5 * x**2 - 1)

    class TLegendre3(torch.autograd.Function):
        forward = staticmethod(Legendre3.forward.__wrapped__)
        backward = staticmethod(Legendre3.backward.__wrapped__)

    x = tg.tensor(X, requires_grad=True)
    tx = torch.tensor(X, requires_grad=True)
    y, ty = Legendre3.apply(x), TLegendre3.apply(tx)
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy())
    (g,) = tg.autograd.grad(y.sum(), x, create_graph=True)
    (tgr,) = torch.autograd.grad(ty.sum(), tx, create_graph=True)
    np.testing.assert_allclose(g.numpy(), tgr.detach().numpy())
    (g * g).sum().backward()
    (tgr * tgr).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())  # through the Tensor backward
    assert tg.autograd.gradcheck(Legendre3.apply, (tg.tensor(X, requires_grad=True),))


def test_autograd_functional_jacobian_and_hessian():
    x = np.array([0.5, -1.0, 2.0])
    f = lambda t: (t.sin() * t).sum()  # noqa: E731
    jac = tg.autograd.functional.jacobian(lambda t: t.sin() * t, tg.tensor(x))
    tjac = torch.autograd.functional.jacobian(lambda t: t.sin() * t, torch.tensor(x))
    np.testing.assert_allclose(jac.numpy(), tjac.numpy())
    hes = tg.autograd.functional.hessian(f, tg.tensor(x))
    thes = torch.autograd.functional.hessian(f, torch.tensor(x))
    np.testing.assert_allclose(hes.numpy(), thes.numpy())


def test_save_and_load_round_trip_without_pickle(tmp_path):
    net = tg.nn.Linear(2, 3)
    state = {"model": net.state_dict(), "step": 3, "betas": (0.9, 0.99), "w": tg.ones(2)}
    path = tmp_path / "ckpt.pt"
    tg.save(state, str(path))
    assert path.exists()  # no ".npz" added to the name
    back = tg.load(str(path))
    assert back["step"] == 3 and back["betas"] == (0.9, 0.99) and tg.equal(back["w"], tg.ones(2))
    np.testing.assert_array_equal(back["model"]["weight"], net.weight.numpy())
    buf = io.BytesIO()
    tg.save(tg.tensor([1.0, 2.0], requires_grad=True), buf)
    buf.seek(0)
    t = tg.load(buf, map_location="cpu")
    assert t.requires_grad and t.tolist() == [1.0, 2.0]


def test_saving_a_module_is_refused():
    with pytest.raises(tg.DataError) as e:
        tg.save(tg.nn.Linear(1, 1), io.BytesIO())
    assert str(e.value).startswith(
        "save: obj is a Linear, which is not data: saving it would "
        "need pickle, which can run code when loaded"
    )
    assert "hint: save model.state_dict()" in str(e.value)
    buf = io.BytesIO()
    np.savez(buf, a=np.ones(1))
    buf.seek(0)
    with pytest.raises(tg.DataError, match="^load: this file was not written by tg.save"):
        tg.load(buf)


def test_star_import_keeps_python_builtins():
    scope = {}
    exec("from tinygrad_edu import *", scope)
    for name in ("float", "int", "bool", "sum", "max", "min", "abs", "pow", "round"):
        assert name not in scope
    assert tg.float is tg.float32 and tg.sum(tg.ones(2)).item() == 2.0


def test_out_keyword_and_type_names():
    a = tg.tensor([[1.0, 2.0], [3.0, 4.0]])
    out = tg.zeros(2, 2)
    assert tg.matmul(a, a, out=out) is out
    np.testing.assert_array_equal(out.numpy(), (a @ a).numpy())
    ta = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)
    assert a.type() == ta.type() == "torch.DoubleTensor"
    assert tg.tensor([1, 2]).type() == torch.tensor([1, 2]).type() == "torch.LongTensor"
    assert (a > 2).type(tg.float).dtype == np.float32
    assert a.contiguous() is a and a.T.contiguous().numpy().flags.c_contiguous
    assert a.T.contiguous().view(4).tolist() == ta.T.contiguous().view(4).tolist()


def test_normal_draws_with_the_given_mean_and_spread():
    x = tg.normal(3.0, 0.5, (20000,))
    assert x.dtype == tg.get_default_dtype() and abs(x.mean().item() - 3.0) < 0.02
    assert abs(x.std().item() - 0.5) < 0.02
    per = tg.normal(tg.tensor([0.0, 100.0]), 1e-9)
    np.testing.assert_allclose(per.numpy(), [0.0, 100.0], atol=1e-6)


def test_data_minus_equals_updates_the_numbers_as_in_pytorch():
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    tw = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    for p in (w, tw):
        (p * p).sum().backward()
        p.data -= 0.1 * p.grad  # a detached alias, as in PyTorch
        p.data += -0.1 * p.grad
    np.testing.assert_allclose(w.numpy(), tw.detach().numpy())
    assert w.is_leaf and w.requires_grad
    a = np.ones(2)
    assert isinstance(a + w, tg.Tensor) and (a * w).grad_fn is not None
    assert (a < w).tolist() == [False, True]
    with pytest.raises(TypeError) as e:
        np.exp(w)
    assert str(e.value).startswith(
        "np.exp: numpy cannot compute np.exp of a Tensor: the result would leave the graph"
    )


def test_argsort_and_multinomial():
    a = np.array([[3.0, 1.0, 2.0], [0.0, 5.0, 5.0]])
    assert tg.argsort(tg.tensor(a), 1).tolist() == torch.argsort(torch.tensor(a), 1).tolist()
    g = tg.Generator().manual_seed(0)
    draws = tg.multinomial(tg.tensor([0.2, 0.8]), 4000, replacement=True, generator=g)
    assert draws.dtype == tg.int64 and abs(draws.float().mean().item() - 0.8) < 0.03
    rows = tg.multinomial(tg.tensor([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]), 1)
    assert rows.tolist() == [[1], [0]]
    assert sorted(tg.multinomial(tg.ones(4), 4).tolist()) == [0, 1, 2, 3]  # no replacement


def _ours(values, requires_grad=False):
    return tg.tensor(values, requires_grad=requires_grad)


def _theirs(values, requires_grad=False):
    return torch.tensor(values, dtype=torch.float64, requires_grad=requires_grad)


def _data_program(lib, tensor):
    """PyTorch's `.data` habits, run with either library; returns what a learner would print."""
    x = tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    alias = x.data
    seen = [alias.requires_grad, alias.is_leaf, alias.grad_fn is None, x._version]
    alias.mul_(2.0)  # unrecorded and unnoticed: backward uses the new numbers
    seen += [x.tolist(), x._version, alias._version]
    y.backward()
    seen.append(x.grad.tolist())
    x.data.add_(x.grad, alpha=-0.25)  # the old tutorials' SGD step
    x.data = tensor([5.0, 6.0])  # new numbers for the same leaf
    seen += [x.tolist(), x.requires_grad, x.is_leaf]
    d = x.detach()
    d.add_(1.0)  # detach() shares the version counter: this is noticed
    seen += [x.tolist(), x._version > 0]
    return seen


def test_data_is_a_detached_alias_as_in_pytorch():
    assert _data_program(tg, _ours) == _data_program(torch, _theirs)


def test_assigning_data_takes_a_tensor():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError) as e:
        x.data = np.ones(2)
    assert str(e.value).splitlines()[0] == "data: t.data = ... takes a Tensor, got ndarray"
    assert "hint: wrap it: t.data = tg.tensor(values)" in str(e.value)


def _saved_program(lib, tensor):
    """The autograd-mechanics tutorial's look at what a node saved."""
    x = tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = x.pow(2)
    seen = [x.equal(y.grad_fn._saved_self), x is y.grad_fn._saved_self]
    seen.append(float(y.grad_fn._saved_exponent))
    z = x.exp()
    seen += [z.equal(z.grad_fn._saved_result), z is z.grad_fn._saved_result]
    w = x * tensor([1.0, 2.0, 3.0])  # the constant needs no grad, so x itself is not kept
    seen += [w.grad_fn._saved_self is None, w.grad_fn._saved_other.tolist()]
    z.sum().backward()
    try:
        z.grad_fn._saved_result  # noqa: B018 - reading it is the test
    except RuntimeError:
        seen.append("freed")
    return seen


def test_nodes_show_what_they_saved_as_in_pytorch():
    assert _saved_program(tg, _ours) == _saved_program(torch, _theirs)
    node = tg.tensor([1.0], requires_grad=True).exp().grad_fn
    with pytest.raises(AttributeError, match=r"'Exp' object has no attribute '_saved_foo'"):
        node._saved_foo  # noqa: B018
    assert "_saved_result" in dir(node)  # a property, so Python's "Did you mean" can name it


def _hooks_program(lib, tensor):
    """saved_tensors_hooks: what is packed and unpacked, and an unpack that changes values."""
    log = []

    def pack(t):
        log.append(("pack", tuple(t.shape), t.requires_grad))
        return t * 1  # a different tensor with the same numbers

    def unpack(t):
        log.append(("unpack", tuple(t.shape)))
        return t * 2  # backward now sees doubled values

    a = tensor([1.0, 2.0], requires_grad=True)
    b = tensor([3.0, 4.0], requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (a * b).tanh().sum()
    y.backward()
    return log, a.grad.tolist(), b.grad.tolist()


def test_saved_tensors_hooks_pack_and_unpack_as_in_pytorch():
    mine, yours = _hooks_program(tg, _ours), _hooks_program(torch, _theirs)
    assert mine[0] == yours[0]
    np.testing.assert_allclose(mine[1], yours[1], rtol=1e-12)
    np.testing.assert_allclose(mine[2], yours[2], rtol=1e-12)


def test_unique_matches_pytorch():
    a = np.array([[3.0, 1.0, 3.0], [0.0, 1.0, 1.0]], dtype=np.float32)
    ours = tg.tensor(a).unique(return_inverse=True, return_counts=True)
    theirs = torch.unique(torch.tensor(a), return_inverse=True, return_counts=True)
    for o, t in zip(ours, theirs):
        assert o.tolist() == t.tolist() and str(o.dtype) == str(t.dtype).replace("torch.", "")
    assert tg.unique(tg.tensor([2, 2, 1])).tolist() == [1, 2]
    assert not tg.tensor([1.0, 1.0], requires_grad=True).unique().requires_grad


def test_transpose_of_a_tuple_is_refused_as_in_pytorch():
    # numpy reads (0, 1) as a permutation (nothing moves), PyTorch refuses it: swapping the
    # two axes would be silently different from one of them (issue 30, found by fuzzing)
    x = tg.zeros(2, 3)
    with pytest.raises(TypeError, match=r"transpose: takes two axes") as err:
        x.transpose((0, 1))
    assert "hint: to reorder all axes use .permute(0, 1)" in str(err.value)
    assert "shape (2, 3)" in str(err.value)
    assert x.transpose(0, 1).shape == (3, 2) and x.transpose(1, 0).shape == (3, 2)
