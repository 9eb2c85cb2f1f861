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

import gc
import sys
import weakref
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING, Any

import numpy as np

import tinygrad_edu.core.tensor as _tensor  # imported before Tensor exists: read `.Tensor` when used

from . import engine, saved, source
from .engine import Node, _ndarray, grad_node
from .errors import ShapeError, message
from .grad_mode import _thread

if TYPE_CHECKING:
    from .tensor import Tensor

OPS: dict[str, type[Function]] = {}  # op name -> class, for the static program and export


_config = {"retain_outputs": False}  # keep outputs alive for drawing (set by the live view)


def add_observer(obs: Any) -> Callable[[], None]:
    """Register an op observer (debug, tracing) for this thread; returns its remover."""
    observers = _thread.state.observers
    observers.append(obs)

    def remove() -> None:
        if obs in observers:
            observers.remove(obs)

    return remove


# --- small public accessors for the layers above (docs/architecture.md, "The node view") ---


def module_path_stack() -> list[str]:
    """This thread's module path: the live list `nn.Module.__call__` pushes its name onto
    while it runs (`["net", "0"]`); every node made meanwhile records it (`module_path`)."""
    return _thread.state.scope


def retain_outputs(keep: bool) -> bool:
    """Nodes keep a strong reference to their output (True: drawings show every value;
    the live view turns it on) or a weak one (False, the default: memory as in PyTorch).
    Returns the setting before, to restore it."""
    before = _config["retain_outputs"]
    _config["retain_outputs"] = bool(keep)
    return before


def next_node_number() -> int:
    """The creation number the next grad_fn node gets (`graph.watermark()` reads it)."""
    return engine.next_node_number()


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
        # PyTorch's `grad_fn._saved_self`: one read-only property per name in `saved_names`.
        # NOTE: properties, not a `__getattr__`: a class with `__getattr__` makes every
        # attribute read on its nodes slower, and backward reads several per node
        for i, name in enumerate(cls.__dict__.get("saved_names", ())):
            setattr(cls, f"_saved_{name}", property(_saved_getter(i)))
        # Only the package's own ops can be looked up by name (export refuses the rest).
        if cls.__module__.startswith("tinygrad_edu."):
            # NOTE: CPython keeps the fields of a class's instances in one key table shared
            # by them all, and lets it grow only while the class has made fewer than about
            # 30 instances; an instance with a field missing from it gets a dict of its own
            # (one more object for the cyclic collector per node, and slower reads). An op
            # first run 30 times under no_grad, where its ctx gets no node fields, would
            # leave every later node of it so: the fields `apply` fills in go into the
            # table now. (Not for a learner's op: making one runs its code, `__del__`.)
            primer = object.__new__(cls)
            for name in _NODE_FIELDS:
                setattr(primer, name, None)
            OPS.setdefault(cls.__name__, cls)
            cls._fresh_output = not cls._is_view  # a learner's op is checked for aliasing
            cls._own_rule = True

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

    saved_tensors = property(
        saved.unpack,
        doc="""The saved values: arrays normally, Tensors under `create_graph=True`.

        Raises GraphFreedError after a backward without `retain_graph=True`, and
        InplaceError if a saved tensor was changed in place since it was saved
        (core/saved.py).""",
    )

    # PyTorch's names for what an op saved, in `save_for_backward` order: `y.grad_fn._saved_self`
    saved_names: tuple[str, ...] = ()

    def _saved_value(self, i: int) -> Any:
        return saved.shown(self, i)

    _unpack: Callable[..., Any] | None = (
        None  # set while saved_tensors_hooks packed this node's values
    )
    # an in-place op on a view (`v.exp_()`) wrote its output into the view: a weak reference
    # to the view's node then, through which a saved output's gradient flows, as in PyTorch
    _written_into: Callable[..., Any] | None = None

    def _output_grad_fn(self) -> Function:
        """The node a saved output's gradient goes to under `create_graph`: this one, or
        after an in-place op on a view, the view's (so it passes the base's hooks)."""
        node = self._written_into() if self._written_into is not None else None
        return node if node is not None else self

    _to_save: tuple[Any, ...] = ()
    _as_tensors = False
    replayable = True  # False for ops whose forward runs Python a static graph cannot replay
    _is_view = False  # True for ops whose result is a window on their first input
    needs_input_grad: tuple[bool, ...] = ()  # per input: does it want a gradient? (set by apply)
    _fresh_output = False  # True for ops known to return new storage (the package's own)
    # True for the package's own ops, whose backward returns new arrays, its `grad_output`
    # itself, or views of it (never an array kept elsewhere, as a learner's rule might)
    _own_rule = False

    def keep_saved_for_replay(self) -> None:
        """Store what forward saved as plain arrays, with none of `apply`'s bookkeeping
        (no version checks): for running this ctx's backward rule outside a graph (a
        static program's replay, debug's finite-difference check)."""
        saved.for_replay(self)

    # --- the one place that builds the graph ------------------------------------------

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Tensor:
        """Run the op on Tensors (or constants) and record a node if grad is needed."""
        # NOTE: every op a learner runs comes through here, so each Python step costs about as
        # much as a small numpy op: one pass over the inputs, and the rest of a node's
        # bookkeeping in `_record`, run only when there is a node
        ctx = _new(cls)
        tensor_type = _tensor.Tensor  # one module lookup per op
        here = _thread.state  # this thread's grad mode, observers, module path (one lookup)
        recording = here.enabled  # off inside `tg.no_grad()`
        # per input: its array, and if it wants a gradient the node that gradient goes to
        # (the node that made it, or a leaf's AccumulateGrad)
        arrays: list[Any] = []
        needs: list[bool] = []
        edges: list[Node | None] = []
        for a in args:
            if isinstance(a, tensor_type):
                if a._view is not None and a._view.version != a._vc[0]:
                    _views.refresh(a)  # a view whose base changed in place: recut its grad_fn
                arrays.append(a._data)
                if recording and a._requires_grad:
                    needs.append(True)
                    node = a._grad_fn
                    if node is None:  # a leaf: its gradient ends in `.grad`
                        node = grad_node(a)
                        ctx._to_leaf = True  # backward may hand it a gradient without a copy
                    edges.append(node)
                    continue
            else:  # a constant: a number or an array
                arrays.append(a)
            needs.append(False)
            edges.append(None)
        ctx.needs_input_grad = _shared[tuple(needs)]
        try:
            data = cls.forward(ctx, *arrays, **kwargs)
        except (ValueError, TypeError, IndexError, np.exceptions.AxisError) as e:
            raise cls._explain(e, arrays, kwargs) from None
        # the result: `Tensor._make`, written out here (a call costs as much as a small op)
        out = _new(tensor_type)
        out._data = data if type(data) is _ndarray else np.asarray(data)  # 0-d: a scalar
        out._requires_grad, out._grad_fn, out._counter, out._view = False, None, None, None
        out._id = next(_tensor.tensor_numbers)
        if out._data.base is not None or not cls._fresh_output:
            _own_storage(out, cls, args, arrays, kwargs)
        if True in needs and out._data.dtype.kind == "f":  # int, bool results need no gradient
            ctx._record(here, args, arrays, edges, data, out)
        elif ctx._to_save:
            ctx._to_save = ()  # no node, so nothing to keep for a backward
        if here.observers:  # debug tools and static tracing watch ops here
            for obs in tuple(here.observers):
                obs.on_op(ctx if out._grad_fn is ctx else None, cls, args, kwargs, out)
        return out

    def _record(
        self,
        here: Any,
        args: tuple[Any, ...],
        arrays: list[Any],
        edges: list[Any],
        result: Any,
        out: Any,
    ) -> None:
        """Make this ctx the node behind `out`: what backward and the graph views read."""
        # per input, the node its gradient goes to, kept in fields of the node (`Node._next`)
        self._arity = n = len(edges)
        if n > 0:
            self._edge0 = edges[0]
        if n > 1:
            self._edge1 = edges[1]
        if n > 2:
            self._edges_more = tuple(edges[2:])
        # the shape and dtype of each input and of the output: a gradient must have them
        # (the engine sums it back where forward broadcast), and drawings show them
        metas = []
        for x in arrays:
            metas.append(_shared[x.shape, x.dtype] if type(x) is _ndarray else _meta_of_other(x))
        self._inputs_meta = tuple(metas)
        self._out_meta = _shared[out._data.shape, out._data.dtype]
        # where the learner built it: the first frame outside this package. Kept as code and
        # bytecode offset; turned into a line only when shown (`f_lineno` reads a line table)
        # (`f_code` read once: each frame attribute is a descriptor call, ~250 instructions)
        f: FrameType | None = _getframe(2)
        while f is not None:
            code = f.f_code
            if not _is_ours[code.co_filename]:
                self._code, self._offset = code, f.f_lasti
                break
            f = f.f_back
        self._id = next(engine.node_numbers)  # an attribute: next_node_number replaces it
        if here.scope:
            self._scope = tuple(here.scope)
        if self._to_save:
            self._saved = saved.entries(self, args, result, out)
        # the output's number, by which `output()` finds it while it lives: the graph keeps
        # no intermediate alive unless the live view asks it to
        self._out_number = out._id
        if _config["retain_outputs"]:
            self._out_ref = out
        out._requires_grad = True
        out._grad_fn = self
        if here.saved_hooks and self._saved:
            saved.pack(self, out)  # the output is whole now: the hook may look at it

    @classmethod
    def _explain(cls, err: Exception, arrays: list[Any], kwargs: dict[Any, Any]) -> Exception:
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

    _out_number = 0  # the output tensor's creation number (0: not made by `apply`)
    _out_ref: Tensor | None = None  # the output itself, while `retain_outputs` is on

    def output(self) -> Any:
        """The tensor this node produced, if it is still alive (for drawing)."""
        if self._out_ref is not None:
            return self._out_ref
        return _alive.find(self._out_number) if self._out_number else None


class _Alive:
    """Finds a tensor that is still alive by its creation number (`Function.output()`).

    NOTE: a node does not point at its output (nor does PyTorch's): a weak reference per
    node was one more object per op for Python's cyclic collector to walk, and in a
    100,000-op graph its walks took a third of the time (benchmarks/README.md, W3). Only
    drawings and debug tools ask, so the tensors are found then, among the objects the
    collector tracks (every Tensor is one), in one pass. Numbers only grow, so a number
    below `known` that the last pass did not find is a tensor that had died by then: a
    new pass is made only for a number from after it. One that died since is seen as
    dead through its weak reference.
    """

    def __init__(self) -> None:
        self.refs: dict[int, Callable[[], Any]] = {}  # creation number -> weak reference
        self.known = 0  # every tensor numbered below it was alive in `refs`, or dead

    def find(self, number: int) -> Tensor | None:
        if number >= self.known:
            tensor_type = _tensor.Tensor
            found = (o for o in gc.get_objects() if issubclass(type(o), tensor_type))
            # (one whose construction raised has no number, and is no node's output)
            self.refs = {o._id: _weakref(o) for o in found if hasattr(o, "_id")}
            # `number` was given out before this pass, and so was every one it found
            self.known = max(number, max(self.refs, default=0)) + 1
        ref = self.refs.get(number)
        return ref() if ref is not None else None


_alive = _Alive()


def _saved_getter(i: int) -> Callable[[Function], Any]:
    def saved(node: Function) -> Any:
        return node._saved_value(i)

    return saved


def broadcast_message(op: str, a_shape: tuple[Any, ...], b_shape: tuple[Any, ...]) -> str:
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


class _Shared(dict[Any, Any]):
    """One copy of each small tuple that recurs: `(shape, dtype)` pairs and the
    `needs_input_grad` patterns (one line of a loop makes thousands of nodes), so a long
    graph holds one tuple per pattern, not one per node."""

    def __missing__(self, pair: tuple[Any, ...]) -> tuple[Any, ...]:
        if len(self) > 50_000:  # many shapes seen: start sharing afresh
            self.clear()
        self[pair] = pair
        return pair


_shared = _Shared()


def _meta_of_other(x: Any) -> tuple[Any, ...]:
    """`(shape, dtype)` of an input that is not an ndarray (`(None, None)` for a number)."""
    return (getattr(x, "shape", None), getattr(x, "dtype", None))


def _own_storage(
    out: Any, cls: type[Function], args: tuple[Any, ...], arrays: list[Any], kwargs: dict[Any, Any]
) -> None:
    """A view op's result shares its input's storage (core/views.py); any other op's result
    gets storage of its own, or changing it in place would change an input."""
    src = args[0]
    if cls._is_view and isinstance(src, _tensor.Tensor) and _views.shares(out._data, src._data):
        _views.track(out, src, cls, kwargs)
    elif any(np.may_share_memory(out._data, x) for x in arrays if type(x) is np.ndarray):
        out._data = out._data.copy()


# the fields `apply` and `_record` fill in on a node (`Function.__init_subclass__`)
_NODE_FIELDS = (
    "needs_input_grad",
    "_to_save",
    "_to_leaf",
    "_arity",
    "_edge0",
    "_edge1",
    "_edges_more",
    "_inputs_meta",
    "_out_meta",
    "_code",
    "_offset",
    "_id",
    "_scope",
    "_saved",
    "_out_number",
    "_out_ref",
)
_is_ours = source.is_ours  # filename -> is it the package's own code (cached)
_new = object.__new__
_getframe = sys._getframe
_weakref = weakref.ref

# views.py subclasses Function, so it is imported once Function exists
from . import views as _views  # noqa: E402
