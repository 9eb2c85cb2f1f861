"""The ops of issue 30, each checked against PyTorch: one case is a small function written
once for both libraries, `case(lib)`, where `lib.t(values, grad=...)` makes an input.

`test_ops.py` runs every case under torch and tinygrad_edu and compares what it returns
(values, dtypes and shapes), the gradients of every input made with `grad=True` (against
torch.autograd, and against central differences with tg.gradcheck), and, for a case
marked `refused`, that both libraries raise (and, where `says` is given, the exact first
line of our error). docs/pytorch_compat.md lists the ops from this table (`doc_lines`),
so the page names only what is checked here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Case:
    names: tuple  # PyTorch's spellings: "torch.remainder", "Tensor.remainder", "x % y"
    fn: Callable
    refused: str = ""  # what PyTorch refuses here (both must raise), or "" for values
    backward: bool = True  # compare gradients of the grad=True inputs
    key: str = field(default="")
    unsupported: str = ""  # what PyTorch computes and tinygrad_edu refuses, by name
    gradcheck: bool = True  # False where finite differences straddle a kink (a clip at eps)
    says: str = ""  # for a refusal: the first line of our error, exactly


CASES: list[Case] = []


def case(
    *names: str, refused="", backward=True, unsupported="", gradcheck=True, says=""
) -> Callable:
    def register(fn: Callable) -> Callable:
        CASES.append(Case(names, fn, refused, backward, fn.__name__, unsupported, gradcheck, says))
        return fn

    return register


RNG = np.random.default_rng(30)


def reseed() -> None:
    """Each run of a case draws the same inputs: the test runs it once per library."""
    global RNG
    RNG = np.random.default_rng(30)


def vals(*shape: int, lo: float = -3.0, hi: float = 3.0) -> np.ndarray:
    return np.round(RNG.uniform(lo, hi, shape), 3)


def ints(*shape: int, lo: int = -7, hi: int = 8) -> np.ndarray:
    return RNG.integers(lo, hi, shape)


def nonzero_ints(*shape: int) -> np.ndarray:
    x = ints(*shape)
    return np.where(x == 0, 3, x)


# --- family 1: arithmetic -------------------------------------------------------------------

A, B = vals(3, 4), vals(4, lo=0.5, hi=2.5) * np.array([1, -1, 1, -1])
IA, JA = ints(3, 4), nonzero_ints(4)


@case("x % y", "Tensor.remainder", "torch.remainder")
def remainder_float(lib):
    return lib.t(A, grad=True) % lib.t(B, grad=True), lib.remainder(lib.t(A, grad=True), 1.5)


@case("x % y", "Tensor.remainder", "torch.remainder")
def remainder_int(lib):
    x = lib.t(IA)
    return x % lib.t(JA), x % 3, x % -4, 7 % lib.t(JA), x.remainder(2.5), lib.arange(10) % 3


@case("x % y", refused="boolean tensors")
def remainder_bool(lib):
    return lib.t([True, False]) % lib.t([True, True])


@case("x % y", refused="integer division by zero")
def remainder_int_zero(lib):
    return lib.t(IA) % 0


@case("Tensor.fmod", "torch.fmod")
def fmod(lib):
    x = lib.t(A, grad=True)
    return lib.fmod(x, lib.t(B, grad=True)), lib.t(IA).fmod(lib.t(JA)), x.fmod(-1.25)


@case("x // y", "Tensor.floor_divide", "torch.floor_divide", backward=False)
def floor_divide(lib):
    x = lib.t(IA)
    return x // lib.t(JA), x // 3, lib.floor_divide(lib.t(A), lib.t(B)), 9 // lib.t(JA)


@case("x // y", refused="the backward of floor_divide (no derivative)")
def floor_divide_backward(lib):
    x = lib.t(A, grad=True)
    (x // 2).sum().backward()


@case("Tensor.div", "torch.div", "Tensor.true_divide", "torch.true_divide")
def div_rounding(lib):
    x, y = lib.t(A, grad=True), lib.t(B, grad=True)
    i, j = lib.t(IA), lib.t(JA)
    return (
        lib.div(x, y, rounding_mode="trunc"),
        x.div(y, rounding_mode="floor"),
        lib.div(i, j, rounding_mode="trunc"),
        i.div(j, rounding_mode="floor"),
        lib.true_divide(x, y),
        i.div(3, rounding_mode="trunc"),
    )


@case("Tensor.lerp", "torch.lerp")
def lerp(lib):
    a, b = lib.t(A, grad=True), lib.t(vals(3, 4), grad=True)
    return lib.lerp(a, b, 0.3), a.lerp(b, lib.t(vals(4, lo=0, hi=1), grad=True))


@case("Tensor.addcmul", "torch.addcmul", "Tensor.addcdiv", "torch.addcdiv")
def addcmul_addcdiv(lib):
    x, a, b = lib.t(A, grad=True), lib.t(vals(3, 4), grad=True), lib.t(B, grad=True)
    return lib.addcmul(x, a, b, value=0.5), x.addcdiv(a, b, value=-2), lib.addcdiv(x, a, b)


@case("Tensor.clamp", "torch.clamp")
def clamp_tensor_bounds(lib):
    x = lib.t(A, grad=True)
    lo, hi = lib.t(vals(4, lo=-2, hi=0), grad=True), lib.t(vals(3, 1, lo=0, hi=2), grad=True)
    return lib.clamp(x, min=lo, max=hi), x.clamp(min=lo), x.clamp(max=hi), x.clamp(hi, lo)


@case("x & y", "x | y", "x ^ y", "~x", "Tensor.bitwise_and", "torch.bitwise_and")
def bitwise(lib):
    i, j, m = lib.t(IA), lib.t(JA), lib.t(IA) > 0
    n = lib.t(JA) < 2
    return (
        i & j, i | 5, i ^ j, ~i, m & n, m | n, m ^ n, ~m,
        lib.bitwise_and(i, j), i.bitwise_or(j), lib.bitwise_xor(m, n), lib.bitwise_not(i),
    )  # fmt: skip


@case("x & y", refused="bitwise ops on float tensors")
def bitwise_float(lib):
    return lib.t(A) & lib.t(A)


@case("Tensor.logical_and", "torch.logical_and", "torch.logical_or", "torch.logical_not")
def logical(lib):
    i, x = lib.t(IA), lib.t(A)
    return (
        lib.logical_and(i, x), i.logical_or(x > 0), lib.logical_not(i), lib.logical_xor(i, x),
        x.logical_not(),
    )  # fmt: skip


@case("Tensor.sign", "torch.sign", "Tensor.trunc", "torch.trunc", "Tensor.frac", "torch.frac")
def sign_trunc_frac(lib):
    x, z = lib.t(A, grad=True), lib.t([0.0, -0.0, 2.0, -3.0])  # z: at the jumps
    i = lib.t(IA)
    return (
        x.sign(),
        lib.trunc(x),
        lib.frac(x),
        lib.sign(i),
        i.trunc(),
        lib.fix(x),
        z.sign(),
        z.frac(),
    )


@case("Tensor.remainder_", "Tensor.floor_divide_", "Tensor.trunc_", "Tensor.clamp_")
def arithmetic_inplace(lib):
    i = lib.t(IA)
    i.remainder_(4)
    j = lib.t(IA)
    j //= 3
    x = lib.t(A)
    x.trunc_()
    y = lib.t(A)
    y %= 1.25
    z = lib.t(A)
    z.clamp_(min=lib.t(vals(4, lo=-1, hi=0)), max=lib.t(vals(3, 1, lo=0, hi=1)))
    return i, j, x, y, z


@case("Tensor.remainder_", refused="a float result stored in an int tensor")
def inplace_float_into_int(lib):
    return lib.t(IA).remainder_(2.5)


@case("Tensor.lerp", refused="integer tensors")
def lerp_ints(lib):
    return lib.t(IA).lerp(lib.t(IA), 0.5)


# --- family 2: shapes and indexing ----------------------------------------------------------

C = vals(3, 4, 5)


@case("Tensor.flip", "torch.flip", "Tensor.fliplr", "torch.fliplr", "Tensor.flipud")
def flip(lib):
    x = lib.t(C, grad=True)
    m = lib.t(A, grad=True)
    return x.flip(0), lib.flip(x, (0, 2)), x.flip(dims=[-1]), lib.fliplr(m), m.flipud()


@case("Tensor.flip", refused="a dim out of range")
def flip_bad_dim(lib):
    return lib.t(A).flip(2)


@case("Tensor.flip", refused="no dims")
def flip_no_dims(lib):
    return lib.t(A).flip()


@case("Tensor.roll", "torch.roll")
def roll(lib):
    x = lib.t(C, grad=True)
    return x.roll(1, 0), lib.roll(x, (2, -1), (1, 2)), x.roll(3), lib.t(IA).roll(-2, 1)


@case("Tensor.rot90", "torch.rot90")
def rot90(lib):
    x = lib.t(C, grad=True)
    return x.rot90(), lib.rot90(x, 2, (1, 2)), x.rot90(-1, [0, 2]), x.rot90(4)


@case("Tensor.diag", "torch.diag", "Tensor.diagonal", "torch.diagonal", "torch.diag_embed")
def diagonals(lib):
    v, m, x = lib.t(vals(4), grad=True), lib.t(A, grad=True), lib.t(C, grad=True)
    return (
        lib.diag(v), v.diag(1), lib.diag(v, -2), m.diag(), lib.diag(m, 1), m.diag(-1),
        m.diagonal(), x.diagonal(1, 0, 2), lib.diagonal(x, -1, 2, 1),
        lib.diag_embed(m), lib.diag_embed(m, 1, 0, 2), lib.t(IA).diag(),
    )  # fmt: skip


@case("Tensor.diag", "Tensor.diagonal")
def diagonal_is_a_view(lib):
    m = lib.t(A)
    d = m.diagonal()
    d.mul_(10)  # writes into m, as PyTorch's view does
    e = m.diag()
    e.mul_(0)  # diag of a matrix is a copy: m is unchanged
    return m, d


@case("Tensor.tril", "torch.tril", "Tensor.triu", "torch.triu", "Tensor.tril_", "Tensor.triu_")
def triangles(lib):
    x = lib.t(C, grad=True)
    y, z = lib.t(A), lib.t(A)
    y.tril_(1)
    z.triu_(-1)
    return x.tril(), lib.triu(x, 1), x.tril(-1), lib.tril(lib.t(IA)), y, z


@case("torch.eye")
def eye(lib):
    return lib.eye(3), lib.eye(2, 4), lib.eye(4, 2, dtype=lib.int64), lib.eye(3, 3)


@case("Tensor.nonzero", "torch.nonzero", "Tensor.argwhere", "torch.argwhere")
def nonzero(lib):
    i, x = lib.t(IA), lib.t(A) > 0
    v = lib.t([0, 3, 0, 5])
    n, z = lib.t(3.0), lib.t(0.0)
    return (
        i.nonzero(), lib.nonzero(x), lib.nonzero(v, as_tuple=True), i.argwhere(), v.nonzero(),
        n.nonzero(), z.nonzero(), n.nonzero(as_tuple=True), z.nonzero(as_tuple=True),
    )  # fmt: skip


@case("Tensor.masked_select", "torch.masked_select", "x[mask]", "x[mask] = v")
def masked(lib):
    x = lib.t(A, grad=True)
    mask = lib.t(A) > 0
    y = x * 1
    y[mask] = 0.0
    z = x * 1
    z[~mask] = lib.t(vals(int((A <= 0).sum())), grad=True)
    col = lib.t([True, False, True, True])  # broadcast over the rows
    return x.masked_select(mask), lib.masked_select(x, col), x[mask], y, z, x[:, col]


@case("Tensor.index_select", "torch.index_select")
def index_select(lib):
    x = lib.t(C, grad=True)
    idx = lib.t([2, 0, 2])
    return x.index_select(0, idx), lib.index_select(x, 2, lib.t([4, 1])), x.index_select(-2, idx)


@case("Tensor.index_select", refused="a float index")
def index_select_float(lib):
    return lib.t(C).index_select(0, lib.t([0.0, 1.0]))


@case("Tensor.index_add_", "Tensor.index_add", "torch.index_add")
def index_add(lib):
    x, src = lib.t(A, grad=True), lib.t(vals(3, 3), grad=True)
    idx = lib.t([1, 3, 1])
    y = lib.t(A)
    y.index_add_(1, idx, lib.t(vals(3, 3)), alpha=2)
    return x.index_add(1, idx, src), lib.index_add(x, 0, lib.t([2, 2]), src[:2, :1].expand(2, 4)), y


@case("Tensor.index_add_", refused="a source of another dtype")
def index_add_dtype(lib):
    return lib.t(IA).index_add(0, lib.t([1, 0]), lib.t(A[:2]))


SRC = vals(2, 4)
IDX0 = np.array([[2, 0, 1, 2], [0, 1, 0, 1]])


@case(
    "Tensor.scatter",
    "torch.scatter",
    "Tensor.scatter_",
    "Tensor.scatter_add",
    "Tensor.scatter_add_",
)
def scatter(lib):
    x, src = lib.t(A, grad=True), lib.t(SRC, grad=True)
    idx = lib.t(IDX0[:1])  # one row: no place is written twice (PyTorch's order is undefined then)
    y = lib.t(A)
    y.scatter_(1, lib.t([[3], [0], [1]]), 9.5)
    w = lib.zeros(3, 4, dtype=lib.float64)
    w.scatter_add_(0, lib.t(IDX0), lib.t(SRC))
    return (
        x.scatter(0, idx, src[:1]), lib.scatter(x, 1, lib.t([[1, 3]]), src[:1, :2]), y,
        x.scatter_add(0, lib.t(IDX0), src), lib.scatter_add(x, 1, lib.t(IDX0), src), w,
        lib.zeros(5, dtype=lib.int64).scatter_add(0, lib.t([1, 1, 4]), lib.t([1, 1, 1])),
    )  # fmt: skip


@case("Tensor.scatter_reduce", "torch.scatter_reduce")
def scatter_reduce(lib):
    x, src = lib.t(A, grad=True), lib.t(SRC, grad=True)
    idx = lib.t(IDX0)
    out = []
    for how in ("sum", "mean", "amax", "amin"):
        for inc in (True, False):
            out.append(x.scatter_reduce(0, idx, src, how, include_self=inc))
    counts = lib.zeros(4, dtype=lib.int64)
    out.append(counts.scatter_reduce(0, lib.t([0, 3, 3, 3]), lib.t([5, 1, 2, 7]), "amax"))
    return out


@case("Tensor.take_along_dim", "torch.take_along_dim")
def take_along_dim(lib):
    x = lib.t(A, grad=True)
    order = lib.t(np.argsort(A, axis=1))
    return (
        lib.take_along_dim(x, order, 1),
        x.take_along_dim(lib.t([[0], [2]])[:1], 0),
        lib.take_along_dim(x, lib.t([5, 0])),
    )


@case("Tensor.repeat_interleave", "torch.repeat_interleave")
def repeat_interleave(lib):
    x = lib.t(A, grad=True)
    return (
        x.repeat_interleave(2),
        lib.repeat_interleave(x, 3, dim=0),
        x.repeat_interleave(lib.t([1, 0, 2, 1]), dim=1),
    )


@case("Tensor.repeat_interleave", "torch.repeat_interleave")
def repeat_interleave_tensor_counts(lib):
    x = lib.t(A, grad=True)
    return (
        x.repeat_interleave(lib.t([3, 1, 0]), dim=0, output_size=4),
        lib.repeat_interleave(x, lib.t([2]), dim=-1),  # one count for every slice
        x.repeat_interleave(lib.t(2)),  # a 0-d count, flattened
        x.repeat_interleave(lib.t(np.arange(12) % 3)),
        x.repeat_interleave(lib.t(np.array([2, 0, 1], np.int32)), dim=0),
        lib.repeat_interleave(lib.t([[1.5, 2.5]], grad=True), 2, dim=1, output_size=4),
        lib.t(4.0, grad=True).repeat_interleave(3),
    )


@case("Tensor.repeat_interleave", "torch.repeat_interleave")
def repeat_interleave_counts_only(lib):
    return (
        lib.repeat_interleave(lib.t([2, 0, 3])),  # each index as often as its count
        lib.repeat_interleave(lib.t(np.array([1, 2], np.int32))),  # keeps the counts' dtype
        lib.repeat_interleave(lib.t([1, 1, 2]), output_size=4),
        lib.repeat_interleave(lib.t(np.zeros(0, np.int64))),
    )


RI = "repeat_interleave: "


@case(
    "Tensor.repeat_interleave",
    "torch.repeat_interleave",
    refused="counts that are not a vector (one argument)",
    says=f"{RI}with one argument it takes a vector of counts, got shape (1, 2)",
)
def repeat_interleave_counts_matrix(lib):
    return lib.repeat_interleave(lib.t([[1, 2]]))


@case(
    "Tensor.repeat_interleave",
    "torch.repeat_interleave",
    refused="counts that are not a vector (one argument)",
    says=f"{RI}with one argument it takes a vector of counts, got shape ()",
)
def repeat_interleave_counts_number(lib):
    return lib.repeat_interleave(lib.t(3))


@case(
    "Tensor.repeat_interleave",
    "torch.repeat_interleave",
    refused="float, bool or int16 counts",
    says=f"{RI}repeats must hold int64 or int32 counts, got float64",
)
def repeat_interleave_float_counts(lib):
    return lib.t(A).repeat_interleave(lib.t([1.0, 2.0, 1.0]), dim=0)


@case(
    "Tensor.repeat_interleave",
    "torch.repeat_interleave",
    refused="float, bool or int16 counts",
    says=f"{RI}repeats must hold int64 or int32 counts, got bool",
)
def repeat_interleave_bool_counts(lib):
    return lib.repeat_interleave(lib.t([True, False]))


@case(
    "Tensor.repeat_interleave",
    "torch.repeat_interleave",
    refused="float, bool or int16 counts",
    says=f"{RI}repeats must hold int64 or int32 counts, got int16",
)
def repeat_interleave_int16_counts(lib):
    return lib.t(A).repeat_interleave(lib.t(np.array([1, 2, 1], np.int16)), dim=0)


@case(
    "Tensor.repeat_interleave",
    "torch.repeat_interleave",
    refused="negative counts",
    says=f"{RI}repeats must not be negative, got [1, -2, 0]",
)
def repeat_interleave_negative(lib):
    return lib.t(A).repeat_interleave(lib.t([1, -2, 0]), dim=0)


@case(
    "Tensor.repeat_interleave",
    "torch.repeat_interleave",
    refused="negative counts",
    says=f"{RI}repeats must not be negative, got -1",
)
def repeat_interleave_negative_int(lib):
    return lib.t(A).repeat_interleave(-1, dim=1)


@case(
    "Tensor.repeat_interleave",
    "torch.repeat_interleave",
    refused="a count per slice that does not fit the dim",
    says=f"{RI}repeats has 2 counts but the tensor has 4 along dim 1",
)
def repeat_interleave_wrong_count(lib):
    return lib.t(A).repeat_interleave(lib.t([1, 2]), dim=1)


@case(
    "Tensor.repeat_interleave",
    "torch.repeat_interleave",
    refused="counts with two axes",
    says=f"{RI}repeats must have no axis or one, got shape (1, 3)",
)
def repeat_interleave_counts_2d(lib):
    return lib.t(A).repeat_interleave(lib.t([[1, 2, 1]]), dim=0)


@case(
    "Tensor.repeat_interleave",
    "torch.repeat_interleave",
    refused="an output_size that is not the total",
    says=f"{RI}output_size=5, but the repeats make 4 along dim 0",
)
def repeat_interleave_output_size(lib):
    return lib.t(A).repeat_interleave(lib.t([3, 1, 0]), dim=0, output_size=5)


@case(
    "Tensor.repeat_interleave",
    "torch.repeat_interleave",
    refused="an output_size that is not the total",
    says=f"{RI}output_size=7, but the repeats make 8 along dim 1",
)
def repeat_interleave_output_size_int(lib):
    return lib.t(A).repeat_interleave(2, dim=1, output_size=7)


@case(
    "Tensor.repeat_interleave",
    "torch.repeat_interleave",
    refused="a float or a list as repeats",
    says=f"{RI}repeats must be an int or an int tensor, got list [1, 2, 1]",
)
def repeat_interleave_list(lib):
    return lib.t(A).repeat_interleave([1, 2, 1], dim=0)


@case(
    "Tensor.repeat_interleave",
    "torch.repeat_interleave",
    refused="a float or a list as repeats",
    says=f"{RI}repeats must be an int or an int tensor, got float 2.5",
)
def repeat_interleave_float(lib):
    return lib.t(A).repeat_interleave(2.5)


@case(
    "Tensor.repeat_interleave",
    "torch.repeat_interleave",
    refused="a dim given for a number",
    says=f"{RI}dim=0 given for a number (shape ())",
)
def repeat_interleave_number_dim(lib):
    return lib.t(4.0).repeat_interleave(3, dim=0)


@case("Tensor.unflatten", "torch.unflatten", "Tensor.movedim", "torch.movedim", "Tensor.moveaxis")
def unflatten_movedim(lib):
    x = lib.t(C, grad=True)
    return (
        x.unflatten(2, (5, 1)), lib.unflatten(x, 1, (2, -1)), x.movedim(0, -1),
        lib.movedim(x, (0, 1), (2, 0)), x.moveaxis(1, 0),
    )  # fmt: skip


@case("torch.meshgrid")
def meshgrid(lib):
    a, b, c = lib.t(vals(3), grad=True), lib.t(vals(2), grad=True), lib.t([1.0, 2, 3, 4])
    ij = lib.meshgrid(a, b, indexing="ij")
    xy = lib.meshgrid(a, b, c, indexing="xy")
    i, j = lib.meshgrid(lib.arange(3), lib.arange(2), indexing="xy")
    return ij, xy, lib.meshgrid([a, c], indexing="ij"), i, j


@case("torch.meshgrid", refused="tensors of different dtypes")
def meshgrid_dtypes(lib):
    return lib.meshgrid(lib.t([1.0, 2.0]), lib.t([1, 2]), indexing="ij")


# --- family 3: reductions and search --------------------------------------------------------

D = np.array([[0.5, -1.2, 2.0, 0.0, 1.5], [2.5, 0.7, -0.4, 3.0, -2.0], [1.0, 0.0, 0.8, -1.5, 0.3]])


@case("Tensor.cumsum", "torch.cumsum", "Tensor.cumprod", "torch.cumprod")
def cumsum_cumprod(lib):
    x, d = lib.t(C, grad=True), lib.t(D, grad=True)  # D has zeros: cumprod's hard case
    i = lib.t(IA)
    return (
        x.cumsum(0), lib.cumsum(x, dim=-1), lib.cumprod(d, 1), d.cumprod(0), i.cumsum(1),
        i.cumprod(0), lib.t([True, False, True]).cumsum(0), lib.t(C).cumsum(1, dtype=lib.float32),
        lib.t(IA).int().cumsum(0), lib.t(2.5, grad=True).cumprod(0),
    )  # fmt: skip


@case("Tensor.cumsum", "torch.cumsum", "Tensor.cumprod", "torch.cumprod")
def cumprod_second_order(lib):
    d = lib.t(D, grad=True)
    with lib.enable_grad():  # gradcheck runs the case under no_grad
        (g,) = lib.autograd.grad((d.cumprod(1) * lib.t(A[:, :1])).sum(), d, create_graph=True)
    return g


TIES = np.array([[3.0, 1.0, 2.0, 1.0, 3.0, np.nan], [0.5, 0.5, -1.0, 2.0, 0.5, 2.0]])


@case("Tensor.sort", "torch.sort", "Tensor.argsort", "torch.argsort")
def sort(lib):
    x, t = lib.t(D, grad=True), lib.t(TIES)
    i = lib.t(IA)
    return (
        x.sort(), lib.sort(x, 0, descending=True), t.sort(stable=True),
        t.sort(descending=True, stable=True), lib.argsort(t, stable=True),
        t.argsort(dim=0, descending=True, stable=True), i.sort(dim=1, stable=True),
        lib.sort(i, descending=True, stable=True), lib.t([True, False, True]).argsort(stable=True),
    )  # fmt: skip


@case("Tensor.topk", "torch.topk")
def topk_nan(lib):
    """topk orders as sort does: nan is the largest (topk had its own order, nan last)."""
    x = lib.t([[1.0, np.nan, 3.0, -2.0], [0.5, 0.25, -1.0, np.inf]], grad=True)
    return x.topk(2), lib.topk(x, 3, largest=False), x.topk(1, dim=0)


@case("Tensor.unique", "torch.unique")
def unique(lib):
    i = lib.t(IA)
    return (
        lib.unique(i), i.unique(return_counts=True), lib.unique(i, return_inverse=True),
        lib.unique(lib.t(TIES[1]), return_inverse=True, return_counts=True),
    )  # fmt: skip


@case("Tensor.bincount", "torch.bincount", "Tensor.histc", "torch.histc")
def bincount_histc(lib):
    labels = lib.t([0, 3, 1, 1, 3, 3])
    w = lib.t([0.5, 1.0, 2.0, 0.25, 1.0, 1.0])
    x = lib.t(vals(50))
    return (
        labels.bincount(), lib.bincount(labels, minlength=6), labels.bincount(w),
        lib.bincount(labels, weights=w.float()), x.histc(), lib.histc(x, bins=7, min=-2, max=2),
        lib.histc(lib.t([1.0, 2.0, 1.0, 4.0]), bins=4), lib.t([0.0, 1.0, 3.0]).histc(3, 0, 3),
    )  # fmt: skip


@case("Tensor.bincount", refused="negative counts")
def bincount_negative(lib):
    return lib.t([1, -1]).bincount()


@case("Tensor.kthvalue", "torch.kthvalue", "Tensor.median", "torch.median", "Tensor.mode")
def order_statistics(lib):
    x = lib.t(C, grad=True)
    i = lib.t([[1, 2, 2, 3, 3, 1], [4, 4, 0, 0, 0, 4]])
    return (
        x.kthvalue(2), lib.kthvalue(x, 3, 0, keepdim=True), x.median(), lib.median(x, 1),
        x.median(dim=0, keepdim=True), lib.t(vals(6), grad=True).median(), i.mode(), lib.mode(i, 0),
        lib.median(lib.t([1.0, float("nan"), 0.5])),
    )  # fmt: skip


@case("Tensor.kthvalue", refused="bool tensors (median, kthvalue)")
def median_bool(lib):
    return lib.t([True, False, True]).median()


@case("Tensor.kthvalue", refused="k larger than the dim")
def kthvalue_too_big(lib):
    return lib.t(A).kthvalue(5)


@case("Tensor.logsumexp", "torch.logsumexp")
def logsumexp(lib):
    x = lib.t(C, grad=True)
    big = lib.t([[1000.0, 1000.0], [-1000.0, 0.0]], grad=True)
    return x.logsumexp(1), lib.logsumexp(x, (0, 2)), x.logsumexp(-1, keepdim=True), big.logsumexp(1)


@case("torch.var_mean", "torch.std_mean")
def var_std_mean(lib):
    x = lib.t(C, grad=True)
    return (
        lib.var_mean(x), lib.var_mean(x, 1), lib.std_mean(x, dim=(0, 2), keepdim=True),
        lib.var_mean(x, 0, unbiased=False), lib.std_mean(x, 2, correction=0),
    )  # fmt: skip


@case("Tensor.count_nonzero", "torch.count_nonzero")
def count_nonzero(lib):
    i, x = lib.t(IA), lib.t(D)
    return (
        i.count_nonzero(),
        lib.count_nonzero(x, dim=1),
        x.count_nonzero((0, 1)),
        (x > 0).count_nonzero(0),
    )


@case("torch.searchsorted", "torch.bucketize")
def searches(lib):
    edges = lib.t([-1.0, 0.0, 0.5, 2.0])
    x = lib.t(A)
    rows = lib.t([[1, 3, 5, 7], [2, 4, 6, 8]])
    return (
        lib.searchsorted(edges, x), lib.searchsorted(edges, x, right=True),
        lib.searchsorted(rows, lib.t([[3, 6], [1, 9]])), lib.searchsorted(rows, lib.t([[3], [4]]), side="right"),
        lib.bucketize(x, edges), lib.bucketize(x, edges, right=True),
        lib.bucketize(lib.t([3, 6, 9]), lib.t([1, 3, 5, 7]), out_int32=True),
    )  # fmt: skip


# --- family 4: linear algebra and friends ---------------------------------------------------

M1, M2, V = vals(3, 4), vals(4, 5), vals(4)


@case("torch.einsum")
def einsum(lib):
    a, b, v = lib.t(M1, grad=True), lib.t(M2, grad=True), lib.t(V, grad=True)
    x = lib.t(C, grad=True)
    return (
        lib.einsum("ij,jk->ik", a, b), lib.einsum("ij,j->i", a, v), lib.einsum("i,i->", v, v),
        lib.einsum("bij->bji", x), lib.einsum("bij,jk->bik", x.transpose(1, 2)[:, :, :4], b),
        lib.einsum("ij", a), lib.einsum("ji", a), lib.einsum("i,j->ij", v, v),
        lib.einsum("...j,jk->...k", x.transpose(1, 2)[..., :4], b), lib.einsum("ij->", a),
        lib.einsum("ij,ij->i", [a, a]), lib.einsum("ii->i", lib.t(np.eye(3) * 2)),
        lib.einsum("abc->b", x),
    )  # fmt: skip


@case("torch.einsum", unsupported="the gradient of a letter repeated within one operand")
def einsum_diagonal_gradient(lib):
    return lib.einsum("ii->i", lib.t(np.eye(3), grad=True))


@case("torch.einsum", refused="operands of different dtypes")
def einsum_dtypes(lib):
    return lib.einsum("ij,jk->ik", lib.t(IA), lib.t(M2))


@case("Tensor.outer", "torch.outer", "Tensor.kron", "torch.kron", "Tensor.trace", "torch.trace")
def outer_kron_trace(lib):
    v, w, a = lib.t(V, grad=True), lib.t(vals(3), grad=True), lib.t(M1, grad=True)
    s = lib.t(vals(4, 4), grad=True)
    return (
        lib.outer(v, w), w.outer(v), lib.kron(a, lib.t(vals(2, 2), grad=True)), v.kron(w),
        lib.kron(a, w), s.trace(), lib.trace(lib.t(IA[:, :3])), lib.trace(a),
    )  # fmt: skip


@case("torch.tensordot")
def tensordot(lib):
    x, b = lib.t(C, grad=True), lib.t(vals(4, 5, 2), grad=True)
    a = lib.t(M1, grad=True)
    return (
        lib.tensordot(x, b, dims=2), lib.tensordot(a, lib.t(M2, grad=True), 1),
        lib.tensordot(x, b, dims=([1, 2], [0, 1])), lib.tensordot(x, a, dims=([0], [0])),
        lib.tensordot(a, a, 0),
    )  # fmt: skip


@case("torch.cdist", "torch.linalg.norm", "torch.linalg.vector_norm")
def cdist_norms(lib):
    x1, x2 = lib.t(vals(4, 3), grad=True), lib.t(vals(5, 3), grad=True)
    same = lib.t(np.array([[1.0, 2.0], [1.0, 2.0], [0.0, 0.0]]), grad=True)  # 0 distances
    a = lib.t(M1, grad=True)
    return (
        lib.cdist(x1, x2), lib.cdist(x1, x2, p=1), lib.cdist(same, same), lib.cdist(x1, x2, 3),
        lib.cdist(lib.t(C, grad=True), lib.t(vals(3, 2, 5), grad=True)),
        lib.linalg.norm(a), lib.linalg.norm(a, dim=1), lib.linalg.norm(a, "fro"),
        lib.linalg.norm(a, 1), lib.linalg.norm(a, float("inf")), lib.linalg.norm(a, -1, keepdim=True),
        lib.linalg.vector_norm(a), lib.linalg.vector_norm(a, 1, dim=0),
        lib.linalg.vector_norm(a, float("inf"), dim=(0, 1)), lib.linalg.vector_norm(a, 3, 1, True),
        lib.linalg.vector_norm(a, 0.5), lib.linalg.vector_norm(same, dim=1),
    )  # fmt: skip


@case(
    "torch.cdist",
    "torch.linalg.norm",
    unsupported="matrix norms from singular values (ord=2, -2, 'nuc')",
)
def spectral_norm(lib):
    return lib.linalg.norm(lib.t(M1), 2)


def _functional(lib):
    return lib.nn.functional


# gradcheck: the zero row's norm is clipped at eps, and central differences step past it
@case("torch.nn.functional.one_hot", "torch.nn.functional.normalize", gradcheck=False)
def one_hot_normalize(lib):
    fn = _functional(lib)
    x = lib.t(np.vstack([M1, np.zeros((1, 4))]), grad=True)  # a zero row: gradient 0, not nan
    return (
        fn.one_hot(lib.t([0, 2, 1, 2])), fn.one_hot(lib.t([[1], [3]]), num_classes=5),
        fn.normalize(x), fn.normalize(x, dim=0), fn.normalize(x, p=1, dim=1),
    )  # fmt: skip


@case("torch.nn.functional.one_hot", refused="float labels")
def one_hot_float(lib):
    return _functional(lib).one_hot(lib.t([0.0, 1.0]))


@case("torch.nn.functional.one_hot", refused="a label past num_classes")
def one_hot_too_big(lib):
    return _functional(lib).one_hot(lib.t([0, 4]), num_classes=3)


@case("torch.nn.functional.cosine_similarity", "torch.nn.functional.pairwise_distance")
def cosine_similarity(lib):
    fn = _functional(lib)
    a, b = lib.t(M1, grad=True), lib.t(vals(3, 4), grad=True)
    return (
        fn.cosine_similarity(a, b), fn.cosine_similarity(a, b, dim=0),
        fn.cosine_similarity(a, lib.t(V, grad=True), dim=-1), fn.pairwise_distance(a, b),
        fn.pairwise_distance(a, b, p=1, keepdim=True),
    )  # fmt: skip


@case("torch.multinomial", "Tensor.multinomial", "torch.Generator")
def seeded_sampling(lib):
    # makemore's sampling loop: the draws differ between the libraries, what holds for any
    # draw is compared (same seed, same draws; shapes, dtypes, zero-probability rows)
    p = lib.t([[0.0, 0.2, 0.8, 0.0], [0.5, 0.0, 0.0, 0.5]])
    g1 = lib.Generator().manual_seed(2147483647)
    g2 = lib.Generator().manual_seed(2147483647)
    a = lib.multinomial(p, num_samples=6, replacement=True, generator=g1)
    b = p.multinomial(6, True, generator=g2)
    w = lib.randn((27, 27), generator=g1)
    ix = lib.randint(0, 10, (32,), generator=g1)
    one = lib.multinomial(p[0], num_samples=1, replacement=True, generator=g1).item()
    no_repeat = lib.multinomial(lib.t([0.1, 0.2, 0.3, 0.4]), 4, generator=g1)
    u1 = lib.empty(5).uniform_(-1, 1, generator=lib.Generator().manual_seed(7))
    u2 = lib.empty(5).uniform_(-1, 1, generator=lib.Generator().manual_seed(7))
    n1 = lib.empty(5).normal_(generator=lib.Generator().manual_seed(8))
    n2 = lib.empty(5).normal_(generator=lib.Generator().manual_seed(8))
    return (
        a.shape, str(a.dtype).replace("torch.", ""), bool((a == b).all()),
        bool(((a[0] == 1) | (a[0] == 2)).all()), bool(((a[1] == 0) | (a[1] == 3)).all()),
        w.shape, str(w.dtype).replace("torch.", ""), ix.shape, bool(((ix >= 0) & (ix < 10)).all()),
        one in (1, 2), sorted(no_repeat.tolist()), bool((u1 == u2).all()), bool((n1 == n2).all()),
        bool(((u1 >= -1) & (u1 < 1)).all()),
    )  # fmt: skip


@case("torch.multinomial", refused="more samples than categories without replacement")
def multinomial_too_many(lib):
    return lib.multinomial(lib.t([0.5, 0.5]), 3)
