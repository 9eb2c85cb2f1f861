"""How fast can any Python autograd run W2's chain? A floor, for reading bench_core's W2.

Run: `python benchmarks/bench_floor.py [--ops N] [--repeats R] [--gc-off]`.

W2 (bench_core.py) is a chain of tiny ops, `* 0.9`, `+ 0.1`, `tanh` on 4 numbers, forward
and backward: numpy's arithmetic is about 1 us a call, so what is timed is the Python
around it. This script times the chain four ways, in turns:

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
- `tinygrad_edu`: the same chain through `Tensor`, with all of those.

The gap between `bare` and numpy is what any Python autograd pays for the graph itself;
from `bare` to `checked`, what the per-op checks cost at the least; from `checked` to
tinygrad_edu, the rest of the API. On a 100,000-op chain (`--ops 100000`) Python's cyclic
garbage collector adds its own share to every side that keeps a Python object per op;
`--gc-off` shows the times without it.
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


# --- the chain, each way --------------------------------------------------------------------


def chain(make, n_ops: int):
    x0 = make(np.linspace(-1, 1, 4))

    def run() -> None:
        chain_ops(x0, n_ops).backward()

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--gc-off", action="store_true", help="time with the cyclic GC off")
    args = parser.parse_args()
    n = args.ops
    sides = {
        "numpy": chain_numpy(n),
        "bare": chain(Bare, n),
        "checked": chain(Checked, n),
        "tinygrad_edu": chain_tg(n),
    }
    if args.gc_off:
        gc.disable()
    times = in_turns(sides, args.repeats)
    gc.enable()
    print(
        f"W2 chain of {n} ops, best of {args.repeats} in turns"
        f"{', cyclic GC off' if args.gc_off else ''}; paired: median ratio to numpy"
    )
    for name, t in times.items():
        paired = statistics.median(a / b for a, b in zip(t, times["numpy"]))
        print(
            f"  {name:<13} {min(t) / n * 1e6:6.2f} us/op   {min(t) / min(times['numpy']):5.2f}x"
            f"   paired {paired:5.2f}x"
        )


if __name__ == "__main__":
    main()
