"""Function (one op: forward + backward), the graph node it leaves behind, and `apply`.

A `Function` subclass is one primitive op. Its `forward(ctx, *arrays)` computes with
numpy arrays; its `backward(ctx, grad_output)` returns one gradient per input. The same
backward rule runs on arrays (fast, the usual case) and on Tensors (when
`backward(create_graph=True)` wants gradients that are themselves differentiable), so
each op has exactly one derivative rule. `ctx` *is* the graph node (as in PyTorch): it
holds the saved tensors, `next_functions` (the edges toward the inputs), the creation
site and the module path.

`Function.apply` is the only place that does graph bookkeeping. Debug and static
layers watch ops through `add_observer` instead of patching anything here.
Core layer: numpy and the standard library only.
"""

from __future__ import annotations

import itertools
import sys
import threading
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from . import source
from .errors import GraphFreedError, InplaceError, ShapeError, message
from .grad_mode import _state

_node_ids = itertools.count(1)
OPS: dict[str, type[Function]] = {}  # op name -> class, for the static program and export


class _PerThread(threading.local):
    """What belongs to the thread that runs the ops, as PyTorch's modes do: a trace or an
    anomaly check in one thread never sees the ops of another."""

    def __init__(self) -> None:
        self.observers: list[Any] = []  # objects with on_op(node_or_None, cls, args, kwargs, out)
        self.scope: list[str] = []  # module path while an nn.Module runs, e.g. ["net", "0"]


_local = _PerThread()
_config = {"retain_outputs": False}  # keep outputs alive for drawing (set by the live view)


def add_observer(obs: Any) -> Callable[[], None]:
    """Register an op observer (debug, tracing) for this thread; returns its remover."""
    observers = _local.observers
    observers.append(obs)

    def remove() -> None:
        if obs in observers:
            observers.remove(obs)

    return remove


class Node:
    """What `grad_fn` points at: a backward step with edges toward the inputs."""

    _next: tuple = ()
    _site: tuple[str, int] | None = None
    _pre_hooks: list | None = None  # hooks on a non-leaf's gradient (`register_hook`)
    _retained: Any = None  # weakref to the output that called `retain_grad()`

    @property
    def name(self) -> str:
        return f"{type(self).__name__}Backward"

    @property
    def next_functions(self) -> tuple:
        """`((node, 0), ...)`, one pair per input; `(None, 0)` where no grad is needed."""
        return self._next

    @property
    def site(self) -> source.Site | None:
        """Where the learner's code built this node (cell or file, line, source)."""
        return source.resolve(self._site)

    def __repr__(self) -> str:
        return f"<{self.name}>"


class AccumulateGrad(Node):
    """The end of every path to a leaf: adds the arriving gradient into `leaf.grad`."""

    def __init__(self, variable: Any) -> None:
        self.variable = variable
        self._id = next(_node_ids)

    @property
    def name(self) -> str:
        return "AccumulateGrad"


class Function(Node):
    r"""Base class of every op, and of the ops learners write themselves.

    Rules: subclasses define `forward(ctx, *args, **kwargs)` on numpy arrays and
    `backward(ctx, grad_output)` returning one gradient per positional input (or
    `None` where the input needs none). Save what backward needs with
    `ctx.save_for_backward(...)`; read it back with `ctx.saved_tensors`. Call the op
    with `MyOp.apply(...)`, never `forward` directly. Gradients whose shape was
    broadcast in forward are summed back to the input's shape for you.

    Example:
        >>> import tinygrad_edu as tg
        >>> class Cube(tg.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_backward(x)
        ...         return x ** 3
        ...     @staticmethod
        ...     def backward(ctx, grad_output):
        ...         (x,) = ctx.saved_tensors
        ...         return grad_output * 3 * x ** 2   # d(x^3)/dx = 3x^2
        >>> x = tg.tensor([2.0], requires_grad=True)
        >>> Cube.apply(x).backward(tg.tensor([1.0]))
        >>> x.grad
        tensor([12.])
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Only the package's own ops can be looked up by name (export refuses the rest).
        if cls.__module__.startswith("tinygrad_edu."):
            OPS.setdefault(cls.__name__, cls)
            cls._fresh_output = not cls._is_view  # a learner's op is checked for aliasing

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> np.ndarray:
        raise NotImplementedError(
            message(
                type(ctx).__name__,
                "this Function has no forward",
                source.here(),
                "define `@staticmethod def forward(ctx, x): ...` returning the result",
            )
        )

    @staticmethod
    def backward(ctx: Any, grad_output: Any) -> Any:
        raise NotImplementedError(
            message(
                ctx.name,
                "this Function has no backward, so no gradient can pass it",
                ctx.site,
                "define `@staticmethod def backward(ctx, grad_output): ...` returning one "
                "gradient per input of forward",
            )
        )

    # --- saving for backward -------------------------------------------------------

    def save_for_backward(self, *arrays: Any) -> None:
        """Keep arrays (inputs, the output or others) for `backward`."""
        self._to_save = arrays

    @property
    def saved_tensors(self) -> tuple:
        """The saved values: arrays normally, Tensors under `create_graph=True`.

        Raises GraphFreedError after a backward without `retain_graph=True`, and
        InplaceError if a saved tensor was changed in place since it was saved.
        """
        saved = self._saved
        if saved is None:
            raise GraphFreedError(
                message(
                    f"{self.name}.backward",
                    "the values this op saved for backward were freed by an earlier "
                    "backward() through the same graph",
                    self.site,
                    "pass retain_graph=True to the first backward() if you need to go "
                    "through the graph twice, or rebuild the graph by running forward again",
                )
            )
        if not self._as_tensors:  # the usual case: plain arrays
            for _arr, _t, vc, version in saved:
                if vc is not None and vc[0] != version:
                    raise InplaceError(_modified_message(self, vc, version))
            return tuple([entry[0] for entry in saved])
        out = []
        as_tensors = True
        for arr, tensor, vc, version in saved:
            if vc is not None and vc[0] != version:
                raise InplaceError(_modified_message(self, vc, version))
            if as_tensors and arr is not None:
                if tensor is _OUTPUT:  # rebuilt with this node as grad_fn: d(out)/d(in) flows
                    tensor = _Tensor._make(arr)
                    tensor._requires_grad, tensor._grad_fn = True, self
                out.append(tensor if tensor is not None else _Tensor._make(arr))
            else:
                out.append(arr)
        return tuple(out)

    _saved: tuple | None = ()
    _to_save: tuple = ()
    _as_tensors = False
    _is_view = False  # True for ops whose result is a window on their first input
    _fresh_output = False  # True for ops known to return new storage (the package's own)

    def _release(self) -> None:
        self._saved = None

    # --- the one place that builds the graph ------------------------------------------

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run the op on Tensors (or constants) and record a node if grad is needed."""
        # NOTE: this is the hot path of every op; it is written out flat (no helper calls,
        # no generators) because each Python call here costs as much as a small numpy op
        ctx = _new(cls)
        arrays, needs, edges, meta = [], [], [], []
        any_grad = False
        for a in args:
            if isinstance(a, _Tensor):
                if a._view is not None and a._view.version != a._vc[0]:
                    _views.refresh(a)  # a view whose base changed in place: recut its grad_fn
                arr = a._data
                arrays.append(arr)
                m = (arr.shape, arr.dtype)
                meta.append(_intern(m, m))
                if a._requires_grad:
                    any_grad = True
                    needs.append(True)
                    node = a._grad_fn
                    if node is None:  # a leaf: its AccumulateGrad node, made once
                        node = a._accumulator
                        if node is None:
                            node = a._accumulator = AccumulateGrad(a)
                    edges.append((node, 0))
                    continue
            else:
                arrays.append(a)
                meta.append(
                    (a.shape, a.dtype)
                    if type(a) is np.ndarray
                    else (getattr(a, "shape", None), getattr(a, "dtype", None))
                )
            needs.append(False)
            edges.append(_NO_EDGE)
        if any_grad and _state.enabled:
            needs = tuple(needs)
            ctx.needs_input_grad = _intern(needs, needs)
        else:
            any_grad = False
            ctx.needs_input_grad = (False,) * len(args)
        try:
            data = cls.forward(ctx, *arrays, **kwargs)
        except (ValueError, TypeError, IndexError, np.exceptions.AxisError) as e:
            raise cls._explain(e, arrays, kwargs) from None
        raw = data  # numpy returns scalars for 0-d results; `save_for_backward` saw this one
        if type(data) is not np.ndarray:
            data = np.asarray(data)
        if data.dtype.kind != "f":
            any_grad = False  # integer and boolean results never require grad (as in PyTorch)
        out = _new(_Tensor)
        out._data = data
        out._grad = out._grad_fn = out.name = out._accumulator = out._hooks = out._view = None
        out._retains_grad = False
        out._vc = [0, None]
        out._id = next(_Tensor_ids)
        if data.base is not None or not cls._fresh_output:
            # a view op's result shares its input's storage (core/views.py); any other op's
            # result must have storage of its own, or changing it in place would change an input
            src = args[0]
            if cls._is_view and isinstance(src, _Tensor) and _views.shares(data, src._data):
                _views.track(out, src, cls, kwargs)
            elif any(np.may_share_memory(data, x) for x in arrays if type(x) is np.ndarray):
                out._data = data = data.copy()
        if any_grad:
            ctx._inputs_meta = tuple(meta)
            ctx._next = tuple(edges)
            # inline `source.capture`: the first frame outside the package built this node
            f = _getframe(1)
            while f is not None and f.f_code.co_filename.startswith(_PKG_DIR):
                f = f.f_back
            if f is not None:
                site = (f.f_code.co_filename, f.f_lineno)
                ctx._site = _intern(site, site)
            ctx._id = next(_node_ids)
            scope = _local.scope
            if scope:
                ctx._scope = tuple(scope)
            saved = ctx._to_save
            if saved:
                entries = []
                for x in saved:
                    if x is None:
                        entries.append(_NOTHING)
                    elif x is raw or x is data:  # the output: rebuilt lazily when needed
                        entries.append((data, _OUTPUT, out._vc, 0))
                    else:
                        for a in args:
                            if isinstance(a, _Tensor) and a._data is x:
                                vc = a._vc
                                entries.append((x, a, vc, vc[0]))
                                break
                        else:
                            entries.append((x, None, None, None))
                ctx._saved = tuple(entries)
                ctx._to_save = ()
            m = (data.shape, data.dtype)
            ctx._out_meta = _intern(m, m)
            ctx._out_ref = out if _config["retain_outputs"] else _weakref(out)
            out._requires_grad = True
            out._grad_fn = ctx
        else:
            out._requires_grad = False
            if ctx._to_save:
                ctx._to_save = ()
        observers = _local.observers
        if observers:
            for obs in tuple(observers):
                obs.on_op(ctx if any_grad else None, cls, args, kwargs, out)
        return out

    @classmethod
    def _explain(cls, err: Exception, arrays: list, kwargs: dict) -> Exception:
        """Turn a numpy failure inside forward into a learner-facing error."""
        shapes = [np.shape(a) for a in arrays]
        op = cls.__name__.lower()
        text = str(err)
        if "broadcast" in text and len(shapes) >= 2:
            # name the first pair of inputs that clash (where() has three)
            for i in range(len(shapes)):
                for j in range(i + 1, len(shapes)):
                    try:
                        np.broadcast_shapes(shapes[i], shapes[j])
                    except ValueError:
                        return ShapeError(broadcast_message(op, shapes[i], shapes[j]))
        shown = " and ".join(str(s) for s in shapes)
        hint = None
        n = len(shapes[0]) if shapes else 0
        if isinstance(err, np.exceptions.AxisError) and n:
            hint = f"a tensor with {n} axes has axes 0 .. {n - 1} (or -1 .. -{n})"
        what = f"failed on inputs of shape {shown}: {text}"
        return type(err)(message(op, what, source.here(), hint))

    def output(self) -> Any:
        """The tensor this node produced, if it is still alive (for drawing)."""
        ref = getattr(self, "_out_ref", None)
        if ref is None or isinstance(ref, _Tensor):
            return ref
        return ref()


def broadcast_message(op: str, a_shape: tuple, b_shape: tuple) -> str:
    """`op: cannot broadcast ...` naming the first axis (from the right) that clashes."""
    axis, sa, sb = -1, None, None
    for i in range(1, max(len(a_shape), len(b_shape)) + 1):
        da = a_shape[-i] if i <= len(a_shape) else 1
        db = b_shape[-i] if i <= len(b_shape) else 1
        if da != db and da != 1 and db != 1:
            axis, sa, sb = -i, da, db
            break
    return message(
        op,
        f"cannot broadcast shapes {a_shape!r} and {b_shape!r}: axis {axis} has sizes {sa} and {sb}",
        source.here(),
        "shapes broadcast when, compared from the right, each pair of sizes is equal or "
        "one of them is 1; reshape or transpose one operand",
    )


def _modified_message(node: Function, vc: list, version: int) -> str:
    where = source.resolve(vc[1])
    changed = f" at {where}" if where is not None else ""
    return message(
        f"{node.name}.backward",
        f"a tensor this op saved for backward was modified in place{changed} "
        f"(version {version} when saved, {vc[0]} now)",
        node.site,
        "use an out-of-place op (x = x + 1 rather than x += 1), or modify a .clone()",
    )


def _edge(a: Any) -> tuple:
    if not isinstance(a, _Tensor) or not a.requires_grad:
        return (None, 0)
    if a._grad_fn is not None:
        return (a._grad_fn, 0)
    acc = a._accumulator
    if acc is None:
        acc = a._accumulator = AccumulateGrad(a)
    return (acc, 0)


_OUTPUT = object()  # marks the op's own output among its saved values
_NOTHING = (None, None, None, None)  # a saved None
_NO_EDGE = (None, 0)  # an input that needs no gradient
_new = object.__new__
# NOTE: small immutable tuples that recur (shapes with dtypes, creation sites, needs_input_grad)
# are shared, so a long graph holds fewer objects for the cyclic GC to scan
_interned: dict = {}
_intern = _interned.setdefault
_getframe = sys._getframe
_weakref = weakref.ref
_PKG_DIR = source._PKG_DIR
_Tensor: Any = None  # set by tensor.py (Tensor imports this module)
_views: Any = None  # core/views.py, set by tensor.py (views imports this module)
_Tensor_ids: Any = None  # tensor.py's creation counter, shared so ids stay one sequence
