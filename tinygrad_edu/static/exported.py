"""`ExportedProgram`: what `tg.static.export` returns.

An exported program keeps the program traced at the example's sizes and, when some
dims are dynamic, the program traced at a second size of each (`Dim`). Printing and
drawing write the numbers that moved with a size as `s0`, `2*s0` (`_Symbolise`); a call
at a new size makes the program for it with symbolic.py's substitution, type-checks it
op by op (ir.check_types) and keeps it. Its file is a static graph's (io.py) with a
`dims` section: the Dims, both sizes and the second program.

Static layer: imports the core, numpy and the standard library only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..core import source
from ..core.errors import ShapeError, message
from .capture import same_value
from .ir import Program, Var, check_types, names
from .program import StaticGraph, _as_array
from .symbolic import _NotSymbolicError, _Substitute


class Dim:
    r"""A named dynamic size with a range, as `torch.export.Dim`.

    Rules: use the same `Dim` (or the same name) wherever one size must be shared
    (`x` and `y` with one batch); `min` defaults to 0 and `max` to no limit. The example
    input's size must lie in the range and be at least 2: sizes 0 and 1 are always
    specialised, as in torch.export.

    Example:
        >>> import tinygrad_edu as tg
        >>> tg.static.Dim("batch", min=2, max=64)
        Dim('batch', min=2, max=64)
    """

    def __init__(self, name: str, *, min: int | None = None, max: int | None = None) -> None:  # noqa: A002
        lo = 0 if min is None else min
        if max is not None and max < lo:
            raise ValueError(
                message("Dim", f"{name!r} has min={lo} > max={max}", source.here(), "swap them")
            )
        self.__name__, self.min, self.max = name, lo, max

    @property
    def name(self) -> str:
        return self.__name__

    def range_text(self) -> str:
        return f"[{self.min}, {'inf' if self.max is None else self.max}]"

    def contains(self, n: int) -> bool:
        return self.min <= n and (self.max is None or n <= self.max)

    def __repr__(self) -> str:
        hi = "" if self.max is None else f", max={self.max}"
        return f"Dim({self.__name__!r}, min={self.min}{hi})"


@dataclass(frozen=True)
class Sym:
    """`coeff * s<index>`: a number in the program that is a multiple of a dynamic size."""

    coeff: Fraction
    index: int

    def __str__(self) -> str:
        s = f"s{self.index}"
        if self.coeff == 1:
            return s
        if self.coeff.denominator == 1:
            return f"{self.coeff.numerator}*{s}"
        return f"{self.coeff.numerator}*{s}/{self.coeff.denominator}"

    __repr__ = __str__


class _Symbolise(_Substitute):
    """The two programs with every size number written as a `Sym` (for reading only)."""

    def __init__(self, a: tuple, b: tuple) -> None:
        super().__init__(a, b, a)
        self.plain = _Substitute(a, b, a)  # the checks, with numbers for numbers

    def number(self, p: Any, q: Any) -> Any:
        self.plain.number(p, q)  # raises if it is not a multiple of one size
        if same_value(p, q):
            return p
        for i, (a, b) in enumerate(zip(self.a, self.b)):
            if a != b and Fraction(p) * b == Fraction(q) * a:
                return Sym(Fraction(p) / a, i)
        raise _NotSymbolicError

    def array(self, p: np.ndarray, q: np.ndarray) -> np.ndarray:
        self.plain.array(p, q)
        return p  # shown by its value at the example size

    def program(self, pa: Program, pb: Program) -> Program:
        prog = super().program(pa, pb)
        for vid, p in pa.consts.items():  # a number that is the size (the n of a mean)
            q = pb.consts[vid]
            if p.size == 1 and p.shape == q.shape and not np.array_equal(p, q):
                v = prog.vars[vid]
                prog.vars[vid] = Var(vid, v.shape, v.dtype, str(self.number(p.item(), q.item())))
        return prog


def _symbols(spec: list) -> list[Dim]:
    """The distinct Dims in order of first use: s0, s1, ... (one name, one size)."""
    out: list[Dim] = []
    for dims in spec:
        for dim in dims.values():
            if not any(o.name == dim.name for o in out):
                out.append(dim)
    return out


def _dim_sizes(spec: list, symbols: list, shapes: list, names: list, check: Callable) -> tuple:
    """The size of each symbol in `shapes`; `check(text, label, d, n, dim)` reports a misfit."""
    sizes: dict[str, tuple] = {}
    for dims, shape, label in zip(spec, shapes, names):
        for d, dim in dims.items():
            n = shape[d]
            if not dim.contains(n):
                check(f"{label}.shape[{d}] = {n} is not in {dim.name}'s range {dim.range_text()}")
            seen = sizes.setdefault(dim.name, (n, f"{label}.shape[{d}]"))
            if seen[0] != n:
                check(
                    f"{label}.shape[{d}] = {n}, but {seen[1]} = {seen[0]}: both are "
                    f"{dim.name}, which has one size"
                )
    return tuple(sizes[s.name][0] for s in symbols)


def _sizes_text(symbols: list, sizes: tuple) -> str:
    return ", ".join(f"{d.name}={n}" for d, n in zip(symbols, sizes))


# --- the exported program ----------------------------------------------------------------


class ExportedProgram:
    r"""What `tg.static.export` returns, as torch's `ExportedProgram`.

    Rules: `print(ep)` shows the program with dynamic sizes as `s0`, `2*s0` (and its
    signature and range constraints); `tg.draw(ep)` draws it; `ep.module()` is the
    callable (as in torch, the program itself is not called). A call checks every
    input's rank and sizes against the export, runs the program re-specialised for the
    dynamic sizes it was given, and returns Tensors that need no grad.
    `tg.static.save(ep, path)` / `tg.static.load(path)` keep the dynamic dims.
    """

    def __init__(
        self,
        graph: StaticGraph,
        graph_b: StaticGraph | None,
        sizes: tuple,
        sizes_b: tuple,
        spec: list,
        symbols: list,
    ) -> None:
        self.graph = graph  # the program at the example's sizes
        self._graph_b, self._a, self._b = graph_b, tuple(sizes), tuple(sizes_b)
        self._spec, self._symbols = spec, symbols
        self._by_sizes = {self._a: graph}
        if graph_b is not None:
            self._by_sizes[self._b] = graph_b

    @property
    def name(self) -> str:
        return self.graph.name

    @property
    def range_constraints(self) -> dict:
        """`{"s0": (min, max)}` (max None: no limit), as torch's `range_constraints`."""
        return {f"s{i}": (d.min, d.max) for i, d in enumerate(self._symbols)}

    @property
    def dynamic_shapes(self) -> dict:
        """`{input name: {dim: Dim}}` for the inputs with a dynamic dim."""
        return {s.name: dict(d) for s, d in zip(self.graph.inputs, self._spec) if d}

    @property
    def graph_signature(self) -> GraphSignature:
        prog = self.symbolic_graph().program
        nm = names(prog)
        return GraphSignature(
            tuple(f"{nm[v]}: {prog.vars[v].type_text()}" for v in prog.inputs),
            tuple(nm[v] for v in prog.consts if self.graph.program.vars[v].name),
            tuple(f"{nm[v]}: {prog.vars[v].type_text()}" for v in prog.outputs),
        )

    def symbolic_graph(self) -> StaticGraph:
        """The program with sizes written as symbols (`s0`): for reading and drawing only."""
        if self._graph_b is None:
            return self.graph
        prog = _Symbolise(self._a, self._b).program(self.graph.program, self._graph_b.program)
        return StaticGraph(prog, self.graph.structure, self.graph.name)

    def __str__(self) -> str:
        ranges = ", ".join(
            f"s{i} = {d.name} in {d.range_text()}" for i, d in enumerate(self._symbols)
        )
        return "\n".join(
            ["ExportedProgram:"]
            + ["    " + line for line in str(self.symbolic_graph()).splitlines()]
            + [str(self.graph_signature), f"Range constraints: {{{ranges}}}"]
        )

    __repr__ = __str__

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            message(
                self.name,
                "an ExportedProgram is not called directly",
                source.here(),
                "call ep.module()(...), as torch.export's programs are",
            )
        )

    def module(self) -> ExportedModule:
        """A callable that runs the program (torch's `ep.module()`)."""
        return ExportedModule(self)

    def run(self, args: tuple) -> Any:
        arrays = [_as_array(a) for a in args]
        inputs = self.graph.inputs
        if len(arrays) != len(inputs):
            raise TypeError(
                message(
                    self.name,
                    f"expected {len(inputs)} input(s) {[s.name for s in inputs]}, got {len(arrays)}",
                    source.here(),
                )
            )
        sizes = self._check_shapes(arrays)
        return self._graph_for(sizes)(*arrays)

    def _check_shapes(self, arrays: list) -> tuple:
        names = [s.name for s in self.graph.inputs]
        for arr, s, dims in zip(arrays, self.graph.inputs, self._spec):
            if arr.ndim != len(s.shape):
                raise ShapeError(
                    message(
                        self.name,
                        f"input {s.name!r} was exported with {len(s.shape)} dims "
                        f"{self._shape_text(s.shape, dims)}, got shape {arr.shape!r}",
                        source.here(),
                    )
                )
            for d, (n, want) in enumerate(zip(arr.shape, s.shape)):
                if d not in dims and n != want:
                    raise ShapeError(
                        message(
                            self.name,
                            f"input {s.name!r} dim {d} is static: exported with size {want}, "
                            f"got {n} (shape {arr.shape!r})",
                            source.here(),
                            f"export with dynamic_shapes={{{s.name!r}: {{{d}: "
                            "tg.static.Dim(...)}} to accept other sizes",
                        )
                    )

        def outside(text: str) -> None:
            raise ShapeError(
                message(
                    self.name,
                    f"input {text}",
                    source.here(),
                    "pass sizes in the declared range, or export again with a wider Dim",
                )
            )

        return _dim_sizes(self._spec, self._symbols, [a.shape for a in arrays], names, outside)

    def _shape_text(self, shape: tuple, dims: dict) -> str:
        syms = [d.name for d in self._symbols]
        parts = [
            f"s{syms.index(dims[d].name)}" if d in dims else str(n) for d, n in enumerate(shape)
        ]
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"

    def _graph_for(self, sizes: tuple) -> StaticGraph:
        """The program for these sizes: re-specialised once, type-checked, then kept."""
        graph = self._by_sizes.get(sizes)
        if graph is not None:
            return graph
        shown = ", ".join(f"{d.name}={n}" for d, n in zip(self._symbols, sizes))
        # without a dynamic dim the only sizes are () and that program is kept above;
        # with one, export (or load) made the second program
        assert self._graph_b is not None
        try:
            prog = _Substitute(self._a, self._b, sizes).program(
                self.graph.program, self._graph_b.program
            )
            check_types(prog, "program", _UnfitError)
        except (_NotSymbolicError, _UnfitError) as e:
            raise ShapeError(
                message(
                    self.name,
                    f"the program cannot be specialised for {shown}: its numbers are not "
                    f"whole multiples of the size there ({str(e).splitlines()[0] if str(e) else 'a fraction'})",
                    source.here(),
                    "use a size the exported arithmetic divides evenly",
                )
            ) from None
        graph = StaticGraph(prog, self.graph.structure, self.graph.name)
        if len(self._by_sizes) < 64:  # a cache, not a leak across thousands of sizes
            self._by_sizes[sizes] = graph
        return graph


class _UnfitError(ValueError):
    """A re-specialised program whose declared types are not what it computes."""

    def __init__(self, where: str, what: str) -> None:
        super().__init__(f"{where}: {what}")


class ExportedModule:
    """`ep.module()`: call it like the exported function; it runs the program."""

    def __init__(self, program: ExportedProgram) -> None:
        self.program = program

    def __call__(self, *args: Any) -> Any:
        return self.program.run(args)

    def __repr__(self) -> str:
        return f"ExportedModule({self.program.name})"


@dataclass(frozen=True)
class GraphSignature:
    """What goes in and out: user inputs, constants (the frozen weights), user outputs."""

    user_inputs: tuple
    constants: tuple
    user_outputs: tuple

    def __str__(self) -> str:
        lines = ["Graph signature:", "    # inputs"]
        lines += [f"    {x}: USER_INPUT" for x in self.user_inputs]
        lines += ["    # constants (frozen into the program)"]
        lines += [f"    {c}: CONSTANT" for c in self.constants]
        lines += ["    # outputs"] + [f"    {o}: USER_OUTPUT" for o in self.user_outputs]
        return "\n".join(lines)
