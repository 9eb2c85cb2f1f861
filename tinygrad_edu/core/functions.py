"""`torch.exp(x)`, `torch.sum(x, dim)`, ...: PyTorch's functions, each the Tensor method.

`tg.f(x, *args)` is `x.f(*args)` after making `x` a tensor, so there is one
implementation of each op (the method) and one place to read it. Core layer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .tensor import TORCH_OP_MODULES, Tensor
from .torch_api import allclose, equal, isclose, maximum, minimum, multinomial

_METHODS = [
    "exp",
    "log",
    "sin",
    "cos",
    "tanh",
    "sigmoid",
    "relu",
    "sqrt",
    "abs",
    "erf",
    "neg",
    "square",
    "reciprocal",
    "clamp",
    "clip",
    "matmul",
    "mm",
    "bmm",
    "dot",
    "sum",
    "mean",
    "max",
    "min",
    "argmax",
    "argmin",
    "topk",
    "norm",
    "std",
    "var",
    "logsumexp",
    "numel",
    "flatten",
    "squeeze",
    "unsqueeze",
    "transpose",
    "permute",
    "reshape",
    "softmax",
    "log_softmax",
    "masked_fill",
    "add",
    "sub",
    "mul",
    "div",
    "clone",
    "detach",
    "t",
    "prod",
    "cumsum",
    "sort",
    "argsort",
    "unique",
    "tril",
    "triu",
    "split",
    "chunk",
    "unbind",
    "sign",
    "round",
    "floor",
    "ceil",
    "log1p",
    "expm1",
    "movedim",
    "gather",
    "repeat",
]

# PyTorch's further ops (issue 30, core/ops/): each method is also torch.<name>(x, ...)
_METHODS += [
    n
    for m in TORCH_OP_MODULES
    for n in m.METHODS
    if n.strip("_") == n
    and n not in _METHODS
    and n not in globals()  # not multinomial
    and not any(n in getattr(k, "FUNCTIONS", {}) for k in TORCH_OP_MODULES)  # its own function
]


def _method(name: str) -> Callable[..., Any]:
    def fn(input: Any, *args: Any, out: Any = None, **kwargs: Any) -> Any:  # noqa: A002
        x = input if isinstance(input, Tensor) else Tensor(input)
        result = getattr(x, name)(*args, **kwargs)
        return result if out is None else out.copy_(result)  # `out=`: written into `out`

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"`tg.{name}(x, ...)` is `x.{name}(...)`, as in PyTorch."
    return fn


for _name in _METHODS:
    globals()[_name] = _method(_name)


def pow(input: Any, exponent: Any, *, out: Any = None) -> Any:  # noqa: A001, A002
    """`tg.pow(x, e)` is `x.pow(e)`; `tg.pow(2, x)` is `2 ** x`, as in PyTorch: the number
    takes x's dtype (made into a tensor first, 2 would be float64 and make the result so)."""
    if isinstance(exponent, Tensor) and isinstance(input, (int, float)):
        result = input**exponent
        return result if out is None else out.copy_(result)
    return _method("pow")(input, exponent, out=out)


# torch.<name> with no Tensor method (issue 30)
_FUNCTIONS = {k: f for m in TORCH_OP_MODULES for k, f in getattr(m, "FUNCTIONS", {}).items()}
globals().update(_FUNCTIONS)

if TYPE_CHECKING:  # the loop above, as type checkers and IDEs see it (tests/core/test_types.py)

    def _typed(input: Any, *args: Any, out: Any = None, **kwargs: Any) -> Tensor: ...  # noqa: A002

    exp = log = sin = cos = tanh = sigmoid = relu = sqrt = erf = neg = square = _typed
    reciprocal = clamp = clip = matmul = mm = bmm = dot = mean = argmax = argmin = topk = _typed
    norm = std = var = logsumexp = numel = flatten = squeeze = unsqueeze = transpose = _typed
    permute = reshape = softmax = log_softmax = masked_fill = add = sub = mul = div = _typed
    clone = detach = t = prod = cumsum = sort = argsort = unique = tril = triu = split = _typed
    chunk = unbind = sign = floor = ceil = log1p = expm1 = movedim = gather = repeat = _typed
    sum = max = min = abs = round = _typed  # noqa: A001 - see SHADOWING (pow: above)


def is_tensor(obj: Any) -> bool:
    return isinstance(obj, Tensor)


# NOTE: `from tinygrad_edu import *` must not replace Python's sum, max, min, abs, pow and
# round in a learner's notebook, so those are attributes (tg.sum) but not in __all__
SHADOWING = ("sum", "max", "min", "abs", "pow", "round")
__all__ = [
    *(n for n in _METHODS if n not in SHADOWING),
    "is_tensor",
    "maximum",
    "minimum",
    "equal",
    "allclose",
    "isclose",
    "multinomial",
    *_FUNCTIONS,
]
