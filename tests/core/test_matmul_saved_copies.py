"""A batched `a @ b` keeps for backward what PyTorch's matmul keeps.

PyTorch folds a batch into the rows of one `mm`, or runs `bmm` on both operands broadcast
to one batch axis. When that reshape must copy (a permuted operand, say), it saves the
copy: changing the operand in place afterwards is then fine, and a second derivative
still flows back through the copy. Where the reshape is a view, the change is refused.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tinygrad_edu as tg


def _program(lib, a_shape, a_perm, b_shape, b_perm, change, double):
    """a @ b on (possibly permuted) non-leaf operands, then `change` (a or b) doubled in
    place, then backward (or a double backward). Returns the leaves' grads, or "refused"."""
    leaves, operands = [], []
    for shape, perm in ((a_shape, a_perm), (b_shape, b_perm)):
        values = np.arange(1.0, np.prod(shape) + 1).reshape(shape) / 7
        leaf = lib.tensor(values, requires_grad=True)
        leaves.append(leaf)
        operands.append((leaf * 1.0).permute(*perm) if perm else leaf * 1.0)
    a, b = operands
    z = a @ b
    (a if change == "a" else b).mul_(2.0)
    try:
        if double:
            grad = tg.grad if lib is tg else lib.autograd.grad
            ga, gb = grad((z * z).sum(), leaves, create_graph=True)
            ((ga * ga).sum() + (gb * gb).sum()).backward()
        else:
            z.sum().backward()
    except RuntimeError as e:  # tg.InplaceError is a RuntimeError, as PyTorch's
        assert "in place" in str(e) or "inplace" in str(e)
        return "refused"
    return [np.asarray(t.grad.detach() if lib is not tg else t.grad.numpy()) for t in leaves]


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        # (3, 2, 4) @ (4, 5): a's batch folds into rows with no copy: a view is saved
        (((3, 2, 4), None, (4, 5), None, "a"), "refused"),
        # a permuted: folding its batch must copy, so the copy is saved
        (((4, 2, 3), (2, 1, 0), (4, 5), None, "a"), "computed"),
        # the batch broadcast on b (bmm): b's copy is saved, a is a view
        (((2, 3, 2, 4), None, (3, 4, 5), None, "b"), "computed"),
        (((2, 3, 2, 4), None, (3, 4, 5), None, "a"), "refused"),
        # plain matrices: the operands themselves are saved
        (((2, 4), (1, 0), (2, 5), None, "a"), "refused"),
    ],
)
def test_pytorchs_saved_copies_in_hand_picked_cases(case, expected):
    a_shape, a_perm, b_shape, b_perm, change = case
    ours = _program(tg, a_shape, a_perm, b_shape, b_perm, change, double=False)
    assert (ours == "refused") == (expected == "refused")


def test_the_saved_copy_holds_the_old_numbers_and_passes_second_derivatives():
    # d/db of sum((a @ b)^2) reads the saved a: its values from before the change. The
    # expected leaf gradients are PyTorch 2.13's for this program
    ga, gb = _program(tg, (4, 2, 3), (2, 1, 0), (4, 5), None, "a", double=True)
    torch = pytest.importorskip("torch")
    ta, tb = _program(torch, (4, 2, 3), (2, 1, 0), (4, 5), None, "a", double=True)
    np.testing.assert_allclose(ga, ta, rtol=1e-12)
    np.testing.assert_allclose(gb, tb, rtol=1e-12)


@st.composite
def _batched_pairs(draw):
    k, n, m = (draw(st.integers(1, 3)) for _ in range(3))
    dims = draw(st.tuples(st.integers(1, 4), st.integers(1, 4)).filter(lambda d: max(d) > 2))
    batch = draw(st.lists(st.integers(1, 3), min_size=max(dims) - 2, max_size=max(dims) - 2))
    shapes = []
    for d, rows in zip(dims, ((n, k), (k, m))):
        own = batch[len(batch) - max(d - 2, 0) :] if d > 2 else []
        own = [draw(st.sampled_from([1, size])) for size in own]
        shapes.append(tuple(own) + (rows if d > 1 else (k,)))
    perms = [draw(st.none() | st.permutations(range(len(s)))) for s in shapes]
    # a tensor of the inverse-permuted shape, permuted: the shape above, other strides
    sources = [
        tuple(s[i] for i in np.argsort(p)) if p else s for s, p in zip(shapes, perms, strict=True)
    ]
    return sources[0], perms[0], sources[1], perms[1], draw(st.sampled_from("ab"))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_batched_pairs(), double=st.booleans())
def test_in_place_after_a_batched_matmul_as_in_pytorch(case, double):
    torch = pytest.importorskip("torch")
    ours, theirs = (_program(lib, *case, double=double) for lib in (tg, torch))
    assert (ours == "refused") == (theirs == "refused"), (ours, theirs)
    if ours != "refused":
        for mine, other in zip(ours, theirs, strict=True):
            np.testing.assert_allclose(mine, other, rtol=1e-10, atol=1e-12)
