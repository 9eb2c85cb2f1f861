"""Run a `Program`: every op through its core class (`cls.forward`, `cls.backward`).

Replay never calls the learner's Python function again. `runner` compiles a program
once into straight-line Python (codegen.py) that calls each op's own `forward` on numpy
arrays. A `vjp` equation calls the same op's `backward` with the context (saved
values) that its forward equation made during this run, so masks such as relu's are
always those of the current inputs. `run_equation` is the generic one-equation path: the
structured ops (`cond` runs one branch; `while_loop` runs its body until the condition
fails, and both keep their branch tapes when gradients are wanted) and the tracer's
own evaluation of gradient lines.

Static layer: imports the core, numpy and the standard library only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import message
from .codegen import Compiled, fit_grad, gradients
from .ir import ZERO, Eqn, Program

MAX_ITERATIONS = 100_000  # while_loop's default limit; `while_loop(..., max_iterations=n)`


def loop_limit_error(limit: int, site: Any) -> RuntimeError:
    """A while_loop ran `limit` steps and its condition still held: stop, do not hang."""
    return RuntimeError(
        message(
            "while_loop",
            f"stopped after {limit} iterations: the condition still held",
            site,
            "check that body_fn moves the carry toward making cond_fn false, or pass "
            "max_iterations= a larger number if the loop really needs more steps",
        )
    )


def _store_ctx(ctx: Any) -> Any:
    """What `Function.apply` does with saved values, minus the autograd bookkeeping."""
    ctx.keep_saved_for_replay()
    return ctx


def runner(program: Program, keep_all: bool = False) -> Compiled:
    """The program compiled to Python, once (programs are not changed after tracing)."""
    key = "_runner_all" if keep_all else "_runner"
    r = program.__dict__.get(key)
    if r is None:
        r = program.__dict__[key] = Compiled(program, keep_all, run_equation)
    return r


def run_equation(e: Eqn, env: dict, tape: dict, keep: bool) -> None:
    """Run one equation of any kind, reading and writing `env` (the generic path)."""
    if e.op == "vjp":
        _vjp(e, env, tape)
    elif e.op == "cond":
        _cond(e, env, tape, keep)
    elif e.op == "while_loop":
        _while(e, env, tape, keep)
    else:
        ctx = object.__new__(e.fn)
        out = e.fn.forward(ctx, *[env[i] for i in e.ins], **e.attrs)
        env[e.outs[0]] = out if type(out) is np.ndarray else np.asarray(out)
        if keep:
            tape[e.outs[0]] = _store_ctx(ctx)


def _cond(e: Eqn, env: dict, tape: dict, keep: bool) -> None:
    pred = env[e.ins[0]]
    branch = "true" if bool(np.all(pred)) else "false"
    sub_tape: dict[Any, Any] | None = {} if keep else None
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
    limit = e.attrs.get("max_iterations", MAX_ITERATIONS)
    steps = 0
    while bool(np.all(cond_run.run(carry + caps)[0])):
        if steps == limit:
            raise loop_limit_error(limit, e.site)
        steps += 1
        sub_tape: dict[Any, Any] | None = {} if keep else None
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
        full = list(gradients(grads, len(needs), f"{op}Backward", e.site))
    outs = iter(e.outs)
    for need, g, (shape, dtype) in zip(needs, full, in_types):
        if need:
            env[next(outs)] = fit_grad(g, shape, f"{op}Backward", e.site, dtype)


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
