"""tg.static.function never goes stale: parameters and captured tensors are read at call
time, and a change to what the trace read (structure, attributes, globals) retraces,
saying why. Each case is compared with running the model eagerly."""

import numpy as np
import pytest

import tinygrad_edu as tg


def make_net(seed=0):
    np.random.seed(seed)
    return tg.nn.Sequential(tg.nn.Linear(3, 4), tg.nn.Tanh(), tg.nn.Linear(4, 2))


def inputs(seed=1):
    return tg.tensor(np.random.default_rng(seed).normal(size=(5, 3)))


def assert_matches_eager(compiled, model, x):
    np.testing.assert_allclose(compiled(x).numpy(), model(x).numpy(), rtol=1e-12, atol=1e-12)


def test_an_in_place_weight_change_is_read_at_the_next_call_without_retracing():
    net, x = make_net(), inputs()
    f = tg.static.function(net)
    assert_matches_eager(f, net, x)
    with tg.no_grad():
        net[0].weight *= 2.0  # in place: the same tensor object, new values
    assert_matches_eager(f, net, x)
    net[2].bias.data = tg.tensor([5.0, -5.0])  # the array itself replaced
    assert_matches_eager(f, net, x)
    info = f.cache_info()
    assert (info.misses, info.hits) == (1, 2)  # values are inputs, not constants


def test_optimizer_steps_between_calls_train_like_eager():
    net_c, net_e, x = make_net(), make_net(), inputs()
    f = tg.static.function(net_c)
    opt_c = tg.optim.SGD(net_c.parameters(), lr=0.1)
    opt_e = tg.optim.SGD(net_e.parameters(), lr=0.1)
    losses_c, losses_e = [], []
    for _ in range(4):
        for model, opt, losses in ((f, opt_c, losses_c), (net_e, opt_e, losses_e)):
            opt.zero_grad()
            loss = (model(x) ** 2).mean()
            loss.backward()
            opt.step()
            losses.append(loss.item())
    np.testing.assert_allclose(losses_c, losses_e, rtol=1e-12)
    assert losses_c[-1] < losses_c[0]
    assert f.cache_info().misses == 1


def test_gradients_reach_the_real_parameters_and_inputs_as_eagerly():
    net, x = make_net(), inputs()
    xc = tg.tensor(x.numpy(), requires_grad=True)
    xe = tg.tensor(x.numpy(), requires_grad=True)
    f = tg.static.function(net)
    out = f(xc)
    assert out.grad_fn.name == "CompiledFunctionBackward"
    (out * out).sum().backward()
    compiled = [p.grad.numpy().copy() for p in net.parameters()]
    net.zero_grad()
    (net(xe) * net(xe)).sum().backward()
    for got, want in zip(compiled, [p.grad.numpy() for p in net.parameters()]):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(xc.grad.numpy(), xe.grad.numpy(), rtol=1e-12)


def test_gradients_match_pytorch():
    torch = pytest.importorskip("torch")
    net, x = make_net(), inputs()
    f = tg.static.function(net)
    (f(x) ** 3).sum().backward()
    tnet = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    tnet = tnet.double()
    with torch.no_grad():
        for tp, p in zip(tnet.parameters(), net.parameters()):
            tp.copy_(torch.from_numpy(p.numpy()))
    (tnet(torch.from_numpy(x.numpy())) ** 3).sum().backward()
    for tp, p in zip(tnet.parameters(), net.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-10)


def test_an_appended_layer_retraces_and_says_so():
    net, x = make_net(), inputs()
    f = tg.static.function(net)
    f(x)
    net.append(tg.nn.Linear(2, 1))
    assert f(x).shape == (5, 1)
    assert_matches_eager(f, net, x)
    assert f.cache_info().last_retrace_reason == (
        "what the function read changed: sequential now has sub-modules ['0', '1', '2', '3'], the "
        "last trace saw ['0', '1', '2']"
    )
    assert (f.cache_info().misses, f.cache_info().hits) == (2, 1)


class Scaled(tg.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = tg.nn.Linear(3, 2)
        self.scale = 2.0

    def forward(self, x):
        return self.lin(x) * self.scale


def test_a_changed_python_attribute_used_in_forward_retraces():
    np.random.seed(0)
    m, x = Scaled(), inputs()
    f = tg.static.function(m)
    assert_matches_eager(f, m, x)
    m.scale = 3.0
    assert_matches_eager(f, m, x)
    assert f.cache_info().last_retrace_reason == (
        "what the function read changed: scaled.scale is 3.0, the last trace read 2.0"
    )
    m.scale = 2.0  # back to a state already traced: a hit, no new trace
    assert_matches_eager(f, m, x)
    assert (f.cache_info().misses, f.cache_info().hits) == (2, 1)


def test_a_replaced_parameter_object_and_train_eval_are_guarded():
    net, x = make_net(), inputs()
    f = tg.static.function(net)
    f(x)
    net[0].weight = tg.nn.Parameter(np.ones((4, 3)))
    assert_matches_eager(f, net, x)
    assert f.cache_info().last_retrace_reason == (
        "what the function read changed: sequential.0.weight is a different tensor object than the "
        "one the last trace read"
    )
    net.eval()
    f(x)
    assert f.cache_info().last_retrace_reason.startswith(
        "what the function read changed: sequential.training is False, the last trace read True"
    )


def test_closure_tensors_and_globals_are_read_or_guarded():
    w = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    k = 2.0

    @tg.static.function
    def f(x):
        return (x * w * k).sum()

    x = tg.ones(3)
    assert f(x).item() == 12.0
    with tg.no_grad():
        w += 1.0  # the closure tensor changes in place: read at call time
    assert f(x).item() == 18.0
    k = 3.0  # noqa: F841 (read by f through its closure)
    assert f(x).item() == 27.0
    assert f.cache_info().last_retrace_reason == (
        "what the function read changed: k is 3.0, the last trace read 2.0"
    )
    f(x).backward()
    np.testing.assert_array_equal(w.grad.numpy(), [3.0, 3.0, 3.0])


LEARNING_RATE = 0.5


def step(w):
    return w * LEARNING_RATE


def test_a_changed_global_read_by_the_function_retraces():
    global LEARNING_RATE
    f = tg.static.function(step)
    assert f(tg.ones(2)).tolist() == [0.5, 0.5]
    LEARNING_RATE = 0.25
    try:
        assert f(tg.ones(2)).tolist() == [0.25, 0.25]
    finally:
        LEARNING_RATE = 0.5
    assert f.cache_info().last_retrace_reason == (
        "what the function read changed: LEARNING_RATE is 0.25, the last trace read 0.5"
    )


def test_a_captured_tensor_whose_shape_changed_retraces():
    net, x = make_net(), inputs()
    f = tg.static.function(lambda x: net(x).sum())
    f(x)
    net[2].weight.data = tg.ones(2, 4)  # same shape: just new values
    net[2].bias.data = tg.ones(1)  # now broadcasts differently
    assert f(x).item() == pytest.approx(net(x).sum().item())
    assert f.cache_info().last_retrace_reason == (
        "what the function read changed: net.2.bias now has shape (1,) float64, the last trace saw "
        "shape (2,) float64"
    )


def test_tuple_outputs_carry_gradients_and_integer_outputs_none():
    w = tg.tensor([1.0, -2.0, 3.0], requires_grad=True)

    @tg.static.function
    def f(x):
        y = x * w
        return y.sum(), (y * y).mean(), (y > 0).astype("int64")

    total, sq, positive = f(tg.ones(3))
    assert positive.tolist() == [1, 0, 1] and not positive.requires_grad
    (total + sq).backward()
    ref = tg.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = tg.ones(3) * ref
    (y.sum() + (y * y).mean()).backward()
    np.testing.assert_allclose(w.grad.numpy(), ref.grad.numpy())


def test_without_grad_outputs_are_plain_and_in_place_change_before_backward_is_caught():
    net, x = make_net(), inputs()
    f = tg.static.function(net)
    with tg.no_grad():
        assert not f(x).requires_grad
    out = f(x).sum()
    with tg.no_grad():
        net[0].weight += 1.0
    with pytest.raises(tg.InplaceError, match="modified in place"):
        out.backward()


def test_double_backward_through_a_compiled_function_is_a_clear_error():
    w = tg.tensor([2.0], requires_grad=True)
    f = tg.static.function(lambda x: (x * w) ** 2)
    (g,) = tg.grad(f(tg.ones(1)), w, tg.ones(1), create_graph=False)
    assert g.tolist() == [4.0]
    with pytest.raises(tg.BackwardError, match="create_graph=True"):
        tg.grad(f(tg.ones(1)).sum(), w, create_graph=True)


def test_a_bound_forward_is_guarded_through_self():
    np.random.seed(0)
    m, x = Scaled(), inputs()
    f = tg.static.function(m.forward)
    assert_matches_eager(f, m, x)
    m.scale = -1.0
    assert_matches_eager(f, m, x)
    assert f.cache_info().last_retrace_reason == (
        "what the function read changed: self.scale is -1.0, the last trace read 2.0"
    )


def test_values_made_inside_the_function_stay_constants_of_the_program():
    w = tg.tensor([1.0, 2.0])

    @tg.static.function
    def f(x):
        return x * w + tg.tensor([10.0, 20.0])  # made at each eager call: a constant

    f(tg.ones(2))
    g = f.graph_for(tg.ones(2))
    assert [s.name for s in g.inputs] == ["x", "w"]  # the closure tensor is an input
    assert len(g.program.consts) == 1


def test_outputs_of_two_float_dtypes_keep_their_dtypes_and_gradients():
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    f = tg.static.function(lambda x: ((x * w).astype("float32"), (x * w).sum()))
    small, total = f(tg.ones(2))
    assert (small.dtype, total.dtype) == (np.float32, np.float64)
    (small.sum() + total).backward()
    assert w.grad.dtype == np.float64 and w.grad.tolist() == [2.0, 2.0]


def test_a_captured_tensor_read_as_a_number_retraces_when_its_value_changes():
    scale = tg.tensor(2.0)

    @tg.static.function
    def f(x):
        return x * float(scale)  # a Python number: frozen into this trace

    assert f(tg.ones(2)).tolist() == [2.0, 2.0]
    scale.numpy()[...] = 3.0
    assert f(tg.ones(2)).tolist() == [3.0, 3.0]
    assert f.cache_info().last_retrace_reason == (
        "captured tensor 'scale' was read as a Python value when traced (.item(), float(), "
        "an if), and its value changed since"
    )
    assert f(tg.ones(2)).tolist() == [3.0, 3.0] and f.cache_info().hits == 1
