"""PyTorch's running reductions, order statistics and searches (issue 30): cumsum and
cumprod (with gradients), sort/argsort (`stable`, nan the largest), kthvalue, median,
mode, var_mean/std_mean, count_nonzero, bincount, histc, searchsorted, bucketize.

CumSum and CumProd are primitives (forward and backward side by side); the order
statistics pick their elements with `gather`, so the gradient goes to the element picked,
as in PyTorch. Counting and searching give integers, outside the graph. Core layer.
"""

from __future__ import annotations

from .counting import (
    bincount,
    bucketize,
    count_nonzero,
    histc,
    nansum,
    searchsorted,
    std_mean,
    var_mean,
)
from .order import _order, argsort, kthvalue, median, mode, sort
from .running import CumProd, CumSum, cumprod, cumsum, logsumexp

__all__ = ["CumProd", "CumSum", "FUNCTIONS", "METHODS", "_order", "argsort", "sort"]


METHODS = {
    "cumsum": cumsum,
    "cumprod": cumprod,
    "argsort": argsort,
    "sort": sort,
    "kthvalue": kthvalue,
    "median": median,
    "mode": mode,
    "count_nonzero": count_nonzero,
    "nansum": nansum,
    "bincount": bincount,
    "histc": histc,
    "logsumexp": logsumexp,
}


FUNCTIONS = {
    "var_mean": var_mean,
    "std_mean": std_mean,
    "searchsorted": searchsorted,
    "bucketize": bucketize,
}
