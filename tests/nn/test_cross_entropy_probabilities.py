"""cross_entropy with class probabilities (soft labels): PyTorch reads a float target of
the logits' shape as one probability per class, for knowledge distillation, mixup and
smoothed labels written out by hand. Values and gradients against hand-computed numbers
and against PyTorch; the one option PyTorch refuses with them refused here too."""

import itertools

import numpy as np
import pytest
from nn_helpers import site_of

import tinygrad_edu as tg

F = tg.nn.functional


def test_a_float_one_hot_target_gives_the_class_index_loss_and_gradient():
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((5, 4))
    labels = np.array([3, 0, 1, 1, 2])
    by_index = tg.tensor(logits, requires_grad=True)
    by_rows = tg.tensor(logits, requires_grad=True)
    a = F.cross_entropy(by_index, labels)
    b = F.cross_entropy(by_rows, np.eye(4)[labels])
    a.backward()
    b.backward()
    np.testing.assert_allclose(b.item(), a.item(), rtol=1e-14)
    np.testing.assert_allclose(by_rows.grad.numpy(), by_index.grad.numpy(), rtol=1e-14)


def test_equal_logits_cost_log_of_the_class_count_whatever_the_probabilities():
    # log_softmax of equal logits is -log 3 for every class, and each row's
    # probabilities sum to 1; the gradient is softmax - y = 1/3 - y, over the batch
    logits = tg.zeros(2, 3, requires_grad=True)
    target = tg.tensor([[0.25, 0.75, 0.0], [0.5, 0.25, 0.25]])
    loss = F.cross_entropy(logits, target)
    assert loss.item() == pytest.approx(np.log(3), rel=1e-15)
    loss.backward()
    np.testing.assert_allclose(logits.grad.numpy(), (1 / 3 - target.numpy()) / 2, rtol=1e-14)


def test_the_module_takes_probabilities_and_sends_a_gradient_to_a_target_that_wants_one():
    teacher = tg.tensor([[2.0, 0.0, -1.0]], requires_grad=True)
    student = tg.tensor([[0.5, 0.5, 0.0]], requires_grad=True)
    loss = tg.nn.CrossEntropyLoss()(student, teacher.softmax(dim=1))
    loss.backward()
    assert teacher.grad is not None and student.grad is not None
    # d loss / d y_c = -log_softmax(student)_c, then through the teacher's softmax
    y = teacher.softmax(dim=1).numpy()[0]
    g = -student.log_softmax(dim=1).numpy()[0]
    np.testing.assert_allclose(teacher.grad.numpy()[0], y * (g - (y * g).sum()), rtol=1e-12)


def test_ignore_index_with_probabilities_is_refused_as_in_pytorch():
    logits = tg.randn(2, 3)
    with pytest.raises(ValueError) as err:
        F.cross_entropy(logits, np.full((2, 3), 1 / 3), ignore_index=1)  # soft with ignore
    assert str(err.value) == (
        "cross_entropy: ignore_index=1 leaves out class indices, but this target holds "
        "class probabilities (a float target of the logits' shape (2, 3))\n"
        f"  built at: {site_of('# soft with ignore')}\n"
        "  hint: give the left-out rows zero probability, or pass class indices"
    )


@pytest.mark.parametrize("ignore_index", [-100, -1, -5])
def test_a_negative_ignore_index_names_no_class_and_passes_as_in_pytorch(ignore_index):
    # copied code often sets ignore_index=-1; PyTorch refuses only 0 and above here
    logits = tg.tensor(np.random.default_rng(1).standard_normal((3, 4)))
    probs = np.full((3, 4), 0.25)
    loss = F.cross_entropy(logits, probs, ignore_index=ignore_index)
    assert loss.item() == F.cross_entropy(logits, probs).item()
    module = tg.nn.CrossEntropyLoss(ignore_index=ignore_index)
    assert module(logits, probs).item() == loss.item()


def test_label_smoothing_outside_0_1_is_refused_for_probabilities_too():
    with pytest.raises(ValueError, match="label_smoothing must be between 0.0 and 1.0, got 1.5"):
        F.cross_entropy(tg.randn(2, 3), np.full((2, 3), 1 / 3), label_smoothing=1.5)


CASES = list(
    itertools.product(
        ["mean", "sum", "none"],  # reduction
        [None, [0.2, 1.0, 3.0, 0.5]],  # weight
        [0.0, 0.3],  # label_smoothing
        [(6, 4), (4,), (0, 4)],  # logits' shape (a batch, one example, an empty batch)
    )
)


@pytest.mark.parametrize("reduction, weight, smoothing, shape", CASES)
def test_values_and_gradients_match_pytorch(reduction, weight, smoothing, shape):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(len(shape) * 7 + shape[0])
    logits = rng.standard_normal(shape) * 2
    probs = rng.random(shape)
    probs /= np.maximum(probs.sum(axis=-1, keepdims=True), 1e-12)
    options = {"reduction": reduction, "label_smoothing": smoothing}
    ours_x, ours_y = tg.tensor(logits, requires_grad=True), tg.tensor(probs, requires_grad=True)
    theirs_x = torch.tensor(logits, requires_grad=True)
    theirs_y = torch.tensor(probs, requires_grad=True)
    ours = F.cross_entropy(ours_x, ours_y, weight=weight, **options)
    w = None if weight is None else torch.tensor(weight, dtype=torch.float64)
    theirs = torch.nn.functional.cross_entropy(theirs_x, theirs_y, weight=w, **options)
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=1e-12, atol=1e-15)
    if ours.numel() and np.isfinite(ours.numpy()).all():
        ours.sum().backward()
        theirs.sum().backward()
        np.testing.assert_allclose(ours_x.grad.numpy(), theirs_x.grad.numpy(), rtol=1e-11)
        np.testing.assert_allclose(ours_y.grad.numpy(), theirs_y.grad.numpy(), rtol=1e-11)


@pytest.mark.parametrize("smoothing", [0.0, 0.25])
def test_a_weight_that_requires_grad_gets_pytorchs_gradient(smoothing):
    # with probabilities the loss is differentiable in the class weights, and PyTorch
    # sends them a gradient (with class indices it refuses a weight that wants one)
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    logits, probs = rng.standard_normal((4, 3)), rng.dirichlet(np.ones(3), size=4)
    weight = np.array([0.5, 1.0, 2.0])
    ours_w = tg.tensor(weight, requires_grad=True)
    theirs_w = torch.tensor(weight, requires_grad=True)
    ours = F.cross_entropy(tg.tensor(logits), probs, weight=ours_w, label_smoothing=smoothing)
    theirs = torch.nn.functional.cross_entropy(
        torch.tensor(logits), torch.tensor(probs), weight=theirs_w, label_smoothing=smoothing
    )
    ours.backward()
    theirs.backward()
    np.testing.assert_allclose(ours.item(), theirs.item(), rtol=1e-13)
    np.testing.assert_allclose(ours_w.grad.numpy(), theirs_w.grad.numpy(), rtol=1e-12)


def test_a_float32_target_with_float64_logits_matches_pytorch():
    torch = pytest.importorskip("torch")
    logits = np.random.default_rng(3).standard_normal((3, 5))
    probs = np.full((3, 5), 0.2, dtype=np.float32)
    ours = F.cross_entropy(tg.tensor(logits), tg.tensor(probs))
    theirs = torch.nn.functional.cross_entropy(torch.tensor(logits), torch.tensor(probs))
    assert str(ours.dtype) == "float64"
    np.testing.assert_allclose(ours.item(), theirs.item(), rtol=1e-7)
