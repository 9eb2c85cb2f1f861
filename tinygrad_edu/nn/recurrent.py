"""`RNN`, `LSTMCell` and `LSTM`: the recurrent layers, unrolled one time step at a time.

Each step is ordinary tensor ops, so the graph shows the unrolled loop (and its
length follows the data). Parameter names and layouts are PyTorch's
(`weight_ih_l0`, gates stacked i, f, g, o), so a `state_dict` moves between the two.
Core layer.
"""

from __future__ import annotations

import math
from typing import Any

from ..core import source
from ..core.creation import stack, zeros
from ..core.errors import ShapeError, message
from ..core.tensor import Tensor
from . import functional as F  # noqa: N812
from .layers import _uniform
from .module import Module


def _lstm_step(
    x: Tensor, h: Tensor, c: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Any, b_hh: Any
) -> tuple[Tensor, Tensor]:
    """One LSTM step: gates from x and h, then the new cell and hidden state."""
    gates = F.linear(x, w_ih, b_ih) + F.linear(h, w_hh, b_hh)
    n = h.shape[-1]
    i, f = gates[..., :n].sigmoid(), gates[..., n : 2 * n].sigmoid()
    g, o = gates[..., 2 * n : 3 * n].tanh(), gates[..., 3 * n :].sigmoid()
    c = f * c + i * g  # forget some of the old memory, write some new
    return o * c.tanh(), c


class LSTMCell(Module):
    """One LSTM step: `h, c = cell(x, (h, c))` (zeros when the state is omitted)."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.input_size, self.hidden_size = int(input_size), int(hidden_size)
        k = 1.0 / math.sqrt(hidden_size)
        self.weight_ih = _uniform(k, (4 * hidden_size, input_size), dtype, device)
        self.weight_hh = _uniform(k, (4 * hidden_size, hidden_size), dtype, device)
        if bias:
            self.bias_ih = _uniform(k, (4 * hidden_size,), dtype, device)
            self.bias_hh = _uniform(k, (4 * hidden_size,), dtype, device)
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)

    def forward(self, x: Tensor, hx: Any = None) -> tuple[Tensor, Tensor]:
        x = F._as_tensor(x, self.weight_ih)
        if hx is None:
            h = c = zeros(*x.shape[:-1], self.hidden_size, dtype=self.weight_ih.dtype)
        else:
            h, c = hx
        return _lstm_step(x, h, c, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}"


class _Recurrent(Module):
    _gates = 1

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        nonlinearity: str = "tanh",
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        name = type(self).__name__
        if bidirectional or dropout:
            raise ValueError(
                message(
                    name,
                    "bidirectional layers and dropout between layers are not supported",
                    source.here(),
                )
            )
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(
                message(
                    name,
                    f"nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}",
                    source.here(),
                )
            )
        self.input_size, self.hidden_size = int(input_size), int(hidden_size)
        self.num_layers, self.nonlinearity = int(num_layers), nonlinearity
        self.batch_first, self.bias = batch_first, bias
        k, rows = 1.0 / math.sqrt(hidden_size), self._gates * hidden_size
        for layer in range(num_layers):
            width = input_size if layer == 0 else hidden_size
            setattr(self, f"weight_ih_l{layer}", _uniform(k, (rows, width), dtype, device))
            setattr(self, f"weight_hh_l{layer}", _uniform(k, (rows, hidden_size), dtype, device))
            if bias:
                setattr(self, f"bias_ih_l{layer}", _uniform(k, (rows,), dtype, device))
                setattr(self, f"bias_hh_l{layer}", _uniform(k, (rows,), dtype, device))

    def _layer(self, layer: int) -> tuple:
        get = self._parameters.get
        return (
            get(f"weight_ih_l{layer}"),
            get(f"weight_hh_l{layer}"),
            get(f"bias_ih_l{layer}"),
            get(f"bias_hh_l{layer}"),
        )

    def _sequence(self, x: Any) -> tuple[Tensor, bool]:
        x = F._as_tensor(x, self.weight_ih_l0)
        if x.ndim not in (2, 3) or x.shape[-1] != self.input_size:
            raise ShapeError(
                message(
                    type(self).__name__,
                    f"expected input of shape (seq, batch, "
                    f"{self.input_size}) (batch first with batch_first=True) or "
                    f"(seq, {self.input_size}), got {x.shape!r}",
                    source.here(),
                )
            )
        single = x.ndim == 2
        if single:
            x = x.unsqueeze(1)
        elif self.batch_first:
            x = x.transpose(0, 1)
        return x, single  # now (seq, batch, features)

    def _output(self, outs: list, single: bool) -> Tensor:
        out = stack(outs)  # (seq, batch, hidden)
        if single:
            return out.squeeze(1)
        return out.transpose(0, 1) if self.batch_first else out

    def _state(self, h: Any, batch: int, single: bool) -> list:
        if h is None:
            return [
                zeros(batch, self.hidden_size, dtype=self.weight_ih_l0.dtype)
                for _ in range(self.num_layers)
            ]
        h = h.unsqueeze(1) if single else h
        return [h[layer] for layer in range(self.num_layers)]

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        return text + (", batch_first=True" if self.batch_first else "")


class RNN(_Recurrent):
    r"""An Elman RNN over a whole sequence: `output, h_n = rnn(x, h_0)`, as `torch.nn.RNN`.

    Rules: x has shape (seq, batch, input_size), or (batch, seq, input_size) with
    `batch_first=True`, or (seq, input_size); output holds the last layer's h at every
    step; h_n (num_layers, batch, hidden_size) the last step of every layer.

    Example:
        >>> import tinygrad_edu as tg
        >>> rnn = tg.nn.RNN(3, 5, num_layers=2, batch_first=True)
        >>> out, h = rnn(tg.zeros(4, 7, 3))
        >>> out.shape, h.shape
        ((4, 7, 5), (2, 4, 5))
    """

    def forward(self, x: Any, hx: Any = None) -> tuple[Tensor, Tensor]:
        x, single = self._sequence(x)
        hs = self._state(hx, x.shape[1], single)
        outs = []
        for t in range(x.shape[0]):
            inp = x[t]
            for layer in range(self.num_layers):
                w_ih, w_hh, b_ih, b_hh = self._layer(layer)
                pre = F.linear(inp, w_ih, b_ih) + F.linear(hs[layer], w_hh, b_hh)
                hs[layer] = inp = pre.tanh() if self.nonlinearity == "tanh" else pre.relu()
            outs.append(inp)
        h_n = stack(hs)
        return self._output(outs, single), (h_n.squeeze(1) if single else h_n)


class LSTM(_Recurrent):
    r"""A long short-term memory layer: `output, (h_n, c_n) = lstm(x, (h_0, c_0))`.

    Shapes as for `RNN`; gates are stacked (input, forget, cell, output) as in PyTorch.

    Example:
        >>> import tinygrad_edu as tg
        >>> lstm = tg.nn.LSTM(3, 5)
        >>> out, (h, c) = lstm(tg.zeros(7, 2, 3))
        >>> out.shape, h.shape, c.shape
        ((7, 2, 5), (1, 2, 5), (1, 2, 5))
    """

    _gates = 4

    def forward(self, x: Any, hx: Any = None) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        x, single = self._sequence(x)
        hs = self._state(None if hx is None else hx[0], x.shape[1], single)
        cs = self._state(None if hx is None else hx[1], x.shape[1], single)
        outs = []
        for t in range(x.shape[0]):
            inp = x[t]
            for layer in range(self.num_layers):
                hs[layer], cs[layer] = _lstm_step(inp, hs[layer], cs[layer], *self._layer(layer))
                inp = hs[layer]
            outs.append(inp)
        h_n, c_n = stack(hs), stack(cs)
        if single:
            h_n, c_n = h_n.squeeze(1), c_n.squeeze(1)
        return self._output(outs, single), (h_n, c_n)
