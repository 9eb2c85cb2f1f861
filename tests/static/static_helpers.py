"""Helpers for the static tests: central differences on any array function."""

import numpy as np


def numeric_grad(f, arrays, i, eps=1e-6):
    """d f(*arrays) / d arrays[i] by central differences (f returns a number)."""
    x = arrays[i]
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        old = x[idx]
        x[idx] = old + eps
        hi = float(f(*arrays))
        x[idx] = old - eps
        lo = float(f(*arrays))
        x[idx] = old
        g[idx] = (hi - lo) / (2 * eps)
    return g


def line_of(fn, text):
    """`file, line N: text` as source.Site prints it for the line in fn holding `text`."""
    import inspect
    import os

    lines, start = inspect.getsourcelines(fn)
    for k, line in enumerate(lines):
        if text in line:
            return f"{os.path.relpath(inspect.getsourcefile(fn))}, line {start + k}: {line.strip()}"
    raise AssertionError(f"{text!r} not in {fn.__name__}")
