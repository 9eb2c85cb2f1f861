import numpy as np

import tinygrad_edu as tg
from tinygrad_edu.core import function
from tinygrad_edu.debug import log_grads, log_ops, log_values


def test_log_values_fixed_precision_names_and_cut(capsys):
    x = tg.tensor(np.arange(10.0) / 3, name="x")
    log_values(x, tg.tensor(1e-7), big=tg.tensor([[1e6, -2.0]]))
    assert capsys.readouterr().out == (
        "x (10,): [0.0000, 0.3333, 0.6667, 1.0000, 1.3333, 1.6667, 2.0000, 2.3333, ...]\n"
        "tensor 1 (): 1.0000e-07\n"
        "big (1, 2): (1, 2) [1.0000e+06, -2.0000]\n"
    )


def test_log_grads_prints_in_engine_order_and_removes_hooks(capsys):
    a = tg.tensor([1.0, 2.0], requires_grad=True, name="a")
    b = tg.tensor(3.0, requires_grad=True, name="b")
    h = a * b
    logger = log_grads(a, b, h=h, precision=2)
    (h + a).sum().backward()
    assert capsys.readouterr().out == ("h.grad: [1.00, 1.00]\nb.grad: 3.00\na.grad: [4.00, 4.00]\n")
    logger.remove()
    (a * b).sum().backward()
    assert capsys.readouterr().out == ""
    np.testing.assert_allclose(a.grad.numpy(), [7.0, 7.0])


def test_log_ops_with_sites(capsys):
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    with log_ops(sites=True):
        y = x.tanh()  # noqa: F841
    out = capsys.readouterr().out
    assert out.startswith("tanh (2,) -> (2,)  [tests/debug/test_log.py, line ")
    assert out.endswith(": y = x.tanh()  # noqa: F841]\n")
    assert function._thread.state.observers == []
