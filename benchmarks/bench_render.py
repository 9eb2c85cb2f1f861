"""Rendering speed: GraphModel -> DOT -> SVG for 100 / 500 op nodes, and summarised huge graphs.

Targets (issue 3): 100 ops <= 60 ms, 500 ops <= 300 ms to SVG; a 2,000-op and a
100,000-op graph drawn through the summarised view (default max_nodes) <= 500 ms.
Prints wall and CPU time (the machine is shared; CPU time is the fairer figure).
Run: python benchmarks/bench_render.py
"""

from __future__ import annotations

import subprocess
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


def timed(fn, repeat: int = 3):
    best_wall = best_cpu = float("inf")
    for _ in range(repeat):
        _CACHE.clear()
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        best_wall = min(best_wall, time.perf_counter() - w)
        best_cpu = min(best_cpu, time.process_time() - c)
    return out, best_wall * 1000, best_cpu * 1000


def main() -> None:
    print(f"{'case':44s} {'nodes':>6s} {'wall ms':>8s} {'cpu ms':>7s}  (cpu excludes dot)")
    for n, target in ((100, 60), (500, 300)):
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
            g, wall, cpu = timed(lambda r=root: build_graph(r), repeat=2)
            _, wall2, cpu2 = timed(lambda g=g: dot_to_svg(to_dot(g)), repeat=2)
            print(
                f"{f'{ops} ops {name}: build_graph (target: total 500)':44s} {g.attrs['total']:6d} "
                f"{wall:8.0f} {cpu:7.0f}"
            )
            print(
                f"{f'{ops} ops {name}: + DOT + SVG of {len(g)} nodes':44s} {len(g):6d} "
                f"{wall + wall2:8.0f} {cpu + cpu2:7.0f}"
            )


if __name__ == "__main__":
    main()
