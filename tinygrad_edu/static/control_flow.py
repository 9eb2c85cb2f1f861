"""Structured control flow: `cond` and `while_loop`, eagerly and inside a trace.

Eagerly they are plain Python (`if` / `while`) and autograd works as usual. Inside a
trace, a Python `if` on a traced value freezes one branch; these instead record *both*
branches (or the loop's condition and body) as sub-programs, and the choice is made
each time the graph runs. Values a branch uses from outside become extra inputs of the
sub-program ("captures"), so the sub-programs stay self-contained.

Static layer: imports the core, numpy and the standard library only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core import source
from ..core.errors import ShapeError, TracingError, message
from ..core.tensor import Tensor
from . import runtime
from .ir import Eqn, Program, Var, saved_for_backward
from .tracer import Tracer, _site, current, flatten_outputs


def _value(x: Any) -> np.ndarray:
    return np.asarray(x)


def _truth(x: Any, op: str) -> bool:
    arr = _value(x)
    if arr.size != 1:
        raise ShapeError(
            message(
                op,
                f"the condition must be a single value, got shape {arr.shape!r}",
                source.here(),
                "reduce it first, e.g. (x > 0).all() or x.sum() > 0",
            )
        )
    return bool(arr.item())


def _tensors(values: Any) -> list:
    return [v if isinstance(v, Tensor) else Tensor.wrap(np.asarray(v)) for v in values]


def _types(prog: Program, vids: list) -> list:
    return [(prog.vars[v].shape, prog.vars[v].dtype.name) for v in vids]


def _describe(types: list) -> str:
    return ", ".join(f"{d}{list(s)}" for s, d in types) or "nothing"


def _sub_trace(parent: Tracer, fn: Callable, carry: list, names: list) -> tuple:
    """Trace `fn(*carry)` as a sub-program of `parent`; returns (tracer, structure)."""
    child = Tracer(parent=parent)
    args = []
    for t, nm in zip(carry, names):
        a = Tensor.wrap(np.asarray(t))
        a.name = nm
        child.add_input(a, nm)
        args.append(a)
    with child:
        outs, structure = flatten_outputs(fn(*args))
        child.program.outputs = child.output_vars(outs)
    return child, structure


def _align_captures(children: list) -> list:
    """One shared capture list; every sub-program gets an input for each capture."""
    union: list[int] = []
    for c in children:
        for outer in c.captures:
            if outer not in union:
                union.append(outer)
    for c in children:
        prog = c.program
        n_own = len(prog.inputs) - len(c.captures)
        own, mine = prog.inputs[:n_own], dict(zip(c.captures, prog.inputs[n_own:]))
        caps = []
        for outer in union:
            if outer not in mine:  # this branch does not use it: an unused input
                v = c.new_id()
                src = c.parent.program.vars[outer]
                prog.vars[v] = Var(v, src.shape, src.dtype, src.name)
                mine[outer] = v
            caps.append(mine[outer])
        prog.inputs = own + caps
    return union


def _emit(tr: Tracer, eqn: Eqn, structure: str) -> Any:
    """Append `eqn` to the trace, compute its value now and bind output tensors."""
    env = {i: tr.values[i] for i in eqn.ins}
    runtime.run_equation(eqn, env, {}, False)
    depends = any(i in tr.depends for i in eqn.ins)
    tr.program.eqns.append(eqn)
    outs = []
    for vid in eqn.outs:
        t = Tensor.wrap(env[vid])
        tr._bind(t, vid)
        if depends:
            tr.depends.add(vid)
        outs.append(t)
    return outs[0] if structure == "single" else tuple(outs)


def _names(operands: list, prefix: str) -> list:
    return [t.name or f"{prefix}{i}" for i, t in enumerate(operands)]


def cond(pred: Any, true_fn: Callable, false_fn: Callable, *operands: Any) -> Any:
    r"""`true_fn(*operands)` if `pred` holds, else `false_fn(*operands)`, kept in a trace.

    Rules: eagerly this is an `if` (autograd flows through the branch that ran).
    Inside a trace both branches are recorded as sub-programs and the choice is made
    at every replay; gradients flow through the branch that ran. Both branches must
    return the same number of Tensors with the same shapes and dtypes. `pred` must
    hold a single value.

    Args:
        pred: a one-element tensor (or bool), e.g. `x.sum() > 0`.
        true_fn, false_fn: functions of the operands returning Tensor(s).
        *operands: the values passed to the chosen branch.

    Raises:
        TracingError: the branches return different structures, shapes or dtypes.

    Example:
        >>> import tinygrad_edu as tg
        >>> f = lambda x: tg.static.cond(x.sum() > 0, lambda v: v * 2, lambda v: -v, x)
        >>> g = tg.static.trace(f, tg.tensor([1.0, 2.0]))
        >>> g(tg.tensor([1.0, 2.0])), g(tg.tensor([-1.0, -2.0]))
        (tensor([2., 4.]), tensor([1., 2.]))
    """
    tr = current()
    if tr is None:
        return (true_fn if _truth(pred, "cond") else false_fn)(*operands)
    _truth(pred, "cond")  # shape check only
    ops = _tensors(operands)
    names = _names(ops, "x")
    t_child, t_struct = _sub_trace(tr, true_fn, ops, names)
    f_child, f_struct = _sub_trace(tr, false_fn, ops, names)
    tt, ft = (
        _types(t_child.program, t_child.program.outputs),
        _types(f_child.program, f_child.program.outputs),
    )
    if tt != ft or t_struct != f_struct:
        raise TracingError(
            message(
                "cond",
                f"the branches must return the same shapes and dtypes: true_fn returns "
                f"{_describe(tt)}, false_fn returns {_describe(ft)}",
                source.here(),
                "make both branches return tensors of the same shapes (a static graph has fixed "
                "shapes whichever branch runs)",
            )
        )
    caps = _align_captures([t_child, f_child])
    ins = (tr.lookup(pred),) + tuple(tr.lookup(o) for o in ops) + tuple(caps)
    outs = tuple(tr._new_var(s, d) for s, d in tt)
    eqn = Eqn(
        "cond", ins, outs, {}, _site(), None, {"true": t_child.program, "false": f_child.program}
    )
    return _emit(tr, eqn, t_struct)


def while_loop(
    cond_fn: Callable, body_fn: Callable, init: Any, max_iterations: int | None = None
) -> Any:
    r"""Repeat `carry = body_fn(*carry)` while `cond_fn(*carry)` holds; kept in a trace.

    Rules: `init` is a Tensor (the carry) or a tuple of them; both functions take the
    carry unpacked and `body_fn` returns it with the same shapes and dtypes (use
    float counters: `i + 1` on an integer tensor becomes float64). Eagerly this is a
    Python `while`. Inside a trace the condition and the body are recorded once as
    sub-programs and the loop runs at replay time, for as many steps as the inputs
    need. Gradients go back through the steps the run actually took.

    Args:
        cond_fn: carry -> one-element tensor (or bool).
        body_fn: carry -> the next carry.
        init: the first carry.
        max_iterations: stop with an error after this many steps (default
            `runtime.MAX_ITERATIONS`, 100,000), so an endless loop says so instead of
            hanging, eagerly, in replay and in a loaded graph.

    Returns:
        The final carry (a Tensor, or a tuple like `init`).

    Raises:
        TracingError: the body changes the carry's structure, shapes or dtypes.
        RuntimeError: the condition still held after `max_iterations` steps.

    Example:
        >>> import tinygrad_edu as tg
        >>> double_until = lambda x: tg.static.while_loop(lambda v: v.sum() < 100,
        ...                                               lambda v: v * 2, x)
        >>> g = tg.static.trace(double_until, tg.tensor([1.0, 2.0]))
        >>> g(tg.tensor([30.0, 10.0])), g(tg.tensor([1.0, 0.0]))
        (tensor([120.,  40.]), tensor([128.,   0.]))
    """
    if max_iterations is not None and (type(max_iterations) is not int or max_iterations < 0):
        raise TypeError(
            message(
                "while_loop",
                f"max_iterations must be a non-negative int, got {max_iterations!r}",
                source.here(),
            )
        )
    single = not isinstance(init, (tuple, list))
    carry = _tensors([init] if single else list(init))
    tr = current()
    if tr is None:
        carry = _loop_eagerly(cond_fn, body_fn, carry, single, max_iterations)
        return carry[0] if single else tuple(carry)
    return _record_loop(tr, cond_fn, body_fn, carry, single, max_iterations)


def _loop_eagerly(
    cond_fn: Callable, body_fn: Callable, carry: list, single: bool, max_iterations: int | None
) -> list:
    """A Python `while`, with the checks the traced loop makes at replay time."""
    limit = runtime.MAX_ITERATIONS if max_iterations is None else max_iterations
    steps = 0
    while _truth(cond_fn(*carry), "while_loop"):
        if steps == limit:
            raise runtime.loop_limit_error(limit, source.here())
        steps += 1
        out = body_fn(*carry)
        out_list = [out] if single else list(out)
        _check_carry(
            [(c.shape, c.dtype.name) for c in carry],
            [(np.shape(o), _value(o).dtype.name) for o in out_list],
        )
        carry = _tensors(out_list)
    return carry


def _record_loop(
    tr: Tracer,
    cond_fn: Callable,
    body_fn: Callable,
    carry: list,
    single: bool,
    max_iterations: int | None,
) -> Any:
    """One `while_loop` equation: the condition and the body traced once, as sub-programs."""
    names = _names(carry, "c")
    c_child, _ = _sub_trace(tr, cond_fn, carry, names)
    b_child, _ = _sub_trace(tr, body_fn, carry, names)
    if (
        len(c_child.program.outputs) != 1
        or int(np.prod(c_child.program.vars[c_child.program.outputs[0]].shape)) != 1
    ):
        raise TracingError(
            message(
                "while_loop",
                "cond_fn must return a single value",
                source.here(),
                "return e.g. i < 10 or x.sum() < 1",
            )
        )
    _check_carry(
        [(c.shape, c.dtype.name) for c in carry], _types(b_child.program, b_child.program.outputs)
    )
    caps = _align_captures([c_child, b_child])
    ins = tuple(tr.lookup(c) for c in carry) + tuple(caps)
    outs = tuple(tr._new_var(c.shape, c.dtype) for c in carry)
    attrs = {"n_carry": len(carry)}
    if max_iterations is not None:
        attrs["max_iterations"] = max_iterations
    subs = {"cond": c_child.program, "body": b_child.program}
    eqn = Eqn("while_loop", ins, outs, attrs, _site(), None, subs)
    return _emit(tr, eqn, "single" if single else "tuple")


def _check_carry(carry: list, body: list) -> None:
    if [(tuple(s), d) for s, d in carry] != [(tuple(s), d) for s, d in body]:
        raise TracingError(
            message(
                "while_loop",
                f"body_fn must return the carry unchanged in shape and dtype: the "
                f"carry is {_describe(carry)}, body_fn returned {_describe(body)}",
                source.here(),
                "keep shapes fixed, and use float counters (1.0) rather than integers",
            )
        )


def inline(tr: Tracer, program: Program, args: list) -> list:
    """Copy `program`'s equations into the trace `tr` (a StaticGraph called in a trace)."""
    rename: dict[int, int] = {}
    for vid, a in zip(program.inputs, args):
        rename[vid] = tr.lookup(a if isinstance(a, Tensor) else Tensor.wrap(np.asarray(a)))
    for vid, arr in program.consts.items():
        v = program.vars[vid]
        rename[vid] = tr._new_var(v.shape, v.dtype, v.name)
        tr.program.consts[rename[vid]] = arr
        tr.values[rename[vid]] = arr
    env = {vid: tr.values[rename[vid]] for vid in list(program.inputs) + list(program.consts)}
    tape: dict = {}
    depends = any(rename[v] in tr.depends for v in program.inputs)
    of_ids = saved_for_backward(program.eqns)
    for e in program.eqns:
        runtime.run_equation(e, env, tape, bool(e.outs) and e.outs[0] in of_ids)
        for o in e.outs:
            v = program.vars[o]
            rename[o] = tr._new_var(v.shape, v.dtype, v.name)
            tr.values[rename[o]] = env[o]
            if depends:
                tr.depends.add(rename[o])
        attrs = dict(e.attrs)
        if e.op == "vjp":
            attrs["of"] = rename[attrs["of"]]
        tr.program.eqns.append(
            Eqn(
                e.op,
                tuple(rename.get(i, i) for i in e.ins),
                tuple(rename[o] for o in e.outs),
                attrs,
                e.site,
                e.fn,
                dict(e.subs),
            )
        )
    outs = []
    for o in program.outputs:
        t = Tensor.wrap(env[o])
        tr._bind(t, rename[o])
        outs.append(t)
    return outs
