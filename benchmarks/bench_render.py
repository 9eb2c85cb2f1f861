"""Rendering speed: GraphModel -> DOT -> SVG for 100 / 500 op nodes, and summarised huge graphs.

Targets (issues 3 and 14): 100 ops <= 60 ms, 500 ops <= 150 ms to SVG; a 2,000-op graph
drawn through the summarised view (default max_nodes) <= 500 ms, and 100,000 ops
summarised (build_graph) <= 300 ms. Prints the best and the median of several rounds,
wall and CPU time (the machine is shared; CPU time is the fairer figure; compare two
versions by running this script on each in turn, more than once).
Run: python benchmarks/bench_render.py [--rounds N]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

import tinygrad_edu as tg
from tinygrad_edu.graph import build_graph
from tinygrad_edu.render.dot import to_dot
from tinygrad_edu.render.svg import _CACHE, FAST_FLAGS, dot_to_svg, find_dot


def mlp_ops(n_ops: int):
    """A tensor graph with about `n_ops` ops, varied (not one loop), so folding cannot help."""
    x = tg.randn(4, 8, name="x")
    h = x
    ops = 0
    k = 0
    while ops < n_ops:
        w = tg.randn(8, 8, requires_grad=True, name=f"w{k}")
        b = tg.randn(8, requires_grad=True, name=f"b{k}")
        h = (h @ w + b).tanh() if k % 2 else (h @ w + b).relu() * 0.5
        ops += 3 if k % 2 else 4
        k += 1
    return h.sum(), ops + 1


def loop_chain(n_ops: int):
    z = tg.tensor(1.0, requires_grad=True, name="z")
    for _ in range(n_ops // 2):
        z = z * 0.999 + 0.001
    return z, n_ops


ROUNDS = 5


class Ms(float):
    """Milliseconds, printed as `best/median` of the rounds (the float is the best)."""

    def __new__(cls, times: list[float]) -> Ms:
        ms = super().__new__(cls, min(times) * 1000)
        ms.median = statistics.median(times) * 1000
        return ms

    def __add__(self, other: Ms) -> Ms:
        total = Ms([(float(self) + float(other)) / 1000])
        total.median = self.median + other.median
        return total

    def __format__(self, spec: str) -> str:
        return f"{float(self):.0f}/{self.median:.0f}".rjust(int(spec.split(".")[0] or 0))


def timed(fn, repeat: int | None = None):
    walls, cpus = [], []
    for _ in range(repeat or ROUNDS):
        _CACHE.clear()
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return out, Ms(walls), Ms(cpus)


def main() -> None:
    print(
        f"{'case':44s} {'nodes':>6s} {'wall ms':>8s} {'cpu ms':>7s}  (best/median; cpu excludes dot)"
    )
    for n, target in ((100, 60), (500, 150)):
        root, ops = mlp_ops(n)
        graph = build_graph(root, max_nodes=None, fold=False)
        op_nodes = sum(1 for x in graph.nodes if x.kind == "op")
        # the issue counts op nodes; the drawing also has the tensors between them
        _, wall, cpu = timed(lambda g=graph: dot_to_svg(to_dot(g)))
        print(
            f"{f'{op_nodes} ops full graph -> SVG (target {target})':44s} {len(graph):6d} "
            f"{wall:8.0f} {cpu:7.0f}"
        )
        source = to_dot(graph)
        _, wall, cpu = timed(
            lambda s=source: subprocess.run(
                [find_dot(), "-Tsvg", *FAST_FLAGS], input=s.encode(), capture_output=True
            )
        )
        print(f"{'  (raw dot -Tsvg on the same DOT, for scale)':44s} {len(graph):6d} {wall:8.0f}")
        _, wall, cpu = timed(lambda r=root: dot_to_svg(to_dot(build_graph(r))))
        print(
            f"{f'{op_nodes} ops, default summarised -> SVG':44s} "
            f"{len(build_graph(root)):6d} {wall:8.0f} {cpu:7.0f}"
        )
    for n in (2_000, 100_000):
        for name, make in (("varied", mlp_ops), ("loop", loop_chain)):
            if n == 100_000 and name == "varied":
                make = mlp_ops
            root, ops = make(n)
            g, wall, cpu = timed(lambda r=root: build_graph(r))
            _, wall2, cpu2 = timed(lambda g=g: dot_to_svg(to_dot(g)))
            target = 300 if n == 100_000 else 500
            print(
                f"{f'{ops} ops {name}: build_graph (target {target})':44s} {g.attrs['total']:6d} "
                f"{wall:8.0f} {cpu:7.0f}"
            )
            print(
                f"{f'{ops} ops {name}: + DOT + SVG of {len(g)} nodes':44s} {len(g):6d} "
                f"{wall + wall2:8.0f} {cpu + cpu2:7.0f}"
            )


if __name__ == "__main__":
    if "--rounds" in sys.argv:
        ROUNDS = int(sys.argv[sys.argv.index("--rounds") + 1])
    main()
