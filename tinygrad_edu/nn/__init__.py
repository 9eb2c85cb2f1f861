"""`tg.nn`: modules, losses, `tg.nn.functional`, `tg.nn.init` and `tg.nn.utils`, with
PyTorch's names and parameter layouts (so state dicts move between the two).

Core layer: numpy, the standard library and `tinygrad_edu.core` only.
"""

from . import functional, init, utils
from .conv import AdaptiveAvgPool2d, AvgPool2d, Conv2d, MaxPool2d
from .layers import (
    ELU,
    GELU,
    Dropout,
    Embedding,
    Flatten,
    Identity,
    LeakyReLU,
    Linear,
    LogSoftmax,
    ModuleDict,
    ModuleList,
    ReLU,
    RNNCell,
    Sequential,
    Sigmoid,
    SiLU,
    Softmax,
    Softplus,
    Tanh,
)
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from .module import Module, Parameter
from .norm import BatchNorm1d, BatchNorm2d, LayerNorm
from .recurrent import LSTM, RNN, LSTMCell

__all__ = [
    "Module",
    "Parameter",
    "Linear",
    "Sequential",
    "ModuleList",
    "ModuleDict",
    "Identity",
    "Flatten",
    "ReLU",
    "Tanh",
    "Sigmoid",
    "GELU",
    "LeakyReLU",
    "ELU",
    "Softplus",
    "SiLU",
    "Softmax",
    "LogSoftmax",
    "Dropout",
    "Embedding",
    "Conv2d",
    "MaxPool2d",
    "AvgPool2d",
    "AdaptiveAvgPool2d",
    "BatchNorm1d",
    "BatchNorm2d",
    "LayerNorm",
    "RNNCell",
    "RNN",
    "LSTMCell",
    "LSTM",
    "MSELoss",
    "L1Loss",
    "CrossEntropyLoss",
    "NLLLoss",
    "BCELoss",
    "BCEWithLogitsLoss",
    "functional",
    "init",
    "utils",
]
