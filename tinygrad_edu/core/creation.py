"""Making tensors: `tensor`, `zeros`, `ones`, `randn`, ..., and joining them (`cat`, `stack`,
`where`). Random tensors draw from numpy's global generator, so `np.random.seed(0)` (or
`tg.manual_seed(0)`) makes a lesson repeatable. Core layer.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any, overload

import numpy as np

from . import source
from .dtypes import check_device, get_default_dtype
from .errors import DataError, message
from .ops.arith.promotion import as_dtype, result_dtype
from .ops.elementwise import Where
from .ops.movement import Cat, Stack
from .tensor import Tensor, _dtype, _operand, _sizes, _to_array


def tensor(
    data: Any,
    requires_grad: bool = False,
    name: str | None = None,
    dtype: Any = None,
    device: Any = None,
) -> Tensor:
    r"""Make a tensor from a number, a nested list or a numpy array (see `Tensor`).

    Example:
        >>> import tinygrad_edu as tg
        >>> tg.tensor([[1, 2], [3, 4]]).dtype, tg.tensor([1.0, 2]).dtype
        (dtype('int64'), dtype('float64'))
    """
    check_device(device, "tensor")
    if dtype is None and not isinstance(data, (np.ndarray, Tensor)):
        # Python ints stay int64 here (Tensor(...), the class, makes floats, as in PyTorch)
        data = _to_array(data, None, "tensor")
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
        raise DataError(
            message(
                "from_numpy",
                f"expected a numpy array, got {type(array).__name__}",
                source.here(),
                "use tg.tensor(data) for numbers and lists",
            )
        )
    if array.dtype.kind not in "fiub":
        raise DataError(
            message(
                "from_numpy",
                f"cannot share an array of dtype {array.dtype}: a tensor holds real numbers",
                source.here(),
            )
        )
    return Tensor._make(array)


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    r"""`data` as a tensor, sharing memory where it can (as `torch.as_tensor`).

    Rules: a Tensor of the right dtype comes back as it is; a numpy array of the right
    dtype is shared (`tg.from_numpy`); anything else is converted into a new tensor.

    Example:
        >>> import numpy as np, tinygrad_edu as tg
        >>> a = np.ones(2)
        >>> tg.as_tensor(a).numpy() is a
        True
    """
    check_device(device, "as_tensor")
    same = dtype is None or np.dtype(dtype) == getattr(data, "dtype", None)
    if isinstance(data, Tensor) and same:
        return data
    if isinstance(data, np.ndarray) and same:
        return from_numpy(data)
    return Tensor(data, dtype=dtype)


def _shape(shape: tuple[Any, ...], op: str) -> tuple[Any, ...]:
    return _sizes(shape, op, smallest=0)


def _float(dtype: Any, op: str, device: Any = None) -> np.dtype:
    """`dtype` checked (the default float dtype when None), after checking `device`."""
    check_device(device, op)
    return get_default_dtype() if dtype is None else _dtype(dtype, op)


def _leaf(arr: np.ndarray, requires_grad: bool, name: str | None) -> Tensor:
    t = Tensor._make(arr)  # `arr` is new: no copy needed
    t.name = name
    return t.requires_grad_() if requires_grad else t


def _filled(
    op: str,
    value: float,
    shape: tuple[Any, ...],
    size: Any,
    requires_grad: bool,
    name: str | None,
    dtype: Any,
    device: Any,
) -> Tensor:
    """zeros, ones, empty: one value everywhere; the shape as `*shape` or as `size=`."""
    dt = _float(dtype, op, device)
    arr = np.full(_shape(shape if size is None else (size,), op), value, dtype=dt)
    return _leaf(arr, requires_grad, name)


# PyTorch's keywords on every maker: dtype (default: tg.get_default_dtype(), float64
# unless set), device ("cpu" only), requires_grad; `name` labels the tensor in graphs


def zeros(
    *shape: Any,
    size: Any = None,
    requires_grad: bool = False,
    name: str | None = None,
    dtype: Any = None,
    device: Any = None,
) -> Tensor:
    """A tensor of zeros: `tg.zeros(2, 3)` or `tg.zeros((2, 3))`."""
    return _filled("zeros", 0, shape, size, requires_grad, name, dtype, device)


def ones(
    *shape: Any,
    size: Any = None,
    requires_grad: bool = False,
    name: str | None = None,
    dtype: Any = None,
    device: Any = None,
) -> Tensor:
    """A tensor of ones."""
    return _filled("ones", 1, shape, size, requires_grad, name, dtype, device)


def empty(
    *shape: Any,
    size: Any = None,
    requires_grad: bool = False,
    name: str | None = None,
    dtype: Any = None,
    device: Any = None,
) -> Tensor:
    """PyTorch's uninitialised tensor; here zeros, so a lesson never shows stale memory."""
    return _filled("empty", 0, shape, size, requires_grad, name, dtype, device)


def full(
    shape: Any,
    value: float,
    requires_grad: bool = False,
    name: str | None = None,
    dtype: Any = None,
    device: Any = None,
) -> Tensor:
    """A tensor filled with `value` (an int value gives int64 and a bool bool, as PyTorch)."""
    if dtype is None and isinstance(value, (bool, np.bool_)):
        dtype = np.bool_
    elif dtype is None and isinstance(value, (int, np.integer)):
        dtype = np.int64  # PyTorch infers the dtype from the fill value
    dt = _float(dtype, "full", device)
    return _leaf(np.full(_shape((shape,), "full"), value, dtype=dt), requires_grad, name)


def eye(
    n: int,
    m: int | None = None,
    requires_grad: bool = False,
    name: str | None = None,
    dtype: Any = None,
    device: Any = None,
) -> Tensor:
    """The n x m identity matrix (m = n by default)."""
    dt = _float(dtype, "eye", device)
    return _leaf(np.eye(n, m, dtype=dt), requires_grad, name)


def randn(
    *shape: Any,
    size: Any = None,
    requires_grad: bool = False,
    name: str | None = None,
    dtype: Any = None,
    device: Any = None,
    generator: Any = None,
) -> Tensor:
    """Standard normal samples (numpy's global generator: seed it for repeatable runs)."""
    dt = _float(dtype, "randn", device)
    arr = np.asarray(
        random_source(generator).standard_normal(
            _shape(shape if size is None else (size,), "randn")
        )
    )
    return _leaf(arr.astype(dt, copy=False), requires_grad, name)


def rand(
    *shape: Any,
    size: Any = None,
    requires_grad: bool = False,
    name: str | None = None,
    dtype: Any = None,
    device: Any = None,
    generator: Any = None,
) -> Tensor:
    """Uniform samples in [0, 1)."""
    dt = _float(dtype, "rand", device)
    arr = np.asarray(
        random_source(generator).random_sample(_shape(shape if size is None else (size,), "rand"))
    )
    return _leaf(arr.astype(dt, copy=False), requires_grad, name)


def normal(
    mean: Any,
    std: Any = 1.0,
    size: Any = None,
    *,
    generator: Any = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    r"""Normal samples: `normal(0, 1, (2, 3))`, or one per element of tensor `mean`/`std`.

    Example:
        >>> import tinygrad_edu as tg
        >>> tg.normal(0.0, 0.01, (2, 3)).shape
        (2, 3)
    """
    m = np.asarray(mean._data if isinstance(mean, Tensor) else mean, dtype=float)
    s = np.asarray(std._data if isinstance(std, Tensor) else std, dtype=float)
    shape = _shape((size,), "normal") if size is not None else np.broadcast_shapes(m.shape, s.shape)
    like = mean if isinstance(mean, Tensor) else std if isinstance(std, Tensor) else None
    dt = _float(dtype if dtype is not None or like is None else like.dtype, "normal", device)
    arr = np.asarray(random_source(generator).normal(m, s, shape))
    return _leaf(arr.astype(dt, copy=False), requires_grad, None)


def randint(
    low: int,
    high: int | None = None,
    size: Any = None,
    *,
    dtype: Any = np.int64,
    device: Any = None,
    generator: Any = None,
) -> Tensor:
    """Random integers in [low, high) (or [0, low) given one bound), int64 as in PyTorch."""
    check_device(device, "randint")
    if high is None:
        low, high = 0, low
    if size is None:
        raise DataError(
            message("randint", "missing the size", source.here(), "write tg.randint(0, 10, (3,))")
        )
    arr = np.asarray(random_source(generator).randint(low, high, size=_shape((size,), "randint")))
    return _leaf(arr.astype(_dtype(dtype, "randint"), copy=False), False, None)


def randperm(n: int, *, dtype: Any = np.int64, device: Any = None, generator: Any = None) -> Tensor:
    """0 .. n-1 in random order."""
    check_device(device, "randperm")
    return _leaf(
        random_source(generator).permutation(n).astype(_dtype(dtype, "randperm")), False, None
    )


def arange(
    start: float,
    stop: float | None = None,
    step: float = 1,
    requires_grad: bool = False,
    name: str | None = None,
    dtype: Any = None,
    device: Any = None,
) -> Tensor:
    """Evenly spaced values, like `np.arange`: int64 when all bounds are ints, as PyTorch."""
    whole = all(isinstance(v, (int, np.integer)) for v in (start, stop, step) if v is not None)
    dt = _float(np.int64 if dtype is None and whole else dtype, "arange", device)
    arr = np.arange(start, stop, step, dtype=dt) if stop is not None else np.arange(start, dtype=dt)
    return _leaf(arr, requires_grad, name)


def linspace(
    start: float,
    end: float,
    steps: int,
    requires_grad: bool = False,
    name: str | None = None,
    dtype: Any = None,
    device: Any = None,
) -> Tensor:
    r"""`steps` evenly spaced values from `start` to `end`, both included (`torch.linspace`).

    Example:
        >>> import tinygrad_edu as tg
        >>> tg.linspace(0, 1, 5)
        tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])
    """
    dt = _float(dtype, "linspace", device)
    return _leaf(np.linspace(start, end, int(steps)).astype(dt), requires_grad, name)


def _like(t: Any, dtype: Any, device: Any, op: str) -> tuple[Any, ...]:
    arr = np.asarray(t)
    check_device(device, op)
    return arr.shape, (arr.dtype if dtype is None else _dtype(dtype, op))


def zeros_like(
    t: Tensor, requires_grad: bool = False, dtype: Any = None, device: Any = None
) -> Tensor:
    shape, dt = _like(t, dtype, device, "zeros_like")
    return _leaf(np.zeros(shape, dt), requires_grad, None)


def ones_like(
    t: Tensor, requires_grad: bool = False, dtype: Any = None, device: Any = None
) -> Tensor:
    shape, dt = _like(t, dtype, device, "ones_like")
    return _leaf(np.ones(shape, dt), requires_grad, None)


def empty_like(
    t: Tensor, requires_grad: bool = False, dtype: Any = None, device: Any = None
) -> Tensor:
    return zeros_like(t, requires_grad, dtype, device)


def full_like(
    t: Tensor, value: float, requires_grad: bool = False, dtype: Any = None, device: Any = None
) -> Tensor:
    shape, dt = _like(t, dtype, device, "full_like")
    return _leaf(np.full(shape, value, dt), requires_grad, None)


def randn_like(
    t: Tensor, requires_grad: bool = False, dtype: Any = None, device: Any = None
) -> Tensor:
    shape, dt = _like(t, dtype, device, "randn_like")
    return _leaf(np.asarray(np.random.randn(*shape)).astype(dt), requires_grad, None)


def rand_like(
    t: Tensor, requires_grad: bool = False, dtype: Any = None, device: Any = None
) -> Tensor:
    shape, dt = _like(t, dtype, device, "rand_like")
    return _leaf(np.asarray(np.random.random_sample(shape)).astype(dt), requires_grad, None)


def manual_seed(seed: int) -> Generator:
    """Seed numpy's global generator, which every random tensor and data set uses."""
    np.random.seed(seed)
    return Generator().manual_seed(seed)


class Generator:
    r"""A random generator of its own (`torch.Generator`): pass it as `generator=`.

    Rules: `manual_seed(s)` restarts it; it never touches numpy's global generator.

    Example:
        >>> import tinygrad_edu as tg
        >>> g = tg.Generator().manual_seed(0)
        >>> a = tg.rand(2, generator=g)
        >>> tg.equal(a, tg.rand(2, generator=tg.Generator().manual_seed(0)))
        True
    """

    def __init__(self, device: Any = "cpu") -> None:
        check_device(device, "Generator")
        self._state = np.random.RandomState()
        self._seed: int | None = None

    def manual_seed(self, seed: int) -> Generator:
        self._seed = int(seed)
        self._state = np.random.RandomState(self._seed)
        return self

    def initial_seed(self) -> int | None:
        return self._seed


def random_source(generator: Generator | None) -> Any:
    """The numpy generator to draw from: the given Generator's, else numpy's global one
    (`utils.data`'s shuffling draws from it too)."""
    return np.random if generator is None else generator._state  # the module draws globally


def _tensors(op: str, tensors: Sequence[Any]) -> list[Any]:
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)) or not tensors:
        raise DataError(
            message(
                op,
                "expected a non-empty list or tuple of tensors",
                source.here(),
                f"write tg.{op}([a, b], axis=0)",
            )
        )
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


_NOT_GIVEN: Any = object()


@overload
def where(condition: Any) -> tuple[Tensor, ...]: ...
@overload
def where(condition: Any, a: Any, b: Any) -> Tensor: ...
def where(condition: Any, a: Any = _NOT_GIVEN, b: Any = _NOT_GIVEN) -> Any:
    r"""Pick from `a` where `condition` holds, else from `b` (with broadcasting).

    Example:
        >>> import tinygrad_edu as tg
        >>> x = tg.tensor([-1.0, 2.0])
        >>> tg.where(x > 0, x, 0.0)
        tensor([0., 2.])
    """
    if a is _NOT_GIVEN and b is _NOT_GIVEN:  # PyTorch's where(condition): where it holds
        return (condition if isinstance(condition, Tensor) else Tensor(condition)).nonzero(
            as_tuple=True
        )
    if a is _NOT_GIVEN or b is _NOT_GIVEN:
        raise TypeError(
            message("where", "takes a condition and two values, or the condition alone",
                    source.here(), "tg.where(mask, x, 0.0), or tg.where(mask) for the indices")
        )  # fmt: skip
    like = a if isinstance(a, Tensor) else b if isinstance(b, Tensor) else Tensor(0.0)
    # a Tensor condition is passed as is, so a static trace sees where it came from
    cond = condition if isinstance(condition, Tensor) else np.asarray(condition)
    if cond.dtype != np.bool_:  # PyTorch refuses a float mask too: 0.5 is not "true"
        raise DataError(
            message(
                "where",
                f"the condition must be boolean (such as x > 0), got dtype {cond.dtype}",
                source.here(),
                "compare to make a mask: tg.where(x > 0, x, 0.0)",
            )
        )
    try:
        x, y = _operand(a, like), _operand(b, like)
    except OverflowError:  # an int `like`'s dtype cannot hold: stored as PyTorch stores it
        from .torch_api import _stored

        x, y = (_stored("where", v, like) if type(v) is int else _operand(v, like) for v in (a, b))
    return Where.apply(cond, *_in_one_dtype(x, y, a, b))


def _in_one_dtype(x: Any, y: Any, a: Any, b: Any) -> tuple[Any, Any]:
    """`where`'s branches (`x`, `y`: `a`, `b` as operands) in PyTorch's result dtype: an int
    tensor beside 2.5 gives the default float, where numpy would make float64 of the 0-d
    array. A tensor is cast in the graph, so its gradient comes back in its own dtype."""
    # a Python number yields to a tensor's kind, as in PyTorch; an array counts as a tensor
    given = [
        o if isinstance(o, (Tensor, numbers.Number)) else Tensor._make(np.asarray(p))
        for o, p in ((a, x), (b, y))
    ]
    dt = result_dtype(*given)
    return as_dtype(x, dt), as_dtype(y, dt)


__all__ = [
    "tensor",
    "from_numpy",
    "as_tensor",
    "zeros",
    "ones",
    "empty",
    "full",
    "eye",
    "randn",
    "rand",
    "normal",
    "randint",
    "randperm",
    "arange",
    "linspace",
    "zeros_like",
    "ones_like",
    "empty_like",
    "full_like",
    "randn_like",
    "rand_like",
    "manual_seed",
    "Generator",
    "cat",
    "stack",
    "where",
]
