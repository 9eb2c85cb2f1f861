"""Differential testing of nn and optim: random training programs run in tinygrad_edu and
in PyTorch, compared after every step.

A *program* (`NNProgram`) is a small model, a `Sequential` of 1-4 layers whose
hyper-parameters and shapes are drawn to fit one another (Linear, Conv2d, max / average /
adaptive pooling, BatchNorm1d/2d, LayerNorm, Embedding, RNNCell, activations, some with
`inplace=True`, Flatten, Softmax / LogSoftmax with or without dim, Dropout with p=0 or
p=1, or any p in eval mode), weights drawn on the spot and loaded into both models
through `load_state_dict` (so the state-dict keys must match), a loss with random options
(reduction, class weights, ignore_index, label_smoothing, pos_weight) and targets (for
cross-entropy, class indices or class probabilities), an
optimizer with random options (SGD, Adam, AdamW, RMSprop, Adagrad), sometimes a
learning-rate schedule, frozen parameters, a parameter group with its own rate, gradient
clipping, `step(closure)`, a restart of the optimizer and schedule from their
`state_dict()`s, and 1-3 steps of zero_grad / forward / backward / step in train() or
eval() mode.

`generate(rng)` draws a program from a `random.Random`; `run(program, lib)` interprets
it with one library (`TG`, or `torch_lib()`) and records, after each step, the loss,
every parameter's `.grad` (None vs a tensor matters), every parameter, the buffers
(BatchNorm's running statistics), the optimizer's state, the learning rates and the
gradient norm from clipping, plus the first error and where it came from. `compare`
says whether two records agree and, if not, how (`Mismatch.kind`); `shrink` makes a
failing program smaller while it keeps failing the same way, and `reproducer` prints
it as PyTorch code. Everything is float64, so the tolerances are tight.

The package never imports torch; only this test module does, lazily.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
import random
import re
import warnings
import zlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import tinygrad_edu as tg

# --- programs ---------------------------------------------------------------------------


@dataclass
class NNProgram:
    """One random training program; plain data, so it prints and shrinks."""

    layers: list  # [(class name, kwargs)], the model is Sequential(*layers)
    inputs: list  # one input batch per step (float, or int64 indices for an Embedding)
    loss: tuple  # (class name, kwargs); numpy arrays in kwargs become tensors
    targets: list  # one target per step
    optimizer: tuple  # (class name, kwargs)
    steps: int = 1
    modes: list = field(default_factory=list)  # "train" / "eval" per step
    scheduler: tuple | None = None  # (class name, kwargs)
    frozen: list = field(default_factory=list)  # parameter names with requires_grad False
    trainable_only: bool = False  # the optimizer gets only the parameters that need grad
    group_lr: float | None = None  # the first layer's parameters in a group of their own
    zero: str = "optimizer"  # "optimizer" | "optimizer-zeros" | "model" | "model-zeros"
    clip: tuple | None = None  # ("norm", max_norm, norm_type) | ("value", clip_value)
    input_grad: bool = False  # the input batch requires grad (its .grad is compared)
    reload: int | None = None  # after this step the optimizer restarts from its state_dict()
    closure: bool = False  # opt.step(closure), the closure doing zero_grad ... backward
    weight_seed: int = 0

    def __str__(self) -> str:
        return reproducer(self, with_values=False)


# shapes: a batch axis first, then small feature / channel / spatial sizes
ACTIVATIONS = (
    "ReLU",
    "LeakyReLU",
    "ELU",
    "SiLU",
    "GELU",
    "Softplus",
    "Tanh",
    "Sigmoid",
    "Identity",
    "Softmax",
    "LogSoftmax",
    "Dropout",
)
LOSSES = ("MSELoss", "L1Loss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss")
OPTIMIZERS = ("SGD", "Adam", "AdamW", "RMSprop", "Adagrad")
SCHEDULERS = ("StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "LambdaLR")
# LambdaLR's function, by name (a program stays plain data)
LAMBDAS = {"0.5**epoch": lambda e: 0.5**e, "1 / (epoch + 1)": lambda e: 1.0 / (e + 1)}


class _Gen:
    """Draws layers while tracking the shape of the data flowing through them."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.np = np.random.default_rng(rng.getrandbits(32))
        self.layers: list = []
        self.all_eval = False  # every step in eval mode: Dropout may have p > 0

    def choice(self, *options: Any) -> Any:
        return self.rng.choice(options)

    def values(self, shape: tuple) -> np.ndarray:
        if self.rng.random() < 0.3:  # on a grid: ties (max pooling) and exact zeros (relu)
            return self.np.integers(-4, 5, size=shape) / 2.0
        return np.round(self.np.uniform(-2.0, 2.0, size=shape), 4)

    def add(self, name: str, kw: dict | None = None) -> None:
        self.layers.append((name, kw or {}))

    # one kind of layer each: each returns the shape after it ------------------------

    def linear(self, shape: tuple) -> tuple:
        out = self.rng.randint(1, 4)
        kw = {"in_features": shape[-1], "out_features": out}
        if self.rng.random() < 0.3:
            kw["bias"] = False
        self.add("Linear", kw)
        return shape[:-1] + (out,)

    def activation(self, shape: tuple) -> tuple:
        name = self.rng.choice(ACTIVATIONS)
        kw: dict = {}
        inplace = self.rng.random() < 0.3
        if name in ("ReLU", "SiLU") and inplace:
            kw["inplace"] = True
        elif name == "LeakyReLU":
            kw["negative_slope"] = self.choice(0.01, 0.2, -0.5, 1.5)
            kw.update({"inplace": True} if inplace else {})
        elif name == "ELU":
            kw["alpha"] = self.choice(1.0, 0.5, 2.0)
            kw.update({"inplace": True} if inplace else {})
        elif name == "GELU":
            kw["approximate"] = self.choice("none", "tanh")
        elif name == "Softplus":
            kw["beta"], kw["threshold"] = self.choice(1.0, 2.0, 0.5), self.choice(20.0, 1.0, 0.5)
        elif name in ("Softmax", "LogSoftmax") and self.rng.random() < 0.8:
            kw["dim"] = self.rng.randrange(-len(shape), len(shape))  # else PyTorch's implicit
        elif name == "Dropout":
            # random zeros only where they are off (eval); p=0 and p=1 are deterministic
            kw["p"] = self.choice(0.3, 0.5, 1.0) if self.all_eval else self.choice(0.0, 0.0, 1.0)
            kw.update({"inplace": True} if inplace else {})
        self.add(name, kw)
        return shape

    def rnn_cell(self, shape: tuple) -> tuple:
        """One step of an RNNCell from a zero state (a layer of (batch, features) data)."""
        kw: dict = {"input_size": shape[1], "hidden_size": self.rng.randint(1, 3)}
        if self.rng.random() < 0.3:
            kw["nonlinearity"] = "relu"
        if self.rng.random() < 0.2:
            kw["bias"] = False
        self.add("RNNCell", kw)
        return (shape[0], kw["hidden_size"])

    def layer_norm(self, shape: tuple) -> tuple:
        k = 1 if len(shape) < 3 or self.rng.random() < 0.6 else 2
        kw: dict = {"normalized_shape": list(shape[-k:])}
        if self.rng.random() < 0.3:
            kw["eps"] = self.choice(1e-3, 0.1)
        if self.rng.random() < 0.2:
            kw["elementwise_affine"] = False
        elif self.rng.random() < 0.2:
            kw["bias"] = False
        self.add("LayerNorm", kw)
        return shape

    def batch_norm(self, shape: tuple) -> tuple:
        kw: dict = {"num_features": shape[1]}
        if self.rng.random() < 0.3:
            kw["momentum"] = self.choice(0.5, 1.0, None, 0.0)
        if self.rng.random() < 0.2:
            kw["eps"] = self.choice(1e-3, 0.1)
        if self.rng.random() < 0.2:
            kw["affine"] = False
        if self.rng.random() < 0.2:
            kw["track_running_stats"] = False
        self.add("BatchNorm2d" if len(shape) == 4 else "BatchNorm1d", kw)
        return shape

    def flatten(self, shape: tuple) -> tuple:
        start, end = 1, -1
        if len(shape) > 2 and self.rng.random() < 0.3:
            start = self.rng.randint(1, len(shape) - 2)
            end = self.rng.randint(start + 1, len(shape) - 1)
            self.add("Flatten", {"start_dim": start, "end_dim": end})
        else:
            self.add("Flatten")
        end = end % len(shape)
        return shape[:start] + (math.prod(shape[start : end + 1]),) + shape[end + 1 :]

    def conv(self, shape: tuple) -> tuple:
        n, c, h, w = shape
        k = (self.rng.randint(1, min(3, h)), self.rng.randint(1, min(3, w)))
        kw: dict = {"in_channels": c, "out_channels": self.rng.randint(1, 3), "kernel_size": k}
        if self.rng.random() < 0.3:
            kw["stride"] = self.choice(1, 2, (1, 2))
        if self.rng.random() < 0.3:
            kw["padding"] = self.choice(1, (0, 1), "same", "valid")
        if self.rng.random() < 0.2:
            kw["dilation"] = self.choice(1, 2)
        if self.rng.random() < 0.2:
            kw["bias"] = False
        self.add("Conv2d", kw)
        return (n, kw["out_channels"], *_window_out((h, w), kw, "conv"))

    def pool(self, shape: tuple) -> tuple:
        n, c, h, w = shape
        name = self.choice("MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d")
        if name == "AdaptiveAvgPool2d":
            size = (self.rng.randint(1, h + 1), self.rng.randint(1, w + 1))  # may be bigger
            if self.rng.random() < 0.3:
                size = size[0]  # one number: a square output
            self.add(name, {"output_size": size})
            return (n, c, *_pair(size))
        k = (self.rng.randint(1, min(3, h)), self.rng.randint(1, min(3, w)))
        kw: dict = {"kernel_size": k}
        if self.rng.random() < 0.5:
            kw["stride"] = self.choice(1, 2, (2, 1))
        if self.rng.random() < 0.3:
            kw["padding"] = self.choice(0, 1)
        if name == "MaxPool2d" and self.rng.random() < 0.2:
            kw["dilation"] = 2
        if name == "AvgPool2d" and kw.get("padding") and self.rng.random() < 0.4:
            kw["count_include_pad"] = False
        if name == "AvgPool2d" and self.rng.random() < 0.1:
            kw["divisor_override"] = self.choice(1, 3)
        self.add(name, kw)
        return (n, c, *_window_out((h, w), kw, "pool"))


def _pair(v: Any) -> tuple:
    return (v, v) if isinstance(v, int) else tuple(v)


def _window_out(hw: tuple, kw: dict, kind: str) -> tuple:
    """The output size of a convolution or a pooling (PyTorch's formula, no ceil_mode)."""
    k = _pair(kw["kernel_size"])
    s = _pair(kw.get("stride", 1 if kind == "conv" else k))
    d = _pair(kw.get("dilation", 1))
    pad = kw.get("padding", 0)
    if pad == "same":
        return hw
    p = (0, 0) if pad == "valid" else _pair(pad)
    return tuple((hw[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(2))


def _model(g: _Gen) -> tuple:
    """Draw the input and 1-4 layers; returns (input kind, input shape, output shape)."""
    n = g.rng.randint(1, 4)
    kind = g.choice("vec", "vec", "seq", "img", "img", "index")
    shape = {
        "vec": (n, g.rng.randint(1, 4)),
        "seq": (n, g.rng.randint(1, 3), g.rng.randint(1, 4)),
        "img": (n, g.rng.randint(1, 2), g.rng.randint(1, 5), g.rng.randint(1, 5)),
        "index": (n,) if g.rng.random() < 0.5 else (n, g.rng.randint(1, 3)),
    }[kind]
    in_shape = shape
    if kind == "index":
        num = g.rng.randint(2, 5)
        kw = {"num_embeddings": num, "embedding_dim": g.rng.randint(1, 3)}
        if g.rng.random() < 0.3:
            kw["padding_idx"] = g.rng.randrange(-num, num)
        g.add("Embedding", kw)
        shape = shape + (kw["embedding_dim"],)
    for _ in range(g.rng.randint(1, 4) - (kind == "index")):
        shape = _one_layer(g, shape)
        if min(shape) < 1:
            break  # a window bigger than the input: both libraries must refuse
    if min(shape) >= 1 and not _has_parameters(g.layers) and g.rng.random() < 0.9:
        shape = g.linear(shape)  # something to train (a few programs keep none: both refuse)
    return kind, in_shape, shape


def _has_parameters(layers: list) -> bool:
    for name, kw in layers:
        if name in ("Linear", "Conv2d", "Embedding", "RNNCell"):
            return True
        if name.startswith("BatchNorm") and kw.get("affine", True):
            return True
        if name == "LayerNorm" and kw.get("elementwise_affine", True):
            return True
    return False


def _one_layer(g: _Gen, shape: tuple) -> tuple:
    makers = [g.linear, g.activation, g.activation, g.layer_norm]
    if len(shape) in (2, 3):
        makers += [g.batch_norm]
    if len(shape) == 2:
        makers += [g.rnn_cell]
    if len(shape) == 4:
        makers += [g.conv, g.conv, g.pool, g.pool, g.batch_norm]
    if len(shape) > 2:
        makers += [g.flatten]
    return g.rng.choice(makers)(shape)


def _loss(g: _Gen, shape: tuple, steps: int) -> tuple:
    """Draw a loss that fits the model's output (adding a last layer where one is needed)."""
    name = g.rng.choice(LOSSES)
    kw: dict = {}
    shape = tuple(max(n, 1) for n in shape)  # (a window too big for the input: both refuse)
    if g.rng.random() < 0.5:
        kw["reduction"] = g.choice("mean", "sum", "none")
    if name in ("CrossEntropyLoss", "NLLLoss"):
        if len(shape) != 2:
            shape = g.flatten(shape) if len(shape) > 2 else shape
        if len(shape) != 2:
            name = "MSELoss"
    if name in ("CrossEntropyLoss", "NLLLoss"):
        if name == "NLLLoss" and g.rng.random() < 0.7:
            g.add("LogSoftmax", {"dim": 1})
        if name == "CrossEntropyLoss" and g.rng.random() < 0.25:  # soft labels
            targets = [_probability_rows(g, shape) for _ in range(steps)]
            return (name, _soft_options(g, shape[1], kw)), targets
        targets = [g.np.integers(0, shape[1], size=shape[:1]) for _ in range(steps)]
        return (name, _class_options(g, name, shape[1], targets, kw)), targets
    if name in ("BCELoss", "BCEWithLogitsLoss") and g.rng.random() < 0.3:
        size = shape[g.rng.randint(0, len(shape)) :]  # broadcasts over the leading axes
        kw["weight"] = np.array(np.round(g.np.uniform(0.0, 2.0, size=size), 3))
    if name == "BCELoss":
        if not g.layers or g.layers[-1][0] != "Sigmoid":
            g.add("Sigmoid")
    if name == "BCEWithLogitsLoss" and g.rng.random() < 0.4:
        kw["pos_weight"] = np.round(g.np.uniform(0.5, 3.0, size=shape[-1:]), 3)
    if name in ("BCELoss", "BCEWithLogitsLoss"):
        soft = g.rng.random() < 0.5
        targets = [
            np.round(g.np.uniform(0, 1, size=shape), 3)
            if soft
            else g.np.integers(0, 2, size=shape).astype(np.float64)
            for _ in range(steps)
        ]
        return (name, kw), targets
    return (name, kw), [g.values(shape) for _ in range(steps)]


def _class_options(g: _Gen, name: str, classes: int, targets: list, kw: dict) -> dict:
    """weight, ignore_index (some targets set to it) and label_smoothing, each sometimes."""
    if g.rng.random() < 0.3:
        kw["weight"] = np.round(g.np.uniform(0.0, 2.0, size=(classes,)), 3)
    if g.rng.random() < 0.3:
        kw["ignore_index"] = g.choice(-100, -1, 0, classes - 1)
        for t in targets:
            t[g.np.random(size=t.shape) < 0.4] = kw["ignore_index"]
    if name == "CrossEntropyLoss" and g.rng.random() < 0.3:
        kw["label_smoothing"] = g.choice(0.1, 0.5, 1.0)
    return kw


def _probability_rows(g: _Gen, shape: tuple) -> np.ndarray:
    """One row of class probabilities per example (uneven, some near 0)."""
    p = g.np.uniform(0, 1, size=shape) ** 3
    return np.round(p / p.sum(axis=1, keepdims=True), 3)


def _soft_options(g: _Gen, classes: int, kw: dict) -> dict:
    """weight and label_smoothing, each sometimes; rarely an ignore_index (-1 names no class
    and passes in both; 0 is refused by both with probabilities)."""
    if g.rng.random() < 0.3:
        kw["weight"] = np.round(g.np.uniform(0.0, 2.0, size=(classes,)), 3)
    if g.rng.random() < 0.3:
        kw["label_smoothing"] = g.choice(0.1, 0.5, 1.0)
    if g.rng.random() < 0.05:
        kw["ignore_index"] = g.choice(-1, 0)
    return kw


def _optimizer(g: _Gen) -> tuple:
    name = g.rng.choice(OPTIMIZERS)
    kw: dict = {"lr": g.choice(0.1, 0.01, 0.5, 1e-3)}
    maybe = g.rng.random
    if name == "SGD":
        if maybe() < 0.05:  # nesterov without momentum: both must refuse
            kw["nesterov"] = True
        elif maybe() < 0.6:
            kw["momentum"] = g.choice(0.9, 0.5)
            if maybe() < 0.3:
                kw["dampening"] = g.choice(0.1, 0.5)
            elif maybe() < 0.5:
                kw["nesterov"] = True
    elif name in ("Adam", "AdamW"):
        if maybe() < 0.3:
            kw["betas"] = g.choice((0.5, 0.9), (0.9, 0.99), (0.0, 0.5))
        if maybe() < 0.3:
            kw["amsgrad"] = True
        if maybe() < 0.2:
            kw["eps"] = g.choice(1e-3, 1e-6)
    elif name == "RMSprop":
        if maybe() < 0.3:
            kw["alpha"] = g.choice(0.9, 0.5)
        if maybe() < 0.4:
            kw["momentum"] = g.choice(0.9, 0.5)
        if maybe() < 0.4:
            kw["centered"] = True
    elif name == "Adagrad":
        if maybe() < 0.3:
            kw["lr_decay"] = g.choice(0.1, 0.5)
        if maybe() < 0.3:
            kw["initial_accumulator_value"] = g.choice(0.1, 1.0)
    if maybe() < 0.3:
        kw["weight_decay"] = g.choice(0.01, 0.1, 0.5)
    if maybe() < 0.15:
        kw["maximize"] = True
    return name, kw


def _scheduler(g: _Gen) -> tuple:
    name = g.rng.choice(SCHEDULERS)
    kw: dict = {
        "StepLR": lambda: {"step_size": g.rng.randint(1, 2), "gamma": g.choice(0.5, 0.1)},
        "MultiStepLR": lambda: {"milestones": sorted(g.rng.sample(range(1, 4), 2)), "gamma": 0.5},
        "ExponentialLR": lambda: {"gamma": g.choice(0.5, 0.9)},
        "CosineAnnealingLR": lambda: {"T_max": g.rng.randint(1, 3), "eta_min": g.choice(0.0, 1e-3)},
        "LambdaLR": lambda: {"lr_lambda": g.rng.choice(sorted(LAMBDAS))},
    }[name]()
    return name, kw


def generate(rng: random.Random) -> NNProgram:
    """A random training program."""
    g = _Gen(rng)
    steps = rng.randint(1, 3)
    modes = rng.choice((["train"] * steps,) * 5 + (["eval"] * steps, None))
    modes = modes or [rng.choice(("train", "eval")) for _ in range(steps)]
    g.all_eval = all(m == "eval" for m in modes)
    kind, in_shape, out_shape = _model(g)
    if kind == "index":
        num = g.layers[0][1]["num_embeddings"]
        inputs = [g.np.integers(0, num, size=in_shape) for _ in range(steps)]
    else:
        inputs = [g.values(in_shape) for _ in range(steps)]
    loss, targets = _loss(g, out_shape, steps)
    p = NNProgram(g.layers, inputs, loss, targets, _optimizer(g), steps, modes)
    p.scheduler = _scheduler(g) if rng.random() < 0.3 else None
    p.zero = rng.choice(("optimizer", "optimizer", "optimizer-zeros", "model", "model-zeros"))
    if rng.random() < 0.2:
        p.clip = rng.choice((("norm", rng.choice((0.1, 1.0, 10.0)), rng.choice((2.0, 1.0, math.inf))),
                             ("value", rng.choice((0.1, 1.0)))))  # fmt: skip
    names = [n for n, _ in parameter_shapes(p)]
    if names and rng.random() < 0.2:
        p.frozen = rng.sample(names, rng.randint(1, min(2, len(names))))
        p.trainable_only = rng.random() < 0.5
    if names and rng.random() < 0.2:
        p.group_lr = rng.choice((0.05, 0.0, 1.0))
    p.input_grad = kind != "index" and rng.random() < 0.2
    if steps > 1 and rng.random() < 0.25:
        p.reload = rng.randrange(steps - 1)
    p.closure = rng.random() < 0.15
    p.weight_seed = rng.getrandbits(31)
    return p


def seeded(seed: int) -> NNProgram:
    return generate(random.Random(seed))


def parameter_shapes(p: NNProgram) -> list:
    """[(name, shape)] of the model's parameters (built once in tinygrad_edu)."""
    try:
        model = _build_model(p, TG)
    except Exception:  # noqa: BLE001 - a model that cannot be built has no parameters
        return []
    return [(n, t.shape) for n, t in model.named_parameters()]


def weights(p: NNProgram, names_shapes: list) -> dict:
    """The values loaded into both models: drawn per name, so shrinking keeps the others."""
    out = {}
    for name, shape in names_shapes:
        rng = np.random.default_rng([p.weight_seed, zlib.crc32(name.encode())])
        if name.endswith("num_batches_tracked"):
            out[name] = np.asarray(rng.integers(0, 3), dtype=np.int64)
        elif name.endswith("running_var"):
            out[name] = np.round(rng.uniform(0.5, 2.0, size=shape), 4)
        elif rng.random() < 0.3:
            out[name] = rng.integers(-4, 5, size=shape) / 4.0
        else:
            out[name] = np.round(rng.uniform(-1.0, 1.0, size=shape), 4)
    return out


# --- the two libraries ------------------------------------------------------------------


class TG:
    name = "tinygrad_edu"
    nn = tg.nn
    optim = tg.optim
    clip_grad_norm_ = staticmethod(tg.nn.utils.clip_grad_norm_)
    clip_grad_value_ = staticmethod(tg.nn.utils.clip_grad_value_)
    tensor = staticmethod(lambda v: tg.tensor(np.array(v)))  # a copy: inplace layers write
    numpy = staticmethod(lambda t: np.array(t.numpy()))
    double = staticmethod(lambda m: m)  # float64 is tinygrad_edu's default
    grad_of = staticmethod(lambda t: None if t.grad_held is None else np.array(t.grad_held.numpy()))
    set_grad = staticmethod(lambda t, g: setattr(t, "grad", tg.tensor(g)))
    before_step = staticmethod(lambda model: None)


def torch_lib() -> Any:
    import torch

    class Torch:
        name = "torch"
        nn = torch.nn
        optim = torch.optim
        clip_grad_norm_ = staticmethod(torch.nn.utils.clip_grad_norm_)
        clip_grad_value_ = staticmethod(torch.nn.utils.clip_grad_value_)
        tensor = staticmethod(lambda v: torch.tensor(np.array(v)))
        numpy = staticmethod(lambda t: t.detach().numpy().copy())
        double = staticmethod(lambda m: m.double())
        grad_of = staticmethod(lambda t: None if t.grad is None else t.grad.numpy().copy())
        set_grad = staticmethod(lambda t, g: setattr(t, "grad", torch.tensor(g)))
        before_step = staticmethod(lambda model: None)

    return Torch


# --- running ------------------------------------------------------------------------------


@dataclass
class Record:
    """What one library made of a program: a snapshot after each step, or an error."""

    snapshots: list = field(default_factory=list)
    state_keys: list = field(default_factory=list)
    error: Exception | None = None
    error_at: str | None = None  # "build model", "step 1 forward", ...


def _build_model(p: NNProgram, lib: Any) -> Any:
    return lib.double(lib.nn.Sequential(*[getattr(lib.nn, n)(**kw) for n, kw in p.layers]))


def _build_loss(p: NNProgram, lib: Any) -> Any:
    name, kw = p.loss
    kw = {k: lib.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    return getattr(lib.nn, name)(**kw)


def _build_optimizer(p: NNProgram, lib: Any, model: Any) -> Any:
    named = [(n, t) for n, t in model.named_parameters()]
    if p.trainable_only:
        named = [(n, t) for n, t in named if t.requires_grad]
    params: list = [t for _, t in named]
    if p.group_lr is not None and named:  # (an empty group is no test: torch takes it, we refuse)
        first = named[0][0].split(".")[0]
        own = [t for n, t in named if n.split(".")[0] == first]
        rest = [t for n, t in named if n.split(".")[0] != first]
        params = [{"params": own, "lr": p.group_lr}] + ([{"params": rest}] if rest else [])
    name, kw = p.optimizer
    return getattr(lib.optim, name)(params, **kw)


def _build_scheduler(p: NNProgram, lib: Any, opt: Any) -> Any:
    if p.scheduler is None:
        return None
    name, kw = p.scheduler
    if name == "LambdaLR":
        kw = {"lr_lambda": LAMBDAS[kw["lr_lambda"]]}
    return getattr(lib.optim.lr_scheduler, name)(opt, **kw)


def _build(p: NNProgram, lib: Any, rec: Record) -> tuple:
    rec.error_at = "build model"
    model = _build_model(p, lib)
    rec.state_keys = list(model.state_dict())
    rec.error_at = "load weights"
    shapes = [(n, tuple(t.shape)) for n, t in model.state_dict().items()]
    model.load_state_dict({k: lib.tensor(v) for k, v in weights(p, shapes).items()})
    for n, t in model.named_parameters():
        if n in p.frozen:
            t.requires_grad_(False)
    rec.error_at = "build loss"
    loss_fn = _build_loss(p, lib)
    rec.error_at = "build optimizer"
    opt = _build_optimizer(p, lib, model)
    rec.error_at = "build scheduler"
    return model, loss_fn, opt, _build_scheduler(p, lib, opt)


def _one_step(p: NNProgram, lib: Any, k: int, parts: tuple, rec: Record) -> dict:
    """zero_grad, forward, backward, clip, optimizer step (with `closure` the first four
    run inside `opt.step(closure)`, as PyTorch's closure API has it), schedule step."""
    model, loss_fn, opt, sched = parts
    model.train(p.modes[k] == "train")
    snap: dict = {}

    def closure():
        loss = _forward_backward(p, lib, k, parts, rec, snap)
        rec.error_at = f"step {k} clip"
        params = list(model.parameters())
        if p.clip and p.clip[0] == "norm":
            snap["clip"] = float(lib.clip_grad_norm_(params, p.clip[1], p.clip[2]))
        elif p.clip:
            lib.clip_grad_value_(params, p.clip[1])
        lib.before_step(model)
        rec.error_at = f"step {k} optimizer step"
        return loss

    if p.closure:
        opt.step(closure)
    else:
        closure()
        opt.step()
    if sched is not None:
        rec.error_at = f"step {k} scheduler step"
        sched.step()
    return _snapshot(lib, model, opt, snap)


def _forward_backward(p: NNProgram, lib: Any, k: int, parts: tuple, rec: Record, snap: dict):
    model, loss_fn, opt, _ = parts
    rec.error_at = f"step {k} zero_grad"
    owner = opt if p.zero.startswith("optimizer") else model
    owner.zero_grad(set_to_none=not p.zero.endswith("zeros"))
    x = lib.tensor(p.inputs[k])
    if p.input_grad:
        x.requires_grad_(True)
    rec.error_at = f"step {k} forward"
    out = model(x)
    rec.error_at = f"step {k} loss"
    loss = loss_fn(out, lib.tensor(p.targets[k]))
    rec.error_at = f"step {k} backward"
    (loss.sum() if loss.ndim else loss).backward()
    snap.update(loss=lib.numpy(loss), **{"x.grad": lib.grad_of(x) if p.input_grad else None})
    if p.loss[0] == "BCELoss":  # see KNOWN: PyTorch's BCE gradient where p(1 - p) < 1e-12
        probs = lib.numpy(out)
        snap["saturated"] = bool(np.any(probs * (1 - probs) < 1e-12))
    snap["grads"] = {n: lib.grad_of(t) for n, t in model.named_parameters()}
    return loss


def _snapshot(lib: Any, model: Any, opt: Any, snap: dict) -> dict:
    """Everything after a step that both libraries expose, by parameter name."""
    snap["params"] = {n: lib.numpy(t) for n, t in model.named_parameters()}
    snap["buffers"] = {n: lib.numpy(t) for n, t in model.named_buffers()}
    snap["lr"] = [g["lr"] for g in opt.param_groups]
    state = {}
    for n, t in model.named_parameters():
        s = opt.state.get(t) if hasattr(opt.state, "get") else None
        state[n] = {k: _as_array(lib, v) for k, v in (s or {}).items()}
    snap["state"] = state
    return snap


def _as_array(lib: Any, v: Any) -> Any:
    if isinstance(v, (int, float, np.ndarray, np.number)):
        return np.array(v, dtype=np.float64)  # a copy: the optimizer changes its state in place
    with contextlib.suppress(Exception):
        return np.asarray(lib.numpy(v), dtype=np.float64)
    return v


def _reload(p: NNProgram, lib: Any, parts: tuple) -> tuple:
    """A new optimizer (and schedule) that goes on from the old ones' state_dict()s, as a
    training run restarted from a checkpoint does."""
    model, loss_fn, opt, sched = parts
    new_opt = _build_optimizer(p, lib, model)
    new_sched = _build_scheduler(p, lib, new_opt)
    new_opt.load_state_dict(opt.state_dict())
    if sched is not None:
        new_sched.load_state_dict(sched.state_dict())
    return model, loss_fn, new_opt, new_sched


def run(p: NNProgram, lib: Any) -> Record:
    """Interpret `p` with `lib` (TG or torch_lib())."""
    rec = Record()
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            parts = _build(p, lib, rec)
            for k in range(p.steps):
                rec.snapshots.append(_one_step(p, lib, k, parts, rec))
                if p.reload == k:
                    rec.error_at = f"step {k} reload"
                    parts = _reload(p, lib, parts)
            rec.error_at = None
        except Exception as e:  # noqa: BLE001 - every error is a result to compare
            rec.error = e
    return rec


# --- comparing ----------------------------------------------------------------------------


@dataclass
class Mismatch:
    kind: str  # tg-raised | torch-raised | error-step | state-keys | loss | grad | param | ...
    detail: str
    silent: bool  # tinygrad gave an answer (no error) that differs from PyTorch's


def compare(
    ours: Record, theirs: Record, rtol: float = 1e-7, atol: float = 1e-9
) -> Mismatch | None:
    """None when the records agree; otherwise the first difference."""
    if ours.state_keys and theirs.state_keys and ours.state_keys != theirs.state_keys:
        return Mismatch(
            "state-keys", f"tinygrad {ours.state_keys}, torch {theirs.state_keys}", True
        )
    if (ours.error is None) != (theirs.error is None):
        if ours.error is None:
            return Mismatch(
                "torch-raised", f"torch raised at {theirs.error_at}: {_short(theirs.error)}", True
            )
        return Mismatch(
            "tg-raised", f"tinygrad raised at {ours.error_at}: {_short(ours.error)}", False
        )
    if ours.error is not None and ours.error_at != theirs.error_at:
        return Mismatch(
            "error-step",
            f"tinygrad raised at {ours.error_at} ({_short(ours.error)}), "
            f"torch at {theirs.error_at} ({_short(theirs.error)})",
            False,
        )
    for k, (mine, other) in enumerate(zip(ours.snapshots, theirs.snapshots)):
        m = _compare_snapshot(mine, other, rtol, atol)
        if m is not None:
            m.detail = f"after step {k}: {m.detail}"
            return m
    return None


def _compare_snapshot(mine: dict, other: dict, rtol: float, atol: float) -> Mismatch | None:
    pairs = [("loss", "loss", mine["loss"], other["loss"])]
    pairs.append(("grad", "input x", mine["x.grad"], other["x.grad"]))
    pairs += [("grad", n, mine["grads"][n], g) for n, g in other["grads"].items()]
    if "clip" in other:
        pairs.append(("clip", "total norm", mine.get("clip"), other["clip"]))
    pairs += [("param", n, mine["params"][n], v) for n, v in other["params"].items()]
    pairs += [("buffer", n, mine["buffers"].get(n), v) for n, v in other["buffers"].items()]
    pairs.append(("lr", "param_groups lr", np.array(mine["lr"]), np.array(other["lr"])))
    for n, s in other["state"].items():
        own = mine["state"].get(n, {})
        pairs += [("state", f"{n} {k}", own[k], v) for k, v in s.items() if k in own]
    for kind, what, a, b in pairs:
        if not _same(a, b, rtol, atol):
            return Mismatch(kind, f"{what}: tinygrad {_arr(a)}, torch {_arr(b)}", True)
    return None


def _same(a: Any, b: Any, rtol: float, atol: float) -> bool:
    if a is None or b is None:
        return a is None and b is None
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return a.shape == b.shape and bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True))


def _short(e: BaseException | None) -> str:
    text = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    return text[:200]


def _arr(a: Any) -> str:
    if not isinstance(a, np.ndarray):
        return repr(a)
    return np.array2string(a, precision=6, separator=",", threshold=12).replace("\n", "")


def differ(p: NNProgram, torch_lib_: Any, records: list | None = None) -> Mismatch | None:
    """Run `p` in both libraries and compare.

    A difference in parameters or optimizer state (the gradients agreeing within the
    tolerance) that goes away when every gradient element below TINY is made exactly 0 in
    both libraries before the optimizer step is reported as kind "tiny-gradient" (a KNOWN
    difference): rounding noise that an adaptive optimizer blows up to a step of size lr.
    So is a difference in gradients of at most TINY (noise that a normalisation over
    equal values magnified): larger gradient differences are never put down to it."""
    ours, theirs = run(p, TG), run(p, torch_lib_)
    if records is not None:  # the caller wants them too (the campaign prints both errors)
        records[:] = [ours, theirs]
    m = compare(ours, theirs)
    if m is not None and m.kind in _NUMBERS:
        if any(s.get("saturated") for s in ours.snapshots + theirs.snapshots):
            return Mismatch("bce-saturated", m.detail, m.silent)
    if (
        m is not None
        and m.kind in ("torch-raised", "error-step")
        and _INPLACE_REFUSAL.search(str(theirs.error))
    ):
        # PyTorch refused an in-place activation's backward: is ours the out-of-place answer?
        # (ours the same with inplace=True dropped, and that program PyTorch's, or PyTorch's
        # but for a difference accepted below: noise through a LayerNorm over one number)
        runs: list = []
        again = differ(_out_of_place(p), torch_lib_, runs)
        if compare(ours, runs[0]) is None and (again is None or known(again) is not None):
            return Mismatch("inplace-activation", m.detail, m.silent)
    if m is not None and m.kind == "grad" and compare(ours, theirs, atol=TINY) is None:
        return Mismatch("tiny-gradient", m.detail, m.silent)  # noise of size < TINY
    if m is not None and m.kind in ("param", "state"):  # the gradients agreed: the step?
        snapped = compare(run(p, _snap_tiny(TG)), run(p, _snap_tiny(torch_lib_)))
        if snapped is None:
            return Mismatch("tiny-gradient", m.detail, m.silent)
    if m is not None and m.kind in _NUMBERS:
        # rounding noise at a kink? (every layer's output rounded to a multiple of GRID in
        # both libraries, the gradients left as they are but for the noise above: TINY)
        snapped_tg, snapped_torch = (
            _snap_values(_snap_tiny(TG)),
            _snap_values(_snap_tiny(torch_lib_)),
        )
        if compare(run(p, snapped_tg), run(p, snapped_torch), atol=TINY) is None:
            return Mismatch("kink-noise", m.detail, m.silent)
    return m


_NUMBERS = ("param", "state", "loss", "grad", "buffer", "clip")  # mismatch kinds in values

_INPLACE_REFUSAL = re.compile(r"modified by an inplace operation|In-place leakyReLu backward")


def _out_of_place(p: NNProgram) -> NNProgram:
    """`p` with every layer's inplace=True dropped."""
    layers = [(n, {k: v for k, v in kw.items() if k != "inplace"}) for n, kw in p.layers]
    return dataclasses.replace(p, layers=layers)


TINY = 1e-7  # rounding noise through a normalisation over (nearly) equal values


def _snap_tiny(lib: Any) -> Any:
    """`lib` whose optimizers see every gradient element below TINY as exactly 0."""

    class Snapped(lib):
        @staticmethod
        def before_step(model):
            for t in model.parameters():
                g = lib.grad_of(t)
                if g is not None and np.any((np.abs(g) < TINY) & (g != 0)):
                    g[np.abs(g) < TINY] = 0.0
                    lib.set_grad(t, g)

    return Snapped


GRID = 2.0**-40  # about 1e-12: a layer's outputs closer than this are rounding noise apart


def _snap_values(lib: Any) -> Any:
    """`lib` whose layers round their outputs to a multiple of GRID, with the gradient
    passing unchanged (`out - noise`, the noise a constant): which side of a kink (relu at
    0, L1's sign, softplus's threshold) a value within rounding noise of it falls on is then
    the same in both libraries, and how each library takes a kink is still compared."""

    class Snapped(lib):
        @staticmethod
        def double(model):
            model = lib.double(model)
            for layer in model:
                layer.forward = functools.partial(_snapped_forward, lib, layer.forward)
            return model

    return Snapped


def _snapped_forward(lib: Any, forward: Any, *args: Any, **kwargs: Any) -> Any:
    out = forward(*args, **kwargs)
    values = lib.numpy(out)
    return out - lib.tensor(values - np.round(values / GRID) * GRID)


# Differences accepted on purpose, each with its reason (docs/pytorch_differences.md):
# (kind, a regular expression on the mismatch's detail) -> why. `scripts/fuzz_nn.py`
# counts them apart; the test suite lets them pass.
KNOWN: dict[tuple[str, str], str] = {
    (
        "tiny-gradient",
        r"",
    ): "rounding noise in a gradient that is zero in exact arithmetic (a LayerNorm over one "
    "number, a BatchNorm channel of equal values): PyTorch's fused kernels leave ~1e-16 where "
    "tinygrad's composed ops give 0 (or the other way round), a normalisation over equal "
    "values magnifies it (up to 1e-7 here), and Adam, RMSprop and Adagrad divide the gradient "
    "by its own size, so the noise becomes a step of size lr (docs/pytorch_differences.md, "
    "'Rounding noise')",
    (
        "kink-noise",
        r"",
    ): "rounding noise that falls on a kink: PyTorch's batch norm computes x * a + b, so a "
    "channel whose values are all equal comes out as bias plus ~1e-15 where tinygrad's "
    "(x - mean) / std gives bias exactly; a ReLU, LeakyReLU, L1Loss or Softplus's threshold "
    "after it takes the two on different sides. Counted so only when the program agrees "
    "with every layer's output rounded to a multiple of 2^-40 (about 1e-12) in both "
    "libraries, and gradient elements below 1e-7 made 0 as for tiny-gradient "
    "(docs/pytorch_differences.md, 'Rounding noise')",
    (
        "bce-saturated",
        r"",
    ): "BCELoss of a probability within 1e-12 of 0 or 1 (a sigmoid of a logit beyond about "
    "+-27.6): PyTorch's backward divides by max(p (1 - p), 1e-12), so its gradient there is "
    "smaller than the derivative; tinygrad's BCE is composed of clip and log, and its "
    "gradient is the derivative of the loss it computes (docs/pytorch_differences.md, "
    "'Computed differently')",
    (
        "inplace-activation",
        r"",
    ): "an in-place activation (LeakyReLU, ELU, SiLU with inplace=True) whose output another "
    "in-place layer changes, or LeakyReLU(inplace=True) with a negative slope: PyTorch's "
    "kernel saved its output (or cannot undo a negative slope) and refuses the backward; "
    "tinygrad's in-place activations keep what their backward needs, and give the answer of "
    "the same model without inplace=True (checked: the program is run again that way in "
    "PyTorch) (docs/pytorch_differences.md, 'Computed here, refused by PyTorch')",
    (
        "torch-raised",
        r"at step \d+ clip: RuntimeError: Expected !nested_tensorlist\[0\]\.empty\(\)",
    ): "PyTorch's bug: clip_grad_value_ over parameters none of which has a .grad fails with "
    "an internal assertion (its foreach kernel gets an empty list); clip_grad_norm_ returns "
    "0 for the same parameters, and tinygrad's clip_grad_value_ leaves them alone "
    "(docs/pytorch_differences.md, 'PyTorch's bugs')",
}


def known(m: Mismatch) -> str | None:
    """The reason a mismatch is accepted (an entry of KNOWN), or None."""
    for (kind, pattern), reason in KNOWN.items():
        if re.fullmatch(kind, m.kind) and re.search(pattern, m.detail):
            return reason
    return None


# --- shrinking and printing -------------------------------------------------------------


def _smaller(p: NNProgram):
    """Programs a little simpler than `p` (each one change)."""
    rep = dataclasses.replace
    if p.steps > 1:
        reload = p.reload if p.reload is not None and p.reload < p.steps - 2 else None
        yield rep(p, steps=p.steps - 1, inputs=p.inputs[:-1], targets=p.targets[:-1],
                  modes=p.modes[:-1], reload=reload)  # fmt: skip
    if p.closure:
        yield rep(p, closure=False)
    for name in ("scheduler", "clip", "group_lr", "reload"):
        if getattr(p, name) is not None:
            yield rep(p, **{name: None})
    if p.frozen:
        yield rep(p, frozen=[], trainable_only=False)
    if p.input_grad:
        yield rep(p, input_grad=False)
    if p.zero != "optimizer":
        yield rep(p, zero="optimizer")
    for i in range(len(p.layers)):
        yield rep(p, layers=p.layers[:i] + p.layers[i + 1 :])
    for what in ("optimizer", "loss"):
        name, kw = getattr(p, what)
        for k in kw:
            if k != "lr":
                yield rep(p, **{what: (name, {j: v for j, v in kw.items() if j != k})})
    for i, (name, kw) in enumerate(p.layers):
        for k in kw:
            yield rep(p, layers=p.layers[:i] + [(name, {j: v for j, v in kw.items() if j != k})]
                      + p.layers[i + 1 :])  # fmt: skip
    if p.optimizer[0] != "SGD":
        yield rep(p, optimizer=("SGD", {"lr": p.optimizer[1]["lr"]}))
    if any(m != "train" for m in p.modes):
        yield rep(p, modes=["train"] * p.steps)


def shrink(p: NNProgram, torch_lib_: Any, kind: str, budget: int = 300) -> NNProgram:
    """A smaller program that still fails with a mismatch of `kind` (greedy, one change at
    a time, at most `budget` runs)."""
    tries = 0
    changed = True
    while changed and tries < budget:
        changed = False
        for q in _smaller(p):
            tries += 1
            m = differ(q, torch_lib_)
            if m is not None and m.kind == kind:
                p, changed = q, True
                break
            if tries >= budget:
                break
    return p


def _kw_text(kw: dict) -> str:
    return ", ".join(f"{k}={_value_text(v)}" for k, v in kw.items())


def _value_text(v: Any) -> str:
    if isinstance(v, np.ndarray):
        return f"torch.tensor({v.tolist()!r})"
    return repr(v)


def reproducer(p: NNProgram, with_values: bool = True) -> str:
    """`p` as PyTorch code (runs as is with torch, float64; tinygrad_edu takes the same
    lines with `import tinygrad_edu as torch`)."""
    lines = ["import math", "torch.set_default_dtype(torch.float64)", "model = nn.Sequential("]
    lines += [f"    nn.{n}({_kw_text(kw)})," for n, kw in p.layers]
    lines.append(")")
    shapes = [(n, s) for n, s in _state_shapes(p)]
    if with_values:
        w = {k: v.tolist() for k, v in weights(p, shapes).items()}
        lines.append(f"model.load_state_dict({{k: torch.tensor(v) for k, v in {w!r}.items()}})")
    else:
        lines.append(
            f"model.load_state_dict(weights(seed={p.weight_seed}))  # {len(shapes)} tensors"
        )
    for name in p.frozen:
        lines.append(f"model.get_parameter({name!r}).requires_grad_(False)")
    lines.append(f"loss_fn = nn.{p.loss[0]}({_kw_text(p.loss[1])})")
    lines += _optimizer_text(p)
    lines += _loop_text(p, with_values)
    return "\n".join(lines)


def _optimizer_text(p: NNProgram) -> list:
    wanted = " if p.requires_grad" if p.trainable_only else ""
    lines = [f"named = [(n, p) for n, p in model.named_parameters(){wanted}]"]
    params = "[p for n, p in named]"
    names = [n for n, _ in parameter_shapes(p) if not (p.trainable_only and n in p.frozen)]
    if p.group_lr is not None and names:
        first = names[0].split(".")[0]
        own = f"[p for n, p in named if n.split('.')[0] == {first!r}]"
        rest = f"[p for n, p in named if n.split('.')[0] != {first!r}]"
        has_rest = any(n.split(".")[0] != first for n in names)
        params = f"[{{'params': {own}, 'lr': {p.group_lr}}}" + (
            f", {{'params': {rest}}}]" if has_rest else "]")  # fmt: skip
    lines.append(f"opt = optim.{p.optimizer[0]}({params}, {_kw_text(p.optimizer[1])})")
    if p.scheduler:
        name, kw = p.scheduler
        text = f"lr_lambda=lambda epoch: {kw['lr_lambda']}" if name == "LambdaLR" else _kw_text(kw)
        lines.append(f"sched = optim.lr_scheduler.{name}(opt, {text})")
    return lines


def _state_shapes(p: NNProgram) -> list:
    try:
        return [(n, t.shape) for n, t in _build_model(p, TG).state_dict().items()]
    except Exception:  # noqa: BLE001
        return []


def _loop_text(p: NNProgram, with_values: bool) -> list:
    show = (lambda a: repr(a.tolist())) if with_values else (lambda a: f"<{a.dtype} {a.shape}>")
    lines = [f"xs = [{', '.join(show(x) for x in p.inputs)}]"]
    lines.append(f"targets = [{', '.join(show(t) for t in p.targets)}]")
    zero = ("opt" if p.zero.startswith("optimizer") else "model") + (
        ".zero_grad(set_to_none=False)" if p.zero.endswith("zeros") else ".zero_grad()")  # fmt: skip
    lines.append(f"for x, target, mode in zip(xs, targets, {p.modes!r}):")
    lines.append(f"    model.train(mode == 'train'); {zero}")
    grad = ", requires_grad=True" if p.input_grad else ""
    lines.append(f"    loss = loss_fn(model(torch.tensor(x{grad})), torch.tensor(target))")
    lines.append("    loss.sum().backward()")
    if p.clip:
        fn = "clip_grad_norm_" if p.clip[0] == "norm" else "clip_grad_value_"
        args = ", ".join("math.inf" if v == math.inf else repr(v) for v in p.clip[1:])
        lines.append(f"    nn.utils.{fn}(model.parameters(), {args})")
    if p.closure:
        lines.append(
            "    # closure: a function of the zero_grad ... backward lines, returning loss"
        )
    step = "opt.step(closure)" if p.closure else "opt.step()"
    lines.append(f"    {step}" + ("; sched.step()" if p.scheduler else ""))
    if p.reload is not None:
        lines.append(f"    # after step {p.reload}: opt (and sched) rebuilt the same way, then")
        lines.append("    # opt.load_state_dict(old_opt.state_dict()) (sched likewise)")
    return lines
