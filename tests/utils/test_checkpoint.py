"""tg.utils.checkpoint.checkpoint: same gradients as without it and as PyTorch's
`checkpoint(..., use_reentrant=False)`, fewer saved bytes, clear errors for misuse."""

import tracemalloc

import numpy as np
import pytest

import tinygrad_edu as tg
from tinygrad_edu.utils.checkpoint import checkpoint


def _mlp(width, depth, seed=0):
    np.random.seed(seed)
    layers = []
    for _ in range(depth):
        layers += [tg.nn.Linear(width, width), tg.nn.Tanh()]
    return tg.nn.Sequential(*layers)


def _saved_arrays(y):
    # every array the graph behind y keeps for backward, each once
    seen, stack, arrays = set(), [y.grad_fn], {}
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        stack.extend(n for n, _ in node.next_functions)
        if node.name != "AccumulateGrad":
            arrays.update((id(a), a) for a in node.saved_tensors if a is not None)
    return list(arrays.values())


def _saved_bytes(y):
    return sum(a.nbytes for a in _saved_arrays(y))


def _grads(loss, tensors):
    for t in tensors:
        t.grad = None
    loss.backward()
    return [t.grad.numpy().copy() for t in tensors]


def test_gradients_equal_the_unchecked_run_for_inputs_and_captured_weights():
    net = _mlp(8, 3)
    x = tg.tensor(np.random.randn(5, 8), requires_grad=True)
    tensors = [x, *net.parameters()]
    plain = _grads((net(x) ** 2).sum(), tensors)
    y = checkpoint(net, x)
    assert y.grad_fn.name == "CheckpointBackward"
    np.testing.assert_allclose(y.numpy(), net(x).numpy())
    for got, want in zip(_grads((y**2).sum(), tensors), plain):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_tg_grad_reaches_weights_the_function_only_closes_over():
    net = _mlp(4, 2)
    x = tg.tensor(np.random.randn(3, 4))  # no grad: only the weights need one
    params = list(net.parameters())
    want = tg.grad((net(x) ** 2).sum(), params)
    got = tg.grad((checkpoint(net, x) ** 2).sum(), params)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12)
    assert all(p.grad is None for p in params)  # tg.grad leaves .grad alone


def test_checkpointing_each_block_of_a_chain_matches_and_passes_gradcheck():
    w1 = tg.tensor(np.random.randn(3, 3), requires_grad=True)
    w2 = tg.tensor(np.random.randn(3, 3), requires_grad=True)

    def block(h, w, scale):  # a non-tensor argument is passed through
        return (h @ w).tanh() * scale

    def loss_fn(x):
        h = checkpoint(block, x, w1, 2.0)
        h = checkpoint(block, h, w2, 0.5)
        return (h * h).sum()

    x = tg.tensor(np.random.randn(2, 3), requires_grad=True)
    assert tg.gradcheck(loss_fn, (x,))
    got = _grads(loss_fn(x), [x, w1, w2])
    want = _grads(((((x @ w1).tanh() * 2.0) @ w2).tanh() * 0.5).pow(2).sum(), [x, w1, w2])
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)


def test_dropout_drops_the_same_units_when_backward_runs_the_function_again():
    net = tg.nn.Sequential(tg.nn.Linear(6, 6), tg.nn.Dropout(0.5), tg.nn.Linear(6, 1))
    x = tg.tensor(np.random.randn(4, 6), requires_grad=True)
    np.random.seed(3)
    want = _grads(net(x).sum(), [x, *net.parameters()])
    np.random.seed(3)
    got = _grads(checkpoint(net, x).sum(), [x, *net.parameters()])
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)


@pytest.mark.torch
def test_values_and_gradients_equal_pytorchs_checkpoint():
    torch = pytest.importorskip("torch")
    from torch.utils.checkpoint import checkpoint as torch_checkpoint

    net = _mlp(6, 3)
    x_np = np.random.randn(4, 6)
    x = tg.tensor(x_np, requires_grad=True)
    y = checkpoint(net, x)
    got = _grads((y**3).mean(), [x, *net.parameters()])

    torch_net = torch.nn.Sequential(
        *[
            torch.nn.Linear(6, 6, dtype=torch.float64) if i % 2 == 0 else torch.nn.Tanh()
            for i in range(6)
        ]
    )
    with torch.no_grad():
        for p_t, p in zip(torch_net.parameters(), net.parameters()):
            p_t.copy_(torch.from_numpy(p.numpy()))
    x_t = torch.tensor(x_np, requires_grad=True)
    y_t = torch_checkpoint(torch_net, x_t, use_reentrant=False)
    (y_t**3).mean().backward()
    np.testing.assert_allclose(y.numpy(), y_t.detach().numpy(), rtol=1e-12)
    want = [x_t.grad.numpy()] + [p.grad.numpy() for p in torch_net.parameters()]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10)


def test_the_graph_keeps_only_the_inputs_of_the_checkpointed_function():
    net = _mlp(64, 8)
    x = tg.tensor(np.random.randn(32, 64))
    one_activation = 32 * 64 * 8
    # without: x and every tanh's output (each read again by the next layer's @), plus
    # views w.T of the weights that the model holds anyway
    activations = [a for a in _saved_arrays(net(x)) if a.shape == (32, 64)]
    assert sum(a.nbytes for a in activations) == 9 * one_activation
    # the whole net checkpointed: the node keeps x and nothing else
    assert _saved_bytes(checkpoint(net, x)) == x.numpy().nbytes
    # two halves: the second half's node keeps the first half's output
    first, second = net[:8], net[8:]
    y = checkpoint(second, checkpoint(first, x))
    assert _saved_bytes(y) == 2 * one_activation


def test_memory_held_after_forward_is_measured_smaller_by_tracemalloc():
    net = _mlp(256, 8)
    x = tg.tensor(np.random.randn(256, 256))

    def held_after_forward(run):
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            y = run()
            held = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        del y
        return held

    plain = held_after_forward(lambda: net(x))
    checked = held_after_forward(lambda: checkpoint(net, x))
    activation = 256 * 256 * 8
    assert plain > 7 * activation  # the 8 tanh outputs the graph saved
    assert checked < 2 * activation  # the output, and nothing else of any size


def test_without_grad_it_is_just_the_call():
    net = _mlp(4, 1)
    x = tg.tensor(np.random.randn(2, 4), requires_grad=True)
    with tg.no_grad():
        assert checkpoint(net, x).grad_fn is None
    for p in net.parameters():
        p.requires_grad = False
    assert checkpoint(net, tg.tensor(np.ones((2, 4)))).grad_fn is None


def test_a_second_backward_says_the_saved_inputs_were_freed():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = checkpoint(lambda t: (t * t).sum(), x)
    y.backward()
    with pytest.raises(tg.GraphFreedError, match="CheckpointBackward.backward: the values"):
        y.backward()


def test_misuse_is_refused_with_a_hint():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError, match=r"checkpoint: the first argument must be the function"):
        checkpoint(x, lambda t: t)
    with pytest.raises(TypeError, match=r"returned tuple, not a Tensor(.|\n)*hint: return one"):
        checkpoint(lambda t: (t, t), x)
    with pytest.raises(NotImplementedError, match="use_reentrant=True is not supported"):
        checkpoint(lambda t: t * 2, x, use_reentrant=True)


def test_a_function_that_changes_between_runs_is_caught_in_backward():
    calls = []

    def moody(t):  # Python state: the second run computes something else
        calls.append(1)
        return t * 2 if len(calls) == 1 else t.sum()

    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = checkpoint(moody, x)
    with pytest.raises(RuntimeError, match=r"gave shape \(\), but the forward gave \(2,\)"):
        y.sum().backward()


def test_second_derivatives_pass_through_a_checkpoint():
    x = tg.tensor([1.0, -2.0], requires_grad=True)
    (dy,) = tg.grad(checkpoint(lambda t: t**3, x).sum(), x, create_graph=True)
    np.testing.assert_allclose(dy.numpy(), 3 * x.numpy() ** 2)
    (d2y,) = tg.grad(dy.sum(), x)
    np.testing.assert_allclose(d2y.numpy(), 6 * x.numpy())


@pytest.mark.parametrize("make", ["trace", "function", "compile"])
def test_a_static_graph_refuses_a_checkpoint_rather_than_replay_a_stale_result(make):
    w = tg.randn(3, 3, requires_grad=True)

    def f(x):
        return checkpoint(lambda a: (a @ w).tanh(), x).sum()

    x = tg.randn(2, 3)
    with pytest.raises(tg.TracingError) as e:
        if make == "trace":
            tg.static.trace(f, x)
        else:
            getattr(tg.static, make)(f)(x)
    assert str(e.value).startswith(
        "trace: Checkpoint runs Python code (the function it wraps) that a static graph "
        "cannot replay"
    )
    assert "hint: trace the function without checkpoint(...), or run it eagerly" in str(e.value)
