"""`tg.static.function`: trace on first use, replay after, retrace for each new shape.

Like `jax.jit` or `torch.compile`, the decorated function keeps a cache of traced
StaticGraphs keyed by the arguments' shapes and dtypes (and by the value of every
non-tensor argument, which is *static*: baked into the trace). A call whose key is
cached replays; any other call traces again. The cache says what happened and why
(`f.cache_info()`), which is the point of the lesson on shape specialisation.

Static layer: imports the core, numpy and the standard library only.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core import source
from ..core.errors import TracingError, message
from ..core.tensor import Tensor
from .program import StaticGraph, trace


def _is_array(x: Any) -> bool:
    # numpy numbers (np.float64(2.0), np.int64(3)) are data, like 0-d arrays: a new value
    # must replay the same trace, not retrace. Python numbers, str and bool stay static.
    return isinstance(x, (Tensor, np.ndarray, np.number, np.bool_))


def _as_data(x: Any) -> Any:
    return x if isinstance(x, Tensor) else np.asarray(x)


def _key_part(x: Any, name: str) -> tuple:
    if _is_array(x):
        arr = x.data if isinstance(x, Tensor) else np.asarray(x)
        return ("array", tuple(arr.shape), arr.dtype.name)
    try:
        hash(x)
    except TypeError:
        raise TracingError(message(
            "tg.static.function", f"argument {name!r} is a {type(x).__name__}, which is neither "
            "a tensor nor hashable, so it cannot be part of the cache key", source.here(),
            "pass tensors/arrays, or numbers, strings and tuples (static arguments)")) from None
    return ("static", _typed(x), x)


def _typed(x: Any) -> Any:
    """`x` with the type of every part: 3, 3.0 and True are equal in Python, yet
    `int_tensor * 3` stays int and `* 3.0` does not, so each needs its own trace."""
    if isinstance(x, tuple):
        return (tuple, tuple(_typed(v) for v in x))
    return (type(x), x)


def _describe(part: tuple) -> str:
    if part[0] == "array":
        return f"shape {part[1]!r} {part[2]}"
    return f"the static value {part[2]!r}"


@dataclass
class CacheInfo:
    """What the cache holds and what happened so far."""

    entries: list = field(default_factory=list)  # the cache keys, oldest first
    hits: int = 0
    misses: int = 0
    last_retrace_reason: str | None = None

    def __repr__(self) -> str:
        reason = self.last_retrace_reason or "no trace yet"
        return (f"CacheInfo(entries={len(self.entries)}, hits={self.hits}, misses={self.misses}, "
                f"last retrace: {reason})")


class StaticFunction:
    """The callable that `tg.static.function` returns (see there)."""

    def __init__(self, fn: Callable, strict: bool = False) -> None:
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.strict = strict
        self.cache: dict[tuple, StaticGraph] = {}
        self.info = CacheInfo()
        self._names = None

    def _arg_names(self, n: int) -> list:
        import inspect

        try:
            params = [p.name for p in inspect.signature(self.fn).parameters.values()]
        except (TypeError, ValueError):
            params = []
        return [params[i] if i < len(params) else f"arg{i}" for i in range(n)]

    def cache_info(self) -> CacheInfo:
        """Entries, hits, misses and, in words, why the last trace happened."""
        return self.info

    def graph_for(self, *args: Any) -> StaticGraph:
        """The StaticGraph these arguments use (tracing it if needed)."""
        names = self._arg_names(len(args))
        key = tuple(_key_part(a, n) for a, n in zip(args, names))
        g = self.cache.get(key)
        if g is not None:
            self.info.hits += 1
            return g
        self.info.misses += 1
        self.info.last_retrace_reason = self._why(key, names)
        dynamic = [i for i, a in enumerate(args) if _is_array(a)]

        def traced(*arrays: Any) -> Any:
            full = list(args)
            for i, t in zip(dynamic, arrays):
                full[i] = t
            return self.fn(*full)

        examples = []
        for i in dynamic:
            a = args[i]
            t = Tensor._make(np.array(a.data if isinstance(a, Tensor) else a))
            t.name = names[i]
            examples.append(t)
        g = trace(traced, *examples, strict=self.strict, name=getattr(self.fn, "__name__", "f"))
        self.cache[key] = g
        self.info.entries.append(key)
        return g

    def _why(self, key: tuple, names: list) -> str:
        if not self.info.entries:
            return "first call: nothing was traced yet"
        last = self.info.entries[-1]
        if len(last) != len(key):
            return f"called with {len(key)} arguments, the cached traces have {len(last)}"
        for name, new, old in zip(names, key, last):
            if new != old:
                return (f"argument {name!r} has {_describe(new)}, but the last trace was made "
                        f"for {_describe(old)}")
        return "a new combination of argument shapes"

    def __call__(self, *args: Any) -> Any:
        g = self.graph_for(*args)
        arrays = [_as_data(a) for a in args if _is_array(a)]
        return g(*arrays)

    def __repr__(self) -> str:
        return f"tg.static.function({getattr(self.fn, '__name__', 'f')}, {len(self.cache)} traces)"


def function(fn: Callable | None = None, *, strict: bool = False) -> Any:
    r"""Decorate `fn` so it is traced once per input signature and replayed after that.

    Rules: tensors, arrays and numpy numbers (`np.float64(2.0)`, 0-d arrays) are the
    graph's inputs; their shapes and dtypes form the cache key, so a new value replays.
    Every other argument (Python int, float, bool, str, tuples) is static: its value is
    part of the key and frozen into that trace (it must be hashable), so a new value
    retraces. A call with a new key retraces;
    `f.cache_info()` shows entries, hits, misses and why the last retrace happened.

    Args:
        fn: the function to trace; use as `@tg.static.function` or
            `@tg.static.function(strict=True)`.
        strict: frozen branches raise `TracingError` instead of warning.

    Example:
        >>> import tinygrad_edu as tg
        >>> @tg.static.function
        ... def f(x):
        ...     return (x * x).sum()
        >>> f(tg.ones(3)), f(tg.ones(3) * 2), f(tg.ones(4))
        (tensor(3.), tensor(12.), tensor(4.))
        >>> f.cache_info()
        CacheInfo(entries=2, hits=1, misses=2, last retrace: argument 'x' has shape (4,) float64, but the last trace was made for shape (3,) float64)
    """
    if fn is None:
        return lambda f: StaticFunction(f, strict=strict)
    return StaticFunction(fn, strict=strict)
