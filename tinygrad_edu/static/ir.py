"""The program a trace records: variables, equations (one op each) and sub-programs.

A `Program` is plain data, like a jaxpr: `inputs` (placeholders), `consts` (arrays the
trace captured), `eqns` (one op per line, in execution order) and `outputs`. Every
value is a `Var` with a static shape and dtype. An `Eqn` names its op (a class in
`core.function.OPS`, or one of the structured ops `cond`, `while_loop`, `vjp`), the
variables it reads and writes, its keyword attributes and the learner's source line.

Static layer: imports the core, numpy and the standard library only.
"""

from __future__ import annotations

import itertools
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# Ops that are not core Function classes; their semantics live in runtime.py.
STRUCTURED = ("cond", "while_loop", "vjp")
ZERO = 0  # a `vjp` input slot that receives no gradient: zeros of the right shape


@dataclass
class Var:
    """One value in a program: a static shape and dtype, and an optional name."""

    id: int
    shape: tuple
    dtype: np.dtype
    name: str | None = None

    def type_text(self) -> str:
        dims = ", ".join(str(d) for d in self.shape)
        return f"{self.dtype.name}[{dims}]"


@dataclass
class Eqn:
    """`outs = op(ins, **attrs)`; `fn` is the op class (None for structured ops)."""

    op: str
    ins: tuple
    outs: tuple
    attrs: dict = field(default_factory=dict)
    site: str | None = None
    fn: Any = None
    subs: dict = field(default_factory=dict)  # name -> Program (branches, loop body, ...)


@dataclass
class Program:
    """A straight-line program over `Var`s, possibly with structured sub-programs."""

    inputs: list
    outputs: list
    consts: dict  # var id -> ndarray
    eqns: list
    vars: dict  # var id -> Var (this program's own variables)

    def var(self, vid: int) -> Var:
        return self.vars[vid]

    def count_ops(self) -> int:
        """Equations here and in every sub-program (what the passes report)."""
        return sum(1 + sum(p.count_ops() for p in e.subs.values()) for e in self.eqns)


class IdSource:
    """Fresh variable ids for one program family (a program and its sub-programs)."""

    def __init__(self, start: int = 1) -> None:
        self._count = itertools.count(start)

    def __call__(self) -> int:
        return next(self._count)


def saved_for_backward(eqns: list) -> set:
    """The forward variables whose op's context a `vjp` equation among `eqns` reads."""
    return {e.attrs["of"] for e in eqns if e.op == "vjp"}


def max_id(program: Program) -> int:
    """The largest variable id used anywhere in `program` (to continue numbering)."""
    ids = list(program.vars)
    for e in program.eqns:
        for sub in e.subs.values():
            ids.append(max_id(sub))
    return max(ids, default=0)


# --- dataflow: the walks the passes and the code printer share ----------------------


def constant_steps(steps: list, known: Any, foldable: Any) -> list:
    """The steps (equations, or lines of generated code) that read known values only.

    `known` are the constants; a step that reads only those, and may be computed ahead
    (`foldable(step)`), makes known values too. Each step has `ins` and `outs`.
    """
    known, out = set(known), []
    for s in steps:
        if s.ins and foldable(s) and set(s.ins) <= known:
            out.append(s)
            known.update(s.outs)
    return out


def last_reads(steps: list) -> list[set]:
    """For each step, the values it is the last to read: dead after it (walked backward)."""
    later: set = set()
    out = []
    for s in reversed(steps):
        out.append(set(s.ins) - later)
        later.update(s.ins)
    return out[::-1]


# --- checks -------------------------------------------------------------------------

MAX_CHECK_BYTES = 256 * 2**20  # all declared values of one program (the type check runs it)


def check_types(p: Program, where: str, fail: Callable) -> None:
    """Every declared type must be what the program computes: run each plain op once on
    zeros of its declared input types, and compare sub-programs' types with their
    equation's. (A hand-edited file could declare anything: replaying it would give
    other shapes than it says, or a raw numpy error.) `fail(where, what)` makes the
    error raised: io.py's FormatError, exported.py's refusal of a size.
    """
    total = sum(int(np.prod(v.shape)) * v.dtype.itemsize for v in p.vars.values())
    if total > MAX_CHECK_BYTES:
        raise fail(
            where, f"its values declare {total} bytes, more than the {MAX_CHECK_BYTES} allowed"
        )
    env = {vid: np.zeros(p.vars[vid].shape, p.vars[vid].dtype) for vid in p.inputs}
    env.update(p.consts)
    for i, e in enumerate(p.eqns):
        w = f"{where}.eqns[{i}]"
        if e.op in STRUCTURED:
            _check_structured_types(e, p, w, fail)
            env.update({o: np.zeros(p.vars[o].shape, p.vars[o].dtype) for o in e.outs})
            continue
        ins = [env[v] for v in e.ins]
        try:
            with np.errstate(all="ignore"):
                out = np.asarray(e.fn.forward(object.__new__(e.fn), *ins, **e.attrs))
        except Exception as err:  # anything the op raises: these types do not fit it
            types = ", ".join(p.vars[v].type_text() for v in e.ins)
            raise fail(
                w,
                f"{e.op} cannot run on its declared inputs ({types}): {type(err).__name__}: {err}",
            ) from None
        v = p.vars[e.outs[0]]
        if out.shape != v.shape or out.dtype != v.dtype:
            got = ", ".join(str(d) for d in out.shape)
            raise fail(
                w,
                f"{e.op} computes {out.dtype.name}[{got}] from its declared inputs, "
                f"the file declares {v.type_text()}",
            )
        env[e.outs[0]] = out


def _types(prog: Program, vids: Any) -> list:
    return [(prog.vars[v].shape, prog.vars[v].dtype) for v in vids]


def _check_structured_types(e: Eqn, p: Program, w: str, fail: Callable) -> None:
    """Sub-programs take and give exactly the types their equation declares."""
    outs = _types(p, e.outs)
    if e.op == "cond":
        ins, pairs = _types(p, e.ins[1:]), [("true", e.subs["true"]), ("false", e.subs["false"])]
        expected = [(name, sub, ins, outs) for name, sub in pairs]
    elif e.op == "while_loop":
        ins = _types(p, e.ins)
        expected = [
            ("body", e.subs["body"], ins, outs),
            ("cond", e.subs["cond"], ins, _types(e.subs["cond"], e.subs["cond"].outputs)),
        ]
        if ins[: len(outs)] != outs:
            raise fail(w, "the while_loop's outputs do not have its carry's types")
    else:  # vjp: one gradient per needed input, of that input's type
        needed = [t for t, need in zip(e.attrs["_in_types"], e.attrs["needs"]) if need]
        if outs != [(tuple(s), d) for s, d in needed]:
            raise fail(w, "the vjp's outputs do not have the types of the inputs it differentiates")
        return
    for name, sub, ins, sub_outs in expected:
        if _types(sub, sub.inputs) != ins or _types(sub, sub.outputs) != sub_outs:
            raise fail(
                w,
                f"sub-program {name!r} does not take and give the types the "
                f"{e.op} equation declares",
            )


# --- text ------------------------------------------------------------------------------


def names(program: Program) -> dict:
    """Display name of every variable: inputs and named constants by name, others `%id`."""
    out: dict[int, str] = {}
    used: set[str] = set()
    for vid in list(program.inputs) + list(program.consts):
        v = program.vars[vid]
        base = v.name or (f"c{vid}" if vid in program.consts else f"in{vid}")
        # NFKC, as Python reads identifiers: a fullwidth `ｘ` is the name `x`, so it must
        # not be a second, different-looking `x` (in generated code they would be one)
        base = unicodedata.normalize("NFKC", base)
        name = base if base not in used else f"{base}_{vid}"
        used.add(name)
        out[vid] = name
    for vid in program.vars:
        out.setdefault(vid, f"%{vid}")
    return out


def format_attr(value: Any) -> str:
    if isinstance(value, np.dtype):
        return value.name
    if isinstance(value, np.ndarray):
        return f"array{list(value.shape)}"
    if isinstance(value, slice):
        parts = ["" if p is None else str(p) for p in (value.start, value.stop, value.step)]
        return ":".join(parts[:2]) if value.step is None else ":".join(parts)
    if value is Ellipsis:
        return "..."
    if isinstance(value, tuple):
        return (
            "(" + ", ".join(format_attr(v) for v in value) + ("," if len(value) == 1 else "") + ")"
        )
    return repr(value)


def program_text(program: Program, title: str = "static_graph", indent: str = "") -> list[str]:
    """One line per op, jaxpr-style, with the line of learner code that made it."""
    nm = names(program)
    lines = []
    args = ", ".join(f"{nm[v]}: {program.vars[v].type_text()}" for v in program.inputs)
    lines.append(f"{indent}{title}({args}):")
    body = indent + "    "
    for vid, arr in program.consts.items():
        v = program.vars[vid]
        lines.append(f"{body}{nm[vid]}: {v.type_text()} = const {_preview(arr)}")
    for e in program.eqns:
        lines.extend(eqn_text(e, nm, program, body))
    outs = ", ".join(nm[v] for v in program.outputs)
    lines.append(f"{body}return {outs}")
    return lines


def eqn_text(e: Eqn, nm: dict, program: Program, body: str) -> list[str]:
    outs = ", ".join(f"{nm.get(o, f'%{o}')}: {program.vars[o].type_text()}" for o in e.outs)
    ins = ", ".join("0" if i == ZERO else nm.get(i, f"%{i}") for i in e.ins)
    if e.op == "vjp":  # the forward op's own backward rule, with what that line saved
        of = nm.get(e.attrs["of"], f"%{e.attrs['of']}")
        call = f"{e.attrs['op']}.backward({ins}, ctx={of})"
    else:
        shown = {k: v for k, v in e.attrs.items() if not k.startswith("_")}
        attrs = ", ".join(f"{k}={format_attr(v)}" for k, v in shown.items())
        call = f"{e.op}({ins}{', ' if ins and attrs else ''}{attrs})"
    text = f"{body}{outs or '()'} = {call}"
    if e.site:
        text = f"{text:<60}  # {e.site}"
    lines = [text]
    for key, sub in e.subs.items():
        lines.extend(program_text(sub, title=key, indent=body + "    "))
    return lines


def _preview(arr: np.ndarray) -> str:
    if arr.size <= 4:
        return np.array2string(arr, precision=4, separator=", ")
    return f"<{arr.size} values>"
