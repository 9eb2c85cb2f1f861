"""2-D convolution and pooling: `conv2d`, `max_pool2d`, `avg_pool2d`, `adaptive_avg_pool2d`
and their layers, written as "unfold, then matmul / max / mean" over core ops.

`_unfold` cuts every k x k window out of the (padded) input with one integer-array
index, giving shape (N, C, kh, kw, OH, OW); the index's backward adds each window's
gradient back where it came from, so no new op or derivative rule is needed. A
convolution is then one matmul with the weight, a pooling a max or a mean over the
window axes. Slow for big images, exact and readable for lessons. Core layer.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core import source
from ..core.errors import ShapeError, message
from ..core.ops.linalg import MatMul
from ..core.tensor import Tensor
from ..core.torch_api import reduce_with_index
from .module import Module


def _pair(v: Any) -> tuple[int, int]:
    return (int(v), int(v)) if isinstance(v, (int, np.integer)) else (int(v[0]), int(v[1]))


def _batched(op: str, x: Any) -> tuple[Tensor, bool]:
    x = x if isinstance(x, Tensor) else Tensor(x)
    if x.ndim == 3:  # one image (C, H, W), as PyTorch accepts
        return x.unsqueeze(0), True
    if x.ndim != 4:
        raise ShapeError(
            message(
                op,
                f"expected input of shape (batch, channels, height, width) "
                f"or (channels, height, width), got {x.shape!r}",
                source.here(),
                "add the missing axes with .unsqueeze(0) or .reshape(...)",
            )
        )
    return x, False


def _unfold(
    op: str, x: Tensor, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple, fill: float
) -> Tensor:
    """Every window of `x` (N, C, H, W): shape (N, C, kh, kw, OH, OW)."""
    from .functional import pad

    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
    if ph or pw:
        x = pad(x, (pw, pw, ph, ph), value=fill)
    h, w = x.shape[2], x.shape[3]
    oh, ow = (h - dh * (kh - 1) - 1) // sh + 1, (w - dw * (kw - 1) - 1) // sw + 1
    if oh < 1 or ow < 1:
        # the window a dilated kernel spans: d * (k - 1) + 1 numbers on each axis
        span = f"{dh * (kh - 1) + 1} x {dw * (kw - 1) + 1}"
        spread = f" (a {kh} x {kw} kernel with dilation {dilation})" if (dh, dw) != (1, 1) else ""
        raise ShapeError(
            message(
                op,
                f"the input is {h - 2 * ph} x {w - 2 * pw} (padded "
                f"{h} x {w}), smaller than the {span} window{spread}",
                source.here(),
                "use a smaller kernel, more padding or a bigger input",
            )
        )
    rows = (np.arange(kh) * dh)[:, None, None, None] + (np.arange(oh) * sh)[None, None, :, None]
    cols = (np.arange(kw) * dw)[None, :, None, None] + (np.arange(ow) * sw)[None, None, None, :]
    return x[:, :, rows, cols]


def _refuse_strided_same(op: str, stride: Any) -> None:
    """padding='same' keeps the input's size, which a stride cannot: PyTorch refuses it."""
    if _pair(stride) != (1, 1):
        raise ValueError(
            message(
                op,
                f"padding='same' is not supported for strided convolutions (stride {stride})",
                source.here(),
                "with a stride the output cannot keep the input's size: give the padding as "
                "numbers",
            )
        )


def _padded_by_name(x: Tensor, padding: str, kernel: tuple, stride: tuple, dilation: tuple):
    """`x` padded for padding="same" or "valid", and the padding left for `_unfold` (none).

    "same" pads d * (k - 1) zeros in all on each axis, half before and the rest after, as
    PyTorch: an even kernel puts the extra one at the bottom / right."""
    from .functional import pad

    if padding not in ("same", "valid"):
        raise ValueError(
            message(
                "conv2d",
                f"padding must be a number, 'same' or 'valid', got {padding!r}",
                source.here(),
            )
        )
    if padding == "valid":
        return x, (0, 0)
    _refuse_strided_same("conv2d", stride)
    (th, tw) = (dilation[0] * (kernel[0] - 1), dilation[1] * (kernel[1] - 1))
    return pad(x, (tw // 2, tw - tw // 2, th // 2, th - th // 2)), (0, 0)


def conv2d(
    x: Any,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    groups: int = 1,
) -> Tensor:
    r"""2-D cross-correlation, as `torch.nn.functional.conv2d` (groups=1).

    out[n, o, i, j] = bias[o] + sum over c, a, b of weight[o, c, a, b] * x[n, c, i*s + a, j*s + b]

    Example:
        >>> import tinygrad_edu as tg
        >>> x = tg.arange(16.0).reshape(1, 1, 4, 4)
        >>> tg.nn.functional.conv2d(x, tg.ones(1, 1, 2, 2), stride=2)
        tensor([[[[10., 18.],
                  [42., 50.]]]])
    """
    x, single = _batched("conv2d", x)
    if groups != 1:
        raise ValueError(
            message("conv2d", f"groups={groups} is not supported (only 1)", source.here())
        )
    o, c, kh, kw = weight.shape
    if x.shape[1] != c:
        raise ShapeError(
            message(
                "conv2d",
                f"the weight {weight.shape!r} expects {c} input "
                f"channels, got input of shape {x.shape!r}",
                source.here(),
                f"make the layer Conv2d({x.shape[1]}, {o}, ...)",
            )
        )
    if isinstance(padding, str):
        x, padding = _padded_by_name(x, padding, (kh, kw), _pair(stride), _pair(dilation))
    win = _unfold("conv2d", x, (kh, kw), _pair(stride), _pair(padding), _pair(dilation), 0.0)
    n, _, _, _, oh, ow = win.shape
    # (O, C*kh*kw) @ (N, C*kh*kw, OH*OW): every output pixel is one dot product. `win` is
    # this function's own gather, which nothing changes in place: the copy PyTorch's matmul
    # would save of it (see core/ops/linalg.py) is not needed (PyTorch's conv saves x)
    out = MatMul.apply(
        weight.reshape(o, c * kh * kw), win.reshape(n, c * kh * kw, oh * ow), saves_copies=False
    )
    out = out.reshape(n, o, oh, ow)
    if bias is not None:
        out = out + bias.reshape(1, o, 1, 1)
    return out.squeeze(0) if single else out


def _check_pool_padding(op: str, kernel: tuple, padding: tuple) -> None:
    """PyTorch's rule: padding at most half the kernel on each side, so that every window
    holds at least one number of the input (a window of padding alone has no maximum)."""
    if padding[0] > kernel[0] // 2 or padding[1] > kernel[1] // 2:
        raise ValueError(
            message(
                op,
                f"padding {padding} is more than half of the {kernel[0]} x {kernel[1]} window",
                source.here(),
                f"use padding of at most {(kernel[0] // 2, kernel[1] // 2)} for this window",
            )
        )


def max_pool2d(
    x: Any,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    dilation: Any = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Tensor:
    """The largest value of each window; the gradient goes to it (the first, on ties).
    PyTorch's `ceil_mode` and `return_indices` are taken at their defaults only."""
    _refuse_pool_options("max_pool2d", ceil_mode, return_indices)
    x, single = _batched("max_pool2d", x)
    k = _pair(kernel_size)
    _check_pool_padding("max_pool2d", k, _pair(padding))
    win = _unfold(
        "max_pool2d",
        x,
        k,
        _pair(stride if stride is not None else k),
        _pair(padding),
        _pair(dilation),
        -math.inf,
    )
    n, c, kh, kw, oh, ow = win.shape
    out = reduce_with_index(win.reshape(n, c, kh * kw, oh, ow), "max", 2, False).values
    return out.squeeze(0) if single else out


def _refuse_pool_options(op: str, ceil_mode: bool, return_indices: bool = False) -> None:
    """PyTorch's pooling options not built here, refused by name (False, their default, is
    fine: code copied from PyTorch often spells it out)."""
    for name, value in (("ceil_mode", ceil_mode), ("return_indices", return_indices)):
        if value:
            raise ValueError(message(op, f"{name}=True is not supported", source.here()))


def avg_pool2d(
    x: Any,
    kernel_size: Any,
    stride: Any = None,
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """The mean of each window. The padding zeros count (PyTorch's default), or with
    `count_include_pad=False` only the input's numbers do; `divisor_override` divides
    every window's sum by that number instead."""
    _refuse_pool_options("avg_pool2d", ceil_mode)
    x, single = _batched("avg_pool2d", x)
    k, pad = _pair(kernel_size), _pair(padding)
    _check_pool_padding("avg_pool2d", k, pad)
    step = _pair(stride if stride is not None else k)
    win = _unfold("avg_pool2d", x, k, step, pad, (1, 1), 0.0)
    if divisor_override is not None:
        out = win.sum((2, 3)) / float(divisor_override)
    elif count_include_pad or pad == (0, 0):
        out = win.mean((2, 3))
    else:  # divide by how many of the window's numbers come from the input
        ones = Tensor(np.ones((1, 1) + x.shape[2:], dtype=x.dtype))
        counts = _unfold("avg_pool2d", ones, k, step, pad, (1, 1), 0.0).sum((2, 3))
        out = win.sum((2, 3)) / counts.numpy()
    return out.squeeze(0) if single else out


def adaptive_avg_pool2d(x: Any, output_size: Any) -> Tensor:
    """Means over output_size windows that tile the input, as PyTorch cuts them."""
    from ..core.creation import stack

    x, single = _batched("adaptive_avg_pool2d", x)
    oh, ow = _pair(output_size)
    h, w = x.shape[2], x.shape[3]
    if (oh, ow) == (1, 1):
        out = x.mean((2, 3), keepdims=True)
    else:
        # window i covers floor(i*h/oh) .. ceil((i+1)*h/oh)
        rows = [(i * h // oh, -(-(i + 1) * h // oh)) for i in range(oh)]
        cols = [(j * w // ow, -(-(j + 1) * w // ow)) for j in range(ow)]
        out = stack(
            [
                stack([x[:, :, r0:r1, c0:c1].mean((2, 3)) for c0, c1 in cols], axis=-1)
                for r0, r1 in rows
            ],
            axis=-2,
        )
    return out.squeeze(0) if single else out


class Conv2d(Module):
    r"""A 2-D convolution layer, like `torch.nn.Conv2d` (groups=1, zero padding).

    Rules: `weight` has shape (out_channels, in_channels, kh, kw), `bias`
    (out_channels,); both start uniform in +-1/sqrt(in_channels * kh * kw), PyTorch's
    default. Input (N, C, H, W) or (C, H, W).

    Example:
        >>> import tinygrad_edu as tg
        >>> conv = tg.nn.Conv2d(1, 4, kernel_size=3, padding=1)
        >>> conv(tg.zeros(2, 1, 8, 8)).shape
        (2, 4, 8, 8)
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        from .layers import _uniform

        if groups != 1 or padding_mode != "zeros":
            raise ValueError(
                message(
                    "Conv2d", "only groups=1 and padding_mode='zeros' are supported", source.here()
                )
            )
        self.in_channels, self.out_channels = int(in_channels), int(out_channels)
        self.kernel_size, self.stride = _pair(kernel_size), _pair(stride)
        self.padding = padding if isinstance(padding, str) else _pair(padding)
        if padding == "same":  # refused when made, as PyTorch
            _refuse_strided_same("Conv2d", stride)
        self.dilation = _pair(dilation)
        bound = 1.0 / math.sqrt(in_channels * self.kernel_size[0] * self.kernel_size[1])
        self.weight = _uniform(bound, (out_channels, in_channels, *self.kernel_size), dtype, device)
        if bias:
            self.bias = _uniform(bound, (out_channels,), dtype, device)
        else:
            self.register_parameter("bias", None)

    def forward(self, x: Tensor) -> Tensor:
        return conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation)

    def extra_repr(self) -> str:
        text = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}"
        )
        if self.padding not in ((0, 0), "valid"):
            text += f", padding={self.padding}"
        if self.bias is None:
            text += ", bias=False"
        return text


class MaxPool2d(Module):
    """The largest value of each `kernel_size` window (stride = kernel_size by default)."""

    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        dilation: Any = 1,
        return_indices: bool = False,  # PyTorch's order: unlike max_pool2d's, before ceil_mode
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        _refuse_pool_options("MaxPool2d", ceil_mode, return_indices)
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation

    def forward(self, x: Tensor) -> Tensor:
        return max_pool2d(x, self.kernel_size, self.stride, self.padding, self.dilation)

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode=False"
        )


class AvgPool2d(Module):
    """The mean of each `kernel_size` window (stride = kernel_size by default)."""

    def __init__(
        self,
        kernel_size: Any,
        stride: Any = None,
        padding: Any = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> None:
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, x: Tensor) -> Tensor:
        return avg_pool2d(
            x,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    """Average down to `output_size` (e.g. 1: one number per channel)."""

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, x: Tensor) -> Tensor:
        return adaptive_avg_pool2d(x, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"
