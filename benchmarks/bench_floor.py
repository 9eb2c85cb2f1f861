"""How fast can any Python autograd run W2's chain? A floor, for reading bench_core's W2.

Run: `python benchmarks/bench_floor.py [--ops N] [--repeats R]`.

W2 (bench_core.py) is a chain of tiny ops, `* 0.9`, `+ 0.1`, `tanh` on 4 numbers, forward
and backward: numpy's arithmetic is about 1 us a call, so what is timed is the Python
around it. This script times the chain three ways, in turns:

- `numpy`: the hand-written forward and backward (bench_core's floor);
- `bare`: the least a define-by-run autograd can do in Python, written here for the
  comparison: a node is an object holding its value, its parents and a closure that
  maps the output's gradient to the parents'; `backward()` orders the nodes and calls
  the closures. Nothing else: no creation site, no shape or dtype check of a gradient,
  no version counter to catch an in-place change, no hooks, no views, no grad mode;
- `tinygrad_edu`: the same chain through `Tensor`, with all of those.

The gap between `bare` and numpy is what any Python autograd pays for the graph itself;
the gap between tinygrad_edu and `bare` is what the features a learner relies on cost
(the error that names the line, the refusal of a silently wrong in-place gradient).
"""

from __future__ import annotations

import argparse
import os
import statistics

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from bench_core import chain_numpy, chain_tg, in_turns  # noqa: E402


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
        # the nodes in an order where each comes before its parents (an iterative DFS)
        order, seen, stack = [], set(), [(self, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
            elif id(node) not in seen:
                seen.add(id(node))
                stack.append((node, True))
                stack.extend((p, False) for p in node.parents)
        self.grad = np.ones_like(self.value)
        for node in reversed(order):
            if node.rule is None:
                continue
            for parent, g in zip(node.parents, node.rule(node.grad)):
                parent.grad = g if parent.grad is None else parent.grad + g


def chain_bare(n_ops: int):
    x0 = Bare(np.linspace(-1, 1, 4))

    def run() -> None:
        x = x0
        for i in range(n_ops):
            k = i % 3
            if k == 0:
                x = x * 0.9
            elif k == 1:
                x = x + 0.1
            else:
                x = x.tanh()
        x.backward()
        x0.grad = None

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    n = args.ops
    times = in_turns(
        {"numpy": chain_numpy(n), "bare": chain_bare(n), "tinygrad_edu": chain_tg(n)},
        args.repeats,
    )
    print(f"W2 chain of {n} ops, best of {args.repeats} in turns; paired: median ratio to numpy")
    for name, t in times.items():
        paired = statistics.median(a / b for a, b in zip(t, times["numpy"]))
        print(
            f"  {name:<13} {min(t) / n * 1e6:6.2f} us/op   {min(t) / min(times['numpy']):5.2f}x"
            f"   paired {paired:5.2f}x"
        )


if __name__ == "__main__":
    main()
