"""Layers: Linear, Sequential, activations, RNNCell (gradchecks, init, shapes, errors)."""

import re

import numpy as np
import pytest
from nn_helpers import module_gradcheck, site_of

import tinygrad_edu as tg

nn = tg.nn


def test_linear_gradcheck_through_input_weight_and_bias():
    layer = nn.Linear(3, 2)
    x = tg.randn(4, 3, requires_grad=True)
    assert module_gradcheck(layer, lambda m, x: m(x).tanh(), x)


def test_linear_without_bias_and_batched_leading_axes():
    layer = nn.Linear(3, 2, bias=False)
    assert layer.bias is None
    assert [n for n, _ in layer.named_parameters()] == ["weight"]
    x = tg.randn(5, 4, 3, requires_grad=True)
    out = layer(x)
    np.testing.assert_allclose(out.numpy(), x.numpy() @ layer.weight.numpy().T)
    assert module_gradcheck(layer, lambda m, x: m(x), x)


def test_linear_init_is_pytorch_uniform_and_seeded():
    tg.manual_seed(0)
    a = nn.Linear(16, 8)
    tg.manual_seed(0)
    b = nn.Linear(16, 8)
    np.testing.assert_array_equal(a.weight.numpy(), b.weight.numpy())
    bound = 1 / np.sqrt(16)
    for p in a.parameters():
        assert p.dtype == np.float64
        assert np.abs(p.numpy()).max() <= bound
    big = nn.Linear(100, 400)
    assert np.abs(big.weight.numpy()).max() > 0.95 * 0.1  # fills the whole range +-1/sqrt(100)


def test_linear_dtype_float32_stays_float32():
    layer = nn.Linear(2, 3, dtype=np.float32)
    y = layer(tg.tensor(np.ones((1, 2), np.float32)))
    assert layer.weight.dtype == np.float32 and y.dtype == np.float32


def test_linear_accepts_arrays_and_lists():
    layer = nn.Linear(2, 1)
    np.testing.assert_allclose(layer([[1.0, 2.0]]).numpy(), layer(tg.tensor([[1.0, 2.0]])).numpy())


def test_linear_wrong_feature_count_names_the_layer():
    layer = nn.Linear(2, 16)
    with pytest.raises(tg.ShapeError) as err:
        layer(tg.zeros(4, 3))  # three features
    assert str(err.value) == (
        "Linear(2, 16): expected input with 2 features in the last axis, got shape (4, 3)\n"
        f"  built at: {site_of('layer(tg.zeros(4, 3))  # three features')}\n"
        "  hint: the layer was made for 2 features but the data has 3; change the layer's size "
        "or reshape the data"
    )


def test_activation_layers_match_their_tensor_methods():
    x = tg.randn(3, 4, requires_grad=True)
    for layer, method in [(nn.ReLU(), "relu"), (nn.Tanh(), "tanh"), (nn.Sigmoid(), "sigmoid")]:
        np.testing.assert_array_equal(layer(x).numpy(), getattr(x, method)().numpy())
        assert repr(layer) == f"{type(layer).__name__}()"
        assert list(layer.parameters()) == []
        assert tg.gradcheck(lambda x, layer=layer: layer(x), x + 0.1)  # away from relu's kink


def test_sequential_chains_and_gradchecks():
    net = nn.Sequential(nn.Linear(2, 5), nn.Tanh(), nn.Linear(5, 3), nn.Sigmoid())
    x = tg.randn(6, 2, requires_grad=True)
    manual = net[3](net[2](net[1](net[0](x))))
    np.testing.assert_array_equal(net(x).numpy(), manual.numpy())
    assert module_gradcheck(net, lambda m, x: m(x), x)


def test_sequential_indexing_slicing_append_and_dict():
    net = nn.Sequential(nn.Linear(2, 4), nn.ReLU())
    assert len(net) == 2 and isinstance(net[-1], nn.ReLU)
    assert [type(m).__name__ for m in net] == ["Linear", "ReLU"]
    assert net.append(nn.Linear(4, 1)) is net
    assert [n for n, _ in net.named_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    tail = net[1:]
    assert isinstance(tail, nn.Sequential)
    assert [n for n, _ in tail.named_parameters()] == ["2.weight", "2.bias"]
    named = nn.Sequential({"hidden": nn.Linear(2, 3), "act": nn.Tanh()})
    assert [n for n, _ in named.named_parameters()] == ["hidden.weight", "hidden.bias"]
    assert named.hidden is named[0]


def test_sequential_errors():
    net = nn.Sequential(nn.Linear(2, 4))
    with pytest.raises(IndexError) as err:
        net[3]  # out of range
    assert str(err.value) == (
        "Sequential: index 3 is out of range for 1 modules\n"
        f"  built at: {site_of('net[3]  # out of range')}\n"
        "  hint: valid indices are 0 to 0 (or -1 for the last)"
    )
    with pytest.raises(TypeError) as err:
        nn.Sequential(nn.Linear(2, 4), np.tanh)  # a function
    assert str(err.value) == (
        "Sequential: expected a Module, got ufunc\n"
        f"  built at: {site_of('np.tanh)  # a function')}\n"
        "  hint: wrap a function in a Module subclass, or call it in your own forward()"
    )


def test_rnn_cell_matches_the_formula():
    cell = nn.RNNCell(3, 4)
    x, h = tg.randn(2, 3), tg.randn(2, 4)
    expected = np.tanh(
        x.numpy() @ cell.weight_ih.numpy().T
        + cell.bias_ih.numpy()
        + h.numpy() @ cell.weight_hh.numpy().T
        + cell.bias_hh.numpy()
    )
    np.testing.assert_allclose(cell(x, h).numpy(), expected, rtol=1e-12)
    assert [n for n, _ in cell.named_parameters()] == [
        "weight_ih",
        "weight_hh",
        "bias_ih",
        "bias_hh",
    ]
    assert np.abs(np.concatenate([p.numpy().ravel() for p in cell.parameters()])).max() <= 0.5
    zero_state = cell(x)
    np.testing.assert_allclose(zero_state.numpy(), cell(x, tg.zeros(2, 4)).numpy())
    relu_cell = nn.RNNCell(3, 4, nonlinearity="relu")
    assert (relu_cell(x, h).numpy() >= 0).all()


def _run(cell, xs):
    """Feed each sequence (length_i, 1) through the cell step by step; stack the last states."""
    finals = []
    for x in xs:
        h = None
        for t in range(len(x)):
            h = cell(x[t], h)
        finals.append(h)
    return tg.stack(finals)


def test_rnn_cell_over_sequences_of_different_lengths_gradchecks():
    xs_np, _ = tg.data.make_sequences(3, min_len=1, max_len=5, seed=1, task="sum")
    assert len({len(x) for x in xs_np}) > 1  # really different lengths
    cell = nn.RNNCell(1, 3)
    xs = [tg.tensor(x, requires_grad=True) for x in xs_np]
    out = _run(cell, xs)
    assert out.shape == (3, 3)
    assert module_gradcheck(cell, lambda m, *xs: _run(m, xs), *xs)


def test_rnn_cell_batched_with_state_and_unbatched():
    cell = nn.RNNCell(2, 3, bias=False)
    assert [n for n, _ in cell.named_parameters()] == ["weight_ih", "weight_hh"]
    x = tg.randn(4, 2, requires_grad=True)
    h = tg.randn(4, 3, requires_grad=True)
    assert module_gradcheck(cell, lambda m, x, h: m(x, m(x, h)), x, h)
    assert cell(tg.randn(2)).shape == (3,)


def test_rnn_cell_errors():
    with pytest.raises(ValueError) as err:
        nn.RNNCell(1, 2, nonlinearity="sigmoid")  # bad nonlinearity
    assert str(err.value) == (
        "RNNCell: nonlinearity must be 'tanh' or 'relu', got 'sigmoid'\n"
        f"  built at: {site_of(')  # bad nonlinearity')}"
    )
    cell = nn.RNNCell(1, 2)
    with pytest.raises(
        tg.ShapeError,
        match=re.escape(
            "RNNCell(1, 2): expected hidden state hx with 2 features in the last axis, got shape "
            "(1, 3)"
        ),
    ):
        cell(tg.zeros(1, 1), tg.zeros(1, 3))


def test_module_gradcheck_helper_catches_a_wrong_parameter_gradient():
    class HalfGrad(tg.Function):  # forward x * w, backward forgets a factor 2 for w
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return x * w

        @staticmethod
        def backward(ctx, grad_output):
            x, w = ctx.saved_tensors
            return grad_output * w, grad_output * x * 0.5

    class Scale(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter([1.5, -0.5])

        def forward(self, x):
            return HalfGrad.apply(x, self.w)

    with pytest.raises(tg.GradcheckError, match=r"gradient of input 1 \('w'\)"):
        module_gradcheck(Scale(), lambda m, x: m(x), tg.randn(2, requires_grad=True))
