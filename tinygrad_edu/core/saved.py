"""What an op saves for backward, and the version check that guards it.

`ctx.save_for_backward(x, out)` in forward keeps the values a backward rule needs;
`ctx.saved_tensors` in backward hands them back (`unpack`). In between, the learner may
change a saved tensor in place (`x += 1`): its numbers are then no longer the ones forward
used, and the gradient would be wrong. So each saved input is kept with its tensor's
version counter and the version it had (`entries`), and `unpack` refuses a value whose
counter moved on, naming both lines (PyTorch's "modified by an inplace operation").

A node keeps one entry per saved value: `(array, tensor, version counter, version)`,
where `tensor` is the input Tensor it came from, `OUTPUT` for the op's own output (rebuilt
only when needed), or None for a constant or a value computed in forward.
Core layer: numpy and the standard library only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

import tinygrad_edu.core.tensor as _tensor  # imported before Tensor exists: read `.Tensor` when used

from . import source
from .errors import GraphFreedError, InplaceError, message
from .grad_mode import _thread

if TYPE_CHECKING:
    from .function import Function
    from .tensor import Tensor

OUTPUT = object()  # marks the op's own output among its saved values
NOTHING = (None, None, None, None)  # the entry of a saved None


def unpack(node: Function) -> tuple[Any, ...]:
    """`ctx.saved_tensors`: the saved values, arrays normally, Tensors under create_graph.

    Raises GraphFreedError after a backward without `retain_graph=True`, and InplaceError
    if a saved tensor was changed in place since it was saved.
    """
    saved = node._saved
    if saved is None:
        raise GraphFreedError(_freed_message(node))
    if node._unpack is not None or node._as_tensors:
        return _unpack_special(node, saved)
    arrays = []
    for arr, _, vc, version in saved:
        if vc is not None and vc[0] != version:  # changed in place since forward saved it
            raise InplaceError(modified_message(node, vc, version))
        arrays.append(arr)
    return tuple(arrays)


def _unpack_special(node: Function, saved: tuple[Any, ...]) -> tuple[Any, ...]:
    """`unpack` through `saved_tensors_hooks`, or as Tensors for `create_graph=True`."""
    if node._unpack is not None:
        return _unpacked(node, saved, node._unpack)
    out: list[Any] = []
    for arr, tensor, vc, version in saved:
        if vc is not None and vc[0] != version:
            raise InplaceError(modified_message(node, vc, version))
        if arr is None:
            out.append(arr)
        elif tensor is OUTPUT:  # rebuilt with this node as grad_fn: d(out)/d(in) flows
            t = _tensor.Tensor._make(arr)
            t._requires_grad, t._grad_fn = True, node._output_grad_fn()
            out.append(t)
        else:
            out.append(tensor if tensor is not None else _tensor.Tensor._make(arr))
    return tuple(out)


def _unpacked(
    node: Function, saved: tuple[Any, ...], unpack_hook: Callable[[Any], Any]
) -> tuple[Any, ...]:
    """The saved values handed back by `saved_tensors_hooks`' unpack hook."""
    out: list[Any] = []
    for packed, *_ in saved:
        if packed is None:
            out.append(None)
            continue
        t = unpack_hook(packed)
        if not isinstance(t, _tensor.Tensor):
            raise TypeError(
                message(
                    f"{node.name}.backward",
                    f"the unpack hook of saved_tensors_hooks returned "
                    f"{type(t).__name__}, not a Tensor",
                    node.site,
                    "return the tensor the pack hook was given (or an equal one)",
                )
            )
        out.append(t if node._as_tensors else t._data)
    return tuple(out)


def _freed_message(node: Function) -> str:
    return message(
        f"{node.name}.backward",
        "the values this op saved for backward were freed by an earlier "
        "backward() through the same graph",
        node.site,
        "pass retain_graph=True to the first backward() if you need to go "
        "through the graph twice, or rebuild the graph by running forward again",
    )


def modified_message(node: Function, vc: np.ndarray, version: int) -> str:
    """The InplaceError's text: the op that saved the value, and the line that changed it."""
    where = source.resolve(vc[1])
    changed = f" at {where}" if where is not None else ""
    return message(
        f"{node.name}.backward",
        f"a tensor this op saved for backward was modified in place{changed} "
        f"(version {version} when saved, {vc[0]} now)",
        node.site,
        "use an out-of-place op (x = x + 1 rather than x += 1), or modify a .clone()",
    )


def entries(node: Function, args: tuple[Any, ...], result: Any, out: Tensor) -> tuple[Any, ...]:
    """What `save_for_backward` kept, each as `(array, tensor, version counter, version)`:
    `unpack` refuses a value changed in place since (its counter moved on)."""
    kept: list[tuple[Any, Any, Any, Any]] = []
    for x in node._to_save:
        if x is None:
            kept.append(NOTHING)
        elif x is result or x is out._data:  # the output: rebuilt lazily when needed
            kept.append((out._data, OUTPUT, out._vc, 0))
        else:
            for a in args:
                if isinstance(a, _tensor.Tensor) and a._data is x:  # an input tensor's array
                    vc = a._vc
                    kept.append((x, a, vc, vc[0]))
                    break
            else:  # a constant, a copy, or computed in forward: nothing can change it
                kept.append(x.entry(node._next) if type(x) is InputCopy else (x, None, None, None))
    node._to_save = ()
    return tuple(kept)


def for_replay(node: Function) -> None:
    """Store what forward saved as plain arrays, with no version checks (a static program's
    replay, debug's finite-difference check run a backward rule outside a graph)."""
    node._saved = tuple((plain(x), None, None, None) for x in node._to_save)
    node._to_save = ()


def shown(node: Function, i: int) -> Any:
    """Saved value `i` as PyTorch's `grad_fn._saved_<name>` shows it: the input tensor
    itself, a new tensor for the output, a Python number for a number, None where backward
    did not need it."""
    unpack(node)  # raises GraphFreedError / InplaceError as backward would
    arr, tensor, _, _ = (node._saved or ())[i]
    if arr is None:
        return None
    if node._unpack is not None:
        return node._unpack(arr)
    if tensor is not None and tensor is not OUTPUT:
        return tensor
    if tensor is None and np.ndim(arr) == 0 and type(node).saved_names[i] == "exponent":
        return arr.item()  # `x ** 2`: PyTorch keeps the exponent as a Python number
    return _tensor.Tensor._make(arr)


class SavedValue(NamedTuple):
    """One value an op saved for backward, as `Node.saved_values()` shows it."""

    value: Any  # the array (None for a saved None)
    tensor: Any  # the input Tensor it came from, or None (a constant, or computed in forward)
    is_output: bool  # the op's own output


def values(node: Any) -> tuple[SavedValue, ...]:
    """`Node.saved_values()`: what was saved, for looking at (no version check)."""
    return tuple(
        SavedValue(arr, None if t is OUTPUT else t, t is OUTPUT)
        for arr, t, _vc, _version in node._saved or ()
    )


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


def pack(node: Function, out: Tensor) -> None:
    """`saved_tensors_hooks`: each saved value goes through the innermost pack hook, and
    backward gets it back through the matching unpack hook (no version check: the hooks
    own the value now, as in PyTorch)."""
    hooks = _thread.state.saved_hooks
    pack_hook, unpack_hook = hooks[-1]
    _thread.state.saved_hooks = []  # ops inside the pack hook save without it, as in PyTorch
    try:
        packed: list[tuple[Any, ...]] = []
        for arr, tensor, _, _ in node._saved or ():
            if arr is None:
                packed.append(NOTHING)
                continue
            t = (
                out
                if tensor is OUTPUT
                else tensor
                if tensor is not None
                else _tensor.Tensor._make(arr)
            )
            packed.append((pack_hook(t), None, None, None))
    finally:
        _thread.state.saved_hooks = hooks
    node._saved, node._unpack = tuple(packed), unpack_hook


class InputCopy:
    """A copy of input number `index` that forward saves in place of the input, as PyTorch's
    batched matmul saves a reshaped copy: a later in-place change of the input does not reach
    it, and under `create_graph` a gradient through it still goes to the input's graph."""

    __slots__ = ("array", "index")

    def __init__(self, array: np.ndarray, index: int) -> None:
        self.array, self.index = array, index

    def entry(self, edges: tuple[Any, ...]) -> tuple[Any, ...]:
        """The saved entry: the copy, as a tensor whose grad_fn is the input's node then."""
        t = _tensor.Tensor._make(self.array)
        node = edges[self.index]
        t._requires_grad, t._grad_fn = node is not None, node
        return (self.array, t, None, None)


def plain(saved: Any) -> Any:
    """A value given to `save_for_backward` as a plain array (an `InputCopy`'s copy), for
    running a backward rule outside a graph."""
    return saved.array if type(saved) is InputCopy else saved
