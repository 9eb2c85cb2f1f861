"""PyTorch's shape and indexing ops (issue 30): flip, roll, rot90, diag, diagonal,
diag_embed, nonzero, masked_select, index_select, index_add, scatter, take_along_dim,
repeat_interleave, unflatten, movedim, meshgrid, tril_/triu_.

Flip, Roll, Diagonal and DiagonalScatter are primitives (one class each, forward and
backward side by side; each backward is another of them, so `create_graph=True` works).
The rest are built from the core's indexing ops (Index, IndexAdd, IndexPut), whose
gradients the core already checks. As in PyTorch, `diagonal` is a view (writing into it
writes into the matrix) and `flip`, `roll` and `diag` are copies. Core layer.
"""

from __future__ import annotations

from .diagonals import Diagonal, DiagonalScatter, diag, diag_embed, diagonal, tril_, triu_
from .flips import Flip, Roll, flip, fliplr, flipud, roll, rot90
from .reshape import meshgrid, movedim, repeat_interleave, repeat_interleave_counts, unflatten
from .scatter import scatter, scatter_, scatter_add, scatter_add_, scatter_reduce
from .select import (
    argwhere,
    index_add,
    index_add_,
    index_select,
    masked_select,
    nonzero,
    take_along_dim,
)
from .shared import _dims, _indices

__all__ = [
    "Diagonal",
    "DiagonalScatter",
    "FUNCTIONS",
    "Flip",
    "METHODS",
    "Roll",
    "_dims",
    "_indices",
    "diagonal",
    "meshgrid",
    "repeat_interleave",
]


METHODS = {
    "flip": flip,
    "fliplr": fliplr,
    "flipud": flipud,
    "roll": roll,
    "rot90": rot90,
    "diag": diag,
    "diagonal": diagonal,
    "diag_embed": diag_embed,
    "tril_": tril_,
    "triu_": triu_,
    "nonzero": nonzero,
    "argwhere": argwhere,
    "masked_select": masked_select,
    "index_select": index_select,
    "index_add": index_add,
    "index_add_": index_add_,
    "scatter": scatter,
    "scatter_": scatter_,
    "scatter_add": scatter_add,
    "scatter_add_": scatter_add_,
    "scatter_reduce": scatter_reduce,
    "take_along_dim": take_along_dim,
    "repeat_interleave": repeat_interleave,
    "unflatten": unflatten,
    "movedim": movedim,
    "moveaxis": movedim,
}


FUNCTIONS = {"meshgrid": meshgrid, "repeat_interleave": repeat_interleave_counts}
