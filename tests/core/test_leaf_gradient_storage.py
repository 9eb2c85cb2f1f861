"""A leaf keeps a gradient no one else holds as its `.grad` without copying it (as PyTorch's
AccumulateGrad does), and copies every other: changing one `.grad` in place must never
change another leaf's `.grad`, a hook's tensor, a saved value or the gradient passed in."""

import numpy as np

import tinygrad_edu as tg


def _leaves(*shapes):
    rng = np.random.default_rng(0)
    return [tg.tensor(rng.standard_normal(s), requires_grad=True) for s in shapes]


def test_two_leaves_sent_the_same_gradient_get_separate_grads():
    a, b = _leaves((3,), (3,))
    (a + b).sum().backward()  # Add sends its gradient unchanged to both inputs
    a.grad.add_(1.0)
    np.testing.assert_array_equal(b.grad.numpy(), np.ones(3))
    np.testing.assert_array_equal(a.grad.numpy(), 2 * np.ones(3))


def test_a_leaf_used_through_clone_and_expand_and_reshape_keeps_its_own_gradient():
    a, b, c = _leaves((3,), (1, 3), (6,))
    y = a.clone() * 1.0 + b.expand(2, 3).sum(0) + c.reshape(2, 3).sum(0)
    g = tg.ones(3)
    y.backward(g)
    for t in (a, b, c):
        t.grad.mul_(0.0)
    np.testing.assert_array_equal(g.numpy(), np.ones(3))  # the gradient given is unchanged


def test_a_gradient_given_to_backward_is_not_kept_as_a_leafs_grad():
    (a,) = _leaves((3,))
    g = tg.tensor([1.0, 2.0, 3.0])
    a.backward(g)  # the root is the leaf itself: its .grad must be a copy of g
    a.grad.zero_()
    np.testing.assert_array_equal(g.numpy(), [1.0, 2.0, 3.0])


def test_a_hook_on_the_leaf_keeps_the_gradient_it_was_shown():
    a, w = _leaves((2, 3), (3, 4))
    seen = []
    w.register_hook(lambda g: seen.append(g))
    (a @ w).sum().backward()
    before = seen[0].numpy().copy()
    w.grad.zero_()
    np.testing.assert_array_equal(seen[0].numpy(), before)


def test_a_learners_rule_that_returns_an_array_it_keeps_is_copied():
    kept = np.array([5.0, 6.0])

    class Constant(tg.Function):  # returns the same array on every backward
        @staticmethod
        def forward(ctx, x):
            return x * 1.0

        @staticmethod
        def backward(ctx, g):
            return kept

    (a,) = _leaves((2,))
    Constant.apply(a).sum().backward()
    a.grad.zero_()
    np.testing.assert_array_equal(kept, [5.0, 6.0])


def test_a_kept_gradient_still_accumulates_over_two_backward_passes():
    x, w = _leaves((4, 3), (3, 2))
    first = (x @ w).sum()
    first.backward()
    kept = w.grad
    (x @ w).sum().backward()  # the second pass adds into the same .grad tensor
    assert w.grad is kept
    np.testing.assert_allclose(w.grad.numpy(), 2 * x.detach().numpy().sum(0)[:, None] * np.ones(2))


def test_the_stepper_shows_each_leaf_gradient_as_it_arrived():
    x, w = _leaves((4, 3), (3, 2))
    steps = list(tg.debug.backward_steps((x @ w).sum()))
    shown = [(s.grad_output, s.leaf_grad) for s in steps if s.is_leaf]
    w.grad.zero_()  # changing .grad afterwards does not change what the steps showed
    x.grad.zero_()
    assert len(shown) == 2 and all(np.abs(g).sum() > 0 and np.abs(k).sum() > 0 for g, k in shown)


def test_one_new_array_sent_to_two_leaves_by_a_package_rule_is_copied_for_one_of_them():
    class Twice(tg.Function):  # a rule of the package's kind, sending one new array twice
        __module__ = "tinygrad_edu.core.ops.test_twice"  # trusted as the package's own

        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, g):
            h = g * 2.0  # new, not a view: a leaf may keep it, but only one leaf
            return h, h

    assert Twice._own_rule
    a, b = _leaves((3,), (3,))
    Twice.apply(a, b).sum().backward()
    a.grad.add_(1.0)
    np.testing.assert_array_equal(b.grad.numpy(), 2 * np.ones(3))
    tg.core.function.OPS.pop("Twice", None)
