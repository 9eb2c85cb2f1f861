"""Every public name of docs/design.md exists and does the documented thing (a smoke test)."""

import numpy as np
import pytest

import tinygrad_edu as tg

CORE_NAMES = [
    "Tensor",
    "tensor",
    "zeros",
    "ones",
    "randn",
    "arange",
    "zeros_like",
    "ones_like",
    "randn_like",
    "cat",
    "stack",
    "where",
    "no_grad",
    "enable_grad",
    "is_grad_enabled",
    "grad",
    "gradcheck",
    "Function",
]
TENSOR_ATTRS = [
    "data",
    "shape",
    "ndim",
    "dtype",
    "grad",
    "requires_grad",
    "grad_fn",
    "is_leaf",
    "name",
    "backward",
    "detach",
    "numpy",
    "item",
    "register_hook",
    "retain_grad",
    "sum",
    "mean",
    "max",
    "min",
    "reshape",
    "transpose",
    "T",
    "exp",
    "log",
    "tanh",
    "relu",
    "sigmoid",
    "softmax",
    "log_softmax",
    "abs",
    "sqrt",
    "clip",
]


@pytest.mark.parametrize("name", CORE_NAMES)
def test_core_names(name):
    assert hasattr(tg, name)
    assert name in tg.__all__


@pytest.mark.parametrize("attr", TENSOR_ATTRS)
def test_tensor_attributes(attr):
    t = tg.tensor([[1.0, 2.0]], requires_grad=True)
    getattr(t, attr)


def test_design_example_matches_hand_computed_gradients():
    x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True, name="x")
    w = tg.randn(3, 2, requires_grad=True, name="w")
    y = (x @ w).tanh().sum()
    y.backward()
    h = np.tanh(np.array([1.0, 2.0, 3.0]) @ w.numpy())
    np.testing.assert_allclose(x.grad.numpy(), w.numpy() @ (1 - h**2))
    np.testing.assert_allclose(np.asarray(w.grad), np.outer([1.0, 2.0, 3.0], 1 - h**2))
    assert y.grad_fn.name == "SumBackward"
    assert y.grad_fn.next_functions[0][0].name == "TanhBackward"


def test_submodules():
    assert callable(tg.nn.Linear) and callable(tg.nn.Sequential) and callable(tg.nn.RNNCell)
    for name in ["Module", "ReLU", "Tanh"]:
        assert hasattr(tg.nn, name)
    for name in ["mse_loss", "cross_entropy", "binary_cross_entropy"]:
        assert callable(getattr(tg.nn.functional, name))
    assert callable(tg.optim.SGD) and callable(tg.optim.Adam)
    for name in [
        "trace",
        "placeholder",
        "cond",
        "while_loop",
        "StaticGraph",
        "load",
        "TracerWarning",
    ]:
        assert hasattr(tg.static, name)
    for name in ["detect_anomaly", "break_on", "backward_steps"]:
        assert callable(getattr(tg.debug, name))
    assert callable(tg.draw)


def test_draw_gives_dot_source_and_graphviz_methods():
    x = tg.tensor(2.0, requires_grad=True, name="x")
    d = tg.draw(x * x)
    assert "digraph" in d.source
    for method in ("pipe", "render", "view", "save", "svg"):  # tests/render/test_graphviz_api.py
        assert callable(getattr(d, method))


def test_extension_entry_points_and_widgets():
    assert callable(tg.load_ipython_extension) and callable(tg.unload_ipython_extension)
    a = tg.tensor(3.0, requires_grad=True, name="a")
    assert repr(tg.BackwardStepper(a * a)) == "BackwardStepper(before step 0; steps 0 to 1)"
    assert callable(tg.GraphView) and callable(tg.live_panel) and callable(tg.watch)
