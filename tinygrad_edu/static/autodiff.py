"""Derive a backward program from a forward program (reverse mode, done once, statically).

Walk the forward equations last to first. For each one that lies between the chosen
inputs (`wrt`) and the seeds, emit one `vjp` equation: at run time it calls that op's
own `backward` rule (the one the eager engine uses: one derivative rule per op in the
whole codebase) with the context its forward equation saved. Gradients that reach one
variable along several paths are summed with `Add` equations: `+=` is the chain rule's
sum over paths, exactly as in the eager engine. `cond` and `while_loop` get backward
sub-programs, derived by this same function from their branches / body.

Static layer: imports the core, numpy and the standard library only.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..core.errors import TracingError, message
from ..core.function import OPS
from .ir import ZERO, Eqn, Program, Var


def _is_float(v: Var) -> bool:
    return v.dtype.kind == "f"


def dependents(program: Program, wrt: list) -> set:
    """Variables whose value depends on any of `wrt` through differentiable ops."""
    dep = set(wrt)
    for e in program.eqns:
        if e.op == "vjp":
            continue
        if any(i in dep for i in e.ins):
            dep.update(o for o in e.outs if _is_float(program.vars[o]))
    return dep


def append_backward(
    fwd: Program, seeds: list, wrt: list, new_id: Callable[[], int], out: Program
) -> list:
    """Append to `out` the equations computing d(seeds)/d(wrt); return the gradient vars.

    Args:
        fwd: the forward program (its equations are read, never changed).
        seeds: `(forward var, cotangent var in out)` pairs; the cotangent flows back.
        wrt: forward variables to differentiate with respect to.
        new_id: source of fresh variable ids.
        out: the program that receives the new equations, variables and constants
            (`fwd` itself for a combined forward+backward program).
    """
    dep = dependents(fwd, wrt)
    contrib: dict[int, list] = {}
    for var, cot in seeds:
        if var in dep:
            contrib.setdefault(var, []).append(cot)

    def new_var(like: Var) -> int:
        vid = new_id()
        out.vars[vid] = Var(vid, like.shape, like.dtype)
        return vid

    def total(vid: int, site: str | None) -> int:
        parts = contrib.pop(vid, [])
        if not parts:
            return ZERO
        acc = parts[0]
        for p in parts[1:]:  # several paths reach this value: their gradients add up
            s = new_var(fwd.vars[vid])
            out.eqns.append(Eqn("Add", (acc, p), (s,), {}, site, OPS["Add"]))
            acc = s
        return acc

    for e in reversed(fwd.eqns):
        if e.op in ("vjp", "Detach") or not any(o in contrib for o in e.outs):
            continue  # (no gradient flows back through a detach)
        needs = tuple(i in dep for i in e.ins)
        if e.op == "cond":
            needs = (False,) + needs[1:]  # no gradient through the predicate
        if not any(needs):
            continue
        cots = tuple(total(o, e.site) for o in e.outs)
        grads = tuple(new_var(fwd.vars[i]) for i, n in zip(e.ins, needs) if n)
        out.eqns.append(_vjp_eqn(e, fwd, needs, cots, grads, new_id))
        it = iter(grads)
        for i, n in zip(e.ins, needs):
            if n:
                contrib.setdefault(i, []).append(next(it))
    return [_or_zeros(w, total(w, None), fwd, out, new_id) for w in wrt]


def _vjp_eqn(
    e: Eqn, fwd: Program, needs: tuple, cots: tuple, grads: tuple, new_id: Callable[[], int]
) -> Eqn:
    """The `vjp` equation for forward equation `e`: cotangents in, input gradients out.

    It keeps the forward's types, so the op's backward rule sees what it saw eagerly;
    `cond` and `while_loop` carry the backward programs of their branches / body."""
    in_vars = [fwd.vars[i] for i in e.ins]
    attrs = {
        "of": e.outs[0],
        "op": e.op,
        "needs": needs,
        "_in_types": tuple((v.shape, v.dtype) for v in in_vars),
        "_out_types": tuple((fwd.vars[o].shape, fwd.vars[o].dtype) for o in e.outs),
    }
    vjp = Eqn("vjp", cots, grads, attrs, e.site, e.fn)
    if e.op == "cond":
        for branch in ("true", "false"):
            vjp.subs[f"{branch}_grad"] = backward_program(
                e.subs[branch], [n for n in needs[1:]], new_id
            )
    elif e.op == "while_loop":
        body = e.subs["body"]
        float_ins = tuple(_is_float(body.vars[v]) for v in body.inputs)
        vjp.attrs["_float_ins"] = float_ins
        vjp.attrs["n_carry"] = e.attrs["n_carry"]
        vjp.subs["body_grad"] = backward_program(body, list(float_ins), new_id)
    return vjp


def _or_zeros(w: int, g: int, fwd: Program, out: Program, new_id: Callable[[], int]) -> int:
    """`g`, or for an input on no path to the seeds a constant of zeros: its gradient."""
    if g != ZERO:
        return g
    v = fwd.vars[w]
    g = new_id()
    out.vars[g] = Var(g, v.shape, v.dtype, "zeros")
    out.consts[g] = np.zeros(v.shape, dtype=v.dtype)
    return g


def backward_program(fwd: Program, needs: list, new_id: Callable[[], int]) -> Program:
    """A program: cotangents of `fwd`'s outputs -> gradients of the inputs in `needs`.

    Its `vjp` equations read the tape of one run of `fwd` (a branch, or one loop step).
    """
    bp = Program([], [], {}, [], {})
    seeds = []
    for o in fwd.outputs:
        cot = new_id()
        v = fwd.vars[o]
        bp.vars[cot] = Var(cot, v.shape, v.dtype, f"d{o}")
        bp.inputs.append(cot)
        seeds.append((o, cot))
    wrt = [i for i, n in zip(fwd.inputs, needs) if n]
    bp.outputs = append_backward(fwd, seeds, wrt, new_id, bp)
    for g in bp.outputs:  # a gradient that is a cotangent input passes straight through
        if g not in bp.vars:
            raise TracingError(message("grad", "internal: a gradient has no variable"))
    return bp


def check_scalar(v: Var, what: str) -> None:
    if int(np.prod(v.shape)) != 1:
        raise TracingError(
            message(
                "grad",
                f"{what} has shape {v.shape!r}, but a gradient program needs a single "
                "number to differentiate",
                None,
                "reduce it first, e.g. return loss.sum() or loss.mean() from the traced function",
            )
        )
