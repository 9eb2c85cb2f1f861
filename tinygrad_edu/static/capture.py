"""Capture with graph breaks: the regions, paths and replay behind `tg.static.compile`.

A capture runs the learner's function eagerly, on the real arguments, under a tracer.
Where a traced tensor becomes a Python value (`if t > 0`, `float(t)`, `t.item()`),
`tg.static.trace` would freeze the branch; a capture instead records a **graph
break**: the ops recorded so far end one *region*, the value the Python read is
remembered (the break's *outcome*), and recording goes on into the next region.

One capture is one **path**: regions `R0, R1, ...`, the outcome of the break after
each, and the outputs. Paths that agree up to a break share those regions (the same
objects), so the regions of all paths form a tree: a break with outcome True leads to
one region, with outcome False to another. Replay walks the tree: it runs a region
from its `StaticGraph`, reads the break's value from the result as the Python would
have, and follows the child for that outcome. An outcome never seen means the Python
went where no capture went: the caller captures again (a new path).

Variables are numbered by the tracer in the order the function creates them, so two
captures of the same Python give the same numbers up to where they part: that is how
a new path finds the regions it shares with the old ones (and it checks that the ops
really are the same).

Static layer: imports the core, numpy and the standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.errors import TracingError, message
from ..core.tensor import Tensor
from .ir import Eqn, Program
from .program import StaticGraph
from .static_function import _Trace, _with_grad
from .tracer import Break, Tracer, read_outcome


def same_value(a: Any, b: Any) -> bool:
    """Equal, and of the same type (True is not 1 here); nan equals nan."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, Program):
        return same_program(a, b)
    try:
        return bool(a == b) or (a != a and b != b)  # nan
    except Exception:  # an object whose == is not a truth value
        return a is b


def same_program(a: Program, b: Program) -> bool:
    """Two programs (or sub-programs of cond / while_loop) that do the same thing."""
    return (
        a.inputs == b.inputs
        and a.outputs == b.outputs
        and same_value(a.consts, b.consts)
        and len(a.eqns) == len(b.eqns)
        and all(same_eqn(x, y) for x, y in zip(a.eqns, b.eqns))
    )


def same_eqn(a: Eqn, b: Eqn) -> bool:
    return (
        a.op == b.op
        and a.fn is b.fn
        and a.ins == b.ins
        and a.outs == b.outs
        and same_value(a.attrs, b.attrs)
        and same_value(a.subs, b.subs)
    )


@dataclass(eq=False)
class Region:
    """The ops between two breaks: one graph of the compiled function.

    `exports` are the values later regions, breaks or outputs read (of any path through
    this region); `graph` is built from them on first use and dropped when they grow.
    """

    eqns: list
    consts: dict  # var id -> array, the constants these ops read
    vars: dict  # var id -> Var for every value the region reads or makes
    brk: Break | None  # the break that ends it (None: the function returned)
    name: str = "f"
    exports: set = field(default_factory=set)
    _graph: StaticGraph | None = None
    _run: Any = None  # the graph as tg.static.function's _Trace: runs it with gradients

    def defined(self) -> set:
        return {o for e in self.eqns for o in e.outs}

    def reads(self) -> list:
        """Values the ops read that an earlier region or the call supplies, in order."""
        made, out = self.defined(), []
        for e in self.eqns:
            for i in _reads(e):
                if i not in made and i not in self.consts and i not in out:
                    out.append(i)
        return out

    @property
    def graph(self) -> StaticGraph:
        if self._graph is None:
            outs = sorted(self.exports)
            prog = Program(self.reads(), outs, dict(self.consts), list(self.eqns), dict(self.vars))
            self._graph = StaticGraph(prog, "tuple", self.name)
        return self._graph

    def same_as(self, other: Region) -> bool:
        same_break = (self.brk is None) == (other.brk is None) and (
            self.brk is None or (self.brk.var, self.brk.kind) == (other.brk.var, other.brk.kind)  # type: ignore[union-attr]
        )
        types = {v: (x.shape, x.dtype) for v, x in self.vars.items()}
        return (
            same_break
            and types == {v: (x.shape, x.dtype) for v, x in other.vars.items()}
            and len(self.eqns) == len(other.eqns)
            and all(same_eqn(a, b) for a, b in zip(self.eqns, other.eqns))
            and same_value(self.consts, other.consts)
        )


def _reads(e: Eqn) -> tuple:
    return tuple(i for i in e.ins if i != 0)


@dataclass(eq=False)
class Path:
    """One capture: its regions, the break outcomes between them, and its outputs."""

    regions: list
    outcomes: list  # outcome of regions[k].brk, for every region but the last
    outputs: list  # ("var", id) or ("value", a Python value), one per result
    structure: str  # "single" or "tuple"
    inputs: list  # var ids of the tensor arguments, in order
    lifted: dict  # var id -> captured tensor (parameters...), read at every call
    consts: dict  # every constant of the capture (an output may be one)
    lifted_names: dict = field(default_factory=dict)  # var id -> name, for messages
    derived: bool = False  # re-specialised from captures at other sizes (symbolic.py)
    grad_stop: str | None = None  # where gradients stop inside: replay cannot (see record)
    samples: tuple = ()  # if derived: the sizes of the two captures it came from


def split(tr: Tracer, result: Any, name: str, arg_vars: list) -> Path:
    """Cut the capture's one long program into regions at its breaks."""
    prog = tr.program
    outputs, structure = _outputs(tr, result)
    regions: list[Any] = []
    outcomes: list[Any] = []
    start = 0
    for stop, brk in tr.breaks + [(len(prog.eqns), None)]:
        regions.append(_region(prog, prog.eqns[start:stop], brk, f"{name}_{len(regions)}"))
        if brk is not None:
            outcomes.append(brk.outcome)
        start = stop
    lifted = {tr.find(t): t for t in tr.lifted}
    names = {vid: prog.vars[vid].name for vid in lifted}
    path = Path(regions, outcomes, outputs, structure, arg_vars, lifted, dict(prog.consts), names)
    path.grad_stop = tr.grad_stop
    return path


def _region(prog: Program, eqns: list, brk: Break | None, name: str) -> Region:
    used = {i for e in eqns for i in _reads(e)} | {o for e in eqns for o in e.outs}
    consts = {v: prog.consts[v] for v in prog.consts if v in used}
    return Region(list(eqns), consts, {v: prog.vars[v] for v in used}, brk, name)


def _outputs(tr: Tracer, result: Any) -> tuple[list, str]:
    items, structure = (
        ([result], "single") if not isinstance(result, (tuple, list)) else (list(result), "tuple")
    )
    outputs = []
    for x in items:
        if isinstance(x, Tensor):
            outputs.append(("var", tr.lookup(x)))
        elif x is None or type(x) in (bool, int, float, str):
            outputs.append(("value", x))  # a Python value: the same on this path every time
        else:
            raise TracingError(
                message(
                    "tg.static.compile",
                    f"the function returned a {type(x).__name__}; a compiled "
                    "function returns Tensors, Python numbers or a tuple of them",
                    None,
                    "return a Tensor or a tuple of Tensors",
                )
            )
    return outputs, structure


class PathTree:
    """The paths captured for one cache entry, sharing the regions they have in common."""

    def __init__(self, name: str = "f", parts: Any = None) -> None:
        self.name = name
        self.parts = parts  # the guarded description of the arguments it was captured for
        self.paths: list[Path] = []
        self.lifted: dict = {}  # var id -> captured tensor, over all paths
        self.lifted_types: dict = {}  # var id -> (shape, dtype) when captured
        self.lifted_names: dict = {}  # var id -> its name in the graphs
        self.grad_stop: str | None = None  # a path stops gradients inside (capture.record)

    def regions(self) -> list:
        """Every distinct region, in the order the paths reach them."""
        out: list = []
        for p in self.paths:
            out.extend(r for r in p.regions if not any(r is s for s in out))
        return out

    def add(self, path: Path) -> str | None:
        """Add a new capture, sharing its leading regions with an earlier path's.

        Returns None, or why the earlier paths were dropped: the same Python, given the
        same guards and the same break outcomes, must record the same ops; when it does
        not, it read something no guard checks, and only the newest capture is kept.
        """
        for other in self.paths:
            for k in range(min(len(path.regions), len(other.regions))):
                if not other.regions[k].same_as(path.regions[k]):
                    self.paths, self.lifted, self.lifted_types = [], {}, {}
                    self.lifted_names, self.grad_stop = {}, None
                    self._add(path)
                    return (
                        f"the ops after {_where(other, k)} differ from an earlier capture's "
                        "with the same outcomes: the Python read something no guard checks"
                    )
                path.regions[k] = other.regions[k]  # the same region: one graph for both
                if (
                    k >= len(path.outcomes)
                    or k >= len(other.outcomes)
                    or not same_value(other.outcomes[k], path.outcomes[k])
                ):
                    break  # the paths part here
        self._add(path)
        return None

    def _add(self, path: Path) -> None:
        self.paths.append(path)
        self.grad_stop = self.grad_stop or path.grad_stop
        for vid, t in path.lifted.items():
            self.lifted[vid] = t
            self.lifted_types[vid] = (t.shape, t.dtype, t.requires_grad)
            self.lifted_names[vid] = path.lifted_names.get(vid)
        self._update_exports()
        for i, r in enumerate(self.regions()):  # graphs numbered in the order paths reach them
            r.name = f"{self.name}_graph{i}"
            if r._graph is not None:
                r._graph.name = r.name

    def stale(self) -> str | None:
        """Why a captured tensor (a parameter) no longer fits the graphs, or None."""
        for vid, t in self.lifted.items():
            shape, dtype, requires_grad = self.lifted_types[vid]
            name = self.lifted_names.get(vid, "captured")
            if t.shape != shape or t.dtype != dtype:
                return (
                    f"captured tensor {name!r} now has shape {t.shape!r} {t.dtype.name}, "
                    f"the capture saw {shape!r} {dtype.name}"
                )
            if t.requires_grad != requires_grad:  # which gradients stop inside depends on it
                return (
                    f"captured tensor {name!r}.requires_grad changed from {requires_grad} to "
                    f"{t.requires_grad}"
                )
        return None

    def _update_exports(self) -> None:
        """What each region must hand on: read later on any path through it."""
        wanted: dict = {id(r): set() for p in self.paths for r in p.regions}
        for p in self.paths:
            needed = {v for kind, v in p.outputs if kind == "var"}
            for r in reversed(p.regions):
                if r.brk is not None:
                    needed.add(r.brk.var)
                wanted[id(r)] |= r.defined() & needed
                needed |= set(r.reads())
        for p in self.paths:
            for r in p.regions:
                if wanted[id(r)] != r.exports:
                    r.exports, r._graph, r._run = wanted[id(r)], None, None

    def next_path(self, path: Path, k: int, outcome: Any) -> Path | None:
        """A path that went through `path`'s regions 0..k and then took `outcome`."""
        for q in self.paths:
            if (
                len(q.regions) > k + 1
                and all(a is b for a, b in zip(q.regions[: k + 1], path.regions[: k + 1]))
                and same_value(q.outcomes[k], outcome)
            ):
                return q
        return None


def _where(path: Path, k: int) -> str:
    brk = path.regions[k - 1].brk if k > 0 else None
    if brk is None:
        return "the start"
    return f"the break at {brk.site}" if brk.site is not None else f"break {k}"


@dataclass
class Miss:
    """A replay reached a break whose outcome no captured path has seen."""

    brk: Break
    outcome: Any
    seen: list  # the outcomes the captured paths took there


def replay(tree: PathTree, env: dict, with_grad: bool) -> Path | Miss:
    """Run the regions from their graphs, following each break's outcome; fills `env`.

    `env` maps variables to arrays (or, `with_grad`, to Tensors) and starts with the
    arguments and the captured tensors. Returns the path taken, or a `Miss`.
    """
    path, k = tree.paths[-1], 0
    while True:
        region = path.regions[k]
        _run_region(region, env, with_grad)
        if region.brk is None:
            return path
        outcome = read_outcome(env[region.brk.var], region.brk.kind)
        if not same_value(outcome, path.outcomes[k]):
            other = tree.next_path(path, k, outcome)
            if other is None:
                seen = [
                    p.outcomes[k]
                    for p in tree.paths
                    if len(p.regions) > k + 1 and p.regions[k] is region
                ]
                return Miss(region.brk, outcome, seen)
            path = other
        k += 1


def _run_region(region: Region, env: dict, with_grad: bool) -> None:
    if not region.exports:
        return  # nothing it makes is read later (or it has no ops)
    g = region.graph
    ins = [env[v] for v in g.program.inputs]
    if with_grad:
        if region._run is None:
            region._run = _Trace(g, {}, [], [])
        outs = _with_grad(region._run, ins)
    else:
        outs = g.run_arrays(ins)
    env.update(zip(g.program.outputs, outs))


def results(path: Path, env: dict) -> Any:
    """The function's result on this path, from the replay's values."""
    vals = []
    for kind, v in path.outputs:
        if kind == "value":
            vals.append(v)
        elif v in env:
            x = env[v]
            vals.append(x if isinstance(x, Tensor) else Tensor.wrap(x))
        else:  # a tensor the function made without ops: a fresh copy each call
            vals.append(Tensor.wrap(np.array(path.consts[v])))
    return vals[0] if path.structure == "single" else tuple(vals)
