"""W1 training step as a traced, replayed static program vs eager vs raw numpy.

Run: `python benchmarks/bench_static.py` (add `--quick` for fewer repeats). W1 is the
2-16-16-1 ReLU MLP with hinge loss mean(relu(1 - y * score)) and full-batch SGD on 100
moons points (made inline with numpy). The static step is one `tg.static.trace` of
forward + `tg.static.grad` + SGD update, replayed per step; it prints the trace time
once and the per-step time of each variant with its ratio to the hand-written numpy
floor. Then lesson 8b's step (Linear-ReLU-Linear, squared error) at growing widths,
eager against replay: replay must never be the slower one. A script, not a test: the
targets (replay <= 1.1x numpy, never slower than eager) are read, not asserted.
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np
from workloads import init_mlp, moons, w1_numpy_step

import tinygrad_edu as tg

STEPS, LR = 200, 0.05
REPEATS = 3 if "--quick" in sys.argv else 11


def tg_step(x, y, w1, b1, w2, b2, w3, b3):
    """The same step in tinygrad_edu; eager with tensors, or recorded by trace."""
    params = [w1, b1, w2, b2, w3, b3]
    score = ((x @ w1 + b1).relu() @ w2 + b2).relu() @ w3 + b3
    loss = (1.0 - y * score).relu().mean()
    grads = tg.static.grad(loss, params)
    return (loss, *[p - LR * g for p, g in zip(params, grads)])


def per_step(loops: dict, steps: int = STEPS) -> dict:
    """Per-step CPU time of each loop: the minimum, and the median ratio to the first.

    The loops take turns within every repeat, so a slow spell of a shared machine hits
    them all alike; the ratio is taken within a repeat, then the median over repeats.
    """
    times = {name: [] for name in loops}
    for _ in range(REPEATS):
        for name, loop in loops.items():
            # CPU time of this process: the machine may be shared, wall time would count others
            t0 = time.process_time()
            loop()
            times[name].append((time.process_time() - t0) / steps)
    base = times[next(iter(loops))]
    return {
        name: (min(ts), statistics.median(t / b for t, b in zip(ts, base)))
        for name, ts in times.items()
    }


def main() -> None:
    x, y = moons()
    p0 = init_mlp([2, 16, 16, 1])

    def numpy_loop():
        ps = p0
        for _ in range(STEPS):
            loss, *ps = w1_numpy_step(x, y, LR, *ps)

    def eager_loop():
        xt, yt = tg.tensor(x), tg.tensor(y)
        ps = [tg.tensor(p, requires_grad=True) for p in p0]
        for _ in range(STEPS):
            loss, *new = tg_step(xt, yt, *ps)
            ps = [p.detach().requires_grad_() for p in new]

    t0 = time.perf_counter()
    step = tg.static.trace(tg_step, x, y, *p0)
    trace_time = time.perf_counter() - t0
    fast = step.optimize()

    def replay_loop(graph, checked):
        def loop():
            ps = p0
            for _ in range(STEPS):
                if checked:  # the public call: shape/dtype checks, Tensors out
                    loss, *ps = graph(x, y, *ps)
                else:  # arrays in, arrays out
                    loss, *ps = graph.run_arrays([x, y, *ps])

        return loop

    # the same numbers, step after step
    a, b = p0, p0
    for _ in range(5):
        la, *a = w1_numpy_step(x, y, LR, *a)
        lb, *b = step.run_arrays([x, y, *b])
    assert all(np.allclose(u, v, rtol=1e-12, atol=1e-14) for u, v in zip(a, b))

    rows = per_step(
        {
            "numpy, hand-written backward": numpy_loop,
            "eager tinygrad_edu": eager_loop,
            "static replay, g(...)": replay_loop(step, True),
            "static replay, run_arrays": replay_loop(step, False),
            "static replay, optimized, run_arrays": replay_loop(fast, False),
        }
    )
    print(f"W1 step (2-16-16-1 ReLU MLP, hinge loss, SGD, 100 moons), {STEPS} steps x {REPEATS}")
    print(
        f"trace (once): {trace_time * 1e3:.2f} ms; program: {step.num_ops()} ops "
        f"({fast.num_ops()} after optimize)"
    )
    print("  (best time per step; ratio: median over repeats of the ratio within a repeat)")
    for name, (t, ratio) in rows.items():
        print(f"  {name:<40} {t * 1e6:8.1f} us/step  {ratio:5.2f}x numpy")


def widths() -> None:
    """Eager against replay for lesson 8b's step, from a width where Python's overhead
    dominates to one where the matrix products do; the step's CPU time, best of rounds."""
    print("lesson 8b's step (Linear-ReLU-Linear, squared error, gradients of 4 weights)")
    for batch, width, steps in ((16, 16, 200), (64, 64, 100), (256, 256, 10), (256, 512, 4)):
        (eager, _), (replayed, ratio) = width_row(batch, width, steps).values()
        print(
            f"  batch {batch:>3}, width {width:>3}: eager {eager * 1e6:8.1f} us, replay "
            f"{replayed * 1e6:8.1f} us; replay / eager {ratio:4.2f} (median over repeats)"
        )


def width_row(batch: int, width: int, steps: int) -> dict:
    rng = np.random.default_rng(0)
    x, y = (
        tg.tensor(rng.standard_normal((batch, width))),
        tg.tensor(rng.standard_normal((batch, 1))),
    )
    weights = [
        tg.tensor(rng.standard_normal(s) / np.sqrt(width), requires_grad=True)
        for s in ((width, width), (width,), (1, width), (1,))
    ]

    def loss_fn(x, y, w1, b1, w2, b2):
        h = (x @ w1.T + b1).relu()
        return ((h @ w2.T + b2 - y) ** 2).mean()

    replay = tg.static.trace(loss_fn, x, y, *weights).grad(wrt=[2, 3, 4, 5])

    def eager_loop():
        for _ in range(steps):
            tg.grad(loss_fn(x, y, *weights), weights)

    def replay_loop():
        for _ in range(steps):
            replay(x, y, *weights)

    return per_step({"eager": eager_loop, "replay": replay_loop}, steps)


if __name__ == "__main__":
    main()
    widths()
