import gc
import os
import sys
import textwrap

import numpy as np
import pytest
from debug_helpers import line_of

import tinygrad_edu as tg
from tinygrad_edu.core import function
from tinygrad_edu.debug import Breakpoint, break_on, is_interactive, last_hit

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def test_not_interactive_under_pytest_so_default_records():
    assert not is_interactive()
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    with break_on(op="log") as bp:
        y = x.log()
        z = y.exp()  # noqa: F841
    assert [str(h) for h in bp.hits] == [
        f"hit 0: log (forward) y  [tests/debug/test_breakpoints.py, line {line_of('y = x.log()')}: "
        "y = x.log()]: "
        "shape (2,), 0 nan, 0 inf, finite min 0, max 0.6931"
    ]
    assert bp.hits[0].node is y.grad_fn and bp.hits[0].tensor is y
    assert y.grad_fn.mark == "breakpoint" and last_hit() is bp.hits[0]
    assert function._thread.state.observers == []


def test_raise_carries_node_and_tensor_with_house_format():
    x = tg.tensor([1.0, -1.0], requires_grad=True)
    with pytest.raises(Breakpoint) as info, break_on(nan=True, action="raise"):
        h = x * 2
        y = h.log()  # noqa: F841
    assert str(info.value) == (
        "break_on: log (forward) matched y: shape (2,), 1 nan, 0 inf, finite min 0.6931, "
        "max 0.6931\n"
        f"  built at: tests/debug/test_breakpoints.py, line {line_of('y = h.log()')}: "
        "y = h.log()  # noqa: F841\n"
        "  hint: this is the breakpoint you set with action='raise'; the exception's .node and "
        ".tensor hold the values (action='record' collects hits instead)"
    )
    assert info.value.node.name == "LogBackward"
    assert np.isnan(info.value.tensor.numpy()[1])


def test_name_when_and_backward_phase():
    x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True, name="x")
    with (
        break_on(name="h", action="record") as by_name,
        break_on(when=lambda t: t.numpy().max() > 10, action="record") as by_value,
    ):
        h = x * 2
        big = h * 10  # noqa: F841
    assert [h_.op for h_ in by_name.hits] == ["mul"] and by_name.hits[0].name == "h"
    assert [h_.name for h_ in by_value.hits] == ["big"]

    w = tg.tensor([1.0, 1.0, 1.0], requires_grad=True)
    loss = (x * w).tanh().sum()
    seen = []
    with break_on(op="TanhBackward", phase="backward", action=seen.append) as bp:
        loss.backward()
    assert len(seen) == 1 and seen[0] is bp.hits[0]
    assert seen[0].op == "TanhBackward" and seen[0].phase == "backward"
    np.testing.assert_allclose(seen[0].tensor.numpy(), np.ones(3))  # the arriving gradient


def test_backward_nan_breakpoint_raises():
    x = tg.tensor([0.0, 1.0], requires_grad=True)
    loss = x.sqrt().sum()
    with (
        pytest.raises(Breakpoint, match=r"^break_on: SqrtBackward \(backward\) matched"),
        break_on(nan=True, phase="backward", action="raise"),
    ):
        loss.backward()


def test_bad_arguments():
    with pytest.raises(
        ValueError,
        match=r"^break_on: phase must be 'forward' or 'backward', "
        r"got 'sideways'",
    ):
        break_on(phase="sideways")
    with pytest.raises(ValueError, match=r"^break_on: action must be one of"):
        break_on(action="explode")


SCRIPT = textwrap.dedent("""\
    import tinygrad_edu as tg

    def main():
        x = tg.tensor([1.0, -1.0], requires_grad=True)
        with tg.debug.break_on(op="log"):
            y = x.log()
        print("after", y.shape)
        print("done")

    main()
""")


@pytest.mark.parametrize("commands", [["c"], ["n", "c"]])
def test_interactive_lands_in_pdb_at_the_learner_line(tmp_path, commands):
    pexpect = pytest.importorskip("pexpect")
    (tmp_path / "learner.py").write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_CURRENT_TEST")}
    env["PYTHONWARNINGS"] = "ignore"
    child = pexpect.spawn(
        sys.executable, ["learner.py"], cwd=str(tmp_path), env=env, encoding="utf-8", timeout=30
    )
    try:
        child.expect(r"\(Pdb\) ")
        assert "learner.py(6)main()\n-> y = x.log()" in child.before.replace("\r", "")
        assert "built at: learner.py, line 6: y = x.log()" in child.before.replace("\r", "")
        child.sendline("p x.shape, tg.debug.last_hit().tensor")
        child.expect(r"\(Pdb\) ")
        assert "((2,), tensor([0., nan], grad_fn=<LogBackward>))" in child.before
        if commands[0] == "n":  # stepping works, and never stops inside the library
            child.sendline("n")  # 3.11 stops on the `with` line (its __exit__) first
            child.expect(r"\(Pdb\) ")
            assert "learner.py(5)main()" in child.before and "tinygrad_edu" not in child.before
            child.sendline("n")
            child.expect(r"\(Pdb\) ")
            assert 'learner.py(7)main()\r\n-> print("after", y.shape)' in child.before
        child.sendline("c")
        child.expect(pexpect.EOF)
        assert "after (2,)\r\ndone" in child.before
    finally:
        child.close(force=True)
    assert child.exitstatus == 0


def test_a_backward_breakpoint_looks_for_live_tensors_once_not_once_per_node(monkeypatch):
    # a node finds its output among the live objects (core/function.py, `_Alive`); the
    # breakpoint makes a tensor at every node, which must not set off a new search each
    searches = []
    get_objects = gc.get_objects
    monkeypatch.setattr(gc, "get_objects", lambda *a: searches.append(1) or get_objects(*a))
    x = tg.tensor([0.5, -0.25], requires_grad=True)
    y = x
    for i in range(300):
        y = y * 0.9 if i % 2 else y.tanh()
    with break_on(phase="backward", name="no such name", action="record"):
        y.sum().backward()
    assert 1 <= len(searches) <= 2
