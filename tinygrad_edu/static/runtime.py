"""Run a `Program`: every op through its core class (`cls.forward`, `cls.backward`).

Replay never calls the learner's Python function again: it walks the recorded
equations and calls each op's own `forward` on numpy arrays. A `vjp` equation calls
the same op's `backward` with the context (saved values) that its forward equation
left on the *tape* during this run, so masks such as relu's are always those of the
current inputs. `cond` runs one branch; `while_loop` runs its body until the condition
fails, and both keep their branch tapes when gradients are wanted.

Static layer: imports the core, numpy and the standard library only.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.ops.common import sum_to
from .ir import ZERO, Eqn, Program

_ndarray = np.ndarray


def _arr(x: Any) -> np.ndarray:
    return x if type(x) is _ndarray else np.asarray(x)


def _fit(g: Any, shape: tuple, dtype: np.dtype) -> np.ndarray:
    """A gradient in its input's shape: sum broadcast copies, or spread a scalar."""
    g = _arr(g)
    if g.shape != shape:
        g = sum_to(g, shape) if len(g.shape) >= len(shape) and g.size >= math.prod(shape) \
            else np.broadcast_to(g, shape)
        if g.shape != shape:
            g = g.reshape(shape)
    return g


def _store_ctx(ctx: Any) -> Any:
    """What `Function.apply` does with saved values, minus the autograd bookkeeping."""
    ctx._saved = tuple((a, None, None, None) for a in ctx._to_save)
    return ctx


class Runner:
    """A program prepared for fast replay: a list of steps over a dict of values.

    Plain ops and the `vjp` lines of plain ops run inline (the hot path of a training
    step); `cond`, `while_loop` and their gradients go through `execute`.
    """

    def __init__(self, program: Program, keep_all: bool = False) -> None:
        self.program = program
        of_ids = {e.attrs["of"] for e in program.eqns if e.op == "vjp"}
        self.steps = []
        for e in program.eqns:
            keep = keep_all or (bool(e.outs) and e.outs[0] in of_ids)
            if e.op == "vjp" and e.attrs["op"] not in ("cond", "while_loop"):
                needs = e.attrs["needs"]
                outs = tuple((o, shape) for o, (shape, _), n
                             in zip(_outs_iter(e.outs, needs), e.attrs["_in_types"], needs) if n)
                self.steps.append((2, e.fn.backward, e.ins[0], outs, e.attrs["of"], needs, e))
            elif e.fn is not None and e.op != "vjp":
                # a ctx that nothing reads later can be reused from run to run
                shared = None if keep else object.__new__(e.fn)
                self.steps.append((0, e.fn, e.fn.forward, e.ins, e.outs[0], e.attrs,
                                   (keep, shared)))
            else:
                self.steps.append((1, None, None, e.ins, e.outs, e.attrs, (keep, e)))

    def run(self, args: list, tape: dict | None = None) -> list:
        env = dict(self.program.consts)
        for vid, a in zip(self.program.inputs, args):
            env[vid] = a
        if tape is None:
            tape = {}
        new = object.__new__
        for step in self.steps:
            kind = step[0]
            if kind == 0:
                _, cls, fwd, ins, out, kw, (keep, shared) = step
                ctx = new(cls) if shared is None else shared
                if len(ins) == 2:
                    r = fwd(ctx, env[ins[0]], env[ins[1]], **kw)
                elif len(ins) == 1:
                    r = fwd(ctx, env[ins[0]], **kw)
                else:
                    r = fwd(ctx, *[env[i] for i in ins], **kw)
                env[out] = r if type(r) is _ndarray else np.asarray(r)
                if keep:
                    tape[out] = _store_ctx(ctx)
            elif kind == 2:  # an op's own backward rule, with the ctx of this run
                _, bwd, g_in, outs, of, needs, _e = step
                ctx = tape[of]
                ctx.needs_input_grad = needs
                grads = bwd(ctx, env[g_in])
                if type(grads) is not tuple:
                    grads = (grads,)
                k = 0
                for need, g in zip(needs, grads):
                    if need:
                        vid, shape = outs[k]
                        k += 1
                        if type(g) is not _ndarray or g.shape != shape:
                            g = _fit(g, shape, None)
                        env[vid] = g
            else:
                execute(step[6][1], env, tape, step[6][0])
        return [env[v] for v in self.program.outputs]


def _outs_iter(outs: tuple, needs: tuple) -> list:
    """`outs` spread over the inputs: the output var for each input that needs a grad."""
    it = iter(outs)
    return [next(it) if n else None for n in needs]


def runner(program: Program, keep_all: bool = False) -> Runner:
    """The cached `Runner` of a program (programs are not changed after tracing)."""
    key = "_runner_all" if keep_all else "_runner"
    r = program.__dict__.get(key)
    if r is None:
        r = program.__dict__[key] = Runner(program, keep_all)
    return r


def execute(e: Eqn, env: dict, tape: dict, keep: bool) -> None:
    """Run one equation of any kind, reading and writing `env` (the generic path)."""
    if e.op == "vjp":
        _vjp(e, env, tape)
    elif e.op == "cond":
        _cond(e, env, tape, keep)
    elif e.op == "while_loop":
        _while(e, env, tape, keep)
    else:
        ctx = object.__new__(e.fn)
        env[e.outs[0]] = _arr(e.fn.forward(ctx, *[env[i] for i in e.ins], **e.attrs))
        if keep:
            tape[e.outs[0]] = _store_ctx(ctx)


def _cond(e: Eqn, env: dict, tape: dict, keep: bool) -> None:
    pred = env[e.ins[0]]
    branch = "true" if bool(np.all(pred)) else "false"
    sub_tape = {} if keep else None
    outs = runner(e.subs[branch], keep_all=keep).run([env[i] for i in e.ins[1:]], sub_tape)
    for vid, val in zip(e.outs, outs):
        env[vid] = val
    if keep:
        tape[e.outs[0]] = (branch, sub_tape)


def _while(e: Eqn, env: dict, tape: dict, keep: bool) -> None:
    n = e.attrs["n_carry"]
    vals = [env[i] for i in e.ins]
    carry, caps = vals[:n], vals[n:]
    cond_run = runner(e.subs["cond"])
    body_run = runner(e.subs["body"], keep_all=keep)
    tapes = []
    while bool(np.all(cond_run.run(carry + caps)[0])):
        sub_tape = {} if keep else None
        carry = body_run.run(carry + caps, sub_tape)
        tapes.append(sub_tape)
    for vid, val in zip(e.outs, carry):
        env[vid] = val
    if keep:
        tape[e.outs[0]] = tapes


def _cotangents(e: Eqn, env: dict) -> list:
    shapes = e.attrs["_out_types"]
    return [np.zeros(s, dtype=d) if i == ZERO else env[i] for i, (s, d) in zip(e.ins, shapes)]


def _vjp(e: Eqn, env: dict, tape: dict) -> None:
    """Gradients of one forward equation's inputs, from its own backward rule."""
    ctx = tape[e.attrs["of"]]
    needs = e.attrs["needs"]
    in_types = e.attrs["_in_types"]
    op = e.attrs["op"]
    if op == "cond":
        branch, sub_tape = ctx
        grads = runner(e.subs[f"{branch}_grad"]).run(_cotangents(e, env), sub_tape)
        it = iter(grads)  # the predicate gets no gradient
        full = [None] + [next(it) if n else None for n in needs[1:]]
    elif op == "while_loop":
        full = _while_vjp(e, env, ctx)
    else:
        ctx.needs_input_grad = needs
        grads = e.fn.backward(ctx, env[e.ins[0]])
        full = grads if isinstance(grads, tuple) else (grads,)
    outs = iter(e.outs)
    for need, g, (shape, dtype) in zip(needs, full, in_types):
        if need:
            env[next(outs)] = _fit(g, shape, dtype)


def _while_vjp(e: Eqn, env: dict, tapes: list) -> list:
    """Reverse through the recorded iterations: the trip count is known at run time."""
    n = e.attrs["n_carry"]
    in_types = e.attrs["_in_types"]
    body_grad = runner(e.subs["body_grad"])
    differentiable = e.attrs["_float_ins"]
    cot = _cotangents(e, env)
    caps = [np.zeros(s, dtype=d) for s, d in in_types[n:]]
    for sub_tape in reversed(tapes):
        grads = body_grad.run(cot, sub_tape)
        full, it = [], iter(grads)
        for is_float, (s, d) in zip(differentiable, in_types):
            full.append(next(it) if is_float else np.zeros(s, dtype=d))
        cot = full[:n]
        caps = [c + g for c, g in zip(caps, full[n:])]
    return cot + caps
