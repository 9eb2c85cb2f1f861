"""Compile a `Program` into one straight-line Python function: what replay runs.

This is the define-then-run payoff. The graph is known before any data arrives, so
it can be turned, once, into plain Python: one line per equation. The ops a training
step is made of become the numpy a careful person writes by hand (numpy_lines.py:
`v9 = x @ w1`, and for its gradient `x.T @ v40`), with every shape check, dtype
conversion and broadcast-undoing sum planned at compile time, and lines that read only
constants computed once, now. Any other op (a learner's own `Function`) is a call of
its class's own `forward` or `backward` (the eager engine's rules, inherited, not
copied). A replay step then does no graph walking and no lookups, and creates no
Tensors. Its source is kept (`StaticGraph.python_source`) so learners can read it.

Static layer: imports the core, numpy and the standard library only.
"""

from __future__ import annotations

import ast
import itertools
import keyword
import linecache
import unicodedata
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.function import OPS
from ..core.grad_fit import count_error, fit_gradient
from ..core.ops.common import broadcast_to, zero_where
from ..core.saved import plain
from ..core.tensor import Tensor
from . import ir, numpy_lines
from .ir import ZERO, Eqn, Program, Var, names

_ndarray = np.ndarray
_compiled_ids = itertools.count(1)


def fit_grad(
    g: Any, shape: tuple, op: str = "vjp", site: Any = None, dtype: Any = np.float64
) -> np.ndarray:
    """A gradient in its input's shape, by the eager engine's own rule (core/grad_fit.py).

    A learner's backward may return a Tensor, a number or None (no gradient: zeros).
    """
    if g is None:
        return np.zeros(shape, dtype)
    if isinstance(g, Tensor):
        g = np.asarray(g)
    return np.asarray(fit_gradient(g, shape, op, site, dtype))


def gradients(g: Any, n: int, op: str, site: Any) -> tuple:
    """What a backward returned, as one gradient per input (the eager engine's check)."""
    if type(g) is not tuple:
        g = tuple(g) if isinstance(g, list) else (g,)
    if len(g) != n:
        raise count_error(op, site, len(g), n)
    return g


def _fitter(
    got: tuple, shape: tuple, op: str = "vjp", site: Any = None, dtype: Any = np.float64
) -> Callable[[Any], np.ndarray]:
    """`fit(g)`: a gradient of shape `got` brought to its input's `shape`, planned ahead.

    Where `got` broadcasts to `shape` (a bias), the axes to sum over are found once
    here, not on every run; anything unexpected takes the general `fit_grad`, which
    raises the eager engine's error for a shape that does not fit.
    """
    lead = len(got) - len(shape)
    if lead < 0 or any(n != 1 and n != m for n, m in zip(shape, got[lead:])):
        return lambda g: fit_grad(g, shape, op, site, dtype)
    lead_axes = tuple(range(lead))
    kept = tuple(i + lead for i, n in enumerate(shape) if n == 1 and got[i + lead] != 1)
    axes, reduce = lead_axes + kept, np.add.reduce

    def fit(g: Any) -> np.ndarray:
        if type(g) is not _ndarray or g.shape != got or g.dtype != dtype:
            return fit_grad(g, shape, op, site, dtype)
        if not kept:  # e.g. a bias: (batch, n) -> (n,)
            return reduce(g, axis=lead_axes)
        return reduce(g, axis=axes, keepdims=True).reshape(shape)

    return fit


def replay_class(cls: type) -> type:
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
        sub = _REPLAY_CLASSES[cls] = type(
            cls.__name__,
            (cls,),
            {
                "__module__": cls.__module__,
                "__qualname__": cls.__qualname__,
                "saved_tensors": (),
                "save_for_backward": _save_plain,
            },
        )
    return sub


def _save_plain(self: Any, *arrays: Any) -> None:
    self.saved_tensors = tuple(plain(a) for a in arrays)


_REPLAY_CLASSES: dict = {}


_collected_sources: list[str] = []  # linecache names of programs the GC has collected


class Replay:
    """A program compiled to Python: `run(args, tape)` calls the generated function.

    `source` is the generated code. With `keep_all` (a `cond` branch or loop body whose
    gradient is wanted later) every op's context goes on the `tape` dict, keyed by its
    output variable, for the gradient program to read back.
    """

    def __init__(self, program: Program, keep_all: bool, run_equation: Callable) -> None:
        self.program = program
        self.keep_all = keep_all
        self.source, namespace, self.uses_tape = _generate(program, keep_all, run_equation)
        self.filename = f"<tinygrad_edu.static compiled #{next(_compiled_ids)}>"
        # registered with linecache so a traceback through replay shows the generated lines
        while _collected_sources:  # the entries of programs collected since: no leak on retrace
            linecache.cache.pop(_collected_sources.pop(), None)
        linecache.cache[self.filename] = (
            len(self.source),
            None,
            self.source.splitlines(True),
            self.filename,
        )
        # NOTE: only noted when collected, not dropped then: the cyclic GC may run inside
        # linecache.checkcache's loop over its keys, which fails if one goes meanwhile
        weakref.finalize(self, _collected_sources.append, self.filename)
        exec(compile(self.source, self.filename, "exec"), namespace)  # our own generated code
        self.fn = namespace["replay"]

    def run(self, args: list, tape: dict | None = None) -> list:
        if self.uses_tape:
            return self.fn({} if tape is None else tape, *args)
        return self.fn(*args)


class _Names:
    """Python identifiers for a program's values and for the objects the code calls.

    Values keep their program names where those are identifiers (`x`, `w1`, `c18`;
    `%9` becomes `v9`). Everything else the code reaches (op functions, constants,
    planned fitters) is a global of the generated module, named so it clashes with no
    value and no name the code itself uses.
    """

    def __init__(self, program: Program) -> None:
        self.namespace: dict[str, Any] = {}
        self.values: dict[int, str] = {}
        # names the code uses
        taken = {"replay", "tape", "g", "env", "type", "tuple", "np", "broadcast_to", "zero_where"}
        for vid, text in names(program).items():
            name = text.replace("%", "v")
            # Python reads identifiers in NFKC form (`ｘ` is `x`): only names already in
            # that form are used as they are, so two values never become one variable
            if (
                not name.isidentifier()
                or keyword.iskeyword(name)
                or name in taken
                or name.startswith(("_", "ctx"))
                or unicodedata.normalize("NFKC", name) != name
            ):
                name = f"v{vid}"
            while name in taken:  # e.g. an input called `v9` next to value %9
                name = f"{name}_"
            taken.add(name)
            self.values[vid] = name
        self._taken = taken
        self._objects: dict[int, str] = {}
        self.scalars = {vid for vid, v in program.vars.items() if v.shape == ()}
        self.types = {self.values[vid]: v for vid, v in program.vars.items()}
        self.folded: set[str] = set()  # names computed at compile time
        self.namespace.update(np=np, broadcast_to=broadcast_to, zero_where=zero_where)
        self.new = self.obj(object.__new__, "new_ctx")
        self.ndarray = self.obj(np.ndarray, "ndarray")
        self.asarray = self.obj(np.asarray, "asarray")

    def __getitem__(self, vid: int) -> str:
        return self.values[vid]

    def obj(self, value: Any, hint: str) -> str:
        """The global name under which the generated code reaches `value` (made once)."""
        key = id(value)
        if key not in self._objects:
            name = hint
            for n in itertools.count(2):
                if name not in self.namespace and name not in self._taken:
                    break
                name = f"{hint}{n}"
            self.namespace[name] = value
            self._objects[key] = name
        return self._objects[key]


def _literal(value: Any, nm: _Names, hint: str) -> str:
    """`value` as Python source when it reads back equal (ints, tuples...), else a global."""
    text = repr(value)
    try:
        simple = (
            type(value) in (int, float, bool, str, tuple, type(None))
            and ast.literal_eval(text) == value
            and type(ast.literal_eval(text)) is type(value)
        )
    except (ValueError, SyntaxError):
        simple = False
    return text if simple else nm.obj(value, hint)


def _is_plain_vjp(e: Eqn) -> bool:
    return e.op == "vjp" and e.attrs["op"] not in ("cond", "while_loop")


@dataclass
class Line:
    """One statement of the generated code and the values it reads and makes, by name.

    The printer's passes (constant folding, freeing dead values) walk these sets, as the
    program passes walk an equation's `ins` and `outs`: never the text. `pure` is a
    written-out numpy line, which may run once, at compile time.
    """

    text: list
    ins: tuple = ()
    outs: tuple = ()
    pure: bool = False


def _generate(program: Program, keep_all: bool, run_equation: Callable) -> tuple[str, dict, bool]:
    """The source of `replay(...)`, the globals it runs with, and whether it takes a tape."""
    nm = _Names(program)
    for vid, arr in program.consts.items():
        nm.namespace[nm[vid]] = arr
    written = _written_out(program, keep_all)
    read = ir.saved_for_backward(program.eqns)
    made = {e.outs[0] for e in program.eqns if e.fn is not None and e.op != "vjp"}
    # contexts a gradient program reads from the tape its forward program filled
    tape_in = sorted({e.attrs["of"] for e in program.eqns if _is_plain_vjp(e)} - made)
    lines = [Line([f"ctx{of} = tape[{of}]"], outs=(f"ctx{of}",)) for of in tape_in]
    structured = False
    for e in program.eqns:
        if _is_plain_vjp(e) and e.attrs["of"] in written:
            lines.extend(_written_vjp_lines(e, written[e.attrs["of"]], nm, program))
        elif e.outs and e.outs[0] in written:
            lines.append(_written_forward_line(e, nm, program))
        elif _is_plain_vjp(e):
            lines.append(_vjp_lines(e, nm))
        elif e.fn is not None and e.op != "vjp":
            lines.append(_forward_lines(e, nm, keep_all or e.outs[0] in read))
        else:
            structured = True
            keep = keep_all or bool(e.outs) and e.outs[0] in read
            lines.append(_structured_lines(e, nm, run_equation, keep))
    lines = _fold_constants(lines, nm, program)
    body = _drop_after_last_use(lines, _big_names(program, nm, keep_all))
    if keep_all:
        body.extend(
            f"tape[{e.outs[0]}] = ctx{e.outs[0]}"
            for e in program.eqns
            if e.fn is not None and e.op != "vjp"
        )
    body.append(_return_line(program, nm))
    uses_tape = keep_all or structured or bool(tape_in)
    args = ", ".join(["tape"] * uses_tape + [nm[v] for v in program.inputs])
    source = "\n".join([f"def replay({args}):"] + ["    " + line for line in body]) + "\n"
    return source, nm.namespace, uses_tape


def _written_out(program: Program, keep_all: bool) -> dict[int, Eqn]:
    """The forward equations written as numpy (numpy_lines.py), by the var each makes.

    Only the package's own op classes (a learner's subclass of `Add` may change its rule),
    and not under `keep_all`: a branch or loop body hands its contexts to a later gradient
    program, so those ops keep their context objects.
    """
    if keep_all:
        return {}
    wanted: dict[int, list] = {}  # forward var -> which inputs each of its vjp lines needs
    for e in program.eqns:
        if _is_plain_vjp(e):
            wanted.setdefault(e.attrs["of"], []).append(e.attrs["needs"])
    written = {}
    for e in program.eqns:
        if e.fn is None or e.op == "vjp" or OPS.get(e.op) is not e.fn or len(e.outs) != 1:
            continue
        ins = [program.vars[v] for v in e.ins]
        names_ = [f"_{i}" for i in range(len(ins))]  # only asks whether a rule exists
        if numpy_lines.forward_expr(e.op, ins, names_, e.attrs, _consts_of(e, program)) is None:
            continue
        needs = wanted.get(e.outs[0], [])
        if needs:  # every gradient a vjp line wants must have a numpy line too
            shape = program.vars[e.outs[0]].shape
            grads = numpy_lines.backward_exprs(e.op, ins, names_, "_o", "_g", e.attrs, shape)
            if any(n[k] and grads[k] is None for n in needs for k in range(len(ins))):
                continue
        written[e.outs[0]] = e
    return written


def _consts_of(e: Eqn, program: Program) -> tuple:
    """The value of each input of `e` that is a constant of the program, else None."""
    return tuple(program.consts.get(v) for v in e.ins)


def _written_forward_line(e: Eqn, nm: _Names, program: Program) -> Line:
    """`out = <numpy>`: the op's forward, written out (numpy_lines.py)."""
    ins = [program.vars[v] for v in e.ins]
    consts = _consts_of(e, program)
    expr = numpy_lines.forward_expr(e.op, ins, [nm[v] for v in e.ins], e.attrs, consts)
    assert expr is not None  # _written_out kept `e` only where a rule gave an expression
    out = e.outs[0]
    # numpy gives a scalar, not a 0-d array, for a 0-d result: made an array, as eagerly
    line = f"{nm[out]} = {_as_array(expr) if out in nm.scalars else expr}"
    return Line([line], tuple(nm[v] for v in e.ins), (nm[out],), pure=True)


def _as_array(expr: str) -> str:
    return f"np.asarray({expr})"


def _written_vjp_lines(e: Eqn, fwd: Eqn, nm: _Names, program: Program) -> list[Line]:
    """Each needed gradient of `fwd`'s inputs as one numpy line, cast and summed as planned.

    Shapes and dtypes are known now, so the eager engine's checks of what backward
    returned (`fit_gradient`) are done here, once: a gradient of another dtype is
    converted, one of a broadcast input summed back to the input's shape.
    """
    ins = [program.vars[v] for v in fwd.ins]
    out_shape = program.vars[fwd.outs[0]].shape
    g = nm[e.ins[0]]
    grads = numpy_lines.backward_exprs(
        fwd.op, ins, [nm[v] for v in fwd.ins], nm[fwd.outs[0]], g, fwd.attrs, out_shape
    )
    lines, outs = [], iter(e.outs)
    for need, grad, (shape, dtype) in zip(e.attrs["needs"], grads, e.attrs["_in_types"]):
        if not need:
            continue
        vid = next(outs)
        operands = [nm.types[o] if isinstance(o, str) else o for o in grad.operands]
        got_dtype = np.result_type(*[o.dtype if isinstance(o, Var) else o for o in operands])
        got = grad.shape or np.broadcast_shapes(*[o.shape for o in operands if isinstance(o, Var)])
        expr = grad.expr
        if got_dtype != dtype:  # converted first, then summed: fit_gradient's order
            expr = f"({expr}).astype({nm.obj(dtype, dtype.name)})"
        if got != shape:
            expr = numpy_lines.sum_to_expr(expr, got, shape)
        if shape == ():
            expr = _as_array(expr)
        if expr == g:  # the cotangent itself (`+`): a second name for it, not a line
            nm.values[vid] = g
        else:
            lines.append(Line([f"{nm[vid]} = {expr}"], tuple(grad.reads()), (nm[vid],), True))
    return lines


def _fold_constants(lines: list[Line], nm: _Names, program: Program) -> list[Line]:
    """Run once, now, each written-out line that reads constants only.

    E.g. the gradient of a mean, `one / c22`, spread over the batch: it is the same on
    every run, so it is computed here and the line stays as a comment, for the reader.
    """
    folded = ir.constant_steps(lines, {nm[v] for v in program.consts}, lambda line: line.pure)
    nm.folded = {nm[v] for v in program.consts}
    for line in folded:
        exec(line.text[0], nm.namespace)  # our own generated line, on our own constants
        nm.folded.update(line.outs)
    gone = {id(line) for line in folded}
    return [
        Line([f"# {line.text[0]}  (constants only: computed once, at compile time)"])
        if id(line) in gone
        else line
        for line in lines
    ]


def _big_names(program: Program, nm: _Names, keep_all: bool) -> set:
    """The names worth a `del` after their last use: big values and contexts holding them."""
    made = {v for e in program.eqns for v in e.outs}  # inputs and constants are not ours
    outputs = {nm[v] for v in program.outputs}
    big = {
        nm.values[v]
        for v in made
        if v in program.vars and _is_big(program.vars[v].shape) and nm.values[v] not in outputs
    }
    if not keep_all:  # under keep_all the contexts go on the tape at the end
        for e in program.eqns:
            # what a context keeps are its op's inputs and output: big if one of those is
            types = list(e.attrs.get("_in_types", ())) + list(e.attrs.get("_out_types", ()))
            if _is_plain_vjp(e) and any(_is_big(shape) for shape, _ in types):
                big.add(f"ctx{e.attrs['of']}")
    return big - nm.folded


def _drop_after_last_use(lines: list[Line], big: set) -> list[str]:
    """A `del` right after the last line that reads each big value.

    As a careful person would: a big intermediate array's memory is then free for the
    next one, while still in the cache, instead of every array of the step staying alive
    until it returns.
    """
    out = []
    for line, dead in zip(lines, ir.last_reads(lines)):
        out.extend(line.text)
        if dead & big:
            out.append(f"del {', '.join(sorted(dead & big, key=_natural))}")
    return out


def _natural(name: str) -> tuple:
    return (len(name), name)


def _return_line(program: Program, nm: _Names) -> str:
    """`return [...]`; a value computed at compile time is returned as a copy, so a caller
    that changes it in place cannot change the next run's result."""
    outs = [
        f"{nm[v]}.copy()" if nm[v] in nm.folded - _consts(program, nm) else nm[v]
        for v in program.outputs
    ]
    return f"return [{', '.join(outs)}]"


def _consts(program: Program, nm: _Names) -> set:
    return {nm[v] for v in program.consts}


_BIG = 1 << 14  # elements: 128 KiB of float64, where malloc starts handing out fresh pages


def _is_big(shape: tuple) -> bool:
    """Worth a `del`: a value of at least `_BIG` elements (or of sizes known only at run
    time). Small ones cost less to keep than the line that drops them."""
    size = 1
    for n in shape:
        if not isinstance(n, int):
            return True
        size *= n
    return size >= _BIG


def _forward_lines(e: Eqn, nm: _Names, keep: bool) -> Line:
    """`out = Op.forward(ctx, *ins, **attrs)`, with a fresh ctx where a backward reads it."""
    fwd = nm.obj(e.fn.forward, f"{e.fn.__name__}_forward")
    out = nm[e.outs[0]]
    cls = replay_class(e.fn)
    if keep:
        ctx = f"ctx{e.outs[0]}"
        first = f"{ctx} = {nm.new}({nm.obj(cls, e.fn.__name__)}); "
    else:  # no backward reads it: made in the call, gone (with what it saved) right after
        ctx, first = f"{nm.new}({nm.obj(cls, e.fn.__name__)})", ""
    call = ", ".join(
        [ctx] + [nm[v] for v in e.ins] + [f"{k}={_literal(v, nm, k)}" for k, v in e.attrs.items()]
    )
    lines = [f"{first}{out} = {fwd}({call})"]
    # numpy gives a scalar, not a 0-d array, for a 0-d result; a learner's own op may
    # return a list. The package's ops give arrays for every other shape.
    if e.outs[0] in nm.scalars or not e.fn.__module__.startswith("tinygrad_edu."):
        lines.append(f"if type({out}) is not {nm.ndarray}: {out} = {nm.asarray}({out})")
    return Line(lines, tuple(nm[v] for v in e.ins), (out,) + ((ctx,) if keep else ()))


def _vjp_lines(e: Eqn, nm: _Names) -> Line:
    """`g = Op.backward(ctx, cotangent)`, each needed gradient checked or fitted to its input."""
    of, needs = e.attrs["of"], e.attrs["needs"]
    bwd = nm.obj(e.fn.backward, f"{e.fn.__name__}_backward")
    g_shape = e.attrs["_out_types"][0][0]
    lines = [f"ctx{of}.needs_input_grad = {needs!r}; g = {bwd}(ctx{of}, {nm[e.ins[0]]})"]
    wanted = [k for k, need in enumerate(needs) if need]
    ours = e.fn.__module__.startswith("tinygrad_edu.")
    op = f"{e.fn.__name__}Backward"  # the eager node's name, so errors read the same
    if not ours:  # a learner's rule: the eager engine's check of what it returned
        check = nm.obj(gradients, "gradients")
        lines.append(f"g = {check}(g, {len(needs)}, {op!r}, {_literal(e.site, nm, 'site')})")
    for k, vid in zip(wanted, e.outs):
        shape, dtype = e.attrs["_in_types"][k]
        out = nm[vid]
        # one of our one-input ops may return its gradient bare or as a 1-tuple
        lines.append(
            f"{out} = g[0] if type(g) is tuple else g"
            if len(needs) == 1 and ours
            else f"{out} = g[{k}]"
        )
        # The package's rules give a gradient of the output's shape, and numpy gives an
        # array for every shape but (): where the input has that shape too, nothing to fit.
        if not ours or shape != g_shape or shape == ():
            fit = nm.obj(_fitter(g_shape, shape, op, e.site, dtype), f"fit_{out}")
            # a learner's rule may also return another dtype: converted, as eagerly
            odd_dtype = "" if ours else f" or {out}.dtype != {nm.obj(dtype, 'dtype')}"
            lines.append(
                f"if type({out}) is not {nm.ndarray} or {out}.shape != {shape!r}"
                f"{odd_dtype}: {out} = {fit}({out})"
            )
    return Line(lines, (f"ctx{of}", nm[e.ins[0]]), tuple(nm[v] for v in e.outs))


def _structured_lines(e: Eqn, nm: _Names, run_equation: Callable, keep: bool) -> Line:
    """`cond`, `while_loop` or their `vjp`: the generic `run_equation` on a small dict."""
    ins = ", ".join(f"{v}: {nm[v]}" for v in e.ins if v != ZERO)
    eqn = nm.obj(e, f"{e.op}_eqn")
    lines = [f"env = {{{ins}}}; {nm.obj(run_equation, 'run_equation')}({eqn}, env, tape, {keep!r})"]
    lines += [f"{nm[v]} = env[{v}]" for v in e.outs]
    return Line(lines, tuple(nm[v] for v in e.ins if v != ZERO), tuple(nm[v] for v in e.outs))
