"""Parts of the workloads, each between two `os.getppid()` calls, for callgrind to count.

Instruction counts do not move with the machine's load, so they are the steady figure of a
change to a hot path (benchmarks/README.md). Run one part under valgrind; each
`os.getppid()` starts a new dump, numbered in order (`.1` is start-up and warm-up):

    PY=$(python -c 'import sys; print(sys.executable)')   # not a pyenv shim: a script
    PYTHONHASHSEED=0 OPENBLAS_NUM_THREADS=1 valgrind --tool=callgrind \\
        --dump-before=os_getppid --callgrind-out-file=/tmp/cg.out $PY benchmarks/callgrind_parts.py w2
    grep -h '^summary:' /tmp/cg.out.2 /tmp/cg.out.3        # W2's forward, backward

Parts: `w2` (forward, backward of 2,000 ops), `checked` (bench_floor's floor, the same),
`w1` (20 steps), `idiom` (200 `with tg.no_grad(): p -= lr * p.grad`, then numpy's
`a -= lr * g` 200 times). `GC_OFF=1` turns the cyclic collector off for the counted parts
(its passes depend on what ran before, so a small change is clearest without them).
Count both trees of a comparison from one path (copy each there in turn): the path alone
moves a count by up to 1 k per op through hash-table layouts. Import once before
counting after an edit, or the `.pyc` compile lands in one of the runs.
"""

from __future__ import annotations

import gc
import os
import sys

sys.modules["torch"] = None  # type: ignore[assignment]  # bench_core's PyTorch side: not counted

import numpy as np  # noqa: E402
from bench_core import chain_ops, w1_tg  # noqa: E402
from bench_floor import Checked  # noqa: E402
from workloads import moons  # noqa: E402

import tinygrad_edu as tg  # noqa: E402

N = 2000
mark = os.getppid  # the call callgrind dumps before


def counted() -> None:
    if os.environ.get("GC_OFF"):
        gc.disable()


def w2() -> None:
    x0 = tg.tensor(np.linspace(-1, 1, 4), requires_grad=True)
    for _ in range(2):  # warm-up: caches, specialised bytecode
        chain_ops(x0, N).sum().backward()
        x0.grad = None
    counted()
    mark()
    y = chain_ops(x0, N).sum()
    mark()
    y.backward()
    mark()


def checked() -> None:
    c0 = Checked(np.linspace(-1, 1, 4))
    for _ in range(2):
        chain_ops(c0, N).backward()
    counted()
    mark()
    y = chain_ops(c0, N)
    mark()
    y.backward()
    mark()


def w1() -> None:
    run = w1_tg(*moons())
    run()
    run()
    counted()
    mark()
    run()
    mark()


def idiom() -> None:
    rng = np.random.default_rng(0)
    p = tg.tensor(rng.standard_normal((128, 64)), requires_grad=True)
    p.grad = tg.tensor(rng.standard_normal((128, 64)))
    a, g, lr = rng.standard_normal((128, 64)), rng.standard_normal((128, 64)), 0.01

    def ours(n: int) -> None:
        nonlocal p
        for _ in range(n):
            with tg.no_grad():
                p -= lr * p.grad

    def numpy_update(n: int) -> None:
        nonlocal a
        for _ in range(n):
            a -= lr * g

    ours(50)
    numpy_update(50)
    counted()
    mark()
    ours(200)
    mark()
    numpy_update(200)
    mark()


if __name__ == "__main__":
    {"w2": w2, "checked": checked, "w1": w1, "idiom": idiom}[sys.argv[1]]()
