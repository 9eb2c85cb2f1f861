"""Optimizers, parameter groups and schedules against torch.optim: several steps of training
a small net in float64 give the same weights (skipped without torch)."""

import numpy as np
import pytest

import tinygrad_edu as tg

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch
nn, F = tg.nn, tg.nn.functional


def _nets():
    tg.manual_seed(1)
    net = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2))
    tnet = torch.nn.Sequential(
        torch.nn.Linear(3, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2)
    ).double()
    tnet.load_state_dict({k: torch.tensor(v.numpy()) for k, v in net.state_dict().items()})
    return net, tnet


def _train(make_opt, make_sched=None, steps=6, groups=False, closure=False):
    net, tnet = _nets()
    x, y = np.random.randn(7, 3), np.random.randint(0, 2, size=7)

    def params(m):
        if not groups:
            return m.parameters()
        return [{"params": m[0].parameters()}, {"params": m[2].parameters(), "lr": 0.01}]

    opt, topt = make_opt(tg.optim, params(net)), make_opt(torch.optim, params(tnet))
    sched = make_sched(tg.optim, opt) if make_sched else None
    tsched = make_sched(torch.optim, topt) if make_sched else None
    lrs = []
    for _ in range(steps):
        for o, model, lib, xx, yy in (
            (opt, net, tg, tg.tensor(x), y),
            (topt, tnet, torch, torch.tensor(x), torch.tensor(y)),
        ):

            def run(o=o, model=model, lib=lib, xx=xx, yy=yy):
                o.zero_grad()
                loss = lib.nn.functional.cross_entropy(model(xx), yy)
                loss.backward()
                return loss

            if closure:
                o.step(run)
            else:
                run()
                o.step()
        if sched:
            sched.step()
            tsched.step()
            lrs.append((sched.get_last_lr(), tsched.get_last_lr()))
    for (k, p), (tk, tp) in zip(net.state_dict().items(), tnet.state_dict().items()):
        assert k == tk
        np.testing.assert_allclose(p.numpy(), tp.numpy(), rtol=1e-10, atol=1e-12, err_msg=k)
    for ours, theirs in lrs:
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    return opt, topt


OPTS = {
    "sgd-nesterov": lambda o, p: o.SGD(p, lr=0.1, momentum=0.9, nesterov=True),
    "sgd-dampening-wd": lambda o, p: o.SGD(
        p, lr=0.1, momentum=0.5, dampening=0.3, weight_decay=0.01
    ),
    "sgd-maximize": lambda o, p: o.SGD(p, lr=0.05, maximize=True),
    "adam-amsgrad": lambda o, p: o.Adam(p, lr=0.05, amsgrad=True),
    "adamw": lambda o, p: o.AdamW(p, lr=0.05),
    "adamw-wd": lambda o, p: o.AdamW(p, lr=0.02, weight_decay=0.3, betas=(0.8, 0.9)),
    "rmsprop": lambda o, p: o.RMSprop(p, lr=0.01),
    "rmsprop-centered-momentum": lambda o, p: o.RMSprop(
        p, lr=0.01, momentum=0.9, centered=True, weight_decay=0.1
    ),
    "adagrad": lambda o, p: o.Adagrad(p, lr=0.1, lr_decay=0.01, weight_decay=0.1),
}


@pytest.mark.parametrize("name", OPTS)
def test_optimizers_match_torch(name):
    _train(OPTS[name])


def test_parameter_groups_and_closure_match_torch():
    opt, topt = _train(lambda o, p: o.SGD(p, lr=0.1, momentum=0.9), groups=True, closure=True)
    assert [g["lr"] for g in opt.param_groups] == [g["lr"] for g in topt.param_groups]
    assert len(opt.params) == 4


SCHEDS = {
    "step": lambda o, opt: o.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5),
    "multistep": lambda o, opt: o.lr_scheduler.MultiStepLR(opt, milestones=[1, 4], gamma=0.3),
    "exponential": lambda o, opt: o.lr_scheduler.ExponentialLR(opt, gamma=0.9),
    "cosine": lambda o, opt: o.lr_scheduler.CosineAnnealingLR(opt, T_max=4, eta_min=0.01),
    "lambda": lambda o, opt: o.lr_scheduler.LambdaLR(opt, lambda e: 1.0 / (1 + e)),
}


@pytest.mark.parametrize("name", SCHEDS)
def test_schedules_match_torch(name):
    _train(lambda o, p: o.SGD(p, lr=0.1, momentum=0.9), SCHEDS[name], steps=7, groups=True)


def test_zero_grad_set_to_none_and_zeros():
    w = tg.tensor([1.0], requires_grad=True)
    opt = tg.optim.Adam([w])
    (w * 2).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert w.grad.tolist() == [0.0]
    opt.zero_grad()
    assert w.grad is None


def test_state_dict_layout_matches_torch():
    opt, topt = _train(OPTS["adamw"], steps=2)
    ours, theirs = opt.state_dict(), topt.state_dict()
    assert list(ours) == list(theirs) == ["state", "param_groups"]
    assert [g["params"] for g in ours["param_groups"]] == [
        g["params"] for g in theirs["param_groups"]
    ]
    assert set(ours["state"][0]) == set(theirs["state"][0])
    for k in ("exp_avg", "exp_avg_sq"):
        np.testing.assert_allclose(ours["state"][3][k], theirs["state"][3][k].numpy(), rtol=1e-10)
