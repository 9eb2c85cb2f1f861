"""What a `Program` means: `interpret` runs it one equation at a time, as JAX's
`eval_jaxpr` or torch.fx's `Interpreter` do.

This is the program's one semantics, short enough to read in one sitting: an `env`
dict from variable to array, filled with the inputs and constants, then each equation
in order through its op's own core class (`cls.forward`; a `vjp` equation calls the
same class's `backward` on the context its forward equation left on the `tape`, so
masks such as relu's are those of the current inputs). `cond` runs one branch,
`while_loop` its body until the condition fails; both keep their branch tapes when
gradients are wanted.

A call of a StaticGraph does not walk this loop: `runner` prints the program once as
straight-line Python (codegen.py) and runs that. The printed code must mean what
`interpret` means: in the tests every compiled run is also interpreted and the two
results compared (tests/static/conftest.py).

Static layer: imports the core, numpy and the standard library only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..core.errors import message
from .codegen import Replay, fit_grad, gradients
from .ir import ZERO, Eqn, Program, saved_for_backward

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


def interpret(
    program: Program, args: list, tape: dict | None = None, keep_all: bool = False
) -> list:
    """Run `program` on `args` (arrays, in input order) and return its outputs.

    Each op's context goes on `tape` (keyed by its output variable) where a `vjp`
    equation of this program reads it, or for every op with `keep_all` (a branch or loop
    body whose gradient program runs later, on the same tape).
    """
    env = dict(program.consts)
    env.update(zip(program.inputs, args))
    tape = {} if tape is None else tape
    read = saved_for_backward(program.eqns)
    for e in program.eqns:
        keep = keep_all or (bool(e.outs) and e.outs[0] in read)
        run_equation(e, env, tape, keep, interpret)
    return [env[v] for v in program.outputs]


def compiled(
    program: Program, args: list, tape: dict | None = None, keep_all: bool = False
) -> list:
    """Run `program` as `interpret` does, through its compiled Python (the fast path)."""
    return runner(program, keep_all).run(args, tape)


def runner(program: Program, keep_all: bool = False) -> Replay:
    """The program compiled to Python, once (programs are not changed after tracing)."""
    key = "_runner_all" if keep_all else "_runner"
    r = program.__dict__.get(key)
    if r is None:
        r = program.__dict__[key] = Replay(program, keep_all, run_equation)
    return r


def run_equation(e: Eqn, env: dict, tape: dict, keep: bool, run: Callable | None = None) -> None:
    """Run one equation of any kind, reading and writing `env`.

    `run(program, args, tape, keep_all)` runs a `cond` branch or a loop body: `interpret`
    in the interpreter, the compiled code (the default) in a replay.
    """
    run = run or compiled
    if e.op == "vjp":
        _vjp(e, env, tape, run)
    elif e.op == "cond":
        _cond(e, env, tape, keep, run)
    elif e.op == "while_loop":
        _while(e, env, tape, keep, run)
    else:
        ctx = object.__new__(e.fn)
        out = e.fn.forward(ctx, *[env[i] for i in e.ins], **e.attrs)
        env[e.outs[0]] = out if type(out) is np.ndarray else np.asarray(out)
        if keep:
            tape[e.outs[0]] = _store_ctx(ctx)


def _cond(e: Eqn, env: dict, tape: dict, keep: bool, run: Callable) -> None:
    pred = env[e.ins[0]]
    branch = "true" if bool(np.all(pred)) else "false"
    sub_tape: dict[int, Any] | None = {} if keep else None
    outs = run(e.subs[branch], [env[i] for i in e.ins[1:]], sub_tape, keep)
    for vid, val in zip(e.outs, outs):
        env[vid] = val
    if keep:
        tape[e.outs[0]] = (branch, sub_tape)


def _while(e: Eqn, env: dict, tape: dict, keep: bool, run: Callable) -> None:
    n = e.attrs["n_carry"]
    vals = [env[i] for i in e.ins]
    carry, caps = vals[:n], vals[n:]
    tapes = []
    limit = e.attrs.get("max_iterations", MAX_ITERATIONS)
    steps = 0
    while bool(np.all(run(e.subs["cond"], carry + caps)[0])):
        if steps == limit:
            raise loop_limit_error(limit, e.site)
        steps += 1
        sub_tape: dict[int, Any] | None = {} if keep else None
        carry = run(e.subs["body"], carry + caps, sub_tape, keep)
        tapes.append(sub_tape)
    for vid, val in zip(e.outs, carry):
        env[vid] = val
    if keep:
        tape[e.outs[0]] = tapes


def _cotangents(e: Eqn, env: dict) -> list:
    shapes = e.attrs["_out_types"]
    return [np.zeros(s, dtype=d) if i == ZERO else env[i] for i, (s, d) in zip(e.ins, shapes)]


def _vjp(e: Eqn, env: dict, tape: dict, run: Callable) -> None:
    """Gradients of one forward equation's inputs, from its own backward rule."""
    ctx = tape[e.attrs["of"]]
    needs = e.attrs["needs"]
    in_types = e.attrs["_in_types"]
    op = e.attrs["op"]
    full: Sequence[Any]  # one gradient (or None) per input of the forward equation
    if op == "cond":
        branch, sub_tape = ctx
        grads = run(e.subs[f"{branch}_grad"], _cotangents(e, env), sub_tape)
        it = iter(grads)  # the predicate gets no gradient
        full = [None] + [next(it) if n else None for n in needs[1:]]
    elif op == "while_loop":
        full = _while_vjp(e, env, ctx, run)
    else:
        ctx.needs_input_grad = needs
        grads = e.fn.backward(ctx, env[e.ins[0]])
        full = gradients(grads, len(needs), f"{op}Backward", e.site)
    outs = iter(e.outs)
    for need, g, (shape, dtype) in zip(needs, full, in_types):
        if need:
            env[next(outs)] = fit_grad(g, shape, f"{op}Backward", e.site, dtype)


def _while_vjp(e: Eqn, env: dict, tapes: list, run: Callable) -> list:
    """Reverse through the recorded iterations: the trip count is known at run time."""
    n = e.attrs["n_carry"]
    in_types = e.attrs["_in_types"]
    differentiable = e.attrs["_float_ins"]
    cot = _cotangents(e, env)
    caps = [np.zeros(s, dtype=d) for s, d in in_types[n:]]
    for sub_tape in reversed(tapes):
        grads = run(e.subs["body_grad"], cot, sub_tape)
        full, it = [], iter(grads)
        for is_float, (s, d) in zip(differentiable, in_types):
            full.append(next(it) if is_float else np.zeros(s, dtype=d))
        cot = full[:n]
        caps = [c + g for c, g in zip(caps, full[n:])]
    return cot + caps
