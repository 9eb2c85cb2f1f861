"""The autograd core: Tensor, ops, the backward engine, grad mode, errors.

Imports numpy and the standard library only, so a learner can read it in one sitting
and nothing here pulls in graphviz, ipywidgets, IPython or matplotlib.
"""

from .creation import (
                       arange,
                       as_tensor,
                       cat,
                       from_numpy,
                       full,
                       manual_seed,
                       ones,
                       ones_like,
                       rand,
                       randn,
                       randn_like,
                       stack,
                       tensor,
                       where,
                       zeros,
                       zeros_like,
)
from .engine import grad
from .errors import (
                       BackwardError,
                       DataError,
                       GradcheckError,
                       GraphFreedError,
                       InplaceError,
                       MissingDependencyError,
                       ShapeError,
                       TracingError,
)
from .function import AccumulateGrad, Function, Node
from .grad_mode import enable_grad, is_grad_enabled, no_grad
from .gradcheck import gradcheck
from .tensor import Tensor

__all__ = [
    "Tensor", "tensor", "from_numpy", "as_tensor", "zeros", "ones", "full", "randn", "rand", "arange", "zeros_like",
    "ones_like", "randn_like", "manual_seed", "cat", "stack", "where", "grad", "gradcheck",
    "no_grad", "enable_grad", "is_grad_enabled", "Function", "Node", "AccumulateGrad",
    "ShapeError", "GraphFreedError", "InplaceError", "BackwardError", "DataError",
    "GradcheckError", "TracingError", "MissingDependencyError",
]
