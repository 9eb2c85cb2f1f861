"""Tensor: a numpy array plus what autograd needs (requires_grad, grad, grad_fn, name).

Operators and methods are one-liners over the ops in `core/ops/`; the graph is built
by `Function.apply` alone. Python floats become float64 (`tg.set_default_dtype` can make
it float32), Python ints int64 and bools bool, as in PyTorch; numpy arrays keep their
dtype, and a Python scalar in an op takes the tensor's dtype (no silent float32 ->
float64 promotion). Core layer: numpy and the standard library only.
"""

from __future__ import annotations

import itertools
import numbers
import reprlib
import warnings
import weakref
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from . import function as _function
from . import printing, source, torch_api, views
from .dtypes import _default as _default_dtype
from .engine import _ndarray
from .errors import BackwardError, DataError, ShapeError, message
from .grad_mode import _thread
from .views import _var

if TYPE_CHECKING:
    from .engine import AccumulateGrad, Node

tensor_numbers = itertools.count(1)  # every tensor's creation number, in the order made


def next_tensor_number() -> int:
    """The creation number the next Tensor gets, without using it up (`graph.watermark()`)."""
    global tensor_numbers
    n = next(tensor_numbers)
    tensor_numbers = itertools.count(n)  # put back: a count cannot be read without taking
    return n


def _to_array(data: Any, dtype: Any, op: str) -> np.ndarray:
    """Convert user data to an ndarray, or raise a DataError that names the problem."""
    if dtype is not None:
        dtype = _dtype(dtype, op)
    if isinstance(data, Tensor):
        return np.array(data._data, dtype=dtype)  # a copy: tg.tensor(t) never aliases t
    if isinstance(data, (np.ndarray, np.generic)):  # a numpy number keeps its dtype too
        # a copy, as torch.tensor makes: changing `data` later must not change the graph's
        # saved values (tg.from_numpy shares on purpose)
        arr = np.array(data, dtype=dtype)
    else:
        arr = _from_python(data, dtype, op)
    if arr.dtype.kind not in "fiub":
        raise DataError(
            message(
                op,
                f"cannot make a tensor from {_peek(data)}: it holds "
                f"{_KINDS.get(arr.dtype.kind, arr.dtype)}, not real numbers",
                source.here(),
                "pass numbers: a number, a (nested) list of numbers or a numpy array",
            )
        )
    return arr


def _from_python(data: Any, dtype: Any, op: str) -> np.ndarray:
    """Numbers or (nested) lists as an array, with PyTorch's default dtypes."""
    if _holds_tensors(data):
        raise DataError(
            message(
                op,
                "got a list of Tensors",
                source.here(),
                "use tg.stack([...]) to join tensors (it keeps the graph)",
            )
        )
    try:
        # no dtype yet: numpy would turn "1" into 1.0 with float64 given, and we refuse text
        arr = np.array(data)
        if dtype is not None and arr.dtype.kind in "fiub":
            return arr.astype(dtype, copy=False)
        if arr.dtype.kind == "f":
            return arr.astype(_default_dtype[0], copy=False)  # float64 unless set otherwise
        if arr.dtype.kind in "iu":
            return arr.astype(np.int64, copy=False)  # Python ints: int64, as in PyTorch
        return arr
    except (ValueError, TypeError) as e:
        raise DataError(_bad_data(op, data, e)) from None
    except RecursionError:
        raise DataError(
            message(
                op,
                f"the data is nested too deeply to read ({_peek(data)}): a tensor has at "
                "most 64 axes",
                source.here(),
                "build the array with numpy first (np.array) or reshape a flat list",
            )
        ) from None


def _dtype(dtype: Any, op: str) -> np.dtype[Any]:
    """`dtype` as a numpy dtype of real numbers or booleans, or a DataError."""
    try:
        dt: np.dtype[Any] = np.dtype(dtype)
    except TypeError:
        raise DataError(
            message(
                op,
                f"unknown dtype {dtype!r}",
                source.here(),
                "use a numpy dtype such as 'float64', 'float32', 'int64' or 'bool'",
            )
        ) from None
    if dt.kind not in "fiub":
        raise DataError(
            message(
                op,
                f"a tensor holds real numbers or booleans, not "
                f"{_KINDS.get(dt.kind, dt)} (dtype {dt})",
                source.here(),
                "use a numpy dtype such as 'float64', 'float32', 'int64' or 'bool'",
            )
        )
    return dt


_KINDS = {
    "U": "text",
    "S": "bytes",
    "O": "Python objects",
    "c": "complex numbers",
    "M": "dates",
    "m": "time spans",
    "V": "records",
}


def _holds_tensors(data: Any) -> bool:
    return isinstance(data, (list, tuple)) and any(isinstance(d, Tensor) for d in data)


def _peek(data: Any) -> str:
    text = reprlib.repr(data)  # bounded depth and length, even for 5,000 nested lists
    return text if len(text) <= 40 else text[:37] + "..."


def _bad_data(op: str, data: Any, err: Exception) -> str:
    if "maximum number of dimension" in str(err):
        return message(
            op,
            f"the data is nested too deeply to read ({_peek(data)}): a tensor has at most 64 axes",
            source.here(),
            "build the array with numpy first (np.array) or reshape a flat list",
        )
    if isinstance(data, (list, tuple)) and "inhomogeneous" in str(err):
        lengths = [len(d) if isinstance(d, (list, tuple)) else "a number" for d in data]
        return message(
            op,
            f"rows of different lengths {lengths} cannot form a rectangular array",
            source.here(),
            "pad the rows to one length, or keep them as separate tensors",
        )
    return message(
        op,
        f"cannot make a tensor from {_peek(data)}",
        source.here(),
        "pass numbers: a number, a (nested) list of numbers or a numpy array",
    )


class Tensor(torch_api.TorchMethods):
    r"""An n-dimensional array that remembers how it was computed.

    Rules: `requires_grad=True` makes every op on this tensor record a node, so that
    `backward()` can fill `.grad`. Leaves are tensors you made; non-leaves have a
    `grad_fn`. Only floating-point tensors can require grad.

    Args:
        data: a number, a nested list of numbers, a numpy array or a Tensor (copied).
        requires_grad: record operations on this tensor for autograd.
        name: a label shown in graphs and error messages.
        dtype: a numpy dtype; default float64 for Python floats, int64 for Python ints,
            kept for numpy arrays.

    Example:
        >>> import tinygrad_edu as tg
        >>> x = tg.tensor([1.0, 2.0], requires_grad=True, name="x")
        >>> y = (x * x).sum()
        >>> y.backward()
        >>> x.grad
        tensor([2., 4.])
    """

    # NOTE: a tensor is made for every op, so only what every tensor sets, or every op reads,
    # is a slot; the rest are class defaults, stored per tensor (in its __dict__) only when
    # set. `_view` is read for each input of every op: a class default read through an
    # instance costs ~200 instructions more than a slot on Python 3.11
    __slots__ = (
        "_data",
        "_requires_grad",
        "_grad_fn",
        "_counter",
        "_id",
        "_view",
        "__dict__",
        "__weakref__",
    )
    _data: np.ndarray
    _requires_grad: bool
    _grad_fn: Node | None  # the node that made it (None for a leaf)
    _counter: np.ndarray | None  # see `_vc`
    _id: int
    _view: Any  # a views.ViewOf for a view of another tensor's storage, else None
    name: str | None = None  # a label for graphs and error messages
    _grad: Tensor | None = None
    _accumulator: AccumulateGrad | None = None  # a leaf's node, made on first use
    _retains_grad = False
    _hooks: list[Any] | None = None  # a leaf's register_hook hooks
    __array_priority__ = 1000

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """numpy meeting a Tensor: `array + t` is `t.__radd__(array)` (a Tensor in the graph),
        and `array -= t` changes the array's numbers in place, outside the graph (the array
        is not a tensor, so there is nothing to record)."""
        out = kwargs.get("out")
        if (
            method == "__call__"
            and out is not None
            and len(kwargs) == 1
            and len(out) == 1
            and len(inputs) == 2
            and inputs[0] is out[0]
        ):
            return ufunc(inputs[0], _array_of(inputs[1], self), out=out)
        name = _REFLECTED.get(ufunc)
        if method == "__call__" and name and not kwargs and len(inputs) == 2 and inputs[1] is self:
            return getattr(self, name)(inputs[0])
        fn = f"np.{getattr(ufunc, '__name__', ufunc)}"
        raise TypeError(
            message(
                fn,
                f"numpy cannot compute {fn} of a Tensor: the result would "
                "leave the graph, so backward() could not reach it",
                source.here(),
                f"use the tensor's own op (t.exp(), t.sin(), ...), "
                f"or {fn}(t.numpy()) for plain numbers",
            )
        )

    def __init__(
        self, data: Any, requires_grad: bool = False, name: str | None = None, dtype: Any = None
    ) -> None:
        if isinstance(requires_grad, numbers.Integral) and not isinstance(
            requires_grad, (bool, np.bool_)
        ):
            raise DataError(
                message(
                    "Tensor",
                    f"Tensor({data!r}, {requires_grad!r}) reads as sizes, but here the "
                    "second argument is requires_grad (PyTorch's Tensor(2, 3) makes an "
                    "uninitialised tensor of that shape)",
                    source.here(),
                    f"use tg.zeros({data!r}, {requires_grad!r}) or tg.empty(...)",
                )
            )
        arr = _to_array(data, dtype, "tensor")
        if dtype is None and arr.dtype.kind in "iu" and not isinstance(data, (np.ndarray, Tensor)):
            # the class makes floats, as torch.Tensor([1, 2]) does; tg.tensor keeps int64
            arr = arr.astype(_default_dtype[0])
        if requires_grad and arr.dtype.kind != "f":
            raise DataError(
                message(
                    "tensor",
                    f"only floating-point tensors can require grad, got {arr.dtype}",
                    source.here(),
                    "make it a float: tg.tensor(data, dtype='float64')",
                )
            )
        self._data = arr
        self._requires_grad = bool(requires_grad)
        self._grad_fn = None
        self._counter = None  # the version counter, made when first needed (`_vc`)
        self._id = next(tensor_numbers)
        self._view = None
        if name is not None:
            self.name = name

    @classmethod
    def _make(cls, data: Any) -> Tensor:
        """Wrap an op result without validation (the hot path)."""
        t = cls.__new__(cls)
        t._data = data if type(data) is _ndarray else np.asarray(data)
        t._requires_grad = False
        t._grad_fn = None
        t._counter = None  # the version counter, made when first needed (`_vc`)
        t._id = next(tensor_numbers)
        t._view = None
        return t

    # the public name for layers outside core (static replays, nn buffers): an array the
    # caller made, wrapped as a constant Tensor with no copy and no checks
    wrap = _make

    def __setstate__(self, state: Any) -> None:
        """A copy (`copy.copy`, `copy.deepcopy`, pickle) is a tensor of its own: the fields
        of the one copied, and a creation number of its own (drawings and `output()` tell
        tensors apart by it)."""
        fields, slots = state if isinstance(state, tuple) else (state, None)
        if fields:
            self.__dict__.update(fields)
        for name, value in (slots or {}).items():
            object.__setattr__(self, name, value)
        self._id = next(tensor_numbers)

    # --- attributes ---------------------------------------------------------------------

    @property
    def data(self) -> Tensor:
        """A tensor sharing this one's numbers, outside autograd (PyTorch's `.data`).

        It does not require grad and has its own version counter, so changing it in place
        (`p.data -= lr * p.grad`, `p.data.zero_()`) changes `p`'s numbers without being
        recorded or noticed by backward. `detach()` is the safe alias: it shares the version
        counter, so backward refuses values changed after they were saved.
        """
        alias = Tensor._make(self._data)
        _notify_concrete(self, "data")  # a tracer must know the numbers left its graph
        return alias

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(
                message(
                    "data",
                    f"t.data = ... takes a Tensor, got {type(value).__name__}",
                    source.here(),
                    "wrap it: t.data = tg.tensor(values), or write the numbers in place "
                    "with t.data.copy_(tg.tensor(values))",
                )
            )
        self._data = value._data  # shares value's storage, as PyTorch's `p.data = q` does

    @property
    def shape(self) -> tuple[int, ...]:
        return self._data.shape

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def dtype(self) -> np.dtype[Any]:
        return self._data.dtype

    # numpy's element count, an int; called, PyTorch's `size()` / `size(dim)`
    size = property(lambda self: torch_api.SizeOrCount(self._data.shape))

    @property
    def grad_fn(self) -> Node | None:
        """The node that made this tensor (None for leaves): where backward goes next."""
        if self._view is not None and self._view.version != self._vc[0]:
            views.refresh(self)  # the base changed in place since this view was cut
        return self._grad_fn

    @property
    def requires_grad(self) -> bool:
        """Whether ops on this tensor are recorded, so that backward reaches it."""
        if self._view is not None and self._view.version != self._vc[0]:
            views.refresh(self, strict=False)
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    @property
    def _vc(self) -> np.ndarray:
        """The version counter, `[version, site of the last in-place change]`: shared by
        every view and detach()ed alias of one storage, bumped by each in-place change."""
        # NOTE: made when first needed (an in-place change, a saved value, a view): most
        # tensors never need one, and a long graph then holds one object fewer per op.
        # A numpy array of two Python objects, not a list: numpy arrays are invisible to
        # Python's cyclic collector, and so, once it has looked at them, are the saved
        # entries that hold one (tuples of such objects). A 100,000-op graph then has that
        # many fewer objects for every full collection to walk (benchmarks/README.md, W3)
        if self._counter is None:
            self._counter = _NEW_COUNTER.copy()
        return self._counter

    @_vc.setter
    def _vc(self, counter: np.ndarray) -> None:
        self._counter = counter

    @property
    def _version(self) -> int:
        """How many times this tensor's storage was changed in place (PyTorch's name)."""
        version: int = self._vc[0]
        return version

    # the tensor's side of the node view (docs/architecture.md): what graph, debug and
    # widgets read instead of private fields
    @property
    def creation_number(self) -> int:
        """Tensors are numbered in the order they were made (one counter per process)."""
        return self._id

    @property
    def grad_held(self) -> Tensor | None:
        """The gradient stored here, read without `.grad`'s non-leaf warning (for drawings)."""
        return self._grad

    @property
    def grad_node(self) -> Node | None:
        """Where backward reaches this tensor: its `grad_fn`, or for a leaf that a graph
        uses its AccumulateGrad node (None for a leaf no graph used yet)."""
        return self.grad_fn or self._accumulator

    @property
    def is_leaf(self) -> bool:
        """True for tensors made by the user (no `grad_fn`); only leaves get `.grad`."""
        return self.grad_fn is None

    @property
    def grad(self) -> Tensor | None:
        """The gradient that `backward()` accumulated here (leaves, or after `retain_grad`)."""
        # NOTE: a leaf that is no view (every parameter an optimizer reads) is settled by two
        # slot reads, without the `grad_fn` property (which recuts a view's node first)
        if self._grad_fn is None and self._view is None:
            return self._grad
        if self.grad_fn is not None and not self._retains_grad and self.requires_grad:
            warnings.warn(self._non_leaf_grad_message(), UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | np.ndarray | None) -> None:
        if value is not None:
            value = (
                value if isinstance(value, Tensor) else Tensor._make(_to_array(value, None, "grad"))
            )
            if value.shape != self.shape or value.dtype != self.dtype:
                raise ShapeError(
                    message(
                        "grad",
                        f"cannot assign a gradient of shape {value.shape!r} and dtype "
                        f"{value.dtype} to {self._label(shape=False)}, which has shape "
                        f"{self.shape!r} and dtype {self.dtype}",
                        source.here(),
                        "a gradient has its tensor's shape and dtype; assign None to clear it",
                    )
                )
        self._grad = value

    def _non_leaf_grad_message(self) -> str:
        # the learner's own variable name for this tensor, looked up in the frame that read
        # .grad: after `w = w - lr * w.grad` the new w has no name= of its own
        import sys

        caller = sys._getframe(2)
        var = next(
            (
                k
                for scope in (caller.f_locals, caller.f_globals)
                for k, v in scope.items()
                if v is self and not k.startswith("_")
            ),
            None,
        )
        what = f"tensor {var!r}" if var else self._label()
        ref = var or "w"
        op = self.grad_fn.name.removesuffix("Backward") if self.grad_fn is not None else ""
        no_grad = (
            "to update a weight and keep it a leaf, do it without recording:\n"
            f"        with tg.no_grad():\n            {ref} -= lr * {ref}.grad"
        )
        retain = f"call {ref}.retain_grad() before backward() to keep an intermediate's grad"
        # `w = w - lr * w.grad` (Sub/Add) is the usual slip; otherwise an intermediate
        hint = (
            f"{no_grad}\n      (or {retain})"
            if op in ("Sub", "Add")
            else f"{retain}\n      (or, {no_grad})"
        )
        return message(
            ".grad",
            f"{what} is not a leaf: it was computed (by {op}), so backward() does not "
            "fill its .grad (it stays None)",
            getattr(self.grad_fn, "site", None),
            hint,
        )

    @property
    def T(self) -> Tensor:  # noqa: N802 - numpy's name
        """The transpose (all axes reversed), like `ndarray.T`."""
        return self.transpose()

    def _label(self, shape: bool = True) -> str:
        if self.name:
            return f"tensor {self.name!r}"
        return f"this tensor (shape {self.shape})" if shape else "this tensor"

    # --- conversion ---------------------------------------------------------------------

    def numpy(self) -> np.ndarray:
        """The underlying array (shared, not copied; read-only use is safest)."""
        _notify_concrete(self, "numpy")  # a static trace or capture must know its values left
        return self._data

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        # numpy 2 asks for a copy here (np.array(t) passes copy=True) and trusts the answer
        arr = self._data if dtype is None else self._data.astype(dtype, copy=False)
        return arr.copy() if copy and arr is self._data else arr

    def item(self) -> float:
        """The value of a one-element tensor as a Python number."""
        if self._data.size != 1:
            raise ValueError(
                message(
                    "item",
                    f"only a tensor with one element converts to a Python number, "
                    f"got shape {self.shape}",
                    source.here(),
                    "reduce it first (t.sum().item()) or pick one element (t[0].item())",
                )
            )
        _notify_concrete(self, "item")
        number: float = self._data.item()
        return number

    def tolist(self) -> Any:
        """The values as (nested) Python lists."""
        _notify_concrete(self, "tolist")
        return self._data.tolist()

    def __float__(self) -> float:
        return float(self._scalar("float"))

    def __int__(self) -> int:
        return int(self._scalar("int"))

    def __bool__(self) -> bool:
        return bool(self._scalar("bool"))

    def _scalar(self, kind: str) -> Any:
        if self._data.size != 1:
            raise ValueError(
                message(
                    kind,
                    f"the truth value or number of a tensor with shape {self.shape} is "
                    "ambiguous: it has more than one element",
                    source.here(),
                    "reduce it first, e.g. (t > 0).all() via t.min() > 0, or t.sum()",
                )
            )
        _notify_concrete(self, kind)
        return self._data.item()

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError(
                message("len", "a 0-d tensor (a single number) has no length", source.here())
            )
        return self.shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        for i in range(len(self)):
            yield self[i]

    __hash__ = object.__hash__

    def __format__(self, spec: str) -> str:
        """`f"{loss:.4f}"` formats a one-element tensor like its number."""
        if spec and self._data.size == 1:
            return format(self._data.item(), spec)
        return format(repr(self), spec)

    def __repr__(self) -> str:
        # PyTorch's layout (core/printing.py); the dtype shown unless PyTorch leaves it out
        data = self._data
        if data.size == 0:
            extra = printing.empty_suffixes(data, _default_dtype[0])
        elif data.dtype not in (_default_dtype[0], np.int64, np.bool_):
            extra = [f"dtype={data.dtype}"]
        else:
            extra = []
        if self.grad_fn is not None:
            extra.append(f"grad_fn=<{self.grad_fn.name}>")
        elif self.requires_grad:
            extra.append("requires_grad=True")
        if self.name:
            extra.append(f"name={self.name!r}")
        return printing.tensor_repr(data, extra)

    # --- autograd -----------------------------------------------------------------------

    def backward(
        self, gradient: Any = None, retain_graph: bool | None = None, create_graph: bool = False
    ) -> None:
        r"""Fill `.grad` of every leaf this tensor depends on with d(self)/d(leaf).

        Rules: a tensor with more than one element needs `gradient` (the upstream
        gradient, same shape). Gradients add up (`+=`) across calls; zero them between
        steps. The saved values are freed afterwards unless `retain_graph=True`;
        `create_graph=True` records the backward pass itself (for second derivatives).

        Raises:
            BackwardError: non-scalar without `gradient`, or nothing requires grad.
            GraphFreedError: a second backward through a freed graph.
            InplaceError: a saved tensor was changed in place after it was saved.

        Example:
            >>> import tinygrad_edu as tg
            >>> a = tg.tensor(3.0, requires_grad=True)
            >>> (a * a + a).backward()
            >>> a.grad
            tensor(7.)
        """
        from .engine import backward

        backward(self, gradient, retain_graph=retain_graph, create_graph=create_graph)

    def detach(self) -> Tensor:
        """A new tensor sharing this one's storage, cut off from the graph.

        Rules: as in PyTorch, the two share their numbers and version counter, so a change
        in place to either shows in both, and backward notices it where a value was saved.
        """
        # NOTE: a new ndarray object on the same memory, so `Function.apply` (which matches a
        # saved array to the input it came from by identity) never mistakes it for `self`
        t = Tensor._make(self._data.view())
        t._vc = self._vc
        t.name = self.name
        for obs in tuple(_thread.state.observers):  # a trace records the cut (Detach)
            obs.on_op(None, Detach, (self,), {}, t)
        return t

    def requires_grad_(self, flag: bool = True) -> Tensor:
        """Set `requires_grad` in place on a leaf; returns self."""
        if self.grad_fn is not None:
            if flag:
                return self  # a non-leaf that is part of the graph already requires grad
            raise BackwardError(
                message(
                    "requires_grad",
                    f"{self._label()} was computed (grad_fn={self.grad_fn.name}), "
                    "and only a leaf's requires_grad can be switched off",
                    source.here(),
                    f"use {_var(self)}.detach() for a copy outside the graph",
                )
            )
        if flag and self.dtype.kind != "f":
            raise DataError(
                message(
                    "requires_grad",
                    f"only floating-point tensors can require grad, got {self.dtype}",
                    source.here(),
                    f"make it a float first: {_var(self)}.astype('float64')",
                )
            )
        self._requires_grad = bool(flag)
        return self

    def retain_grad(self) -> None:
        """Ask backward() to also fill `.grad` of this non-leaf tensor."""
        if not self.requires_grad:
            raise BackwardError(
                message(
                    "retain_grad",
                    f"{self._label()} does not require grad, so backward() never "
                    "computes a gradient for it",
                    source.here(),
                    "keep the tensor in the graph: compute it from tensors with requires_grad=True "
                    "(not from a .detach() or inside tg.no_grad())",
                )
            )
        if self.grad_fn is None:
            return  # leaves keep their grad anyway
        self._retains_grad = True
        self.grad_fn._retained = weakref.ref(self)

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> _HookHandle:
        r"""Call `hook(grad)` when the gradient for this tensor is computed.

        Rules: the hook may return a replacement gradient (or None to keep it). It runs
        before the gradient is accumulated into `.grad` (leaves) or sent further back.

        Returns:
            A handle whose `.remove()` unregisters the hook.

        Example:
            >>> import tinygrad_edu as tg
            >>> x = tg.tensor([1.0, 2.0], requires_grad=True)
            >>> h = x.register_hook(lambda g: g * 10)
            >>> (x * 2).sum().backward()
            >>> x.grad
            tensor([20., 20.])
        """
        if not callable(hook):
            raise TypeError(
                message(
                    "register_hook",
                    f"a hook must be a function taking the gradient, got {_peek(hook)}",
                    source.here(),
                )
            )
        if not self.requires_grad:
            raise BackwardError(
                message(
                    "register_hook",
                    f"{self._label()} does not require grad, "
                    "so no gradient will ever reach the hook",
                    source.here(),
                    "create it with requires_grad=True",
                )
            )
        node = self.grad_fn
        if node is not None:
            if node._pre_hooks is None:
                node._pre_hooks = []
            hooks = node._pre_hooks
        else:
            if self._hooks is None:
                self._hooks = []
            hooks = self._hooks
        hooks.append(hook)
        return _HookHandle(hooks, hook)

    # --- in-place -----------------------------------------------------------------------

    def _inplace(
        self, op_name: str, fn: Callable[[Tensor], Tensor], other: Any = None, ufunc: Any = None
    ) -> Tensor:
        """`self = fn(self)` in place; `ufunc`, numpy's form of fn, lets a step that records
        no graph (an optimizer's) write straight into `self`'s storage (core/views.py)."""
        if ufunc is not None and views.step_into(self, other, ufunc):
            return self  # an optimizer's step, done in one pass
        views.check_overlap(self, other, op_name)
        # above: this frame and the public method's (`add_`) are the package's
        return views.inplace(self, op_name, fn, ufunc=ufunc, operand=other, above=2)

    def add_(self, other: Any, *, alpha: float = 1) -> Tensor:
        """`self += alpha * other` in place (PyTorch's `p.data.add_(g, alpha=-lr)`)."""
        other = other if alpha == 1 else alpha * other
        return self._inplace("add_", lambda t: t + other, other, np.add)

    def sub_(self, other: Any, *, alpha: float = 1) -> Tensor:
        other = other if alpha == 1 else alpha * other
        return self._inplace("sub_", lambda t: t - other, other, np.subtract)

    def mul_(self, other: Any) -> Tensor:
        return self._inplace("mul_", lambda t: t * other, other, np.multiply)

    def div_(self, other: Any) -> Tensor:
        return self._inplace("div_", lambda t: t / other, other, np.divide)

    def fill_(self, value: float) -> Tensor:
        if isinstance(value, numbers.Number) and self._data.dtype.kind in "iu":
            stored = torch_api._stored("fill_", value, self)  # -1 into uint8 is 255, as PyTorch
            return self._inplace("fill_", lambda t: Fill.apply(t, value=stored))
        return self._inplace("fill_", lambda t: Fill.apply(t, value=value))

    def zero_(self) -> Tensor:
        return self._inplace("zero_", lambda t: Fill.apply(t, value=0.0))

    __iadd__ = add_
    __isub__ = sub_
    __imul__ = mul_
    __itruediv__ = div_

    # --- arithmetic (one-liners over ops) -----------------------------------------------

    def __add__(self, other: Any) -> Tensor:
        return Add.apply(*_operands(self, other, "+"))

    def __radd__(self, other: Any) -> Tensor:
        a, b = _operands(self, other, "+")
        return Add.apply(b, a)

    def __sub__(self, other: Any) -> Tensor:
        return Sub.apply(*_operands(self, other, "-"))

    def __rsub__(self, other: Any) -> Tensor:
        a, b = _operands(self, other, "-")
        return Sub.apply(b, a)

    def __mul__(self, other: Any) -> Tensor:
        return Mul.apply(*_operands(self, other, "*"))

    def __rmul__(self, other: Any) -> Tensor:
        a, b = _operands(self, other, "*")
        return Mul.apply(b, a)

    def __truediv__(self, other: Any) -> Tensor:
        return Div.apply(*_operands(self, other, "/"))

    def __rtruediv__(self, other: Any) -> Tensor:
        a, b = _operands(self, other, "/")
        if isinstance(other, Tensor):
            return Div.apply(b, a)
        # a number over a tensor: (1 / x) * number, as PyTorch computes it (same saved values,
        # same second derivative, same last digit)
        return Mul.apply(Reciprocal.apply(a), b)

    def __pow__(self, other: Any) -> Tensor:
        if type(other) is int and other < 0:  # int_tensor ** -1 is refused, as PyTorch
            arith.refuse_negative_power(self, other)
        elif type(other) is float and other == -0.5:  # a Python number only, as PyTorch's
            return Pow.apply(*_operands(self, other, "**"), rsqrt=True)
        elif type(other) is Tensor and other.ndim == 0:  # Tensor ** Tensor in PyTorch
            return Pow.apply(*_operands(self, other, "**"), tensor_exponent=True)
        return Pow.apply(*_operands(self, other, "**"))

    def __rpow__(self, other: Any) -> Tensor:
        a, b = _operands(self, other, "**", reflected=True)
        return Pow.apply(b, a)

    def __neg__(self) -> Tensor:
        return Neg.apply(self)

    def __pos__(self) -> Tensor:
        return self

    def __matmul__(self, other: Any) -> Tensor:
        return MatMul.apply(self, _operand(other, self))

    def __rmatmul__(self, other: Any) -> Tensor:
        return MatMul.apply(_operand(other, self), self)

    # comparisons: plain boolean tensors, never part of the graph
    def __lt__(self, other: Any) -> Tensor:
        return _compare(np.less, "<", self, other)

    def __le__(self, other: Any) -> Tensor:
        return _compare(np.less_equal, "<=", self, other)

    def __gt__(self, other: Any) -> Tensor:
        return _compare(np.greater, ">", self, other)

    def __ge__(self, other: Any) -> Tensor:
        return _compare(np.greater_equal, ">=", self, other)

    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        return _compare(np.equal, "==", self, other)

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        return _compare(np.not_equal, "!=", self, other)

    def __invert__(self) -> Tensor:
        if self.dtype != np.bool_:
            raise TypeError(
                message("invert", f"~ needs a boolean tensor, got {self.dtype}", source.here())
            )
        return Tensor._make(~self._data)

    def __and__(self, other: Any) -> Tensor:
        return Tensor._make(np.logical_and(self._data, _array_of(other, self)))

    def __or__(self, other: Any) -> Tensor:
        return Tensor._make(np.logical_or(self._data, _array_of(other, self)))

    # --- elementwise functions ----------------------------------------------------------

    def exp(self) -> Tensor:
        return Exp.apply(self)

    def log(self) -> Tensor:
        return Log.apply(self)

    def tanh(self) -> Tensor:
        return Tanh.apply(self)

    def relu(self) -> Tensor:
        if self._data.dtype.kind == "b":  # PyTorch has no bool kernel for it
            refuse_dtype("relu", self, "numbers")
        return ReLU.apply(self)

    def sigmoid(self) -> Tensor:
        return Sigmoid.apply(self)

    def abs(self) -> Tensor:
        if self._data.dtype.kind == "b":  # PyTorch has no bool kernel for it
            refuse_dtype("abs", self, "numbers")
        return Abs.apply(self)

    def sqrt(self) -> Tensor:
        return Sqrt.apply(self)

    def clip(self, min: float | None = None, max: float | None = None) -> Tensor:  # noqa: A002
        for bound in (min, max):
            if type(bound) is int and self._data.dtype.kind in "iu":
                _check_fits(bound, self, "clamp", f"clamp in int64: x.long().clamp({min}, {max})")
            if bound is not None and (
                isinstance(bound, bool) or not isinstance(bound, numbers.Real)
            ):
                raise DataError(
                    message(
                        "clip",
                        f"the bounds must be numbers or None, got {_peek(bound)}",
                        source.here(),
                    )
                )
        # an int tensor with a float bound clips in the default float, as PyTorch's clamp
        dt = arith.result_dtype(self, *(b for b in (min, max) if b is not None))
        return Clip.apply(self if dt == self.dtype else self.to(dt), lo=min, hi=max)

    def softmax(self, axis: int = -1, *, dim: int | None = None) -> Tensor:
        if self._data.dtype.kind != "f":  # PyTorch has no whole-number kernel for it
            refuse_dtype("softmax", self, "a float tensor")
        return Softmax.apply(self, axis=_axis(axis, dim))

    def log_softmax(self, axis: int = -1, *, dim: int | None = None) -> Tensor:
        if self._data.dtype.kind != "f":  # PyTorch has no whole-number kernel for it
            refuse_dtype("log_softmax", self, "a float tensor")
        return LogSoftmax.apply(self, axis=_axis(axis, dim))

    def clone(self) -> Tensor:
        """A copy with its own storage that stays in the graph (CloneBackward)."""
        return Clone.apply(self)

    def astype(self, dtype: Any) -> Tensor:
        """A copy converted to `dtype`; the gradient is converted back."""
        return Cast.apply(self, dtype=_dtype(dtype, "astype"))

    def float(self) -> Tensor:
        return self.to(np.float32)  # itself when already float32, as in PyTorch

    def double(self) -> Tensor:
        return self.to(np.float64)

    # --- reductions (numpy conventions: axis, keepdims) ----------------------------------

    # `dim=` is accepted as PyTorch's spelling of numpy's `axis=`, so habits carry over

    def sum(
        self,
        axis: Any = None,
        keepdims: bool = False,
        *,
        dim: Any = None,
        keepdim: bool = False,
        dtype: Any = None,
    ) -> Tensor:
        # PyTorch's dtype=: the values are cast first (sum(dtype=float64) of float32 data)
        x = self if dtype is None else Cast.apply(self, dtype=_dtype(dtype, "sum"))
        return Sum.apply(x, axis=_axis(axis, dim), keepdims=keepdims or keepdim)

    def mean(
        self,
        axis: Any = None,
        keepdims: bool = False,
        *,
        dim: Any = None,
        keepdim: bool = False,
        dtype: Any = None,
    ) -> Tensor:
        keepdims = keepdims or keepdim
        x = self if dtype is None else Cast.apply(self, dtype=_mean_dtype(dtype))
        total = x.sum(axis, keepdims, dim=dim)  # a bad axis fails here, in the house format
        n = total._data.size
        # NOTE: averaging no numbers gives nan (0 / 0), as in PyTorch and numpy
        return total / (self._data.size // n if n else 1)

    # NOTE: two spellings, two results. numpy's `axis=` gives the maxima (a tensor);
    # PyTorch's `dim` (positional or `dim=`, without numpy's `keepdims=`) gives `(values,
    # indices)`, and its backward
    # sends the gradient to the one index, where `axis=` shares it between ties
    def max(
        self, dim: Any = None, keepdim: bool = False, *, axis: Any = None, keepdims: bool = False
    ) -> Any:
        if isinstance(dim, Tensor):  # torch.max(a, b): elementwise, as torch.maximum
            return torch_api.maximum(self, dim)
        if dim is None or keepdims or isinstance(dim, (tuple, list)):  # numpy's spelling
            return Max.apply(self, axis=_axis(axis, dim), keepdims=keepdims or keepdim)
        return torch_api.reduce_with_index(self, "max", dim, keepdim)

    def min(
        self, dim: Any = None, keepdim: bool = False, *, axis: Any = None, keepdims: bool = False
    ) -> Any:
        if isinstance(dim, Tensor):  # torch.min(a, b): elementwise, as torch.minimum
            return torch_api.minimum(self, dim)
        if dim is None or keepdims or isinstance(dim, (tuple, list)):  # numpy's spelling
            return Min.apply(self, axis=_axis(axis, dim), keepdims=keepdims or keepdim)
        return torch_api.reduce_with_index(self, "min", dim, keepdim)

    def amax(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        """PyTorch's `amax`: the maxima over `dim`, the gradient shared between ties."""
        return Max.apply(self, axis=_axis(None, dim), keepdims=keepdim)

    def amin(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        """PyTorch's `amin`: the minima over `dim`, the gradient shared between ties."""
        return Min.apply(self, axis=_axis(None, dim), keepdims=keepdim)

    def argmax(
        self,
        axis: int | None = None,
        keepdims: bool = False,
        *,
        dim: int | None = None,
        keepdim: bool = False,
    ) -> Tensor:
        return self._arg_extreme(np.argmax, _axis(axis, dim), keepdims or keepdim)

    def argmin(
        self,
        axis: int | None = None,
        keepdims: bool = False,
        *,
        dim: int | None = None,
        keepdim: bool = False,
    ) -> Tensor:
        return self._arg_extreme(np.argmin, _axis(axis, dim), keepdims or keepdim)

    def _arg_extreme(self, find: Callable[..., Any], axis: int | None, keepdims: bool) -> Tensor:
        # an index is not differentiable: a plain tensor, no node; numpy finds it, so a
        # tracer is told (it would otherwise freeze the index as a constant, silently)
        if self._data.dtype.kind == "b":  # PyTorch's argmax/argmin have no bool kernel
            refuse_dtype(find.__name__, self, "numbers")
        _notify_concrete(self, find.__name__)
        return Tensor._make(
            np.asarray(find(self._data, axis=axis, keepdims=keepdims and axis is not None))
        )

    def all(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        """True when no element is zero (over `dim`, if given): ops a tracer records, so
        `tg.static.trace(lambda x: (x > 0).all(), x)` answers for every input."""
        return _truth((self == 0).sum(dim, keepdim=keepdim) == 0, self)

    def any(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        """True when some element is not zero (over `dim`, if given), through recorded ops."""
        return _truth((self != 0).sum(dim, keepdim=keepdim) > 0, self)

    # --- movement -----------------------------------------------------------------------

    # Movement ops return views where PyTorch's do (core/views.py): they share storage and
    # the version counter with this tensor, so writing through them changes it too

    def reshape(self, *shape: Any) -> Tensor:
        """The same numbers in a new shape: a view when numpy can, else a copy."""
        return Reshape.apply(self, shape=_sizes(shape, "reshape"))

    def view(self, *shape: Any) -> Tensor:
        """Like `reshape`, but always a view: refuses when the numbers would need a copy."""
        out = self.reshape(*shape)
        if out._view is None and self._data.size > 1:
            raise ShapeError(
                message(
                    "view",
                    f"cannot view a tensor of shape {self.shape!r} as {_sizes(shape, 'view')!r} "
                    "without copying: its numbers are not laid out in that order in memory (after a "
                    "transpose, say)",
                    source.here(),
                    "use .reshape(...), which copies when it must",
                )
            )
        return out

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        """Merge axes `start_dim` .. `end_dim` (all, by default) into one, as PyTorch."""
        if self.ndim == 0:
            return self.reshape(1)
        start, end = start_dim % self.ndim, end_dim % self.ndim
        if start == end:
            return self  # nothing to merge: PyTorch returns the tensor itself, not a view
        return self.reshape(self.shape[:start] + (-1,) + self.shape[end + 1 :])

    def unsqueeze(self, dim: int) -> Tensor:
        """A view with a new axis of size 1 at `dim` (as `x[:, None]` for dim=1)."""
        if not -self.ndim - 1 <= dim <= self.ndim:
            raise ShapeError(self._axis_message("unsqueeze", dim, self.ndim + 1))
        dim = dim % (self.ndim + 1)
        return Reshape.apply(self, shape=self.shape[:dim] + (1,) + self.shape[dim:])

    def squeeze(self, dim: int | None = None) -> Tensor:
        """A view without axes of size 1 (only `dim`, if given and of size 1), as PyTorch."""
        if dim is None:
            return Reshape.apply(self, shape=tuple(n for n in self.shape if n != 1))
        if not -max(self.ndim, 1) <= dim < max(self.ndim, 1):
            raise ShapeError(self._axis_message("squeeze", dim, self.ndim))
        if self.ndim == 0 or self.shape[dim] != 1:
            return Reshape.apply(self, shape=self.shape)
        dim = dim % self.ndim
        return Reshape.apply(self, shape=self.shape[:dim] + self.shape[dim + 1 :])

    def transpose(self, *axes: Any) -> Tensor:
        """Two axes: swap them (PyTorch's `transpose(0, 1)`); all axes: reorder (numpy's)."""
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            # NOTE: numpy reads a tuple as a permutation, PyTorch refuses it: swapping two
            # axes for `(0, 1)` would be silently different from one of them (issue 30)
            raise TypeError(
                message(
                    "transpose",
                    f"takes two axes to swap, transpose(dim0, dim1), not the tuple "
                    f"{tuple(axes[0])!r} (tensor shape {self.shape!r})",
                    source.here(),
                    f"to reorder all axes use .permute{tuple(axes[0])!r}",
                )
            )
        if len(axes) == 2:
            return self.swapaxes(*axes)
        return Transpose.apply(self, axes=tuple(axes) if axes else None)

    def permute(self, *dims: Any) -> Tensor:
        """A view with the axes in the order `dims` (PyTorch's name for numpy's transpose)."""
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = tuple(dims[0])
        return Transpose.apply(self, axes=tuple(dims))

    def swapaxes(self, a: int, b: int) -> Tensor:
        axes = list(range(self.ndim))
        for ax in (a, b):
            if not -self.ndim <= ax < self.ndim:
                raise ShapeError(self._axis_message("swapaxes", ax, self.ndim))
        axes[a], axes[b] = axes[b], axes[a]
        return Transpose.apply(self, axes=tuple(axes))

    def broadcast_to(self, shape: tuple[Any, ...]) -> Tensor:
        return BroadcastTo.apply(self, shape=tuple(shape))

    def expand(self, *sizes: Any) -> Tensor:
        """A read-only view repeating axes of size 1 (PyTorch's; -1 keeps a size)."""
        sizes = _sizes(sizes, "expand")
        lead = len(sizes) - self.ndim
        shape = tuple(
            self.shape[i - lead] if n == -1 and i >= lead else n for i, n in enumerate(sizes)
        )
        return BroadcastTo.apply(self, shape=shape)

    def _axis_message(self, op: str, axis: int, n: int) -> str:
        return message(
            op,
            f"axis {axis} is out of range for a tensor with {self.ndim} axes "
            f"(shape {self.shape!r})",
            source.here(),
            f"use axes 0 .. {n - 1} (or -1 .. -{n})",
        )

    def __getitem__(self, index: Any) -> Tensor:
        out = Index.apply(self, index=_index(index))
        if self.name and not out.requires_grad and not _thread.state.observers:
            # a drawing shows a constant as a bare shape: name a slice of named data
            # (`x[t]` in an RNN loop) so the learner sees which step reads what
            out.name = _slice_name(self.name, index)
        return out

    def __setitem__(self, index: Any, value: Any) -> None:
        """`t[i] = v` writes into `t` (and into its base, for a view), recorded as IndexPut."""
        index = _index(index)
        if type(value) is int and self._data.dtype.kind in "iu":  # -1 into uint8: 255
            value = torch_api._stored("setitem", value, self).item()
        try:
            region = select(self._data, index)  # a view for basic indices: the numbers written
        except IndexError as e:
            raise ShapeError(
                message(
                    "setitem", f"{e} (tensor shape {self.shape!r})", source.here(), index_hint(e)
                )
            ) from None
        basic = isinstance(region, np.ndarray) and region.base is not None
        # a number through an index array or a mask (or one number as a tensor through a mask)
        # is PyTorch's index fill or masked_fill_: no overlap to check, and a broadcast view
        # can take it; through basic indices it is a copy, refused where numbers are shared
        fill = not basic and (
            isinstance(value, numbers.Number)
            or (_is_mask(index) and np.size(_array_of(value, self)) == 1)
        )
        if fill:
            pass
        elif not basic:
            region = None  # integer arrays or masks: numpy wrote nothing yet, check it all
            views.check_writable(self, "setitem")  # into a broadcast view: refused first
            views.check_overlap(self, value, "setitem", region, same_ok=False)
        else:
            views.check_overlap(self, value, "setitem", region)
        if _thread.state.enabled and (
            self.requires_grad or (isinstance(value, Tensor) and value.requires_grad)
        ):
            views.inplace(
                self,
                "setitem",
                lambda old: IndexPut.apply(old, _operand(value, self), index=index),
                fill=fill,
            )
            return
        views.check_writable(self, "setitem", region, fill=fill)
        try:
            self._data[index] = _array_of(value, self)
        except (ValueError, IndexError) as e:
            raise ShapeError(
                message("setitem", f"{e} (tensor shape {self.shape!r})", source.here())
            ) from None
        views.bump(self)


class _HookHandle:
    """Returned by `register_hook`; `.remove()` takes the hook off again."""

    def __init__(self, hooks: list[Any], hook: Callable[..., Any]) -> None:
        self._hooks, self._hook = hooks, hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)

    def __repr__(self) -> str:
        return "<hook handle>"


# numpy's ufunc for `array <op> tensor` -> the Tensor method that computes it
_REFLECTED = {
    np.add: "__radd__",
    np.subtract: "__rsub__",
    np.multiply: "__rmul__",
    np.true_divide: "__rtruediv__",
    np.power: "__rpow__",
    np.matmul: "__rmatmul__",
    np.less: "__gt__",
    np.less_equal: "__ge__",
    np.greater: "__lt__",
    np.greater_equal: "__le__",
    np.equal: "__eq__",
    np.not_equal: "__ne__",
}

_constants: dict[Any, Any] = {}  # (number, dtype) -> read-only 0-d array
_NEW_COUNTER = np.array([0, None], dtype=object)  # what `_vc` copies: version 0, no site
_INT64 = np.dtype(np.int64)


def _mean_dtype(dtype: Any) -> np.dtype:
    """`mean(dtype=...)`: a float dtype, as PyTorch requires (a mean of whole numbers is not
    one); read by `_dtype`, which names unknown ones."""
    dt = _dtype(dtype, "mean")
    if dt.kind != "f":
        raise DataError(
            message(
                "mean",
                f"dtype={dt} cannot hold a mean: it must be a float dtype, as in PyTorch",
                source.here(),
                "use mean(dtype=tg.float64), or sum(dtype=...) for a whole-number total",
            )
        )
    return dt


def _operand(other: Any, like: Tensor) -> Any:
    """Tensors pass through; a Python scalar takes `like`'s float dtype (no promotion), and
    an int with an integer tensor keeps its dtype (int32 + 1 is int32, as in PyTorch)."""
    if isinstance(other, Tensor):
        return other
    if type(other) is float or type(other) is int:  # the common case, without an ABC check
        dt = like._data.dtype
        if dt.kind != "f":  # int or bool tensors: ints stay whole, floats take the default
            dt = (dt if dt.kind in "iu" else _INT64) if type(other) is int else _default_dtype[0]
        return _constant(other, dt)
    if isinstance(other, (bool, np.bool_)):  # the lowest kind: it takes the tensor's dtype
        return np.asarray(other, dtype=like._data.dtype)
    if isinstance(other, numbers.Number) and not isinstance(other, np.ndarray):
        dt = like._data.dtype if like._data.dtype.kind == "f" else _default_dtype[0]
        return np.asarray(other, dtype=dt)
    if isinstance(other, np.ndarray):
        return other
    return _to_array(other, None, "operand")


def _constant(number: float, dt: np.dtype[Any]) -> np.ndarray:
    """`number` as a read-only 0-d array of dtype `dt`, one per number and dtype."""
    # NOTE: 0.0 == -0.0, yet 1 / -0.0 is -inf: zeros are keyed by their text as well.
    # Keyed by the dtype's id (hashing a dtype costs more than the op), checked on a hit
    key = (number, id(dt)) if number else (number, id(dt), str(number))
    const = _constants.get(key)
    if const is None or const.dtype is not dt:  # np.asarray costs as much as the op
        if len(_constants) > 1000:
            _constants.clear()
        const = np.asarray(number, dtype=dt)
        const.flags.writeable = False  # shared by every op that used this number
        _constants[key] = const
    return const


def _operands(t: Tensor, other: Any, op: str, reflected: bool = False) -> tuple[Any, Any]:
    """`t` and `other` as `t <op> other` uses them: in PyTorch's dtype (ops/arith/promotion.py)."""
    dt = t._data.dtype
    if (type(other) is float or type(other) is int) and dt.kind == "f":
        # the commonest case, `x * 0.9`, settled first: a nonzero number seen before is
        # looked up here (`_constant`'s key), as a call costs about as much as the lookup
        const = _constants.get((other, id(dt)))
        if const is not None and const.dtype is dt:
            return t, const
        return t, _constant(other, dt)
    try:
        b = _operand(other, t)
    except OverflowError:  # `uint8_tensor + -1`: PyTorch wraps -1 around to 255 (`/`: -1.0)
        b = arith.wrapped(other, dt, _OP_NAMES[op])  # past 64 bits: refused, as PyTorch
        if op == "/":
            b = np.asarray(other)
        elif op == "**" and not reflected:  # a power is checked: `uint8 ** 300` is refused
            b = torch_api._stored("pow", other, t)
    if (
        (b._data.dtype if isinstance(b, Tensor) else b.dtype) == dt
        and (dt.kind == "f" or (dt.kind != "b" and op != "/"))
        and type(other) is not bool  # `x - True` is refused
    ):
        return t, b  # the common case: one dtype already
    return arith.promote(t, other, b, op)


def _truth(out: Tensor, of: Tensor) -> Tensor:
    # PyTorch's all/any of a uint8 tensor answer in uint8 (1 or 0), of any other dtype in bool
    return out.astype(np.uint8) if of.dtype == np.uint8 else out


def _array_of(other: Any, like: Tensor) -> np.ndarray:
    out = _operand(other, like)
    return out._data if isinstance(out, Tensor) else out


def _compare(ufunc: Any, symbol: str, a: Tensor, b: Any) -> Tensor:
    try:
        other = _array_of(b, a)
    except OverflowError:  # `uint8_tensor > -1`: PyTorch wraps -1 to 255 and answers False
        if a._data.dtype.kind not in "iu":  # a bool tensor meets the int in int64
            raise OverflowError(
                message(
                    f"compare ({symbol})",
                    f"the number {b} does not fit in int64, which a {a.dtype} tensor is "
                    "compared in; PyTorch refuses it too",
                    source.here(),
                )
            ) from None
        _check_fits(b, a, f"compare ({symbol})", f"compare in int64: x.long() {symbol} {b}")
    if other.dtype is not a._data.dtype and other.ndim == 0 and other.dtype.kind in "iu":
        # a 0-d int tensor takes `a`'s int dtype in PyTorch, wrapped around as above
        if a._data.dtype.kind in "iu":
            hint = f"compare in int64: x.long() {symbol} {other.item()}"
            _check_fits(other.item(), a, f"compare ({symbol})", hint)
    try:
        out = Tensor._make(ufunc(a._data, other))
    except ValueError:
        raise ShapeError(_function.broadcast_message(symbol, a.shape, np.shape(other))) from None
    observers = _thread.state.observers
    if observers:  # no graph node, but a static trace must still record it
        args = (a, b if isinstance(b, Tensor) else other)
        for obs in tuple(observers):
            obs.on_op(None, Compare, args, {"symbol": symbol}, out)
    return out


_OP_NAMES = {"+": "add", "-": "sub", "*": "mul", "/": "div", "**": "pow"}


def _check_fits(number: int, a: Tensor, op: str, hint: str) -> None:
    """PyTorch compares a whole-number tensor with an int it cannot hold (and clamps by one)
    after wrapping the int around (uint8 takes -1 as 255, so `x > -1` is False everywhere):
    an answer that contradicts what was written, so it is refused here, with the cast that
    means it."""
    info = np.iinfo(a._data.dtype)
    if info.min <= number <= info.max:
        return
    raise DataError(
        message(
            op,
            f"a {a.dtype} tensor (shape {a.shape!r}) cannot hold {number}: PyTorch wraps it "
            f"around to {arith.wrapped(number, a._data.dtype, op)} and uses that",
            source.here(),
            hint,
        )
    )


def _sizes(shape: tuple[Any, ...], op: str, smallest: int = -1) -> tuple[Any, ...]:
    """`f(2, 3)` and `f((2, 3))` both mean the shape (2, 3), as in PyTorch; sizes must be
    whole numbers >= `smallest` (-1 stands for "whatever fits" in reshape and expand)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    for n in shape:
        if isinstance(n, (bool, np.bool_)) or not isinstance(n, numbers.Integral) or n < smallest:
            kind = "non-negative whole numbers" if smallest == 0 else "whole numbers (or -1)"
            raise ShapeError(
                message(
                    op,
                    f"sizes must be {kind}, got {shape!r}",
                    source.here(),
                    "write the shape as integers, e.g. (2, 3)",
                )
            )
    return tuple(int(n) for n in shape)


def _axis(axis: Any, dim: Any = None) -> Any:
    if dim is not None:
        axis = dim
    if isinstance(axis, list):
        return tuple(axis)
    return axis


def _index(index: Any) -> Any:
    """Tensors inside an index become arrays (integer-array or boolean indexing).

    Their values become part of the op, so observers hear of it (kind "index"): a trace
    must know that replay would pick the same elements whatever the input.
    """
    if isinstance(index, Tensor):
        _notify_concrete(index, "index")
        return _int_index(index._data)
    if isinstance(index, tuple):
        for i in index:
            if isinstance(i, Tensor):
                _notify_concrete(i, "index")
        return tuple(_int_index(i._data) if isinstance(i, Tensor) else i for i in index)
    if isinstance(index, list):
        return np.asarray(index)
    return index


def _slice_name(name: str, index: Any) -> str | None:
    """`x[1, :2]` for `x` and `(1, slice(None, 2))`; None for an index of arrays."""
    parts = []
    for i in index if isinstance(index, tuple) else (index,):
        if isinstance(i, (int, np.integer)) and not isinstance(i, bool):
            parts.append(str(int(i)))
        elif isinstance(i, slice) and all(
            v is None or isinstance(v, int) for v in (i.start, i.stop, i.step)
        ):
            text = f"{'' if i.start is None else i.start}:{'' if i.stop is None else i.stop}"
            parts.append(text + (f":{i.step}" if i.step is not None else ""))
        elif i is Ellipsis:
            parts.append("...")
        elif i is None:
            parts.append("None")
        else:
            return None
    return f"{name}[{', '.join(parts)}]"


def _is_mask(index: Any) -> bool:
    return isinstance(index, np.ndarray) and index.dtype == np.bool_


def _int_index(arr: np.ndarray) -> np.ndarray:
    # Class labels often arrive as float tensors (Python lists become float64)
    if arr.dtype.kind == "f" and np.all(arr == np.round(arr)):
        return arr.astype(np.intp)
    return arr


def _notify_concrete(t: Tensor, kind: str) -> None:
    """Tell observers (the tracer) that a tensor became a Python value here.

    `kind` is how: "bool", "int", "float", "item", "tolist", "numpy", "data", "index", or
    the name of an op that computes its result from the values in numpy and records no
    node ("argmax", "sort", "nonzero", ...): a tracer cannot replay such a result.
    """
    for obs in tuple(_thread.state.observers):
        hook = getattr(obs, "on_concrete", None)
        if hook is not None:
            hook(t, kind)


# Imported last: the ops import this module's Tensor through function.py.
# PyTorch's further ops (issue 30): each of these modules lists its Tensor methods in
# METHODS (core.functions makes each one torch.<name> too). Imported here, at the end,
# because they read `Tensor` from this module.
from .ops import arith, indexing, products, search  # noqa: E402
from .ops.common import refuse_dtype  # noqa: E402
from .ops.elementwise import (  # noqa: E402
    Abs,
    Add,
    Cast,
    Clip,
    Clone,
    Compare,
    Div,
    Exp,
    Fill,
    Log,
    Mul,
    Neg,
    Pow,
    Reciprocal,
    ReLU,
    Sigmoid,
    Sqrt,
    Sub,
    Tanh,
)
from .ops.linalg import MatMul  # noqa: E402
from .ops.movement import (  # noqa: E402
    BroadcastTo,
    Detach,
    Index,
    IndexPut,
    Reshape,
    Transpose,
    index_hint,
    select,
)
from .ops.reduce import LogSoftmax, Max, Min, Softmax, Sum  # noqa: E402

TORCH_OP_MODULES = (arith, indexing, search, products)


def _add_torch_ops() -> None:
    for module in TORCH_OP_MODULES:
        for name, method in module.METHODS.items():
            setattr(Tensor, name, method)
    _REFLECTED.update({np.remainder: "__rmod__", np.floor_divide: "__rfloordiv__"})


_add_torch_ops()
