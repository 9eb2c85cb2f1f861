"""How much the live graph costs per cell (issue 3: <= 5 ms for a cell that changed no graph).

Runs an in-process IPython shell with `%load_ext tinygrad_edu` and a namespace of ~50
variables (20 graph tensors, 30 others), then times:
- the `post_run_cell` callback after a cell that changed nothing (the budget case),
- the same after a cell that computed on plain tensors only,
- after a `no_grad` op on graph tensors (graph model rebuilt, same picture: not drawn),
- a cell that changed the graph (graph built and drawn with dot), for scale,
- a whole `run_cell("n = 1")` with and without the extension.

Usage: python benchmarks/bench_live.py
"""

from __future__ import annotations

import contextlib
import io
import statistics
import time

from IPython.core.interactiveshell import ExecutionInfo, ExecutionResult, InteractiveShell

SETUP = (
    """
import numpy as np
import tinygrad_edu as tg
x = tg.tensor(np.linspace(-1, 1, 8), requires_grad=True, name="x")
w = tg.tensor(np.ones((8, 4)) * 0.1, requires_grad=True, name="w")
h0 = x @ w
"""
    + "".join(f"h{i} = (h{i - 1} * 0.9 + 0.1).tanh()\n" for i in range(1, 18))
    + "".join(f"v{i} = {i}\n" for i in range(30))
)


def timed(fn, repeat: int) -> tuple[float, float]:
    """Median and 95th-percentile wall time of `fn()` in milliseconds."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), statistics.quantiles(times, n=20)[-1]


def main() -> None:
    ip = InteractiveShell.instance()
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink):
        ip.run_cell(SETUP)
        ip.run_cell("n = 1")
        base = timed(lambda: ip.run_cell("n = 1"), 200)
        ip.run_cell("%load_ext tinygrad_edu")
        ip.run_cell("n = 2")  # the first cell after loading draws the graph
    from tinygrad_edu.widgets import live

    ns = sum(1 for k in ip.user_ns if not k.startswith("_"))
    result = ExecutionResult(ExecutionInfo("n = 1", False, False, False, None))

    def callback() -> None:
        ip.events.trigger("post_run_cell", result)

    def plain_cell() -> None:
        ip.user_ns["c"] = ip.user_ns["tg"].tensor([1.0]) + 1  # an op outside every graph
        callback()

    def no_grad_cell() -> None:  # reads graph tensors, so the graph is rebuilt (not drawn)
        with ip.user_ns["tg"].no_grad():
            ip.user_ns["c"] = ip.user_ns["x"] * 2
        callback()

    step = iter(range(1, 10**6))

    def graph_cell() -> None:  # a new node and a new value: laid out afresh (no cache hit)
        ip.user_ns["h17"] = ip.user_ns["h16"] * (1 + next(step) / 1000)
        callback()

    with contextlib.redirect_stdout(sink):
        no_change = timed(callback, 500)
        plain = timed(plain_cell, 200)
        same = timed(no_grad_cell, 50)
        drawn = timed(graph_cell, 10)
        loaded = timed(lambda: ip.run_cell("n = 1"), 200)
    graph_size = len(live._LIVE.shown or "") and len(
        __import__("tinygrad_edu.graph", fromlist=["build_graph"])
        .build_graph(*live.current_roots(), max_nodes=live.MAX_NODES)
        .nodes
    )

    failures = sink.getvalue().count("could not draw")
    assert failures == 0, sink.getvalue()[-2000:]
    print(f"namespace: {len(ip.user_ns)} entries ({ns} user variables), graph {graph_size} nodes")
    print(
        f"post_run_cell, no change           median {no_change[0]:.3f} ms  p95 {no_change[1]:.3f} ms"
        "  (budget 5 ms)"
    )
    print(f"post_run_cell, ops on plain tensors median {plain[0]:.3f} ms  p95 {plain[1]:.3f} ms")
    print(f"post_run_cell, no_grad op, same graph median {same[0]:.3f} ms  p95 {same[1]:.3f} ms")
    print(f"post_run_cell, graph changed+drawn median {drawn[0]:.1f} ms  p95 {drawn[1]:.1f} ms")
    print(f"run_cell('n = 1') without / with   {base[0]:.3f} ms / {loaded[0]:.3f} ms (median)")


if __name__ == "__main__":
    main()
