"""`tg.static.export`: one graph for every input, in the manner of `torch.export.export`.

`trace` records the path one example took and warns where it froze a branch; `export`
promises a graph that is right for *every* input it accepts, so it refuses instead:

- a traced tensor read as a Python value (`if x.sum() > 0`, `float(t)`, `t.item()`, a
  tensor used as an index) raises, naming the line, and points to `tg.static.cond`
  (`torch.cond`), as torch.export does;
- every size is fixed unless `dynamic_shapes` declares a dimension dynamic with a
  `Dim(name, min=, max=)`; a call checks each input's sizes against the declaration.

How a dimension stays dynamic without a symbolic tracer: the function is traced at
the example's size and at a second size in the Dim's range (the example resized),
and symbolic.py reads from the two programs which numbers are the size (`s0`, `2*s0`).
If the programs differ in anything else, the code made a Python decision on the size
(`if x.shape[0] == 4:`): that is torch's "constraint violation", and we raise it too.
A third trace, at another size, must be exactly what the first two predict (so that
`x.shape[0] // 2`, equal at 100 and 101, is refused rather than frozen). A call at a
new size re-specialises the program (no Python of the learner's runs), and the result
is type-checked op by op before it runs.

Static layer: imports the core, numpy and the standard library only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..core import source
from ..core.errors import ShapeError, TracingError, message
from ..core.tensor import Tensor
from . import io
from .capture import same_eqn, same_program, same_value
from .ir import Program, Var
from .program import StaticGraph, _as_array, record
from .symbolic import _NotSymbolicError, _Substitute
from .tracer import Tracer, input_names, positional_params

EXPORT = "tg.static.export"


class ConstraintViolationError(TracingError):
    """The code (or the example) contradicts a declared `Dim`, as torch's of that name."""


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


class _ExportTracer(Tracer):
    """A strict tracer whose refusals read as torch.export's: name the line, offer cond."""

    def __init__(self) -> None:
        super().__init__(strict=True)

    def concrete(self, t: Tensor, kind: str) -> None:
        if not self.depends_on_input(t):
            return  # a constant (a weight read as a number): the same for every input
        site = source.resolve(source.capture(2))
        if kind == "bool":
            what = (
                "data-dependent branching: bool() of a traced tensor decides an `if` or "
                "`while` here, and its value depends on the input, so no one graph holds "
                "the branch for every input"
            )
            hint = (
                "use tg.static.cond(pred, true_fn, false_fn, *operands) (torch.cond) to keep "
                "both branches in the graph, or tg.where for elementwise choices"
            )
        elif kind == "index":
            what = (
                "a traced tensor is used as an index here: its values, which depend on the "
                "input, would choose the elements"
            )
            hint = "index with Python ints or slices, or choose with tg.where"
        else:
            read = {"data": ".data", "numpy": "numpy()", "tolist": "tolist()"}.get(
                kind, f"{kind}()"
            )
            what = (
                f"could not guard on data-dependent expression: {read} of a traced tensor "
                "turns a value that depends on the input into Python data here"
            )
            hint = (
                "keep it a tensor and compute with tensor ops; for a choice, use "
                "tg.static.cond (torch.cond) or tg.where"
            )
        raise TracingError(message(EXPORT, what, site, hint))

    def eager_backward(self) -> None:
        raise TracingError(
            message(
                EXPORT,
                "backward() or tg.grad() ran inside the exported function",
                source.here(),
                "export the forward pass only; call backward() on its result",
            )
        )


# --- the dynamic_shapes argument ----------------------------------------------------------


def _params(fn: Any) -> list[str]:
    target = fn if not hasattr(fn, "forward") else fn.forward
    return positional_params(target)


def _spec(fn: Any, args: tuple, dynamic_shapes: Any) -> list[dict]:
    """Per input `{dim: Dim}` from torch's forms: `{"x": {0: Dim}}` or `({0: Dim},)`."""
    n, names = len(args), _params(fn)[: len(args)]
    if dynamic_shapes is None:
        return [{} for _ in args]
    if isinstance(dynamic_shapes, dict):
        unknown = [k for k in dynamic_shapes if k not in names]
        if unknown:
            raise ValueError(
                message(
                    EXPORT,
                    f"dynamic_shapes names {unknown}, but the inputs are {names}",
                    source.here(),
                    "key dynamic_shapes by the function's parameter names, or pass a tuple "
                    "with one entry per input",
                )
            )
        per_input = [dynamic_shapes.get(nm) for nm in names] + [None] * (n - len(names))
    elif isinstance(dynamic_shapes, (tuple, list)):
        if len(dynamic_shapes) != n:
            raise ValueError(
                message(
                    EXPORT,
                    f"dynamic_shapes has {len(dynamic_shapes)} entries for {n} inputs",
                    source.here(),
                    "give one entry per input (None for an input with fixed sizes)",
                )
            )
        per_input = list(dynamic_shapes)
    else:
        raise TypeError(
            message(
                EXPORT,
                f"dynamic_shapes must be a dict, a tuple or None, got {type(dynamic_shapes).__name__}",
                source.here(),
            )
        )
    spec = []
    for i, entry in enumerate(per_input):
        label = names[i] if i < len(names) else f"args[{i}]"
        ndim = np.ndim(_as_array(args[i]))
        if isinstance(entry, (tuple, list)):  # torch's per-dim form: (Dim, None, ...)
            entry = {d: s for d, s in enumerate(entry) if s is not None}
        dims = {}
        for d, dim in (entry or {}).items():
            if not isinstance(dim, Dim) or not isinstance(d, int) or not 0 <= d < ndim:
                raise ValueError(
                    message(
                        EXPORT,
                        f"dynamic_shapes[{label!r}] must map dims 0..{ndim - 1} of "
                        f"{label} to tg.static.Dim objects, got {d!r}: {dim!r}",
                        source.here(),
                        f'e.g. {{"{label}": {{0: tg.static.Dim("batch")}}}}',
                    )
                )
            dims[d] = dim
        spec.append(dims)
    return spec


def _symbols(spec: list) -> list[Dim]:
    """The distinct Dims in order of first use: s0, s1, ... (one name, one size)."""
    out: list[Dim] = []
    for dims in spec:
        for dim in dims.values():
            if not any(o.name == dim.name for o in out):
                out.append(dim)
    return out


def _sizes(spec: list, symbols: list, shapes: list, names: list, check: Callable) -> tuple:
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


def _other_sizes(symbols: list, a: tuple, step: int, avoid: tuple = ()) -> tuple | None:
    """Sizes in each Dim's range (not 0 or 1) other than `a` and `avoid`: `a` moved by a
    different step per Dim, so no number in the program is a multiple of two sizes at
    once by accident. None when a range holds no such size."""
    out = []
    for i, (dim, n) in enumerate(zip(symbols, a)):
        taken = {n} | {sizes[i] for sizes in avoid}
        moves = (step * (i + 1), -step * (i + 1), 1, -1, 2, -2, 3, -3)
        m = next((n + d for d in moves if _fits(dim, n + d) and n + d not in taken), None)
        if m is None:
            return None
        out.append(m)
    return tuple(out)


def _fits(dim: Dim, n: int) -> bool:
    return n >= 2 and dim.contains(n)


def _resized(arr: np.ndarray, dims: dict, symbols: list, sizes: tuple) -> np.ndarray:
    """The example with each dynamic dim cut or repeated to the new size."""
    for d, dim in dims.items():
        n = sizes[[s.name for s in symbols].index(dim.name)]
        arr = np.take(arr, np.arange(n) % arr.shape[d], axis=d)
    return arr


# --- export ------------------------------------------------------------------------------


def export(
    fn: Callable[..., Any],
    args: tuple,
    *,
    dynamic_shapes: Any = None,
    strict: bool = True,
    name: str | None = None,
) -> ExportedProgram:
    r"""Export `fn` (a function or `nn.Module`) as one graph for every input, as torch.export.

    Rules: `args` is a tuple of example inputs. Ops are recorded as by `trace` (weights and
    other tensors `fn` uses are frozen in as constants), but nothing is frozen silently:
    a traced tensor read as a Python value (an `if` or `while` on it, `bool()`,
    `float()`, `.item()`, an index) raises `TracingError` naming the line; use
    `tg.static.cond` (`torch.cond`) or `tg.where`. Every size is fixed unless
    `dynamic_shapes` marks it dynamic, in torch's forms: `{"x": {0: Dim("batch", min=2,
    max=64)}}` (keyed by parameter name) or `({0: batch},)` (one entry per input). A
    dynamic size must be at least 2 in the example; code that decides something on it
    (`if x.shape[0] == 4:`) raises `ConstraintViolationError`, as torch's. `strict` is
    torch's flag; both settings refuse the same things here (torch's non-strict mode
    refuses a data-dependent `if` too).

    Args:
        fn: the function or module to export.
        args: a tuple of example inputs (Tensors or arrays).
        dynamic_shapes: None (every size fixed), a dict or a tuple of `{dim: Dim}`.
        strict: accepted for torch's signature.
        name: the program's name (default: `fn.__name__`, or the module's class name).

    Returns:
        An `ExportedProgram`: print it, draw it, `.module()(x)` runs it, `tg.static.save`.

    Raises:
        TracingError: a value-dependent read of a traced tensor (names the line).
        ConstraintViolationError: an example or the code contradicts a declared Dim.

    Example:
        >>> import tinygrad_edu as tg
        >>> batch = tg.static.Dim("batch", min=2, max=64)
        >>> ep = tg.static.export(lambda x: (x * 2).sum(1), (tg.ones(4, 3),),
        ...                       dynamic_shapes=({0: batch},))
        >>> ep.module()(tg.ones(5, 3))
        tensor([6., 6., 6., 6., 6.])
        >>> ep.range_constraints
        {'s0': (2, 64)}
    """
    del strict  # both of torch's modes refuse a data-dependent `if`; so do we
    if not isinstance(args, tuple):
        raise TypeError(
            message(
                EXPORT,
                f"expected `args` to be a tuple of example inputs, got {type(args).__name__}",
                source.here(),
                "wrap one input in a tuple: (x,)",
            )
        )
    fname = name or getattr(fn, "__name__", None) or type(fn).__name__
    fname = "f" if fname == "<lambda>" else fname
    spec = _spec(fn, args, dynamic_shapes)
    names = input_names(fn, len(args), args)  # the names the program gives its inputs
    arrays = [_as_array(a) for a in args]
    symbols = _symbols(spec)

    def violated(text: str) -> None:
        raise ConstraintViolationError(
            message(
                EXPORT,
                f"constraint violated: {text}",
                source.here(),
                "pick an example inside the range, or widen the Dim",
            )
        )

    a = _sizes(spec, symbols, [x.shape for x in arrays], names, violated)
    for dim, n in zip(symbols, a):
        if n in (0, 1):
            raise ConstraintViolationError(
                message(
                    EXPORT,
                    f"constraints violated ({dim.name})! The example's {dim.name} is {n}, "
                    "and sizes 0 and 1 are always specialised (a 1 broadcasts, a 0 is empty), "
                    f"so the code specialised {dim.name} to be a constant ({n})",
                    source.here(),
                    f"export with an example whose {dim.name} is at least 2",
                )
            )
    graph_a = record(_ExportTracer(), fn, args, fname)
    if not symbols:
        return ExportedProgram(graph_a, None, (), (), spec, symbols)
    b = _other_sizes(symbols, a, 1)
    if b is None:
        shown = ", ".join(f"{d.name} in {d.range_text()}" for d in symbols)
        raise ConstraintViolationError(
            message(
                EXPORT,
                f"a dynamic dim's range holds no size but the example's ({shown})",
                source.here(),
                "widen the range, or leave the dim static",
            )
        )
    graph_b = _trace_at(fn, args, arrays, spec, symbols, a, b, fname)
    try:
        _Substitute(a, b, a).program(graph_a.program, graph_b.program)
    except _NotSymbolicError:
        raise ConstraintViolationError(_specialised(graph_a, graph_b, symbols, a, b)) from None
    # Check the substitution on a third size: a number such as x.shape[0] // 2 can come
    # out equal at two sizes (100 and 101) and be taken for a constant
    c = _other_sizes(symbols, a, 3, avoid=(b,))
    if c is not None:
        graph_c = _trace_at(fn, args, arrays, spec, symbols, a, c, fname)
        try:
            predicted = _Substitute(a, b, c).program(graph_a.program, graph_b.program)
        except _NotSymbolicError:
            predicted = None
        if predicted is None or not same_program(predicted, graph_c.program):
            expected = predicted if predicted is not None else graph_a.program
            raise ConstraintViolationError(_not_linear(expected, graph_c.program, symbols, a, b, c))
    return ExportedProgram(graph_a, graph_b, a, b, spec, symbols)


def _trace_at(
    fn: Any, args: tuple, arrays: list, spec: list, symbols: list, a: tuple, b: tuple, name: str
) -> StaticGraph:
    """`fn` traced again with every dynamic dim of the example resized to the sizes `b`."""
    args_b = tuple(
        _named(_resized(x, dims, symbols, b), ex) for x, dims, ex in zip(arrays, spec, args)
    )
    try:
        return record(_ExportTracer(), fn, args_b, name)
    except TracingError:
        raise
    except Exception as e:  # the learner's code failed at a size they did not pass
        at = ", ".join(f"{d.name}={n}" for d, n in zip(symbols, b))
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ConstraintViolationError(
            message(
                EXPORT,
                f"constraints violated: to keep the dims dynamic, export runs the code again "
                f"at {at} (the example's rows repeated or cut), and there it failed: {first}",
                source.here(),
                "the code must work at every size in the Dim's range; narrow the range or "
                "leave the dim static",
            )
        ) from e


def _named(arr: np.ndarray, example: Any) -> Any:
    if isinstance(example, Tensor):
        t = Tensor._make(arr)
        t.name, t.requires_grad = example.name, example.requires_grad
        return t
    return arr


def _first_site(pa: Program, pb: Program, same: Callable) -> str | None:
    """The line of the first equation where two programs part (`same(x, y)` says not)."""
    for x, y in zip(pa.eqns, pb.eqns):
        if not same(x, y):
            return x.site
    if len(pa.eqns) != len(pb.eqns):  # one goes on where the other stopped
        n = min(len(pa.eqns), len(pb.eqns))
        return (pa if len(pa.eqns) > n else pb).eqns[n].site
    return None


def _sizes_text(symbols: list, sizes: tuple) -> str:
    return ", ".join(f"{d.name}={n}" for d, n in zip(symbols, sizes))


def _specialised(ga: StaticGraph, gb: StaticGraph, symbols: list, a: tuple, b: tuple) -> str:
    """torch's constraint violation: the code decided something on a dynamic size."""
    sub = _Substitute(a, b, a)

    def same(x: Any, y: Any) -> bool:
        try:
            sub.eqns([x], [y])
            return True
        except _NotSymbolicError:
            return False

    shown = " and ".join(d.name for d in symbols)
    fixes = ", ".join(f"{d.name} = {n}" for d, n in zip(symbols, a))
    return message(
        EXPORT,
        f"constraints violated ({shown})! You marked {shown} as dynamic but your code "
        f"specialized it to be a constant: traced at {_sizes_text(symbols, a)} and at "
        f"{_sizes_text(symbols, b)}, the programs differ in more than the size (a Python "
        f"decision on a shape, such as `if x.shape[0] == {a[0]}:`). Suggested fixes: {fixes}",
        _first_site(ga.program, gb.program, same),
        "make the dim static (drop its Dim), or compute without a Python decision on the "
        "size (tg.static.cond, tg.where)",
    )


def _not_linear(expected: Program, pc: Program, symbols: list, a: tuple, b: tuple, c: tuple) -> str:
    """The sizes at a and b did not predict the program at c: not a multiple of the size."""
    shown = " and ".join(d.name for d in symbols)
    fixes = ", ".join(f"{d.name} = {n}" for d, n in zip(symbols, a))
    return message(
        EXPORT,
        f"constraints violated ({shown})! The program traced at {_sizes_text(symbols, c)} "
        f"is not the one the traces at {_sizes_text(symbols, a)} and "
        f"{_sizes_text(symbols, b)} predict: the code uses {shown} in a way that is not a "
        f"multiple of it (such as x.shape[0] // 2), which export cannot keep symbolic. "
        f"Suggested fixes: {fixes}",
        _first_site(expected, pc, same_eqn),
        "make the dim static (drop its Dim), or compute sizes as multiples of the dim",
    )


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
        from .ir import names

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

        return _sizes(self._spec, self._symbols, [a.shape for a in arrays], names, outside)

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
                self.graph.program, self._graph_b.program
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
    import json

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
    np.savez(npath, **w.arrays)


def from_doc(doc: dict, arrays: dict, jpath: str) -> ExportedProgram:
    """Rebuild an ExportedProgram from a checked file (io.load hands it over)."""
    fail = io._fail
    if (
        set(doc) != {"format", "version", "name", "structure", "dims", "sizes", "programs"}
        or doc["structure"] not in ("single", "tuple")
        or not isinstance(doc["name"], str)
        or not isinstance(doc["programs"], list)
        or len(doc["programs"]) not in (1, 2)
    ):
        raise fail(jpath, "an export needs format, version, name, structure, dims, sizes, programs")
    reader = io._Reader(arrays, jpath)
    graphs = [
        StaticGraph(reader.program(p, f"programs[{i}]"), doc["structure"], doc["name"])
        for i, p in enumerate(doc["programs"])
    ]
    inputs = graphs[0].program.inputs
    dims_doc = doc["dims"]
    if not isinstance(dims_doc, list) or len(dims_doc) != len(inputs):
        raise fail(jpath, "dims: one entry per input")
    spec, by_name = [], {}
    for i, entry in enumerate(dims_doc):
        dims = {}
        ndim = len(graphs[0].program.vars[inputs[i]].shape)
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
            dim = by_name.get(triple[0])
            if dim is None:
                dim = by_name[triple[0]] = Dim(triple[0], min=triple[1], max=triple[2])
            elif (dim.min, dim.max) != (triple[1], triple[2]):
                raise fail(f"{jpath}: dims[{i}]", f"Dim {triple[0]!r} has two different ranges")
            dims[int(d)] = dim
        spec.append(dims)
    symbols = _symbols(spec)
    sizes = doc["sizes"]
    if (
        not isinstance(sizes, list)
        or len(sizes) != 2
        or not all(isinstance(s, list) and len(s) == len(symbols) for s in sizes)
        or not all(type(n) is int and n >= 2 for s in sizes for n in s)
        or (len(graphs) == 2) != bool(symbols)
    ):
        raise fail(jpath, "sizes: two lists with one size (at least 2) per Dim")
    a, b = tuple(sizes[0]), tuple(sizes[1])
    shapes = lambda g: [g.program.vars[v].shape for v in g.program.inputs]  # noqa: E731
    names = [s.name for s in graphs[0].inputs]

    def bad(text: str) -> None:
        raise fail(jpath, f"the example sizes do not fit the Dims: {text}")

    if symbols:
        if (
            _sizes(spec, symbols, shapes(graphs[0]), names, bad) != a
            or _sizes(spec, symbols, shapes(graphs[1]), names, bad) != b
            or any(x == y for x, y in zip(a, b))
        ):
            raise fail(jpath, "sizes do not match the programs' input shapes")
        try:
            _Substitute(a, b, a).program(graphs[0].program, graphs[1].program)
        except _NotSymbolicError:
            raise fail(jpath, "the two programs differ in more than their sizes") from None
    return ExportedProgram(graphs[0], graphs[1] if symbols else None, a, b, spec, symbols)
