"""`backward_steps(loss)`: run backward one node at a time and say what each node did.

A thin layer over the core engine's own step generator (`core.engine.steps`), so the
order, the `+=` accumulation and the final `.grad` are exactly `loss.backward()`'s.
What the engine does not yield (the gradients a node sends to each input) is read
through the `on_backward` observer while the generator runs, and removed after.
Debug layer: imports tinygrad_edu.core, numpy and the standard library only.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core import engine
from ..core.engine import AccumulateGrad, Node
from ..core.function import add_observer
from ..core.grad_mode import is_grad_enabled, set_grad_enabled
from ..core.tensor import Tensor
from .describe import array_of, built_at, label, values


@dataclass(frozen=True, repr=False)
class Step:
    """What one node did during backward.

    Fields: `index` (0 for the output's node), `node`, `name` (display label), `site`
    (the line that built it), `grad_output` (the gradient that reached it: the sum of
    `parts`, one per path, so `a + a` shows two parts), `sends` (one
    `(input_node, gradient)` pair per input, gradients fitted to the input's shape;
    `(None, None)` where no gradient flows), `leaf_grad` (a leaf's `.grad` after this
    step, else None) and `waiting` (`(node, sum_so_far, number_of_parts)` for nodes
    that have received gradients but not run yet).
    """

    index: int
    node: Node
    name: str
    site: str
    grad_output: np.ndarray
    parts: tuple
    sends: tuple
    leaf_grad: np.ndarray | None
    waiting: tuple

    @property
    def is_leaf(self) -> bool:
        return type(self.node) is AccumulateGrad

    def text(self, precision: int = 4) -> str:
        """Deterministic multi-line description (nbval compares it)."""
        head = f"step {self.index}: {self.name}" + (f"  [{self.site}]" if self.site else "")
        g = values(self.grad_output, precision)
        lines = [head]
        if len(self.parts) > 1:
            summed = " + ".join(values(p, precision) for p in self.parts)
            lines.append(f"  grad in: {g} = {summed} (from {len(self.parts)} paths)")
        else:
            lines.append(f"  grad in: {g}")
        for nxt, grad_in in self.sends:
            if nxt is not None:
                lines.append(f"  sends {values(grad_in, precision)} to {label(nxt)}")
        if self.leaf_grad is not None and isinstance(self.node, AccumulateGrad):
            var = self.node.variable
            lines.append(f"  {var.name or 'leaf'}.grad is now {values(self.leaf_grad, precision)}")
        for node, total, n in self.waiting:
            if n > 1:
                lines.append(
                    f"  {label(node)} has {n} gradients so far, sum {values(total, precision)}"
                )
        return "\n".join(lines)

    __str__ = text

    def __repr__(self) -> str:
        return self.text()


class _SendsRecorder:
    """Observer that keeps each node's freshly computed input gradients for one step."""

    def __init__(self) -> None:
        self.sent: dict[int, tuple] = {}

    def on_op(self, *args: Any) -> None:
        pass  # `Function.apply` calls every observer; ops between steps are no concern here

    def on_backward(self, node: Node, grad_output: Any, grads_in: tuple) -> None:
        self.sent[id(node)] = grads_in


def backward_steps(
    loss: Tensor, gradient: Any = None, retain_graph: bool = False
) -> Iterator[Step]:
    r"""Run `loss.backward()` one node at a time, yielding a `Step` after each node.

    Rules: nodes come in the engine's order (every node after all the nodes that send
    it gradients); a leaf's `.grad` is updated at its `AccumulateGrad` step, so after
    the last step every `.grad` equals what `loss.backward()` gives. Stopping early
    leaves the remaining gradients unsent. The graph is freed as in `backward()`
    unless `retain_graph=True`. Each step prints as deterministic text.

    Args:
        loss: the output tensor (one number, or pass `gradient`).
        gradient: the upstream gradient for a non-scalar `loss`.
        retain_graph: keep the saved values for another backward.

    Returns:
        A generator of `Step` records.

    Raises:
        BackwardError / ShapeError: as `loss.backward()` would.

    Example:
        >>> import tinygrad_edu as tg
        >>> a = tg.tensor(3.0, requires_grad=True, name="a")
        >>> for step in tg.debug.backward_steps(a + a):
        ...     print(step.name, step.grad_output, len(step.parts))
        AddBackward 1.0 1
        AccumulateGrad(a) 2.0 2
    """
    root = engine._root(loss, gradient, False, "backward_steps")
    return BackwardSteps(_run(root, retain_graph), root[0])


class BackwardSteps:
    """The iterator `backward_steps` returns: a generator with a stable, readable repr
    (a bare generator would print its memory address, which nbval cannot compare)."""

    def __init__(self, steps: Generator[Step, None, None], root: Node) -> None:
        self._steps, self._root, self._taken = steps, root, 0

    def __iter__(self) -> BackwardSteps:
        return self

    def __next__(self) -> Step:
        step = next(self._steps)
        self._taken += 1
        return step

    def close(self) -> None:
        """Stop early: the remaining nodes never run (their gradients stay unsent)."""
        self._steps.close()

    def __repr__(self) -> str:
        return f"backward_steps({label(self._root)}: {self._taken} steps taken)"


def _run(root: tuple[Any, ...], retain_graph: bool) -> Generator[Step, None, None]:
    recorder = _SendsRecorder()
    # id(node) -> [node, [gradient parts...]]: what the engine sums into its private slots
    arrived: dict[int, list] = {id(root[0]): [root[0], [array_of(root[1])]]}
    steps = _own_grad_mode(engine.steps([root], retain_graph=retain_graph), recorder)
    try:
        for index, (node, g) in enumerate(steps):
            _, parts = arrived.pop(id(node), (node, [array_of(g)]))
            sends: tuple[tuple[Any, Any], ...] = ()
            if type(node) is not AccumulateGrad:
                sends = _fit(node, recorder.sent.pop(id(node), []))
                for nxt, grad_in in sends:
                    if nxt is not None and grad_in is not None:
                        arrived.setdefault(id(nxt), [nxt, []])[1].append(grad_in)
            leaf = None
            if isinstance(node, AccumulateGrad) and node.variable.grad_held is not None:
                leaf = np.array(node.variable.grad_held, copy=True)
            waiting = tuple((n, sum(ps[1:], ps[0]), len(ps)) for n, ps in arrived.values() if ps)
            yield Step(
                index,
                node,
                label(node),
                built_at(node),
                np.array(array_of(g), copy=True),
                tuple(parts),
                sends,
                leaf,
                waiting,
            )
    finally:
        steps.close()


def _own_grad_mode(inner: Generator[Any, None, None], recorder: Any) -> Generator[Any, None, None]:
    """Run the engine's generator with grad off and `recorder` listening, but only while
    it advances: between steps the learner gets their grad mode back (the engine's
    `with` block stays entered while it is suspended, and would otherwise switch off
    graph recording for every cell run between two steps), and other backward passes
    run meanwhile (a stepper left half-way in a notebook) are not recorded."""
    try:
        while True:
            outer = is_grad_enabled()
            set_grad_enabled(False)  # what backward runs with (create_graph=False)
            remove = add_observer(recorder)
            try:
                item = next(inner)
            except StopIteration:
                return
            finally:
                remove()
                set_grad_enabled(outer)
            yield item
    finally:  # closed early: the engine's `with` exit would restore *its* saved mode
        outer = is_grad_enabled()
        inner.close()
        set_grad_enabled(outer)


def _fit(node: Node, grads_in: Sequence[Any]) -> tuple[tuple[Any, Any], ...]:
    """Pair each gradient the node sent (the engine fitted it to its input) with its input."""
    return tuple(
        (nxt, None if grad_in is None else np.array(array_of(grad_in), copy=True))
        for (nxt, _), grad_in in zip(node.next_functions, grads_in)
    )
