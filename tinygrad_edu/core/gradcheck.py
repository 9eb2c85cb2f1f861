"""`gradcheck`: compare autograd's gradients with central finite differences.

    df/dx_i ~ (f(x + eps e_i) - f(x - eps e_i)) / (2 eps)

in float64, for every element of every input that requires grad. A non-scalar output
is first reduced with fixed random weights, so one backward checks the whole Jacobian
in one direction. Core layer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import source
from .engine import grad
from .errors import GradcheckError, message
from .grad_mode import no_grad
from .tensor import Tensor


def _scalar(out: Tensor, weights: np.ndarray) -> Tensor:
    return out if out._data.size == 1 and out.ndim == 0 else (out * weights).sum()


def gradcheck(
    fn: Callable[..., Tensor],
    inputs: Any,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
) -> bool:
    r"""Check `fn`'s autograd gradients against central differences.

    Rules: `inputs` is a Tensor or a tuple of them; those with `requires_grad=True` are
    checked, in float64 copies (float32 is too coarse for finite differences). Pass
    when |analytic - numeric| <= atol + rtol * |numeric| everywhere.

    Returns:
        True when every gradient matches.

    Raises:
        GradcheckError: (with `raise_exception=True`) naming the input, the element,
        both values and the op that built the output.

    Example:
        >>> import tinygrad_edu as tg
        >>> x = tg.randn(3, requires_grad=True)
        >>> tg.gradcheck(lambda x: (x * x).tanh().sum(), x)
        True
    """
    if not callable(fn):
        raise TypeError(
            message(
                "gradcheck",
                f"the first argument must be the function to check, got {type(fn).__name__}",
                source.here(),
                "tg.gradcheck(lambda x: (x * x).sum(), x)",
            )
        )
    ins = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    ins = tuple(
        Tensor(t._data.astype(np.float64), requires_grad=t.requires_grad, name=t.name)
        if isinstance(t, Tensor)
        else t
        for t in ins
    )
    out = fn(*ins)
    rng = np.random.default_rng(0)
    weights = rng.uniform(0.5, 1.5, size=out.shape)
    checked = [t for t in ins if isinstance(t, Tensor) and t.requires_grad]
    analytic = grad(_scalar(out, weights), checked, allow_unused=True)
    for k, (t, a) in enumerate(zip(checked, analytic)):
        a = np.zeros_like(t._data) if a is None else a._data
        numeric = _central_differences(fn, ins, t, weights, eps)
        bad = np.abs(a - numeric) > atol + rtol * np.abs(numeric)
        if bad.any():
            if not raise_exception:
                return False
            raise _mismatch(k, t, a, numeric, bad, out)
    return True


def _central_differences(
    fn: Callable[..., Any], ins: tuple[Any, ...], t: Tensor, weights: Any, eps: float
) -> Any:
    """d(weighted sum of fn's output)/d(t), one element at a time: (f(x+eps) - f(x-eps)) / 2eps."""
    numeric = np.zeros_like(t._data)
    flat = t._data.reshape(-1)  # a view: nudging it nudges t
    with no_grad():
        for i in range(flat.size):
            old = flat[i]
            flat[i] = old + eps
            hi = _scalar(fn(*ins), weights).item()
            flat[i] = old - eps
            lo = _scalar(fn(*ins), weights).item()
            flat[i] = old
            numeric.reshape(-1)[i] = (hi - lo) / (2 * eps)
    return numeric


def _mismatch(k: int, t: Tensor, a: Any, numeric: Any, bad: Any, out: Tensor) -> GradcheckError:
    """The error for input k: the first element that differs, both values, the op to look at."""
    idx = tuple(int(i) for i in np.argwhere(bad)[0])
    label = f"input {k}" + (f" ({t.name!r})" if t.name else "")
    op = out.grad_fn.name if out.grad_fn is not None else "the function"
    return GradcheckError(
        message(
            "gradcheck",
            f"gradient of {label} differs at index {idx}: autograd gives "
            f"{a[idx]:.6g}, finite differences give {numeric[idx]:.6g} "
            f"({int(bad.sum())} of {bad.size} elements differ)",
            out.grad_fn.site if out.grad_fn is not None else None,
            f"check the backward of {op} and of the ops before it "
            "(tg.debug.check_nodes(loss) finds the node)",
        )
    )
