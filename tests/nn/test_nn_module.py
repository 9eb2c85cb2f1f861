"""Module and Parameter: registration, traversal, names, zero_grad, train/eval, repr,
state_dict, and the module path recorded on graph nodes."""

import re

import numpy as np
import pytest
from nn_helpers import site_of

import tinygrad_edu as tg
from tinygrad_edu.core import function as core_function
from tinygrad_edu.core.engine import toposort

nn = tg.nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.act = nn.Tanh()
        self.scale = nn.Parameter(np.ones(4))

    def forward(self, x):
        return self.act(self.fc(x)) * self.scale


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Block()
        self.head = nn.Sequential(nn.Linear(4, 2), nn.ReLU())

    def forward(self, x):
        return self.head(self.encoder(x))


def test_named_parameters_follow_registration_order_with_dotted_names():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == [
        "encoder.scale",
        "encoder.fc.weight",
        "encoder.fc.bias",
        "head.0.weight",
        "head.0.bias",
    ]
    assert [p.shape for p in net.parameters()] == [(4,), (4, 3), (4,), (2, 4), (2,)]
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in net.parameters())


def test_parameter_names_are_qualified_when_registered_and_user_names_are_kept():
    net = Net()
    assert [p.name for p in net.parameters()] == [n for n, _ in net.named_parameters()]
    fixed = nn.Parameter([1.0], name="my_w")
    holder = nn.Sequential(nn.Linear(1, 1))
    holder[0].extra = fixed
    outer = nn.Sequential(holder)
    assert fixed.name == "my_w"
    assert outer[0][0].weight.name == "0.0.weight"


def test_shared_parameters_and_modules_are_listed_once():
    shared = nn.Linear(2, 2)
    seq = nn.Sequential(shared, nn.ReLU(), shared)
    assert len(list(seq.parameters())) == 2
    assert [n for n, _ in seq.named_modules()] == ["", "0", "1"]
    assert len(list(seq.children())) == 2


def test_modules_children_and_named_modules_walk_depth_first():
    net = Net()
    assert [n for n, _ in net.named_modules()] == [
        "",
        "encoder",
        "encoder.fc",
        "encoder.act",
        "head",
        "head.0",
        "head.1",
    ]
    assert [n for n, _ in net.named_children()] == ["encoder", "head"]
    assert [type(m).__name__ for m in net.modules()] == [
        "Net",
        "Block",
        "Linear",
        "Tanh",
        "Sequential",
        "Linear",
        "ReLU",
    ]


def test_reassigning_an_attribute_replaces_the_registration():
    block = Block()
    block.fc = nn.Linear(3, 4, bias=False)
    assert [n for n, _ in block.named_parameters()] == ["scale", "fc.weight"]
    block.scale = None  # a plain value unregisters the parameter
    assert [n for n, _ in block.named_parameters()] == ["fc.weight"]
    del block.fc
    assert list(block.named_parameters()) == []


def test_zero_grad_sets_none_by_default_or_zeros():
    net = Net()
    net(tg.randn(5, 3)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    for p in net.parameters():
        assert p.grad.shape == p.shape and not p.grad.numpy().any()
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())


def test_train_and_eval_set_training_everywhere():
    net = Net()
    assert net.training and net.encoder.fc.training
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())


def test_repr_is_pytorch_style_and_nested():
    net = Net()
    assert repr(net) == (
        "Net(\n"
        "  (encoder): Block(\n"
        "    (fc): Linear(in_features=3, out_features=4, bias=True)\n"
        "    (act): Tanh()\n"
        "  )\n"
        "  (head): Sequential(\n"
        "    (0): Linear(in_features=4, out_features=2, bias=True)\n"
        "    (1): ReLU()\n"
        "  )\n"
        ")"
    )
    assert repr(nn.RNNCell(3, 8)) == "RNNCell(3, 8)"
    assert repr(nn.RNNCell(3, 8, bias=False, nonlinearity="relu")) == (
        "RNNCell(3, 8, bias=False, nonlinearity=relu)"
    )
    assert repr(nn.Parameter([1.0, 2.0])) == (
        "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    )


def test_state_dict_round_trip_copies_values_in_place():
    a, b = Net(), Net()
    x = tg.randn(4, 3)
    state = a.state_dict()
    assert list(state) == [n for n, _ in a.named_parameters()]
    assert all(isinstance(v, tg.Tensor) and not v.requires_grad for v in state.values())
    state["encoder.scale"][0] = 123.0  # a copy: editing it leaves the model alone
    assert a.encoder.scale.numpy()[0] == 1.0
    weight_before = b.encoder.fc.weight
    result = b.load_state_dict(a.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert b.encoder.fc.weight is weight_before  # same objects: optimizers keep working
    np.testing.assert_array_equal(b(x).numpy(), a(x).numpy())


def test_load_state_dict_bumps_versions_so_stale_graphs_fail():
    net = nn.Linear(2, 1)
    # an input that requires grad: its gradient needs the weight, so MatMul saved it
    loss = net(tg.randn(3, 2, requires_grad=True)).sum()
    net.load_state_dict(nn.Linear(2, 1).state_dict())
    with pytest.raises(tg.InplaceError, match="modified in place"):
        loss.backward()


def test_load_state_dict_errors():
    net = nn.Sequential(nn.Linear(2, 3))
    state = {"0.weight": np.zeros((3, 2)), "1.bias": np.zeros(3)}
    with pytest.raises(KeyError) as err:
        net.load_state_dict(state)  # keys
    assert err.value.args[0] == (
        "load_state_dict: the state dict does not fit Sequential: missing keys ['0.bias']; "
        "unexpected keys ['1.bias']\n"
        f"  built at: {site_of('net.load_state_dict(state)  # keys')}\n"
        "  hint: compare with list(model.state_dict()), or pass strict=False"
    )
    result = net.load_state_dict(state, strict=False)
    assert result.missing_keys == ["0.bias"] and result.unexpected_keys == ["1.bias"]
    assert not net[0].weight.numpy().any()
    with pytest.raises(tg.ShapeError) as err:
        net.load_state_dict({"0.weight": np.zeros((2, 3)), "0.bias": np.zeros(3)})  # shape
    assert str(err.value) == (
        "load_state_dict: '0.weight' expected shape (3, 2), got (2, 3)\n"
        f"  built at: {site_of('# shape')}\n"
        "  hint: the saved model has a different layer size"
    )


def test_forgetting_super_init_names_the_fix():
    class Broken(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(1, 1)  # no super().__init__()

    with pytest.raises(AttributeError) as err:
        Broken()
    assert str(err.value) == (
        "Broken.fc: cannot register Linear 'fc' before Module.__init__() ran\n"
        f"  built at: {site_of('self.fc = nn.Linear(1, 1)  # no super')}\n"
        "  hint: call super().__init__() first in Broken.__init__"
    )


def test_forward_must_be_defined():
    with pytest.raises(NotImplementedError, match=re.escape("Module must define forward(...)")):
        nn.Module()(1)


def _scopes(out):
    return [(n.name, n.module_path) for n in toposort([out.grad_fn]) if n.name != "AccumulateGrad"]


def test_call_records_the_module_path_on_every_node():
    net = nn.Sequential(nn.Linear(2, 3), nn.Tanh())
    out = net(tg.randn(4, 2))
    assert _scopes(out) == [
        ("TanhBackward", ("sequential", "1")),
        ("AddBackward", ("sequential", "0")),
        ("MatMulBackward", ("sequential", "0")),
        ("TransposeBackward", ("sequential", "0")),
    ]
    net.name = "net"
    assert _scopes(net(tg.randn(4, 2)))[0] == ("TanhBackward", ("net", "1"))
    assert _scopes(Net()(tg.randn(1, 3)))[-1] == ("TransposeBackward", ("net", "encoder", "fc"))
    assert core_function.module_path_stack() == []
    assert (out * 2).grad_fn.module_path == ()  # outside any module


def test_scope_is_popped_when_forward_raises():
    net = nn.Sequential(nn.Linear(2, 3))
    with pytest.raises(tg.ShapeError):
        net(tg.randn(4, 5))
    assert core_function.module_path_stack() == []


def test_to_changes_the_dtype_in_place():
    net = nn.Sequential(nn.Linear(2, 3)).to(np.float32)
    assert {p.dtype for p in net.parameters()} == {np.dtype(np.float32)}
    assert net(tg.tensor(np.ones((1, 2), np.float32))).dtype == np.float32
