"""Optimisation passes on a StaticGraph's program: each small, optional and teachable.

- `eliminate_dead_code`: drop equations whose results no output needs.
- `fold_constants`: compute, once, every equation whose inputs are all constants (a
  captured weight's transpose, `2 * 3`), and store the result as a constant.

Each returns a *new* StaticGraph whose text starts with a `# pass: N ops -> M ops`
line, so a lesson can show what the pass bought. Neither changes what the graph
computes. Static layer: imports the core, numpy and the standard library only.
"""

from __future__ import annotations

import copy

from . import ir, runtime
from .ir import ZERO, Eqn, Program
from .program import StaticGraph


def _copy(program: Program) -> Program:
    prog = copy.copy(program)
    prog.__dict__.pop("_runner", None)
    prog.__dict__.pop("_runner_all", None)
    prog.eqns, prog.vars, prog.consts = list(prog.eqns), dict(prog.vars), dict(prog.consts)
    prog.inputs, prog.outputs = list(prog.inputs), list(prog.outputs)
    return prog


def _result(g: StaticGraph, prog: Program, name: str) -> StaticGraph:
    before, after = g.num_ops(), prog.count_ops()
    return StaticGraph(prog, g.structure, g.name, g.passes + ((name, before, after),))


def eliminate_dead_code(g: StaticGraph, prune_inputs: bool = False) -> StaticGraph:
    r"""Remove the equations (and constants) that no output depends on.

    Rules: an equation is live if an output needs one of its results, or if a live
    `vjp` line reads what it saved for backward. Inputs are kept (the call signature
    does not change) unless `prune_inputs=True`.

    Example:
        >>> import tinygrad_edu as tg
        >>> def f(x):
        ...     unused = x.exp()          # computed, never returned
        ...     return x * 2
        >>> g = tg.static.trace(f, tg.tensor([1.0]))
        >>> tg.static.eliminate_dead_code(g).ops
        ('Mul',)
    """
    prog = _copy(g.program)
    live = set(prog.outputs)
    live_of: set[int] = set()
    kept = []
    for e in reversed(prog.eqns):
        if any(o in live for o in e.outs) or (e.outs and e.outs[0] in live_of):
            kept.append(e)
            live.update(i for i in e.ins if i != ZERO)
            if e.op == "vjp":
                live_of.add(e.attrs["of"])
    prog.eqns = kept[::-1]
    prog.consts = {k: v for k, v in prog.consts.items() if k in live}
    if prune_inputs:
        prog.inputs = [i for i in prog.inputs if i in live]
    used = set(prog.inputs) | set(prog.consts) | {o for e in prog.eqns for o in e.outs}
    prog.vars = {k: v for k, v in prog.vars.items() if k in used}
    return _result(g, prog, "dead code elimination")


def fold_constants(g: StaticGraph) -> StaticGraph:
    r"""Compute every equation whose inputs are all constants once, now.

    Rules: the folded results become constants of the new program; equations that
    depend on an input, and `vjp` lines, are kept. Run `eliminate_dead_code` after it
    to drop the constants nothing uses any more (`g.optimize()` does both).

    Example:
        >>> import tinygrad_edu as tg
        >>> w = tg.tensor([[1.0, 2.0], [3.0, 4.0]], name="w")
        >>> g = tg.static.trace(lambda x: x @ w.T, tg.tensor([1.0, 1.0]))
        >>> g.ops, tg.static.fold_constants(g).ops
        (('Transpose', 'MatMul'), ('MatMul',))
    """
    prog = _copy(g.program)
    ctx_read = ir.saved_for_backward(prog.eqns)

    def foldable(e: Eqn) -> bool:  # a vjp line reads its forward's context: neither folds
        return e.op != "vjp" and not (e.outs and e.outs[0] in ctx_read)

    folded = ir.constant_steps(prog.eqns, prog.consts, foldable)
    for e in folded:
        env = {i: prog.consts[i] for i in e.ins}
        runtime.run_equation(e, env, {}, False, runtime.interpret)
        for o in e.outs:
            prog.consts[o] = env[o]
    gone = {id(e) for e in folded}
    prog.eqns = [e for e in prog.eqns if id(e) not in gone]
    return _result(g, prog, "constant folding")
