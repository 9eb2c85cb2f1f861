"""Print helpers for lessons: values, gradients and ops, as deterministic text lines.

Lines use fixed precision and names (never ids or addresses), so nbval can compare a
lesson's printed output run after run. Gradients are printed from hooks
(`Tensor.register_hook`), ops from a `core.function.add_observer` observer.
Debug layer: imports tinygrad_edu.core, numpy and the standard library only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core import source
from ..core.function import add_observer
from ..core.tensor import Tensor
from .describe import values


def _named(tensors: tuple, named: dict) -> list[tuple[str, Tensor]]:
    pairs = [(t.name or f"tensor {i}", t) for i, t in enumerate(tensors)]
    return pairs + list(named.items())


def log_values(*tensors: Tensor, precision: int = 4, **named: Tensor) -> None:
    r"""Print one line per tensor: `name (shape): values`.

    Rules: positional tensors are labelled with their `.name` (or `tensor 0`, ...);
    keyword arguments name them explicitly. At most 8 values per line, `precision`
    decimals (scientific notation for very small or large numbers).

    Example:
        >>> import tinygrad_edu as tg
        >>> x = tg.tensor([1.0, 2.0], name="x")
        >>> tg.debug.log_values(x, y=x * 3)
        x (2,): [1.0000, 2.0000]
        y (2,): [3.0000, 6.0000]
    """
    for name, t in _named(tensors, named):
        print(f"{name} {t.shape!r}: {values(t, precision)}")


class log_grads:  # noqa: N801 - used like a function
    r"""Print each tensor's gradient when backward computes it: `name.grad: values`.

    Rules: one hook per tensor (`register_hook`), so the line shows the gradient of this
    backward pass (before it is added into a leaf's `.grad`), in the engine's order.
    Works as a plain call (hooks stay until `.remove()`) or as a `with` block (removed
    on exit). Naming as in `log_values`.

    Example:
        >>> import tinygrad_edu as tg
        >>> a = tg.tensor([1.0, 2.0], requires_grad=True, name="a")
        >>> h = a * a
        >>> with tg.debug.log_grads(a, h=h):
        ...     h.sum().backward()
        h.grad: [1.0000, 1.0000]
        a.grad: [2.0000, 4.0000]
    """

    def __init__(self, *tensors: Tensor, precision: int = 4, **named: Tensor) -> None:
        self._handles = []
        for name, t in _named(tensors, named):
            self._handles.append(t.register_hook(self._printer(name, precision)))

    @staticmethod
    def _printer(name: str, precision: int) -> Callable[[Tensor], None]:
        def hook(g: Tensor) -> None:
            print(f"{name}.grad: {values(g, precision)}")

        return hook

    def remove(self) -> None:
        """Unregister every hook."""
        for h in self._handles:
            h.remove()
        self._handles = []

    def __enter__(self) -> log_grads:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


class log_ops:  # noqa: N801 - used like a function
    r"""Print one line per op built inside the block: op, shapes and the learner's line.

    Example:
        >>> import tinygrad_edu as tg
        >>> x = tg.tensor([1.0, 2.0], requires_grad=True)
        >>> with tg.debug.log_ops():
        ...     y = (x * 2).sum()
        mul (2,), () -> (2,)
        sum (2,) -> ()
    """

    def __init__(self, sites: bool = False) -> None:
        self.sites = sites
        self._remove: Callable[[], None] | None = None

    def on_op(self, node: Any, cls: type, args: tuple, kwargs: dict, out: Any) -> None:
        shapes = ", ".join(repr(getattr(a, "shape", ())) for a in args)
        line = f"{cls.__name__.lower()} {shapes} -> {out.shape!r}"
        if self.sites:
            site = node.site if node is not None else source.resolve(source.capture())
            line += f"  [{site}]" if site is not None else ""
        print(line)

    def __enter__(self) -> log_ops:
        self._remove = add_observer(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._remove is not None:
            self._remove()
            self._remove = None
