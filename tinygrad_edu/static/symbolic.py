"""Dynamic sizes for `tg.static.compile`: reuse one captured program for any size of a dim.

torch.compile traces a dynamic dimension as a symbol `s0`, so one graph serves every
size. Our graphs have fixed shapes (every `Var` has one), so we do the next best
thing, without running the learner's Python again: from two captures of the same
path at two sizes `a` and `b` of a dynamic dimension, we learn which numbers in the
program are the size. A number that is the same in both captures is kept; one that
is `k * a` in the first and `k * b` in the second (the dim itself, `2 * s0` after a
reshape, the `n` of a mean) is the size times `k`. Any other difference means the
program uses the size in a way we cannot see through, and the size stays specialised.
For a new size `c`, the program is *re-specialised*: every size number becomes `k * c`,
and the graphs are generated again from it (no capture, no Python of the learner's).

What this cannot see (torch.compile guards these, we do not): a Python decision on a
size (`if x.shape[0] > 100:`) that came out the same at `a` and `b`. As in
torch.compile, sizes 0 and 1 are never generalised (a 1 broadcasts, a 0 is empty).

Static layer: imports the core, numpy and the standard library only.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from .capture import Path, PathTree, Region, same_value
from .ir import Eqn, Program, Var
from .tracer import Break


class _NotSymbolicError(Exception):
    """The two captures differ in more than their sizes."""


def respecialise(trees: dict, sizes: tuple, dims: list) -> tuple[PathTree | None, str]:
    """A PathTree for `sizes`, from paths captured at two other sizes; or None and why not.

    Each path (a sequence of break outcomes) is re-specialised from the newest two real
    captures of it at different sizes; paths captured at one size only are left out
    (a call that takes one captures it).
    """
    shown = ", ".join(f"{n}={c}" for n, c in zip(dims, sizes))
    if any(c in (0, 1) for c in sizes):
        return None, f"the dynamic size {shown} is 0 or 1, which is always specialised"
    # real captures only (not paths re-specialised from them), never with a size 0 or 1
    real = [
        (s, p)
        for s, t in trees.items()
        if not any(n in (0, 1) for n in s)
        for p in t.paths
        if not p.derived
    ]
    name = next(iter(trees.values())).name if trees else "f"
    tree, used = PathTree(name), []
    for i in range(len(real) - 1, 0, -1):  # the newest first
        b, pb = real[i]
        if any(same_value(pb.outcomes, q.outcomes) for q in tree.paths):
            continue  # this path is already re-specialised
        path = _from_pair(real[:i], b, pb, sizes)
        if path is not None:
            if tree.add(path) is not None:
                return None, f"new size {shown}: the captures disagree, so capture again"
            used += [s for s in path.samples if s not in used]
    if tree.paths:
        at = ", ".join(_shown_sizes(s) for s in sorted(used))
        return tree, (
            f"re-specialised the graphs for {shown} from the captures at sizes {at}: "
            "no Python ran, nothing was captured"
        )
    if len({s for s, _ in real}) < 2:
        return None, (
            f"new size {shown} of a dynamic dimension: one capture is not enough to "
            "tell which numbers in it are the size, so capture again"
        )
    return None, (
        f"new size {shown} of a dynamic dimension, but the captures at other sizes "
        "differ in more than the size (or took other paths), so capture again"
    )


def _shown_sizes(s: tuple) -> str:
    return str(s[0]) if len(s) == 1 else str(s)


def _from_pair(earlier: list, b: tuple, pb: Path, c: tuple) -> Path | None:
    """`pb` (captured at sizes `b`) for sizes `c`, with an earlier capture of it as the pair."""
    for a, pa in reversed(earlier):
        if a == b or not same_value(pa.outcomes, pb.outcomes) or pa.structure != pb.structure:
            continue
        if any(n != x and x == y for n, x, y in zip(c, a, b)):
            continue  # a dim that did not change between them: which numbers are it is unknown
        try:
            path = _Substitute(a, b, c).path(pa, pb)
        except _NotSymbolicError:
            continue
        path.derived, path.samples, path.grad_stop = True, (a, b), pa.grad_stop
        return path
    return None


class _Substitute:
    """Walks two captures side by side and writes the program for the new sizes."""

    def __init__(self, a: tuple, b: tuple, c: tuple) -> None:
        self.a, self.b, self.c = a, b, c

    def number(self, p: Any, q: Any) -> Any:
        if same_value(p, q):
            return p
        if (
            type(p) is not type(q)
            or isinstance(p, (bool, np.bool_))
            or not isinstance(p, (int, float, np.integer, np.floating))
        ):
            raise _NotSymbolicError
        fp, fq, found = Fraction(p), Fraction(q), set()  # type: ignore[arg-type]  # a real number
        for a, b, c in zip(self.a, self.b, self.c):
            if a != b and fp * b == fq * a:  # p = k * a and q = k * b, the same k
                found.add(fp * c / a)
        if len(found) != 1:
            raise _NotSymbolicError  # not a multiple of a size, or of two sizes at once
        value = found.pop()
        if isinstance(p, (int, np.integer)):
            if value.denominator != 1:
                raise _NotSymbolicError
            return type(p)(int(value))
        return type(p)(float(value))

    def value(self, p: Any, q: Any) -> Any:
        if isinstance(p, Program) and isinstance(q, Program):
            return self.program(p, q)
        if isinstance(p, np.ndarray) and isinstance(q, np.ndarray):
            return self.array(p, q)
        if type(p) is not type(q):
            raise _NotSymbolicError
        if isinstance(p, (tuple, list)):
            if len(p) != len(q):
                raise _NotSymbolicError
            return type(p)(self.value(x, y) for x, y in zip(p, q))
        if isinstance(p, dict):
            if p.keys() != q.keys():
                raise _NotSymbolicError
            return {k: self.value(p[k], q[k]) for k in p}
        if isinstance(p, slice):
            return slice(
                *(
                    self.value(x, y)
                    for x, y in ((p.start, q.start), (p.stop, q.stop), (p.step, q.step))
                )
            )
        return self.number(p, q)

    def array(self, p: np.ndarray, q: np.ndarray) -> np.ndarray:
        if p.dtype != q.dtype or p.ndim != q.ndim:
            raise _NotSymbolicError
        if p.shape == q.shape and np.array_equal(p, q, equal_nan=True):
            return p
        if p.size == 1 and q.size == 1 and p.shape == q.shape:  # the n of a mean, say
            return np.array(self.number(p.item(), q.item()), dtype=p.dtype).reshape(p.shape)
        if (
            p.size
            and q.size
            and _uniform(p)
            and _uniform(q)
            and same_value(p.flat[0].item(), q.flat[0].item())
        ):  # tg.ones(n), tg.zeros(n)
            shape = self.value(tuple(p.shape), tuple(q.shape))
            return np.full(shape, p.flat[0], dtype=p.dtype)
        raise _NotSymbolicError

    def program(self, pa: Program, pb: Program) -> Program:
        if (
            pa.inputs != pb.inputs
            or pa.outputs != pb.outputs
            or pa.vars.keys() != pb.vars.keys()
            or pa.consts.keys() != pb.consts.keys()
        ):
            raise _NotSymbolicError
        return Program(
            list(pa.inputs),
            list(pa.outputs),
            {v: self.array(pa.consts[v], pb.consts[v]) for v in pa.consts},
            self.eqns(pa.eqns, pb.eqns),
            self.vars(pa.vars, pb.vars),
        )

    def vars(self, va: dict, vb: dict) -> dict:
        out = {}
        for vid, x in va.items():
            y = vb.get(vid)
            if y is None or x.dtype != y.dtype or x.name != y.name:
                raise _NotSymbolicError
            out[vid] = Var(vid, self.value(tuple(x.shape), tuple(y.shape)), x.dtype, x.name)
        return out

    def eqns(self, ea: list, eb: list) -> list:
        if len(ea) != len(eb):
            raise _NotSymbolicError
        out = []
        for x, y in zip(ea, eb):
            if (x.op, x.fn, x.ins, x.outs) != (
                y.op,
                y.fn,
                y.ins,
                y.outs,
            ) or x.subs.keys() != y.subs.keys():
                raise _NotSymbolicError
            subs = {k: self.program(x.subs[k], y.subs[k]) for k in x.subs}
            out.append(Eqn(x.op, x.ins, x.outs, self.value(x.attrs, y.attrs), x.site, x.fn, subs))
        return out

    def region(self, ra: Region, rb: Region) -> Region:
        if (ra.brk is None) != (rb.brk is None) or ra.consts.keys() != rb.consts.keys():
            raise _NotSymbolicError
        brk = None
        if ra.brk is not None:
            if (ra.brk.var, ra.brk.kind) != (rb.brk.var, rb.brk.kind):  # type: ignore[union-attr]
                raise _NotSymbolicError
            brk = Break(ra.brk.var, ra.brk.kind, ra.brk.outcome, ra.brk.site)
        consts = {v: self.array(ra.consts[v], rb.consts[v]) for v in ra.consts}
        return Region(
            self.eqns(ra.eqns, rb.eqns), consts, self.vars(ra.vars, rb.vars), brk, ra.name
        )

    def path(self, pa: Path, pb: Path) -> Path:
        if (
            len(pa.regions) != len(pb.regions)
            or pa.inputs != pb.inputs
            or [k for k, _ in pa.outputs] != [k for k, _ in pb.outputs]
            or pa.lifted.keys() != pb.lifted.keys()
        ):
            raise _NotSymbolicError
        outputs = [
            (k, v if k == "var" else self.value(v, w))
            for (k, v), (_, w) in zip(pa.outputs, pb.outputs)
        ]
        if any(k == "var" and v != w for (k, v), (_, w) in zip(pa.outputs, pb.outputs)):
            raise _NotSymbolicError
        consts = {v: self.array(pa.consts[v], pb.consts[v]) for v in pa.consts if v in pb.consts}
        regions = [self.region(x, y) for x, y in zip(pa.regions, pb.regions)]
        return Path(
            regions,
            list(pa.outcomes),
            outputs,
            pa.structure,
            list(pa.inputs),
            dict(pa.lifted),
            consts,
            dict(pa.lifted_names),
        )


def _uniform(arr: np.ndarray) -> bool:
    return bool(np.all(arr == arr.flat[0]))
