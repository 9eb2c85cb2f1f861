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


def _replay_class(cls: type) -> type:
    """`cls` with a plain `saved_tensors` attribute, for contexts that live one replay.

    `Function.saved_tensors` checks each saved array's version counter (in-place edits
    since forward) and whether the graph was freed. Replay saves plain arrays it made
    itself, during the same run, so those checks can never fire: `save_for_backward`
    stores the tuple and `backward` reads it back. `forward` and `backward` are still
    the core class's own (inherited, not copied).
    """
    sub = _REPLAY_CLASSES.get(cls)
    if sub is None:
        # same name and module: `Function.__init_subclass__` keeps the core class registered
        sub = _REPLAY_CLASSES[cls] = type(cls.__name__, (cls,), {
            "__module__": cls.__module__, "__qualname__": cls.__qualname__,
            "saved_tensors": (), "save_for_backward": _save_plain})
    return sub


def _save_plain(self: Any, *arrays: Any) -> None:
    self.saved_tensors = arrays


_REPLAY_CLASSES: dict = {}


def _unbroadcast(got: tuple, shape: tuple) -> Any:
    """A function summing a gradient of shape `got` down to `shape` (None: not a sum)."""
    lead = len(got) - len(shape)
    if lead < 0 or any(n != 1 and n != m for n, m in zip(shape, got[lead:])):
        return None
    lead_axes = tuple(range(lead))
    kept = tuple(i + lead for i, n in enumerate(shape) if n == 1 and got[i + lead] != 1)
    reduce = np.add.reduce
    if not kept:  # e.g. a bias: (batch, n) -> (n,)
        return lambda g: reduce(g, axis=lead_axes)
    axes = lead_axes + kept
    return lambda g: reduce(g, axis=axes, keepdims=True).reshape(shape)


class Runner:
    """A program prepared for fast replay: one small closure per equation over a list.

    Rules:
        - Every variable (and the context of every forward op that a `vjp` line reads)
          gets a fixed index into one list, so a step reads `env[3]`, not a dict.
        - Plain ops call their core class's `forward`, and their `vjp` lines its
          `backward`, with a context made fresh in this run (see `_replay_class`).
        - `cond`, `while_loop` and their gradients go through `execute`; their entries
          and the contexts of a `keep_all` run go on the `tape` dict that a gradient
          program reads later.
    """

    def __init__(self, program: Program, keep_all: bool = False) -> None:
        self.program = program
        self.keep_all = keep_all
        slots: dict = {}

        def at(key: Any) -> int:
            return slots.setdefault(key, len(slots))

        consts = [(at(v), a) for v, a in program.consts.items()]
        self.in_slots = [at(v) for v in program.inputs]
        self.tape_slot = at("tape")
        made = {e.outs[0] for e in program.eqns if e.fn is not None and e.op != "vjp"}
        read = {e.attrs["of"] for e in program.eqns if e.op == "vjp"}
        plain = {e.attrs["of"] for e in program.eqns
                 if e.op == "vjp" and e.attrs["op"] not in ("cond", "while_loop")}
        # contexts a gradient program reads from the tape its forward program filled
        self.tape_in = [(of, at(("ctx", of))) for of in sorted(plain - made)]
        self.tape_out = []
        self.steps = []
        for e in program.eqns:
            if e.op == "vjp" and e.attrs["op"] not in ("cond", "while_loop"):
                self.steps.append(_vjp_step(e, at))
            elif e.fn is not None and e.op != "vjp":
                keep = keep_all or e.outs[0] in read
                ctx_slot = at(("ctx", e.outs[0])) if keep else None
                if keep_all:
                    self.tape_out.append((e.outs[0], ctx_slot))
                self.steps.append(_forward_step(e, at, ctx_slot))
            else:
                self.steps.append(_structured_step(e, at, self.tape_slot,
                                                   keep_all or bool(e.outs) and e.outs[0] in read))
        self.out_slots = [at(v) for v in program.outputs]
        self.template = [None] * len(slots)
        for i, a in consts:
            self.template[i] = a

    def run(self, args: list, tape: dict | None = None) -> list:
        env = self.template.copy()
        for i, a in zip(self.in_slots, args):
            env[i] = a
        if tape is None:
            tape = {}
        env[self.tape_slot] = tape
        for of, i in self.tape_in:
            env[i] = tape[of]
        for step in self.steps:
            step(env)
        for of, i in self.tape_out:
            tape[of] = env[i]
        return [env[i] for i in self.out_slots]


def _forward_step(e: Eqn, at: Any, c: int | None) -> Any:
    """`env[out] = cls.forward(ctx, *ins, **attrs)`, keeping ctx in `env[c]`.

    With `c` None no `vjp` line reads the ctx, so one made here serves every run.
    """
    cls, fwd, kw, o = _replay_class(e.fn), e.fn.forward, e.attrs, at(e.outs[0])
    ins = [at(v) for v in e.ins]
    new, nd, asarray = object.__new__, _ndarray, np.asarray
    if c is None:
        ctx = new(cls)
        if len(ins) == 2 and not kw:
            a, b = ins

            def step(env: list) -> None:
                r = fwd(ctx, env[a], env[b])
                env[o] = r if type(r) is nd else asarray(r)
            return step
    elif len(ins) == 2 and not kw:  # the common case, without `*`/`**` packing
        a, b = ins

        def step(env: list) -> None:
            env[c] = ctx = new(cls)
            r = fwd(ctx, env[a], env[b])
            env[o] = r if type(r) is nd else asarray(r)
        return step
    elif len(ins) == 1 and not kw:
        (a,) = ins

        def step(env: list) -> None:
            env[c] = ctx = new(cls)
            r = fwd(ctx, env[a])
            env[o] = r if type(r) is nd else asarray(r)
        return step

    def step(env: list) -> None:  # any arity, with attributes such as `axis`
        ctx = new(cls)
        if c is not None:
            env[c] = ctx
        r = fwd(ctx, *[env[i] for i in ins], **kw)
        env[o] = r if type(r) is nd else asarray(r)
    return step


def _vjp_step(e: Eqn, at: Any) -> Any:
    """An op's own backward rule on the ctx of this run, each gradient fitted to its input."""
    bwd, needs, c, gi = e.fn.backward, e.attrs["needs"], at(("ctx", e.attrs["of"])), at(e.ins[0])
    g_shape = e.attrs["_out_types"][0][0]
    outs, it = [], iter(e.outs)
    for k, (need, (shape, _)) in enumerate(zip(needs, e.attrs["_in_types"])):
        if need:  # which returned gradient, where it goes, its shape, how to sum it there
            outs.append((k, at(next(it)), shape, _unbroadcast(g_shape, shape)))
    nd = _ndarray

    def fit(g: Any, shape: tuple, plan: Any) -> np.ndarray:
        if plan is not None and type(g) is nd and g.shape == g_shape:
            return plan(g)
        return _fit(g, shape, None)

    if len(outs) == 1:
        ((k, o, shape, plan),) = outs

        def step(env: list) -> None:
            ctx = env[c]
            ctx.needs_input_grad = needs
            g = bwd(ctx, env[gi])
            if type(g) is tuple:
                g = g[k]
            env[o] = g if type(g) is nd and g.shape == shape else fit(g, shape, plan)
    else:
        def step(env: list) -> None:
            ctx = env[c]
            ctx.needs_input_grad = needs
            grads = bwd(ctx, env[gi])
            if type(grads) is not tuple:
                grads = (grads,)
            for k, o, shape, plan in outs:
                g = grads[k]
                env[o] = g if type(g) is nd and g.shape == shape else fit(g, shape, plan)
    return step


def _structured_step(e: Eqn, at: Any, t: int, keep: bool) -> Any:
    """`cond`, `while_loop` or their `vjp`: the generic `execute` on a small dict."""
    ins = [(v, at(v)) for v in e.ins if v != ZERO]
    outs = [(v, at(v)) for v in e.outs]

    def step(env: list) -> None:
        local = {v: env[i] for v, i in ins}
        execute(e, local, env[t], keep)
        for v, i in outs:
            env[i] = local[v]
    return step


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
