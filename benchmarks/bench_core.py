"""Speed of the autograd core against raw numpy with a hand-written backward (and PyTorch).

Run: `python benchmarks/bench_core.py` (add `--quick` for fewer repeats). It prints, for
each workload, our time, the numpy time, their ratio and PyTorch's time and ratio when
torch is importable (one thread). The three run in turns, each repeat (the first to run
changes each time), so a slow spell of a shared machine falls on all of them; a time is the
best repeat (the issue's measure), and `paired` is the median over repeats of ours / numpy
within the repeat. This is a script, not a test: no thresholds are asserted (machines
differ); the targets it is read against are in benchmarks/README.md.

W1  2-16-16-1 ReLU MLP, hinge loss mean(relu(1 - y * score)), full-batch SGD, 100 moons
W2  a chain of 2,000 alternating mul / add / tanh ops on a shape-(4,) tensor, fwd + bwd
W3  a 100,000-op chain of the same ops, fwd + bwd: time, peak and leftover memory
W4  784-128-10 ReLU MLP, softmax cross-entropy (log_softmax + label pick), batch 256, float32

Uses raw tensors only (no tg.nn), so it measures the core alone.
"""

from __future__ import annotations

import gc
import os
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable

# BLAS on one thread on every side, as PyTorch is below (set before numpy loads): on a
# shared machine BLAS's worker threads wait for a core, and W4's times swing by several x
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from workloads import init_mlp, moons, w1_numpy_step  # noqa: E402

import tinygrad_edu as tg  # noqa: E402

try:
    import torch

    torch.set_num_threads(1)
except ImportError:  # PyTorch is optional: its column is left out
    torch = None

REPEATS = 3 if "--quick" in sys.argv else 7


def in_turns(fns: dict[str, Callable[[], object]], repeats: int = REPEATS) -> dict[str, list]:
    """Wall times of each `fn()`, `repeats` each, run in turns: one run of every fn per
    repeat, starting each repeat with the next one. One untimed run each first fills caches."""
    for fn in fns.values():
        fn()
    names = list(fns)
    times: dict[str, list] = {name: [] for name in names}
    for r in range(repeats):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            gc.collect()
            t0 = time.perf_counter()
            fns[name]()
            times[name].append(time.perf_counter() - t0)
    return times


# --- W1: small MLP, hinge loss, SGD --------------------------------------------------------

W1_STEPS, W1_LR = 20, 0.05


def w1_numpy(x: np.ndarray, y: np.ndarray) -> Callable[[], None]:
    params = init_mlp([2, 16, 16, 1], np.float64)

    def run() -> None:
        nonlocal params
        for _ in range(W1_STEPS):
            loss, *params = w1_numpy_step(x, y, W1_LR, *params)
            loss.item()

    return run


def w1_tg(x: np.ndarray, y: np.ndarray, lib=None) -> Callable[[], None]:
    """The W1 loop in tinygrad_edu, or in PyTorch with `lib=torch` (the same code)."""
    lib = lib or tg
    params = [lib.tensor(p, requires_grad=True) for p in init_mlp([2, 16, 16, 1], np.float64)]
    xt, yt = lib.tensor(x), lib.tensor(y)

    def run() -> None:
        w1, b1, w2, b2, w3, b3 = params
        for _ in range(W1_STEPS):
            score = ((xt @ w1 + b1).relu() @ w2 + b2).relu() @ w3 + b3
            loss = (1 - yt * score).relu().mean()
            loss.backward()
            with lib.no_grad():
                for p in params:
                    p -= W1_LR * p.grad
                    p.grad = None
            loss.item()

    return run


# --- W2 / W3: long chains of tiny ops ----------------------------------------------------------


def chain_numpy(n_ops: int) -> Callable[[], None]:
    x0 = np.linspace(-1, 1, 4)

    def run() -> None:
        x, saved = x0, []
        for i in range(n_ops):
            k = i % 3
            if k == 0:
                x = x * 0.9
            elif k == 1:
                x = x + 0.1
            else:
                x = np.tanh(x)
                saved.append(x)
        g = np.ones_like(x)  # d(sum)/dx
        for i in reversed(range(n_ops)):
            k = i % 3
            if k == 0:
                g = g * 0.9
            elif k == 2:
                out = saved.pop()
                g = g * (1 - out * out)

    return run


def chain_ops(x, n_ops: int):
    """W2's ops on `x`, in turn: `* 0.9`, `+ 0.1`, `tanh` (a tensor of any library)."""
    for i in range(n_ops):
        k = i % 3
        if k == 0:
            x = x * 0.9
        elif k == 1:
            x = x + 0.1
        else:
            x = x.tanh()
    return x


def chain_tg(n_ops: int, lib=None) -> Callable[[], None]:
    lib = lib or tg
    x0 = lib.tensor(np.linspace(-1, 1, 4), requires_grad=True)

    def run() -> None:
        chain_ops(x0, n_ops).sum().backward()
        x0.grad = None

    return run


def w3_memory(n_ops: int) -> tuple[float, float, float]:
    """(seconds, peak MiB during fwd+bwd, MiB still held after the graph is dropped)."""
    run = chain_tg(n_ops)
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    t0 = time.perf_counter()
    run()
    seconds = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    del run
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    mib = 1024 * 1024
    return seconds, (peak - base) / mib, (after - base) / mib


# --- W4: MNIST-sized MLP, softmax cross-entropy, float32 ------------------------------------

W4_BATCH, W4_STEPS, W4_LR = 256, 5, 0.01


def w4_data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    return rng.random((W4_BATCH, 784), dtype=np.float32), rng.integers(0, 10, W4_BATCH)


def w4_numpy(x: np.ndarray, labels: np.ndarray) -> Callable[[], None]:
    w1, b1, w2, b2 = init_mlp([784, 128, 10], np.float32)
    rows = np.arange(len(labels))
    lr = np.float32(W4_LR)

    def run() -> None:
        nonlocal w1, b1, w2, b2
        for _ in range(W4_STEPS):
            z1 = x @ w1 + b1
            h = np.maximum(z1, 0)
            logits = h @ w2 + b2
            shifted = logits - logits.max(axis=1, keepdims=True)
            logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
            loss = -logp[rows, labels].mean()
            g = np.exp(logp)  # d(loss)/d(logits) = (softmax - onehot) / n
            g[rows, labels] -= 1
            g /= len(labels)
            gw2, gb2 = h.T @ g, g.sum(0)
            g = (g @ w2.T) * (z1 > 0)
            gw1, gb1 = x.T @ g, g.sum(0)
            w1, b1, w2, b2 = w1 - lr * gw1, b1 - lr * gb1, w2 - lr * gw2, b2 - lr * gb2
            loss.item()

    return run


def w4_tg(x: np.ndarray, labels: np.ndarray, lib=None) -> Callable[[], None]:
    """The W4 loop in tinygrad_edu, or in PyTorch with `lib=torch` (the same code)."""
    lib = lib or tg
    params = [lib.tensor(p, requires_grad=True) for p in init_mlp([784, 128, 10], np.float32)]
    xt, rows = lib.tensor(x), np.arange(len(labels))  # both index with numpy int arrays

    def run() -> None:
        w1, b1, w2, b2 = params
        for _ in range(W4_STEPS):
            logp = ((xt @ w1 + b1).relu() @ w2 + b2).log_softmax(dim=1)
            loss = -logp[rows, labels].mean()
            loss.backward()
            with lib.no_grad():
                for p in params:
                    p -= W4_LR * p.grad
                    p.grad = None
            loss.item()

    return run


# --- report ----------------------------------------------------------------------------------


def row(name: str, unit: str, per: int, times: dict[str, list], target: str) -> None:
    """One line: each side's best time per `per`, ours / numpy (best against best, and the
    median of the ratio within a repeat), PyTorch's likewise."""
    scale = {"ms": 1e3, "us": 1e6}[unit]
    best = {side: min(t) for side, t in times.items()}
    paired = statistics.median(a / b for a, b in zip(times["tg"], times["numpy"]))
    cells = [
        f"{name:<4}",
        f"tg {best['tg'] / per * scale:9.2f} {unit}",
        f"numpy {best['numpy'] / per * scale:9.2f} {unit}",
        f"ratio {best['tg'] / best['numpy']:5.2f}x, paired {paired:5.2f}x (target {target})",
    ]
    if "torch" in best:
        theirs = best["torch"]
        cells.append(f"torch {theirs / per * scale:9.2f} {unit} ({theirs / best['numpy']:4.2f}x)")
    print("  ".join(cells), flush=True)


def sides(ours: Callable, floor: Callable, theirs: Callable | None) -> dict[str, Callable]:
    fns = {"tg": ours, "numpy": floor}
    if theirs is not None:
        fns["torch"] = theirs
    return fns


def main() -> None:
    print(
        f"numpy {np.__version__}, torch {torch.__version__ if torch else 'not installed'}, "
        f"best of {REPEATS} in turns"
    )
    x, y = moons()
    w1 = sides(w1_tg(x, y), w1_numpy(x, y), w1_tg(x, y, torch) if torch else None)
    row("W1", "ms", W1_STEPS, in_turns(w1), "<= 2x, per step")

    n2 = 2000
    w2 = sides(chain_tg(n2), chain_numpy(n2), chain_tg(n2, torch) if torch else None)
    row("W2", "us", n2, in_turns(w2), "<= 3x, per op")

    n3 = 100_000
    seconds, peak, after = w3_memory(n3)
    w3 = sides(chain_tg(n3), chain_numpy(n3), chain_tg(n3, torch) if torch else None)
    row("W3", "ms", 1, in_turns(w3, repeats=3), "<= 0.7 s total")
    print(
        f"      first run {seconds:.2f} s, peak {peak:.1f} MiB during fwd+bwd, "
        f"{after:.2f} MiB left after the graph is dropped",
        flush=True,
    )

    xs, labels = w4_data()
    w4 = sides(w4_tg(xs, labels), w4_numpy(xs, labels), w4_tg(xs, labels, torch) if torch else None)
    row("W4", "ms", W4_STEPS, in_turns(w4), "<= 1.15x, per step")


if __name__ == "__main__":
    main()
