"""nn.functional: loss values against numpy references, gradchecks, and the error texts."""

import numpy as np
import pytest
from nn_helpers import site_of

import tinygrad_edu as tg

F = tg.nn.functional


def _ce_reference(logits, target):
    shifted = logits - logits.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return -logp[np.arange(len(target)), target]


def test_cross_entropy_equals_numpy_reference_for_every_reduction():
    logits = tg.randn(6, 4, requires_grad=True)
    target = np.array([0, 3, 1, 1, 2, 0])
    ref = _ce_reference(logits.numpy(), target)
    np.testing.assert_allclose(F.cross_entropy(logits, target).item(), ref.mean(), rtol=1e-12)
    np.testing.assert_allclose(F.cross_entropy(logits, target, "sum").item(), ref.sum(), rtol=1e-12)
    np.testing.assert_allclose(F.cross_entropy(logits, target, "none").numpy(), ref, rtol=1e-12)


def test_cross_entropy_gradient_is_softmax_minus_one_hot_over_batch():
    logits = tg.randn(5, 3, requires_grad=True)
    target = [2, 0, 1, 1, 0]
    F.cross_entropy(logits, target).backward()
    p = np.exp(logits.numpy()) / np.exp(logits.numpy()).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(logits.grad.numpy(), (p - np.eye(3)[target]) / 5, rtol=1e-10)
    assert tg.gradcheck(lambda z: F.cross_entropy(z, target), logits)


def test_cross_entropy_accepts_every_kind_of_class_index():
    logits = tg.randn(3, 4)
    expected = F.cross_entropy(logits, np.array([1, 0, 3])).item()
    for target in (
        [1, 0, 3],
        np.array([1, 0, 3], np.int32),
        tg.tensor([1.0, 0.0, 3.0]),
        tg.tensor(np.array([1, 0, 3])),
    ):
        assert F.cross_entropy(logits, target).item() == expected
    single = tg.tensor([0.5, 2.0, -1.0], requires_grad=True)  # one example: (classes,) and ()
    np.testing.assert_allclose(
        F.cross_entropy(single, 1).item(),
        _ce_reference(single.numpy()[None], np.array([1]))[0],
        rtol=1e-12,
    )
    assert tg.gradcheck(lambda z: F.cross_entropy(z, 1), single)


def test_cross_entropy_is_stable_for_huge_logits():
    logits = tg.tensor([[1000.0, 0.0], [0.0, -1000.0]], requires_grad=True)
    loss = F.cross_entropy(logits, [1, 1])
    np.testing.assert_allclose(loss.item(), (1000.0 + 1000.0) / 2)
    loss.backward()
    assert np.isfinite(logits.grad.numpy()).all()


def test_cross_entropy_target_shape_errors():
    logits = tg.randn(4, 3)
    with pytest.raises(tg.ShapeError) as err:
        F.cross_entropy(logits, np.zeros((4, 1), int))  # column target
    assert str(err.value) == (
        "cross_entropy: expected target of shape (4,) (one class index per row of logits "
        "(4, 3)), got (4, 1)\n"
        f"  built at: {site_of('# column target')}\n"
        "  hint: flatten it: target.reshape(-1)"
    )
    with pytest.raises(tg.ShapeError) as err:
        F.cross_entropy(logits, np.eye(3, dtype=int)[[0, 1, 2, 0]])  # one-hot target
    assert str(err.value) == (
        "cross_entropy: expected target of shape (4,) (one class index per row of logits "
        "(4, 3)), got (4, 3)\n"
        f"  built at: {site_of('# one-hot target')}\n"
        "  hint: for one-hot rows pass the class indices, y.argmax(axis=1); for class "
        "probabilities pass a float target"
    )
    with pytest.raises(tg.ShapeError) as err:
        F.cross_entropy(logits, [0, 1])  # too few
    assert str(err.value).splitlines()[-1] == "  hint: pass one class index per row of the logits"
    with pytest.raises(tg.ShapeError) as err:
        F.cross_entropy(tg.randn(2, 3, 4), [0, 1])  # 3-d logits
    assert str(err.value) == (
        "cross_entropy: expected logits of shape (batch, classes) or (classes,), got (2, 3, 4)\n"
        f"  built at: {site_of('# 3-d logits')}\n"
        "  hint: reshape the logits to (-1, classes)"
    )


def test_cross_entropy_class_value_errors():
    logits = tg.randn(4, 3)
    with pytest.raises(IndexError) as err:
        F.cross_entropy(logits, [0, 1, 3, 2])  # class 3 of 3
    assert str(err.value) == (
        "cross_entropy: target class 3 at position 2 is out of range for logits with 3 classes "
        "(valid classes: 0 to 2)\n"
        f"  built at: {site_of('# class 3 of 3')}\n"
        "  hint: class indices start at 0; check out_features of the last layer"
    )
    with pytest.raises(IndexError, match="target class -1 at position 0 is out of range"):
        F.cross_entropy(logits, [-1, 1, 1, 2])
    with pytest.raises(ValueError) as err:
        F.cross_entropy(logits, [0.0, 1.0, 0.5, 2.0])  # probabilities
    assert str(err.value) == (
        "cross_entropy: target must hold whole-number class indices, got 0.5 at position 2\n"
        f"  built at: {site_of('# probabilities')}\n"
        "  hint: for one probability per example use binary_cross_entropy(p, y)"
    )


def test_mse_loss_values_gradcheck_and_reductions():
    x = tg.randn(3, 2, requires_grad=True)
    y = np.random.randn(3, 2)
    np.testing.assert_allclose(F.mse_loss(x, y).item(), ((x.numpy() - y) ** 2).mean(), rtol=1e-12)
    np.testing.assert_allclose(
        F.mse_loss(x, y, reduction="sum").item(), ((x.numpy() - y) ** 2).sum()
    )
    assert F.mse_loss(x, y, reduction="none").shape == (3, 2)
    assert tg.gradcheck(lambda a: F.mse_loss(a, y), x)
    target = tg.randn(3, 2, requires_grad=True)  # the target may carry grad too
    assert tg.gradcheck(lambda a, b: F.mse_loss(a, b), (x, target))


def test_mse_loss_refuses_silent_broadcast():
    pred = tg.randn(4, 1)
    with pytest.raises(tg.ShapeError) as err:
        F.mse_loss(pred, np.zeros(4))  # (4, 1) vs (4,)
    assert str(err.value) == (
        "mse_loss: input shape (4, 1) and target shape (4,) differ (broadcasting them would "
        "compare every input with every target)\n"
        f"  built at: {site_of('# (4, 1) vs (4,)')}\n"
        "  hint: reshape the target to match: target.reshape(4, 1)"
    )
    with pytest.raises(tg.ShapeError, match="hint: make the input and the target the same shape"):
        F.mse_loss(pred, np.zeros(3))
    with pytest.raises(ValueError) as err:
        F.mse_loss(pred, np.zeros((4, 1)), reduction="avg")  # bad reduction
    assert str(err.value) == (
        "mse_loss: reduction must be 'mean', 'sum' or 'none', got 'avg'\n"
        f"  built at: {site_of('# bad reduction')}"
    )


def test_binary_cross_entropy_values_and_gradcheck():
    p = tg.tensor(np.random.uniform(0.05, 0.95, size=(5,)), requires_grad=True)
    y = np.array([1.0, 0.0, 1.0, 1.0, 0.0])
    ref = -(y * np.log(p.numpy()) + (1 - y) * np.log(1 - p.numpy()))
    np.testing.assert_allclose(F.binary_cross_entropy(p, y).item(), ref.mean(), rtol=1e-12)
    np.testing.assert_allclose(F.binary_cross_entropy(p, y, "none").numpy(), ref, rtol=1e-12)
    assert tg.gradcheck(lambda q: F.binary_cross_entropy(q, y), p)
    z = tg.randn(5, requires_grad=True)  # the usual use: probabilities from a sigmoid
    assert tg.gradcheck(lambda z: F.binary_cross_entropy(z.sigmoid(), y), z)


def test_binary_cross_entropy_clamps_log_at_minus_100_like_pytorch():
    loss = F.binary_cross_entropy(tg.tensor([0.0, 1.0]), [1.0, 0.0])
    assert loss.item() == 100.0


def test_binary_cross_entropy_errors():
    logits = tg.tensor([-0.3, 1.2])
    with pytest.raises(ValueError) as err:
        F.binary_cross_entropy(logits, [0.0, 1.0])  # logits, not probabilities
    assert str(err.value) == (
        "binary_cross_entropy: input must be probabilities in [0, 1], got values from -0.3 to 1.2\n"
        f"  built at: {site_of('# logits, not probabilities')}\n"
        "  hint: apply .sigmoid() to the model's output first"
    )
    with pytest.raises(tg.ShapeError, match=r"binary_cross_entropy: input shape \(2,\) and "):
        F.binary_cross_entropy(tg.tensor([0.2, 0.3]), [[0.0], [1.0]])


def test_activation_passthroughs_match_tensor_methods():
    x = tg.randn(2, 3)
    for fn, method in [(F.relu, "relu"), (F.tanh, "tanh"), (F.sigmoid, "sigmoid")]:
        np.testing.assert_array_equal(fn(x).numpy(), getattr(x, method)().numpy())
    np.testing.assert_array_equal(F.softmax(x, axis=0).numpy(), x.softmax(axis=0).numpy())
    np.testing.assert_array_equal(F.log_softmax(x).numpy(), x.log_softmax(axis=-1).numpy())
    np.testing.assert_allclose(F.relu([-1.0, 2.0]).numpy(), [0.0, 2.0])


def test_functional_linear_gradcheck_and_shape_error():
    x, w, b = (
        tg.randn(4, 3, requires_grad=True),
        tg.randn(2, 3, requires_grad=True),
        tg.randn(2, requires_grad=True),
    )
    assert tg.gradcheck(F.linear, (x, w, b))
    with pytest.raises(tg.ShapeError) as err:
        F.linear(tg.randn(4, 2), w)  # two features
    assert str(err.value) == (
        "linear: the weight has shape (2, 3), so the input needs 3 features in its last axis, "
        "got shape (4, 2)\n"
        f"  built at: {site_of('# two features')}\n"
        "  hint: make the layer Linear(2, 2), or check what you pass in"
    )
