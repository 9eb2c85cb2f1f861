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
