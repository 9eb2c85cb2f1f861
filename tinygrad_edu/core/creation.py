"""Making tensors: `tensor`, `zeros`, `ones`, `randn`, ..., and joining them (`cat`, `stack`,
`where`). Random tensors draw from numpy's global generator, so `np.random.seed(0)` (or
`tg.manual_seed(0)`) makes a lesson repeatable. Core layer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import source
from .errors import DataError, message
from .ops.elementwise import Where
from .ops.movement import Cat, Stack
from .tensor import Tensor, _operand, _sizes


def tensor(data: Any, requires_grad: bool = False, name: str | None = None,
           dtype: Any = None) -> Tensor:
    r"""Make a tensor from a number, a nested list or a numpy array (see `Tensor`).

    Example:
        >>> import tinygrad_edu as tg
        >>> tg.tensor([[1, 2], [3, 4]]).dtype
        dtype('float64')
    """
    return Tensor(data, requires_grad=requires_grad, name=name, dtype=dtype)


def from_numpy(array: np.ndarray) -> Tensor:
    r"""A tensor that shares `array`'s memory, as `torch.from_numpy` does.

    Rules: no copy is made, so changing the array changes the tensor and the other way
    round (and backward notices such a change only through the tensor's own in-place
    ops). The dtype is kept. A read-only array gives a tensor that refuses in-place ops.
    `tg.tensor(array)` copies instead.

    Example:
        >>> import numpy as np, tinygrad_edu as tg
        >>> a = np.zeros(3)
        >>> t = tg.from_numpy(a)
        >>> a[0] = 5.0
        >>> t
        tensor([5., 0., 0.])
    """
    if not isinstance(array, np.ndarray):
        raise DataError(message("from_numpy", f"expected a numpy array, got "
                                f"{type(array).__name__}", source.here(),
                                "use tg.tensor(data) for numbers and lists"))
    if array.dtype.kind not in "fiub":
        raise DataError(message("from_numpy", f"cannot share an array of dtype {array.dtype}: "
                                "a tensor holds real numbers", source.here()))
    return Tensor._make(array)


def as_tensor(data: Any, dtype: Any = None) -> Tensor:
    r"""`data` as a tensor, sharing memory where it can (as `torch.as_tensor`).

    Rules: a Tensor of the right dtype comes back as it is; a numpy array of the right
    dtype is shared (`tg.from_numpy`); anything else is converted into a new tensor.

    Example:
        >>> import numpy as np, tinygrad_edu as tg
        >>> a = np.ones(2)
        >>> tg.as_tensor(a).numpy() is a
        True
    """
    same = dtype is None or np.dtype(dtype) == getattr(data, "dtype", None)
    if isinstance(data, Tensor) and same:
        return data
    if isinstance(data, np.ndarray) and same:
        return from_numpy(data)
    return Tensor(data, dtype=dtype)


def _shape(shape: tuple, op: str) -> tuple:
    return _sizes(shape, op, smallest=0)


def _leaf(arr: np.ndarray, requires_grad: bool, name: str | None) -> Tensor:
    t = Tensor._make(arr)  # `arr` is new: no copy needed
    t.name = name
    return t.requires_grad_() if requires_grad else t


def zeros(*shape: Any, requires_grad: bool = False, name: str | None = None,
          dtype: Any = np.float64) -> Tensor:
    """A tensor of zeros: `tg.zeros(2, 3)` or `tg.zeros((2, 3))`."""
    return _leaf(np.zeros(_shape(shape, "zeros"), dtype=dtype), requires_grad, name)


def ones(*shape: Any, requires_grad: bool = False, name: str | None = None,
         dtype: Any = np.float64) -> Tensor:
    """A tensor of ones."""
    return _leaf(np.ones(_shape(shape, "ones"), dtype=dtype), requires_grad, name)


def full(shape: Any, value: float, requires_grad: bool = False, name: str | None = None,
         dtype: Any = np.float64) -> Tensor:
    """A tensor filled with `value`."""
    return _leaf(np.full(_shape((shape,), "full"), value, dtype=dtype), requires_grad, name)


def randn(*shape: Any, requires_grad: bool = False, name: str | None = None,
          dtype: Any = np.float64) -> Tensor:
    """Standard normal samples (numpy's global generator: seed it for repeatable runs)."""
    return _leaf(np.random.randn(*_shape(shape, "randn")).astype(dtype, copy=False), requires_grad, name)


def rand(*shape: Any, requires_grad: bool = False, name: str | None = None,
         dtype: Any = np.float64) -> Tensor:
    """Uniform samples in [0, 1)."""
    return _leaf(np.random.rand(*_shape(shape, "rand")).astype(dtype, copy=False), requires_grad, name)


def arange(start: float, stop: float | None = None, step: float = 1, requires_grad: bool = False,
           name: str | None = None, dtype: Any = np.float64) -> Tensor:
    """Evenly spaced values, like `np.arange` (float64 by default, as all Python numbers)."""
    arr = np.arange(start, stop, step, dtype=dtype) if stop is not None else \
        np.arange(start, dtype=dtype)
    return _leaf(arr, requires_grad, name)


def zeros_like(t: Tensor, requires_grad: bool = False) -> Tensor:
    return _leaf(np.zeros_like(np.asarray(t)), requires_grad, None)


def ones_like(t: Tensor, requires_grad: bool = False) -> Tensor:
    return _leaf(np.ones_like(np.asarray(t)), requires_grad, None)


def randn_like(t: Tensor, requires_grad: bool = False) -> Tensor:
    arr = np.asarray(t)
    return _leaf(np.random.randn(*arr.shape).astype(arr.dtype), requires_grad, None)


def manual_seed(seed: int) -> None:
    """Seed numpy's global generator, which every random tensor and data set uses."""
    np.random.seed(seed)


def _tensors(op: str, tensors: Sequence[Any]) -> list:
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)) or not tensors:
        raise DataError(message(op, "expected a non-empty list or tuple of tensors", source.here(),
                                f"write tg.{op}([a, b], axis=0)"))
    return [t if isinstance(t, Tensor) else Tensor(t) for t in tensors]


def cat(tensors: Sequence[Tensor], axis: int = 0, *, dim: int | None = None) -> Tensor:
    r"""Join tensors along an existing axis (numpy's `concatenate`).

    Example:
        >>> import tinygrad_edu as tg
        >>> tg.cat([tg.ones(2), tg.zeros(1)]).shape
        (3,)
    """
    return Cat.apply(*_tensors("cat", tensors), axis=axis if dim is None else dim)


def stack(tensors: Sequence[Tensor], axis: int = 0, *, dim: int | None = None) -> Tensor:
    r"""Join same-shaped tensors along a new axis.

    Example:
        >>> import tinygrad_edu as tg
        >>> tg.stack([tg.ones(2), tg.zeros(2)]).shape
        (2, 2)
    """
    return Stack.apply(*_tensors("stack", tensors), axis=axis if dim is None else dim)


def where(condition: Any, a: Any, b: Any) -> Tensor:
    r"""Pick from `a` where `condition` holds, else from `b` (with broadcasting).

    Example:
        >>> import tinygrad_edu as tg
        >>> x = tg.tensor([-1.0, 2.0])
        >>> tg.where(x > 0, x, 0.0)
        tensor([0., 2.])
    """
    like = a if isinstance(a, Tensor) else b if isinstance(b, Tensor) else Tensor(0.0)
    # a Tensor condition is passed as is, so a static trace sees where it came from
    cond = condition if isinstance(condition, Tensor) else np.asarray(condition)
    if cond.dtype != np.bool_:  # PyTorch refuses a float mask too: 0.5 is not "true"
        raise DataError(message("where", f"the condition must be boolean (such as x > 0), got "
                                f"dtype {cond.dtype}", source.here(),
                                "compare to make a mask: tg.where(x > 0, x, 0.0)"))
    return Where.apply(cond, _operand(a, like), _operand(b, like))


__all__ = ["tensor", "from_numpy", "as_tensor", "zeros", "ones", "full", "randn", "rand", "arange", "zeros_like", "ones_like",
           "randn_like", "manual_seed", "cat", "stack", "where"]
