"""Anomaly mode: stop at the first op whose forward or backward produces NaN or inf.

`detect_anomaly()` registers one observer with the core (`add_observer`) while it is
on, and none while it is off, so normal runs pay nothing. The observer looks at each
op's output after `Function.apply` and at the gradients each node's backward returns;
the first non-finite value raises `AnomalyError` naming the op, the statistics of its
inputs and outputs, the learner's line that built the node and a likely fix. The node
is marked (`node.set_mark("anomaly", ...)`) so the graph view can colour it.
Debug layer: imports tinygrad_edu.core, numpy and the standard library only.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Any

from ..core import source
from ..core.errors import message
from ..core.function import add_observer
from .describe import array_of, has_nonfinite, stats


class AnomalyError(RuntimeError):
    """An op produced NaN or inf while `tg.debug.detect_anomaly()` was on.

    Attributes: `node` (the graph node, None if no graph was recorded), `tensor` (the
    forward output, None for backward), `phase` ("forward" or "backward").
    """

    def __init__(
        self, text: str, node: Any = None, tensor: Any = None, phase: str = "forward"
    ) -> None:
        super().__init__(text)
        self.node, self.tensor, self.phase = node, tensor, phase


_FORWARD_HINTS = {
    "Log": "log of a negative number is nan and log(0) is -inf: clip the input first "
    "(x.clip(1e-12)) or add a small eps",
    "Sqrt": "sqrt of a negative number is nan: clip the input first (x.clip(0))",
    "Div": "division by zero gives inf (and 0/0 gives nan): add a small eps to the denominator",
    "Reciprocal": "1 / 0 gives inf: add a small eps to the denominator",
    "Exp": "exp overflows above about 709 (88 in float32): subtract the max first, "
    "or use log_softmax",
    "Pow": "a negative base to a fractional power is nan, and 0 to a negative power is inf",
}
_BACKWARD_HINTS = {
    "SqrtBackward": "sqrt has an infinite slope at 0: add a small eps inside the root, "
    "(x + 1e-12).sqrt()",
    "LogBackward": "the slope of log at 0 is infinite: clip the input (x.clip(1e-12)) "
    "or add a small eps",
    "DivBackward": "the gradient of a / b divides by b ** 2: keep the denominator away from 0",
    "ReciprocalBackward": "the gradient of 1 / x is -1 / x ** 2: keep x away from 0",
    "PowBackward": "x ** p has an infinite slope at 0 when p < 1: add a small eps to the base",
}
_INPUT_HINT = (
    "an input already held nan/inf before this op: check the data you fed in, "
    "or turn detect_anomaly() on earlier"
)
_FORWARD_DEFAULT = (
    "print this op's inputs (tg.debug.log_values) to see which values make it blow up"
)
_BACKWARD_DEFAULT = (
    "the backward rule made nan/inf from finite values: check the rule "
    "with tg.debug.check_nodes(loss), or the values it saved"
)


def _count(x: Any) -> str:
    import numpy as np

    a = np.asarray(array_of(x))
    nan, inf = int(np.isnan(a).sum()), int(np.isinf(a).sum())
    return " and ".join(p for p in (f"{nan} nan" if nan else "", f"{inf} inf" if inf else "") if p)


def _site(node: Any) -> Any:
    return node.site if node is not None else source.resolve(source.capture())


class _AnomalyObserver:
    """Checks every op result; raises at the first NaN/inf (forward or backward)."""

    def on_op(self, node: Any, cls: type, args: tuple, kwargs: dict, out: Any) -> None:
        if not has_nonfinite(out):
            return
        op = cls.__name__.lower()
        lines = [
            f"produced {_count(out)} in its output under detect_anomaly()",
            f"  output: {stats(out)}",
        ]
        bad_input = False
        for i, a in enumerate(args):
            if hasattr(a, "data") or hasattr(a, "shape"):
                lines.append(f"  input {i}: {stats(a)}")
                bad_input = bad_input or has_nonfinite(a)
        hint = _INPUT_HINT if bad_input else _FORWARD_HINTS.get(cls.__name__, _FORWARD_DEFAULT)
        if node is not None:
            node.set_mark("anomaly", f"forward produced {_count(out)}")
        raise AnomalyError(message(op, "\n".join(lines), _site(node), hint), node, out, "forward")

    def on_backward(self, node: Any, grad_output: Any, grads_in: tuple) -> None:
        for i, g in enumerate(grads_in):
            if g is None or not has_nonfinite(g):
                continue
            lines = [
                f"returned {_count(g)} in the gradient for input {i} under detect_anomaly()",
                f"  gradient for input {i}: {stats(g)}",
                f"  incoming gradient: {stats(grad_output)}",
            ]
            hint = _BACKWARD_HINTS.get(node.name, _BACKWARD_DEFAULT)
            if has_nonfinite(grad_output):
                hint = "the incoming gradient already held nan/inf (changed by a hook?)"
            node.set_mark("anomaly", f"backward produced {_count(g)}")
            raise AnomalyError(
                message(node.name, "\n".join(lines), node.site, hint), node, None, "backward"
            )


_OBSERVER = _AnomalyObserver()


class _Mode(threading.local):
    """Anomaly mode is per thread, like grad mode (and like PyTorch's)."""

    def __init__(self) -> None:
        # the remover of this thread's observer while the mode is on
        self.remove: Callable[[], None] | None = None


_mode = _Mode()


def is_anomaly_enabled() -> bool:
    """True while `detect_anomaly()` (with `check_nan=True`) is active in this thread."""
    return _mode.remove is not None


def _set_enabled(on: bool) -> None:
    if on and _mode.remove is None:
        _mode.remove = add_observer(_OBSERVER)
    elif not on and _mode.remove is not None:
        _mode.remove()
        _mode.remove = None


class detect_anomaly(contextlib.ContextDecorator):  # noqa: N801 - PyTorch's name
    r"""Raise at the first op whose forward output or backward gradient is NaN or inf.

    Rules: works as `with tg.debug.detect_anomaly():` and as a decorator. Both the
    forward ops and the backward rules run inside are checked; the error names the op
    (`log`, or `SqrtBackward` for a backward rule), the statistics of the bad values,
    the line that built the node and a hint. The node gets `_mark = "anomaly"` for the
    graph view. On exit the previous mode comes back (nesting with `check_nan=False`
    turns the checks off inside). Off by default; when off, nothing is registered.

    Args:
        check_nan: turn the checks on (True) or off (False) inside the block.

    Raises:
        AnomalyError: (a RuntimeError) at the first NaN/inf.

    Example:
        >>> import tinygrad_edu as tg
        >>> x = tg.tensor([1.0, -1.0], requires_grad=True)
        >>> try:
        ...     with tg.debug.detect_anomaly():
        ...         y = x.log()
        ... except tg.debug.AnomalyError as e:
        ...     print(str(e).splitlines()[1])
          output: shape (2,), 1 nan, 0 inf, finite min 0, max 0
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        self._prev: list[bool] = []  # a stack, so one instance can decorate a recursive fn

    def __repr__(self) -> str:
        return f"tg.debug.detect_anomaly(check_nan={self.check_nan!r})"

    def __enter__(self) -> detect_anomaly:
        self._prev.append(is_anomaly_enabled())
        _set_enabled(self.check_nan)
        return self

    def __exit__(self, *exc: Any) -> None:
        _set_enabled(self._prev.pop())
