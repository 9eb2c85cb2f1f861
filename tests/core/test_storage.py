"""Views share storage with their base, and in-place changes give PyTorch's values and
gradients or an InplaceError (core/views.py).

Each program below is written once against a library `lib` (tinygrad_edu, or torch when
it is installed) and returns the numbers it produced; the two must agree, and where
PyTorch raises we must raise a clear error. The expected numbers are also written out,
so the file checks the semantics on machines without torch too.
"""

import re

import numpy as np
import pytest

import tinygrad_edu as tg

try:
    import torch
except ImportError:  # the expected values below still check everything
    torch = None


def val(t):
    return np.array(t.detach().numpy())


def leaf(lib, values):
    if lib is tg:
        return tg.tensor(values, requires_grad=True)
    return torch.tensor(values, dtype=torch.float64, requires_grad=True)


def zeros(lib, *shape):
    return tg.zeros(*shape) if lib is tg else torch.zeros(*shape, dtype=torch.float64)


def write_through_a_view_of_a_view(lib):
    x = zeros(lib, 2, 3)
    x[0][1] = 5.0  # the char-RNN habit: x[0] is a view, so this writes into x
    x[1][-1] = 7.0
    return val(x)


def change_a_view_in_place(lib):
    a = leaf(lib, [1.0, 2.0, 3.0])
    x = a * 1
    v = x[1:]
    v.mul_(a[1:])
    x.sum().backward()
    return val(x), val(a.grad)


def change_the_base_then_use_an_old_view(lib):
    a = leaf(lib, [1.0, 2.0, 3.0])
    x = a * 1
    v = x[1:]
    x.mul_(2)
    (v * v).sum().backward()
    return val(v), val(a.grad)


def change_a_transposed_view_of_a_row(lib):
    a = leaf(lib, [[1.0, 2.0], [3.0, 4.0]])
    x = a * 1
    x.T[0].mul_(10)
    (x * x).sum().backward()
    return val(x), val(a.grad)


def change_a_reshaped_view(lib):
    a = leaf(lib, [1.0, 2.0, 3.0, 4.0])
    x = a * 1
    r = x.reshape(2, 2)
    r[1].add_(r[0])
    (x**2).sum().backward()
    return val(x), val(a.grad)


def setitem_with_tensors_that_require_grad(lib):
    w = leaf(lib, [1.0, 2.0, 3.0])
    x = zeros(lib, 2, 3)
    x[0] = w * 2
    x[1, 1:] = w[:2]
    weights = tg.arange(6.0) if lib is tg else torch.arange(6.0, dtype=torch.float64)
    (x * weights.reshape(2, 3)).sum().backward()
    return val(x), val(w.grad)


def setitem_with_an_index_list(lib):
    a = leaf(lib, [1.0, 2.0, 3.0])
    x = a * 3
    x[[0, 2]] = (
        tg.tensor([5.0, 6.0]) if lib is tg else torch.tensor([5.0, 6.0], dtype=torch.float64)
    )
    (x * x).sum().backward()
    return val(x), val(a.grad)


def a_base_that_did_not_need_grad_gains_it(lib):
    w = leaf(lib, [1.0, 2.0, 3.0])
    b = zeros(lib, 3)
    v = b[1:]
    b.add_(w)
    (v * 3).sum().backward()
    return val(v), v.requires_grad, val(w.grad)


def multiply_by_a_sum_of_its_own_view(lib):
    a = leaf(lib, [1.0, 2.0, 3.0])
    x = a * 2
    x.mul_(x[1:].sum())
    x.sum().backward()
    return val(x), val(a.grad)


def a_zero_d_view_writes_through(lib):
    x = zeros(lib, 3)
    x[1].add_(4.0)
    return val(x)


def change_a_view_under_no_grad(lib):
    a = leaf(lib, [1.0, 2.0, 3.0])
    x = a * 1
    v = x[:2]
    with tg.no_grad() if lib is tg else torch.no_grad():
        v.mul_(10)  # the numbers change; the graph does not
    x.sum().backward()
    return val(x), val(a.grad)


def augmented_assignment_through_indices(lib):
    a = leaf(lib, [1.0, 2.0, 3.0])
    w = leaf(lib, [5.0])
    x = a * 2
    x[0] += w[0]  # x[0] is a view: += changes it, then setitem writes the same numbers
    x[1:] *= 3
    (x * x).sum().backward()
    return val(x), val(a.grad), val(w.grad), x._version


def write_a_row_of_an_expanded_tensor(lib):
    x = zeros(lib, 3)
    grid = x.expand(2, 3)
    grid[0] = (
        tg.tensor([5.0, 6.0, 7.0])
        if lib is tg
        else torch.tensor([5.0, 6.0, 7.0], dtype=torch.float64)
    )
    grid[1].add_(1.0)  # one row is one copy of each number: allowed
    return val(x)


def add_the_tensor_to_itself(lib):
    x = zeros(lib, 3) + 1.0
    x.add_(x)  # the very same numbers: no partial overlap
    return val(x)


def subtract_the_tensor_expanded_to_its_own_shape(lib):
    x = zeros(lib, 1, 3) + 1.0
    x.sub_(x.expand(1, 3))  # the same window on memory: numpy's zero stride on the size-1
    return val(x)  # axis is never used, and PyTorch keeps x's stride there (fuzz seed 912666)


def subtract_a_row_with_another_shape(lib):
    x = zeros(lib, 1, 3)
    x.sub_(x[0])  # the same numbers seen through another shape: PyTorch refuses it


def write_a_strided_slice_of_itself(lib):
    x = zeros(lib, 2)[0:1]
    x[0:1:2] = x  # the same one number, through another stride: PyTorch refuses it (seed 913354)


def retain_the_grad_of_a_vectors_t(lib):
    x = leaf(lib, [1.0, 2.0, 3.0])
    y = x.t()  # a vector's .t() is a view of it, not the vector itself (fuzz seed 950752)
    y.retain_grad()
    ((y * 2.0).sum() + (x * x).sum()).backward()  # y's gradient is its own path's only
    return val(y.grad), val(x.grad)


def hook_on_a_vectors_t_that_is_not_used(lib):
    x = leaf(lib, [1.0, 2.0, 3.0])
    x.t().register_hook(lambda g: g + 1.0)  # the view's hook: no gradient passes the view
    (x * x).sum().backward()  # (fuzz seed 950393)
    return val(x.grad)


def fill_an_expanded_tensor(lib):
    x = zeros(lib, 1)
    x.expand(3).fill_(2.0)  # one value written everywhere: not ambiguous
    return val(x)


CASES = {
    fill_an_expanded_tensor: ([2],),
    augmented_assignment_through_indices: ([7, 12, 18], [28, 144, 216], [14], 4),
    write_a_row_of_an_expanded_tensor: ([6, 7, 8],),
    add_the_tensor_to_itself: ([2, 2, 2],),
    retain_the_grad_of_a_vectors_t: ([2, 2, 2], [4, 6, 8]),
    hook_on_a_vectors_t_that_is_not_used: ([2, 4, 6],),
    subtract_the_tensor_expanded_to_its_own_shape: ([[0, 0, 0]],),
    write_through_a_view_of_a_view: ([[0, 5, 0], [0, 0, 7]],),
    change_a_view_in_place: ([1, 4, 9], [1, 4, 6]),
    change_the_base_then_use_an_old_view: ([4, 6], [0, 16, 24]),
    change_a_transposed_view_of_a_row: ([[10, 2], [30, 4]], [[200, 4], [600, 8]]),
    change_a_reshaped_view: ([1, 2, 4, 6], [10, 16, 8, 12]),
    setitem_with_tensors_that_require_grad: ([[2, 4, 6], [0, 1, 2]], [4, 7, 4]),
    setitem_with_an_index_list: ([5, 6, 6], [0, 36, 0]),
    a_base_that_did_not_need_grad_gains_it: ([2, 3], True, [0, 3, 3]),
    multiply_by_a_sum_of_its_own_view: ([20, 40, 60], [20, 44, 44]),
    a_zero_d_view_writes_through: ([0, 4, 0],),
    change_a_view_under_no_grad: ([10, 20, 3], [1, 1, 1]),
}


def _same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if isinstance(w, (bool, int)) and not isinstance(g, np.ndarray):
            assert g == w
        else:
            np.testing.assert_allclose(g, np.asarray(w, dtype=float), rtol=1e-12)


@pytest.mark.parametrize("program", list(CASES), ids=lambda f: f.__name__)
def test_views_and_in_place_changes_give_pytorchs_numbers(program):
    got = program(tg)
    got = got if isinstance(got, tuple) else (got,)
    _same(got, CASES[program])
    if torch is not None:
        ref = program(torch)
        _same(got, ref if isinstance(ref, tuple) else (ref,))


@pytest.mark.torch
@pytest.mark.skipif(torch is None, reason="needs torch")
def test_the_expected_numbers_are_pytorchs():
    for program, want in CASES.items():
        ref = program(torch)
        _same(ref if isinstance(ref, tuple) else (ref,), want)


def view_of_a_leaf(lib):
    leaf(lib, [1.0, 2.0, 3.0])[0].mul_(2)


def view_made_under_no_grad(lib):
    x = leaf(lib, [1.0, 2.0, 3.0]) * 1
    with tg.no_grad() if lib is tg else torch.no_grad():
        v = x[1:]
    v.mul_(2)


def broadcast_view(lib):
    (leaf(lib, [1.0, 2.0, 3.0]) * 1).broadcast_to((2, 3)).mul_(2)


def saved_view_then_base_changed(lib):
    x = leaf(lib, [1.0, 2.0, 3.0]) * 1
    v = x[:2]
    z = v * v  # saves v, which shares x's version counter
    x.add_(1)
    z.sum().backward()


def shifted_copy_onto_itself(lib):
    x = zeros(lib, 5)
    x[1:] = x[:-1]


def add_own_transpose(lib):
    x = zeros(lib, 2, 2)
    x.add_(x.T)


def empty_view_of_a_leaf(lib):
    leaf(lib, [1.0, 2.0, 3.0])[0:0].mul_(2)


def add_into_an_empty_expand_of_a_leaf(lib):
    w = leaf(lib, [[]]).reshape(0, 1).detach().requires_grad_()
    w.expand(0, 3).add_(1.0)  # no number changes, yet it is a view of a leaf (fuzz seed 414311)


def write_a_column_of_an_expanded_tensor(lib):
    grid = zeros(lib, 3).expand(2, 3)
    grid[:, 0] = 9.0


def zero_an_expanded_view_in_a_graph(lib):
    y = leaf(lib, [1.5]) * 1
    y.expand(3).zero_()  # allowed; its gradient is refused in backward, as in PyTorch
    (y * 3).sum().backward()


def change_a_piece_of_unbind_in_place(lib):
    x = leaf(lib, [1.0, 2.0, 3.0]) * 1
    first, _, _ = x.unbind()
    first.add_(1.0)  # PyTorch never rebases the views unbind/split/chunk return


def write_into_a_chunk(lib):
    x = leaf(lib, [1.0, 2.0, 3.0, 4.0]) * 1
    x.chunk(2)[1][0] = 5.0  # a view of a piece is a piece too


def use_a_piece_after_its_base_changed(lib):
    x = leaf(lib, [1.0, 2.0, 3.0]) * 1
    second = x.unbind()[1]
    x.mul_(2.0)
    return second * 2.0


def use_a_piece_changed_under_no_grad(lib):
    x = leaf(lib, [1.0, 2.0, 3.0, 4.0]) * 1
    left, _ = x.split(2)
    with lib.no_grad():
        left.zero_()  # allowed (nothing is recorded), but the piece's graph is now stale
    return left * 2.0


REFUSED = {
    zero_an_expanded_view_in_a_graph: (
        "CopySlices.backward: a broadcast view (from expand or broadcast_to) was filled in place"
    ),
    shifted_copy_onto_itself: (
        "setitem: the value being written shares some of its numbers with this tensor "
        "(shape (5,)), the tensor being written, so the result would depend on the order of "
        "the writes"
    ),
    add_own_transpose: (
        "add_: the value being written shares some of its numbers with this tensor (shape (2, 2))"
    ),
    subtract_a_row_with_another_shape: (
        "sub_: the value being written shares some of its numbers with this tensor (shape (1, 3))"
    ),
    write_a_strided_slice_of_itself: (
        "setitem: the value being written shares some of its numbers with this tensor (shape (1,))"
    ),
    empty_view_of_a_leaf: (
        "mul_: this tensor (shape (0,)) is a view of this tensor (shape (3,)), a leaf, that "
        "requires grad"
    ),
    add_into_an_empty_expand_of_a_leaf: (
        "add_: this tensor (shape (0, 3)) is a view of this tensor (shape (0, 1)), a leaf, that "
        "requires grad"
    ),
    write_a_column_of_an_expanded_tensor: (
        "setitem: this tensor (shape (2, 3)) is a broadcast view: several of its elements are "
        "one number in memory"
    ),
    view_of_a_leaf: (
        "mul_: this tensor (shape ()) is a view of this tensor (shape (3,)), a leaf, that "
        "requires grad; changing it in place would hide the change from autograd"
    ),
    view_made_under_no_grad: (
        "mul_: this tensor (shape (2,)) is a view made inside `with tg.no_grad():` and is being "
        "changed in place with grad mode on; autograd cannot tell which of the two you meant"
    ),
    broadcast_view: (
        "mul_: this tensor (shape (2, 3)) is a broadcast view: several of its elements are one "
        "number in memory, so changing them in place is ambiguous"
    ),
    saved_view_then_base_changed: (
        "MulBackward.backward: a tensor this op saved for backward was modified in place at "
    ),
    change_a_piece_of_unbind_in_place: (
        "add_: this tensor (shape ()) is one of the views unbind() returned (or a view of one), "
        "and PyTorch does not let those change in place"
    ),
    write_into_a_chunk: (
        "setitem: this tensor (shape (2,)) is one of the views split() returned (or a view of "
        "one), and PyTorch does not let those change in place"
    ),
    use_a_piece_after_its_base_changed: (
        "unbind: this tensor (shape ()) is one of the views unbind() returned (or a view of "
        "one), and its base was changed in place since; as in PyTorch, such a view cannot "
        "follow the change"
    ),
    use_a_piece_changed_under_no_grad: (
        "split: this tensor (shape (2,)) is one of the views split() returned (or a view of "
        "one), and its base was changed in place since"
    ),
}


def test_pieces_of_a_tensor_outside_the_graph_change_in_place_as_any_view():
    x = tg.tensor([1.0, 2.0, 3.0])  # needs no grad: nothing to rebase, as in PyTorch
    first, second, _ = x.unbind()
    first.add_(10.0)
    x.mul_(2.0)
    np.testing.assert_array_equal(x.numpy(), [22.0, 4.0, 6.0])
    assert (second * 1).item() == 4.0
    with tg.no_grad():
        y = tg.tensor([1.0, 2.0], requires_grad=True) * 1
    y.chunk(2)[0].zero_()  # made with grad mode off: an ordinary view
    np.testing.assert_array_equal(y.numpy(), [0.0, 2.0])


@pytest.mark.parametrize("program", list(REFUSED), ids=lambda f: f.__name__)
def test_what_pytorch_refuses_is_refused_with_a_clear_message(program):
    with pytest.raises(tg.InplaceError) as info:
        program(tg)
    assert str(info.value).startswith(REFUSED[program])
    assert re.search(r"built at: .*test_storage\.py, line \d+", str(info.value))
    if torch is not None:
        with pytest.raises(RuntimeError):
            program(torch)


def test_a_refused_change_leaves_the_numbers_alone():
    x = tg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    with pytest.raises(tg.InplaceError):
        x.T.mul_(2)
    np.testing.assert_array_equal(x.numpy(), [[1.0, 2.0], [3.0, 4.0]])


def test_views_share_storage_and_version_with_their_base_and_copies_do_not():
    x = tg.zeros(2, 3)
    for view in (x[0], x[:, 1:], x.T, x.reshape(3, 2), x.reshape(-1), x[..., 1], x[1, 2]):
        assert np.shares_memory(view.numpy(), x.numpy()) and view._vc is x._vc
    for copy in (x[[0, 1]], x[x > 0], x.clone(), x * 1):
        assert not np.shares_memory(copy.numpy(), x.numpy()) and copy._vc is not x._vc
    before = x._vc[0]
    x[0, 0] = 1.0
    assert x._vc[0] == before + 1


def test_detach_shares_storage_but_not_the_graph():
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    x = a * 3
    y = x * x  # saves x
    d = x.detach()
    d[0] = 100.0
    assert x.numpy().tolist() == [100.0, 6.0] and d.grad_fn is None
    with pytest.raises(tg.InplaceError, match="modified in place"):
        y.sum().backward()  # x's saved value changed behind autograd's back: caught


def test_tensor_copies_its_data_and_from_numpy_shares_it():
    arr = np.array([1.0, 2.0])
    copied, shared, as_t = tg.tensor(arr), tg.from_numpy(arr), tg.as_tensor(arr)
    arr[0] = 9.0
    assert copied.numpy().tolist() == [1.0, 2.0]
    assert shared.numpy().tolist() == [9.0, 2.0] and as_t.numpy() is arr
    shared[1] = 5.0
    assert arr.tolist() == [9.0, 5.0]
    assert tg.as_tensor(copied) is copied
    assert tg.as_tensor(arr, dtype="float32").dtype == np.float32


def test_a_graph_keeps_its_values_when_the_callers_array_changes_later():
    arr = np.array([1.0, 2.0, 3.0])
    x = tg.tensor(arr, requires_grad=True)
    loss = (x * x).sum()
    arr[:] = 0.0
    loss.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0, 6.0])


def test_a_read_only_array_is_copied_by_tensor_and_refused_in_place_by_from_numpy():
    arr = np.arange(3.0)
    arr.flags.writeable = False
    t = tg.tensor(arr)
    t[0] = 5.0  # its own copy
    shared = tg.from_numpy(arr)
    with pytest.raises(tg.InplaceError) as info:
        shared[0] = 5.0
    assert str(info.value).startswith(
        "setitem: the numpy array behind this tensor (shape (3,)) is read-only, so it cannot be "
        "changed in place\n"
    )
    assert str(info.value).endswith(
        "hint: make a tensor with its own copy of the numbers: tg.tensor(array) copies"
    )


MOVES = {
    "unsqueeze(0)": lambda a: a.unsqueeze(0),
    "unsqueeze(-1)": lambda a: a.unsqueeze(-1),
    "squeeze()": lambda a: a.reshape(1, 2, 1, 3).squeeze(),
    "squeeze(2)": lambda a: a.reshape(1, 2, 1, 3).squeeze(2),
    "squeeze(1) of size 2": lambda a: a.reshape(1, 2, 1, 3).squeeze(1),
    "transpose(0, 1)": lambda a: a.transpose(0, 1),
    "permute(1, 0)": lambda a: a.permute(1, 0),
    "expand(2, 4)": lambda a: a[:, :1].expand(2, 4),
    "expand(3, -1, 4)": lambda a: a[:, :1].expand(3, -1, 4),
    "view(3, 2)": lambda a: a.view(3, 2),
    "flatten()": lambda a: a.flatten(),
}


@pytest.mark.parametrize("name", list(MOVES))
def test_pytorchs_movement_methods_are_views_with_pytorchs_shapes(name):
    x = tg.arange(6.0).reshape(2, 3)
    out = MOVES[name](x)
    assert out._view is not None and np.shares_memory(out.numpy(), x.numpy())
    if torch is not None:
        ref = MOVES[name](torch.arange(6.0, dtype=torch.float64).reshape(2, 3))
        assert out.shape == tuple(ref.shape)
        np.testing.assert_array_equal(out.numpy(), ref.numpy())


def test_view_refuses_what_needs_a_copy_and_names_reshape():
    x = tg.arange(6.0).reshape(2, 3)
    with pytest.raises(tg.ShapeError) as info:
        x.T.view(-1)
    assert str(info.value).startswith(
        "view: cannot view a tensor of shape (3, 2) as (-1,) without copying"
    )
    assert str(info.value).endswith("hint: use .reshape(...), which copies when it must")
    assert x.T.reshape(-1).numpy().tolist() == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]


def test_second_derivatives_flow_through_copyslices_and_indexput():
    def program(lib):
        a = leaf(lib, [1.0, 2.0, 3.0])
        x = a * a
        x[1:].mul_(a[:2])  # CopySlices
        y = zeros(lib, 2, 3)
        y[0] = x  # IndexPut
        y[1, ::2] = a[:2] * 3
        out = (y * y).sum()
        grad = tg.grad if lib is tg else torch.autograd.grad
        (g,) = grad(out, a, create_graph=True)
        (gg,) = grad(g.sum(), a)
        return out.item(), val(g), val(gg)

    got = program(tg)
    _same(got, (386.0, [54, 392, 432], [126, 724, 864]))
    if torch is not None:
        _same(got, program(torch))


@pytest.mark.parametrize("dims", [(0, 1), (1, 0)])
def test_second_derivatives_through_permute_keep_numpys_axis_order(dims):
    x = tg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    y = x.permute(*dims)
    (g,) = tg.grad((y * y * y).sum(), x, create_graph=True)
    (gg,) = tg.grad(g.sum(), x)
    np.testing.assert_allclose(g.numpy(), 3 * x.numpy() ** 2)
    np.testing.assert_allclose(gg.numpy(), 6 * x.numpy())


# `t[index] = value` where the value is a piece of `t` itself, as PyTorch decides it: a value
# of one number fills the region; any other loses its leading axes of size 1 and is expanded
# to the region, and is refused unless it then starts where the region starts with the same
# strides (a size-1 axis the expand adds gets PyTorch's stride, not numpy's 0). `None`: the
# write is refused; otherwise the numbers after it.
SETITEM_ONTO_ITSELF = [
    ((1, 2), "t[0:1:2] = t[-1]", None),  # fuzz seed 146372
    ((2, 2), "t[0:1:2] = t[0]", None),
    ((2, 3), "t[1:2:2] = t[1]", None),
    ((2, 2), "t[0, 0:1] = t[0:1, 0:1]", None),  # a (1, 1) value is one number, stride 0
    ((2, 2), "t[0:1:2, 0] = t[0, 0:1]", None),
    ((1, 2), "t[0:1] = t[-1]", [0.0, 1.0]),
    ((2, 2), "t[0:1] = t[0]", [0.0, 1.0, 2.0, 3.0]),
    ((2, 2), "t[0:2] = t[0, 0]", [0.0, 0.0, 0.0, 0.0]),
    ((2, 2), "t[0] = t[0, 0]", [0.0, 0.0, 2.0, 3.0]),
    ((2, 2), "t[0:1, 0:1] = t[0, 0]", [0.0, 1.0, 2.0, 3.0]),
    ((2, 2), "t[0] = t[0:1]", [0.0, 1.0, 2.0, 3.0]),
    ((1, 3), "t[0] = t[0:1]", [0.0, 1.0, 2.0]),
    ((2, 2), "t[0:1] = t[0][None]", [0.0, 1.0, 2.0, 3.0]),
    ((2, 1, 3), "t[0:1, 0:1] = t[0]", [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]),
    ((3,), "t[0:3:3] = t[0]", [0.0, 1.0, 2.0]),
]


@pytest.mark.parametrize("shape, statement, expected", SETITEM_ONTO_ITSELF)
@pytest.mark.parametrize("requires_grad", [False, True])
def test_setitem_of_a_piece_of_itself_is_written_or_refused_as_in_pytorch(
    shape, statement, expected, requires_grad
):
    libs = [tg] if torch is None else [tg, torch]
    for lib in libs:
        t = lib.arange(float(np.prod(shape))).reshape(*shape).double()
        if requires_grad:
            t = t.requires_grad_() * 1
        if expected is None:
            error = tg.InplaceError if lib is tg else RuntimeError
            with pytest.raises(error, match="shares some of its numbers|single memory location"):
                exec(statement, {"t": t})
        else:
            exec(statement, {"t": t})
            np.testing.assert_array_equal(val(t).ravel(), expected)
