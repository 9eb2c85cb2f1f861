"""Tracing: run a Python function once and record the ops it performs as a `Program`.

The tracer is a core observer (`core.function.add_observer`): every `Function.apply`
reports its op, inputs and output, and the tracer writes one equation per op. Tensors
are known by identity (each recorded tensor is kept alive for the trace, so its id()
stays unique); a `detach()`ed alias (same array, same version counter) is the same value.
Never by the version counter alone: views share their base's counter, so `x.T` would
be mistaken for `x`. A tensor the trace has never seen (a captured weight, a tensor
made inside the function) becomes a constant.

When a traced tensor turns into a Python value (`if`, `while`, `int(...)`, `.item()`),
the trace can only record the path this one input took. What the tracer does then is
its *policy*, the one thing in which `trace`, `compile` and `export` differ:

- "freeze" (`trace`, `function`): the branch or number is frozen into the graph, with a
  `TracerWarning` naming the learner's line (`strict`: a `TracingError`);
- "break" (`compile`): a graph break: the graph so far ends and the value read is
  remembered; capture.py cuts the program there (`strict`, for `fullgraph=True`: a
  `TracingError`);
- "refuse" (`export`): a `TracingError` naming the line, pointing to `cond`.

Static layer: imports the core, numpy and the standard library only.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core import source
from ..core.errors import TracingError, message
from ..core.function import Function, add_observer
from ..core.grad_mode import is_grad_enabled
from ..core.ops.movement import Detach
from ..core.tensor import Tensor
from .ir import IdSource, Program, Var

if TYPE_CHECKING:  # program.py imports this module; the name is for annotations only
    from .program import Graph

# what the Python got from a tensor's array at a break, for each kind the core reports
_CONVERT = {
    "bool": lambda a: bool(a.item()),
    "int": lambda a: int(a.item()),
    "float": lambda a: float(a.item()),
    "item": lambda a: a.item(),
    "tolist": lambda a: a.tolist(),
    "numpy": lambda a: np.array(a),  # a copy: the outcome must not change with the tensor
    "data": lambda a: np.array(a),
    "index": lambda a: np.array(a),  # a tensor used as an index: its values pick elements
}
# any other kind names an op that computed its result from the values in numpy and
# recorded no node (argmax, sort, nonzero, ...): the outcome is the values it read


def computed_outside(kind: str) -> bool:
    """True for a read by an op that records no node (argmax, sort, ...), not by Python."""
    return kind not in _CONVERT


@dataclass
class Break:
    """A tensor read as a Python value while capturing: where, which value, what came out."""

    var: int  # the tensor's variable
    kind: str  # "bool" (an if / while), "int", "float" or "item"
    outcome: Any  # what the Python got (True, 3, 0.25, ...)
    site: Any  # source.Site of the learner's line, or None

    def reason(self) -> str:
        if self.kind == "bool":
            return "data-dependent control flow: bool() of a traced tensor (an `if` or `while`)"
        if self.kind == "index":
            return "a traced tensor used as an index: its values choose the elements"
        if self.kind in ("numpy", "tolist"):
            return f"{self.kind}() of a traced tensor: its values left the graph for Python"
        if computed_outside(self.kind):
            return f"{self.kind}() of a traced tensor: numpy computed it outside the graph"
        return f"{self.kind}() of a traced tensor: a Python number was read from it"


def read_outcome(value: Any, kind: str) -> Any:
    """What the learner's Python gets from this tensor value, as at the break."""
    arr = np.asarray(value)
    return _CONVERT[kind](arr) if kind in _CONVERT else np.array(arr)


class TracerWarning(UserWarning):
    """A traced tensor became a Python value: the trace froze that branch or number."""


class _Tracing(threading.local):
    """Tracing is per thread: a trace records only the ops of the thread that runs it."""

    def __init__(self) -> None:
        self.active: list[Tracer] = []  # the innermost tracer records; outer ones supply captures
        self.remove_observer: Any = None


_tracing = _Tracing()


class _Observer:
    """The one core observer; it forwards to the innermost active tracer."""

    def on_op(self, node: Any, cls: type[Function], args: tuple, kwargs: dict, out: Any) -> None:
        active = _tracing.active
        if active and not active[-1].paused:
            active[-1].record(cls, args, kwargs, out)

    def on_concrete(self, tensor: Any, kind: str) -> None:
        active = _tracing.active
        if active and not active[-1].paused:
            active[-1].concrete(tensor, kind)

    def on_backward(self, node: Any, grad_output: Any, grads_in: Any) -> None:
        active = _tracing.active
        if active and not active[-1].paused:
            active[-1].eager_backward()


_OBSERVER = _Observer()


def current() -> Tracer | None:
    """The innermost active tracer, or None outside any trace."""
    active = _tracing.active
    return active[-1] if active else None


def _site() -> str | None:
    """The learner's line, as text for an equation (the nearest frame outside the package)."""
    site = source.resolve(source.capture(2))
    return str(site) if site is not None else None


def _frozen_read(t: Tensor, kind: str) -> tuple[str, str]:
    """What a Python read of a traced tensor freezes into the graph, and the fix."""
    if kind == "bool":
        what = (
            f"bool() of a traced tensor (value {bool(np.asarray(t).item())}) decided an `if` or "
            "`while` here, so the branch it chose is frozen into the static graph: "
            "replay takes the same branch for every input"
        )
        hint = (
            "use tg.static.cond(pred, true_fn, false_fn, *operands) (or tg.where for "
            "elementwise choices) so the graph keeps both branches"
        )
    elif kind == "index":
        what = (
            f"a traced tensor (shape {t.shape!r}) used as an index: its values are "
            "frozen into the static graph, so replay picks the same elements for "
            "every input"
        )
        hint = "index with Python ints or slices, or choose with tg.where or a mask multiplied in"
    elif kind in ("numpy", "tolist", "data"):
        read = ".data" if kind == "data" else f"{kind}()"
        what = (
            f"{read} of a traced tensor (shape {t.shape!r}) copied its values out of "
            "the graph: whatever Python computes from them is frozen into the static "
            "graph as constants"
        )
        hint = "keep computing with tensor ops inside the trace"
    elif computed_outside(kind):
        what = (
            f"{kind}() of a traced tensor (shape {t.shape!r}) is computed by numpy, outside "
            "the graph: its result is frozen into the static graph as a constant, the same "
            "for every input"
        )
        hint = (
            f"keep {kind}() out of the traced function, or use tg.static.compile, which "
            "breaks the graph there and runs it in Python"
        )
    else:
        what = (
            f"{kind}() of a traced tensor turned it into the Python number "
            f"{np.asarray(t).item()!r}, which is frozen into the static graph as a constant"
        )
        hint = "keep the value as a tensor (no .item(), int() or float()) inside the trace"
    return what, hint


def _refused_read(kind: str) -> tuple[str, str]:
    """Why `export` refuses a Python read of a value that depends on the input, and the fix
    (torch.export's words: no one graph holds the branch for every input)."""
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
        read = {"data": ".data", "numpy": "numpy()", "tolist": "tolist()"}.get(kind, f"{kind}()")
        what = (
            f"could not guard on data-dependent expression: {read} of a traced tensor "
            "turns a value that depends on the input into Python data here"
        )
        hint = (
            "keep it a tensor and compute with tensor ops; for a choice, use "
            "tg.static.cond (torch.cond) or tg.where"
        )
    return what, hint


def fullgraph_message(brk: Break) -> str:
    if brk.kind == "bool":
        what = (
            f"fullgraph=True, but bool() of a traced tensor (value {brk.outcome}) decides "
            "Python control flow here: a graph break"
        )
        hint = (
            "keep both branches in the graph with tg.static.cond(pred, true_fn, false_fn, "
            "*operands) (tg.where for elementwise choices), or drop fullgraph=True to "
            "allow graph breaks"
        )
    elif brk.kind == "index":
        what = (
            "fullgraph=True, but a traced tensor is used as an index here: its values choose "
            "the elements (and the result's shape), a graph break"
        )
        hint = (
            "index with Python ints or slices, choose with tg.where, or drop fullgraph=True "
            "to allow graph breaks"
        )
    elif brk.kind in ("numpy", "tolist") or computed_outside(brk.kind):
        what = (
            f"fullgraph=True, but {brk.kind}() of a traced tensor takes its values out of the "
            "graph here: a graph break"
        )
        hint = "keep computing with tensor ops, or drop fullgraph=True to allow graph breaks"
    else:
        what = (
            f"fullgraph=True, but {brk.kind}() of a traced tensor turns it into the Python "
            f"number {brk.outcome!r} here: a graph break"
        )
        hint = (
            "keep the value a tensor (no .item(), int() or float()) and compute with it, "
            "or drop fullgraph=True to allow graph breaks"
        )
    return message("tg.static.compile", what, brk.site, hint)


def _warn(text: str, raw: tuple[str, int] | None) -> None:
    """Issue a TracerWarning located at the learner's line.

    In a notebook the location reads `cell [4]:2` rather than IPython's temporary file
    (`/tmp/ipykernel_<pid>/<hash>.py` changes every run, which also breaks nbval); in a
    file it is the file and line, as Python prints any warning.
    """
    if raw is None:
        warnings.warn(text, TracerWarning, stacklevel=3)
        return
    site = source.resolve(raw)
    filename = f"cell [{site.cell}]" if site is not None and site.cell is not None else raw[0]
    warnings.warn_explicit(text, TracerWarning, filename, raw[1])


POLICIES = ("freeze", "break", "refuse")  # what a Python read of a traced value does


class Tracer:
    """Records one program; a child tracer (a branch or loop body) can capture outer values.

    `policy` says what a Python read of a traced tensor does (see the module's text), and
    `who` names the tracer in its messages ("trace", "tg.static.compile", ...).
    """

    def __init__(
        self,
        parent: Tracer | None = None,
        strict: bool = False,
        new_id: IdSource | None = None,
        policy: str = "freeze",
        who: str = "trace",
    ) -> None:
        self.parent = parent
        if parent is not None:  # a branch or loop body is one op of its parent's graph:
            # it freezes where its parent would break (a graph cannot break inside an op)
            broke = parent.policy == "break"
            policy = "freeze" if broke else parent.policy
            strict, who = (False, "trace") if broke else (parent.strict, parent.who)
        if policy not in POLICIES:
            raise ValueError(f"Tracer: policy {policy!r} is not one of {POLICIES}")
        self.policy: str = policy
        self.strict: bool = strict
        self.who: str = who
        self.new_id: IdSource = new_id or (parent.new_id if parent is not None else IdSource())
        self.graph: Graph | None = None  # the tg.static.Graph this tracer builds, if any
        self.program = Program([], [], {}, [], {})
        self.map: dict[int, tuple] = {}  # id(tensor) -> (var id, version when recorded)
        self.aliases: dict[tuple, int] = {}  # (id(data), id(_vc)) -> id(tensor), for detach()
        self.values: dict[int, np.ndarray] = {}  # var id -> value seen during the trace
        self.depends: set[int] = set()  # vars that depend on this program's inputs
        self.captures: list[int] = []  # parent var ids, one per captured input here
        self.keep: list = []  # tensors kept alive so their ids stay unique during the trace
        self.paused = False
        self.warned_backward = False
        # tg.static.function: `lift(tensor)` gives a name for a captured tensor that must
        # be read at call time (an input of the program), or None to freeze it as a constant
        self.lift: Any = None
        self.lifted: list[Tensor] = []
        self.frozen: list[tuple] = []  # (captured tensor, the value a Python read froze)
        # policy "break": the breaks, and what a replayed graph could not do
        self.breaks: list[tuple[int, Break]] = []  # (number of eqns before it, break)
        self.untracked: list[str] = []  # Python reads of tensors no recorded op made
        self.grad_vars: set = set()  # vars whose tensor required grad when recorded
        self.grad_stop: str | None = None  # where gradients stopped inside (no_grad, detach)

    # --- activation ------------------------------------------------------------------

    def __enter__(self) -> Tracer:
        if not _tracing.active:
            _tracing.remove_observer = add_observer(_OBSERVER)
        _tracing.active.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _tracing.active.remove(self)
        if not _tracing.active and _tracing.remove_observer is not None:
            _tracing.remove_observer()
            _tracing.remove_observer = None

    # --- variables -------------------------------------------------------------------

    def _new_var(self, shape: tuple, dtype: Any, name: str | None = None) -> int:
        vid = self.new_id()
        self.program.vars[vid] = Var(vid, tuple(shape), np.dtype(dtype), name)
        return vid

    def _bind(self, t: Tensor, vid: int) -> None:
        self.map[id(t)] = (vid, t._version)
        # Only the first tensor on an array becomes the alias target: a detach() of it
        # shares the same numbers (memory, shape, strides) and the counter, a view shares
        # only the counter
        self.aliases.setdefault(_alias_key(t), id(t))
        self.values[vid] = np.asarray(t)
        self.keep.append(t)
        if self.policy == "break" and t.requires_grad:
            self.grad_vars.add(vid)

    def _entry(self, t: Tensor) -> tuple | None:
        entry = self.map.get(id(t))
        if entry is None:
            alias = self.aliases.get(_alias_key(t))
            entry = self.map.get(alias) if alias is not None else None
        return entry

    def add_input(self, t: Tensor, name: str) -> int:
        vid = self._new_var(t.shape, t.dtype, name)
        self.program.inputs.append(vid)
        self.depends.add(vid)
        self._bind(t, vid)
        return vid

    def find(self, t: Tensor) -> int | None:
        """The var of a tensor this trace (or an enclosing one, as a capture) knows."""
        entry = self._entry(t)
        if entry is not None:
            vid, version = entry
            if t._version != version:
                raise TracingError(
                    message(
                        "trace",
                        "a traced tensor was changed in place; a static graph records "
                        "values, not updates to them",
                        source.here(),
                        "write the update out of place (w = w - lr * g) and return the new value",
                    )
                )
            return vid
        if self.parent is None:
            return None
        outer = self.parent.find(t)
        if outer is None:
            return None
        vid = self._new_var(t.shape, t.dtype, self.parent.program.vars[outer].name)
        self.program.inputs.append(vid)
        self.captures.append(outer)
        self.depends.add(vid)
        self._bind(t, vid)
        return vid

    def lookup(self, x: Any) -> int:
        """The var for an op argument, making a constant for anything unknown."""
        if isinstance(x, Tensor):
            vid = self.find(x)
            if vid is not None:
                return vid
            if self._lift_at_root(x):
                # a branch or loop body captures it from the root, which has just bound it
                vid = self.find(x)
                assert vid is not None
                return vid
            vid = self._new_var(x.shape, x.dtype, x.name)
            self.program.consts[vid] = np.array(x)  # a snapshot: frozen into the graph
            self._bind(x, vid)
            return vid
        arr = np.asarray(x)
        vid = self._new_var(arr.shape, arr.dtype)
        self.program.consts[vid] = arr
        self.values[vid] = arr
        return vid

    def _root(self) -> Tracer:
        root = self
        while root.parent is not None:
            root = root.parent
        return root

    def _lift_at_root(self, t: Tensor) -> bool:
        """Make captured `t` an input of the root program if its `lift` rule says so."""
        root = self._root()
        name = root.lift(t) if root.lift is not None else None
        if name is None:
            return False
        root.add_input(t, name)
        root.lifted.append(t)
        return True

    # --- observer callbacks ----------------------------------------------------------

    def record(self, cls: type[Function], args: tuple, kwargs: dict, out: Tensor) -> None:
        if not cls.replayable:
            raise TracingError(
                message(
                    "trace",
                    f"{cls.__name__} runs Python code (the function it wraps) that a static "
                    "graph cannot replay",
                    source.resolve(source.capture(2)),
                    f"trace the function without {cls.__name__.lower()}(...), or run it eagerly",
                )
            )
        ins = tuple(self.lookup(a) for a in args)
        vid = self._new_var(out.shape, out.dtype)
        from .ir import Eqn

        self.program.eqns.append(Eqn(cls.__name__, ins, (vid,), dict(kwargs), _site(), cls))
        if any(i in self.depends for i in ins):
            self.depends.add(vid)
        if not is_grad_enabled() and cls is not Detach and any(isinstance(a, Tensor) for a in args):
            # under no_grad eager records no node, so no gradient reaches the inputs:
            # the static graph cuts here too
            cut = self._new_var(out.shape, out.dtype)
            self.program.eqns.append(Eqn("Detach", (vid,), (cut,), {}, _site(), Detach))
            if vid in self.depends:
                self.depends.add(cut)
            vid = cut
        self._bind(out, vid)
        if self.policy == "break" and self.grad_stop is None:
            self._note_grad_stop(args, out)

    def _note_grad_stop(self, args: tuple, out: Tensor) -> None:
        """A gradient that stops inside the function (x.detach(), ops under no_grad) has no
        op in the graph: a replayed graph would send gradients through. Remember where."""
        for a in args:
            if not isinstance(a, Tensor) or self.find(a) not in self.grad_vars:
                continue
            if not a.requires_grad or (out.dtype.kind == "f" and not out.requires_grad):
                self.grad_stop = str(source.resolve(source.capture(2)))
                return

    def depends_on_input(self, t: Tensor) -> bool:
        entry = self._entry(t)
        if entry is not None:
            return entry[0] in self.depends
        return self.parent is not None and self.parent.depends_on_input(t)

    def concrete(self, t: Tensor, kind: str) -> None:
        """Python read traced `t` as a value (`kind`: bool, float, item, index...)."""
        if self.policy == "break":
            self._break(t, kind)
        elif self.policy == "refuse":
            if self.depends_on_input(t):  # a constant (a weight read as a number) is fine
                what, hint = _refused_read(kind)
                site = source.resolve(source.capture(2))
                raise TracingError(message(self.who, what, site, hint))
        else:
            self._freeze(t, kind)

    def _freeze(self, t: Tensor, kind: str) -> None:
        root = self._root()
        if (self.find(t) is None and self._lift_at_root(t)) or any(x is t for x in root.lifted):
            # a captured tensor read as a Python value: tg.static.function re-checks
            # that value at every call and retraces when it changed, so nothing is stale
            root.frozen.append((t, np.array(t)))
            return
        if not self.depends_on_input(t):
            return  # a constant: its value is the same for every input
        raw = source.capture(2)
        site = source.resolve(raw)
        what, hint = _frozen_read(t, kind)
        if self.strict:
            raise TracingError(message("trace", what, site, hint))
        text = message("trace", what, site, f"{hint}; trace(..., strict=True) makes this an error")
        _warn(text, raw)

    def _break(self, t: Tensor, kind: str) -> None:
        vid = self.find(t)
        if vid is None and self._lift_at_root(t):  # a parameter read as a number
            vid = self.find(t)
        site = source.resolve(source.capture(2))
        if vid is None and kind == "index":
            return  # an index made inside the function (tg.tensor([0, 2])): a constant
        if vid is None:
            # NOTE: made inside the function by no recorded op: a constant (tg.ones(3)), or
            # argmax / all / any / & / | / ~ of a traced value, which no tracer sees. We
            # cannot tell which, so the caller runs this function eagerly (sound, slower).
            self.untracked.append(f"{kind}() at {site}")
            return
        if vid not in self.depends:
            return  # computed from constants only: its value never changes
        brk = Break(vid, kind, read_outcome(t, kind), site)
        if self.strict:
            raise TracingError(fullgraph_message(brk))
        self.breaks.append((len(self.program.eqns), brk))

    def eager_backward(self) -> None:
        """backward() ran inside the trace: its gradients would be constants of the graph."""
        if self.policy == "break":
            raise TracingError(
                message(
                    self.who,
                    "backward() or tg.grad() ran inside a compiled function: a replay runs "
                    "the captured graphs, not your Python, so it would not run again",
                    source.here(),
                    "call backward() on the compiled function's result, outside it",
                )
            )
        if self.policy == "refuse":
            raise TracingError(
                message(
                    self.who,
                    "backward() or tg.grad() ran inside the exported function",
                    source.here(),
                    "export the forward pass only; call backward() on its result",
                )
            )
        if self.warned_backward:
            return
        self.warned_backward = True
        raw = source.capture(2)
        text = message(
            "trace",
            "backward()/tg.grad() ran the eager engine inside a trace: the gradients "
            "it computed are frozen into the static graph as constants",
            source.resolve(raw),
            "use tg.static.grad(loss, inputs) inside traced code (it records the backward "
            "program), or trace the loss and call .grad() on the StaticGraph",
        )
        if self.strict:
            raise TracingError(text)
        _warn(text, raw)

    def output_vars(self, outs: list) -> list:
        vids = []
        for o in outs:
            if not isinstance(o, Tensor):
                raise TracingError(
                    message(
                        "trace",
                        f"the traced function returned a {type(o).__name__}; a static "
                        "graph's outputs must be Tensors",
                        None,
                        "return a Tensor or a tuple of Tensors",
                    )
                )
            vids.append(self.lookup(o))
        return vids


def flatten_outputs(result: Any) -> tuple[list, str]:
    """`(tensors, structure)`: structure is "single" for one Tensor, "tuple" otherwise."""
    if isinstance(result, (tuple, list)):
        return list(result), "tuple"
    return [result], "single"


def input_names(fn: Any, n: int, examples: tuple) -> list[str]:
    """Input names: what the learner wrote for each input.

    Rules, first match wins: a placeholder's declared name; the Python parameter name of
    `fn` for that position (`forward`'s for an `nn.Module`), so `def loss(x, w1, b1)`
    traced with `net.l1.weight` as `w1` has an input `w1` whatever the parameter's own
    name (`l1.weight`); for `*args` positions, the tensor's own name (a module's
    parameters carry their qualified `named_parameters` names); else `x0`, `x1`, ...
    Repeated names get the position appended (`w_2`).
    """
    import inspect

    target = fn
    if not inspect.isfunction(fn) and not inspect.ismethod(fn):
        target = getattr(fn, "forward", fn)  # a Module: its own forward's parameters
    params = positional_params(target)
    names, used = [], set()
    for i in range(n):
        ex = examples[i]
        own = getattr(ex, "name", None) if isinstance(ex, Tensor) else None
        if is_placeholder(ex) and own:
            name = own
        elif i < len(params):
            name = params[i]
        else:
            name = own or f"x{i}"
        if name in used:
            name = f"{name}_{i}"
        used.add(name)
        names.append(name)
    return names


def positional_params(fn: Any) -> list[str]:
    """The names of `fn`'s positional parameters ([] for a callable without a signature)."""
    import inspect

    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def outside_lifter(labels: dict) -> Callable[[Tensor], str | None]:
    """`lift` for a tracer: a tensor made before this call (a parameter, a closure's
    tensor) is read at every call, under its label or name; one made later is the
    function's own constant (None)."""
    first_new = Tensor.wrap(np.zeros(0)).creation_number

    def lift(t: Tensor) -> str | None:
        if id(t) in labels or t.creation_number < first_new:
            return labels.get(id(t)) or t.name or "captured"
        return None

    return lift


def is_placeholder(x: Any) -> bool:
    return type(x).__name__ == "Placeholder" and isinstance(x, Tensor)


def _alias_key(t: Tensor) -> tuple:
    """The same numbers under the same counter: a tensor and its detach() (a numpy view of
    its array, a new object on the same memory) give the same key."""
    arr = np.asarray(t)
    return (arr.__array_interface__["data"][0], arr.shape, arr.strides, arr.dtype, id(t._vc))
