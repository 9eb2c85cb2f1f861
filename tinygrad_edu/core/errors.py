"""Exception classes and the one message builder every error goes through.

Every error a learner can cause reads the same way:

    ShapeError: matmul: cannot multiply (2, 3) @ (2, 3): inner sizes 3 and 2 differ
      built at: cell [4], line 2: y = x @ w
      hint: did you mean x @ w.T? w.T has shape (3, 2), and the product shape (2, 2)

the op first, then what happened in the learner's terms, then where (the line that
built the node) and how to recover. Core layer: imports the standard library only.
"""

from __future__ import annotations


class ShapeError(ValueError):
    """Operand shapes do not fit the op (broadcasting, `@`, reshape, indexing)."""


class GraphFreedError(RuntimeError):
    """`backward()` went through a graph whose saved tensors an earlier backward freed."""


class InplaceError(RuntimeError):
    """An in-place change that autograd cannot account for."""


class BackwardError(RuntimeError):
    """`backward()` / `tg.grad()` called in a way that has no answer."""


class DataError(TypeError):
    """Data that cannot become a tensor (strings, ragged lists, objects)."""


class TracingError(RuntimeError):
    """Something a static trace cannot capture (raised in strict tracing mode)."""


class MissingDependencyError(ImportError):
    """An optional package or program is missing; the message says how to install it."""


def message(op: str, what: str, site: object = None, hint: str | None = None) -> str:
    """Build the standard multi-line error text: `op: what`, `built at:`, `hint:`."""
    lines = [f"{op}: {what}"]
    if site is not None:
        lines.append(f"  built at: {site}")
    if hint:
        lines.append(f"  hint: {hint}")
    return "\n".join(lines)


class GradcheckError(RuntimeError):
    """Analytic gradients disagree with finite differences."""
