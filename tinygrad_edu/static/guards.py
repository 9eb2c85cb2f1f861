"""The cache of `tg.static.function` and `tg.static.compile`: its key, its guards, why it
missed (one text for both), and the log of every trace.

The key: per argument, a tensor's shape and dtype (and for `compile` requires_grad),
or a static value with its type (`arg_key`). A call whose key has no cached trace
traces again, and `retrace_reason` says in words how its arguments differ from the
last call's; a `LogEntry` is one line of the log (`CompiledFn.compiles`, the reasons
`cache_info()` reports).

The guards: what a trace read besides its arguments, so a changed model is noticed.
A trace runs the learner's Python once. Besides the arguments it may read a model's
structure (which layers a `Sequential` holds), its parameters (which tensor objects,
of which shapes), Python attributes (`self.scale`), closure variables and globals
(`lr`). `state(fn, args)` collects all of these into an ordered dict, label ->
description, walking modules, closures, and the globals that `fn`'s code (and the
learner's functions it reaches) names. `tg.static.function` stores the state with
each trace and compares it on every call: any difference is a retrace, and
`difference` says, in words, what changed. This is what torch.compile's guards do.

Tensors are described by identity, shape and dtype only: their *values* are read at
call time (they are inputs of the program), so a changed weight needs no retrace.
numpy arrays and Python values become constants of the trace, so their values count.

Static layer: imports the core, numpy and the standard library only (never nn).
"""

from __future__ import annotations

import sys
import types
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core import source
from ..core.errors import TracingError, message
from ..core.tensor import Tensor

_PLAIN = (int, float, bool, str, complex, type(None), np.generic)
_ARRAY_BYTES = 1 << 20  # arrays larger than this are guarded by identity, shape and dtype
_SKIPPED_MODULE_ATTRS = ("_parameters", "_modules", "_key", "name")


_SIMPLE_TYPES = frozenset({int, float, bool, str, complex, type(None)})


# --- the key: what a call passes ------------------------------------------------------


def is_array(x: Any) -> bool:
    """Data, not a static value: a tensor, an array, or a numpy number (np.float64(2.0)
    and 0-d arrays are data: a new value replays). Python numbers, str and bool stay static."""
    return isinstance(x, (Tensor, np.ndarray, np.number, np.bool_))


def arg_key(x: Any, name: str, who: str, with_grad: bool = False) -> tuple:
    """What the cache keys one argument by: `("array", shape, dtype[, requires_grad])` or
    `("static", typed value, value)`; an error for a value no guard can compare."""
    if is_array(x):
        arr = np.asarray(x)
        part = ("array", tuple(arr.shape), arr.dtype.name)
        return part + (bool(getattr(x, "requires_grad", False)),) if with_grad else part
    try:
        hash(x)
    except TypeError:
        raise TracingError(
            message(
                who,
                f"argument {name!r} is a {type(x).__name__}, which is neither "
                "a tensor nor hashable, so no guard can check it",
                source.here(),
                "pass tensors/arrays, or numbers, strings and tuples",
            )
        ) from None
    return ("static", _typed(x), x)


def _typed(x: Any) -> Any:
    """`x` with the type of every part: 3, 3.0 and True are equal in Python, yet
    `int_tensor * 3` stays int and `* 3.0` does not, so each needs its own trace."""
    if isinstance(x, tuple):
        return (tuple, tuple(_typed(v) for v in x))
    return (type(x), x)


def arg_names(fn: Any, n: int) -> list:
    """The names of `n` positional arguments of `fn` (of a module's `forward`)."""
    from .tracer import positional_params

    params = positional_params(fn.forward if is_module(fn) else fn)
    return [params[i] if i < len(params) else f"arg{i}" for i in range(n)]


def shape_changes(new: Sequence[Any], old: Sequence[Any], names: Sequence[str]) -> list:
    """`(position, name, new shape, old shape)` of each tensor argument whose shape changed."""
    return [
        (i, n, a[1], b[1])
        for i, (n, a, b) in enumerate(zip(names, new, old))
        if a[0] == b[0] == "array" and a[1] != b[1]
    ]


def retrace_reason(
    new: Sequence[Any], old: Sequence[Any] | None, names: Sequence[str], made: str
) -> str:
    """Why a call with keys `new` found no trace, against the last call's `old`, in words.

    `made` is what happens on a miss ("traced", "captured"), for the first call's text.
    """
    if old is None:
        return f"first call: nothing was {made} yet"
    if len(old) != len(new):
        return f"called with {len(new)} arguments, the last call had {len(old)}"
    shapes = shape_changes(new, old, names)
    if shapes:
        return ", ".join(f"{n}'s shape changed from {b!r} to {a!r}" for _, n, a, b in shapes)
    for name, a, b in zip(names, new, old):
        if a == b:
            continue
        if a[0] == b[0] == "array":
            if a[2] != b[2]:
                return f"{name}'s dtype changed from {b[2]} to {a[2]}"
            return f"{name}.requires_grad changed from {b[3]} to {a[3]}"
        if a[0] == b[0] == "static":
            return f"argument {name!r} changed from {b[2]!r} to {a[2]!r}"
        return f"argument {name!r} is now a {'tensor' if a[0] == 'array' else 'static value'}"
    return "a combination of arguments not seen before"


def read_changed(now: dict, before: dict) -> str:
    """A retrace because what the function read (not its arguments) changed."""
    change = difference(now, before)
    assert change is not None  # callers found no entry whose state equals `now`
    return "what the function read changed: " + change


@dataclass
class LogEntry:
    """One line of the compile log: which call traced (captured), and why."""

    call: int
    reason: str

    def __str__(self) -> str:
        return f"call {self.call}: {self.reason}"


# --- the guards: what a call read -----------------------------------------------------


def is_module(x: Any) -> bool:
    """Is `x` an `nn.Module`? Without importing nn: a deployed graph loads no layer code,
    and if nn was never imported, nothing can be a Module."""
    nn_module = sys.modules.get("tinygrad_edu.nn.module")
    return nn_module is not None and isinstance(x, nn_module.Module)


def describe(value: Any) -> tuple | None:
    """A comparable description of a value a trace may have read (None: not guarded)."""
    kind = type(value)
    if kind in _SIMPLE_TYPES or isinstance(value, _PLAIN):
        # repr, not ==: nan equals nothing, and 0.0 == -0.0 gives different results
        return ("value", kind.__name__, repr(value))
    if isinstance(value, Tensor):
        return ("tensor", id(value), value.shape, value.dtype)
    if isinstance(value, np.ndarray):
        if value.nbytes > _ARRAY_BYTES:
            return ("array", id(value), value.shape, value.dtype)
        return ("array", value.shape, value.dtype, value.tobytes())
    if kind is tuple:
        parts = tuple(describe(v) for v in value)
        return ("tuple", parts) if None not in parts else None
    return None


class _Walk:
    def __init__(self) -> None:
        self.state: dict[str, tuple] = {}
        self.tensor_labels: dict[int, str] = {}  # id(tensor) -> where it was found
        self.seen: set[int] = set()

    def value(self, label: str, v: Any) -> None:
        if type(v) in _SIMPLE_TYPES:  # the most common case, first
            self.state.setdefault(label, ("value", type(v).__name__, repr(v)))
        elif is_module(v):
            self.module(label, v)
        elif isinstance(v, (types.FunctionType, types.MethodType)):
            self.function(v)
        else:
            d = describe(v)
            if d is not None:
                self.state.setdefault(label, d)
                if isinstance(v, Tensor):
                    self.tensor_labels.setdefault(id(v), label)

    def module(self, label: str, m: Any) -> None:
        if id(m) in self.seen:
            return
        self.seen.add(id(m))
        self.state[label] = ("module", type(m).__name__, tuple(m._modules))
        for k, v in m.__dict__.items():  # plain attributes: training, scale, sizes...
            if k not in _SKIPPED_MODULE_ATTRS:
                self.value(f"{label}.{k}", v)
        for k, p in m._parameters.items():
            self.value(f"{label}.{k}", p)
        for k, child in m._modules.items():
            self.value(f"{label}.{k}", child)
        if not type(m).__module__.startswith("tinygrad_edu."):
            self.function(type(m).forward)

    def function(self, f: Any) -> None:
        if isinstance(f, types.MethodType):
            if is_module(f.__self__):
                self.module("self", f.__self__)
            f = f.__func__
        if not isinstance(f, types.FunctionType) or id(f) in self.seen:
            return
        self.seen.add(id(f))
        if f.__module__ and f.__module__.startswith("tinygrad_edu."):
            return  # the package's own layers: their attributes are walked, not their code
        for name, cell in zip(f.__code__.co_freevars, f.__closure__ or ()):
            try:
                self.value(name, cell.cell_contents)
            except ValueError:  # a cell not yet filled
                continue
        for name in _names(f.__code__):
            if name in f.__globals__ and not isinstance(f.__globals__[name], types.ModuleType):
                self.value(name, f.__globals__[name])


def _names(code: types.CodeType) -> tuple:
    """Global and attribute names a code object (and the lambdas inside it) mention."""
    out = _NAMES.get(code)
    if out is None:
        if len(_NAMES) > 10_000:  # many lambdas seen: start afresh rather than grow
            _NAMES.clear()
        found = list(code.co_names)
        for c in code.co_consts:
            if isinstance(c, types.CodeType):
                found.extend(_names(c))
        out = _NAMES[code] = tuple(dict.fromkeys(found))
    return out


_NAMES: dict = {}  # code object -> names (code objects are immutable)


def state(fn: Any, args: dict) -> tuple[dict, dict]:
    """`(state, tensor_labels)` for a call of `fn` with non-tensor `args` (name -> value)."""
    walk = _Walk()
    if is_module(fn):
        walk.module(fn.name or type(fn).__name__.lower(), fn)
    else:
        walk.function(fn)
    for name, v in args.items():
        if is_module(v):
            walk.module(name, v)
    return walk.state, walk.tensor_labels


def difference(new: dict, old: dict) -> str | None:
    """What changed between two states, in words (None: nothing)."""
    for label, d in new.items():
        before = old.get(label)
        if before is None:
            return f"{label} appeared (the last trace did not read it)"
        if d != before:
            return f"{label} {_change(d, before)}"
    for label in old:
        if label not in new:
            return f"{label} is gone (the last trace read it)"
    return None


def _change(d: tuple, before: tuple) -> str:
    if d[0] != before[0]:
        return f"is now a {d[0]}, the last trace read a {before[0]}"
    if d[0] == "module":
        if d[1] != before[1]:
            return f"is now a {d[1]}, the last trace read a {before[1]}"
        return f"now has sub-modules {list(d[2])}, the last trace saw {list(before[2])}"
    if d[0] == "tensor":
        if d[1] != before[1]:
            return "is a different tensor object than the one the last trace read"
        return f"now has shape {d[2]!r} {d[3]}, the last trace saw shape {before[2]!r} {before[3]}"
    if d[0] == "value":
        return f"is {d[2]}, the last trace read {before[2]}"
    if d[0] == "array":
        return "is an array whose shape, dtype or values changed since the last trace"
    return "changed since the last trace"
