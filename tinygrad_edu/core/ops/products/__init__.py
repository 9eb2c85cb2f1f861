"""PyTorch's products and norms (issue 30): einsum, outer, kron, tensordot, trace, cdist,
torch.linalg.norm / vector_norm, and a tensor's multinomial.

Einsum and VectorNorm are primitives (forward and backward side by side); the rest are
built from them and the core's ops. VectorNorm's gradient is 0 where the norm is 0 (a
zero row in cdist or normalize), as PyTorch's, where sqrt's would be nan. Core layer.
"""

from __future__ import annotations

from .einsum import Einsum, einsum
from .norms import VectorNorm, linalg, norm, vector_norm
from .pairwise import cdist, kron, multinomial, outer, tensordot, trace

__all__ = [
    "Einsum",
    "FUNCTIONS",
    "METHODS",
    "VectorNorm",
    "einsum",
    "linalg",
    "norm",
    "vector_norm",
]


METHODS = {
    "outer": outer,
    "ger": outer,
    "kron": kron,
    "trace": trace,
    "multinomial": multinomial,
}


FUNCTIONS = {
    "einsum": einsum,
    "tensordot": tensordot,
    "cdist": cdist,
    "linalg": linalg,
}
