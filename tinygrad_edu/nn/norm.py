"""`BatchNorm1d`, `BatchNorm2d` and `LayerNorm`: normalise, then scale and shift.

Batch norm keeps running statistics as buffers (saved in `state_dict`, never
trained) and switches from batch to running statistics with `model.eval()`.
Core layer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import source
from ..core.dtypes import check_device, get_default_dtype
from ..core.errors import ShapeError, message
from ..core.tensor import Tensor
from . import functional as F  # noqa: N812
from .module import Module, Parameter


class _BatchNorm(Module):
    _ndims: tuple = ()

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        check_device(device, type(self).__name__)
        dt = get_default_dtype() if dtype is None else dtype
        self.num_features, self.eps, self.momentum = int(num_features), eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(np.ones(num_features, dtype=dt))
            self.bias = Parameter(np.zeros(num_features, dtype=dt))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", Tensor.wrap(np.zeros(num_features, dt)))
            self.register_buffer("running_var", Tensor.wrap(np.ones(num_features, dt)))
            self.register_buffer("num_batches_tracked", Tensor.wrap(np.asarray(0, np.int64)))
        else:
            self.running_mean = self.running_var = None

    def forward(self, x: Tensor) -> Tensor:
        x = F._as_tensor(x, self.weight)
        name = type(self).__name__
        if x.ndim not in self._ndims or x.shape[1] != self.num_features:
            raise ShapeError(
                message(
                    name,
                    f"expected input of shape (batch, {self.num_features}"
                    f"{', ...' if self._ndims[0] > 2 else ''}) with "
                    f"{' or '.join(map(str, self._ndims))} axes, got "
                    f"{x.shape!r}",
                    source.here(),
                )
            )
        use_batch = self.training or self.running_mean is None
        momentum = self.momentum
        if self.training and self.running_mean is not None:
            self.num_batches_tracked.data += 1
            if momentum is None:  # PyTorch's cumulative moving average: batch k weighs 1/k
                momentum = 1.0 / float(self.num_batches_tracked.item())
        # training: the batch's statistics (and the running ones move); eval: the running ones
        return F.batch_norm(
            x,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            training=use_batch,
            momentum=momentum,
            eps=self.eps,
        )

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.affine}, "
            f"track_running_stats={self.track_running_stats}"
        )


class BatchNorm1d(_BatchNorm):
    r"""Batch norm over (batch, features) or (batch, features, length) input.

    Example:
        >>> import tinygrad_edu as tg
        >>> bn = tg.nn.BatchNorm1d(2)
        >>> y = bn(tg.tensor([[1.0, 10.0], [3.0, 30.0]]))
        >>> y, bn.running_mean
        (tensor([[-1.0000, -1.0000],
                [ 1.0000,  1.0000]], grad_fn=<AddBackward>), tensor([0.2000, 2.0000]))
    """

    _ndims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch norm over (batch, channels, height, width) input, per channel."""

    _ndims = (4,)


class LayerNorm(Module):
    """Normalise each example over its last axes (`normalized_shape`), then scale and shift."""

    def __init__(
        self,
        normalized_shape: Any,
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        check_device(device, "LayerNorm")
        dt = get_default_dtype() if dtype is None else dtype
        shape = (
            (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        )
        self.normalized_shape, self.eps = shape, eps
        if elementwise_affine:
            self.weight = Parameter(np.ones(shape, dtype=dt))
            if bias:
                self.bias = Parameter(np.zeros(shape, dtype=dt))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, x: Tensor) -> Tensor:
        x = F._as_tensor(x)
        if x.shape[x.ndim - len(self.normalized_shape) :] != self.normalized_shape:
            raise ShapeError(
                message(
                    "LayerNorm",
                    f"expected input ending in {self.normalized_shape!r}, got {x.shape!r}",
                    source.here(),
                )
            )
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, "
            f"elementwise_affine={self.weight is not None}, bias={self.bias is not None}"
        )
