"""Tensor: a numpy array plus what autograd needs (requires_grad, grad, grad_fn, name).

Operators and methods are one-liners over the ops in `core/ops/`; the graph is built
by `Function.apply` alone. Python numbers become float64; numpy arrays keep their
floating dtype, and a Python scalar in an op takes the tensor's dtype (no silent
float32 -> float64 promotion). Core layer: numpy and the standard library only.
"""

from __future__ import annotations

import itertools
import numbers
import warnings
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from . import function as _function
from . import source
from .errors import BackwardError, DataError, InplaceError, ShapeError, message
from .grad_mode import _state

_tensor_ids = itertools.count(1)


def _to_array(data: Any, dtype: Any, op: str) -> np.ndarray:
    """Convert user data to an ndarray, or raise a DataError that names the problem."""
    if isinstance(data, Tensor):
        return np.array(data.data, dtype=dtype)  # a copy: tg.tensor(t) never aliases t
    if isinstance(data, np.ndarray):
        arr = data if dtype is None else data.astype(dtype, copy=False)
    else:
        if _holds_tensors(data):
            raise DataError(
                message(op, "got a list of Tensors", source.here(),
                        "use tg.stack([...]) to join tensors (it keeps the graph)")
            )
        try:
            # no dtype yet: numpy would turn "1" into 1.0 with float64 given, and we refuse text
            arr = np.array(data)
            if arr.dtype.kind in "fiub":
                arr = arr.astype(np.float64 if dtype is None else dtype, copy=False)
        except ValueError as e:
            raise DataError(_bad_data(op, data, e)) from None
        except TypeError as e:
            raise DataError(_bad_data(op, data, e)) from None
    if arr.dtype.kind not in "fiub":
        raise DataError(
            message(op, f"cannot make a tensor from {_peek(data)}: it holds "
                    f"{_KINDS.get(arr.dtype.kind, arr.dtype)}, not real numbers", source.here(),
                    "pass numbers: a number, a (nested) list of numbers or a numpy array")
        )
    return arr


_KINDS = {"U": "text", "S": "bytes", "O": "Python objects", "c": "complex numbers", "M": "dates",
          "m": "time spans", "V": "records"}


def _holds_tensors(data: Any) -> bool:
    return isinstance(data, (list, tuple)) and any(isinstance(d, Tensor) for d in data)


def _peek(data: Any) -> str:
    text = repr(data)
    return text if len(text) <= 40 else text[:37] + "..."


def _bad_data(op: str, data: Any, err: Exception) -> str:
    if isinstance(data, (list, tuple)) and "inhomogeneous" in str(err):
        lengths = [len(d) if isinstance(d, (list, tuple)) else "a number" for d in data]
        return message(op, f"rows of different lengths {lengths} cannot form a rectangular array",
                       source.here(), "pad the rows to one length, or keep them as separate tensors")
    return message(op, f"cannot make a tensor from {_peek(data)}", source.here(),
                   "pass numbers: a number, a (nested) list of numbers or a numpy array")


class Tensor:
    r"""An n-dimensional array that remembers how it was computed.

    Rules: `requires_grad=True` makes every op on this tensor record a node, so that
    `backward()` can fill `.grad`. Leaves are tensors you made; non-leaves have a
    `grad_fn`. Only floating-point tensors can require grad.

    Args:
        data: a number, a nested list of numbers, a numpy array or a Tensor (copied).
        requires_grad: record operations on this tensor for autograd.
        name: a label shown in graphs and error messages.
        dtype: a numpy dtype; default float64 for Python data, kept for numpy arrays.

    Example:
        >>> import tinygrad_edu as tg
        >>> x = tg.tensor([1.0, 2.0], requires_grad=True, name="x")
        >>> y = (x * x).sum()
        >>> y.backward()
        >>> x.grad
        tensor([2., 4.])
    """

    __slots__ = ("data", "_grad", "requires_grad", "grad_fn", "name", "_vc", "_id",
                 "_accumulator", "_retains_grad", "_hooks", "__weakref__")
    __array_ufunc__ = None  # `ndarray + Tensor` must call Tensor.__radd__, not numpy
    __array_priority__ = 1000

    def __init__(self, data: Any, requires_grad: bool = False, name: str | None = None,
                 dtype: Any = None) -> None:
        arr = _to_array(data, dtype, "tensor")
        if requires_grad and arr.dtype.kind != "f":
            raise DataError(
                message("tensor", f"only floating-point tensors can require grad, got {arr.dtype}",
                        source.here(), "make it a float: tg.tensor(data, dtype='float64')")
            )
        self.data = arr
        self._grad = None
        self.requires_grad = bool(requires_grad)
        self.grad_fn = None
        self.name = name
        self._vc = [0, None]  # version counter shared by in-place changes: [version, site]
        self._id = next(_tensor_ids)
        self._accumulator = None
        self._retains_grad = False
        self._hooks = None

    @classmethod
    def _make(cls, data: Any) -> Tensor:
        """Wrap an op result without validation (the hot path)."""
        t = cls.__new__(cls)
        t.data = data if type(data) is np.ndarray else np.asarray(data)
        t._grad = None
        t.requires_grad = False
        t.grad_fn = None
        t.name = None
        t._vc = [0, None]
        t._id = next(_tensor_ids)
        t._accumulator = None
        t._retains_grad = False
        t._hooks = None
        return t

    # --- attributes ---------------------------------------------------------------------

    shape = property(lambda self: self.data.shape)
    ndim = property(lambda self: self.data.ndim)
    dtype = property(lambda self: self.data.dtype)
    size = property(lambda self: self.data.size)

    @property
    def is_leaf(self) -> bool:
        """True for tensors made by the user (no `grad_fn`); only leaves get `.grad`."""
        return self.grad_fn is None

    @property
    def grad(self) -> Tensor | None:
        """The gradient that `backward()` accumulated here (leaves, or after `retain_grad`)."""
        if self.grad_fn is not None and not self._retains_grad and self.requires_grad:
            warnings.warn(self._non_leaf_grad_message(), UserWarning, stacklevel=2)
        return self._grad

    def _non_leaf_grad_message(self) -> str:
        # the learner's own variable name for this tensor, looked up in the frame that read
        # .grad: after `w = w - lr * w.grad` the new w has no name= of its own
        import sys

        caller = sys._getframe(2)
        var = next((k for scope in (caller.f_locals, caller.f_globals)
                    for k, v in scope.items() if v is self and not k.startswith("_")), None)
        what = f"tensor {var!r}" if var else self._label()
        ref = var or "w"
        op = self.grad_fn.name.removesuffix("Backward")
        no_grad = ("to update a weight and keep it a leaf, do it without recording:\n"
                   f"        with tg.no_grad():\n            {ref} -= lr * {ref}.grad")
        retain = f"call {ref}.retain_grad() before backward() to keep an intermediate's grad"
        # `w = w - lr * w.grad` (Sub/Add) is the usual slip; otherwise an intermediate
        hint = (f"{no_grad}\n      (or {retain})" if op in ("Sub", "Add")
                else f"{retain}\n      (or, {no_grad})")
        return message(
            ".grad", f"{what} is not a leaf: it was computed (by {op}), so backward() does not "
            "fill its .grad (it stays None)", getattr(self.grad_fn, "site", None), hint)

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None and not isinstance(value, Tensor):
            value = Tensor(value)
        self._grad = value

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
        return self.data

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self.data if dtype is None else self.data.astype(dtype)

    def item(self) -> float:
        """The value of a one-element tensor as a Python number."""
        if self.data.size != 1:
            raise ValueError(
                message("item", f"only a tensor with one element converts to a Python number, "
                        f"got shape {self.shape}", source.here(),
                        "reduce it first (t.sum().item()) or pick one element (t[0].item())")
            )
        _notify_concrete(self, "item")
        return self.data.item()

    def tolist(self) -> Any:
        """The values as (nested) Python lists."""
        return self.data.tolist()

    def __float__(self) -> float:
        return float(self._scalar("float"))

    def __int__(self) -> int:
        return int(self._scalar("int"))

    def __bool__(self) -> bool:
        return bool(self._scalar("bool"))

    def _scalar(self, kind: str) -> Any:
        if self.data.size != 1:
            raise ValueError(
                message(kind, f"the truth value or number of a tensor with shape {self.shape} is "
                        "ambiguous: it has more than one element", source.here(),
                        "reduce it first, e.g. (t > 0).all() via t.min() > 0, or t.sum()")
            )
        _notify_concrete(self, kind)
        return self.data.item()

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError(message("len", "a 0-d tensor (a single number) has no length",
                                    source.here()))
        return self.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    __hash__ = object.__hash__

    def __format__(self, spec: str) -> str:
        """`f"{loss:.4f}"` formats a one-element tensor like its number."""
        if spec and self.data.size == 1:
            return format(self.data.item(), spec)
        return format(repr(self), spec)

    def __repr__(self) -> str:
        # equal digits per element, at most 4, like PyTorch: tensor([0.5000, 0.2500])
        body = np.array2string(self.data, separator=", ", prefix="tensor(", precision=4,
                               floatmode="maxprec_equal")
        extra = []
        if self.data.dtype not in (np.float64, np.bool_):
            extra.append(f"dtype={self.data.dtype}")
        if self.grad_fn is not None:
            extra.append(f"grad_fn=<{self.grad_fn.name}>")
        elif self.requires_grad:
            extra.append("requires_grad=True")
        if self.name:
            extra.append(f"name={self.name!r}")
        return f"tensor({body}{', ' if extra else ''}{', '.join(extra)})"

    # --- autograd -----------------------------------------------------------------------

    def backward(self, gradient: Any = None, retain_graph: bool | None = None,
                 create_graph: bool = False) -> None:
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
        """A new tensor sharing this one's data, cut off from the graph."""
        t = Tensor._make(self.data)
        t._vc = self._vc  # same storage: in-place changes show up in both
        t.name = self.name
        return t

    def requires_grad_(self, flag: bool = True) -> Tensor:
        """Set `requires_grad` in place on a leaf; returns self."""
        if self.grad_fn is not None and not flag:
            raise BackwardError(message("requires_grad_", "only a leaf's requires_grad can be "
                                        "switched off", source.here(), "use .detach() instead"))
        if flag and self.dtype.kind != "f":
            raise DataError(message("requires_grad_", f"only floating-point tensors can require "
                                    f"grad, got {self.dtype}", source.here()))
        self.requires_grad = flag
        return self

    def retain_grad(self) -> None:
        """Ask backward() to also fill `.grad` of this non-leaf tensor."""
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
        if not self.requires_grad:
            raise BackwardError(message("register_hook", f"{self._label()} does not require grad, "
                                        "so no gradient will ever reach the hook", source.here(),
                                        "create it with requires_grad=True"))
        owner = self if self.grad_fn is None else self.grad_fn
        hooks = None
        if owner is not self:
            if owner._pre_hooks is None:
                owner._pre_hooks = []
            hooks = owner._pre_hooks
        if owner is self:
            if self._hooks is None:
                self._hooks = []
            hooks = self._hooks
        hooks.append(hook)
        return _HookHandle(hooks, hook)

    # --- in-place -----------------------------------------------------------------------

    def _inplace(self, op_name: str, fn: Callable[[Tensor], Tensor]) -> Tensor:
        """Apply `self = fn(self)` in place, keeping the graph and the version counter right."""
        if _state.enabled and self.requires_grad and self.grad_fn is None:
            raise InplaceError(
                message(op_name, f"{self._label()} is a leaf that requires grad; changing it in "
                        "place would hide the change from autograd", source.here(),
                        "update it inside `with tg.no_grad():` (as optimizers do), "
                        f"or write {_var(self)} = {_var(self)} ... out of place")
            )
        if _state.enabled and self.grad_fn is not None and self.data.base is not None:
            # a view (reshape, .T, broadcast) shares its base's storage but not its graph:
            # writing through it would change the base behind autograd's back (PyTorch
            # rewrites the base's graph here; we ask for the explicit form instead)
            raise InplaceError(
                message(op_name, f"{self._label()} is a view of another tensor in the graph "
                        f"(made by {self.grad_fn.name}); changing it in place would change that "
                        "tensor without autograd knowing", source.here(),
                        "write it out of place (y = y * 3), or .clone() the view first"))
        if _state.enabled:
            # the op may save its input for backward (`y *= x` needs the old y), and the copy
            # below overwrites this storage: give it the old values in a storage of their own
            old = Tensor._make(self.data.copy())
            old.requires_grad, old.grad_fn = self.requires_grad, self.grad_fn
        else:
            old = self  # no graph is recorded (an optimizer step), so nothing can be saved
        result = fn(old)
        if result.shape != self.shape:
            raise ShapeError(
                message(op_name, f"the result has shape {result.shape!r} but the tensor being "
                        f"changed in place has shape {self.shape!r}", source.here(),
                        "in-place ops cannot change a tensor's shape; write it out of place")
            )
        try:
            np.copyto(self.data, result.data, casting="same_kind")
        except TypeError:
            raise DataError(message(op_name, f"cannot store a {result.dtype} result in a "
                                    f"{self.dtype} tensor in place", source.here())) from None
        self._vc[0] += 1
        self._vc[1] = source.capture(2)
        if result.grad_fn is not None:
            self.grad_fn = result.grad_fn
            self.requires_grad = True
            self.grad_fn._out_ref = weakref.ref(self)
        return self

    def add_(self, other: Any) -> Tensor:
        return self._inplace("add_", lambda t: t + other)

    def sub_(self, other: Any) -> Tensor:
        return self._inplace("sub_", lambda t: t - other)

    def mul_(self, other: Any) -> Tensor:
        return self._inplace("mul_", lambda t: t * other)

    def div_(self, other: Any) -> Tensor:
        return self._inplace("div_", lambda t: t / other)

    def fill_(self, value: float) -> Tensor:
        return self._inplace("fill_", lambda t: Fill.apply(t, value=value))

    def zero_(self) -> Tensor:
        return self._inplace("zero_", lambda t: Fill.apply(t, value=0.0))

    __iadd__ = add_
    __isub__ = sub_
    __imul__ = mul_
    __itruediv__ = div_

    # --- arithmetic (one-liners over ops) -----------------------------------------------

    def __add__(self, other: Any) -> Tensor:
        return Add.apply(self, _operand(other, self))

    def __radd__(self, other: Any) -> Tensor:
        return Add.apply(_operand(other, self), self)

    def __sub__(self, other: Any) -> Tensor:
        return Sub.apply(self, _operand(other, self))

    def __rsub__(self, other: Any) -> Tensor:
        return Sub.apply(_operand(other, self), self)

    def __mul__(self, other: Any) -> Tensor:
        return Mul.apply(self, _operand(other, self))

    def __rmul__(self, other: Any) -> Tensor:
        return Mul.apply(_operand(other, self), self)

    def __truediv__(self, other: Any) -> Tensor:
        return Div.apply(self, _operand(other, self))

    def __rtruediv__(self, other: Any) -> Tensor:
        return Div.apply(_operand(other, self), self)

    def __pow__(self, other: Any) -> Tensor:
        return Pow.apply(self, _operand(other, self))

    def __rpow__(self, other: Any) -> Tensor:
        return Pow.apply(_operand(other, self), self)

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
            raise TypeError(message("invert", f"~ needs a boolean tensor, got {self.dtype}",
                                    source.here()))
        return Tensor._make(~self.data)

    def __and__(self, other: Any) -> Tensor:
        return Tensor._make(np.logical_and(self.data, _array_of(other, self)))

    def __or__(self, other: Any) -> Tensor:
        return Tensor._make(np.logical_or(self.data, _array_of(other, self)))

    # --- elementwise functions ----------------------------------------------------------

    def exp(self) -> Tensor:
        return Exp.apply(self)

    def log(self) -> Tensor:
        return Log.apply(self)

    def tanh(self) -> Tensor:
        return Tanh.apply(self)

    def relu(self) -> Tensor:
        return ReLU.apply(self)

    def sigmoid(self) -> Tensor:
        return Sigmoid.apply(self)

    def abs(self) -> Tensor:
        return Abs.apply(self)

    def sqrt(self) -> Tensor:
        return Sqrt.apply(self)

    def clip(self, min: float | None = None, max: float | None = None) -> Tensor:  # noqa: A002
        return Clip.apply(self, lo=min, hi=max)

    def softmax(self, axis: int = -1, *, dim: int | None = None) -> Tensor:
        return Softmax.apply(self, axis=_axis(axis, dim))

    def log_softmax(self, axis: int = -1, *, dim: int | None = None) -> Tensor:
        return LogSoftmax.apply(self, axis=_axis(axis, dim))

    def clone(self) -> Tensor:
        """A copy with its own storage that stays in the graph (CloneBackward)."""
        return Clone.apply(self)

    def astype(self, dtype: Any) -> Tensor:
        """A copy converted to `dtype`; the gradient is converted back."""
        return Cast.apply(self, dtype=np.dtype(dtype))

    def float(self) -> Tensor:
        return self.astype(np.float32)

    def double(self) -> Tensor:
        return self.astype(np.float64)

    # --- reductions (numpy conventions: axis, keepdims) ----------------------------------

    # `dim=` is accepted as PyTorch's spelling of numpy's `axis=`, so habits carry over

    def sum(self, axis: Any = None, keepdims: bool = False, *, dim: Any = None) -> Tensor:
        return Sum.apply(self, axis=_axis(axis, dim), keepdims=keepdims)

    def mean(self, axis: Any = None, keepdims: bool = False, *, dim: Any = None) -> Tensor:
        total = self.sum(axis, keepdims, dim=dim)  # a bad axis fails here, in the house format
        return total / max(self.data.size // max(total.data.size, 1), 1)

    def max(self, axis: Any = None, keepdims: bool = False, *, dim: Any = None) -> Tensor:
        return Max.apply(self, axis=_axis(axis, dim), keepdims=keepdims)

    def min(self, axis: Any = None, keepdims: bool = False, *, dim: Any = None) -> Tensor:
        return Min.apply(self, axis=_axis(axis, dim), keepdims=keepdims)

    def argmax(self, axis: int | None = None) -> Tensor:
        return Tensor._make(np.asarray(np.argmax(self.data, axis=axis)))

    def argmin(self, axis: int | None = None) -> Tensor:
        return Tensor._make(np.asarray(np.argmin(self.data, axis=axis)))

    def all(self) -> Tensor:
        return Tensor._make(np.asarray(np.all(self.data)))

    def any(self) -> Tensor:
        return Tensor._make(np.asarray(np.any(self.data)))

    # --- movement -----------------------------------------------------------------------

    def reshape(self, *shape: Any) -> Tensor:
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return Reshape.apply(self, shape=tuple(int(s) for s in shape))

    def view(self, *shape: Any) -> Tensor:
        return self.reshape(*shape)

    def flatten(self) -> Tensor:
        return self.reshape(-1)

    def transpose(self, *axes: Any) -> Tensor:
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        return Transpose.apply(self, axes=tuple(axes) if axes else None)

    def swapaxes(self, a: int, b: int) -> Tensor:
        axes = list(range(self.ndim))
        for ax in (a, b):
            if not -self.ndim <= ax < self.ndim:
                raise ShapeError(message(
                    "swapaxes", f"axis {ax} is out of range for a tensor with {self.ndim} axes "
                    f"(shape {self.shape!r})", source.here(),
                    f"use axes 0 .. {self.ndim - 1} (or -1 .. -{self.ndim})"))
        axes[a], axes[b] = axes[b], axes[a]
        return Transpose.apply(self, axes=tuple(axes))

    def broadcast_to(self, shape: tuple) -> Tensor:
        return BroadcastTo.apply(self, shape=tuple(shape))

    def __getitem__(self, index: Any) -> Tensor:
        return Index.apply(self, index=_index(index))

    def __setitem__(self, index: Any, value: Any) -> None:
        """`t[i] = v` on data outside the graph (under `tg.no_grad()`, or no grad at all)."""
        tracked = self.requires_grad or (isinstance(value, Tensor) and value.requires_grad)
        if _state.enabled and tracked:
            raise InplaceError(
                message("setitem", f"cannot assign into {self._label()} while the graph is "
                        "being recorded: autograd has no rule for item assignment", source.here(),
                        "build the result with tg.where(mask, new, old) or tg.cat([...]), or "
                        "assign inside `with tg.no_grad():`"))
        try:
            self.data[_index(index)] = _array_of(value, self)
        except (ValueError, IndexError) as e:
            raise ShapeError(message("setitem", f"{e} (tensor shape {self.shape!r})",
                                     source.here())) from None
        self._vc[0] += 1
        self._vc[1] = source.capture(2)


class _HookHandle:
    """Returned by `register_hook`; `.remove()` takes the hook off again."""

    def __init__(self, hooks: list, hook: Callable) -> None:
        self._hooks, self._hook = hooks, hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)

    def __repr__(self) -> str:
        return "<hook handle>"


def _var(t: Tensor) -> str:
    """A name to put in a code hint: the tensor's name if it is a Python identifier."""
    return t.name if t.name and t.name.isidentifier() else "x"


_constants: dict = {}  # (number, dtype) -> read-only 0-d array


def _operand(other: Any, like: Tensor) -> Any:
    """Tensors pass through; a Python scalar takes `like`'s float dtype (no promotion)."""
    if isinstance(other, Tensor):
        return other
    if type(other) is float or type(other) is int:  # the common case, without an ABC check
        dt = like.data.dtype
        key = (other, dt)
        const = _constants.get(key)
        if const is None:  # np.asarray costs as much as the op itself on small tensors
            if len(_constants) > 1000:
                _constants.clear()
            const = np.asarray(other, dtype=dt if dt.kind == "f" else np.float64)
            const.flags.writeable = False  # shared by every op that used this number
            _constants[key] = const
        return const
    if isinstance(other, (bool, numbers.Number)) and not isinstance(other, np.ndarray):
        dt = like.data.dtype if like.data.dtype.kind == "f" else np.float64
        return np.asarray(other, dtype=dt)
    if isinstance(other, np.ndarray):
        return other
    return _to_array(other, None, "operand")


def _array_of(other: Any, like: Tensor) -> np.ndarray:
    out = _operand(other, like)
    return out.data if isinstance(out, Tensor) else out


def _compare(ufunc: Any, symbol: str, a: Tensor, b: Any) -> Tensor:
    other = _array_of(b, a)
    try:
        out = Tensor._make(ufunc(a.data, other))
    except ValueError:
        raise ShapeError(_function.broadcast_message(symbol, a.shape, np.shape(other))) from None
    if _function._observers:  # no graph node, but a static trace must still record it
        args = (a, b if isinstance(b, Tensor) else other)
        for obs in tuple(_function._observers):
            obs.on_op(None, Compare, args, {"symbol": symbol}, out)
    return out


def _axis(axis: Any, dim: Any = None) -> Any:
    if dim is not None:
        axis = dim
    if isinstance(axis, list):
        return tuple(axis)
    return axis


def _index(index: Any) -> Any:
    """Tensors inside an index become arrays (integer-array or boolean indexing)."""
    if isinstance(index, Tensor):
        return _int_index(index.data)
    if isinstance(index, tuple):
        return tuple(_int_index(i.data) if isinstance(i, Tensor) else i for i in index)
    if isinstance(index, list):
        return np.asarray(index)
    return index


def _int_index(arr: np.ndarray) -> np.ndarray:
    # Class labels often arrive as float tensors (Python lists become float64)
    if arr.dtype.kind == "f" and np.all(arr == np.round(arr)):
        return arr.astype(np.intp)
    return arr


def _notify_concrete(t: Tensor, kind: str) -> None:
    """Tell observers (the tracer) that a tensor became a Python value here."""
    for obs in tuple(_function._observers):
        hook = getattr(obs, "on_concrete", None)
        if hook is not None:
            hook(t, kind)


_function._Tensor = Tensor
_function._Tensor_ids = _tensor_ids

# Imported last: the ops import this module's Tensor through function.py.
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
    ReLU,
    Sigmoid,
    Sqrt,
    Sub,
    Tanh,
)
from .ops.linalg import MatMul  # noqa: E402
from .ops.movement import BroadcastTo, Index, Reshape, Transpose  # noqa: E402
from .ops.reduce import LogSoftmax, Max, Min, Softmax, Sum  # noqa: E402
