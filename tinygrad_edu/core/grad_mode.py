"""Grad mode: whether new ops record a graph. `no_grad`, `enable_grad`, `is_grad_enabled`.

One private switch (`_thread.state.enabled`) behind one context manager, `_using_grad(flag)`;
the public names are thin wrappers that also work as decorators, as in PyTorch. The
switch is per thread, as in PyTorch: `no_grad()` or a backward pass in one thread never
turns recording off in another, and every new thread starts with grad mode on.
Core layer: stdlib only.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class ThreadState:
    """What the ops of one thread read: whether they record a graph (`enabled`), who
    watches them (`observers`, objects with `on_op(node_or_None, cls, args, kwargs, out)`),
    the module path while an nn.Module runs (`scope`, e.g. `["net", "0"]`) and the
    `saved_tensors_hooks` in force (`saved_hooks`, `(pack, unpack)` pairs)."""

    # NOTE: plain slots, read through one thread-local lookup per op (`_thread.state`):
    # each thread-local attribute read costs about as much as a small numpy call
    __slots__ = ("enabled", "observers", "scope", "saved_hooks")

    def __init__(self) -> None:
        self.enabled = True
        self.observers: list[Any] = []
        self.scope: list[str] = []
        self.saved_hooks: list[tuple[Any, Any]] = []


class _PerThread(threading.local):
    """Per thread, as PyTorch's modes are: `no_grad()`, a trace or an anomaly check in one
    thread never affects the ops of another, and every new thread starts recording."""

    def __init__(self) -> None:  # runs once in each thread that reads `_thread`
        self.state = ThreadState()


_thread = _PerThread()


def is_grad_enabled() -> bool:
    """Return True when new ops record the graph needed for `backward()`."""
    return _thread.state.enabled


@contextlib.contextmanager
def _using_grad(flag: bool) -> Iterator[None]:
    old = _thread.state.enabled
    _thread.state.enabled = flag
    try:
        yield
    finally:
        _thread.state.enabled = old


class _GradMode(contextlib.ContextDecorator):
    _flag = True

    # NOTE: `with tg.no_grad():` runs once per parameter update in a training loop, so the
    # block costs no more Python than it must: `object.__new__`, not `super()`, no
    # `__init__` of its own, and `__exit__` without `*args` (8.1k -> 6.0k instructions)
    def __new__(cls, fn: Any = None) -> Any:
        self = object.__new__(cls)
        # `@tg.no_grad` without parentheses decorates `fn` directly, as in PyTorch 2
        return self if fn is None or not callable(fn) else self(fn)

    def __enter__(self) -> _GradMode:
        # NOTE: the switch itself, not `_using_grad`: a generator-based context manager
        # costs more than the rest of an optimizer's `with tg.no_grad(): p -= lr * p.grad`
        # the thread's state is kept for __exit__ (the same thread: a `with` block is in one)
        self._state = state = _thread.state
        self._prev, state.enabled = state.enabled, self._flag
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self._state.enabled = self._prev

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.__class__():
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    def __repr__(self) -> str:
        return f"tg.{type(self).__name__}()"


class no_grad(_GradMode):  # noqa: N801 - PyTorch's name
    r"""Turn graph recording off inside the block (or the decorated function).

    Rules: ops inside make tensors with `requires_grad=False` and no `grad_fn`; the
    previous mode comes back on exit, even after an exception. Optimizers update
    parameters in this mode.

    Example:
        >>> import tinygrad_edu as tg
        >>> x = tg.tensor([1.0], requires_grad=True)
        >>> with tg.no_grad():
        ...     y = x * 2
        >>> y.requires_grad
        False
    """

    _flag = False


class enable_grad(_GradMode):  # noqa: N801 - PyTorch's name
    r"""Turn graph recording back on inside a `no_grad` block.

    Example:
        >>> import tinygrad_edu as tg
        >>> with tg.no_grad():
        ...     with tg.enable_grad():
        ...         tg.is_grad_enabled()
        True
    """

    _flag = True


class inference_mode(no_grad):  # noqa: N801 - PyTorch's name
    """PyTorch's faster `no_grad`; here the same thing (no graph is recorded)."""

    def __init__(self, mode: Any = True) -> None:
        self._flag = not mode


class set_grad_enabled(_GradMode):  # noqa: N801 - PyTorch's name
    r"""Turn graph recording on or off: a call, a `with` block, or a decorator, as in PyTorch.

    Rules: `tg.set_grad_enabled(False)` on its own line switches recording off until
    switched back; in a `with` block the previous mode returns at the end.

    Example:
        >>> import tinygrad_edu as tg
        >>> with tg.set_grad_enabled(False):
        ...     tg.is_grad_enabled()
        False
        >>> tg.is_grad_enabled()
        True
    """

    def __new__(cls, mode: Any) -> set_grad_enabled:
        return object.__new__(cls)

    def __init__(self, mode: Any) -> None:
        self._prev = _thread.state.enabled
        self._flag = bool(mode)
        _thread.state.enabled = self._flag  # takes effect now, as a plain call does in PyTorch

    def __enter__(self) -> set_grad_enabled:
        return self

    def __exit__(self, *exc: Any) -> None:
        _thread.state.enabled = self._prev

    def __call__(self, fn: F) -> F:
        _thread.state.enabled = self._prev  # as a decorator, the mode applies inside `fn` only
        flag = self._flag

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with _using_grad(flag):
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]
