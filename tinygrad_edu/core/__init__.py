"""The autograd core: Tensor, ops, the backward engine, grad mode, errors.

Imports numpy and the standard library only, so a learner can read it in one sitting
and nothing here pulls in graphviz, ipywidgets, IPython or matplotlib.
"""

from . import functions as _functions
from .creation import (
    Generator,
    arange,
    as_tensor,
    cat,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    manual_seed,
    normal,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randn,
    randn_like,
    randperm,
    stack,
    tensor,
    where,
    zeros,
    zeros_like,
)
from .dtypes import (
    backends,
    bool,  # noqa: A004, F401 - PyTorch's dtype names (see SHADOWING)
    cuda,
    device,
    double,
    float,  # noqa: A004, F401
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int,  # noqa: A004, F401
    int8,
    int16,
    int32,
    int64,
    long,
    set_default_dtype,
    short,
    uint8,
)
from .engine import AccumulateGrad, Node, grad
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
from .function import Function
from .functions import *  # noqa: F403 - torch.exp(x) and friends, listed in functions.__all__
from .functions import abs, max, min, pow, round, sum  # noqa: A004, F401 - see SHADOWING
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import gradcheck
from .serialization import load, save
from .tensor import Tensor
from .torch_api import Size

__all__ = [
    "Tensor",
    "tensor",
    "from_numpy",
    "as_tensor",
    "zeros",
    "ones",
    "full",
    "randn",
    "rand",
    "arange",
    "zeros_like",
    "ones_like",
    "randn_like",
    "manual_seed",
    "cat",
    "stack",
    "where",
    "grad",
    "gradcheck",
    "no_grad",
    "enable_grad",
    "is_grad_enabled",
    "Function",
    "Node",
    "AccumulateGrad",
    "ShapeError",
    "GraphFreedError",
    "InplaceError",
    "BackwardError",
    "DataError",
    "GradcheckError",
    "TracingError",
    "MissingDependencyError",
    # PyTorch's names (issue 17): makers, dtypes, devices, modes, files, torch.f(x) functions
    "empty",
    "full",
    "eye",
    "normal",
    "randint",
    "randperm",
    "linspace",
    "empty_like",
    "full_like",
    "rand_like",
    "Generator",
    "Size",
    "set_grad_enabled",
    "inference_mode",
    "save",
    "load",
    "device",
    "cuda",
    "backends",
    "get_default_dtype",
    "set_default_dtype",
    "float16",
    "half",
    "float32",
    "float64",
    "double",
    "int8",
    "uint8",
    "int16",
    "short",
    "int32",
    "int64",
    "long",
    *_functions.__all__,
]
# attributes (tg.float, tg.sum) that `from tinygrad_edu import *` leaves out: they would
# replace Python's own float, int, bool, sum, max, min, abs and pow in a learner's notebook
SHADOWING = ("float", "int", "bool", *_functions.SHADOWING)
