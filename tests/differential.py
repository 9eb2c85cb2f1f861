"""Differential testing: random programs run in tinygrad_edu and in PyTorch, compared.

A *program* is a list of steps on a pool of tensors: leaves, elementwise ops with
broadcasting, reductions, matmul, indexing, views (reshape, transpose, permute, expand,
squeeze, unsqueeze, detach), in-place ops on non-leaves and views (add_, mul_, setitem,
zero_), hooks and retain_grad, then a backward phase: one backward, two (gradients add
up), tg.grad, or double backward through create_graph.

`generate(rng)` draws a program from a `random.Random` (hypothesis supplies one in the
test suite, a seeded one in `scripts/fuzz_torch.py`). `run(program, lib)` interprets it
with one library and records every tensor's final values and requires_grad, the
leaves' gradients, and the first error with the step that raised it. `compare` says
whether the two records agree and, if not, how (`Mismatch.kind`). Where torch is not
installed, `fd_check` compares the gradients with finite differences instead.

The package never imports torch; only this test module does.
"""

from __future__ import annotations

import contextlib
import math
import random
import re
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import tinygrad_edu as tg

# --- programs ---------------------------------------------------------------------------

UNARY = (
    "neg",
    "exp",
    "log",
    "tanh",
    "relu",
    "sigmoid",
    "abs",
    "sqrt",
    "clip",
    "pow",
    "rpow",
    "softmax",
    "log_softmax",
    "clone",
)
SMOOTH_UNARY = ("neg", "exp", "tanh", "sigmoid", "pow", "rpow", "softmax", "log_softmax", "clone")
BINARY = ("add", "sub", "mul", "div", "rdiv", "where")
# where(a > 0, a, b) jumps where a crosses 0, and values on the grid are often exactly 0
SMOOTH_BINARY = ("add", "sub", "mul", "div", "rdiv")
INPLACE = ("add_", "sub_", "mul_", "div_", "setitem", "zero_", "fill_")
# drawn only with `more_ops=True` (so the programs of earlier campaigns' seeds stay the same)
MORE_INPLACE = ("copy_", "relu_", "exp_", "tanh_", "sigmoid_", "neg_", "clamp_")
UNARY_INPLACE = ("relu_", "exp_", "tanh_", "sigmoid_", "neg_")  # no operand
MORE_VIEWS = ("view", "flatten", "movedim", "unbind", "chunk", "t")
POWERS = (0.0, 1.0, 2.0, 3.0, 0.5, -1.0, 1.5)
BASES = (2.0, 0.5, 0.0)


@dataclass
class Program:
    steps: list = field(default_factory=list)
    phase: str = "backward"  # backward | twice | freed | grad | double | none
    outputs: list = field(default_factory=list)  # tensor ids summed (weighted) into the loss
    weights: list = field(default_factory=list)

    def __str__(self) -> str:
        lines = [
            f"t{s['out']} = {s['op']}({', '.join(f't{a}' for a in s['args'])}"
            f"{''.join(f', {k}={_show(v)}' for k, v in s['kw'].items())})"
            + ("  # no_grad" if s.get("nograd") else "")
            for s in self.steps
        ]
        lines.append(
            f"loss = sum(w * t for t in {[f't{i}' for i in self.outputs]}); phase {self.phase}"
        )
        return "\n".join(lines)


def _show(v: Any) -> str:
    if isinstance(v, np.ndarray):
        return np.array2string(v, precision=3, separator=",").replace("\n", "")
    return repr(v)


class _Gen:
    """Draws steps while tracking each tensor's shape and (roughly) requires_grad."""

    def __init__(
        self, rng: random.Random, inplace_only: bool, smooth: bool, more_ops: bool = False
    ) -> None:
        self.rng, self.smooth, self.more_ops = rng, smooth, more_ops
        self.np = np.random.default_rng(rng.getrandbits(32))
        self.inplace_only = inplace_only
        self.shapes: dict[int, tuple] = {}
        self.grad: dict[int, bool] = {}
        self.leaves: set[int] = set()
        self.steps: list = []

    def add(self, op: str, args: list, kw: dict, shape: tuple, grad: bool, **extra: Any) -> int:
        out = len(self.steps)
        self.steps.append({"op": op, "args": args, "kw": kw, "out": out, **extra})
        self.shapes[out], self.grad[out] = shape, grad
        return out

    def values(self, shape: tuple) -> np.ndarray:
        if self.rng.random() < 0.4:  # on a grid: ties, zeros and kinks happen
            return self.np.integers(-4, 5, size=shape) / 2.0
        return np.round(self.np.uniform(-2.0, 2.0, size=shape), 6)

    def shape(self) -> tuple:
        return tuple(self.rng.randint(1, 3) for _ in range(self.rng.choice((0, 1, 1, 2, 2, 3))))

    def leaf(self, shape: tuple | None = None, grad: bool | None = None) -> int:
        shape = self.shape() if shape is None else shape
        grad = self.rng.random() < 0.8 if grad is None else grad
        t = self.add("leaf", [], {"values": self.values(shape), "requires_grad": grad}, shape, grad)
        self.leaves.add(t)
        return t

    def pick(self, ndim_min: int = 0, prefer_nonleaf: bool = False) -> int | None:
        ids = [i for i, s in self.shapes.items() if len(s) >= ndim_min]
        if prefer_nonleaf:
            ids = [i for i in ids if i not in self.leaves] or ids
        return self.rng.choice(ids) if ids else None

    def partner(self, shape: tuple) -> int:
        """A tensor whose shape broadcasts with `shape` (from the pool, or a new leaf)."""
        ids = [i for i, s in self.shapes.items() if _broadcasts(s, shape)]
        if ids and self.rng.random() < 0.5:
            return self.rng.choice(ids)
        cut = self.rng.randint(0, len(shape))
        other = tuple(1 if self.rng.random() < 0.3 else n for n in shape[cut:])
        return self.leaf(other)

    # one kind of step each ------------------------------------------------------------

    def unary(self) -> None:
        a = self.pick()
        op = self.rng.choice(SMOOTH_UNARY if self.smooth else UNARY)
        shape, kw = self.shapes[a], {}
        if op in ("softmax", "log_softmax"):
            if not shape:
                return
            kw["axis"] = self.rng.randrange(-len(shape), len(shape))
        elif op == "clip":
            lo = self.rng.choice((-1.0, 0.0, -0.5, None))
            kw["lo"], kw["hi"] = lo, self.rng.choice((1.0, 0.5, None)) if lo is not None else 1.0
        elif op == "pow":
            kw["p"] = self.rng.choice(POWERS)
        elif op == "rpow":
            kw["c"] = self.rng.choice(BASES[:2] if self.smooth else BASES)
        self.add(op, [a], kw, shape, self.grad[a])

    def binary(self) -> None:
        a = self.pick()
        b = self.partner(self.shapes[a])
        if self.rng.random() < 0.5:
            a, b = b, a
        op = self.rng.choice(SMOOTH_BINARY if self.smooth else BINARY)
        kw = {"c": self.rng.choice((2.0, -1.5, 0.5))} if op == "rdiv" else {}
        if op == "rdiv":
            b = a
        self.add(
            op,
            [a, b],
            kw,
            np.broadcast_shapes(self.shapes[a], self.shapes[b]),
            self.grad[a] or self.grad[b],
        )

    def reduce(self) -> None:
        a = self.pick()
        shape = self.shapes[a]
        op = self.rng.choice(("sum", "mean") if self.smooth else ("sum", "mean", "max", "min"))
        axis: Any = None
        if shape and self.rng.random() < 0.7:
            axes = self.rng.sample(range(len(shape)), self.rng.randint(1, len(shape)))
            axis = axes[0] - len(shape) * self.rng.randint(0, 1) if len(axes) == 1 else tuple(axes)
        keep = self.rng.random() < 0.3 and (axis is not None or op in ("sum", "mean"))
        out = np.sum(np.zeros(shape), axis=axis, keepdims=keep).shape
        self.add(op, [a], {"axis": axis, "keepdims": keep}, out, self.grad[a])

    def matmul(self) -> None:
        a = self.pick(ndim_min=1)
        if a is None:
            return
        k = self.shapes[a][-1]
        shape = self.rng.choice(((k,), (k, self.rng.randint(1, 3))))
        b = next(
            (i for i, s in self.shapes.items() if s == shape and self.rng.random() < 0.5), None
        )
        b = self.leaf(shape) if b is None else b
        args = [a, b] if self.rng.random() < 0.7 else [b, a]
        sa, sb = self.shapes[args[0]], self.shapes[args[1]]
        if sa[-1] != (sb[-2] if len(sb) > 1 else sb[0]):
            args = [a, b]
            sa, sb = self.shapes[a], self.shapes[b]
        out = np.matmul(np.zeros(sa), np.zeros(sb)).shape
        self.add("matmul", args, {}, out, self.grad[a] or self.grad[b])

    def index(self, shape: tuple, write: bool = False) -> Any:
        kind = self.rng.random()
        if 0 in shape:  # an empty tensor (a mask that picked nothing): a slice of nothing
            return slice(None)
        if kind < 0.6:  # basic: ints and slices (a view)
            parts = []
            for n in shape[: self.rng.randint(1, len(shape))]:
                if self.rng.random() < 0.5:
                    parts.append(self.rng.randrange(-n, n))
                else:
                    start = self.rng.randint(0, n - 1)
                    parts.append(
                        slice(start, self.rng.randint(start + 1, n), self.rng.choice((1, 2)))
                    )
            return tuple(parts) if len(parts) > 1 or self.rng.random() < 0.5 else parts[0]
        if kind < 0.8:  # integer array on axis 0 (a copy); no repeats when writing
            n = shape[0]
            picks = (
                self.rng.sample(range(n), self.rng.randint(1, n))
                if write
                else [self.rng.randrange(n) for _ in range(self.rng.randint(1, 3))]
            )
            return np.array(picks, dtype=np.int64)
        return np.array([self.rng.random() < 0.5 for _ in range(shape[0])])  # a mask

    def getitem(self) -> None:
        a = self.pick(ndim_min=1)
        if a is None:
            return
        idx = self.index(self.shapes[a])
        self.add("getitem", [a], {"index": idx}, np.zeros(self.shapes[a])[idx].shape, self.grad[a])

    def view(self) -> None:
        a = self.pick()
        shape = self.shapes[a]
        op = self.rng.choice(
            ("reshape", "transpose", "permute", "expand", "unsqueeze", "squeeze", "detach", "T")
            + (MORE_VIEWS if self.more_ops else ())
        )
        kw: dict = {}
        out = shape
        if op in ("view", "flatten", "movedim", "unbind", "chunk", "t"):
            made = self._more_view(op, shape, kw)
            if made is None:
                return
            out = made
        elif op == "reshape":
            size = math.prod(shape)
            choices = [(-1,), (1,) + shape, shape + (1,)]
            choices += [(d, size // d) for d in range(2, size) if size % d == 0]
            kw["shape"] = self.rng.choice(choices)
            out = np.zeros(shape).reshape(kw["shape"]).shape
        elif op in ("transpose", "permute", "T"):
            if len(shape) < 2:
                return
            if op == "transpose":
                kw["a"], kw["b"] = self.rng.sample(range(len(shape)), 2)
                axes = list(range(len(shape)))
                axes[kw["a"]], axes[kw["b"]] = axes[kw["b"]], axes[kw["a"]]
            elif op == "permute":
                axes = self.rng.sample(range(len(shape)), len(shape))
                kw["dims"] = tuple(axes)
            else:
                if len(shape) != 2:
                    return
                axes = [1, 0]
            out = tuple(shape[i] for i in axes)
        elif op == "expand":
            out = tuple(
                self.rng.randint(2, 3) if n == 1 and self.rng.random() < 0.7 else n for n in shape
            )
            if self.rng.random() < 0.3:
                out = (2,) + out
            if not out:
                return
            kw["shape"] = out
        elif op == "unsqueeze":
            kw["dim"] = self.rng.randint(-len(shape) - 1, len(shape))
            out = np.expand_dims(np.zeros(shape), kw["dim"]).shape
        elif op == "squeeze":
            if not shape:
                return
            kw["dim"] = self.rng.randrange(len(shape))
            out = shape[: kw["dim"]] + shape[kw["dim"] + 1 :] if shape[kw["dim"]] == 1 else shape
        # NOTE: no views made under no_grad: PyTorch then reports requires_grad=True for a
        # view whose gradient reaches nothing (neither its .grad nor its base's), an
        # internal quirk tinygrad_edu does not copy (it reports False)
        self.add(op, [a], kw, out, self.grad[a] and op != "detach")

    def _more_view(self, op: str, shape: tuple, kw: dict) -> tuple | None:
        """The shape of a MORE_VIEWS view of `shape` (its arguments go in `kw`), or None."""
        if op == "view":  # as reshape; PyTorch refuses what needs a copy, and so must we
            size = math.prod(shape)
            choices = [(-1,), (1,) + shape, shape + (1,)]
            choices += [(d, size // d) for d in range(2, size) if size % d == 0]
            kw["shape"] = self.rng.choice(choices)
            return np.zeros(shape).reshape(kw["shape"]).shape
        if op == "flatten":
            return (math.prod(shape),)
        if not shape:
            return None
        if op == "t":
            return None if len(shape) > 2 else shape[::-1]
        if op == "movedim":
            kw["src"], kw["dst"] = self.rng.randrange(len(shape)), self.rng.randrange(len(shape))
            return np.moveaxis(np.zeros(shape), kw["src"], kw["dst"]).shape
        kw["dim"] = self.rng.randrange(-len(shape), len(shape))
        n = shape[kw["dim"]]
        if n == 0:
            return None  # no slice or piece to pick along an empty dim
        if op == "unbind":  # one of the slices along dim
            kw["pick"] = self.rng.randrange(n)
            return shape[: kw["dim"] % len(shape)] + shape[kw["dim"] % len(shape) + 1 :]
        kw["chunks"] = self.rng.randint(1, 3)  # chunk: one of the pieces along dim
        step = -(-n // kw["chunks"])  # PyTorch's pieces: ceil(n / chunks) each, the last less
        sizes = [min(step, n - i) for i in range(0, n, step)]
        kw["pick"] = self.rng.randrange(len(sizes))
        d = kw["dim"] % len(shape)
        return shape[:d] + (sizes[kw["pick"]],) + shape[d + 1 :]

    def inplace(self) -> None:
        a = self.pick(prefer_nonleaf=self.rng.random() < 0.9)
        shape = self.shapes[a]
        op = self.rng.choice(INPLACE + (MORE_INPLACE if self.more_ops else ()))
        kw: dict = {}
        args = [a]
        region = shape
        if op == "setitem":
            if not shape:
                return
            kw["index"] = self.index(shape, write=True)
            region = np.zeros(shape)[kw["index"]].shape
        if op == "copy_" or (op in ("add_", "sub_", "mul_", "setitem") and self.rng.random() < 0.6):
            ids = [
                i
                for i, s in self.shapes.items()
                if _broadcasts(s, region) and np.broadcast_shapes(s, region) == region
            ]
            b = (
                self.rng.choice(ids)
                if ids and self.rng.random() < 0.5
                else self.leaf(region[self.rng.randint(0, len(region)) :])
            )
            args.append(b)
            self.grad[a] = self.grad[a] or self.grad[b]
        elif op in ("add_", "sub_", "mul_", "div_", "setitem", "fill_"):
            kw["c"] = self.rng.choice((2.0, -0.5, 0.0, 1.5)) if op != "div_" else 2.0
        self.steps.append(
            {"op": op, "args": args, "kw": kw, "out": None, "nograd": self.rng.random() < 0.1}
        )

    def hook(self) -> None:
        a = self.pick(prefer_nonleaf=True)
        kind = self.rng.choice(("retain_grad", "hook_scale", "hook_add", "hook_none"))
        self.steps.append({"op": kind, "args": [a], "kw": {}, "out": None})


def generate(
    rng: random.Random,
    inplace_only: bool = False,
    smooth: bool = False,
    n_steps: int | None = None,
    more_ops: bool = False,
) -> Program:
    """A random program. `inplace_only`: every program changes a tensor in place (the
    campaign's hard cases); `smooth`: no kinks, views, in-place ops or hooks (what finite
    differences can check); `more_ops`: also copy_ and the views in MORE_VIEWS."""
    g = _Gen(rng, inplace_only, smooth, more_ops)
    for _ in range(rng.randint(1, 2)):
        g.leaf(grad=True)
    n = rng.randint(2, 7) if n_steps is None else n_steps
    kinds = [g.unary, g.binary, g.reduce, g.matmul, g.getitem]
    weights = [3, 3, 2, 1, 2]
    if not smooth:
        kinds += [g.view, g.inplace, g.hook]
        weights += [3, 3 if not inplace_only else 5, 1]
    for _ in range(n):
        rng.choices(kinds, weights)[0]()
    if inplace_only and not any(s["op"] in INPLACE + MORE_INPLACE for s in g.steps):
        g.inplace()
    made = [s["out"] for s in g.steps if s["out"] is not None and s["op"] != "leaf"]
    outputs = made[-rng.randint(1, 3) :] if made else [min(g.leaves)]
    phases = ("backward", "backward", "twice", "grad", "double", "freed")
    phase = "backward" if smooth else rng.choice(phases)
    weights_ = [np.round(g.np.uniform(-1, 1, size=g.shapes[o]), 3) for o in outputs]
    return Program(g.steps, phase, outputs, weights_)


def _broadcasts(a: tuple, b: tuple) -> bool:
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        return False
    return True


# --- the two libraries ------------------------------------------------------------------


class TG:
    name = "tinygrad_edu"
    tensor = staticmethod(lambda v, rg: tg.tensor(v, requires_grad=rg))
    const = staticmethod(lambda v: tg.tensor(v))
    no_grad = staticmethod(tg.no_grad)
    index = staticmethod(lambda i: i)
    numpy = staticmethod(lambda t: np.array(t.numpy()))
    grad_of = staticmethod(lambda t: None if t._grad is None else np.array(t._grad.numpy()))
    clip = staticmethod(lambda t, lo, hi: t.clip(lo, hi))
    sum = staticmethod(lambda t, axis, keep: t.sum(axis, keepdims=keep))
    mean = staticmethod(lambda t, axis, keep: t.mean(axis, keepdims=keep))
    max = staticmethod(lambda t, axis, keep: t.max(axis=axis, keepdims=keep))
    min = staticmethod(lambda t, axis, keep: t.min(axis=axis, keepdims=keep))
    where = staticmethod(tg.where)
    matmul = staticmethod(lambda a, b: a @ b)
    # the same read as PyTorch's side (torch_lib's refresh): reading `grad_fn` of a piece of
    # unbind/split whose base changed in place raises in both
    refresh = staticmethod(lambda t: t.grad_fn)

    @staticmethod
    def grad(outs, ins, create_graph):
        return tg.grad(outs, ins, create_graph=create_graph, allow_unused=True)


def torch_lib() -> Any:
    import torch

    class Torch:
        name = "torch"
        tensor = staticmethod(lambda v, rg: torch.tensor(v, dtype=torch.float64, requires_grad=rg))
        const = staticmethod(lambda v: torch.tensor(v, dtype=torch.float64))
        no_grad = staticmethod(torch.no_grad)
        numpy = staticmethod(lambda t: t.detach().numpy(force=True).copy())
        grad_of = staticmethod(
            lambda t: None if t.grad is None else t.grad.detach().numpy(force=True).copy()
        )
        clip = staticmethod(lambda t, lo, hi: t.clamp(lo, hi))
        where = staticmethod(torch.where)
        matmul = staticmethod(lambda a, b: a @ b)

        @staticmethod
        def index(i):
            if isinstance(i, np.ndarray):
                return torch.from_numpy(i)
            if isinstance(i, tuple):
                return tuple(torch.from_numpy(p) if isinstance(p, np.ndarray) else p for p in i)
            return i

        @staticmethod
        def sum(t, axis, keep):
            return t.sum() if axis is None and not keep else t.sum(_dims(t, axis), keepdim=keep)

        @staticmethod
        def mean(t, axis, keep):
            return t.mean() if axis is None and not keep else t.mean(_dims(t, axis), keepdim=keep)

        @staticmethod
        def max(t, axis, keep):  # tg's max over axes is torch's amax; max() of all is max()
            return t.max() if axis is None else t.amax(axis, keepdim=keep)

        @staticmethod
        def min(t, axis, keep):
            return t.min() if axis is None else t.amin(axis, keepdim=keep)

        @staticmethod
        def grad(outs, ins, create_graph):
            return torch.autograd.grad(outs, ins, create_graph=create_graph, allow_unused=True)

        @staticmethod
        def refresh(t):
            # NOTE: torch 2.13 recuts a view's stale node (its base changed in place) only
            # when something reads `grad_fn`, and some steps go wrong without it: a hook goes
            # on the stale node and never fires (the first one can even crash the process;
            # pytorch/pytorch#196459, fixed by #196514), and an in-place op on a view of a
            # detached tensor that setitem gave a gradient calls it "a leaf Variable". What
            # the program computes must not depend on looking at it: reading grad_fn before
            # each such step gives PyTorch's consistent answer, which is tinygrad_edu's
            t.grad_fn  # noqa: B018 - read for its side effect

    return Torch


def _dims(t: Any, axis: Any) -> Any:
    return tuple(range(t.ndim)) if axis is None else axis


def _step(lib: Any, env: dict, s: dict) -> Any:
    """Run one step with library `lib`; returns the new tensor (or None for in-place steps)."""
    op, kw = s["op"], s["kw"]
    a = env[s["args"][0]] if s["args"] else None
    b = env[s["args"][1]] if len(s["args"]) > 1 else None
    if op == "leaf":
        return lib.tensor(kw["values"], kw["requires_grad"])
    simple = {
        "neg": lambda: -a,
        "exp": lambda: a.exp(),
        "log": lambda: a.log(),
        "tanh": lambda: a.tanh(),
        "relu": lambda: a.relu(),
        "sigmoid": lambda: a.sigmoid(),
        "abs": lambda: a.abs(),
        "sqrt": lambda: a.sqrt(),
        "clone": lambda: a.clone(),
        "detach": lambda: a.detach(),
        "add": lambda: a + b,
        "sub": lambda: a - b,
        "mul": lambda: a * b,
        "div": lambda: a / b,
        "matmul": lambda: lib.matmul(a, b),
        "T": lambda: a.T,
    }
    if op in simple:
        return simple[op]()
    if op == "clip":
        return lib.clip(a, kw["lo"], kw["hi"])
    if op == "pow":
        return a ** kw["p"]
    if op in ("rpow", "rdiv"):
        return kw["c"] ** a if op == "rpow" else kw["c"] / a
    if op in ("softmax", "log_softmax"):
        return getattr(a, op)(dim=kw["axis"])
    if op == "where":
        return lib.where(a > 0, a, b)
    if op in ("sum", "mean", "max", "min"):
        return getattr(lib, op)(a, kw["axis"], kw["keepdims"])
    if op == "getitem":
        return a[lib.index(kw["index"])]
    if op == "reshape":
        return a.reshape(kw["shape"])
    if op == "transpose":
        return a.transpose(kw["a"], kw["b"])
    if op == "permute":
        return a.permute(*kw["dims"])
    if op == "expand":
        return a.expand(*kw["shape"])
    if op == "unsqueeze":
        return a.unsqueeze(kw["dim"])
    if op == "squeeze":
        return a.squeeze(kw["dim"])
    if op == "view":
        return a.view(kw["shape"])
    if op == "flatten":
        return a.flatten()
    if op == "movedim":
        return a.movedim(kw["src"], kw["dst"])
    if op == "t":
        return a.t()
    if op == "unbind":
        return a.unbind(kw["dim"])[kw["pick"]]
    if op == "chunk":
        return a.chunk(kw["chunks"], kw["dim"])[kw["pick"]]
    value = b if b is not None else kw.get("c")
    lib.refresh(a)  # the steps below change `a` in place or put a hook on it
    if op in ("add_", "sub_", "mul_", "div_", "copy_"):
        getattr(a, op)(value)
    elif op == "setitem":
        a[lib.index(kw["index"])] = value
    elif op in UNARY_INPLACE:
        getattr(a, op)()
    elif op == "clamp_":
        a.clamp_(-0.5, 1.0)
    elif op == "zero_":
        a.zero_()
    elif op == "fill_":
        a.fill_(kw["c"])
    elif op == "retain_grad":
        a.retain_grad()
    elif op == "hook_scale":
        a.register_hook(lambda g: g * 2.0)
    elif op == "hook_add":
        a.register_hook(lambda g: g + 1.0)
    elif op == "hook_none":
        a.register_hook(lambda g: None)
    else:
        raise AssertionError(f"unknown step {op}")
    return None


@dataclass
class Record:
    """What one library made of a program."""

    values: dict = field(default_factory=dict)  # tensor id -> final values
    requires_grad: dict = field(default_factory=dict)
    grads: dict = field(default_factory=dict)  # ("leaf", id) / ("retained", id) / ("grad", k)
    error: Exception | None = None
    error_at: str | None = None  # the step (or phase) that raised


def run(program: Program, lib: Any) -> Record:
    """Interpret `program` with library `lib` (TG or torch_lib())."""
    rec, env = Record(), {}
    retained = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            for k, s in enumerate(program.steps):
                rec.error_at = f"step {k} ({s['op']})"
                ctx = lib.no_grad() if s.get("nograd") else contextlib.nullcontext()
                with ctx:
                    out = _step(lib, env, s)
                if out is not None:
                    env[s["out"]] = out
                if s["op"] == "retain_grad":
                    retained.append(s["args"][0])
            rec.error_at = "loss"
            leaves = [
                s["out"] for s in program.steps if s["op"] == "leaf" and s["kw"]["requires_grad"]
            ]
            if program.phase != "none":
                loss = None
                for o, w in zip(program.outputs, program.weights):
                    term = (env[o] * lib.const(w)).sum()
                    loss = term if loss is None else loss + term
                rec.error_at = f"phase {program.phase}"
                _phase(lib, program.phase, loss, [env[i] for i in leaves], rec)
            rec.error_at = None
        except Exception as e:  # noqa: BLE001 - every error is a result to compare
            rec.error = e
        for i, t in env.items():  # values after everything, in both cases
            rec.values[i] = lib.numpy(t)
            rec.requires_grad[i] = bool(t.requires_grad)
            if i in leaves_of(program):
                rec.grads[("leaf", i)] = lib.grad_of(t)
        for i in retained:
            rec.grads[("retained", i)] = lib.grad_of(env[i])
    return rec


def leaves_of(program: Program) -> list:
    return [s["out"] for s in program.steps if s["op"] == "leaf"]


def _phase(lib: Any, phase: str, loss: Any, leaves: list, rec: Record) -> None:
    if phase == "backward":
        loss.backward()
    elif phase == "twice":
        loss.backward(retain_graph=True)
        loss.backward()  # the gradients add up
    elif phase == "freed":
        loss.backward()
        loss.backward()  # both libraries refuse: the graph was freed
    elif phase in ("grad", "double"):
        if not leaves:
            raise RuntimeError("no leaf requires grad")
        grads = lib.grad(loss, leaves, create_graph=phase == "double")
        for k, g in enumerate(grads):
            rec.grads[("grad", k)] = None if g is None else lib.numpy(g)
        if phase == "double":
            total = None
            for g in grads:
                if g is not None and g.requires_grad:
                    term = (g * g).sum()
                    total = term if total is None else total + term
            if total is not None:
                total.backward()


# --- comparing ----------------------------------------------------------------------------

_INPLACE_TEXT = re.compile(r"in-?place|version|view|memory location|leaf Variable", re.I)


@dataclass
class Mismatch:
    kind: str  # forward | grad | requires_grad | tg-raised | torch-raised | error-step | error-kind
    detail: str
    silent: bool  # tinygrad gave an answer (no error) that differs from PyTorch's


def compare(
    ours: Record, theirs: Record, phase: str = "backward", rtol: float = 1e-7, atol: float = 1e-9
) -> Mismatch | None:
    """None when the records agree; otherwise the first difference."""
    if (ours.error is None) != (theirs.error is None):
        if ours.error is None:
            return Mismatch(
                "torch-raised",
                f"torch raised at {theirs.error_at}: {_short(theirs.error)}",
                silent=True,
            )
        return Mismatch(
            "tg-raised", f"tinygrad raised at {ours.error_at}: {_short(ours.error)}", silent=False
        )
    if ours.error is not None:
        if ours.error_at != theirs.error_at:
            return Mismatch(
                "error-step",
                f"tinygrad raised at {ours.error_at} "
                f"({_short(ours.error)}), torch at {theirs.error_at} "
                f"({_short(theirs.error)})",
                silent=False,
            )
        tg_inplace = isinstance(ours.error, tg.InplaceError)
        if tg_inplace and not _INPLACE_TEXT.search(str(theirs.error)):
            return Mismatch(
                "error-kind",
                f"tinygrad: {_short(ours.error)}; torch: {_short(theirs.error)}",
                silent=False,
            )
        return None  # both refused the same step: values after it may differ
    for i, v in theirs.values.items():
        mine = ours.values.get(i)
        if mine is None or mine.shape != v.shape or not _close(mine, v, rtol, atol):
            return Mismatch("forward", f"t{i}: tinygrad {_arr(mine)}, torch {_arr(v)}", silent=True)
        if ours.requires_grad[i] != theirs.requires_grad[i]:
            return Mismatch(
                "requires_grad",
                f"t{i}: tinygrad {ours.requires_grad[i]}, torch {theirs.requires_grad[i]}",
                silent=True,
            )
    for key, v in theirs.grads.items():
        mine = ours.grads.get(key)
        if isinstance(v, bool) or isinstance(mine, bool):
            same = mine == v
        elif v is None or mine is None:
            # NOTE: after double backward a gradient PyTorch leaves at None may be zeros here
            # and the other way round: PyTorch's first-order gradients of relu, abs, ... keep a
            # graph whose second derivative is zero, tinygrad's are constants
            other = mine if v is None else v
            same = (v is None and mine is None) or (phase == "double" and not np.any(other))
        else:
            same = mine.shape == v.shape and _close(mine, v, rtol, atol)
        if not same:
            return Mismatch(
                "grad", f"{key[0]} {key[1]}: tinygrad {_arr(mine)}, torch {_arr(v)}", silent=True
            )
    return None


def _close(a: np.ndarray, b: np.ndarray, rtol: float, atol: float) -> bool:
    with np.errstate(invalid="ignore"):
        return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True))


def _short(e: BaseException | None) -> str:
    text = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    return text[:160]


def _arr(a: Any) -> str:
    if not isinstance(a, np.ndarray):
        return repr(a)
    return np.array2string(a, precision=4, separator=",", threshold=12).replace("\n", "")


def differ(program: Program, torch_lib_: Any) -> Mismatch | None:
    """Run `program` in both libraries and compare.

    A difference in values that goes away when every zero matmul returns is made +0.0 in
    both libraries is reported as kind "matmul-signed-zero", and one that goes away when
    every matmul result within rounding error of 0 is made 0 as "matmul-rounding" (KNOWN
    differences)."""
    m = compare(run(program, TG), run(program, torch_lib_), program.phase)
    if m is not None and m.kind in ("forward", "grad"):
        if any(s["op"] == "matmul" for s in program.steps):
            for variant, kind in (
                (_unsigned_matmul, "matmul-signed-zero"),
                (_exact_zero_matmul, "matmul-rounding"),
            ):
                again = run(program, variant(TG)), run(program, variant(torch_lib_))
                if compare(*again, program.phase) is None:
                    return Mismatch(kind, m.detail, m.silent)
    return m


def _unsigned_matmul(lib: Any) -> Any:
    """`lib` whose matmul returns +0.0 for every zero: x + 0.0 is x for every other number,
    and -0.0 + 0.0 is +0.0 (IEEE 754, rounding to nearest)."""

    class Unsigned(lib):
        matmul = staticmethod(lambda a, b: lib.matmul(a, b) + 0.0)

    return Unsigned


def _exact_zero_matmul(lib: Any) -> Any:
    """`lib` whose matmul returns +0.0 where its result is within the rounding error of a
    sum that may be exactly 0 (at most n * eps * (|a| @ |b|) for an inner size n), the
    gradient passing unchanged: numpy's BLAS may fuse a multiply and an add (one rounding
    less), so `x * 1.5 - x * 1.5` can come out as 4e-16 on one side and 0 on the other."""

    class ExactZero(lib):
        @staticmethod
        def matmul(a, b):
            out = lib.matmul(a, b)
            va, vb, vo = lib.numpy(a), lib.numpy(b), lib.numpy(out)
            if vo.dtype.kind != "f":
                return out
            n = va.shape[-1] if va.ndim else 1
            bound = n * np.finfo(vo.dtype).eps * np.matmul(np.abs(va), np.abs(vb))
            noise = np.where(np.abs(vo) <= bound, vo, 0.0).astype(vo.dtype)
            return out - lib.const(noise) + 0.0

    return ExactZero


# Differences accepted on purpose, each with its reason (docs/pytorch_differences.md):
# (kind, a regular expression on the mismatch's detail) -> why. `scripts/fuzz_torch.py`
# counts them apart; the test suite lets them pass.
KNOWN: dict[tuple[str, str], str] = {
    (
        "tg-raised",
        r"InplaceError: \w+: the value being written shares some of its numbers",
    ): "an in-place op whose operand shares some numbers with a non-contiguous target: "
    "PyTorch checks overlap only where it is cheap (contiguous memory) and otherwise "
    "computes in memory order; tinygrad refuses every partial overlap (an error, never "
    "an order-dependent value)",
    (
        "tg-raised|error-step",
        r"\(setitem\):? \(?InplaceError: setitem: .* is a broadcast view",
    ): "t[index_array] = v into an expanded tensor: deprecated in PyTorch (it warns 'Use of "
    "index_put_ on expanded tensors is deprecated', then writes, and refuses its gradient in "
    "backward); tinygrad refuses the write",
    (
        "matmul-rounding",
        r"",
    ): "a matrix product that is 0 in exact arithmetic: numpy's BLAS may fuse a multiply "
    "and an add, so its result is the rounding residue (4e-16) where PyTorch's is 0, or the "
    "other way round; only a division by it shows it (1e15 against inf). Counted so only "
    "when the program agrees with every matmul result within n * eps * (|a| @ |b|) of 0 "
    "made 0 in both libraries",
    (
        "matmul-signed-zero",
        r"",
    ): "the sign of a zero that matmul returns: PyTorch's CPU kernels give -0.0 or +0.0 for "
    "the same numbers depending on the kernel (a 2-D product with inner size 1 keeps the "
    "product's sign, a batched one gives +0.0); numpy's gives +0.0. Only a division by that "
    "zero shows it (-inf against +inf)",
}


def known(m: Mismatch) -> str | None:
    """The reason a mismatch is accepted (an entry of KNOWN), or None."""
    for (kind, pattern), reason in KNOWN.items():
        if re.fullmatch(kind, m.kind) and re.search(pattern, m.detail):
            return reason
    return None


# --- without torch: finite differences --------------------------------------------------


def fd_check(program: Program) -> bool:
    """Gradients of a smooth program (`generate(..., smooth=True)`) against finite
    differences, through `tg.gradcheck`; True when there is nothing to check."""
    leaves = [s for s in program.steps if s["op"] == "leaf" and s["kw"]["requires_grad"]]
    if not leaves:
        return True

    def loss_of(*xs):
        env: dict = {}
        given = iter(xs)
        for s in program.steps:
            if s["op"] == "leaf" and s["kw"]["requires_grad"]:
                env[s["out"]] = next(given)
            else:
                env[s["out"]] = _step(TG, env, s)
        total = None
        for o, w in zip(program.outputs, program.weights):
            term = (env[o] * tg.tensor(w)).sum()
            total = term if total is None else total + term
        return total

    inputs = [tg.tensor(s["kw"]["values"], requires_grad=True) for s in leaves]
    with np.errstate(all="ignore"):
        out = loss_of(*inputs)
        if not out.requires_grad or not np.all(np.isfinite(out.numpy())):
            return True
        return tg.gradcheck(loss_of, inputs, eps=1e-6, atol=1e-4)


def seeded(seed: int, **kw: Any) -> Program:
    return generate(random.Random(seed), **kw)
