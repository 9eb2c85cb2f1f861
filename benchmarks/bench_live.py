"""How much the live graph costs per cell and per saved notebook (issues 3 and 14).

Targets (issue 14): <= 5 ms added to a cell that built no graph, <= 20 ms to one that
built 100 nodes, and a 50-cell live notebook <= 200 KB once saved.

Runs an in-process IPython shell with `%load_ext tinygrad_edu` and a namespace of ~50
variables (20 graph tensors, 30 others), then times:
- the `post_run_cell` callback after a cell that changed nothing (the budget case),
- the same after a cell that computed on plain tensors only,
- after a `no_grad` op on graph tensors (graph model rebuilt, same picture: not drawn),
- a cell that changed the graph (graph built and drawn with dot), for scale,
- cells that built 100 nodes: a loop (its repeats fold) and 100 different nodes (capped),
  run as real cells (`run_cell`), timing only the callback: the time it adds to the cell,
  and the part of it spent in this process (CPU; the rest is waiting for `dot`),
- a whole `run_cell("n = 1")` with and without the extension,
- with `--notebook`: a generated 50-cell notebook (`notebook_cells`) run by nbclient in a
  fresh kernel without and with `%load_ext tinygrad_edu` (keeping the newest drawings,
  the default; every drawing; the newest one), and the saved .ipynb's bytes.

Usage: python benchmarks/bench_live.py [--pause SECONDS] [--notebook]
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from IPython.core.interactiveshell import ExecutionInfo, ExecutionResult, InteractiveShell

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's package

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


PAUSE = 0.3  # seconds between drawn cells (`--pause 0` for cells run back to back)


def timed(fn, repeat: int, pause: float = 0.0) -> tuple[float, float]:
    """Median and 95th-percentile wall time of `fn()` in milliseconds.

    `pause` seconds pass between calls, untimed: a learner reads a drawing before running
    the next cell, and the next drawing's `dot` starts meanwhile (render/dot_process.py).
    """
    times = []
    for _ in range(repeat):
        time.sleep(pause)
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), statistics.quantiles(times, n=20)[-1]


CALLBACK: list[tuple[float, float]] = []  # (wall ms, CPU ms) of each post_run_cell


def _time_the_callback() -> None:
    """Wrap the live graph's post_run_cell so every call's wall and CPU time is recorded."""
    from tinygrad_edu.widgets import live

    post = live._Live.post_run_cell

    def timed_post(self, result=None):
        t0, c0 = time.perf_counter(), time.process_time()
        post(self, result)
        CALLBACK.append(((time.perf_counter() - t0) * 1e3, (time.process_time() - c0) * 1e3))

    live._Live.post_run_cell = timed_post


def timed_cell(ip, code, repeat: int, pause: float) -> tuple[float, float, float]:
    """Median wall, 95th-percentile wall and median CPU ms of the callback after `code`."""
    walls, cpus = [], []
    for k in range(repeat):
        time.sleep(pause)
        ip.run_cell(code.format(k=k))
        walls.append(CALLBACK[-1][0])
        cpus.append(CALLBACK[-1][1])
    return statistics.median(walls), statistics.quantiles(walls, n=20)[-1], statistics.median(cpus)


CELL_HELPERS = """
def loop_cell(k):  # 100 new nodes, 25 repeats of MatMul -> Tanh (drawn folded)
    h = x.reshape(1, 8) * (1 + k / 1000)
    for _ in range(25):
        h = (h @ w8).tanh()
    return h

def mixed_cell(k):  # 100 new nodes that do not repeat (drawn capped at MAX_NODES)
    h = x * (1 + k / 1000)
    for i in range(25):
        h = [h.tanh, h.exp, h.sigmoid, h.relu, h.abs][i % 5]() * (1.0 + i / 100)
    return h
"""


def main() -> None:
    ip = InteractiveShell.instance()
    _time_the_callback()
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink):
        ip.run_cell(SETUP)
        ip.run_cell("n = 1")
        base = timed(lambda: ip.run_cell("n = 1"), 200)
        ip.run_cell("%load_ext tinygrad_edu")
        ip.run_cell("n = 2")  # the first cell after loading draws the graph
    from tinygrad_edu.widgets import live

    ns = sum(1 for k in ip.user_ns if not k.startswith("_"))
    shown: list = []  # every bundle the live graph displays
    show = live._show
    live._show = lambda bundle, *args: (shown.append(bundle), show(bundle, *args))
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

    def loop_cell() -> None:  # 100 new nodes, 25 repeats of MatMul -> Tanh (drawn folded)
        ip.events.trigger("pre_run_cell", None)
        h = ip.user_ns["x"].reshape(1, 8) * (1 + next(step) / 1000)
        for _ in range(25):
            h = (h @ ip.user_ns["w8"]).tanh()
        ip.user_ns["big"] = h
        callback()

    def mixed_cell() -> None:  # 100 new nodes that do not repeat (drawn capped at MAX_NODES)
        ip.events.trigger("pre_run_cell", None)
        h = ip.user_ns["x"] * (1 + next(step) / 1000)
        for i in range(25):
            h = [h.tanh, h.exp, h.sigmoid, h.relu, h.abs][i % 5]() * (1.0 + i / 100)
        ip.user_ns["big"] = h
        callback()

    def graph_cell() -> None:  # a new node and a new value: laid out afresh (no cache hit)
        ip.user_ns["h17"] = ip.user_ns["h16"] * (1 + next(step) / 1000)
        callback()

    with contextlib.redirect_stdout(sink):
        no_change = timed(callback, 500)
        plain = timed(plain_cell, 200)
        same = timed(no_grad_cell, 50)
        drawn = timed(graph_cell, 20, PAUSE)
        ip.user_ns["w8"] = ip.user_ns["tg"].tensor(
            __import__("numpy").eye(8) * 0.5, requires_grad=True, name="w8"
        )
        callback()
        built = _new_nodes(ip, loop_cell), _new_nodes(ip, mixed_cell)
        ip.run_cell(CELL_HELPERS)
        loop = timed_cell(ip, "big = loop_cell({k})", 20, PAUSE)
        drawn_loop = _drawn(shown)
        mixed = timed_cell(ip, "big = mixed_cell({k})", 20, PAUSE)
        drawn_mixed = _drawn(shown)
        loaded = timed(lambda: ip.run_cell("n = 1"), 200)
    graph_size = len(
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
    for label, n, drawn_text, t in (
        ("loop", built[0], drawn_loop, loop),
        ("mixed", built[1], drawn_mixed, mixed),
    ):
        print(
            f"post_run_cell, {label} cell ({n} new nodes; drawn: {drawn_text})\n"
            f"    median {t[0]:.1f} ms  p95 {t[1]:.1f} ms  (budget 20 ms);"
            f" of it in this process (CPU) {t[2]:.1f} ms"
        )
    print(f"run_cell('n = 1') without / with   {base[0]:.3f} ms / {loaded[0]:.3f} ms (median)")


def _new_nodes(ip, cell) -> int:
    """How many graph nodes one run of `cell` builds (tensors and ops, nothing folded)."""
    from tinygrad_edu.graph import build_graph, watermark

    mark = watermark()
    cell()
    graph = build_graph(ip.user_ns["big"], since=mark, max_nodes=None, fold=False)
    return sum(1 for n in graph.nodes if n.new)


def _drawn(shown: list) -> str:
    """What the live graph's last drawing holds, from its text summary."""
    return shown[-1]["text/plain"].splitlines()[0].split(", ", 1)[1]


def notebook_cells(n: int = 50) -> list[str]:
    """A learner's 50 cells: a model, forward steps, backward, updates, prints, a big loop.

    One cell in three draws nothing (a print, an update under no_grad); one in nine or
    so runs backward (its whole graph is drawn); every 19th builds ~100 nodes.
    """
    cells = [
        "import numpy as np\nimport tinygrad_edu as tg\nnp.random.seed(0)",
        "x = tg.tensor(np.random.randn(16, 4), name='x')\ny = tg.tensor(np.random.randn(16, 1), name='y')",
        "w = tg.tensor(np.random.randn(4, 1) * 0.1, requires_grad=True, name='w')\n"
        "b = tg.tensor(np.zeros(1), requires_grad=True, name='b')",
    ]
    step = 0
    while len(cells) < n:
        step += 1
        cells += [
            "h = x @ w + b",
            "p = h.tanh()",
            "loss = ((p - y) ** 2).mean()\nloss",
            "loss.backward()",
            "with tg.no_grad():\n    w -= 0.1 * w.grad\n    b -= 0.1 * b.grad\nw.grad = None\nb.grad = None",
            f"print('step {step}', float(loss))",
        ]
        if step % 3 == 0:
            cells.append(
                "z = w\nfor i in range(16):\n    z = (z * 0.9 + 0.1).tanh() * (1 + i / 100)\nz"
            )
    return cells[:n]


def run_notebook(cells: list[str], live: str) -> tuple[int, float, dict]:
    """Run `cells` in a fresh kernel; the saved size in bytes, the run time and a breakdown."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    first = cells[0] + live  # the magics that start the live graph, if any
    nb.cells = [nbformat.v4.new_code_cell(c) for c in [first, *cells[1:]]]
    root = Path(__file__).resolve().parents[1]  # the kernel imports this checkout's package
    t0 = time.perf_counter()
    NotebookClient(nb, timeout=300, resources={"metadata": {"path": str(root)}}).execute()
    seconds = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "live.ipynb")
        nbformat.write(nb, path)
        size = os.path.getsize(path)
    kinds: dict = {}
    for cell in nb.cells:
        for out in cell.outputs:
            for mime, value in out.get("data", {}).items():
                kinds[mime] = kinds.get(mime, 0) + len(json.dumps(value))
    return size, seconds, kinds


def notebook_size(n: int = 50) -> None:
    cells = notebook_cells(n)
    load = "\n%load_ext tinygrad_edu"
    plain, t_plain, _ = run_notebook(cells, live="")
    print(f"{n}-cell notebook saved, budget 200 KB (run time in brackets):")
    print(f"  without the live graph          {plain / 1e3:5.0f} KB  ({t_plain:.1f} s)")
    for label, magics in (
        ("live graph (keep recent)", load),
        ("live graph, %tg keep all", load + "\n%tg keep all"),
        ("live graph, %tg keep last", load + "\n%tg keep last"),
    ):
        size, seconds, kinds = run_notebook(cells, live=magics)
        parts = ", ".join(f"{k} {v / 1e3:.0f} KB" for k, v in kinds.items())
        print(f"  {label:<31} {size / 1e3:5.0f} KB  ({seconds:.1f} s; outputs {parts})")


if __name__ == "__main__":
    if "--pause" in sys.argv:
        PAUSE = float(sys.argv[sys.argv.index("--pause") + 1])
    main()
    if "--notebook" in sys.argv:
        notebook_size()
