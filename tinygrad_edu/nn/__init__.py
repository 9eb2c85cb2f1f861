"""`tg.nn`: modules (`Module`, `Parameter`, `Linear`, `Sequential`, `ReLU`, `Tanh`, `Sigmoid`,
`RNNCell`) and `tg.nn.functional` (losses and activations as functions).

Core layer: numpy, the standard library and `tinygrad_edu.core` only.
"""

from . import functional
from .layers import Linear, ReLU, RNNCell, Sequential, Sigmoid, Tanh
from .module import Module, Parameter

__all__ = ["Module", "Parameter", "Linear", "Sequential", "ReLU", "Tanh", "Sigmoid", "RNNCell",
           "functional"]
