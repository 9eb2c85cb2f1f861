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
import operator
import sys
import weakref
from collections.abc import Callable
from itertools import repeat as _repeat
from typing import Any, NamedTuple

import numpy as np

from . import source
from .errors import GraphFreedError, InplaceError, ShapeError, message
from .grad_mode import _thread

_node_ids = itertools.count(1)
_attrgetter = operator.attrgetter
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


def next_number(counter: Any) -> int:
    """The number `counter` (an `itertools.count`) gives next, without using it up."""
    # a count has no public "current value"; its repr is `count(17)`
    return int(repr(counter)[6:-1])


def next_node_number() -> int:
    """The creation number the next grad_fn node gets (`graph.watermark()` reads it)."""
    return next_number(_node_ids)


class saved_tensors_hooks:  # noqa: N801 - PyTorch's name for a context manager
    """Hooks on every value an op saves for backward: `pack_hook(tensor)` runs when the op
    saves it (in forward), `unpack_hook(packed)` when backward reads it back, and must
    return an equal tensor. PyTorch's `torch.autograd.graph.saved_tensors_hooks`; used to
    watch what a graph keeps alive, or to move it somewhere cheaper.

    Example:
        >>> import tinygrad_edu as tg
        >>> sizes = []
        >>> def pack(t):
        ...     sizes.append(tuple(t.shape))
        ...     return t
        >>> x = tg.ones(3, requires_grad=True)
        >>> with tg.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        ...     y = (x * x).exp()
        >>> sizes  # Mul saved both factors, Exp its result
        [(3,), (3,), (3,)]
    """

    def __init__(self, pack_hook: Callable[[Any], Any], unpack_hook: Callable[[Any], Any]):
        self.hooks = (pack_hook, unpack_hook)

    def __enter__(self) -> saved_tensors_hooks:
        _thread.state.saved_hooks.append(self.hooks)
        return self

    def __exit__(self, *exc: Any) -> None:
        _thread.state.saved_hooks.pop()


class SavedValue(NamedTuple):
    """One value an op saved for backward, as `Node.saved_values()` shows it."""

    value: Any  # the array (None for a saved None)
    tensor: Any  # the input Tensor it came from, or None (a constant, or computed in forward)
    is_output: bool  # the op's own output


class Node:
    """What `grad_fn` points at: a backward step with edges toward the inputs.

    The node view: the graph, debug and widget layers read a node only through the
    read-only attributes below (`op`, `name`, `next_functions`, `creation_number`,
    `module_path`, `input_meta`, `output_meta`, `saved_values()`, `freed`, `site`,
    `output()`, `mark`, `mark_text`), never through the private fields `apply` fills
    in; docs/architecture.md ("The node view") lists them.
    """

    _next: tuple = ()  # per input, the node its gradient goes to (None: it needs none)
    _code: Any = None  # where the learner built it: code object and bytecode offset
    _offset = 0
    _scope: tuple = ()  # module path while an nn.Module ran, e.g. ("net", "0")
    _id = 0  # creation counter (set by `apply` and `AccumulateGrad`)
    _inputs_meta: tuple = ()
    _out_meta: tuple | None = None
    _saved: tuple | None = ()
    _mark: str | None = None
    _mark_text = ""
    _pre_hooks: list | None = None  # hooks on a non-leaf's gradient (`register_hook`)
    _retained: Any = None  # weakref to the output that called `retain_grad()`
    # the op's display name, "Mul": a class attribute (set per subclass below), so the graph
    # walks over 100,000s of nodes read it as cheaply as a field; `name` derives from it
    op = "Node"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.op = cls.__name__

    @property
    def name(self) -> str:
        """The grad_fn's name, as PyTorch prints it (`MulBackward`)."""
        return f"{self.op}Backward"

    @property
    def next_functions(self) -> tuple:
        """`((node, 0), ...)`, one pair per input; `(None, 0)` where no grad is needed."""
        # NOTE: `_next` holds the nodes alone; a pair per input would be one more object
        # per edge for the cyclic garbage collector to scan while a long graph is built
        return tuple(zip(self._next, _repeat(0)))

    # NOTE: the attributes every graph walk reads from each of 100,000s of nodes are
    # properties made of `attrgetter`: read-only like the others, but with no Python call
    input_nodes = property(
        _attrgetter("_next"),
        doc="`(node, ...)`, one per input, None where no grad is needed: `next_functions` "
        "without PyTorch's pairs (a graph walk's cheaper read).",
    )
    creation_number = property(
        _attrgetter("_id"),
        doc="Nodes are numbered in the order they were made (one counter per process).",
    )
    module_path = property(
        _attrgetter("_scope"),
        doc='The `nn.Module` path that built this node, `("net", "0")`, or `()` outside any.',
    )

    @property
    def input_meta(self) -> tuple:
        """`((shape, dtype), ...)`, one per positional input (None, None for a non-array)."""
        return self._inputs_meta

    @property
    def output_meta(self) -> tuple | None:
        """`(shape, dtype)` of the output, kept even when the output tensor is gone."""
        return self._out_meta

    @property
    def freed(self) -> bool:
        """True once a backward without `retain_graph=True` freed the saved values."""
        return self._saved is None

    def saved_values(self) -> tuple[SavedValue, ...]:
        """What `save_for_backward` kept, for looking at (no version check; `()` if freed).

        Backward rules read `saved_tensors` instead, which checks in-place changes.
        """
        return tuple(
            SavedValue(arr, None if t is _OUTPUT else t, t is _OUTPUT)
            for arr, t, _vc, _version in self._saved or ()
        )

    @property
    def site(self) -> source.Site | None:
        """Where the learner's code built this node (cell or file, line, source)."""
        return None if self._code is None else source.resolve((self._code, self._offset))

    @property
    def mark(self) -> str | None:
        """A debug layer's mark ("anomaly", "breakpoint", "gradcheck"); drawings colour it."""
        return self._mark

    @property
    def mark_text(self) -> str:
        """A short explanation of `mark`."""
        return self._mark_text

    def set_mark(self, kind: str, text: str) -> None:
        """Mark this node for drawings (debug layers: anomaly mode, breakpoints, checks)."""
        self._mark, self._mark_text = kind, text

    def output(self) -> Any:
        """The tensor this node produced, if it is still alive (for drawing)."""
        return None

    def __repr__(self) -> str:
        return f"<{self.name}>"


class AccumulateGrad(Node):
    """The end of every path to a leaf: adds the arriving gradient into `leaf.grad`."""

    # the gradient on its way here that nothing else holds (set by the engine): the leaf may
    # keep it as its `.grad` without a copy
    _unshared: Any = None

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
        # PyTorch's `grad_fn._saved_self`: one read-only property per name in `saved_names`.
        # NOTE: properties, not a `__getattr__`: a class with `__getattr__` makes every
        # attribute read on its nodes slower, and backward reads several per node
        for i, name in enumerate(cls.__dict__.get("saved_names", ())):
            setattr(cls, f"_saved_{name}", property(_saved_getter(i)))
        # Only the package's own ops can be looked up by name (export refuses the rest).
        if cls.__module__.startswith("tinygrad_edu."):
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
        if self._unpack is not None:
            return self._unpacked()
        if not self._as_tensors:  # the usual case: plain arrays
            arrays = []
            for arr, _t, vc, version in saved:
                if vc is not None and vc[0] != version:
                    raise InplaceError(_modified_message(self, vc, version))
                arrays.append(arr)
            return tuple(arrays)
        out = []
        as_tensors = True
        for arr, tensor, vc, version in saved:
            if vc is not None and vc[0] != version:
                raise InplaceError(_modified_message(self, vc, version))
            if as_tensors and arr is not None:
                if tensor is _OUTPUT:  # rebuilt with this node as grad_fn: d(out)/d(in) flows
                    tensor = _Tensor._make(arr)
                    tensor._requires_grad, tensor._grad_fn = True, self._output_grad_fn()
                out.append(tensor if tensor is not None else _Tensor._make(arr))
            else:
                out.append(arr)
        return tuple(out)

    def _unpacked(self) -> tuple:
        """The saved values handed back by `saved_tensors_hooks`' unpack hook."""
        out = []
        for packed, *_ in self._saved:
            if packed is None:
                out.append(None)
                continue
            t = self._unpack(packed)
            if not isinstance(t, _Tensor):
                raise TypeError(
                    message(
                        f"{self.name}.backward",
                        f"the unpack hook of saved_tensors_hooks returned "
                        f"{type(t).__name__}, not a Tensor",
                        self.site,
                        "return the tensor the pack hook was given (or an equal one)",
                    )
                )
            out.append(t if self._as_tensors else t._data)
        return tuple(out)

    # PyTorch's names for what an op saved, in `save_for_backward` order: `y.grad_fn._saved_self`
    saved_names: tuple[str, ...] = ()

    def _saved_value(self, i: int) -> Any:
        """One saved value as PyTorch shows it: the input tensor itself, a new tensor for the
        output, a Python number for a number, None where backward did not need it."""
        self.saved_tensors  # noqa: B018 - raises GraphFreedError / InplaceError as backward would
        arr, tensor, _, _ = self._saved[i]
        if arr is None:
            return None
        if self._unpack is not None:
            return self._unpack(arr)
        if tensor is not None and tensor is not _OUTPUT:
            return tensor
        if tensor is None and np.ndim(arr) == 0 and type(self).saved_names[i] == "exponent":
            return arr.item()  # `x ** 2`: PyTorch keeps the exponent as a Python number
        return _Tensor._make(arr)

    _unpack: Callable | None = None  # set while saved_tensors_hooks packed this node's values
    # an in-place op on a view (`v.exp_()`) wrote its output into the view: a weak reference
    # to the view's node then, through which a saved output's gradient flows, as in PyTorch
    _written_into: Callable | None = None

    def _output_grad_fn(self) -> Function:
        """The node a saved output's gradient goes to under `create_graph`: this one, or
        after an in-place op on a view, the view's (so it passes the base's hooks)."""
        node = self._written_into() if self._written_into is not None else None
        return node if node is not None else self

    _to_save: tuple = ()
    _as_tensors = False
    replayable = True  # False for ops whose forward runs Python a static graph cannot replay
    _is_view = False  # True for ops whose result is a window on their first input
    _fresh_output = False  # True for ops known to return new storage (the package's own)
    # True for the package's own ops, whose backward returns new arrays, its `grad_output`
    # itself, or views of it (never an array kept elsewhere, as a learner's rule might)
    _own_rule = False

    def keep_saved_for_replay(self) -> None:
        """Store what forward saved as plain arrays, with none of `apply`'s bookkeeping
        (no version checks): for running this ctx's backward rule outside a graph (a
        static program's replay, debug's finite-difference check)."""
        self._saved = tuple((plain(x), None, None, None) for x in self._to_save)
        self._to_save = ()

    # --- the one place that builds the graph ------------------------------------------

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run the op on Tensors (or constants) and record a node if grad is needed."""
        # NOTE: every op a learner runs comes through here, so each Python step costs about as
        # much as a small numpy op: one pass over the inputs, and the rest of a node's
        # bookkeeping in `_record`, run only when there is a node
        ctx = _new(cls)
        here = _thread.state  # this thread's grad mode, observers, module path (one lookup)
        recording = here.enabled  # off inside `tg.no_grad()`
        # per input: its array, and if it wants a gradient the node that gradient goes to
        # (the node that made it, or a leaf's AccumulateGrad)
        arrays, needs, edges = [], [], []
        for a in args:
            if isinstance(a, _Tensor):
                if a._view is not None and a._view.version != a._vc[0]:
                    _views.refresh(a)  # a view whose base changed in place: recut its grad_fn
                arrays.append(a._data)
                if recording and a._requires_grad:
                    needs.append(True)
                    node = a._grad_fn
                    edges.append(node if node is not None else _accumulator(a))
                    continue
            else:  # a constant: a number or an array
                arrays.append(a)
            needs.append(False)
            edges.append(None)
        needs = tuple(needs)
        ctx.needs_input_grad = _shared[needs]
        try:
            data = cls.forward(ctx, *arrays, **kwargs)
        except (ValueError, TypeError, IndexError, np.exceptions.AxisError) as e:
            raise cls._explain(e, arrays, kwargs) from None
        # the result: `Tensor._make`, written out here (a call costs as much as a small op)
        out = _new(_Tensor)
        out._data = data if type(data) is np.ndarray else np.asarray(data)  # 0-d: a scalar
        out._requires_grad, out._grad_fn, out._counter = False, None, None
        out._id = next(_Tensor_ids)
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
        self, here: Any, args: tuple, arrays: list, edges: list, result: Any, out: Any
    ) -> None:
        """Make this ctx the node behind `out`: what backward and the graph views read."""
        self._next = tuple(edges)
        # the shape and dtype of each input and of the output: a gradient must have them
        # (the engine sums it back where forward broadcast), and drawings show them
        metas = []
        for x in arrays:
            metas.append(_shared[x.shape, x.dtype] if type(x) is np.ndarray else _meta_of_other(x))
        self._inputs_meta = tuple(metas)
        self._out_meta = _shared[out._data.shape, out._data.dtype]
        # where the learner built it: the first frame outside this package. Kept as code and
        # bytecode offset; turned into a line only when shown (`f_lineno` reads a line table)
        f = _getframe(2)
        while f is not None and _is_ours[f.f_code.co_filename]:
            f = f.f_back
        if f is not None:
            self._code, self._offset = f.f_code, f.f_lasti
        self._id = next(_node_ids)
        if here.scope:
            self._scope = tuple(here.scope)
        if self._to_save:
            self._saved = self._saved_entries(args, result, out)
        # a weak reference, so the graph does not keep every intermediate tensor alive
        self._out_ref = out if _config["retain_outputs"] else _weakref(out)
        out._requires_grad = True
        out._grad_fn = self
        if here.saved_hooks and self._saved:
            _pack(self, out)  # the output is whole now: the hook may look at it

    def _saved_entries(self, args: tuple, result: Any, out: Any) -> tuple:
        """What `save_for_backward` kept, each as `(array, tensor, version counter, version)`:
        backward refuses a value changed in place since (the counter moved on)."""
        entries = []
        for x in self._to_save:
            if x is None:
                entries.append(_NOTHING)
            elif x is result or x is out._data:  # the output: rebuilt lazily when needed
                entries.append((out._data, _OUTPUT, out._vc, 0))
            else:
                for a in args:
                    if isinstance(a, _Tensor) and a._data is x:  # an input tensor's array
                        vc = a._vc
                        entries.append((x, a, vc, vc[0]))
                        break
                else:  # a constant, a copy, or computed in forward: nothing can change it
                    entries.append(
                        x.entry(self._next) if type(x) is InputCopy else (x, None, None, None)
                    )
        self._to_save = ()
        return tuple(entries)

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


def _saved_getter(i: int) -> Callable[[Function], Any]:
    def saved(node: Function) -> Any:
        return node._saved_value(i)

    return saved


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


def _grad_node(a: Any) -> Node | None:
    """The node a gradient for `a` goes to (its grad_fn, or a leaf's AccumulateGrad); None
    if `a` needs none."""
    if not isinstance(a, _Tensor) or not a.requires_grad:
        return None
    return a._grad_fn if a._grad_fn is not None else _accumulator(a)


def _accumulator(leaf: Any) -> AccumulateGrad:
    """The node a gradient for a leaf goes to: made once per leaf, so every path to it
    meets there."""
    if leaf._accumulator is None:
        leaf._accumulator = AccumulateGrad(leaf)
    return leaf._accumulator


class _Shared(dict):
    """One copy of each small tuple that recurs: `(shape, dtype)` pairs and the
    `needs_input_grad` patterns (one line of a loop makes thousands of nodes), so a long
    graph holds one tuple per pattern, not one per node."""

    def __missing__(self, pair: tuple) -> tuple:
        if len(self) > 50_000:  # many shapes seen: start sharing afresh
            self.clear()
        self[pair] = pair
        return pair


_shared = _Shared()


def _meta_of_other(x: Any) -> tuple:
    """`(shape, dtype)` of an input that is not an ndarray (`(None, None)` for a number)."""
    return (getattr(x, "shape", None), getattr(x, "dtype", None))


def _own_storage(out: Any, cls: type, args: tuple, arrays: list, kwargs: dict) -> None:
    """A view op's result shares its input's storage (core/views.py); any other op's result
    gets storage of its own, or changing it in place would change an input."""
    src = args[0]
    if cls._is_view and isinstance(src, _Tensor) and _views.shares(out._data, src._data):
        _views.track(out, src, cls, kwargs)
    elif any(np.may_share_memory(out._data, x) for x in arrays if type(x) is np.ndarray):
        out._data = out._data.copy()


_OUTPUT = object()  # marks the op's own output among its saved values


def _pack(ctx: Function, out: Any) -> None:
    """`saved_tensors_hooks`: each saved value goes through the innermost pack hook, and
    backward gets it back through the matching unpack hook (no version check: the hooks
    own the value now, as in PyTorch)."""
    hooks = _thread.state.saved_hooks
    pack, unpack = hooks[-1]
    _thread.state.saved_hooks = []  # ops inside the pack hook save without it, as in PyTorch
    try:
        packed = []
        for arr, tensor, _, _ in ctx._saved:
            if arr is None:
                packed.append(_NOTHING)
                continue
            t = out if tensor is _OUTPUT else tensor if tensor is not None else _Tensor._make(arr)
            packed.append((pack(t), None, None, None))
    finally:
        _thread.state.saved_hooks = hooks
    ctx._saved, ctx._unpack = tuple(packed), unpack


class InputCopy:
    """A copy of input number `index` that forward saves in place of the input, as PyTorch's
    batched matmul saves a reshaped copy: a later in-place change of the input does not reach
    it, and under `create_graph` a gradient through it still goes to the input's graph."""

    __slots__ = ("array", "index")

    def __init__(self, array: np.ndarray, index: int) -> None:
        self.array, self.index = array, index

    def entry(self, edges: tuple) -> tuple:
        """The saved entry: the copy, as a tensor whose grad_fn is the input's node then."""
        t = _Tensor._make(self.array)
        node = edges[self.index]
        t._requires_grad, t._grad_fn = node is not None, node
        return (self.array, t, None, None)


def plain(saved: Any) -> Any:
    """A value given to `save_for_backward` as a plain array (an `InputCopy`'s copy), for
    running a backward rule outside a graph."""
    return saved.array if type(saved) is InputCopy else saved


class _InPackage(dict):
    """filename -> is it tinygrad_edu's own code? Asked once per file: a dict lookup costs a
    fifth of `str.startswith` (a method call), and the creation-site walk asks twice per op."""

    def __missing__(self, filename: str) -> bool:
        ours = self[filename] = filename.startswith(_PKG_DIR)
        return ours


_is_ours = _InPackage()
_NOTHING = (None, None, None, None)  # a saved None
_new = object.__new__
_getframe = sys._getframe
_weakref = weakref.ref
_PKG_DIR = source._PKG_DIR
_Tensor: Any = None  # set by tensor.py (Tensor imports this module)
_views: Any = None  # core/views.py, set by tensor.py (views imports this module)
_Tensor_ids: Any = None  # tensor.py's creation counter, shared so ids stay one sequence
