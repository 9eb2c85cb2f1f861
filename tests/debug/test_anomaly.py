import numpy as np
import pytest
from debug_helpers import line_of

import tinygrad_edu as tg
from tinygrad_edu.core import function
from tinygrad_edu.debug import AnomalyError, detect_anomaly, is_anomaly_enabled
from tinygrad_edu.debug.anomaly import _OBSERVER

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def test_forward_nan_names_op_stats_line_and_hint():
    x = tg.tensor([1.0, -1.0, 4.0], requires_grad=True)
    with pytest.raises(AnomalyError) as info, detect_anomaly():
        y = x.log()  # noqa: F841
    expected = (
        "log: produced 1 nan in its output under detect_anomaly()\n"
        "  output: shape (3,), 1 nan, 0 inf, finite min 0, max 1.386\n"
        "  input 0: shape (3,), 0 nan, 0 inf, finite min -1, max 4\n"
        f"  built at: tests/debug/test_anomaly.py, line {line_of('y = x.log()  # noqa')}: "
        "y = x.log()  # noqa: F841\n"
        "  hint: log of a negative number is nan and log(0) is -inf: clip the input first "
        "(x.clip(1e-12)) or add a small eps"
    )
    assert str(info.value) == expected
    node = info.value.node
    assert node.name == "LogBackward" and node.mark == "anomaly"
    assert node.mark_text == "forward produced 1 nan"
    assert info.value.phase == "forward"
    assert np.isnan(info.value.tensor.numpy()[1])


def test_backward_inf_of_sqrt_at_zero():
    x = tg.tensor([0.0, 4.0], requires_grad=True)
    y = x.sqrt()
    loss = (y * 3).sum()
    with pytest.raises(AnomalyError) as info, detect_anomaly():
        loss.backward()
    expected = (
        "SqrtBackward: returned 1 inf in the gradient for input 0 under detect_anomaly()\n"
        "  gradient for input 0: shape (2,), 0 nan, 1 inf, finite min 0.75, max 0.75\n"
        "  incoming gradient: shape (2,), 0 nan, 0 inf, finite min 3, max 3\n"
        f"  built at: tests/debug/test_anomaly.py, line {line_of('y = x.sqrt()')}: y = x.sqrt()\n"
        "  hint: sqrt has an infinite slope at 0: add a small eps inside the root, "
        "(x + 1e-12).sqrt()"
    )
    assert str(info.value) == expected
    assert info.value.phase == "backward" and info.value.node.mark == "anomaly"


def test_input_already_nan_gets_input_hint_and_no_grad_ops_are_checked():
    x = tg.tensor([np.nan, 1.0])
    with (
        pytest.raises(
            AnomalyError,
            match=r"(?s)^mul: .*input 0: shape \(2,\), 1 nan.*"
            r"hint: an input already held nan/inf before this op",
        ),
        detect_anomaly(),
    ):
        x * 2


def test_finite_graph_passes_and_matches_plain_backward():
    x = tg.tensor([0.5, 2.0], requires_grad=True)
    with detect_anomaly():
        (x.log() * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.log([0.5, 2.0]) + 1)


def test_off_by_default_registers_nothing_and_restores_previous_mode():
    assert not is_anomaly_enabled() and _OBSERVER not in function._thread.state.observers
    with detect_anomaly():
        assert is_anomaly_enabled() and function._thread.state.observers.count(_OBSERVER) == 1
        with detect_anomaly(check_nan=False):
            assert not is_anomaly_enabled()
            tg.tensor([-1.0]).log()  # no error while switched off
        assert is_anomaly_enabled()
    assert not is_anomaly_enabled() and _OBSERVER not in function._thread.state.observers


def test_restored_after_error_and_works_as_decorator():
    @detect_anomaly()
    def f(x):
        return (x / 0.0).sum()

    with pytest.raises(AnomalyError, match=r"^div: produced 1 inf"):
        f(tg.tensor([1.0]))
    assert _OBSERVER not in function._thread.state.observers
    with pytest.raises(AnomalyError, match=r"^div: produced 1 inf"):
        f(tg.tensor([1.0]))  # re-entrant: the same decorator works twice
