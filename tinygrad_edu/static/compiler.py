"""`tg.static.compile`: capture what can be captured, break the graph where Python decides.

A teaching-sized model of `torch.compile`. The first call runs the function eagerly
under a capturing tracer (capture.py): the ops become graphs, and each place where a
traced tensor turned into a Python value is a *graph break*. Later calls check the
*guards* (argument shapes, dtypes, requires_grad, non-tensor arguments, and what the
function read: module structure, attributes, closures, globals, via guards.py) and,
when they hold, *replay* the graphs without running the Python: at each break the
value the Python would read is read from the replayed result, and the graph for that
outcome runs next. A failed guard, or an outcome no capture has seen, *recompiles*
(captures again), and the reason is recorded. `explain()` tells the whole story.

Sizes: after a recompile because a dimension changed, that dimension is *dynamic*
(`dynamic=None`, as torch.compile's default); see symbolic.py for what that means here.

Static layer: imports the core, numpy and the standard library only.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core import source
from ..core.errors import message
from ..core.grad_mode import is_grad_enabled
from ..core.tensor import Tensor
from . import guards, symbolic
from .capture import Miss, PathTree, replay, results, split
from .program import StaticGraph
from .tracer import Tracer, current, outside_lifter

MAX_CAPTURES = 8  # per cache entry, as torch.compile's recompile limit; then it runs eagerly


@dataclass
class _Entry:
    """Captures valid under one set of guards; one PathTree per size of the dynamic dims."""

    key: tuple  # per argument: ("array", shape with None for dynamic dims, dtype, rg) / static
    state: dict  # guards.state(): what else the function read
    trees: dict = field(default_factory=dict)  # sizes of the dynamic dims -> PathTree
    eager: str | None = None  # why calls under these guards run eagerly (never captured)
    said: list = field(default_factory=list)  # why calls ran eagerly (each noted once)

    def captures(self) -> int:
        """Real captures (re-specialised paths are not)."""
        return sum(not p.derived for t in self.trees.values() for p in t.paths)


def _positional(fn: Any, args: tuple, kwargs: dict) -> tuple:
    """Keyword arguments in their positions, so the guards see one argument list."""
    target = fn.forward if guards.is_module(fn) else fn
    try:
        bound = inspect.signature(target).bind(*args, **kwargs)
    except (TypeError, ValueError) as e:
        raise TypeError(message("tg.static.compile", str(e), source.here())) from None
    if bound.kwargs:  # keyword-only parameters have no position
        raise TypeError(
            message(
                "tg.static.compile",
                f"keyword-only arguments {list(bound.kwargs)} cannot be guarded here",
                source.here(),
                "make them ordinary parameters, or pass them by position",
            )
        )
    return bound.args


class CompiledFn:
    """What `tg.static.compile` returns: call it like the function; `explain()` says how."""

    def __init__(self, fn: Callable, fullgraph: bool, dynamic: bool | None) -> None:
        if not guards.is_module(fn):
            functools.update_wrapper(self, fn)
        self.fn, self.fullgraph, self.dynamic = fn, fullgraph, dynamic
        self.entries: list[_Entry] = []
        self.dynamic_dims: dict[int, set] = {}  # argument position -> its dynamic dims
        self.compiles: list[guards.LogEntry] = []
        self.notes: list[str] = []  # re-specialisations, eager fallbacks
        self.calls = self.replays = self.eager_calls = 0  # eager: not captured, not replayed
        self._last: tuple | None = None  # (entry, sizes, parts) of the last call
        self._names: dict = {}  # number of arguments -> their names

    def __getattr__(self, attr: str) -> Any:
        # a compiled module still reads as the module (net.parameters() for an optimizer),
        # as torch.compile's wrapper does; only asked for what this object lacks
        fn = self.__dict__.get("fn")
        if fn is None or attr.startswith("__") or not guards.is_module(fn):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {attr!r}")
        return getattr(fn, attr)

    @property
    def name(self) -> str:
        return getattr(self.fn, "__name__", None) or type(self.fn).__name__.lower()

    # --- calling -------------------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if current() is not None:  # inside another trace: let it record the ops themselves
            return self.fn(*args, **kwargs)
        if kwargs:
            args = _positional(self.fn, args, kwargs)
        self.calls += 1
        entry, parts, names, labels, reason = self._check_guards(args)
        if entry.eager:
            self.eager_calls += 1
            return self.fn(*args)  # its Python reads values no graph can compute
        sizes = self._sizes(parts)
        tree, reason = self._tree_for(entry, sizes, parts, names, reason)
        self._last = (entry, sizes, parts)
        if reason is None and tree.grad_stop and self._needs_grad(tree, args):
            return self._eager(
                entry,
                f"gradients stop inside the function (detach() or no_grad, at "
                f"{tree.grad_stop}), which a replayed graph cannot do, so calls that need "
                "gradients run eagerly",
                args,
            )
        if reason is None:
            out = self._replay(tree, args)
            if not isinstance(out, Miss):
                self.replays += 1
                return out[0]
            reason = _miss_reason(out)
        return self._capture(entry, sizes, parts, args, labels, reason)

    def _check_guards(self, args: tuple) -> tuple:
        """`(entry, parts, names, labels, reason)`: the cache entry whose guards hold (or a
        new one, and why no entry did); `parts` are the arguments as the guards see them."""
        names = self._names.get(len(args))
        if names is None:  # inspect.signature is slow: once per number of arguments
            names = self._names[len(args)] = guards.arg_names(self.fn, len(args))
        parts = [
            guards.arg_key(a, n, "tg.static.compile", with_grad=True) for a, n in zip(args, names)
        ]
        if self.dynamic is True:
            for i, p in enumerate(parts):
                if p[0] == "array":
                    self.dynamic_dims.setdefault(i, set()).update(range(len(p[1])))
        statics = {n: a for a, n in zip(args, names) if not guards.is_array(a)}
        now, labels = guards.state(self.fn, statics)
        # as torch.compile's global-state guard: which gradients stop inside depends on it
        now["grad mode"] = guards.describe(is_grad_enabled())
        entry, reason = self._entry_for(parts, now, names)
        return entry, parts, names, labels, reason

    def _tree_for(
        self, entry: _Entry, sizes: tuple, parts: list, names: list, reason: str | None
    ) -> tuple:
        """`(tree, reason)`: the captures for these sizes (re-specialised from other sizes
        if need be), or why the call must capture."""
        tree = entry.trees.get(sizes)
        if tree is None and reason is None:
            tree, text = symbolic.respecialise(entry.trees, sizes, self._dim_names(names))
            if tree is not None:
                tree.parts = parts
                entry.trees[sizes] = tree
                self.notes.append(f"call {self.calls}: {text}")
            else:
                reason = text
        if reason is None:
            assert tree is not None  # found, or re-specialised above (else `reason` says why not)
            reason = tree.stale()
            if reason is not None:  # its graphs were made for the old shapes: start afresh
                del entry.trees[sizes]
        return tree, reason

    def _needs_grad(self, tree: PathTree, args: tuple) -> bool:
        return is_grad_enabled() and (
            any(getattr(a, "requires_grad", False) for a in args if guards.is_array(a))
            or any(t.requires_grad for t in tree.lifted.values())
        )

    def _eager(self, entry: _Entry, why: str, args: tuple) -> Any:
        """Run the function eagerly (not captured, not replayed); say why once per entry."""
        if why not in entry.said:
            entry.said.append(why)
            self.notes.append(f"call {self.calls}: {why}")
        self.eager_calls += 1
        return self.fn(*args)

    def _replay(self, tree: PathTree, args: tuple) -> Any:
        arrays = [a for a in args if guards.is_array(a)]
        with_grad = self._needs_grad(tree, args)
        env: dict = {}
        for vid, a in zip(tree.paths[0].inputs, arrays):
            if with_grad:
                env[vid] = a if isinstance(a, Tensor) else Tensor.wrap(np.asarray(a))
            else:
                env[vid] = np.asarray(a)
        for vid, t in tree.lifted.items():
            env[vid] = t if with_grad else np.asarray(t)
        path = replay(tree, env, with_grad)
        return path if isinstance(path, Miss) else (results(path, env),)

    def _capture(
        self, entry: _Entry, sizes: tuple, parts: list, args: tuple, labels: dict, reason: str
    ) -> Any:
        """Run the function eagerly while capturing; file the new path under `entry`."""
        if entry.captures() >= MAX_CAPTURES:
            return self._eager(
                entry,
                f"ran eagerly, not captured, as will every call that needs a new "
                f"capture under these guards: they have {MAX_CAPTURES} captures already",
                args,
            )
        result, tr, path = self._run_capturing(args, labels)
        if tr.untracked:
            entry.eager = (
                f"{tr.untracked[0]} read a tensor that no recorded op made (argmax, argmin, "
                "all, any, &, |, ~ are not ops a graph can replay)"
            )
            self.notes.append(f"call {self.calls}: runs eagerly from now on: {entry.eager}")
            return result
        tree = entry.trees.get(sizes)
        if tree is None:
            tree = entry.trees[sizes] = PathTree(self.name, parts)
        dropped = tree.add(path)
        self.compiles.append(
            guards.LogEntry(self.calls, reason + (f"; {dropped}" if dropped else ""))
        )
        return result

    def _run_capturing(self, args: tuple, labels: dict) -> tuple:
        """`(result, tracer, path)`: `fn` run eagerly on the real arguments, recorded."""
        tr = Tracer(policy="break", strict=self.fullgraph, who="tg.static.compile")
        tr.lift = outside_lifter(labels)
        names = self._names[len(args)]
        call_args, arg_vars = list(args), []
        for i, a in enumerate(args):
            if guards.is_array(a):  # arrays and numpy numbers are passed as tensors, as in function
                t = a if isinstance(a, Tensor) else Tensor.wrap(np.array(a))
                arg_vars.append(tr.add_input(t, names[i]))
                call_args[i] = t
        with tr:
            result = self.fn(*call_args)
            path = split(tr, result, self.name, arg_vars)
        return result, tr, path

    # --- guards --------------------------------------------------------------------------

    def _masked(self, parts: list) -> tuple:
        out = []
        for i, p in enumerate(parts):
            dims = self.dynamic_dims.get(i)
            if p[0] == "array" and dims:
                shape = tuple(None if d in dims else n for d, n in enumerate(p[1]))
                p = ("array", shape) + p[2:]
            out.append(p)
        return tuple(out)

    def _dim_names(self, names: list) -> list:
        """`x.shape[0]`, ... for the dynamic dims, in the order of `_sizes`."""
        return [
            f"{names[i]}.shape[{d}]"
            for i in sorted(self.dynamic_dims)
            for d in sorted(self.dynamic_dims[i])
        ]

    def _sizes(self, parts: list) -> tuple:
        return tuple(
            parts[i][1][d]
            for i in sorted(self.dynamic_dims)
            for d in sorted(self.dynamic_dims[i])
            if parts[i][0] == "array"
        )

    def _entry_for(self, parts: list, now: dict, names: list) -> tuple[_Entry, str | None]:
        """The cache entry whose guards hold, or a new one and why none did."""
        key = self._masked(parts)
        same_key = [e for e in self.entries if e.key == key]
        for e in same_key:
            if e.state == now:
                return e, None
        if same_key:
            reason = guards.read_changed(now, same_key[-1].state)
        else:
            marked = dict((i, set(d)) for i, d in self.dynamic_dims.items())
            reason = self._why(parts, names)
            if marked != self.dynamic_dims:  # a dimension became dynamic: entries merge
                self._rekey()
                return self._entry_for(parts, now, names)[0], reason
        entry = _Entry(key, now)
        self.entries.append(entry)
        return entry, reason

    def _rekey(self) -> None:
        """Regroup the captures by the guards as they are now (fewer sizes are checked)."""
        old, self.entries = self.entries, []
        for e in old:
            if not e.trees:  # an entry that runs eagerly: nothing captured to regroup
                self.entries.append(e)
            for tree in e.trees.values():
                key = self._masked(tree.parts)
                entry = next((x for x in self.entries if x.key == key and x.state == e.state), None)
                if entry is None:
                    entry = _Entry(key, e.state)
                    self.entries.append(entry)
                entry.trees[self._sizes(tree.parts)] = tree

    def _why(self, parts: list, names: list) -> str:
        """Why no entry fits, compared with the last call; marks changed dims dynamic."""
        old = None if self._last is None else self._last[2]
        reason = guards.retrace_reason(parts, old, names, "captured")
        if old is None or len(old) != len(parts) or self.dynamic is not None:
            return reason
        marked = []
        for i, name, new, was in guards.shape_changes(parts, old, names):
            if len(new) == len(was):
                dims = {d for d, (a, b) in enumerate(zip(new, was)) if a != b}
                fresh = sorted(dims - self.dynamic_dims.get(i, set()))
                self.dynamic_dims.setdefault(i, set()).update(fresh)
                marked += [f"{name}.shape[{d}]" for d in fresh]
        if marked:
            reason += f"; {', '.join(marked)} {'is' if len(marked) == 1 else 'are'} now dynamic"
        return reason

    # --- explaining ----------------------------------------------------------------------

    @property
    def graphs(self) -> list[StaticGraph]:
        """The graphs of the last call's cache entry (`tg.draw(f.graphs[0])` draws one)."""
        tree = self._tree()
        return [r.graph for r in tree.regions() if r.eqns] if tree is not None else []

    def _tree(self) -> PathTree | None:
        if self._last is None:
            return None
        entry, sizes, _ = self._last
        return entry.trees.get(sizes)

    def explain(self) -> Any:
        """A report: graphs and their ops, graph breaks and their lines, guards, recompiles."""
        from .explain import explain

        return explain(self)

    def __repr__(self) -> str:
        return (
            f"tg.static.compile({self.name}, {len(self.compiles)} compiles, {self.replays} replays)"
        )


def _miss_reason(m: Miss) -> str:
    seen = ", ".join(repr(s) for s in m.seen)
    where = f" at {m.brk.site}" if m.brk.site is not None else ""
    return f"the graph break{where} gave {m.outcome!r}; the captured paths took {seen} there"


def compile(  # noqa: A001 - torch.compile's name, as the lesson compares them
    fn: Callable | None = None,
    *,
    fullgraph: bool = False,
    dynamic: bool | None = None,
) -> Any:
    r"""Compile `fn` into graphs, breaking the graph where Python decides on a tensor's value.

    Rules: the first call runs `fn` eagerly (its result is the eager one) while capturing
    its ops. Where a traced tensor becomes a Python value (`if t > 0`, `while`,
    `float(t)`, `int(t)`, `t.item()`), the graph *breaks*: one graph ends, the value is
    recorded, and a new graph starts. Later calls whose guards hold replay the graphs
    without running `fn`'s Python: at each break the value is read from the replayed
    result, and the graph that followed that value runs next; a value never seen
    captures again. Guards: each tensor argument's shape, dtype and requires_grad, the
    value of every other argument, and what `fn` read (module structure, attributes,
    closure variables, globals; as `tg.static.function`). A failed guard recompiles and
    `explain()` says why. Tensors from outside (parameters) are read at every call and
    get gradients as eagerly. Python side effects (print, appending to a list) run only
    when capturing. At most 8 captures per guard set; after that, calls run eagerly.

    Args:
        fn: a function (or `nn.Module`) of tensors returning Tensors, Python numbers or a
            tuple of them; use as `tg.static.compile(fn)` or `@tg.static.compile(...)`.
        fullgraph: a graph break raises `TracingError` naming its line (as
            `torch.compile(fullgraph=True)` and `torch.export` refuse a data-dependent
            `if`); use `tg.static.cond` to keep both branches in one graph.
        dynamic: None (default): after a recompile because a size changed, that
            dimension is dynamic: later sizes reuse the captured program. True: every
            dimension is dynamic from the start. False: every new shape recompiles.

    Returns:
        A `CompiledFn`: call it like `fn`; `.explain()`, `.graphs`, `.compiles`.

    Raises:
        TracingError: with `fullgraph=True`, at the first graph break.

    Example:
        >>> import tinygrad_edu as tg
        >>> @tg.static.compile
        ... def f(x):
        ...     s = x.sum()
        ...     # a graph break: Python reads the tensor's value
        ...     if s > 0:
        ...         return x * 2
        ...     return -x
        >>> f(tg.tensor([1.0, 2.0])), f(tg.tensor([3.0, 4.0])), f(tg.tensor([-1.0, -2.0]))
        (tensor([2., 4.]), tensor([6., 8.]), tensor([1., 2.]))
        >>> e = f.explain()
        >>> e.graph_count, e.break_count, e.ops_per_graph
        (3, 1, [('Sum', 'Compare'), ('Mul',), ('Neg',)])
        >>> e.breaks[0].outcomes, [c.call for c in e.compiles]
        ([True, False], [1, 3])
        >>> print(e.recompiles[0])
        the graph break at <doctest tinygrad_edu.static.compiler.compile[1]>, line 5: if s > 0: gave False; the captured paths took True there
    """
    if fn is None:
        return lambda f: CompiledFn(f, fullgraph, dynamic)
    return CompiledFn(fn, fullgraph, dynamic)
