"""`ExportedProgram`: what `tg.static.export` returns, and its file format.

An exported program keeps the program traced at the example's sizes and, when some
dims are dynamic, the program traced at a second size of each (`Dim`). Printing and
drawing write the numbers that moved with a size as `s0`, `2*s0` (`_Symbolise`); a call
at a new size makes the program for it with symbolic.py's substitution, type-checks it
op by op (io.check_types) and keeps it. `save` writes both programs to one JSON file
(format `tinygrad_edu.export`) and their arrays, each once, to an .npz; `io.load` hands
such a file to `from_doc`, which checks it as thoroughly as any static graph.

Static layer: imports the core, numpy and the standard library only.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..core import source
from ..core.errors import ShapeError, message
from . import io
from .capture import same_value
from .ir import Program, Var, names
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
        try:
            prog = _Substitute(self._a, self._b, sizes).program(
                self.graph.program,
                self._graph_b.program,  # type: ignore[union-attr]
            )
            io.check_types(prog, "program")
        except (_NotSymbolicError, io.FormatError) as e:
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


# --- save and load ------------------------------------------------------------------------

FORMAT, VERSION = "tinygrad_edu.export", 1


class _Writer(io._Writer):
    """Arrays stored once however often they appear (the weights are in both programs)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: dict = {}

    def array(self, arr: np.ndarray) -> str:
        arr = np.array(arr, order="C")
        key = (arr.dtype.str, arr.shape, arr.tobytes())
        if key not in self.seen:
            self.seen[key] = super().array(arr)
        return self.seen[key]


def save(ep: ExportedProgram, path: str) -> None:
    """Write `ep` as `path`.json (both programs, the Dims) and `path`.npz (the arrays)."""
    w = _Writer()
    programs = [w.program(ep.graph.program)]
    if ep._graph_b is not None:
        programs.append(w.program(ep._graph_b.program))
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "name": ep.name,
        "structure": ep.graph.structure,
        "dims": [
            {str(d): [dim.name, dim.min, dim.max] for d, dim in dims.items()} for dims in ep._spec
        ],
        "sizes": [list(ep._a), list(ep._b)],
        "programs": programs,
    }
    jpath, npath = io._paths(path)
    with open(jpath, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
    np.savez(npath, **w.arrays)  # type: ignore[arg-type]  # numpy's stub: kwds typed as allow_pickle


def from_doc(doc: dict, arrays: dict, jpath: str) -> ExportedProgram:
    """Rebuild an ExportedProgram from a checked file (io.load hands it over)."""
    if (
        set(doc) != {"format", "version", "name", "structure", "dims", "sizes", "programs"}
        or doc["structure"] not in ("single", "tuple")
        or not isinstance(doc["name"], str)
        or not isinstance(doc["programs"], list)
        or len(doc["programs"]) not in (1, 2)
    ):
        raise io._fail(
            jpath, "an export needs format, version, name, structure, dims, sizes, programs"
        )
    reader = io._Reader(arrays, jpath)
    graphs = [
        StaticGraph(reader.program(p, f"programs[{i}]"), doc["structure"], doc["name"])
        for i, p in enumerate(doc["programs"])
    ]
    spec = _spec_from_doc(doc["dims"], graphs[0].program, jpath)
    symbols = _symbols(spec)
    a, b = _sizes_from_doc(doc["sizes"], graphs, spec, symbols, jpath)
    return ExportedProgram(graphs[0], graphs[1] if symbols else None, a, b, spec, symbols)


def _spec_from_doc(dims_doc: Any, program: Program, jpath: str) -> list[dict]:
    """The file's `dims` as one `{dim: Dim}` per input; a Dim named twice is one object."""
    fail = io._fail
    inputs = program.inputs
    if not isinstance(dims_doc, list) or len(dims_doc) != len(inputs):
        raise fail(jpath, "dims: one entry per input")
    spec: list[Any] = []
    by_name: dict[str, Any] = {}
    for i, entry in enumerate(dims_doc):
        dims = {}
        ndim = len(program.vars[inputs[i]].shape)
        for d, triple in (entry if isinstance(entry, dict) else {None: None}).items():
            ok = (
                isinstance(d, str)
                and d.isdigit()
                and int(d) < ndim
                and isinstance(triple, list)
                and len(triple) == 3
                and isinstance(triple[0], str)
                and type(triple[1]) is int
                and (triple[2] is None or type(triple[2]) is int)
            )
            if not ok:
                raise fail(
                    f"{jpath}: dims[{i}]",
                    f"a dim entry must be 'dim': [name, min, max], got {d!r}: {triple!r}",
                )
            assert triple is not None and d is not None  # `ok` checked both
            dim = by_name.get(triple[0])
            if dim is None:
                dim = by_name[triple[0]] = Dim(triple[0], min=triple[1], max=triple[2])
            elif (dim.min, dim.max) != (triple[1], triple[2]):
                raise fail(f"{jpath}: dims[{i}]", f"Dim {triple[0]!r} has two different ranges")
            dims[int(d)] = dim
        spec.append(dims)
    return spec


def _sizes_from_doc(
    sizes: Any, graphs: list, spec: list, symbols: list, jpath: str
) -> tuple[tuple, tuple]:
    """The file's two example sizes, checked against the programs' input shapes."""
    fail = io._fail
    if (
        not isinstance(sizes, list)
        or len(sizes) != 2
        or not all(isinstance(s, list) and len(s) == len(symbols) for s in sizes)
        or not all(type(n) is int and n >= 2 for s in sizes for n in s)
        or (len(graphs) == 2) != bool(symbols)
    ):
        raise fail(jpath, "sizes: two lists with one size (at least 2) per Dim")
    a, b = tuple(sizes[0]), tuple(sizes[1])
    if not symbols:
        return a, b
    shapes = lambda g: [g.program.vars[v].shape for v in g.program.inputs]  # noqa: E731
    names = [s.name for s in graphs[0].inputs]

    def bad(text: str) -> None:
        raise fail(jpath, f"the example sizes do not fit the Dims: {text}")

    if (
        _dim_sizes(spec, symbols, shapes(graphs[0]), names, bad) != a
        or _dim_sizes(spec, symbols, shapes(graphs[1]), names, bad) != b
        or any(x == y for x, y in zip(a, b))
    ):
        raise fail(jpath, "sizes do not match the programs' input shapes")
    try:
        _Substitute(a, b, a).program(graphs[0].program, graphs[1].program)
    except _NotSymbolicError:
        raise fail(jpath, "the two programs differ in more than their sizes") from None
    return a, b
