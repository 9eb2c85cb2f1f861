"""Helpers shared by test files in several folders (tests/ is on sys.path via conftest)."""

import os
import sys


def site_of(fragment: str) -> str:
    """`path, line N: text` of the first line in the caller's file containing `fragment`,
    as `built at:` prints it (path relative to the working directory)."""
    filename = sys._getframe(1).f_code.co_filename
    with open(filename) as f:
        for i, line in enumerate(f, 1):
            if fragment in line and "site_of(" not in line:
                return f"{os.path.relpath(filename)}, line {i}: {line.strip()}"
    raise LookupError(fragment)


def named_expression():
    """y = tanh(a * b) with named leaves a = 0.5, b = -1.0: the render tests' small graph."""
    import tinygrad_edu as tg

    a = tg.tensor(0.5, requires_grad=True, name="a")
    b = tg.tensor(-1.0, requires_grad=True, name="b")
    y = (a * b).tanh()
    y.name = "y"
    return y


def unrolled_rnn(steps: int):
    """An RNNCell(1, 4) called `steps` times on a ramp, summed: a loop over a module."""
    import numpy as np

    import tinygrad_edu as tg

    np.random.seed(0)
    cell = tg.nn.RNNCell(1, 4)
    x = tg.tensor(np.linspace(-1, 1, steps).reshape(steps, 1), name="x")
    h = None
    for t in range(steps):
        h = cell(x[t], h)
    return h.sum()
