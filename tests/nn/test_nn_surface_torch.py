"""The layers courses use (conv, pooling, norms, recurrent, losses, init, clipping) against
PyTorch in float64: same weights in, same outputs, gradients and running statistics out."""

import numpy as np
import pytest

import tinygrad_edu as tg

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch
nn, F = tg.nn, tg.nn.functional


def _pair(ours, theirs):
    """`theirs` in float64 with `ours`'s parameters and buffers."""
    theirs = theirs.double()
    state = {k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()}
    theirs.load_state_dict(state)
    assert list(state) == list(theirs.state_dict())  # same names, same order
    return theirs


def _check(ours, theirs, *shapes, out=lambda y: y, int_input=None):
    """Forward random inputs of `shapes` through both; compare outputs and all gradients."""
    xs = [np.random.randn(*s) for s in shapes]
    tx = [tg.tensor(x, requires_grad=True) for x in xs] if int_input is None else [int_input[0]]
    ttx = [torch.tensor(x, requires_grad=True) for x in xs] if int_input is None else [int_input[1]]
    y, ty = out(ours(*tx)), out(theirs(*ttx))
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), rtol=1e-10, atol=1e-12)
    w = np.asarray(np.random.randn(*ty.shape))  # 0-d too: torch.tensor(float) is float32
    (y * tg.tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    if int_input is None:
        for a, b in zip(tx, ttx):
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-12)
    tgrads = dict(theirs.named_parameters())
    for k, p in ours.named_parameters():
        np.testing.assert_allclose(
            p.grad.numpy(), tgrads[k].grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=k
        )


CONVS = [
    dict(),
    dict(stride=2),
    dict(padding=1),
    dict(padding=2, dilation=2),
    dict(stride=(2, 1), padding=(1, 0), bias=False),
    dict(padding="same"),
]


@pytest.mark.parametrize("kw", CONVS, ids=[str(k) for k in CONVS])
def test_conv2d(kw):
    ours = nn.Conv2d(3, 4, 3, **kw)
    _check(ours, _pair(ours, torch.nn.Conv2d(3, 4, 3, **kw)), (2, 3, 7, 6))


def test_conv2d_on_one_image_and_rectangular_kernel():
    ours = nn.Conv2d(2, 3, (2, 3))
    _check(ours, _pair(ours, torch.nn.Conv2d(2, 3, (2, 3))), (2, 5, 5))


POOLS = [
    (nn.MaxPool2d(2), torch.nn.MaxPool2d(2)),
    (nn.MaxPool2d(3, stride=1, padding=1), torch.nn.MaxPool2d(3, stride=1, padding=1)),
    (nn.AvgPool2d(2), torch.nn.AvgPool2d(2)),
    (nn.AvgPool2d(3, stride=2, padding=1), torch.nn.AvgPool2d(3, stride=2, padding=1)),
    (nn.AdaptiveAvgPool2d(1), torch.nn.AdaptiveAvgPool2d(1)),
    (nn.AdaptiveAvgPool2d((2, 3)), torch.nn.AdaptiveAvgPool2d((2, 3))),
]


@pytest.mark.parametrize("ours,theirs", POOLS, ids=[repr(p[0]) for p in POOLS])
def test_pooling(ours, theirs):
    _check(ours, theirs, (2, 3, 7, 5))


def test_max_pool_gradient_goes_to_one_of_tied_values():
    x = np.zeros((1, 1, 2, 2))  # relu before pooling makes ties of zeros common
    ours, theirs = tg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    F.max_pool2d(ours, 2).sum().backward()
    torch.nn.functional.max_pool2d(theirs, 2).sum().backward()
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())


@pytest.mark.parametrize(
    "cls,shape",
    [("BatchNorm1d", (6, 3)), ("BatchNorm1d", (6, 3, 4)), ("BatchNorm2d", (4, 3, 2, 5))],
)
def test_batch_norm_training_then_eval(cls, shape):
    ours = getattr(nn, cls)(3, momentum=0.2)
    theirs = _pair(ours, getattr(torch.nn, cls)(3, momentum=0.2))
    for _ in range(2):
        _check(ours, theirs, shape)
        ours.zero_grad()
        theirs.zero_grad()
    for name in ("running_mean", "running_var"):
        np.testing.assert_allclose(
            getattr(ours, name).numpy(), getattr(theirs, name).numpy(), rtol=1e-12
        )
    assert ours.num_batches_tracked.item() == theirs.num_batches_tracked.item() == 2
    ours.eval()
    theirs.eval()
    _check(ours, theirs, shape)


def test_layer_norm_and_embedding():
    ours = nn.LayerNorm((3, 4))
    _check(ours, _pair(ours, torch.nn.LayerNorm((3, 4))), (2, 3, 4))
    ours = nn.Embedding(6, 3, padding_idx=0)
    theirs = _pair(ours, torch.nn.Embedding(6, 3, padding_idx=0))
    idx = np.array([[0, 2, 5], [2, 2, 1]])
    _check(ours, theirs, int_input=(tg.tensor(idx).long(), torch.tensor(idx)))


@pytest.mark.parametrize(
    "kw", [dict(), dict(num_layers=2, batch_first=True), dict(nonlinearity="relu", bias=False)]
)
def test_rnn(kw):
    ours = nn.RNN(3, 4, **kw)
    theirs = _pair(ours, torch.nn.RNN(3, 4, **kw))
    _check(ours, theirs, (5, 2, 3), out=lambda r: r[0] + r[1].sum(0, keepdim=True).sum())
    _check(ours, theirs, (5, 3), (kw.get("num_layers", 1), 4), out=lambda r: r[0])


@pytest.mark.parametrize("kw", [dict(), dict(num_layers=2, batch_first=True)])
def test_lstm(kw):
    ours = nn.LSTM(3, 4, **kw)
    theirs = _pair(ours, torch.nn.LSTM(3, 4, **kw))
    _check(ours, theirs, (5, 2, 3), out=lambda r: r[0].sum() + r[1][0].sum() * r[1][1].sum())
    cell = nn.LSTMCell(3, 4)
    tcell = _pair(cell, torch.nn.LSTMCell(3, 4))
    _check(cell, tcell, (2, 3), out=lambda hc: hc[0] * hc[1])


ACTS = [
    ("GELU", {}),
    ("GELU", {"approximate": "tanh"}),
    ("LeakyReLU", {"negative_slope": 0.2}),
    ("ELU", {}),
    ("Softplus", {"beta": 2.0}),
    ("SiLU", {}),
    ("Softmax", {"dim": 1}),
    ("LogSoftmax", {"dim": 1}),
    ("Flatten", {}),
    ("Identity", {}),
    ("ReLU", {}),
]


@pytest.mark.parametrize("name,kw", ACTS, ids=[f"{a}{b}" for a, b in ACTS])
def test_activations(name, kw):
    _check(getattr(nn, name)(**kw), getattr(torch.nn, name)(**kw), (3, 4, 2))


def test_activation_gradients_at_zero_match():
    for name in ("LeakyReLU", "GELU", "ELU", "ReLU"):
        x, tx = (
            tg.zeros(2, requires_grad=True),
            torch.zeros(2, dtype=torch.float64, requires_grad=True),
        )
        getattr(nn, name)()(x).sum().backward()
        getattr(torch.nn, name)()(tx).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), err_msg=name)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_loss_modules(reduction):
    x, y = np.random.randn(5, 3), np.random.randn(5, 3)
    labels, probs = np.random.randint(0, 3, 5), np.random.rand(5, 3)
    targets = (np.random.rand(5, 3) > 0.5).astype(float)
    cases = [
        ("MSELoss", x, y, {}),
        ("L1Loss", x, y, {}),
        ("CrossEntropyLoss", x, labels, {}),
        ("NLLLoss", x, labels, {}),
        ("BCELoss", probs, targets, {}),
        ("BCEWithLogitsLoss", x, targets, {}),
        ("BCEWithLogitsLoss", x, targets, {"pos_weight": [1.0, 2.0, 0.5]}),
    ]
    for name, a, b, kw in cases:
        ta = tg.tensor(a, requires_grad=True)
        tta = torch.tensor(a, requires_grad=True)
        tkw = {k: torch.tensor(v, dtype=torch.float64) for k, v in kw.items()}
        loss = getattr(nn, name)(reduction=reduction, **kw)(ta, tg.tensor(b))
        tloss = getattr(torch.nn, name)(reduction=reduction, **tkw)(tta, torch.tensor(b))
        np.testing.assert_allclose(loss.numpy(), tloss.detach().numpy(), rtol=1e-12, err_msg=name)
        loss.sum().backward()
        tloss.sum().backward()
        np.testing.assert_allclose(
            ta.grad.numpy(), tta.grad.numpy(), rtol=1e-12, atol=1e-15, err_msg=name
        )


def test_bce_with_logits_is_stable_and_right_at_zero():
    x = np.array([-800.0, 0.0, 800.0])
    y = np.array([1.0, 0.0, 0.0])
    ours, theirs = tg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    loss = F.binary_cross_entropy_with_logits(ours, tg.tensor(y))
    tloss = torch.nn.functional.binary_cross_entropy_with_logits(theirs, torch.tensor(y))
    np.testing.assert_allclose(loss.item(), tloss.item())
    loss.backward()
    tloss.backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy())


def test_functional_twins():
    x = np.random.randn(2, 5)
    t, tt = tg.tensor(x), torch.tensor(x)
    tf = torch.nn.functional
    np.testing.assert_allclose(F.softmax(t, dim=1).numpy(), tf.softmax(tt, dim=1).numpy())
    np.testing.assert_allclose(F.normalize(t).numpy(), tf.normalize(tt).numpy())
    np.testing.assert_allclose(
        F.pad(t, (1, 2, 0, 1), value=3.0).numpy(), tf.pad(tt, (1, 2, 0, 1), value=3.0).numpy()
    )
    labels = np.array([0, 2, 1])
    assert (
        F.one_hot(tg.tensor(labels).long(), 4).tolist()
        == tf.one_hot(torch.tensor(labels), 4).tolist()
    )


def test_dropout_train_and_eval():
    drop = nn.Dropout(0.25)
    x = tg.ones(20000)
    y = drop(x).numpy()
    assert set(np.unique(y)) == {0.0, 1.0 / 0.75}
    assert abs((y == 0).mean() - 0.25) < 0.02
    assert tg.equal(drop.eval()(x), x) and tg.equal(nn.Dropout(0.0)(x), x)


def test_init_distributions_and_gain():
    w = tg.nn.Parameter(np.zeros((400, 300)))
    for fn, std in [
        (nn.init.kaiming_normal_, np.sqrt(2.0 / 300)),
        (nn.init.xavier_normal_, np.sqrt(2.0 / 700)),
    ]:
        fn(w) if fn is not nn.init.kaiming_normal_ else fn(w, nonlinearity="relu")
        assert abs(w.numpy().std() / std - 1) < 0.02
    nn.init.xavier_uniform_(w)
    assert np.abs(w.numpy()).max() <= np.sqrt(6.0 / 700)
    nn.init.kaiming_uniform_(w, a=np.sqrt(5))  # PyTorch's Linear default
    assert np.abs(w.numpy()).max() <= 1 / np.sqrt(300)
    nn.init.zeros_(w)
    assert not w.numpy().any() and w._version > 0
    for name in ("relu", "tanh", "sigmoid", "linear"):
        assert nn.init.calculate_gain(name) == torch.nn.init.calculate_gain(name)
    assert nn.init.calculate_gain("leaky_relu", 0.2) == torch.nn.init.calculate_gain(
        "leaky_relu", 0.2
    )


def test_clip_grad_norm_matches_torch():
    net = nn.Linear(4, 3)
    tnet = _pair(net, torch.nn.Linear(4, 3))
    x = np.random.randn(5, 4) * 10
    (net(tg.tensor(x)) ** 2).sum().backward()
    (tnet(torch.tensor(x)) ** 2).sum().backward()
    total = nn.utils.clip_grad_norm_(net.parameters(), 1.0)
    ttotal = torch.nn.utils.clip_grad_norm_(tnet.parameters(), 1.0)
    np.testing.assert_allclose(total.item(), ttotal.item())
    for (_, p), (_, tp) in zip(net.named_parameters(), tnet.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy())


def test_containers_register_like_torch():
    class Net(nn.Module):
        def __init__(self, lib):
            super().__init__()
            self.blocks = lib.ModuleList([lib.Linear(2, 2) for _ in range(2)])
            self.heads = lib.ModuleDict({"a": lib.Linear(2, 1)})

    ours, theirs = Net(nn), Net.__mro__[0]  # noqa: F841
    tnames = [n for n, _ in _torch_net().named_parameters()]
    assert [n for n, _ in ours.named_parameters()] == tnames
    seen = []
    ours.apply(lambda m: seen.append(type(m).__name__))
    assert seen[-1] == "Net" and seen.count("Linear") == 3
    assert len(ours.blocks) == 2 and "a" in ours.heads and list(ours.heads.keys()) == ["a"]


def _torch_net():
    class TNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = torch.nn.ModuleList([torch.nn.Linear(2, 2) for _ in range(2)])
            self.heads = torch.nn.ModuleDict({"a": torch.nn.Linear(2, 1)})

    return TNet()


def test_module_to_and_device():
    net = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    assert net.to("cpu") is net and net.float().state_dict()["0.weight"].dtype == np.float32
    assert net[1].running_mean.dtype == np.float32
    net.double()
    with pytest.raises(ValueError, match="^Module.to: device 'cuda'"):
        net.to("cuda")


def test_reprs_print_as_pytorchs():
    def build(lib):
        n = lib.nn
        return [
            n.Sequential(
                n.Conv2d(1, 6, 5),
                n.ReLU(),
                n.MaxPool2d(2, 2),
                n.Dropout(0.25),
                n.Flatten(),
                n.BatchNorm1d(4),
                n.LayerNorm(4),
                n.GELU(),
                n.ELU(),
                n.Softplus(),
                n.LeakyReLU(0.2),
                n.Embedding(10, 3, padding_idx=0),
                n.RNN(3, 4, num_layers=2),
                n.LSTM(3, 4, batch_first=True),
                n.Softmax(dim=1),
                n.AvgPool2d(2),
                n.AdaptiveAvgPool2d(1),
                n.Conv2d(3, 8, 3, stride=2, padding=1, bias=False),
            ),
            n.BatchNorm2d(3, affine=False, track_running_stats=False),
            n.ModuleList([n.Linear(2, 2), n.Linear(2, 2), n.ReLU()]),
            n.ModuleList(),
            n.ModuleDict({"a": n.Linear(2, 2)}),
            n.MSELoss(reduction="sum"),
            n.CrossEntropyLoss(),
            n.BCEWithLogitsLoss(),
        ]

    for ours, theirs in zip(build(tg), build(torch)):
        assert repr(ours) == repr(theirs)


INPLACE_LAYERS = [
    ("ReLU", {}),
    ("LeakyReLU", {"negative_slope": 0.1}),
    ("ELU", {"alpha": 0.7}),
    ("SiLU", {}),
    ("Dropout", {"p": 0.0}),
]


@pytest.mark.parametrize(("name", "kwargs"), INPLACE_LAYERS)
def test_an_inplace_layer_changes_its_input_as_in_pytorch(name, kwargs):
    # the layer's input is the result the previous layer returned: with inplace=True it holds
    # the activation afterwards, in both libraries, and the gradients are the same
    x = np.random.randn(3, 4)
    results = []
    for lib in (tg, torch):
        leaf = lib.tensor(x, requires_grad=True)
        h = leaf * 2.0
        layer = getattr(lib.nn, name)(inplace=True, **kwargs)
        y = layer(h)
        (y * y).sum().backward()
        results.append((y is h, _numpy(h), _numpy(leaf.grad), repr(layer)))
    ours, theirs = results
    assert ours[0] and theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12)
    assert ours[3] == theirs[3]


def _numpy(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else t.numpy()


@pytest.mark.parametrize("before", ["Sigmoid", "Tanh"])
def test_an_inplace_activation_after_one_that_saved_its_result_is_refused(before):
    # Sigmoid and Tanh keep their result for backward; ReLU(inplace=True) overwrites it
    refused = []
    for lib in (tg, torch):
        model = lib.nn.Sequential(getattr(lib.nn, before)(), lib.nn.ReLU(inplace=True))
        y = model(lib.tensor(np.random.randn(2, 3), requires_grad=True))
        with pytest.raises(RuntimeError, match="in ?place|inplace") as e:
            y.sum().backward()
        refused.append(e.value)
    assert "sigmoid" in str(refused[0]).lower() or "tanh" in str(refused[0]).lower()
