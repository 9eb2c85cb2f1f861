"""One backward rule per op: a learner's `tg.Function` gets the same gradient, or the
same error text, from the eager engine and from a static graph's gradient program."""

import numpy as np
import pytest
from static_helpers import line_of

import tinygrad_edu as tg

SHAPE_HINT = "each gradient must have its input's shape"


def op_returning(make_grad):
    """A learner's op: forward doubles x; backward returns `make_grad(g)`."""

    class Double(tg.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return make_grad(g)

    return Double


def model(op, x):
    return op.apply(x).sum()


def eager_grad(op, x):
    t = tg.tensor(x, requires_grad=True)
    model(op, t).backward()
    return t.grad.numpy()


def static_grad(op, x):
    g = tg.static.trace(lambda t: model(op, t), x).grad()
    return g(x).numpy()


def error_text(run, op, x):
    with pytest.raises((tg.ShapeError, tg.BackwardError)) as info:
        run(op, x)
    return type(info.value), str(info.value)


SITE = line_of(model, "op.apply(x)")

# (backward's result, input shape, the error it gives; None: it works)
REJECTED = [
    ("(1,) for (3,)", lambda g: np.ones(1), (3,), "(1,)"),
    ("a number for (3,)", lambda g: 2.0, (3,), "()"),
    ("(4,) for (3,)", lambda g: np.ones(4), (3,), "(4,)"),
    ("(2, 2) for (3,)", lambda g: np.ones((2, 2)), (3,), "(2, 2)"),
    ("(3,) for (3, 1)", lambda g: np.ones(3), (3, 1), "(3,)"),
]


@pytest.mark.parametrize("case, make_grad, shape, got", REJECTED, ids=[c[0] for c in REJECTED])
def test_a_wrong_gradient_shape_is_the_same_shape_error_in_both_worlds(case, make_grad, shape, got):
    op, x = op_returning(make_grad), np.ones(shape)
    want = (
        tg.ShapeError,
        f"DoubleBackward: backward returned a gradient of shape {got} for an "
        f"input of shape {shape!r}\n  built at: {SITE}\n  hint: {SHAPE_HINT}",
    )
    assert error_text(eager_grad, op, x) == want
    assert error_text(static_grad, op, x) == want


def test_too_many_gradients_is_the_same_backward_error_in_both_worlds():
    op, x = op_returning(lambda g: (g, g)), np.ones(3)
    want = (
        tg.BackwardError,
        "DoubleBackward: backward returned 2 gradient(s) for 1 input(s)\n"
        f"  built at: {SITE}\n  hint: return one gradient per input of forward (None where "
        "none is needed)",
    )
    assert error_text(eager_grad, op, x) == want
    assert error_text(static_grad, op, x) == want


ACCEPTED = [
    ("its own shape", lambda g: 3 * g, (3,)),
    ("a Tensor", lambda g: tg.tensor(3 * g), (3,)),
    ("broadcast (2, 3) summed to (3,)", lambda g: np.stack([g, 2 * g]), (3,)),
    ("broadcast (1, 3) summed to (3,)", lambda g: g[None], (3,)),
    ("broadcast (3, 4) summed to (3, 1)", lambda g: np.repeat(g, 4, axis=1), (3, 1)),
    ("a number for ()", lambda g: 5.0, ()),
    ("float32 for a float64 input", lambda g: (3 * g).astype(np.float32), (3,)),
]


@pytest.mark.parametrize("case, make_grad, shape", ACCEPTED, ids=[c[0] for c in ACCEPTED])
def test_an_accepted_gradient_is_the_same_in_both_worlds(case, make_grad, shape):
    op, x = op_returning(make_grad), np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape)
    eager, static = eager_grad(op, x), static_grad(op, x)
    assert eager.shape == static.shape == shape
    assert eager.dtype == static.dtype == np.float64  # converted to the input's, as PyTorch
    np.testing.assert_array_equal(eager, static)


def test_the_accept_and_reject_rules_are_pytorchs():
    torch = pytest.importorskip("torch")

    def torch_accepts(make_grad, shape):
        class Double(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                out = make_grad(g.numpy())
                return torch.as_tensor(np.asarray(getattr(out, "data", out), dtype=np.float64))

        x = torch.ones(shape, dtype=torch.float64, requires_grad=True)
        try:
            Double.apply(x).sum().backward()
        except RuntimeError as e:
            assert "invalid gradient" in str(e)
            return None
        return x.grad.numpy()

    for _, make_grad, shape, _ in REJECTED:
        assert torch_accepts(make_grad, shape) is None
    for _, make_grad, shape in ACCEPTED:
        x = np.ones(shape)
        np.testing.assert_array_equal(
            torch_accepts(make_grad, shape), eager_grad(op_returning(make_grad), x)
        )
