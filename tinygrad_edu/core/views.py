"""Storage: views share their base's numbers, and in-place changes keep autograd right.

A *view* (basic indexing `x[0]`, `.T`, `reshape` where numpy can, `broadcast_to`) is a
tensor whose numpy array is a window on another tensor's array, its *base*. As in PyTorch:

- a view shares its base's version counter, so changing either in place is noticed by
  every op that saved one of them (backward then raises instead of using stale values);
- writing through a view changes the base: `x[0][1] = 5` sets one number of `x`;
- when a view is changed in place while a graph is recorded, the base's graph is
  rewritten ("rebased"): the base's new `grad_fn` is `CopySlices`, "the old base with
  this window replaced by the new values", so gradients reach both the old values and
  whatever was written into the window;
- a view remembers the view ops that cut it from its base; after the base changed in
  place, its `grad_fn` is cut again from the base's new one the next time it is read.

`Function.apply` calls `track` for view ops; `Tensor`'s in-place methods call `inplace`.
Core layer: numpy and the standard library only.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

import tinygrad_edu.core.tensor as _tensor  # imported before Tensor exists: read `.Tensor` when used

from . import function as _function
from . import saved, source
from .engine import _ndarray
from .errors import DataError, InplaceError, ShapeError, message
from .function import Function
from .grad_fit import broadcasts_to
from .grad_mode import _thread, _using_grad
from .ops.common import compute_into, data, is_array, store_into, where

if TYPE_CHECKING:
    from .tensor import Tensor


class ViewOf:
    """What a view knows about its base (a tensor's `_view`; None for a tensor that owns
    its storage)."""

    __slots__ = ("base", "ops", "version", "piece_of")

    def __init__(
        self, base: Any, ops: tuple[Any, ...] | None, version: int, piece_of: str | None = None
    ):
        self.base = base  # the tensor that owns the storage (never itself a view)
        self.ops = ops  # the view ops that cut it from `base`; None if made in no_grad mode
        self.version = version  # the storage version its grad_fn was cut at
        # "unbind" / "split" for one of the views such a call returned (or a view of one),
        # made with grad mode on: PyTorch never rebases those (see `pieces`)
        self.piece_of = piece_of


def shares(view: np.ndarray, arr: np.ndarray) -> bool:
    """Is `view` a window on `arr`'s memory? (An empty window counts: it still is a view.)"""
    owner = arr.base if arr.base is not None else arr
    base = view.base
    if base is not None and type(base) is not _ndarray:
        # as_strided (expand's) puts numpy's holder object between the view and the array:
        # for an empty view, nothing else says whose window it is (no memory is shared)
        base = getattr(base, "base", base)
    return base is owner or base is arr or np.may_share_memory(view, arr)


def track(out: Any, src: Any, cls: type, kwargs: dict[Any, Any]) -> None:
    """Make `out` (the result of view op `cls` on tensor `src`) a view of `src`'s base."""
    out._vc = src._vc  # one storage, one version counter
    of = src._view
    if of is None:
        ops = ((cls, kwargs),) if _thread.state.enabled else None
        out._view = ViewOf(src, ops, src._vc[0])
    else:  # a view of a view: cut from the same base, one op further
        ops = of.ops + ((cls, kwargs),) if of.ops is not None and _thread.state.enabled else None
        out._view = ViewOf(of.base, ops, src._vc[0], of.piece_of)


def pieces(views: tuple[Any, ...], fn: str) -> tuple[Any, ...]:
    """Mark the views that `fn` (unbind, split, chunk) returned. As in PyTorch, such a view
    made with grad mode on can never be rebased: changing it in place is refused, and so
    is using it once its base (or another view of the base) changed in place."""
    if _thread.state.enabled:
        for v in views:
            if v._view is not None:
                v._view.piece_of = fn
    return views


def refresh(view: Any, strict: bool = True) -> None:
    """Cut the view's `grad_fn` again from its base's, after the base changed in place.
    `strict=False` (reading `requires_grad`) leaves a piece of unbind/split as it is,
    instead of refusing it."""
    of = view._view
    if of.piece_of is not None and of.ops is not None and of.base._requires_grad:
        if not strict:
            return
        raise InplaceError(
            message(
                of.piece_of,
                f"{view._label()} is one of the views {of.piece_of}() returned (or a view of "
                "one), and its base was changed in place since; as in PyTorch, such a view "
                "cannot follow the change",
                source.here(),
                f"call {of.piece_of}() again after the in-place change, or .clone() the "
                "pieces when you take them",
            )
        )
    of.version = view._vc[0]
    if of.ops is None or not of.base._requires_grad:
        return  # a view made in no_grad mode stays out of the graph, as in PyTorch
    old = view._grad_fn
    node = _fresh_cut(of, old)
    _produced(node, view)
    _move_retained(old, node, view)
    view._grad_fn, view._requires_grad = node, True


def inplace(
    t: Tensor,
    op: str,
    fn: Callable[[Any], Any],
    fill: bool = False,
    ufunc: Any = None,
    operand: Any = None,
    above: int = 0,
) -> Tensor:
    """Apply `t = fn(t)` in place: the numbers change in `t`'s storage (and so in its base
    and every other view of it), the version counter goes up, and the graph says so.
    `ufunc(t, operand)` is fn in numpy, when it is one (add_, mul_): see `_into_storage`.
    `above`: how many frames between this call and the learner's are known to be the
    package's (`Tensor.add_` and `_inplace`: 2), so the site's frame walk skips them."""
    # NOTE: filling a broadcast view is allowed, as in PyTorch (one value for all the elements
    # that share a number); its gradient is refused in CopySlices.backward, as PyTorch does
    check_writable(t, op, fill=_one_value(op, fill, t, operand))
    state = _thread.state
    of = t._view
    if state.enabled:
        _refuse_leaf_change(t, op)
        old, own = _old_values(t, of)  # ops that save their input need the old values
    else:
        src = _into_storage(t, operand, state.observers) if ufunc is not None else None
        if src is not None:
            # PERF: no graph is recorded (an optimizer's step): computed straight into t's
            # storage, without making the op's new array and copying it in (for a big
            # weight, fresh memory costs as much as the arithmetic)
            compute_into(ufunc, t._data, src)
            bump(t, skip=3 + above)  # counted from caller_site: bump 1, inplace 2, its caller 3
            return t
        old = t  # nothing can be saved
    result = fn(old)
    if state.enabled:
        old._grad_fn = own
    _check_same_shape(t, op, result)
    if state.enabled and of is not None and (result._requires_grad or of.base._requires_grad):
        _refuse_unrecordable_view(t, of, op)
        _rebase(t, result)
        _watch_saved_output(result._grad_fn, t, into_view=True)
        return t
    _store(t, op, result._data)
    if result._grad_fn is not None:
        _move_retained(t._grad_fn, result._grad_fn, t)
        t._grad_fn, t._requires_grad = result._grad_fn, True
        _produced(t._grad_fn, t)
        _watch_saved_output(t._grad_fn, t)
    return t


def _old_values(t: Any, of: ViewOf | None) -> tuple[Any, Any]:
    """A snapshot of `t` for the op to compute from, and the node that made `t`'s numbers."""
    old = _snapshot(t)
    _retire(t, old)
    own = old._grad_fn
    if of is not None and of.ops is not None and _hooked(own, len(of.ops)):
        # NOTE: as in PyTorch, the new values are computed from a fresh cut of the base,
        # not through the view's own node: a hook registered on the view (or on a view
        # it was cut from) before the change sees only gradients that reach the old
        # values by other paths. What the op saves of them leads to the view's own node
        # (`inplace` puts it back), as PyTorch's saved `self`: a second backward runs the
        # hooks (without hooks the two nodes send the same gradients: the own one is kept)
        old._grad_fn = _fresh_cut(of, t._grad_fn)
    return old, own


def _one_value(op: str, fill: bool, t: Any, operand: Any) -> bool:
    """Does the op write one value everywhere (a fill), or nothing (a copy_ of a window's
    own numbers, which PyTorch's copy_ returns from at once)? A broadcast view takes both."""
    if fill or op in ("fill_", "zero_"):
        return True
    return op == "copy_" and _same_numbers(t._data, operand._data)


def step_into(t: Any, operand: Any, ufunc: Any) -> bool:
    """`t op= operand` straight into t's storage when no graph is recorded, in the one form
    an optimizer's step takes (`p -= lr * p.grad` under no_grad): a float tensor that owns
    its writable memory, and a Python float or a distinct array of t's shape and dtype that
    owns its own. True if done; False leaves every other case to `inplace`'s checks."""
    # PERF: `check_overlap`, `check_writable`, `inplace` and `_into_storage` settle this case
    # in one pass here: their calls and their repeated reads (the thread's state, numpy's
    # flags) cost an optimizer's step more than the subtraction of a small weight
    # An array that owns its memory has no `base` (a cheaper read than `flags.owndata`: the
    # flags are a new object each time), nor a zero stride (a broadcast is a view)
    state = _thread.state
    arr = t._data
    if state.enabled or state.observers or arr.dtype.kind != "f" or arr.base is not None:
        return False
    if not arr.flags.writeable:
        return False
    src = operand._data if type(operand) is _tensor.Tensor else operand
    if type(src) is not float:
        if type(src) is not _ndarray or src is arr or src.base is not None:
            return False  # (sharing memory with t, or of no array type: checked in full)
        if src.dtype is not arr.dtype or src.shape != arr.shape:
            return False
    compute_into(ufunc, arr, src)
    counter = t._counter if t._counter is not None else t._vc  # `_vc` makes it if need be
    counter[0] += 1
    counter[1] = source.caller_site(4)  # the learner's line: past _inplace and add_ (`bump`)
    return True


def _into_storage(t: Any, operand: Any, observers: list[Any]) -> Any:
    """The operand's numbers, if `t op= operand` written straight into t's storage gives the
    numbers the op would: a float tensor, and a Python float or an array of t's dtype that
    does not make t bigger (else None: the op runs, and its checks name any problem). Not
    while an observer watches ops: a trace must see the op."""
    arr = t._data
    dtype = arr.dtype
    if observers or dtype.kind != "f":
        return None
    src = operand._data if isinstance(operand, _tensor.Tensor) else operand
    if type(src) is float:
        return src  # numpy takes a Python float in t's dtype, as the op does (`_operand`)
    if type(src) is not np.ndarray or (src.dtype is not dtype and src.dtype != dtype):
        return None
    shape = src.shape
    return src if shape == arr.shape or broadcasts_to(shape, arr.shape) else None


def _watch_saved_output(node: Any, t: Any, into_view: bool = False) -> None:
    """An op that saved its own output (`relu_`, `exp_` keep their result) saved what are now
    `t`'s numbers: watch `t`'s version, so that changing `t` again refuses the backward, as in
    PyTorch (the values kept are the result's own copy). Written into a view, a gradient
    through that saved output goes through the view's node (`Function._output_grad_fn`)."""
    if node is None or not node._saved or node._unpack is not None:
        return
    if into_view and any(tag is saved.OUTPUT for _, tag, _, _ in node._saved):
        node._written_into = weakref.ref(t.grad_fn)  # weak: t.grad_fn leads back here
    vc = t._vc
    node._saved = tuple(
        (arr, tag, vc, vc[0]) if tag is saved.OUTPUT else (arr, tag, counter, version)
        for arr, tag, counter, version in node._saved
    )


def _hooked(node: Any, view_ops: int) -> bool:
    """Has a hook been put on the node of this view, or of a view between it and its base
    (the first `view_ops` nodes down the chain of view ops)?"""
    for _ in range(view_ops):
        if node is None:
            return False
        if node._pre_hooks:
            return True
        node = node._edge0  # the view op's one input (None past a leaf's AccumulateGrad)
    return False


def _check_same_shape(t: Any, op: str, result: Any) -> None:
    """An in-place op writes into `t`'s own storage, so its result must have `t`'s shape."""
    if result.shape != t.shape:
        raise ShapeError(
            message(
                op,
                f"the result has shape {result.shape!r} but the tensor being changed in place "
                f"has shape {t.shape!r}",
                source.here(),
                "in-place ops cannot change a tensor's shape; write it out of place",
            )
        )


def _refuse_unrecordable_view(t: Any, of: Any, op: str) -> None:
    """The views whose in-place change PyTorch refuses to record (autograd could not say
    which gradient was meant)."""
    if of.ops is None:
        raise InplaceError(
            message(
                op,
                f"{t._label()} is a view made inside `with tg.no_grad():` and is being "
                "changed in place with grad mode on; autograd cannot tell which of the two "
                "you meant",
                source.here(),
                "make the view and change it both inside the no_grad block, or both outside",
            )
        )
    if of.piece_of is not None:
        raise InplaceError(
            message(
                op,
                f"{t._label()} is one of the views {of.piece_of}() returned (or a view of "
                "one), and PyTorch does not let those change in place",
                source.here(),
                "change a .clone() of it, or change the tensor it came from",
            )
        )


def _rebase(view: Any, value: Any) -> None:
    """The base's new value is CopySlices(old base, value): the window now holds `value`."""
    base = view._view.base
    old_base = _snapshot(base)
    _retire(base, old_base)
    new_base = CopySlices.apply(old_base, value, view=view._view.ops)
    _store(base, "copy", new_base._data)  # writes the view's numbers too: one storage
    _move_retained(base._grad_fn, new_base._grad_fn, base)
    base._grad_fn, base._requires_grad = new_base._grad_fn, True
    _produced(base._grad_fn, base)
    refresh(view)  # the view's grad_fn is now a window on the base's new graph


def _retire(t: Any, old: Any) -> None:
    """`t` is about to change: the node that made its numbers now points at `old`, their
    snapshot, so a drawing shows each version of `t` with its own values."""
    if t._grad_fn is not None:
        old.name = t.name
        _produced(t._grad_fn, old)


def _move_retained(old: Any, new: Any, t: Any) -> None:
    """`t.retain_grad()` follows `t` to its new node: `.grad` is for its current values."""
    ref = getattr(old, "_retained", None)
    if ref is not None and ref() is t:
        old._retained, new._retained = None, ref


def _fresh_cut(of: ViewOf, old: Any) -> Any:
    """A new node for the view `of` describes, cut from its base's current graph."""
    observers, _thread.state.observers = _thread.state.observers, []  # not a new op
    try:
        with _using_grad(True):
            node = _cut(of.base, of.ops or ())._grad_fn
    finally:
        _thread.state.observers = observers
    if old is not None and old._code is not None:
        node._code, node._offset = old._code, old._offset  # still built at the view's line
    return node


def _produced(node: Any, t: Any) -> None:
    """`node`'s output is now `t`: the tensor an in-place op wrote into, or the snapshot
    of the values it replaced (`_retire`)."""
    node._out_number = t._id
    node._out_ref = t if _function._config["retain_outputs"] else None


def check_writable(t: Any, op: str, region: np.ndarray | None = None, fill: bool = False) -> None:
    """Refuse to write where the numbers cannot take it: into a broadcast view, where one
    number in memory stands for several elements (PyTorch refuses too), or into a
    read-only numpy array. `region` is the part written, when not all of `t`; `fill`: the
    same value goes everywhere (fill_, zero_), which a broadcast view can take."""
    arr = t._data if region is None else region
    if not fill and 0 in arr.strides and _broadcast(arr):  # `0 in`: most arrays, without a call
        raise InplaceError(
            message(
                op,
                f"{t._label()} is a broadcast view: several of its elements are one number in "
                "memory, so changing them in place is ambiguous",
                source.here(),
                "change a .clone() of it instead",
            )
        )
    if not arr.flags.writeable:
        raise InplaceError(
            message(
                op,
                f"the numpy array behind {t._label()} is read-only, so it cannot be changed in "
                "place",
                source.here(),
                "make a tensor with its own copy of the numbers: tg.tensor(array) copies",
            )
        )


def _broadcast(arr: np.ndarray) -> bool:
    """Do several elements of `arr` share one number in memory (a zero stride)?"""
    # `0 in strides` first: a C-level test that settles almost every array
    return (
        0 in arr.strides
        and arr.size > 0
        and any(step == 0 and n > 1 for step, n in zip(arr.strides, arr.shape))
    )


def _same_numbers(a: np.ndarray, b: np.ndarray, b_strides: tuple[int, ...] | None = None) -> bool:
    """Are `a` and `b` the same window on memory: start, shape and strides (PyTorch's "full
    overlap")? `b_strides` are given for `b` expanded to `a`'s shape (`_expand_strides`).
    One allowance: on an axis of size 1, numpy writes a zero stride where PyTorch keeps one
    of its own (`x[None]`, numpy's expand), so a zero stride that numpy made matches any
    there (`x.sub_(x.expand(x.shape))` runs in PyTorch)."""
    if a.__array_interface__["data"][0] != b.__array_interface__["data"][0]:
        return False
    if b_strides is not None:  # computed as PyTorch does: a zero there is PyTorch's own
        return all(
            sa == sb or (n == 1 and sa == 0) for n, sa, sb in zip(a.shape, a.strides, b_strides)
        )
    return a.shape == b.shape and all(
        sa == sb or (n == 1 and 0 in (sa, sb)) for n, sa, sb in zip(a.shape, a.strides, b.strides)
    )


def _expand_strides(src: np.ndarray, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """The strides PyTorch's setitem gives `src` once expanded to `shape`, or None where the
    shapes do not broadcast (the op's own check names them). As `copy_to` in PyTorch: the
    leading axes of size 1 are dropped first; an axis the expand adds in front gets 0 if it
    is longer than 1, else its size after times the stride after (0 for the last axis); an
    axis of size 1 stretched gets 0; any other keeps its stride."""
    sizes, strides = list(src.shape), list(src.strides)
    while sizes and sizes[0] == 1:
        del sizes[0], strides[0]
    if len(sizes) > len(shape):
        return None
    out = [0] * len(shape)
    new = len(shape) - len(sizes)
    for i in reversed(range(len(shape))):
        if i >= new:
            size, stride = sizes[i - new], strides[i - new]
            if size != shape[i]:
                if size != 1:
                    return None
                stride = 0
        elif shape[i] != 1 or i + 1 == len(shape):
            stride = 0
        else:
            stride = shape[i + 1] * out[i + 1]
        out[i] = stride
    return tuple(out)


def check_overlap(
    t: Any, other: Any, op: str, region: np.ndarray | None = None, same_ok: bool = True
) -> None:
    """Refuse an operand that shares some, but not all, of the numbers being written:
    the result would depend on the order numbers are written in (PyTorch refuses too).
    With `same_ok=False` (a write through an integer-array index or a mask, PyTorch's
    index_put_) sharing any number is refused."""
    arr = t._data if region is None else region
    src = getattr(other, "_data", other)
    if not isinstance(src, np.ndarray):
        return
    # NOTE: two arrays that each own their memory share none unless they are one array;
    # settled here without np.shares_memory, a dispatched numpy call (~2.8k instructions)
    if arr is not src and arr.flags.owndata and src.flags.owndata:
        return
    if not np.shares_memory(arr, src):
        return
    expanded = None
    if region is not None and src.shape != arr.shape:
        # setitem writes as PyTorch's does: a one-number value fills the region (read once,
        # nothing to refuse); any other is expanded to the region first, and its numbers are
        # the region's when start and strides match: `v[0:1] = x` for a (1, 3) view v of x
        # writes x's numbers into themselves, `t[0:1:2] = t[0]` is refused. (An in-place op
        # compares its operand as it is: `v.sub_(x)` is refused in both)
        if src.ndim == 0 and same_ok:
            return
        expanded = _expand_strides(src, arr.shape)
        if expanded is None:
            return  # shapes that do not broadcast: the op's own check names them
    if same_ok and _same_numbers(arr, src, expanded):
        return  # the very same numbers, as in `x.add_(x)`: fine
    raise InplaceError(
        message(
            op,
            f"the value being written shares some of its numbers with {t._label()}, the "
            "tensor being written, so the result would depend on the order of the writes",
            source.here(),
            "write a .clone() of the value instead",
        )
    )


def bump(t: Any, skip: int = 2) -> None:
    """Record that `t`'s storage changed: every op that saved it (or a view) will know.
    The site's frame walk starts `skip` frames up (2: bump's caller)."""
    counter = t._counter if t._counter is not None else t._vc  # `_vc` makes it if need be
    counter[0] += 1
    # the line that changed it, for InplaceError. NOTE: the walk makes each frame it passes
    # into an object (~0.5k instructions each), so a caller that knows how many of the
    # frames above it are the package's says so
    counter[1] = source.caller_site(skip)


def _store(t: Any, op: str, values: np.ndarray) -> None:
    try:
        store_into(t._data, values)
    except TypeError:
        raise DataError(
            message(
                op,
                f"cannot store a {values.dtype} result in a {t.dtype} tensor in place",
                source.here(),
                f"make it a {values.dtype} tensor first: "
                f"{_var(t)} = {_var(t)}.astype('{values.dtype}')",
            )
        ) from None
    bump(t)


def _refuse_leaf_change(t: Any, op: str) -> None:
    leaf = t._view.base if t._view is not None else t
    if not (leaf._requires_grad and leaf._grad_fn is None):
        return
    if leaf is t:
        what, other = "is a leaf", f"write {_var(t)} = {_var(t)} ... out of place"
    else:
        what, other = f"is a view of {leaf._label()}, a leaf,", f"change {_var(leaf)}.clone()"
    raise InplaceError(
        message(
            op,
            f"{t._label()} {what} that requires grad; changing it in place would hide the "
            "change from autograd",
            source.here(),
            f"update it inside `with tg.no_grad():` (as optimizers do), or {other}",
        )
    )


def _snapshot(t: Any) -> Any:
    """A tensor holding a copy of `t`'s numbers and standing for `t` in the graph."""
    old = type(t)._make(np.array(t._data, order="K", copy=True))
    old._requires_grad, old._grad_fn = t.requires_grad, t.grad_fn  # properties: refreshed
    return old


def _var(t: Any) -> str:
    """A name to put in a code hint: the tensor's name if it is a Python identifier."""
    return t.name if t.name and t.name.isidentifier() else "x"


def _cut(x: Any, view: tuple[Any, ...]) -> Any:
    """Apply a view's ops to `x`: differentiable ops on a Tensor, plain numpy on an array."""
    for cls, kwargs in view:
        x = cls.apply(x, **kwargs) if not is_array(x) else cls.forward(_Scratch(), x, **kwargs)
    return x


def _window(arr: np.ndarray, view: tuple[Any, ...]) -> np.ndarray:
    """The part of `arr` that `view` covers, as a writable numpy view of `arr`."""
    out: np.ndarray = _cut(arr, view)
    if out.size and not np.shares_memory(
        out, arr
    ):  # NOTE: never write into a copy and call it done
        raise InplaceError(
            message(
                "copy",
                "this view cannot be written through on a copy of its base",
                source.here(),
                "change a .clone() instead",
            )
        )
    return out


class _Scratch:
    """A throwaway `ctx` for running a view op's forward on plain arrays."""


class CopySlices(Function):
    """The base after one of its views was changed in place: `base` with the view's window
    replaced by `value` (PyTorch's node of the same name)."""

    @staticmethod
    def forward(ctx: Any, base: Any, value: Any, view: Any) -> Any:
        ctx.view = view
        out = np.array(base, order="K", copy=True)
        window = _window(out, view)
        if _broadcast(window):
            # several elements are one number (a fill through an index into an expanded
            # tensor): write only the elements the op changed, as PyTorch's index fill does,
            # or an unchanged copy of the same number, written later, would undo it
            changed = value != window
            if window.dtype.kind == "f":  # -0.0 over 0.0 is a change too
                changed |= np.signbit(value) != np.signbit(window)
            window[changed] = np.broadcast_to(value, window.shape)[changed]
        else:
            window[...] = value
        return out

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        if _broadcast(_window(np.empty(data(g).shape), ctx.view)):
            # NOTE: a broadcast view was filled in place: which element's gradient reaches the
            # shared number is ambiguous, so PyTorch refuses here too (not at the fill)
            raise InplaceError(
                message(
                    "CopySlices.backward",
                    "a broadcast view (from expand or broadcast_to) was "
                    "filled in place, and several of its elements share one number in memory, so "
                    "the gradient of the fill has no single place to go",
                    ctx.site,
                    "fill a .clone() of the expanded tensor instead",
                )
            )
        # the window's numbers came from `value`, the rest from the old base
        if is_array(g):
            g_base = np.array(g, order="K", copy=True)
            _window(g_base, ctx.view)[...] = 0
            return g_base, np.array(_window(g, ctx.view))
        outside = np.ones(g.shape, dtype=bool)
        _window(outside, ctx.view)[...] = False
        return where(outside, g, 0.0), _cut(g, ctx.view)
