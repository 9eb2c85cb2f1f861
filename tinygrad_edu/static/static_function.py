"""`tg.static.function`: trace on first use, replay after, retrace for each new shape.

Like `jax.jit` or `torch.compile`, the decorated function keeps a cache of traced
StaticGraphs keyed by the arguments' shapes and dtypes (and by the value of every
non-tensor argument, which is *static*: baked into the trace). A call whose key is
cached replays; any other call traces again. The cache says what happened and why
(`f.cache_info()`), which is the point of the lesson on shape specialisation.

A compiled function never goes stale, as with torch.compile:

- tensors from outside the trace (a model's parameters, a closure's tensors) are
  *inputs* of the program, read at every call, so an optimizer step or an in-place
  change is seen; gradients flow back to them through one `CompiledFunction` node;
- what else the trace read (the model's structure, its Python attributes, closure
  variables, globals) is recorded as guards (guards.py) and checked at every call:
  a difference retraces, and `cache_info()` says what changed.

Static layer: imports the core, numpy and the standard library only.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.errors import BackwardError, message
from ..core.function import OPS, Function
from ..core.grad_mode import is_grad_enabled
from ..core.tensor import Tensor
from . import autodiff, guards, ir, runtime
from .program import StaticGraph, record
from .tracer import Tracer, current, outside_lifter


def _as_data(x: Any) -> Any:
    return x if isinstance(x, Tensor) else np.asarray(x)


@dataclass
class CacheInfo:
    """What the cache holds and what happened so far."""

    entries: list = field(default_factory=list)  # the cache keys, oldest first
    hits: int = 0
    misses: int = 0
    last_retrace_reason: str | None = None

    def __repr__(self) -> str:
        reason = self.last_retrace_reason or "no trace yet"
        return (
            f"CacheInfo(entries={len(self.entries)}, hits={self.hits}, misses={self.misses}, "
            f"last retrace: {reason})"
        )


MAX_TRACES_PER_SIGNATURE = 8  # as torch.compile's cache_size_limit: older traces are dropped


@dataclass
class _Trace:
    """One cached trace: its graph, what it read (guards) and the tensors it reads live."""

    graph: StaticGraph
    state: dict  # guards.state(): label -> description, compared on every call
    lifted: list  # captured tensors (parameters, closure tensors): inputs read at call time
    dynamic: list  # positions of the array arguments
    frozen: list = field(default_factory=list)  # (captured tensor, value read as a number)
    backward: dict = field(default_factory=dict)  # needs_input_grad -> compiled backward

    def stale_capture(self) -> str | None:
        """A captured tensor whose shape or dtype changed (what guards cannot see), or
        whose value changed where the trace read it as a Python number (`.item()`)."""
        n = len(self.dynamic)
        for t, sig in zip(self.lifted, self.graph.inputs[n:]):
            if t.shape != sig.shape or t.dtype != sig.dtype:
                return (
                    f"captured tensor {sig.name!r} now has shape {t.shape!r} {t.dtype.name}, "
                    f"the last trace saw shape {sig.shape!r} {sig.dtype.name}"
                )
        for t, value in self.frozen:
            if t.shape != value.shape or not np.array_equal(np.asarray(t), value, equal_nan=True):
                name = self.graph.inputs[n + _index(self.lifted, t)].name
                return (
                    f"captured tensor {name!r} was read as a Python value when traced "
                    "(.item(), float(), an if), and its value changed since"
                )
        return None

    def backward_runner(self, needs: tuple) -> Any:
        """The gradient program for these inputs, derived once from the forward program."""
        run = self.backward.get(needs)
        if run is None:
            prog = self.graph.program
            bp = autodiff.backward_program(prog, list(needs), ir.IdSource(ir.max_id(prog) + 1))
            run = self.backward[needs] = runtime.runner(bp)
        return run


class CompiledFunction(Function):
    """One call of a compiled function as a single autograd node (as in torch.compile).

    Forward replays the program and keeps every op's context (the tape); backward runs
    the gradient program derived from the same ops' backward rules on that tape, so
    gradients reach the real parameters' `.grad` exactly as eagerly.
    """

    @staticmethod
    def forward(ctx: Any, *arrays: Any, trace: _Trace, outs: list) -> np.ndarray:
        ctx.save_for_backward(*arrays)  # so an in-place change before backward is caught
        ctx.tape, ctx.trace = {}, trace
        outs.extend(runtime.runner(trace.graph.program, keep_all=True).run(list(arrays), ctx.tape))
        ctx.shapes = [(o.shape, o.dtype) for o in outs]
        return _flat(outs)

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        if isinstance(grad, Tensor):
            raise BackwardError(
                message(
                    "tg.static.function",
                    "backward(create_graph=True) through a compiled "
                    "function: its gradient program runs on arrays, so it has no graph of its own",
                    ctx.site,
                    "call the original Python function (f.fn) for higher-order gradients",
                )
            )
        _ = ctx.saved_tensors  # raises InplaceError if an input changed in place since forward
        grad, cotangents, start = grad.reshape(-1), [], 0  # the flat layout of `_flat`
        for shape, dtype in ctx.shapes:
            size = int(np.prod(shape))
            if dtype.kind == "f":
                cotangents.append(grad[start : start + size].reshape(shape).astype(dtype))
                start += size
            else:
                cotangents.append(np.zeros(shape, dtype))
        needs = tuple(ctx.needs_input_grad)
        grads = iter(ctx.trace.backward_runner(needs).run(cotangents, ctx.tape))
        return tuple(next(grads) if need else None for need in needs)


# not a primitive op: never recorded in a trace, never loadable from a file
OPS.pop(CompiledFunction.__name__, None)


def _index(items: list, x: Any) -> int:
    return next(i for i, y in enumerate(items) if y is x)  # by identity: tensors compare by value


def _flat(outs: list) -> np.ndarray:
    """The floating-point outputs as one flat array (one autograd node has one output)."""
    floats = [o.ravel() for o in outs if o.dtype.kind == "f"]
    if len(outs) == 1 and floats:
        return outs[0]
    return np.concatenate(floats) if floats else np.zeros(0)


class StaticFunction:
    """The callable that `tg.static.function` returns (see there)."""

    def __init__(self, fn: Callable, strict: bool = False) -> None:
        if not guards.is_module(fn):
            functools.update_wrapper(self, fn)
        self.fn = fn
        self.strict = strict
        self.cache: dict[tuple, list[_Trace]] = {}
        self.info = CacheInfo()
        self.compiles: list[guards.LogEntry] = []  # the log: which miss traced, and why

    def cache_info(self) -> CacheInfo:
        """Entries, hits, misses and, in words, why the last trace happened."""
        return self.info

    def graph_for(self, *args: Any) -> StaticGraph:
        """The StaticGraph these arguments use (tracing it if needed)."""
        return self._trace_for(args).graph

    def _trace_for(self, args: tuple) -> _Trace:
        names = guards.arg_names(self.fn, len(args))
        key = tuple(guards.arg_key(a, n, "tg.static.function") for a, n in zip(args, names))
        statics = {n: a for a, n in zip(args, names) if not guards.is_array(a)}
        now, labels = guards.state(self.fn, statics)
        traces = self.cache.get(key, [])
        reason = None
        for t in traces:
            if t.state == now:
                reason = t.stale_capture()
                if reason is None:
                    self.info.hits += 1
                    return t
        self.info.misses += 1
        if reason is None and traces:
            reason = guards.read_changed(now, traces[-1].state)
        last = self.info.entries[-1] if self.info.entries else None
        reason = reason or guards.retrace_reason(key, last, names, "traced")
        self.info.last_retrace_reason = reason
        self.compiles.append(guards.LogEntry(self.info.hits + self.info.misses, reason))
        t = self._trace(args, names, labels, now)
        self.cache[key] = (traces + [t])[-MAX_TRACES_PER_SIGNATURE:]
        self.info.entries.append(key)
        return t

    def _trace(self, args: tuple, names: list, labels: dict, now: dict) -> _Trace:
        dynamic = [i for i, a in enumerate(args) if guards.is_array(a)]

        def traced(*arrays: Any) -> Any:
            full = list(args)
            for i, t in zip(dynamic, arrays):
                full[i] = t
            return self.fn(*full)

        # inspect.signature reads this attribute; typeshed declares no such attribute on functions
        traced.__signature__ = _signature([names[i] for i in dynamic])  # type: ignore[attr-defined]
        lift = outside_lifter(labels)  # before the trace: its own tensors are newer
        examples = []
        for i in dynamic:
            a = args[i]
            examples.append(Tensor.wrap(np.array(a)))
        tr = Tracer(strict=self.strict)
        tr.lift = lift
        fname = getattr(self.fn, "__name__", None) or type(self.fn).__name__.lower()
        g = record(tr, traced, examples, name=fname)
        return _Trace(g, now, list(tr.lifted), dynamic, list(tr.frozen))

    def __call__(self, *args: Any) -> Any:
        if current() is not None:  # inside another trace: record the ops themselves
            return self.fn(*args)
        t = self._trace_for(args)
        inputs = [args[i] for i in t.dynamic] + t.lifted
        g = t.graph
        if is_grad_enabled() and any(isinstance(a, Tensor) and a.requires_grad for a in inputs):
            return _with_grad(t, inputs)
        arrays = g._check(tuple(_as_data(a) for a in inputs), {})
        outs = [Tensor.wrap(o) for o in g.run_arrays(arrays)]
        return outs[0] if g.structure == "single" else tuple(outs)

    def __repr__(self) -> str:
        n = sum(len(t) for t in self.cache.values())
        return f"tg.static.function({getattr(self.fn, '__name__', 'f')}, {n} traces)"


def _with_grad(t: _Trace, inputs: list) -> Any:
    """Run `t` as one CompiledFunction node, then split its flat output per result."""
    outs: list = []
    tensors = [a if isinstance(a, Tensor) else Tensor.wrap(np.asarray(a)) for a in inputs]
    t.graph._check(tuple(tensors), {})
    flat = CompiledFunction.apply(*tensors, trace=t, outs=outs)
    if len(outs) == 1 and outs[0].dtype.kind == "f":
        return flat if t.graph.structure == "single" else (flat,)
    results, start = [], 0
    for o in outs:
        if o.dtype.kind != "f":
            results.append(Tensor.wrap(o))
            continue
        part = flat[start : start + o.size].reshape(o.shape)
        results.append(part if o.dtype == flat.dtype else part.astype(o.dtype))
        start += o.size
    return results[0] if t.graph.structure == "single" else tuple(results)


def _signature(names: list) -> Any:
    import inspect

    return inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY) for n in names]
    )


def function(fn: Callable | None = None, *, strict: bool = False) -> Any:
    r"""Decorate `fn` so it is traced once per input signature and replayed after that.

    Rules: tensors, arrays and numpy numbers (`np.float64(2.0)`, 0-d arrays) are the
    graph's inputs; their shapes and dtypes form the cache key, so a new value replays.
    Every other argument (Python int, float, bool, str, tuples) is static: its value is
    part of the key and frozen into that trace (it must be hashable), so a new value
    retraces. A call with a new key retraces;
    `f.cache_info()` shows entries, hits, misses and why the last retrace happened.
    Tensors `fn` reaches from outside (a model's parameters, closure tensors) are read
    at each call, never frozen, and receive gradients as eagerly. The model's
    structure, Python attributes, closure variables and globals that `fn` reads are
    guarded: if any of them changed, the call retraces and says why. `fn` may be an
    `nn.Module`. Up to 8 traces are kept per argument signature.

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
        CacheInfo(entries=2, hits=1, misses=2, last retrace: x's shape changed from (3,) to (4,))

        A model's weights are read at each call, and a changed model retraces:

        >>> net = tg.nn.Sequential(tg.nn.Linear(2, 1))
        >>> net[0].weight.data[:], net[0].bias.data[:] = 1.0, 0.0
        >>> g = tg.static.function(net)
        >>> g(tg.ones(1, 2))
        tensor([[2.]], grad_fn=<CompiledFunctionBackward>)
        >>> with tg.no_grad():
        ...     net[0].weight *= 3.0
        >>> g(tg.ones(1, 2))
        tensor([[6.]], grad_fn=<CompiledFunctionBackward>)
        >>> _ = net.append(tg.nn.ReLU())
        >>> g(-tg.ones(1, 2)), g.cache_info().last_retrace_reason
        (tensor([[0.]], grad_fn=<CompiledFunctionBackward>), "what the function read changed: sequential now has sub-modules ['0', '1'], the last trace saw ['0']")
    """
    if fn is None:
        return lambda f: StaticFunction(f, strict=strict)
    return StaticFunction(fn, strict=strict)
