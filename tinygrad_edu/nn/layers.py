"""Layers: `Linear`, `Sequential`, `ReLU`, `Tanh`, `Sigmoid`, `RNNCell`.

Each layer is a small `Module` whose `forward` uses only Tensor ops, so the graph
view shows exactly what it computes. Weights use PyTorch's layouts and default
initialisation (uniform in +-1/sqrt(fan_in)), drawn from numpy's global generator so
`tg.manual_seed(0)` makes a model repeatable. Core layer.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..core import source
from ..core.dtypes import check_device, get_default_dtype
from ..core.errors import ShapeError, message
from ..core.tensor import Tensor
from . import functional as F  # noqa: N812 - PyTorch's conventional alias
from .module import Module, Parameter


def _uniform(bound: float, shape: tuple, dtype: Any, device: Any = None) -> Parameter:
    check_device(device, "nn")
    dt = get_default_dtype() if dtype is None else dtype
    return Parameter(np.random.uniform(-bound, bound, size=shape).astype(dt))


def _check_features(layer: str, x: Tensor, expected: int, what: str) -> None:
    if x.ndim == 0 or x.shape[-1] != expected:
        got = x.shape[-1] if x.ndim else 1
        raise ShapeError(
            message(
                layer,
                f"expected {what} with {expected} features in the last axis, got shape {x.shape!r}",
                source.here(),
                f"the layer was made for {expected} features but the data has {got}; "
                "change the layer's size or reshape the data",
            )
        )


class Linear(Module):
    r"""An affine map y = x @ weight.T + bias, like `torch.nn.Linear`.

    Rules: `weight` has shape (out_features, in_features) and `bias` (out_features,);
    both start uniform in +-1/sqrt(in_features). Input shape (..., in_features) gives
    output shape (..., out_features). float64 unless `dtype=` says otherwise.

    Args:
        in_features: size of each input's last axis.
        out_features: size of each output's last axis.
        bias: learn an additive bias (default True).
        dtype: numpy dtype of the parameters (default float64).

    Raises:
        ShapeError: (on call) an input whose last axis is not `in_features`.

    Example:
        >>> import tinygrad_edu as tg
        >>> layer = tg.nn.Linear(2, 3)
        >>> layer
        Linear(in_features=2, out_features=3, bias=True)
        >>> layer(tg.zeros(4, 2)).shape
        (4, 3)
        >>> [(n, p.shape) for n, p in layer.named_parameters()]
        [('weight', (3, 2)), ('bias', (3,))]
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.in_features, self.out_features = int(in_features), int(out_features)
        bound = 1.0 / np.sqrt(in_features) if in_features > 0 else 0.0
        self.weight = _uniform(bound, (out_features, in_features), dtype, device)
        if bias:
            self.bias = _uniform(bound, (out_features,), dtype, device)
        else:
            self.register_parameter("bias", None)

    def forward(self, x: Tensor) -> Tensor:
        x = F._as_tensor(x, self.weight)
        _check_features(
            f"Linear({self.in_features}, {self.out_features})", x, self.in_features, "input"
        )
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class Sequential(Module):
    r"""Run modules one after another: `Sequential(a, b, c)(x) == c(b(a(x)))`.

    Rules: the modules are registered as "0", "1", ... (or under the keys of a dict
    passed as the only argument), so parameters are named "0.weight", "2.bias", ...
    Supports `len`, iteration, `seq[i]` (negative too), `seq[i:j]` (a Sequential
    keeping the names) and `append`.

    Example:
        >>> import tinygrad_edu as tg
        >>> net = tg.nn.Sequential(tg.nn.Linear(2, 4), tg.nn.ReLU(), tg.nn.Linear(4, 1))
        >>> net
        Sequential(
          (0): Linear(in_features=2, out_features=4, bias=True)
          (1): ReLU()
          (2): Linear(in_features=4, out_features=1, bias=True)
        )
        >>> net(tg.zeros(5, 2)).shape, len(net), net[-1].out_features
        ((5, 1), 3, 1)
    """

    def __init__(self, *modules: Any) -> None:
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], dict):
            for key, m in modules[0].items():
                self.add_module(str(key), m)
        else:
            for m in modules:
                self.append(m)

    def append(self, module: Module) -> Sequential:
        """Add `module` at the end, named by its position; returns self."""
        if not isinstance(module, Module):
            raise TypeError(
                message(
                    "Sequential",
                    f"expected a Module, got {type(module).__name__}",
                    source.here(),
                    "wrap a function in a Module subclass, or call it in your own forward()",
                )
            )
        self.add_module(str(len(self._modules)), module)
        return self

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __setitem__(self, idx: int, module: Module) -> None:
        """`seq[2] = nn.Linear(...)` replaces the module at that position (keeping its name)."""
        key = list(self._modules)[self._position(idx)]
        self.add_module(key, module)

    def _position(self, idx: int) -> int:
        n = len(self._modules)
        if not -n <= idx < n:
            raise IndexError(
                message(
                    "Sequential",
                    f"index {idx} is out of range for {n} modules",
                    source.here(),
                    f"valid indices are 0 to {n - 1} (or -1 for the last)",
                )
            )
        return idx % n

    def __getitem__(self, idx: int | slice) -> Any:
        items = list(self._modules.items())
        if isinstance(idx, slice):
            return Sequential(dict(items[idx]))
        if not -len(items) <= idx < len(items):
            raise IndexError(
                message(
                    "Sequential",
                    f"index {idx} is out of range for {len(items)} modules",
                    source.here(),
                    f"valid indices are 0 to {len(items) - 1} (or -1 for the last)",
                )
            )
        return items[idx][1]

    def forward(self, x: Any) -> Any:
        for m in self._modules.values():
            x = m(x)
        return x


class ReLU(Module):
    """max(x, 0) elementwise, as a layer (see `Tensor.relu`)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace  # write the result into x's own numbers, as PyTorch

    def forward(self, x: Tensor) -> Tensor:
        return F.relu(x, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    """tanh elementwise, as a layer."""

    def forward(self, x: Tensor) -> Tensor:
        return F.tanh(x)


class Sigmoid(Module):
    """1 / (1 + exp(-x)) elementwise, as a layer."""

    def forward(self, x: Tensor) -> Tensor:
        return F.sigmoid(x)


class RNNCell(Module):
    r"""One step of an Elman RNN, like `torch.nn.RNNCell`.

    h' = tanh(x @ weight_ih.T + bias_ih + h @ weight_hh.T + bias_hh)

    Rules: call it once per time step, feeding the previous step's output back in as
    `hx`, so sequences of any length reuse the same four parameters (the graph grows
    one step per element). `x` has shape (batch, input_size) or (input_size,); `hx`
    the matching (batch, hidden_size) or (hidden_size,), zeros when omitted. All
    parameters start uniform in +-1/sqrt(hidden_size).

    Args:
        input_size: features per time step.
        hidden_size: size of the hidden state.
        bias: learn `bias_ih` and `bias_hh` (default True).
        nonlinearity: "tanh" (default) or "relu".
        dtype: numpy dtype of the parameters (default float64).

    Raises:
        ValueError: an unknown nonlinearity.
        ShapeError: (on call) `x` or `hx` with the wrong number of features.

    Example:
        >>> import tinygrad_edu as tg
        >>> cell = tg.nn.RNNCell(1, 4)
        >>> h = None
        >>> for value in [0.5, -1.0, 2.0]:      # a sequence of length 3
        ...     h = cell(tg.tensor([value]), h)
        >>> h.shape
        (4,)
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(
                message(
                    "RNNCell",
                    f"nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}",
                    source.here(),
                )
            )
        self.input_size, self.hidden_size = int(input_size), int(hidden_size)
        self.nonlinearity = nonlinearity
        bound = 1.0 / np.sqrt(hidden_size)
        self.weight_ih = _uniform(bound, (hidden_size, input_size), dtype, device)
        self.weight_hh = _uniform(bound, (hidden_size, hidden_size), dtype, device)
        if bias:
            self.bias_ih = _uniform(bound, (hidden_size,), dtype, device)
            self.bias_hh = _uniform(bound, (hidden_size,), dtype, device)
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)

    def forward(self, x: Tensor, hx: Tensor | None = None) -> Tensor:
        x = F._as_tensor(x, self.weight_ih)
        _check_features(
            f"RNNCell({self.input_size}, {self.hidden_size})", x, self.input_size, "input"
        )
        if hx is None:
            hx = Tensor(np.zeros(x.shape[:-1] + (self.hidden_size,), dtype=self.weight_hh.dtype))
        hx = F._as_tensor(hx, self.weight_hh)
        _check_features(
            f"RNNCell({self.input_size}, {self.hidden_size})",
            hx,
            self.hidden_size,
            "hidden state hx",
        )
        pre = F.linear(x, self.weight_ih, self.bias_ih) + F.linear(hx, self.weight_hh, self.bias_hh)
        return pre.tanh() if self.nonlinearity == "tanh" else pre.relu()

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.bias_ih is None:
            text += ", bias=False"
        if self.nonlinearity != "tanh":
            text += f", nonlinearity={self.nonlinearity}"
        return text


class Identity(Module):
    """Returns its input (a placeholder layer)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, x: Any) -> Any:
        return x


class Flatten(Module):
    """Merge axes `start_dim` .. `end_dim` (default: all but the batch axis) into one."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x: Tensor) -> Tensor:
        return F._as_tensor(x).flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class GELU(Module):
    """x * Phi(x) (the normal CDF, via erf), or its tanh approximation."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, x: Tensor) -> Tensor:
        return F.gelu(x, self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class LeakyReLU(Module):
    """x where x > 0, else negative_slope * x."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.leaky_relu(x, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class ELU(Module):
    """x where x > 0, else alpha * (exp(x) - 1)."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.elu(x, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Softplus(Module):
    """log(1 + exp(beta x)) / beta."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, x: Tensor) -> Tensor:
        return F.softplus(x, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class SiLU(Module):
    """x * sigmoid(x)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.silu(x, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Softmax(Module):
    """softmax along `dim`.

    Rules: without `dim`, PyTorch's old implicit choice, with its warning: axis 0 of a
    0-, 1- or 3-D input, else axis 1 (so a (batch, classes) input works; a 3-D one is taken
    as unbatched (channels, h, w)). Pass `dim` to say what you mean.
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def _axis(self, x: Tensor) -> int:
        if self.dim is not None:
            return self.dim
        warnings.warn(
            f"{type(self).__name__}: implicit dimension choice for softmax has been deprecated "
            "(as in PyTorch); pass dim=...",
            UserWarning,
            stacklevel=4,  # _axis, forward, Module.__call__, the caller
        )
        return 0 if F._as_tensor(x).ndim in (0, 1, 3) else 1

    def forward(self, x: Tensor) -> Tensor:
        return F.softmax(x, self._axis(x))

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """log_softmax along `dim` (pair it with `NLLLoss`); without `dim` as `Softmax`."""

    def forward(self, x: Tensor) -> Tensor:
        return F.log_softmax(x, self._axis(x))


class Dropout(Module):
    r"""Zero elements with probability `p` while training (scaling the rest); off in eval().

    Example:
        >>> import tinygrad_edu as tg
        >>> drop = tg.nn.Dropout(0.5).eval()
        >>> drop(tg.ones(3))
        tensor([1., 1., 1.])
    """

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        self.p, self.inplace = p, inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.dropout(x, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Embedding(Module):
    r"""A table of `num_embeddings` vectors; `emb(idx)` picks rows (`weight[idx]`).

    Rules: `weight` starts standard normal, as in PyTorch; the row `padding_idx` (if
    given) starts at zero and gets no gradient.

    Example:
        >>> import tinygrad_edu as tg
        >>> emb = tg.nn.Embedding(10, 3)
        >>> emb(tg.tensor([[1, 2], [3, 4]]).long()).shape
        (2, 2, 3)
    """

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        check_device(device, "Embedding")
        self.num_embeddings, self.embedding_dim = int(num_embeddings), int(embedding_dim)
        if padding_idx is not None and padding_idx < 0:
            padding_idx += num_embeddings
        self.padding_idx = padding_idx
        dt = get_default_dtype() if dtype is None else dtype
        w = np.random.randn(num_embeddings, embedding_dim).astype(dt)
        if padding_idx is not None:
            w[padding_idx] = 0.0
        self.weight = Parameter(w)

    def forward(self, index: Any) -> Tensor:
        return F.embedding(index, self.weight, self.padding_idx)

    def extra_repr(self) -> str:
        pad = f", padding_idx={self.padding_idx}" if self.padding_idx is not None else ""
        return f"{self.num_embeddings}, {self.embedding_dim}{pad}"


class ModuleList(Module):
    r"""A list of modules, registered as "0", "1", ... (iterate it in your own `forward`).

    Example:
        >>> import tinygrad_edu as tg
        >>> layers = tg.nn.ModuleList([tg.nn.Linear(2, 2) for _ in range(3)])
        >>> len(layers), len(list(layers.parameters()))
        (3, 6)
    """

    def __init__(self, modules: Any = None) -> None:
        super().__init__()
        for m in modules or ():
            self.append(m)

    def append(self, module: Module) -> ModuleList:
        self.add_module(str(len(self._modules)), module)
        return self

    def extend(self, modules: Any) -> ModuleList:
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        for m in items:
            self.append(m)

    def __getitem__(self, idx: int | slice) -> Any:
        items = list(self._modules.values())
        return ModuleList(items[idx]) if isinstance(idx, slice) else items[idx]

    def __setitem__(self, idx: int, module: Module) -> None:
        self.add_module(str(idx % len(self)), module)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __repr__(self) -> str:
        # runs of equal modules print once, as PyTorch's: (0-2): 3 x Linear(...)
        runs: list = []
        for i, m in enumerate(self._modules.values()):
            text = repr(m)
            if runs and runs[-1][2] == text:
                runs[-1][1] = i
            else:
                runs.append([i, i, text])
        lines = [f"({a}): {t}" if a == b else f"({a}-{b}): {b - a + 1} x {t}" for a, b, t in runs]
        if not lines:
            return "ModuleList()"
        return "ModuleList(\n  " + "\n  ".join(line.replace("\n", "\n  ") for line in lines) + "\n)"


class ModuleDict(Module):
    """A dict of modules, registered under their keys."""

    def __init__(self, modules: Any = None) -> None:
        super().__init__()
        for k, m in dict(modules or {}).items():
            self.add_module(k, m)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def keys(self) -> Any:
        return self._modules.keys()

    def values(self) -> Any:
        return self._modules.values()

    def items(self) -> Any:
        return self._modules.items()
