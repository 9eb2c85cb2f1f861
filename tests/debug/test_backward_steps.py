import numpy as np
import pytest
from debug_helpers import line_of

import tinygrad_edu as tg
from tinygrad_edu.core import function
from tinygrad_edu.debug import Step, backward_steps


def _reuse(a, b):
    return (a + a) * b


def _diamond(a, b):
    h = a * b
    return (h.tanh() + h.sigmoid() * h).sum()


def _broadcast(a, b):
    return (a * b + b).exp().mean()  # a (3, 1) against b (4,)


def _mlp(x, w1, b1, w2):
    return ((x @ w1 + b1).relu() @ w2).tanh().sum()


GRAPHS = [
    (_reuse, [(), ()]),
    (_diamond, [(3,), (3,)]),
    (_broadcast, [(3, 1), (4,)]),
    (_mlp, [(5, 3), (3, 4), (4,), (4, 2)]),
]


@pytest.mark.parametrize("fn,shapes", GRAPHS, ids=["reuse", "diamond", "broadcast", "mlp"])
def test_final_grads_equal_backward(fn, shapes):
    rng = np.random.default_rng(1)
    arrays = [rng.normal(size=s) for s in shapes]
    ref = [tg.tensor(a, requires_grad=True) for a in arrays]
    fn(*ref).backward()
    mine = [tg.tensor(a, requires_grad=True) for a in arrays]
    steps = list(backward_steps(fn(*mine)))
    for r, m in zip(ref, mine):
        np.testing.assert_allclose(m.grad.numpy(), r.grad.numpy(), rtol=1e-12)
    assert [s.index for s in steps] == list(range(len(steps)))
    # topological order: a node runs only after every node that sends it a gradient
    seen = set()
    for s in steps:
        for nxt, _ in s.sends:
            assert nxt is None or id(nxt) not in seen
        seen.add(id(s.node))
    # what a node receives is the sum of what was sent to it
    sent: dict = {}
    for s in steps:
        if s.index:
            np.testing.assert_allclose(s.grad_output, sum(sent[id(s.node)]))
            assert len(s.parts) == len(sent[id(s.node)])
        for nxt, g in s.sends:
            if nxt is not None:
                sent.setdefault(id(nxt), []).append(g)
    assert function._thread.state.observers == []


def test_a_plus_a_text_shows_accumulation():
    a = tg.tensor(3.0, requires_grad=True, name="a")
    b = tg.tensor(2.0, requires_grad=True, name="b")
    y = (a + a) * b
    text = "\n".join(str(s) for s in backward_steps(y))
    site = f"tests/debug/test_backward_steps.py, line {line_of('y = (a + a) * b')}: y = (a + a) * b"
    assert text == (
        f"step 0: MulBackward  [{site}]\n"
        "  grad in: 1.0000\n"
        "  sends 2.0000 to AddBackward\n"
        "  sends 6.0000 to AccumulateGrad(b)\n"
        "step 1: AccumulateGrad(b)\n"
        "  grad in: 6.0000\n"
        "  b.grad is now 6.0000\n"
        f"step 2: AddBackward  [{site}]\n"
        "  grad in: 2.0000\n"
        "  sends 2.0000 to AccumulateGrad(a)\n"
        "  sends 2.0000 to AccumulateGrad(a)\n"
        "  AccumulateGrad(a) has 2 gradients so far, sum 4.0000\n"
        "step 3: AccumulateGrad(a)\n"
        "  grad in: 4.0000 = 2.0000 + 2.0000 (from 2 paths)\n"
        "  a.grad is now 4.0000"
    )
    assert a.grad.item() == 4.0 and b.grad.item() == 6.0


def test_lazy_partial_run_and_leaf_grads_appear_at_their_step():
    a = tg.tensor([1.0, 2.0], requires_grad=True, name="a")
    gen = backward_steps((a * 3).sum())
    first = next(gen)
    assert isinstance(first, Step) and first.name == "SumBackward" and a.grad is None
    assert function._thread.state.observers == []  # it listens only while a step runs
    gen.close()
    assert function._thread.state.observers == [] and tg.is_grad_enabled()


def test_graph_is_freed_unless_retained_and_errors_match_backward():
    a = tg.tensor(2.0, requires_grad=True)
    y = a.exp() * a
    list(backward_steps(y, retain_graph=True))
    list(backward_steps(y))
    with pytest.raises(tg.GraphFreedError):
        list(backward_steps(y))
    with pytest.raises(tg.BackwardError, match=r"^backward_steps: "):
        backward_steps(tg.tensor([1.0, 2.0], requires_grad=True) * 2)


def test_ops_between_steps_do_not_disturb_the_generator():
    a = tg.tensor([1.0, 2.0], requires_grad=True, name="a")
    gen = backward_steps((a * a).sum())
    next(gen)
    assert tg.is_grad_enabled()  # the learner's mode between steps, not backward's
    extra = (a * 5).sum()  # an op while the generator is suspended
    assert extra.requires_grad
    rest = list(gen)
    assert [s.name for s in rest] == ["MulBackward", "AccumulateGrad(a)"]
    np.testing.assert_allclose(a.grad.numpy(), [2.0, 4.0])
    assert extra.item() == 15.0


def test_a_backward_run_between_steps_is_neither_recorded_nor_disturbing():
    a = tg.tensor([1.0, 2.0], requires_grad=True, name="a")
    b = tg.tensor([3.0, 4.0], requires_grad=True, name="b")
    gen = backward_steps((a * b).sum())
    next(gen)
    other = tg.tensor([1.0, 1.0], requires_grad=True)
    (other * 7).sum().backward()  # e.g. a training cell run while a stepper waits
    np.testing.assert_allclose(other.grad.numpy(), [7.0, 7.0])
    mul = next(gen)
    assert mul.name == "MulBackward" and len(mul.sends) == 2
    np.testing.assert_allclose(mul.sends[0][1], [3.0, 4.0])
    list(gen)
    np.testing.assert_allclose(a.grad.numpy(), [3.0, 4.0])
    np.testing.assert_allclose(b.grad.numpy(), [1.0, 2.0])


def test_iterator_and_anomaly_mode_have_stable_reprs_without_addresses():
    import tinygrad_edu as tg

    a = tg.tensor(3.0, requires_grad=True, name="a")
    steps = tg.debug.backward_steps(a * a)
    assert repr(steps) == "backward_steps(MulBackward: 0 steps taken)"
    next(steps)
    assert repr(steps) == "backward_steps(MulBackward: 1 steps taken)"
    assert repr(tg.debug.detect_anomaly()) == "tg.debug.detect_anomaly(check_nan=True)"
