"""Losses and activations as functions: `mse_loss`, `cross_entropy`, `binary_cross_entropy`, ...

Every loss here is composed from the core's primitive ops (log_softmax, indexing,
log, mean), so its graph shows the real steps and its gradient needs no new rule.
Wrong targets fail with an error naming the shapes or the offending value.
Core layer: numpy, the standard library and `tinygrad_edu.core` only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import source
from ..core.errors import ShapeError, message
from ..core.tensor import Tensor

__all__ = ["linear", "mse_loss", "cross_entropy", "binary_cross_entropy", "relu", "tanh",
           "sigmoid", "softmax", "log_softmax"]


def _as_tensor(x: Any, like: Tensor | None = None) -> Tensor:
    if isinstance(x, Tensor):
        return x
    dtype = like.dtype if like is not None and like.dtype.kind == "f" else None
    return Tensor(x, dtype=dtype)


def _reduce(op: str, loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(message(op, f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}",
                             source.here()))


def _same_shape(op: str, x: Tensor, target: Tensor) -> None:
    if x.shape == target.shape:
        return
    if x.size == target.size:
        hint = f"reshape the target to match: target.reshape{x.shape}"
    else:
        hint = "make the input and the target the same shape"
    raise ShapeError(message(
        op, f"input shape {x.shape!r} and target shape {target.shape!r} differ "
        "(broadcasting them would compare every input with every target)", source.here(), hint))


# --- activations (the Tensor methods, as functions) ------------------------------------


def relu(x: Any) -> Tensor:
    """max(x, 0) elementwise (`x.relu()`)."""
    return _as_tensor(x).relu()


def tanh(x: Any) -> Tensor:
    """tanh elementwise (`x.tanh()`)."""
    return _as_tensor(x).tanh()


def sigmoid(x: Any) -> Tensor:
    """1 / (1 + exp(-x)) elementwise (`x.sigmoid()`)."""
    return _as_tensor(x).sigmoid()


def softmax(x: Any, axis: int = -1) -> Tensor:
    """exp(x) / sum(exp(x)) along `axis` (`x.softmax(axis)`)."""
    return _as_tensor(x).softmax(axis)


def log_softmax(x: Any, axis: int = -1) -> Tensor:
    """x - log(sum(exp(x))) along `axis`, computed stably (`x.log_softmax(axis)`)."""
    return _as_tensor(x).log_softmax(axis)


# --- layers as functions ------------------------------------------------------------------


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    r"""y = x @ weight.T + bias, with `weight` of shape (out_features, in_features).

    Example:
        >>> import tinygrad_edu as tg
        >>> w = tg.tensor([[1.0, 2.0]])
        >>> tg.nn.functional.linear(tg.tensor([[3.0, 4.0]]), w, tg.tensor([0.5]))
        tensor([[11.5]])
    """
    x = _as_tensor(x, weight)
    if x.ndim == 0 or x.shape[-1] != weight.shape[-1]:
        raise ShapeError(message(
            "linear", f"the weight has shape {weight.shape!r}, so the input needs "
            f"{weight.shape[-1]} features in its last axis, got shape {x.shape!r}", source.here(),
            f"make the layer Linear({x.shape[-1] if x.ndim else 1}, {weight.shape[0]}), "
            "or check what you pass in"))
    y = x @ weight.T
    return y if bias is None else y + bias


# --- losses ---------------------------------------------------------------------------------


def mse_loss(input: Any, target: Any, reduction: str = "mean") -> Tensor:  # noqa: A002
    r"""Mean squared error: mean((input - target) ** 2).

    Rules: input and target must have the same shape (PyTorch only warns; here a
    silent (N, 1) vs (N,) broadcast is an error, because it is always a bug).

    Args:
        input: the predictions.
        target: the true values (a Tensor, array or list; needs no grad).
        reduction: "mean" (default), "sum" or "none".

    Raises:
        ShapeError: the shapes differ.

    Example:
        >>> import tinygrad_edu as tg
        >>> tg.nn.functional.mse_loss(tg.tensor([1.0, 2.0]), [1.0, 4.0])
        tensor(2.)
    """
    x = _as_tensor(input)
    t = _as_tensor(target, x)
    _same_shape("mse_loss", x, t)
    diff = x - t
    return _reduce("mse_loss", diff * diff, reduction)


def _class_indices(x: Tensor, target: Any) -> np.ndarray:
    """Check `target` against logits `x` and return it as an integer array."""
    op = "cross_entropy"
    if x.ndim not in (1, 2):
        raise ShapeError(message(
            op, f"expected logits of shape (batch, classes) or (classes,), got {x.shape!r}",
            source.here(), "reshape the logits to (-1, classes)"))
    # .numpy(), not .data: the class indices become part of the op (which numbers are
    # picked), and a static trace or capture must hear that they left the graph
    t = np.asarray(target.numpy() if isinstance(target, Tensor) else target)
    want = x.shape[:1] if x.ndim == 2 else ()
    if t.shape != want:
        if t.shape == x.shape and x.ndim == 2:
            hint = "cross_entropy takes class indices, not one-hot rows: pass y.argmax(axis=1)"
        elif t.size == int(np.prod(want)):
            hint = "flatten it: target.reshape(-1)" if want else "pass one class index: target[0]"
        else:
            hint = "pass one class index per row of the logits"
        raise ShapeError(message(
            op, f"expected target of shape {want!r} (one class index per row of logits "
            f"{x.shape!r}), got {t.shape!r}", source.here(), hint))
    if t.dtype.kind == "f":
        frac = t != np.round(t)
        if frac.any():
            pos = tuple(int(i) for i in np.argwhere(frac)[0]) if t.ndim else ()
            where = f" at position {pos[0]}" if pos else ""
            raise ValueError(message(
                op, f"target must hold whole-number class indices, got {t[pos].item()!r}{where}",
                source.here(),
                "for one probability per example use binary_cross_entropy(p, y)"))
    elif t.dtype.kind not in "iub":
        raise ValueError(message(op, f"target must hold class indices, got {t.dtype} data",
                                 source.here()))
    t = t.astype(np.intp)
    classes = x.shape[-1]
    bad = (t < 0) | (t >= classes)
    if bad.any():
        pos = tuple(int(i) for i in np.argwhere(bad)[0]) if t.ndim else ()
        where = f" at position {pos[0]}" if pos else ""
        raise IndexError(message(
            op, f"target class {t[pos].item()}{where} is out of range for logits with {classes} "
            f"classes (valid classes: 0 to {classes - 1})", source.here(),
            "class indices start at 0; check out_features of the last layer"))
    return t


def cross_entropy(input: Tensor, target: Any, reduction: str = "mean") -> Tensor:  # noqa: A002
    r"""Softmax cross-entropy of logits against class indices, as `torch.nn.functional`.

    loss_i = -log_softmax(input)[i, target_i] = logsumexp(input_i) - input[i, target_i]

    Rules: `input` holds raw scores (logits), shape (batch, classes) or (classes,) for
    one example. `target` holds one class index per example (ints, an int array, or a
    float tensor of whole numbers), shape (batch,) or (). The default reduction is the
    mean over the batch. Built from `log_softmax` and integer-array indexing.

    Args:
        input: the logits (no softmax applied).
        target: the class indices, each in 0 .. classes - 1.
        reduction: "mean" (default), "sum" or "none".

    Raises:
        ShapeError: logits not 1-D/2-D, or the target's shape does not fit.
        IndexError: a class index outside 0 .. classes - 1.
        ValueError: a target that is not a whole number.

    Example:
        >>> import tinygrad_edu as tg
        >>> logits = tg.tensor([[2.0, 0.0, 0.0], [0.0, 0.0, 0.0]], requires_grad=True)
        >>> loss = tg.nn.functional.cross_entropy(logits, [0, 2])
        >>> round(loss.item(), 4)
        0.6691
    """
    x = _as_tensor(input)
    t = _class_indices(x, target)
    logp = x.log_softmax(axis=-1)
    picked = logp[t] if x.ndim == 1 else logp[np.arange(x.shape[0]), t]
    return _reduce("cross_entropy", -picked, reduction)


def binary_cross_entropy(input: Tensor, target: Any, reduction: str = "mean") -> Tensor:  # noqa: A002
    r"""Binary cross-entropy of probabilities: -(y log p + (1 - y) log(1 - p)).

    Rules: `input` holds probabilities in [0, 1] (apply `.sigmoid()` first); `target`
    has the same shape, with values in [0, 1]. Each log is clamped at -100, as in
    PyTorch, so p = 0 or 1 gives a large but finite loss.

    Args:
        input: probabilities.
        target: the labels (0/1 or soft labels); needs no grad.
        reduction: "mean" (default), "sum" or "none".

    Raises:
        ShapeError: the shapes differ.
        ValueError: an input outside [0, 1].

    Example:
        >>> import tinygrad_edu as tg
        >>> p = tg.tensor([0.9, 0.2])
        >>> round(tg.nn.functional.binary_cross_entropy(p, [1.0, 0.0]).item(), 4)
        0.1643
    """
    p = _as_tensor(input)
    t = _as_tensor(target, p)
    _same_shape("binary_cross_entropy", p, t)
    lo, hi = (float(p.data.min()), float(p.data.max())) if p.size else (0.0, 1.0)
    if not (lo >= 0.0 and hi <= 1.0):  # also catches NaN
        raise ValueError(message(
            "binary_cross_entropy", f"input must be probabilities in [0, 1], got values from "
            f"{lo:.4g} to {hi:.4g}", source.here(),
            "apply .sigmoid() to the model's output first"))
    # log is clamped at -100 like PyTorch; the probabilities are clipped first too, because
    # at p = 0 or 1 log's backward would send 0 * (1/0) = NaN (a saturated sigmoid gets
    # there). `tiny` is e^-100, or larger where 1/tiny would overflow (float32)
    tiny = max(float(np.exp(-100.0)), 4.0 / float(np.finfo(p.dtype).max)) \
        if p.dtype.kind == "f" else float(np.exp(-100.0))
    log_p = p.clip(min=tiny).log().clip(min=-100.0)
    log_q = (1.0 - p).clip(min=tiny).log().clip(min=-100.0)
    return _reduce("binary_cross_entropy", -(t * log_p + (1.0 - t) * log_q), reduction)
