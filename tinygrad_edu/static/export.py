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
`x.shape[0] // 2`, equal at 100 and 101, is refused rather than frozen). What comes back,
and how it runs at a new size, is exported.py.

Static layer: imports the core, numpy and the standard library only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core import source
from ..core.errors import TracingError, message
from ..core.tensor import Tensor
from .capture import same_eqn, same_program
from .exported import Dim, ExportedProgram, _dim_sizes, _sizes_text, _symbols
from .ir import Program
from .program import StaticGraph, _as_array, record
from .symbolic import _NotSymbolicError, _Substitute
from .tracer import Tracer, input_names, positional_params

EXPORT = "tg.static.export"


class ConstraintViolationError(TracingError):
    """The code (or the example) contradicts a declared `Dim`, as torch's of that name."""


# --- the dynamic_shapes argument ----------------------------------------------------------


def _params(fn: Any) -> list[str]:
    target = fn if not hasattr(fn, "forward") else fn.forward
    return positional_params(target)


def _spec(fn: Any, args: tuple, dynamic_shapes: Any) -> list[dict]:
    """Per input `{dim: Dim}` from torch's forms: `{"x": {0: Dim}}` or `({0: Dim},)`."""
    names = _params(fn)[: len(args)]
    if dynamic_shapes is None:
        return [{} for _ in args]
    per_input = _entry_per_input(dynamic_shapes, names, len(args))
    spec = []
    for i, entry in enumerate(per_input):
        label = names[i] if i < len(names) else f"args[{i}]"
        spec.append(_dims_of(entry, label, np.ndim(_as_array(args[i]))))
    return spec


def _entry_per_input(dynamic_shapes: dict | tuple | list, names: list, n: int) -> list:
    """torch's dict (keyed by parameter name) or tuple form as one entry per input."""
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
        return [dynamic_shapes.get(nm) for nm in names] + [None] * (n - len(names))
    if isinstance(dynamic_shapes, (tuple, list)):
        if len(dynamic_shapes) != n:
            raise ValueError(
                message(
                    EXPORT,
                    f"dynamic_shapes has {len(dynamic_shapes)} entries for {n} inputs",
                    source.here(),
                    "give one entry per input (None for an input with fixed sizes)",
                )
            )
        return list(dynamic_shapes)
    raise TypeError(
        message(
            EXPORT,
            f"dynamic_shapes must be a dict, a tuple or None, got {type(dynamic_shapes).__name__}",
            source.here(),
        )
    )


def _dims_of(entry: Any, label: str, ndim: int) -> dict:
    """One input's entry as `{dim: Dim}`, each key a dim of the input, each value a Dim."""
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
    return dims


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
    _check_args_tuple(args)
    fname = _program_name(fn, name)
    spec = _spec(fn, args, dynamic_shapes)
    names = input_names(fn, len(args), args)  # the names the program gives its inputs
    arrays = [_as_array(a) for a in args]
    symbols = _symbols(spec)
    a = _example_sizes(spec, symbols, arrays, names)
    graph_a = record(Tracer(policy="refuse", who=EXPORT), fn, args, fname)
    if not symbols:
        return ExportedProgram(graph_a, None, (), (), spec, symbols)
    # a second trace at other sizes tells which numbers in the program follow each Dim
    b = _second_sizes(symbols, a)
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
        _check_prediction(graph_a, graph_b, graph_c, symbols, (a, b, c))
    return ExportedProgram(graph_a, graph_b, a, b, spec, symbols)


def _check_args_tuple(args: Any) -> None:
    if not isinstance(args, tuple):
        raise TypeError(
            message(
                EXPORT,
                f"expected `args` to be a tuple of example inputs, got {type(args).__name__}",
                source.here(),
                "wrap one input in a tuple: (x,)",
            )
        )


def _program_name(fn: Any, name: str | None) -> str:
    """`name`, else the function's or the module class's name (a lambda's program is `f`)."""
    fname = name or getattr(fn, "__name__", None) or type(fn).__name__
    return "f" if fname == "<lambda>" else fname


def _example_sizes(spec: list, symbols: list, arrays: list, names: list) -> tuple:
    """Each Dim's size in the example, checked against its range and against 0 and 1."""

    def violated(text: str) -> None:
        raise ConstraintViolationError(
            message(
                EXPORT,
                f"constraint violated: {text}",
                source.here(),
                "pick an example inside the range, or widen the Dim",
            )
        )

    a = _dim_sizes(spec, symbols, [x.shape for x in arrays], names, violated)
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
    return a


def _second_sizes(symbols: list, a: tuple) -> tuple:
    """Sizes for the second trace; an error when a Dim's range holds only the example's."""
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
    return b


def _check_prediction(
    graph_a: StaticGraph, graph_b: StaticGraph, graph_c: StaticGraph, symbols: list, sizes: tuple
) -> None:
    """The program predicted for the third sizes from the first two must be the one traced."""
    a, b, c = sizes
    try:
        predicted = _Substitute(a, b, c).program(graph_a.program, graph_b.program)
    except _NotSymbolicError:
        predicted = None
    if predicted is None or not same_program(predicted, graph_c.program):
        expected = predicted if predicted is not None else graph_a.program
        raise ConstraintViolationError(_not_linear(expected, graph_c.program, symbols, a, b, c))


def _trace_at(
    fn: Any, args: tuple, arrays: list, spec: list, symbols: list, a: tuple, b: tuple, name: str
) -> StaticGraph:
    """`fn` traced again with every dynamic dim of the example resized to the sizes `b`."""
    args_b = tuple(
        _named(_resized(x, dims, symbols, b), ex) for x, dims, ex in zip(arrays, spec, args)
    )
    try:
        return record(Tracer(policy="refuse", who=EXPORT), fn, args_b, name)
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
        t = Tensor.wrap(arr)
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


def _specialised(ga: StaticGraph, gb: StaticGraph, symbols: list, a: tuple, b: tuple) -> str:
    """torch's constraint violation: the code decided something on a dynamic size."""
    sub = _Substitute(a, b, a)

    def same(x: Any, y: Any) -> bool:
        try:
            sub.eqns([x], [y])
            return True
        except _NotSymbolicError:
            return False

    return _violated(
        symbols,
        a,
        lambda shown: (
            f"You marked {shown} as dynamic but your code specialized it to be a "
            f"constant: traced at {_sizes_text(symbols, a)} and at {_sizes_text(symbols, b)}, the "
            "programs differ in more than the size (a Python decision on a shape, such as "
            f"`if x.shape[0] == {a[0]}:`)."
        ),
        _first_site(ga.program, gb.program, same),
        "compute without a Python decision on the size (tg.static.cond, tg.where)",
    )


def _violated(symbols: list, a: tuple, why: Callable, site: Any, fix: str) -> str:
    """`constraints violated (batch)! <why> Suggested fixes: batch = 4`, torch's wording."""
    shown = " and ".join(d.name for d in symbols)
    fixes = ", ".join(f"{d.name} = {n}" for d, n in zip(symbols, a))
    return message(
        EXPORT,
        f"constraints violated ({shown})! {why(shown)} Suggested fixes: {fixes}",
        site,
        f"make the dim static (drop its Dim), or {fix}",
    )


def _not_linear(expected: Program, pc: Program, symbols: list, a: tuple, b: tuple, c: tuple) -> str:
    """The sizes at a and b did not predict the program at c: not a multiple of the size."""
    return _violated(
        symbols,
        a,
        lambda shown: (
            f"The program traced at {_sizes_text(symbols, c)} is not the one the "
            f"traces at {_sizes_text(symbols, a)} and {_sizes_text(symbols, b)} predict: the code "
            f"uses {shown} in a way that is not a multiple of it (such as x.shape[0] // 2), which "
            "export cannot keep symbolic."
        ),
        _first_site(expected, pc, same_eqn),
        "compute sizes as multiples of the dim",
    )
