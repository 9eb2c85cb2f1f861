"""The ops of issue 30, each checked against PyTorch: one case is a small function written
once for both libraries, `case(lib)`, where `lib.t(values, grad=...)` makes an input.

`test_ops.py` runs every case under torch and tinygrad_edu and compares what it returns
(values, dtypes and shapes), the gradients of every input made with `grad=True`
(against torch.autograd, and against central differences with tg.gradcheck), and,
for a case marked `refused`, that both libraries raise. docs/pytorch_compat.md lists
the ops from this table (`doc_lines`), so the page names only what is checked here.
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


CASES: list[Case] = []


def case(*names: str, refused: str = "", backward: bool = True) -> Callable:
    def register(fn: Callable) -> Callable:
        key = f"{fn.__name__}"
        CASES.append(Case(names, fn, refused, backward, key))
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
    return i, j, x, y
