"""`tg.utils.checkpoint.checkpoint`: activation checkpointing, trading time for memory.

A graph keeps, for backward, the values its ops saved (lesson 8a counts them). For a
deep stack those activations are most of the memory of a training step. Checkpointing a
function keeps none of them: the forward runs without recording (`no_grad`), the graph
holds only the function's inputs, and backward runs the function *again*, this time
recording, and backpropagates through that fresh graph. One extra forward buys back
every activation inside the function.

PyTorch: `torch.utils.checkpoint.checkpoint(fn, *args, use_reentrant=False)`. Same
values, same gradients, for the inputs and for tensors `fn` uses without taking them
as arguments (a module's weights). The difference is in the drawing: PyTorch records
the function's ops with their saved values dropped, here the whole function is one
`CheckpointBackward` node.

Sits beside nn/optim/data: imports `tinygrad_edu.core` only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import engine, source
from ..core.errors import message
from ..core.function import OPS, Function, add_observer
from ..core.grad_mode import is_grad_enabled, set_grad_enabled
from ..core.tensor import Tensor

__all__ = ["checkpoint"]


class _CapturedTensors:
    """An observer that notes every tensor requiring grad that an op of `fn` reads.

    Under `no_grad` nothing made inside `fn` requires grad, so every such tensor comes
    from outside: a weight the function closes over. Backward must send it gradients.
    """

    def __init__(self) -> None:
        self.found: dict[int, Tensor] = {}

    def on_op(self, node: Any, cls: Any, args: tuple, kwargs: dict, out: Any) -> None:
        for a in args:
            if isinstance(a, Tensor) and a.requires_grad:
                self.found.setdefault(id(a), a)


def _run(fn: Any, arrays: tuple, kinds: tuple, needs: tuple) -> tuple[Any, list[Tensor]]:
    """Call fn on fresh tensors made from the saved arrays; return (result, those tensors)."""
    args, fresh = [], []
    for a, is_tensor, need in zip(arrays, kinds, needs):
        if isinstance(a, Tensor):
            # under create_graph=True, saved_tensors hands back the inputs themselves:
            # run on them, so the gradients' graphs reach the real inputs
            args.append(a)
            fresh.append(a)
        elif is_tensor:
            t = Tensor.wrap(a)  # shares the saved array: no copy
            t.requires_grad = bool(need)
            args.append(t)
            fresh.append(t)
        else:
            args.append(a)
    return fn(*args), fresh


def _check_result(result: Any, where: Any) -> Tensor:
    if not isinstance(result, Tensor):
        raise TypeError(
            message(
                "checkpoint",
                f"the checkpointed function returned {type(result).__name__}, not a Tensor",
                where,
                "return one Tensor; to checkpoint a function with several results, "
                "checkpoint each part that makes one",
            )
        )
    return result


class Checkpoint(Function):
    """One node standing for a whole function that backward will run again."""

    replayable = False  # its forward stands for `fn`, Python a static graph cannot replay

    @staticmethod
    def forward(ctx, *arrays, fn, kinds, captured, result, rng_state):
        # checkpoint() already ran fn without recording (it had to, to learn which
        # outside tensors fn reads); here we keep only the inputs: the activations
        # inside fn are what we give up
        inputs = arrays[: len(kinds)]
        ctx.save_for_backward(*[a for a, k in zip(inputs, kinds) if k])
        ctx.constants = [a for a, k in zip(inputs, kinds) if not k]
        ctx.fn, ctx.kinds, ctx.captured, ctx.rng_state = fn, kinds, captured, rng_state
        ctx.shape = result.shape
        return result

    @staticmethod
    def backward(ctx, grad_output):
        saved, constants = iter(ctx.saved_tensors), iter(ctx.constants)
        arrays = tuple(next(saved) if k else next(constants) for k in ctx.kinds)
        needs = ctx.needs_input_grad[: len(ctx.kinds)]
        current = np.random.get_state()
        if ctx.rng_state is not None:  # the same random numbers as the first run
            np.random.set_state(ctx.rng_state)
        try:
            with set_grad_enabled(True):  # record this time: this graph is backpropagated
                result, fresh = _run(ctx.fn, arrays, ctx.kinds, needs)
        finally:
            np.random.set_state(current)
        result = _check_result(result, ctx.site)
        if result.shape != ctx.shape:
            raise RuntimeError(
                message(
                    "checkpoint",
                    f"running the function again in backward gave shape {result.shape!r}, "
                    f"but the forward gave {ctx.shape!r}",
                    ctx.site,
                    "a checkpointed function must compute the same thing every time it "
                    "runs: no Python state that changes between calls",
                )
            )
        wrt = [t for t in fresh if t.requires_grad] + list(ctx.captured)
        if not result.requires_grad:
            return tuple(None for _ in ctx.needs_input_grad)
        # under create_graph=True the engine hands us a Tensor: differentiate the rerun
        # with a graph too, so second derivatives pass through the checkpoint
        create_graph = isinstance(grad_output, Tensor)
        grads = engine.grad(
            result,
            wrt,
            grad_outputs=grad_output if create_graph else Tensor.wrap(grad_output),
            create_graph=create_graph,
            allow_unused=True,
        )
        grads = iter(g if create_graph or g is None else np.asarray(g) for g in grads)
        # one gradient per input of this node: fn's tensor arguments, then what it captured
        out = [next(grads) if k and need else None for k, need in zip(ctx.kinds, needs)]
        out.extend(next(grads) for _ in ctx.captured)
        return tuple(out)


def checkpoint(
    fn: Any, *args: Any, use_reentrant: bool = False, preserve_rng_state: bool = True
) -> Tensor:
    r"""Run `fn(*args)` without keeping its activations; backward runs it again.

    Rules (PyTorch's, with `use_reentrant=False`): the forward runs under `no_grad`, and
    the graph keeps only the tensors in `args`. Backward runs `fn` again on the same
    inputs with grad enabled and backpropagates through that graph, into the inputs
    and into tensors `fn` reads without taking them as arguments (a module's weights).
    With `preserve_rng_state=True` the rerun sees the same numpy random numbers, so
    dropout drops the same units. `fn` must return one Tensor and compute the same
    thing every time. Under `no_grad`, or when nothing requires grad, this is `fn(*args)`.

    Args:
        fn: the function to checkpoint, e.g. a block of layers.
        *args: its arguments; tensors are saved, anything else is passed as it is.
        use_reentrant: only False (PyTorch's recommended mode) exists here.
        preserve_rng_state: replay numpy's random state in the rerun.

    Returns:
        `fn(*args)`, with one `CheckpointBackward` node as its `grad_fn`.

    Raises:
        TypeError: `fn` is not callable, or returns something other than a Tensor.
        NotImplementedError: `use_reentrant=True`.

    Example:
        >>> import tinygrad_edu as tg
        >>> from tinygrad_edu.utils.checkpoint import checkpoint
        >>> x = tg.tensor([1.0, 2.0], requires_grad=True)
        >>> y = checkpoint(lambda t: (t * t).tanh(), x)
        >>> y.grad_fn.name
        'CheckpointBackward'
        >>> y.sum().backward()
        >>> x.grad
        tensor([0.8399, 0.0054])
    """
    _check_arguments(fn, use_reentrant)
    if not is_grad_enabled():
        return _check_result(fn(*args), source.here())
    kinds = tuple(isinstance(a, Tensor) for a in args)
    arrays = tuple(np.asarray(a) if k else a for a, k in zip(args, kinds))
    rng_state = np.random.get_state() if preserve_rng_state else None
    observer = _CapturedTensors()
    remove = add_observer(observer)
    try:
        with set_grad_enabled(False):
            result, _ = _run(fn, arrays, kinds, (False,) * len(args))
    finally:
        remove()
    result = _check_result(result, source.here())
    # an argument fn also closes over is both: gradients from both paths add up
    captured = tuple(observer.found.values())
    if not captured and not any(k and a.requires_grad for a, k in zip(args, kinds)):
        return result  # nothing to differentiate: no node to record
    return Checkpoint.apply(
        *args,
        *captured,
        fn=fn,
        kinds=kinds,
        captured=captured,
        result=np.asarray(result),
        rng_state=rng_state,
    )


def _check_arguments(fn: Any, use_reentrant: bool) -> None:
    if not callable(fn):
        raise TypeError(
            message(
                "checkpoint",
                f"the first argument must be the function to run, got {type(fn).__name__}",
                source.here(),
                "call checkpoint(fn, *args), e.g. checkpoint(block, x)",
            )
        )
    if use_reentrant:
        raise NotImplementedError(
            message(
                "checkpoint",
                "use_reentrant=True is not supported; only PyTorch's recommended "
                "use_reentrant=False exists here",
                source.here(),
                "drop the argument or pass use_reentrant=False",
            )
        )


# not an op of the package's programs: its forward holds Python (fn), which a static
# program or an export cannot replay, so the op table must not offer it
OPS.pop("Checkpoint", None)
