"""How fast can any Python autograd run W2's chain? A floor, for reading bench_core's W2.

Run: `python benchmarks/bench_floor.py [--ops N] [--repeats R] [--gc-off] [--idiom]`.

W2 (bench_core.py) is a chain of tiny ops, `* 0.9`, `+ 0.1`, `tanh` on 4 numbers, forward
and backward: numpy's arithmetic is about 1 us a call, so what is timed is the Python
around it. This script times the chain five ways, in turns:

- `numpy`: the hand-written forward and backward (bench_core's floor);
- `bare`: the least a define-by-run autograd can do in Python, written here for the
  comparison: a node is an object holding its value, its parents and a closure that
  maps the output's gradient to the parents'; `backward()` orders the nodes and calls
  the closures. Nothing else: no creation site, no shape or dtype check of a gradient,
  no version counter to catch an in-place change, no hooks, no views, no grad mode;
- `checked`: `bare` plus the per-op work that makes tinygrad_edu's answers trustworthy
  and its errors readable, each written as cheaply as Python allows: a tensor apart
  from its node (an in-place op gives a tensor a new node), the grad mode read from the
  thread's state, the creation site (code object and offset of the caller's frame), the
  shape and dtype of inputs (one shared tuple per pattern), a version counter saved with
  each saved value and checked in backward, a weak reference from the node to its
  output (for drawings), a number per node, and backward's check of each gradient's
  shape and dtype against its input's. Still without the rest of tinygrad_edu: the
  `Function` / `ctx` API learners write ops with, views, observers (debug tools, the
  tracer), module paths, hooks, `create_graph`, saved-tensor hooks;
- `function_api`: `checked` written through the op API tinygrad_edu's ops are made of and
  its lessons teach (`class Mul(Function)` with `forward(ctx, ...)` and
  `backward(ctx, g)`, `Mul.apply(x, c)`, `ctx.save_for_backward`, `ctx.saved_tensors`,
  `ctx.needs_input_grad`; the ctx is the node), as cheaply as we, and a review after us,
  could write it: the same checks, nothing else of tinygrad_edu's;
- `tinygrad_edu`: the same chain through `Tensor`, with all of those.

The gap between `bare` and numpy is what any Python autograd pays for the graph itself;
from `bare` to `checked`, what the per-op checks cost at the least; from `checked` to
`function_api`, what the op API costs at the least; from there to tinygrad_edu, the rest
of the API. On a 100,000-op chain (`--ops 100000`) Python's cyclic garbage collector adds
its own share to every side that keeps a Python object per op; `--gc-off` shows the times
without it.

`--idiom` times the learner's parameter update instead, `with no_grad(): p -= lr * p.grad`
on a (128, 64) float64 parameter: numpy's `a -= lr * g`; `wrapper`, the least any Python
tensor library does for it (a `with` block that turns the grad mode off, `__rmul__` making
a new tensor, `__isub__` writing into the parameter's storage and bumping its version),
with none of the checks; tinygrad_edu; and PyTorch eager on one thread, if installed.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import os
import statistics
import sys
import threading
import weakref

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from bench_core import chain_numpy, chain_ops, chain_tg, in_turns  # noqa: E402

# --- bare: a node, its parents, a closure ----------------------------------------------------


class Bare:
    """A value in a graph with nothing but what backward needs."""

    __slots__ = ("value", "parents", "rule", "grad")

    def __init__(self, value: np.ndarray, parents: tuple = (), rule=None) -> None:
        self.value, self.parents, self.rule, self.grad = value, parents, rule, None

    def __mul__(self, c: float) -> Bare:
        return Bare(self.value * c, (self,), lambda g: (g * c,))

    def __add__(self, c: float) -> Bare:
        return Bare(self.value + c, (self,), lambda g: (g,))

    def tanh(self) -> Bare:
        y = np.tanh(self.value)
        return Bare(y, (self,), lambda g: (g * (1 - y * y),))

    def backward(self) -> None:
        self.grad = np.ones_like(self.value)
        for node in _in_backward_order(self, lambda node: node.parents):
            if node.rule is None:
                continue
            for parent, g in zip(node.parents, node.rule(node.grad)):
                parent.grad = g if parent.grad is None else parent.grad + g


def _in_backward_order(root, parents_of) -> list:
    """Every node reachable from `root`, each before its parents (an iterative DFS)."""
    order, seen, stack = [], set(), [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
        elif node is not None and id(node) not in seen:
            seen.add(id(node))
            stack.append((node, True))
            stack.extend((p, False) for p in parents_of(node))
    return order[::-1]


# --- checked: bare plus the per-op checks, at their cheapest ----------------------------------

_thread = threading.local()
_node_ids = itertools.count()
_metas: dict = {}


class _GradMode:
    enabled = True


class CheckedNode:
    __slots__ = ("parents", "rule", "inputs_meta", "code", "offset", "saved", "output", "id")


class Checked:
    """A tensor: its numbers, its node (None for a leaf) and its version counter."""

    __slots__ = ("value", "grad_fn", "version", "__weakref__")

    def __init__(self, value: np.ndarray) -> None:
        self.value, self.grad_fn, self.version = value, None, [0]

    def _record(self, out: Checked, rule, saved: tuple = ()) -> Checked:
        state = getattr(_thread, "state", None) or _GradMode
        if not state.enabled:
            return out
        node = CheckedNode()
        node.parents, node.rule, node.saved = (self.grad_fn,), rule, saved
        meta = (self.value.shape, self.value.dtype)
        node.inputs_meta = (_metas.setdefault(meta, meta),)
        caller = sys._getframe(2)  # the learner's line (the op's caller)
        node.code, node.offset = caller.f_code, caller.f_lasti
        node.output = weakref.ref(out)
        node.id = next(_node_ids)
        out.grad_fn = node
        return out

    def __mul__(self, c: float) -> Checked:
        return self._record(Checked(self.value * c), lambda g, saved: (g * c,))

    def __add__(self, c: float) -> Checked:
        return self._record(Checked(self.value + c), lambda g, saved: (g,))

    def tanh(self) -> Checked:
        out = Checked(np.tanh(self.value))
        return self._record(out, _tanh_rule, ((out.value, out.version, out.version[0]),))

    def backward(self) -> None:
        grads = {self.grad_fn: np.ones_like(self.value)}
        for node in _in_backward_order(self.grad_fn, lambda node: node.parents):
            g = grads.pop(node)
            for parent, gi, (shape, dtype) in zip(
                node.parents, node.rule(g, node.saved), node.inputs_meta
            ):
                if gi.shape != shape or gi.dtype is not dtype:
                    raise ValueError(f"a gradient of shape {gi.shape} for an input of {shape}")
                if parent is not None:
                    grads[parent] = gi if parent not in grads else grads[parent] + gi
            node.saved = None  # freed, as a backward without retain_graph does


def _tanh_rule(g: np.ndarray, saved: tuple) -> tuple:
    ((y, version, saved_at),) = saved
    if version[0] != saved_at:
        raise RuntimeError("a value saved for backward was changed in place")
    return (g * (1 - y * y),)


# --- function_api: checked, through the op API of tinygrad_edu's ops and lessons -------------


class ApiTensor:
    """A tensor whose ops are `Op` classes, run through `Op.apply` (as `Tensor`'s are)."""

    __slots__ = ("value", "grad_fn", "version", "__weakref__")

    def __init__(self, value: np.ndarray) -> None:
        self.value, self.grad_fn, self.version = value, None, [0]

    # the operators call `apply`'s body straight: no classmethod binding, no `*args`
    def __mul__(self, c: float) -> ApiTensor:
        return _apply(MulOp, (self, c))

    def __add__(self, c: float) -> ApiTensor:
        return _apply(AddOp, (self, c))

    def tanh(self) -> ApiTensor:
        return _apply(TanhOp, (self,))

    def backward(self) -> None:
        grads = {self.grad_fn: np.ones_like(self.value)}
        for node in _in_backward_order(self.grad_fn, lambda node: node.parents):
            g = grads.pop(node)
            # what the rule will read as `ctx.saved_tensors`, checked before it runs
            for version, saved_at in node.versions:
                if version[0] != saved_at:
                    raise RuntimeError("a value saved for backward was changed in place")
            for parent, gi, meta in zip(node.parents, node.backward(node, g), node.inputs_meta):
                if gi is None or meta is None:
                    continue  # no gradient, or a constant's
                if gi.shape != meta[0] or gi.dtype is not meta[1]:
                    raise ValueError(f"a gradient of shape {gi.shape} for an input of {meta[0]}")
                if parent is not None:  # (a leaf's is dropped: this floor keeps no `.grad`)
                    grads[parent] = gi if parent not in grads else grads[parent] + gi
            node.saved_tensors = None


class Op:
    """An op as a learner writes one: `forward` and `backward` static methods taking `ctx`,
    the node, which is an instance of the op's class (as in tinygrad_edu and PyTorch).

    As cheap as we could make it (with a review's help): slots for what `_apply` fills in
    (a learner's forward may still keep anything else on ctx, in its dict); `saved_tensors`
    a plain attribute, whose versions backward checks before the rule reads it.
    """

    __slots__ = ("needs_input_grad", "saved_tensors", "versions", "parents", "inputs_meta")
    __slots__ += ("code", "offset", "output", "id", "__dict__")

    def save_for_backward(self, *values) -> None:
        self.saved_tensors = values

    @classmethod
    def apply(cls, *args) -> ApiTensor:  # a learner's `MyOp.apply(x, ...)`
        return _apply(cls, args)


_ONE_TENSOR, _TENSOR_AND_CONSTANT = (True,), (True, False)


def _apply(cls, args: tuple) -> ApiTensor:
    ctx = object.__new__(cls)
    ctx.saved_tensors = ()
    first = args[0]
    # the commonest inputs written out (one tensor; a tensor and a constant), then any others
    if len(args) == 1 and type(first) is ApiTensor:
        x = first.value
        meta = (x.shape, x.dtype)
        parents, metas = (first.grad_fn,), (_metas.setdefault(meta, meta),)
        ctx.needs_input_grad = _ONE_TENSOR
        result = cls.forward(ctx, x)
    elif len(args) == 2 and type(first) is ApiTensor and type(args[1]) is not ApiTensor:
        x = first.value
        meta = (x.shape, x.dtype)
        parents, metas = (first.grad_fn, None), (_metas.setdefault(meta, meta), None)
        ctx.needs_input_grad = _TENSOR_AND_CONSTANT
        result = cls.forward(ctx, x, args[1])
    else:
        arrays, parent_list, meta_list, needs = [], [], [], []
        for a in args:
            if type(a) is ApiTensor:
                x = a.value
                meta = (x.shape, x.dtype)
                meta_list.append(_metas.setdefault(meta, meta))
                arrays.append(x)
                parent_list.append(a.grad_fn)
                needs.append(True)
            else:
                arrays.append(a)
                parent_list.append(None)
                meta_list.append(None)
                needs.append(False)
        parents, metas, pattern = tuple(parent_list), tuple(meta_list), tuple(needs)
        ctx.needs_input_grad = _metas.setdefault(pattern, pattern)
        result = cls.forward(ctx, *arrays)
    out = ApiTensor(result)
    if not (getattr(_thread, "state", None) or _GradMode).enabled:
        return out
    ctx.parents, ctx.inputs_meta = parents, metas
    caller = sys._getframe(2)  # the learner's line: past `_apply` and the operator (or apply)
    ctx.code, ctx.offset = caller.f_code, caller.f_lasti
    versions = ()  # of each saved tensor: its version counter, and the version it had
    for value in ctx.saved_tensors:
        if value is result:
            versions += ((out.version, 0),)
        elif value is not None:
            for a in args:
                if type(a) is ApiTensor and a.value is value:
                    versions += ((a.version, a.version[0]),)
                    break  # (a constant, or a value made in forward: nothing can change it)
    ctx.versions = versions
    ctx.output = weakref.ref(out)
    ctx.id = next(_node_ids)
    out.grad_fn = ctx
    return out


class MulOp(Op):
    @staticmethod
    def forward(ctx, a, b):
        na, nb = ctx.needs_input_grad
        ctx.save_for_backward(a if nb else None, b if na else None)  # what backward will use
        return a * b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        na, nb = ctx.needs_input_grad
        return (g * b if na else None), (g * a if nb else None)


class AddOp(Op):
    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, g):
        return g, g


class TanhOp(Op):
    @staticmethod
    def forward(ctx, a):
        y = np.tanh(a)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return (g * (1 - y * y),)


# --- the chain, each way --------------------------------------------------------------------


def chain(make, n_ops: int):
    x0 = make(np.linspace(-1, 1, 4))

    def run() -> None:
        chain_ops(x0, n_ops).backward()

    return run


# --- the update idiom, each way ---------------------------------------------------------------


class _NoGrad:
    """`with no_grad():` at its cheapest: the thread's grad mode off, then back."""

    def __enter__(self) -> None:
        state = getattr(_thread, "state", None) or _GradMode
        self.state, self.before, state.enabled = state, state.enabled, False

    def __exit__(self, *exc: object) -> None:
        self.state.enabled = self.before


class Wrapper:
    """The least a tensor library's parameter is for the update: numbers, a version, a grad."""

    __slots__ = ("value", "version", "grad")

    def __init__(self, value: np.ndarray) -> None:
        self.value, self.version, self.grad = value, [0], None

    def __rmul__(self, c: float) -> Wrapper:
        return Wrapper(self.value * c)

    def __isub__(self, other: Wrapper) -> Wrapper:
        np.subtract(self.value, other.value, out=self.value)
        self.version[0] += 1
        return self


def idiom_sides(shape: tuple[int, int] = (128, 64), lr: float = 0.01) -> dict:
    """`with no_grad(): p -= lr * p.grad`, each way, as functions running it 200 times."""
    import tinygrad_edu as tg

    rng = np.random.default_rng(0)
    a, g = rng.standard_normal(shape), rng.standard_normal(shape)
    w = Wrapper(rng.standard_normal(shape))
    w.grad = Wrapper(rng.standard_normal(shape))
    p = tg.tensor(rng.standard_normal(shape), requires_grad=True)
    p.grad = tg.tensor(rng.standard_normal(shape))

    def numpy_update() -> None:
        nonlocal a
        for _ in range(200):
            a -= lr * g

    def wrapper() -> None:
        nonlocal w
        for _ in range(200):
            with _NoGrad():
                w -= lr * w.grad

    def ours() -> None:
        nonlocal p
        for _ in range(200):
            with tg.no_grad():
                p -= lr * p.grad

    sides = {"numpy": numpy_update, "wrapper": wrapper, "tinygrad_edu": ours}
    try:
        import torch
    except ImportError:
        return sides
    torch.set_num_threads(1)
    tp = torch.tensor(rng.standard_normal(shape), requires_grad=True)
    tp.grad = torch.tensor(rng.standard_normal(shape))

    def pytorch() -> None:
        nonlocal tp
        for _ in range(200):
            with torch.no_grad():
                tp -= lr * tp.grad

    sides["pytorch"] = pytorch
    return sides


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--gc-off", action="store_true", help="time with the cyclic GC off")
    parser.add_argument("--idiom", action="store_true", help="time the parameter update instead")
    args = parser.parse_args()
    if args.idiom:
        times = in_turns(idiom_sides(), args.repeats)
        print(
            f"with no_grad(): p -= lr * p.grad, (128, 64) float64, best of {args.repeats} in turns"
        )
        report(times, 200, "us", "numpy")
        return
    n = args.ops
    sides = {
        "numpy": chain_numpy(n),
        "bare": chain(Bare, n),
        "checked": chain(Checked, n),
        "function_api": chain(ApiTensor, n),
        "tinygrad_edu": chain_tg(n),
    }
    if args.gc_off:
        gc.disable()
    times = in_turns(sides, args.repeats)
    gc.enable()
    print(
        f"W2 chain of {n} ops, best of {args.repeats} in turns"
        f"{', cyclic GC off' if args.gc_off else ''}; paired: median ratio"
    )
    report(times, n, "us/op", "numpy", "checked")


def report(times: dict, n: int, unit: str, *bases: str) -> None:
    """Each side's best time per run of `n`, and its ratios to `bases` (best; paired median)."""
    for name, t in times.items():
        ratios = []
        for base in bases:
            paired = statistics.median(a / b for a, b in zip(t, times[base]))
            ratios.append(f"{min(t) / min(times[base]):5.2f}x {base} (paired {paired:5.2f}x)")
        print(f"  {name:<13} {min(t) / n * 1e6:6.2f} {unit:<6} " + "   ".join(ratios))


if __name__ == "__main__":
    main()
