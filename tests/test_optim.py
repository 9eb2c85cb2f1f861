"""Optimizers: SGD and Adam against hand-computed updates and against torch.optim, in-place
semantics (version counters), zero_grad, state, errors, and an MLP that learns the moons."""

import re

import numpy as np
import pytest
from helpers import site_of

import tinygrad_edu as tg

nn, F = tg.nn, tg.nn.functional


def _quadratic_steps(opt_factory, steps):
    """Minimise sum(w ** 2) from w = [1, -2]; dL/dw = 2w. Returns w after each step."""
    w = tg.tensor([1.0, -2.0], requires_grad=True)
    opt = opt_factory([w])
    history = []
    for _ in range(steps):
        opt.zero_grad()
        (w * w).sum().backward()
        opt.step()
        history.append(w.numpy().copy())
    return w, opt, history


def test_sgd_plain_step_is_w_minus_lr_grad():
    _, _, hist = _quadratic_steps(lambda p: tg.optim.SGD(p, lr=0.1), 2)
    np.testing.assert_allclose(hist[0], [0.8, -1.6], rtol=1e-15)  # w - 0.1 * 2w
    np.testing.assert_allclose(hist[1], [0.64, -1.28], rtol=1e-15)


def test_sgd_momentum_and_weight_decay_by_hand():
    w, opt, hist = _quadratic_steps(
        lambda p: tg.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.01), 2
    )
    # step 1: g = 2w + 0.01w = [2.01, -4.02]; buf = g; w = w - 0.1 g
    np.testing.assert_allclose(hist[0], [0.799, -1.598], rtol=1e-14)
    # step 2: g = 2.01 * [0.799, -1.598]; buf = 0.9 * [2.01, -4.02] + g; w = w - 0.1 buf
    np.testing.assert_allclose(hist[1], [0.457501, -0.915002], rtol=1e-14)
    np.testing.assert_allclose(opt.state[w]["momentum_buffer"], [3.41499, -6.82998], rtol=1e-14)


def test_adam_two_steps_by_hand():
    w, opt, hist = _quadratic_steps(lambda p: tg.optim.Adam(p, lr=0.1), 2)
    b1, b2, eps, lr = 0.9, 0.999, 1e-8, 0.1
    w0 = np.array([1.0, -2.0])
    g1 = 2 * w0
    m1, v1 = (1 - b1) * g1, (1 - b2) * g1**2
    w1 = w0 - lr * (m1 / (1 - b1)) / (np.sqrt(v1 / (1 - b2)) + eps)
    g2 = 2 * w1
    m2, v2 = b1 * m1 + (1 - b1) * g2, b2 * v1 + (1 - b2) * g2**2
    w2 = w1 - lr * (m2 / (1 - b1**2)) / (np.sqrt(v2 / (1 - b2**2)) + eps)
    np.testing.assert_allclose(hist[0], w1, rtol=1e-13)
    np.testing.assert_allclose(hist[0], [0.9, -1.9], rtol=1e-8)  # first step ~ lr * sign(g)
    np.testing.assert_allclose(hist[1], w2, rtol=1e-13)
    assert opt.state[w]["step"] == 2


def test_step_is_in_place_and_skips_params_without_grad():
    w = tg.tensor([1.0], requires_grad=True)
    unused = tg.tensor([5.0], requires_grad=True)
    data = w.numpy()
    opt = tg.optim.SGD([w, unused], lr=0.5)
    (w * 3).sum().backward()
    opt.step()
    assert w.numpy() is data and w.numpy()[0] == -0.5 and w.is_leaf and w.requires_grad
    assert unused.numpy()[0] == 5.0 and unused not in opt.state


def test_step_between_forward_and_backward_raises_the_inplace_error():
    # two layers, as in PyTorch's classic error: the second layer's input requires grad, so
    # its MatMul saved the weight (a first layer fed plain data saves only the data)
    net = nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1))
    opt = tg.optim.SGD(net.parameters(), lr=0.1)
    F.mse_loss(net(tg.randn(4, 2)), np.zeros((4, 1))).backward()
    loss = F.mse_loss(net(tg.randn(4, 2)), np.zeros((4, 1)))
    opt.step()  # too early: the new loss saved the old weights
    with pytest.raises(tg.InplaceError) as err:
        loss.backward()
    assert "was modified in place at " + site_of("opt.step()  # too early") in str(err.value)


def test_zero_grad_none_or_zeros():
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    opt = tg.optim.SGD([w], lr=0.1)
    (w * w).sum().backward()
    opt.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(w.grad.numpy(), [0.0, 0.0])
    opt.zero_grad()
    assert w.grad is None


def test_gradients_accumulate_without_zero_grad():
    w = tg.tensor([1.0], requires_grad=True)
    opt = tg.optim.SGD([w], lr=1.0)
    (w * 2).sum().backward()
    (w * 2).sum().backward()  # no zero_grad: the grads add up to 4
    opt.step()
    assert w.numpy()[0] == -3.0


def test_shared_parameters_are_updated_once():
    layer = nn.Linear(1, 1)
    opt = tg.optim.SGD(list(layer.parameters()) + [layer.weight], lr=0.1)
    assert len(opt.params) == 2


def test_state_dict_round_trip_continues_identically():
    def run(restore):
        tg.manual_seed(3)
        net = nn.Linear(3, 1)
        opt = tg.optim.Adam(net.parameters(), lr=0.05)
        x, y = tg.randn(8, 3), np.random.randn(8, 1)
        for i in range(4):
            if restore and i == 2:
                saved = opt.state_dict()
                opt = tg.optim.Adam(net.parameters(), lr=0.05)
                opt.load_state_dict(saved)
            opt.zero_grad()
            F.mse_loss(net(x), y).backward()
            opt.step()
        return net.weight.numpy()

    np.testing.assert_array_equal(run(False), run(True))
    w = tg.tensor([1.0], requires_grad=True)
    opt = tg.optim.SGD([w], lr=0.1, momentum=0.5)
    (w * w).sum().backward()
    opt.step()
    state = opt.state_dict()
    assert state["param_groups"] == [
        {
            "lr": 0.1,
            "momentum": 0.5,
            "dampening": 0.0,
            "weight_decay": 0.0,
            "nesterov": False,
            "maximize": False,
            "params": [0],
        }
    ]  # PyTorch's layout
    np.testing.assert_array_equal(state["state"][0]["momentum_buffer"], [2.0])
    assert repr(opt) == (
        "SGD(1 tensors, lr=0.1, momentum=0.5, dampening=0.0, weight_decay=0.0, "
        "nesterov=False, maximize=False)"
    )


def test_optimizer_errors():
    with pytest.raises(ValueError) as err:
        tg.optim.SGD([], lr=0.1)  # empty
    assert str(err.value) == (
        "SGD: got an empty parameter list\n"
        f"  built at: {site_of('tg.optim.SGD([], lr=0.1)  # empty')}\n"
        "  hint: did the model register its layers? list(model.parameters()) should not be "
        "empty (a generator can be used only once)"
    )
    w = tg.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError) as err:
        tg.optim.Adam([w * 2])  # non-leaf
    assert str(err.value) == (
        "Adam: params[0] is not a leaf (it was computed by MulBackward), so it can not be "
        "optimized\n"
        f"  built at: {site_of('tg.optim.Adam([w * 2])  # non-leaf')}\n"
        "  hint: optimize the tensors you created with requires_grad=True"
    )
    with pytest.raises(
        TypeError, match=re.escape("SGD: params must be an iterable of tensors, got one Tensor")
    ):
        tg.optim.SGD(w, lr=0.1)
    with pytest.raises(TypeError, match=re.escape("SGD: params[1] is a float, not a Tensor")):
        tg.optim.SGD([w, 1.0], lr=0.1)
    with pytest.raises(ValueError, match=re.escape("SGD: invalid learning rate: -1")):
        tg.optim.SGD([w], lr=-1)
    with pytest.raises(ValueError, match=re.escape("Adam: invalid beta2: 1.0")):
        tg.optim.Adam([w], betas=(0.9, 1.0))


def _moons_mlp(make_opt, steps):
    pts, y = tg.data.make_moons(200, noise=0.1, seed=0)
    tg.manual_seed(0)
    net = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 2))
    opt = make_opt(net.parameters())
    x = tg.tensor(pts)
    first = (net(x).numpy().argmax(axis=1) == y).mean()
    for _ in range(steps):
        loss = F.cross_entropy(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    with tg.no_grad():
        return first, (net(x).numpy().argmax(axis=1) == y).mean(), loss.item()


@pytest.mark.parametrize(
    "make_opt",
    [
        lambda p: tg.optim.SGD(p, lr=0.1, momentum=0.9),
        lambda p: tg.optim.Adam(p, lr=0.02),
    ],
    ids=["sgd-momentum", "adam"],
)
def test_mlp_learns_the_moons(make_opt):
    first, acc, loss = _moons_mlp(make_opt, 150)
    assert first < 0.9  # an untrained net does not already solve it
    assert acc > 0.95 and loss < 0.15


# --- against PyTorch -------------------------------------------------------------------------


def _torch_pair(opt_name, kwargs, steps=5):
    torch = pytest.importorskip("torch")
    tg.manual_seed(1)
    net = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2))
    tnet = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2))
    tnet = tnet.double()
    tnet.load_state_dict({k: torch.tensor(v.numpy()) for k, v in net.state_dict().items()})
    x = np.random.randn(7, 3)
    y = np.random.randint(0, 2, size=7)
    opt = getattr(tg.optim, opt_name)(net.parameters(), **kwargs)
    topt = getattr(torch.optim, opt_name)(tnet.parameters(), **kwargs)
    for _ in range(steps):
        opt.zero_grad()
        F.cross_entropy(net(tg.tensor(x)), y).backward()
        opt.step()
        topt.zero_grad()
        torch.nn.functional.cross_entropy(tnet(torch.tensor(x)), torch.tensor(y)).backward()
        topt.step()
    theirs = {k: v.detach().numpy() for k, v in tnet.state_dict().items()}
    return net.state_dict(), theirs


@pytest.mark.torch
@pytest.mark.parametrize(
    "opt_name,kwargs",
    [
        ("SGD", {"lr": 0.3}),
        ("SGD", {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.01}),
        ("Adam", {"lr": 0.05}),
        ("Adam", {"lr": 0.01, "betas": (0.8, 0.99), "eps": 1e-6, "weight_decay": 0.1}),
    ],
)
def test_matches_torch_optim(opt_name, kwargs):
    ours, theirs = _torch_pair(opt_name, kwargs)
    assert list(ours) == list(theirs)
    for k in ours:
        np.testing.assert_allclose(ours[k], theirs[k], rtol=1e-10, atol=1e-12, err_msg=k)
