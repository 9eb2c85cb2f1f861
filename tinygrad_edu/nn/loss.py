"""Losses as modules (`nn.MSELoss()(pred, target)`), each calling its `nn.functional` twin.

Core layer.
"""

from __future__ import annotations

from typing import Any

from ..core import source
from ..core.errors import message
from ..core.tensor import Tensor
from . import functional as F  # noqa: N812
from .module import Module


class _Loss(Module):
    def __init__(
        self, size_average: Any = None, reduce: Any = None, reduction: str = "mean"
    ) -> None:
        super().__init__()
        if size_average is not None or reduce is not None:
            raise ValueError(
                message(
                    type(self).__name__,
                    "size_average and reduce are PyTorch's old arguments",
                    source.here(),
                    "use reduction='mean', 'sum' or 'none'",
                )
            )
        self.reduction = reduction  # not shown in the repr, as in PyTorch


class MSELoss(_Loss):
    """Mean squared error (see `F.mse_loss`)."""

    def forward(self, input: Any, target: Any) -> Tensor:  # noqa: A002
        return F.mse_loss(input, target, self.reduction)


class L1Loss(_Loss):
    """Mean absolute error (see `F.l1_loss`)."""

    def forward(self, input: Any, target: Any) -> Tensor:  # noqa: A002
        return F.l1_loss(input, target, self.reduction)


class CrossEntropyLoss(_Loss):
    """Softmax cross-entropy of logits against class indices or class probabilities (see
    `F.cross_entropy`), with PyTorch's `weight`, `ignore_index` and `label_smoothing`."""

    def __init__(
        self,
        weight: Any = None,
        size_average: Any = None,
        ignore_index: int = -100,
        reduce: Any = None,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.weight, self.ignore_index, self.label_smoothing = weight, ignore_index, label_smoothing

    def forward(self, input: Any, target: Any) -> Tensor:  # noqa: A002
        return F.cross_entropy(
            input,
            target,
            self.reduction,
            weight=self.weight,
            ignore_index=self.ignore_index,
            label_smoothing=self.label_smoothing,
        )


class NLLLoss(_Loss):
    """Negative log-likelihood of log-probabilities (see `F.nll_loss`)."""

    def __init__(
        self,
        weight: Any = None,
        size_average: Any = None,
        ignore_index: int = -100,
        reduce: Any = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.weight, self.ignore_index = weight, ignore_index

    def forward(self, input: Any, target: Any) -> Tensor:  # noqa: A002
        return F.nll_loss(
            input, target, self.reduction, weight=self.weight, ignore_index=self.ignore_index
        )


class BCELoss(_Loss):
    """Binary cross-entropy of probabilities (see `F.binary_cross_entropy`)."""

    def __init__(
        self,
        weight: Any = None,
        size_average: Any = None,
        reduce: Any = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.weight = weight

    def forward(self, input: Any, target: Any) -> Tensor:  # noqa: A002
        return F.binary_cross_entropy(input, target, self.reduction, weight=self.weight)


class BCEWithLogitsLoss(_Loss):
    """Binary cross-entropy of logits (see `F.binary_cross_entropy_with_logits`)."""

    def __init__(
        self,
        weight: Any = None,
        size_average: Any = None,
        reduce: Any = None,
        reduction: str = "mean",
        pos_weight: Any = None,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.weight, self.pos_weight = weight, pos_weight

    def forward(self, input: Any, target: Any) -> Tensor:  # noqa: A002
        return F.binary_cross_entropy_with_logits(
            input, target, self.reduction, self.pos_weight, weight=self.weight
        )
