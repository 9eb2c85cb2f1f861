"""The backward engine's contract: accumulation, graph shapes, depth, retained and freed
graphs, higher order, hooks, grad mode, detach, in-place ops and dtype rules."""

from __future__ import annotations

import copy
import gc
import importlib
import subprocess
import sys
import warnings

import numpy as np
import pytest

import tinygrad_edu as tg


def leaf(*values, dtype=None):
    return tg.tensor(
        list(values) if len(values) > 1 else values[0], requires_grad=True, dtype=dtype
    )


# --- accumulation: `+=` is the chain rule's sum over paths ----------------------------------


def test_a_plus_a_gives_two():
    a = leaf(3.0)
    (a + a).backward()
    assert a.grad.item() == 2.0


def test_diamond_sums_both_paths():
    a = leaf(1.5)
    b, c = a * 2.0, a * 3.0  # d = (2a)(3a) = 6a^2, dd/da = 12a
    (b * c).backward()
    assert a.grad.item() == pytest.approx(18.0)


def test_reused_intermediate_node():
    a = leaf(0.3)
    h = a.tanh()
    (h * h + h).backward()  # d/da (h^2 + h) = (2h + 1) (1 - h^2)
    t = np.tanh(0.3)
    assert a.grad.item() == pytest.approx((2 * t + 1) * (1 - t * t))


def test_repeated_backward_on_leaves_accumulates():
    a = leaf(2.0)
    for _ in range(3):
        (a * a).backward()
    assert a.grad.item() == pytest.approx(12.0)
    a.grad = None
    (a * a).backward()
    assert a.grad.item() == pytest.approx(4.0)


def test_grad_is_a_copy_not_an_alias_of_the_upstream_gradient():
    a = leaf(1.0, 2.0)
    g = tg.tensor([5.0, 6.0])
    (a + 0.0).backward(g)
    a.grad.numpy()[0] = 100.0
    assert g.numpy()[0] == 5.0


def test_next_functions_and_accumulate_grad():
    x = tg.tensor([1.0, 2.0], requires_grad=True, name="x")
    y = (x * 2.0).sum()
    assert y.grad_fn.name == "SumBackward"
    ((mul, i),) = y.grad_fn.next_functions
    assert i == 0 and mul.name == "MulBackward"
    (acc, _), (const, _) = mul.next_functions
    assert acc.name == "AccumulateGrad" and acc.variable is x and const is None
    assert x.is_leaf and not y.is_leaf
    assert (x * 3.0).grad_fn.next_functions[0][0] is acc  # one AccumulateGrad per leaf


def test_deep_chain_backward_without_recursion_and_clean_teardown():
    limit = sys.getrecursionlimit()
    x0 = leaf(0.5, -0.25)
    x = x0
    for i in range(100_000):
        x = x * 0.999 if i % 2 == 0 else x + 0.001
    x.sum().backward()
    expected = 0.999**50_000
    np.testing.assert_allclose(x0.grad.numpy(), [expected, expected], rtol=1e-9)
    unraisable = []
    old_hook, sys.unraisablehook = sys.unraisablehook, unraisable.append
    try:
        del x  # dropping 100,000 nodes must not recurse either (errors in dealloc are unraisable)
        gc.collect()
    finally:
        sys.unraisablehook = old_hook
    assert unraisable == []
    assert sys.getrecursionlimit() == limit


def _tracked_objects_per_op(warm_up_without_graph: bool) -> float:
    """New objects the cyclic collector tracks per op of a 1,500-op chain, in a fresh
    interpreter (so no other test's objects, threads or op classes' history count)."""
    program = f"""
import gc
import tinygrad_edu as tg
x = tg.tensor([0.5, -0.25], requires_grad=True)
if {warm_up_without_graph}:
    with tg.no_grad():
        for _ in range(40):
            (x * 0.9 + 0.1).tanh()
gc.collect()  # twice, as below: a collection untracks tuples and dicts it walks
gc.collect()
before = len(gc.get_objects())
y = x
for _ in range(500):
    y = (y * 0.9 + 0.1).tanh()
gc.collect()  # also stops tracking the tuples that hold nothing it walks (saved entries)
gc.collect()  # ... and those that held only such tuples
print((len(gc.get_objects()) - before) / 1500)
"""
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return float(run.stdout)


def test_a_long_graph_gives_the_cyclic_collector_one_object_per_op():
    # Python's cyclic collector walks every object that can hold others, and a long graph
    # is walked again at each full collection: a tuple of edges, a weak reference to the
    # output or a saved entry per op made W3 (benchmarks/README.md) half as slow again
    assert abs(_tracked_objects_per_op(warm_up_without_graph=False) - 1.0) < 0.01  # nodes


def test_an_op_first_run_without_a_graph_still_makes_nodes_of_one_object():
    # CPython shares one key table among a class's instances and stops growing it after
    # about 30 instances: an op run 40 times under no_grad (ctx without node fields) must
    # not leave each of its later nodes with a dict of its own
    assert abs(_tracked_objects_per_op(warm_up_without_graph=True) - 1.0) < 0.01


def test_a_node_finds_its_output_while_the_output_lives():
    x = leaf(1.0, 2.0)
    h = x * 2.0
    mul = h.grad_fn
    y = h.tanh()
    assert mul.output() is h and y.grad_fn.output() is y
    del h  # the graph does not keep it alive
    assert mul.output() is None
    later = x + 1.0  # made after the last look
    assert later.grad_fn.output() is later
    m = x * 1.0
    m.add_(1.0)  # the in-place op's node has m as its output now
    assert m.grad_fn.name == "AddBackward" and m.grad_fn.output() is m
    # the Mul's output is m's old values, a snapshot that no one holds (views._retire)
    assert m.grad_fn.next_functions[0][0].output() is None
    c, d = copy.copy(y), copy.deepcopy(y)  # tensors of their own, numbered anew
    assert len({y.creation_number, c.creation_number, d.creation_number}) == 3
    with tg.no_grad():
        d.mul_(10.0)
    assert y.grad_fn.output() is y and c.grad_fn.output() is y
    tensor_module = importlib.import_module("tinygrad_edu.core.tensor")
    counter = tensor_module.tensor_numbers  # a search takes no number (threads may)
    assert mul.output() is None and tensor_module.tensor_numbers is counter
    before = tg.core.function.retain_outputs(True)  # the live view's setting
    try:
        kept = (x * 3.0).grad_fn
    finally:
        tg.core.function.retain_outputs(before)
    assert kept.output() is not None and kept.output().grad_fn is kept


# --- retain_graph and freed graphs ---------------------------------------------------------


def test_retain_graph_allows_a_second_backward():
    a = leaf(3.0)
    y = a * a
    y.backward(retain_graph=True)
    y.backward()
    assert a.grad.item() == 12.0


def test_backward_twice_through_freed_graph_raises():
    a = leaf(3.0)
    y = a * a
    y.backward()
    with pytest.raises(tg.GraphFreedError):
        y.backward()


def test_graph_without_saved_values_can_run_twice():
    a = leaf(3.0)
    y = a + 1.0  # Add saves nothing, as in PyTorch
    y.backward()
    y.backward()
    assert a.grad.item() == 2.0


# --- higher order ------------------------------------------------------------------------------


def test_create_graph_third_derivative():
    x = leaf(2.0)
    (d1,) = tg.grad(x**3, x, create_graph=True)
    (d2,) = tg.grad(d1, x, create_graph=True)
    (d3,) = tg.grad(d2, x)
    assert (d1.item(), d2.item(), d3.item()) == (12.0, 12.0, 6.0)
    assert x.grad is None  # tg.grad never touches .grad


def test_backward_create_graph_makes_grad_differentiable():
    x = leaf(0.5)
    (x.sigmoid() * x).backward(create_graph=True)
    g = x.grad
    assert g.requires_grad and g.grad_fn is not None
    x2 = leaf(0.5)
    (d,) = tg.grad((x2.sigmoid() * x2), x2, create_graph=True)
    (dd,) = tg.grad(d, x2)
    s = 1 / (1 + np.exp(-0.5))
    assert g.item() == pytest.approx(s + 0.5 * s * (1 - s))
    assert dd.item() == pytest.approx(2 * s * (1 - s) + 0.5 * s * (1 - s) * (1 - 2 * s))


def test_grad_multiple_inputs_outputs_and_unused():
    a, b, c = leaf(2.0), leaf(3.0), leaf(4.0)
    ga, gb = tg.grad([a * b, a + b], [a, b])
    assert (ga.item(), gb.item()) == (4.0, 3.0)
    ga, gc_ = tg.grad(a * b, [a, c], allow_unused=True)
    assert ga.item() == 3.0 and gc_ is None
    with pytest.raises(tg.BackwardError):
        tg.grad(a * b, [a, c])


# --- hooks and retain_grad ---------------------------------------------------------------


def test_register_hook_on_leaf_and_remove():
    x = leaf(1.0, 2.0)
    seen = []
    handle = x.register_hook(lambda g: seen.append(g.numpy().copy()) or g * 10)
    (x * 3.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [30.0, 30.0])
    np.testing.assert_allclose(seen[0], [3.0, 3.0])
    handle.remove()
    x.grad = None
    (x * 3.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])
    assert len(seen) == 1


def test_register_hook_on_non_leaf_changes_what_flows_back():
    x = leaf(1.0, 2.0)
    h = x * 2.0
    handle = h.register_hook(lambda g: g * 0.5)
    h.sum().backward(retain_graph=True)
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 1.0])
    handle.remove()
    h.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


def test_retain_grad_fills_non_leaf_grad():
    x = leaf(1.0, 2.0)
    h = x * x
    h.retain_grad()
    (h * 3.0).sum().backward()
    np.testing.assert_allclose(h.grad.numpy(), [3.0, 3.0])
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 12.0])


def test_non_leaf_grad_warns_like_pytorch():
    x = leaf(1.0)
    h = x * 2.0
    h.backward()
    with pytest.warns(
        UserWarning,
        match=r"tensor 'h' is not a leaf: it was computed \(by Mul\), "
        r"so backward\(\) does not fill its \.grad(.|\n)*hint: call h\.retain_grad",
    ):
        assert h.grad is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.grad.item() == 2.0  # leaves never warn


def test_non_leaf_warning_names_the_variable_and_shows_no_grad():
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    w = w - 0.1 * w.grad  # the classic slip: w is now computed, not a leaf
    (w * w).sum().backward()
    with pytest.warns(UserWarning) as caught:
        assert w.grad is None
    text = str(caught[0].message)
    assert text.splitlines()[0] == (
        ".grad: tensor 'w' is not a leaf: it was computed (by Sub), so backward() does not "
        "fill its .grad (it stays None)"
    )
    assert text.splitlines()[-4:] == [
        "  hint: to update a weight and keep it a leaf, do it without recording:",
        "        with tg.no_grad():",
        "            w -= lr * w.grad",
        "      (or call w.retain_grad() before backward() to keep an intermediate's grad)",
    ]
    assert text.splitlines()[1].startswith("  built at: ") and "w = w - 0.1 * w.grad" in text


# --- grad mode --------------------------------------------------------------------------------


def test_no_grad_and_enable_grad_as_context_managers():
    x = leaf(1.0)
    with tg.no_grad():
        assert not tg.is_grad_enabled()
        y = x * 2.0
        with tg.enable_grad():
            z = x * 2.0
        assert not tg.is_grad_enabled()
    assert tg.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None
    assert z.requires_grad and z.grad_fn is not None


def test_no_grad_as_decorator_and_restores_after_exception():
    @tg.no_grad()
    def step(x):
        assert not tg.is_grad_enabled()
        return x * 2.0

    @tg.no_grad()
    def boom():
        raise KeyError("x")

    assert not step(leaf(1.0)).requires_grad
    with pytest.raises(KeyError):
        boom()
    assert tg.is_grad_enabled()

    @tg.enable_grad()
    def inner(x):
        return x * 2.0

    with tg.no_grad():
        assert inner(leaf(1.0)).requires_grad


def test_detach_shares_data_and_leaves_the_graph():
    x = leaf(1.0, 2.0)
    d = (x * 2.0).detach()
    assert d.grad_fn is None and not d.requires_grad and d.is_leaf
    y = x * 1.0
    dy = y.detach()
    dy.numpy()[0] = 7.0  # same storage
    assert y.numpy()[0] == 7.0


# --- in-place ops and the version counter -----------------------------------------------------


@pytest.mark.parametrize(
    "op, expected, dydx",
    [
        ("y += 2.0", [4.0, 6.0], [2.0, 2.0]),
        ("y -= 2.0", [0.0, 2.0], [2.0, 2.0]),
        ("y *= 3.0", [6.0, 12.0], [6.0, 6.0]),
        ("y /= 4.0", [0.5, 1.0], [0.5, 0.5]),
        ("y.add_(x)", [3.0, 6.0], [3.0, 3.0]),
        ("y.mul_(x)", [2.0, 8.0], [4.0, 8.0]),
        ("y.sub_(x)", [1.0, 2.0], [1.0, 1.0]),
        ("y.div_(2.0)", [1.0, 2.0], [1.0, 1.0]),
        ("y.zero_()", [0.0, 0.0], [0.0, 0.0]),
        ("y.fill_(5.0)", [5.0, 5.0], [0.0, 0.0]),
    ],
)
def test_inplace_on_non_leaf_values_and_gradients(op, expected, dydx):
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2.0
    before = y
    exec(op)  # noqa: S102 - the statement under test
    assert y is before  # same tensor object, changed in place
    np.testing.assert_allclose(y.numpy(), expected)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), dydx)


def test_modifying_a_saved_tensor_raises_at_backward():
    x = leaf(1.0, 2.0)
    y = x * 2.0
    z = y * y  # saves y
    y += 1.0
    with pytest.raises(tg.InplaceError, match=r"version 0 when saved, 1 now"):
        z.sum().backward()


def test_modifying_an_unsaved_tensor_is_fine():
    x = leaf(1.0, 2.0)
    y = x * 2.0
    z = y + 1.0  # Add saves nothing
    y *= 5.0
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


def test_detached_alias_shares_the_version_counter():
    x = leaf(1.0, 2.0)
    y = x.exp()  # saves its output
    alias = y.detach()
    alias += 1.0
    with pytest.raises(tg.InplaceError):
        y.sum().backward()


@pytest.mark.parametrize(
    "op",
    [
        "x += 1.0",
        "x -= 1.0",
        "x *= 2.0",
        "x /= 2.0",
        "x.add_(1.0)",
        "x.mul_(2.0)",
        "x.zero_()",
        "x.fill_(1.0)",
    ],
)
def test_inplace_on_leaf_requiring_grad_raises_at_once(op):
    x = tg.tensor([1.0, 2.0], requires_grad=True, name="x")
    with pytest.raises(tg.InplaceError):
        exec(op)  # noqa: S102
    np.testing.assert_array_equal(x.numpy(), [1.0, 2.0])  # unchanged


def test_inplace_on_leaf_in_no_grad_is_allowed_and_bumps_the_version():
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    y = w * w  # saves w
    with tg.no_grad():
        w -= 0.5
        w.mul_(2.0)
    np.testing.assert_allclose(w.numpy(), [1.0, 3.0])
    assert w.requires_grad and w.grad_fn is None
    with pytest.raises(tg.InplaceError):
        y.sum().backward()  # the SGD-step-before-backward bug, caught


# --- dtype rules ------------------------------------------------------------------------------


def test_python_floats_become_float64_and_ints_int64_as_in_pytorch():
    assert tg.tensor([1, 2, 3]).dtype == np.int64
    assert tg.tensor([1, 2.0]).dtype == np.float64  # one float makes it floating
    assert tg.tensor(2.5).dtype == np.float64
    assert tg.tensor([[1.0, 2.0]]).dtype == np.float64
    assert tg.tensor([True, False]).dtype == np.bool_
    assert tg.arange(5).dtype == np.int64 and tg.arange(5.0).dtype == np.float64
    assert tg.arange(0, 1, 0.5).dtype == np.float64 and tg.full((2,), 3).dtype == np.int64
    assert (tg.tensor([1, 2]) / 2).dtype == np.float64  # true division gives floats
    with pytest.raises(tg.DataError, match="only floating-point tensors can require grad"):
        tg.tensor([1, 2], requires_grad=True)  # PyTorch refuses it too
    assert tg.Tensor([1, 2]).dtype == np.float64  # the class makes floats, as torch.Tensor
    assert tg.Tensor(np.arange(2)).dtype == np.int64  # arrays keep their dtype
    with pytest.raises(tg.DataError) as e:
        tg.Tensor(2, 3)
    assert str(e.value).startswith(
        "Tensor: Tensor(2, 3) reads as sizes, but here the second argument is requires_grad "
        "(PyTorch's Tensor(2, 3) makes an uninitialised tensor of that shape)"
    )
    assert "hint: use tg.zeros(2, 3) or tg.empty(...)" in str(e.value)


def test_numpy_arrays_keep_their_floating_dtype():
    assert tg.tensor(np.ones(2, dtype=np.float32)).dtype == np.float32
    assert tg.tensor(np.ones(2)).dtype == np.float64


@pytest.mark.parametrize(
    "expr",
    [
        "x + 2.0",
        "2.0 + x",
        "x * 3",
        "3 * x",
        "x - 1",
        "1 - x",
        "x / 2",
        "2 / x",
        "x ** 2",
        "2.0 ** x",
        "-x",
        "x.clip(0, 1)",
        "tg.where(x > 0, x, 0.0)",
        "x + np.float64(2)",
    ],
)
def test_python_scalars_never_promote_float32(expr):
    x = tg.tensor(np.array([0.5, 1.5], dtype=np.float32), requires_grad=True)
    out = eval(expr)  # noqa: S307
    assert out.dtype == np.float32
    out.sum().backward()
    assert x.grad.dtype == np.float32


def test_float32_and_float64_tensors_promote_like_numpy():
    a = tg.tensor(np.ones(2, dtype=np.float32), requires_grad=True)
    b = tg.tensor(np.ones(2), requires_grad=True)
    out = a * b
    assert out.dtype == np.float64
    out.sum().backward()
    assert a.grad.dtype == np.float32 and b.grad.dtype == np.float64


def test_inplace_on_a_plain_tensor_with_a_grad_operand():
    x = leaf(1.0, 2.0)
    y = tg.tensor([3.0, 4.0])  # needs no grad itself
    y *= x  # now y = old_y * x, and d(y)/dx = old_y, which the copy kept
    assert y.requires_grad and y.grad_fn.name == "MulBackward"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 4.0])


def test_summing_a_broadcast_gradient_does_not_look_up_the_source_line(monkeypatch):
    # a bias's gradient is summed back to its shape at every step of a training loop; the
    # line that built the node is only for an error's text, and finding it costs more
    # (~10 us) than the sum: it must not be looked up when nothing goes wrong
    from tinygrad_edu.core import source

    looked_up = []
    resolve = source.resolve
    monkeypatch.setattr(source, "resolve", lambda raw: looked_up.append(raw) or resolve(raw))
    x = tg.ones((4, 3), requires_grad=True)
    b = tg.zeros(3, requires_grad=True)
    (x + b).sum().backward()
    np.testing.assert_array_equal(b.grad.numpy(), [4.0, 4.0, 4.0])
    assert looked_up == []
