"""Short, deterministic text for arrays and nodes, shared by every debug tool.

Everything printed here must repeat exactly between runs (nbval compares it): fixed
precision, counter ids and source lines, never `id()` or memory addresses.
Debug layer: imports tinygrad_edu.core, numpy and the standard library only.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ..core.engine import AccumulateGrad, Node

_ASSIGN = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?::[^=]*)?=(?!=)")


def array_of(x: Any) -> np.ndarray | None:
    """The ndarray behind a Tensor, array or number (None stays None)."""
    if x is None:
        return None
    return np.asarray(x)


def has_nonfinite(x: Any) -> bool:
    """True when `x` holds a NaN or an infinity (integer and bool arrays never do)."""
    a = array_of(x)
    return a is not None and a.dtype.kind in "fc" and not np.isfinite(a).all()


def stats(x: Any) -> str:
    """`shape (3,), 1 nan, 0 inf, finite min -1, max 2` for any array-like."""
    a = array_of(x)
    if a is None:
        return "None"
    parts = [f"shape {a.shape!r}"]
    if a.dtype.kind in "fc":
        finite = np.isfinite(a)
        parts.append(f"{int(np.isnan(a).sum())} nan")
        parts.append(f"{int(np.isinf(a).sum())} inf")
        a = a[finite]
        prefix = "finite "
    else:
        prefix = ""
    if a.size:
        parts.append(f"{prefix}min {a.min().item():.4g}, max {a.max().item():.4g}")
    else:
        parts.append("no finite values" if prefix else "empty")
    return ", ".join(parts)


def values(x: Any, precision: int = 4, limit: int = 8) -> str:
    """The values with fixed precision, cut to `limit` elements (`...` marks the cut)."""
    a = array_of(x)
    if a is None:
        return "None"
    if a.ndim == 0:
        return _num(a[()], precision)
    flat = a.reshape(-1)
    shown = ", ".join(_num(v, precision) for v in flat[:limit])
    more = ", ..." if flat.size > limit else ""
    return f"[{shown}{more}]" if a.ndim == 1 else f"{a.shape!r} [{shown}{more}]"


def _num(v: Any, precision: int = 4) -> str:
    v = v.item() if hasattr(v, "item") else v
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if v == 0:
        return f"{0.0:.{precision}f}"  # never "-0.0000"
    if not np.isfinite(v) or 1e-3 <= abs(v) < 1e5:
        return f"{v:.{precision}f}"
    return f"{v:.{precision}e}"  # tiny or huge: fixed point would show 0.0000 or a long row


def assigned_name(node: Node) -> str | None:
    """`y` for a node built on the line `y = x.log()`; None when the line assigns nothing."""
    site = node.site
    if site is None or not site.text:
        return None
    m = _ASSIGN.match(site.text)
    return m.group(1) if m else None


def tensor_name(node: Node) -> str | None:
    """The name of the tensor a node made (or, for a leaf's node, the leaf's name)."""
    if type(node) is AccumulateGrad:
        return node.variable.name
    out = node.output() if hasattr(node, "output") else None
    return out.name if out is not None else None


def label(node: Node | None) -> str:
    """`MulBackward` / `AccumulateGrad(x)`: a stable display name for a node."""
    if node is None:
        return "None"
    if type(node) is AccumulateGrad:
        v = node.variable
        return f"AccumulateGrad({v.name})" if v.name else f"AccumulateGrad(shape {v.shape!r})"
    name = tensor_name(node)
    return f"{node.name}({name})" if name else node.name


def built_at(node: Node | None) -> str:
    """The creation line of a node as text, or an empty string when unknown."""
    site = node.site if node is not None and type(node) is not AccumulateGrad else None
    return str(site) if site is not None else ""
