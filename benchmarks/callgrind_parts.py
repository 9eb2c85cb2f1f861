"""Parts of the workloads, each between two `os.getppid()` calls, for callgrind to count.

Instruction counts do not move with the machine's load, so they are the steady figure of a
change to a hot path (benchmarks/README.md). Run one part under valgrind; each
`os.getppid()` starts a new dump, numbered in order (`.1` is start-up and warm-up):

    PY=$(python -c 'import sys; print(sys.executable)')   # not a pyenv shim: a script
    PYTHONHASHSEED=0 OPENBLAS_NUM_THREADS=1 valgrind --tool=callgrind \\
        --dump-before=os_getppid --callgrind-out-file=/tmp/cg.out $PY benchmarks/callgrind_parts.py w2
    grep -h '^summary:' /tmp/cg.out.2 /tmp/cg.out.3        # W2's forward, backward

Parts: `w2` (forward, backward of 2,000 ops), `checked` and `function_api` (bench_floor's
floors, the same), `w1` (20 steps), `idiom` (200 `with tg.no_grad(): p -= lr * p.grad`,
then numpy's `a -= lr * g` and bench_floor's `wrapper`, 200 times each). `GC_OFF=1` turns
the cyclic collector off for the counted parts (its passes depend on what ran before, so a
small change is clearest without them).
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
from bench_floor import ApiTensor, Checked, idiom_sides  # noqa: E402
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


def floor(make) -> None:
    """One of bench_floor's sides (`Checked`, `ApiTensor`): W2's chain, as `w2` counts it."""
    c0 = make(np.linspace(-1, 1, 4))
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
    sides = idiom_sides()  # each runs the update 200 times
    for side in sides.values():
        side()
    counted()
    for name in ("tinygrad_edu", "numpy", "wrapper"):
        mark()
        sides[name]()
    mark()


if __name__ == "__main__":
    parts = {
        "w2": w2,
        "checked": lambda: floor(Checked),
        "function_api": lambda: floor(ApiTensor),
        "w1": w1,
        "idiom": idiom,
    }
    parts[sys.argv[1]]()
