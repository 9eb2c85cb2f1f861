"""Time steps: a module called in a loop (an RNN cell) is drawn as one group per call.

An unrolled RNN is the same few ops again and again, all recorded inside one module.
Drawn as they are, the steps interleave and share one box; numbered, each call gets a
box of its own, `rnncell.t=0`, `rnncell.t=1`, ... in time order, while the module's
parameters stay in the module, shared by every step. summarise.py then folds the
middle steps of a long unroll into one "x T" box, keeping the first and the last.
Graph layer: imports tinygrad_edu.core and the standard library only.
"""

from __future__ import annotations

from typing import Any

from ..core.engine import AccumulateGrad

STEP = "t="  # a step's part of a module path: `rnncell.t=3` (no attribute can be named so)


def call_numbers(ops: Any, scopes: Any, edges: Any) -> tuple[list[int | None], set[str]]:
    """Which call of its top-level module each op (in creation order) belongs to.

    `scopes[k]` and `edges[k]` are op k's `module_path` and `input_nodes`, as the
    forward walk (walk.py) read them.

    Rules: a call is a run of the module's ops; a new call starts when the module's
    ops are interrupted, or when the op that opened the current call comes again on the
    same parameters from the same line (the next loop step).

    Returns:
        (call number per op, None outside any module; the modules called more than once).
    """
    calls: dict[str, int] = {}
    runs: list[int | None] = []
    last = opener = None
    for op, scope, op_edges in zip(ops, scopes, edges):
        top = scope[0] if scope else None
        if top is None:
            runs.append(None)
            last = None
            continue
        signature = (type(op), op.site, _params(op_edges))
        if top != last or signature == opener:
            calls[top] = calls.get(top, 0) + 1
            opener = signature
        last = top
        runs.append(calls[top] - 1)
    return runs, {m for m, k in calls.items() if k > 1}


def _params(edges: tuple) -> tuple:
    # a leaf is known by its AccumulateGrad node: one per leaf, kept by core
    return tuple(id(nxt) for nxt in edges if type(nxt) is AccumulateGrad)


def step_of(module: tuple) -> int | None:
    """The step number in a raw module path (`("rnncell", "t=3")` -> 3), or None."""
    if len(module) > 1 and module[1].startswith(STEP):
        return int(module[1][len(STEP) :])
    return None
