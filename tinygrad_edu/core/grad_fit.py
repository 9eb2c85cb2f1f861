"""Check what a backward rule returned, and fit each gradient to its input's shape.

One copy of these rules serves every engine: the eager engine (`engine.py`), the
stepper, and the static graph's replay (`static/codegen.py`), so a learner's
`tg.Function` gets the same gradients and the same errors in both worlds.

The rules are PyTorch's (`validate_outputs` in its engine):

- one gradient per input of forward (None where the input needs none);
- a gradient has its input's shape, or a shape the input broadcasts to (forward
  broadcast the input, so the copies' gradients are summed back: a bias);
- anything else is an error, also a gradient of shape () or (1,) for an input of
  shape (3,): nothing in forward broadcast that input, so spreading the number
  would hide a bug in the backward rule.

Core layer: numpy and the standard library only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import BackwardError, ShapeError, message
from .ops.common import sum_to


def fit_gradient(
    g: Any, shape: tuple[Any, ...], op: str, site: Any = None, dtype: Any = None
) -> Any:
    """`g` in its input's `shape` (summing broadcast axes) and `dtype`, or a ShapeError.

    `g` is an ndarray, a Tensor (create_graph) or a number; `op` names the node and
    `site` is the line that built it, or a function giving it: the engine passes one, since
    finding a line's text costs more than summing a bias's gradient, and only an error
    needs it. A gradient of another dtype is converted to the input's (PyTorch does the
    same), so a float32 gradient of a float64 input gives the same numbers whichever
    engine runs it.
    """
    if not hasattr(g, "shape"):
        g = np.asarray(g)  # a learner's backward may return a plain number
    if dtype is not None and g.dtype != dtype:
        g = g.astype(dtype)
    if g.shape == shape:
        return g
    if broadcasts_to(shape, g.shape):
        return sum_to(g, shape)  # forward broadcast the input: add the copies' gradients
    raise ShapeError(
        message(
            op,
            f"backward returned a gradient of shape {g.shape!r} for an input of shape {shape!r}",
            site() if callable(site) else site,
            "each gradient must have its input's shape",
        )
    )


def count_error(op: str, site: Any, got: int, inputs: int) -> BackwardError:
    """The error for a backward that returned `got` gradients for `inputs` inputs."""
    return BackwardError(
        message(
            op,
            f"backward returned {got} gradient(s) for {inputs} input(s)",
            site,
            "return one gradient per input of forward (None where none is needed)",
        )
    )


def broadcasts_to(shape: tuple[Any, ...], target: tuple[Any, ...]) -> bool:
    """Does numpy broadcast `shape` to `target`? (np.broadcast_shapes is slow: it makes arrays)"""
    if shape == target:  # the usual case, settled in C
        return True
    lead = len(target) - len(shape)
    return lead >= 0 and all(n == 1 or n == m for n, m in zip(shape, target[lead:]))
