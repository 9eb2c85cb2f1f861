"""nn against PyTorch: same weights in, same outputs and gradients out (skipped without torch)."""

import numpy as np
import pytest

import tinygrad_edu as tg

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch
nn, F = tg.nn, tg.nn.functional


def _copy_into_torch(ours, theirs):
    theirs.double().load_state_dict(
        {k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()}
    )
    return theirs


def _assert_same_grads(ours, theirs):
    tgrads = {k: p.grad.numpy() for k, p in theirs.named_parameters()}
    for k, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), tgrads[k], rtol=1e-10, atol=1e-12, err_msg=k)


def test_mlp_cross_entropy_forward_and_grads_match_torch():
    net = nn.Sequential(nn.Linear(3, 6), nn.ReLU(), nn.Linear(6, 6), nn.Sigmoid(), nn.Linear(6, 4))
    tnet = _copy_into_torch(
        net,
        torch.nn.Sequential(
            torch.nn.Linear(3, 6),
            torch.nn.ReLU(),
            torch.nn.Linear(6, 6),
            torch.nn.Sigmoid(),
            torch.nn.Linear(6, 4),
        ),
    )
    assert [n for n, _ in net.named_parameters()] == [n for n, _ in tnet.named_parameters()]
    x, y = np.random.randn(9, 3), np.random.randint(0, 4, size=9)
    loss = F.cross_entropy(net(tg.tensor(x)), y)
    tloss = torch.nn.functional.cross_entropy(tnet(torch.tensor(x)), torch.tensor(y))
    np.testing.assert_allclose(loss.item(), tloss.item(), rtol=1e-12)
    loss.backward()
    tloss.backward()
    _assert_same_grads(net, tnet)


def test_rnn_cell_over_variable_length_sequences_matches_torch():
    for nonlinearity in ("tanh", "relu"):
        cell = nn.RNNCell(2, 5, nonlinearity=nonlinearity)
        tcell = _copy_into_torch(cell, torch.nn.RNNCell(2, 5, nonlinearity=nonlinearity))
        loss, tloss = 0.0, 0.0
        for length in (1, 4, 2):
            x = np.random.randn(length, 2)
            h, th = None, None
            for t in range(length):
                h = cell(tg.tensor(x[t]), h)
                th = tcell(torch.tensor(x[t]), th)
            loss = loss + (h * h).sum()
            tloss = tloss + (th * th).sum()
        np.testing.assert_allclose(loss.item(), tloss.item(), rtol=1e-12)
        loss.backward()
        tloss.backward()
        _assert_same_grads(cell, tcell)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_losses_match_torch(reduction):
    p = np.random.uniform(0.01, 0.99, size=(4, 3))
    t = np.random.randint(0, 2, size=(4, 3)).astype(float)
    ours = F.binary_cross_entropy(tg.tensor(p), t, reduction)
    theirs = torch.nn.functional.binary_cross_entropy(
        torch.tensor(p), torch.tensor(t), reduction=reduction
    )
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    ours = F.mse_loss(tg.tensor(p), t, reduction)
    theirs = torch.nn.functional.mse_loss(torch.tensor(p), torch.tensor(t), reduction=reduction)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    z, y = np.random.randn(5, 3), np.random.randint(0, 3, size=5)
    ours = F.cross_entropy(tg.tensor(z), y, reduction)
    theirs = torch.nn.functional.cross_entropy(
        torch.tensor(z), torch.tensor(y), reduction=reduction
    )
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


def test_bce_at_exact_zero_and_one_matches_torch_clamp():
    p, t = np.array([0.0, 1.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0, 1.0])
    ours = F.binary_cross_entropy(tg.tensor(p), t, "none")
    theirs = torch.nn.functional.binary_cross_entropy(
        torch.tensor(p), torch.tensor(t), reduction="none"
    )
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def _buffered(lib):
    class Counted(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.nn.Linear(2, 1)
            self.register_buffer("seen", lib.zeros(1))
            self.register_buffer("scratch", lib.zeros(2), persistent=False)

    return Counted()


def test_a_non_persistent_buffer_is_a_buffer_but_not_saved_as_in_torch():
    ours, theirs = _buffered(tg), _buffered(torch)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["seen", "fc.weight", "fc.bias"]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    result = ours.load_state_dict(ours.state_dict())  # no "scratch" asked for either
    assert result.missing_keys == [] and result.unexpected_keys == []
    ours.register_buffer("scratch", tg.ones(2))  # registered again, persistent: saved again
    assert list(ours.state_dict())[:2] == ["seen", "scratch"]
