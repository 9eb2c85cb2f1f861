"""Losses and activations as functions: `mse_loss`, `cross_entropy`, `binary_cross_entropy`, ...

Every loss here is composed from the core's primitive ops (log_softmax, indexing,
log, mean), so its graph shows the real steps and its gradient needs no new rule.
Wrong targets fail with an error naming the shapes or the offending value.
Core layer: numpy, the standard library and `tinygrad_edu.core` only.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core import source, views
from ..core.creation import stack, where, zeros_like
from ..core.errors import DataError, ShapeError, message
from ..core.grad_mode import no_grad
from ..core.ops.products import vector_norm
from ..core.tensor import Tensor

__all__ = [
    "linear",
    "mse_loss",
    "cross_entropy",
    "binary_cross_entropy",
    "relu",
    "tanh",
    "sigmoid",
    "softmax",
    "log_softmax",
    "gelu",
    "leaky_relu",
    "l1_loss",
    "nll_loss",
    "binary_cross_entropy_with_logits",
    "dropout",
    "embedding",
    "batch_norm",
    "layer_norm",
    "one_hot",
    "pad",
    "conv2d",
    "max_pool2d",
    "avg_pool2d",
    "adaptive_avg_pool2d",
    "softplus",
    "silu",
    "elu",
    "normalize",
]


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
    raise ValueError(
        message(op, f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}", source.here())
    )


def _same_shape(op: str, x: Tensor, target: Tensor) -> None:
    if x.shape == target.shape:
        return
    if x.size == target.size:
        hint = f"reshape the target to match: target.reshape{x.shape}"
    else:
        hint = "make the input and the target the same shape"
    raise ShapeError(
        message(
            op,
            f"input shape {x.shape!r} and target shape {target.shape!r} differ "
            "(broadcasting them would compare every input with every target)",
            source.here(),
            hint,
        )
    )


# --- activations (the Tensor methods, as functions) ------------------------------------

# `inplace=True` writes the result into x's own numbers (`views.inplace`), as PyTorch's
# `F.leaky_relu_`: x's version goes up, so a node that saved x's old numbers refuses its
# backward, and every other view of those numbers sees the new ones


def relu(x: Any, inplace: bool = False) -> Tensor:
    """max(x, 0) elementwise (`x.relu()`; `x.relu_()` with `inplace=True`)."""
    return x.relu_() if inplace else _as_tensor(x).relu()


def tanh(x: Any) -> Tensor:
    """tanh elementwise (`x.tanh()`)."""
    return _as_tensor(x).tanh()


def sigmoid(x: Any) -> Tensor:
    """1 / (1 + exp(-x)) elementwise (`x.sigmoid()`)."""
    return _as_tensor(x).sigmoid()


def softmax(x: Any, axis: int = -1, *, dim: int | None = None) -> Tensor:
    """exp(x) / sum(exp(x)) along `axis` (`x.softmax(axis)`); `dim=` is PyTorch's name."""
    return _as_tensor(x).softmax(axis if dim is None else dim)


def log_softmax(x: Any, axis: int = -1, *, dim: int | None = None) -> Tensor:
    """x - log(sum(exp(x))) along `axis`, computed stably (`x.log_softmax(axis)`)."""
    return _as_tensor(x).log_softmax(axis if dim is None else dim)


def gelu(x: Any, approximate: str = "none") -> Tensor:
    """x * Phi(x), Phi the standard normal CDF (erf); `approximate="tanh"` as in PyTorch."""
    x = _as_tensor(x)
    if approximate == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1.0 + inner.tanh())
    return 0.5 * x * (1.0 + (x * (1.0 / math.sqrt(2.0))).erf())


def leaky_relu(x: Any, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x where x > 0, else negative_slope * x (the slope is also the gradient at 0)."""
    if inplace:
        return views.inplace(x, "leaky_relu_", lambda t: leaky_relu(t, negative_slope))
    x = _as_tensor(x)
    return where(x > 0, x, x * negative_slope)


def elu(x: Any, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x where x > 0, else alpha * (exp(x) - 1)."""
    if inplace:
        return views.inplace(x, "elu_", lambda t: elu(t, alpha))
    x = _as_tensor(x)
    return where(x > 0, x, alpha * (x.clip(max=0.0).exp() - 1.0))


def softplus(x: Any, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold (as PyTorch)."""
    x = _as_tensor(x)
    # log(1 + e^z) = -log_softmax([0, z])[0]: stable, and smooth at z = 0
    z = x * beta
    soft = -stack([zeros_like(z), z], axis=-1).log_softmax(-1)[..., 0] / beta
    return where(z > threshold, x, soft)


def silu(x: Any, inplace: bool = False) -> Tensor:
    """x * sigmoid(x) (also called swish)."""
    if inplace:
        return views.inplace(x, "silu_", silu)
    x = _as_tensor(x)
    return x * x.sigmoid()


def normalize(x: Any, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """x / max(||x||_p, eps) along `dim`."""
    x = _as_tensor(x)
    # vector_norm: its gradient at a zero row is 0, as PyTorch's (sqrt's would be nan)
    return x / vector_norm(x, p, dim, keepdim=True).clip(min=eps)


def one_hot(target: Any, num_classes: int = -1) -> Tensor:
    """Class indices -> rows of zeros with a 1 at the class (int64, as in PyTorch)."""
    t = np.asarray(target)
    n = int(t.max()) + 1 if num_classes < 0 and t.size else max(num_classes, 0)
    # PyTorch refuses float labels and labels outside 0 .. n-1; a cast would hide them
    if t.dtype.kind not in "iu" or (t.size and (t.min() < 0 or t.max() >= n)):
        raise DataError(
            message(
                "one_hot",
                f"needs class indices in 0 .. {n - 1} of an integer dtype, got {t.dtype} "
                f"of shape {t.shape!r}"
                + (
                    f" with values {t.min()} .. {t.max()}"
                    if t.size and t.dtype.kind in "iu"
                    else ""
                ),
                source.here(),
                "labels are whole numbers from 0: .long(), and num_classes larger than the largest",
            )
        )
    return Tensor.wrap((t[..., None] == np.arange(n)).astype(np.int64))


def cosine_similarity(x1: Any, x2: Any, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """The cosine of the angle between x1 and x2 along `dim` (both broadcast), each divided
    by its norm first (at least `eps`), as PyTorch computes it."""
    x1, x2 = _as_tensor(x1), _as_tensor(x2)
    n1 = vector_norm(x1, 2, dim, keepdim=True).clip(min=eps)
    n2 = vector_norm(x2, 2, dim, keepdim=True).clip(min=eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(
    x1: Any, x2: Any, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """The p-norm of x1 - x2 + eps along the last dim, as PyTorch."""
    x1, x2 = _as_tensor(x1), _as_tensor(x2)
    return vector_norm(x1 - x2 + eps, p, -1, keepdim=keepdim)


def dropout(x: Any, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    r"""Zero each element with probability `p` and scale the rest by 1 / (1 - p).

    Rules: only while `training`; the mask comes from numpy's global generator, so
    the zeros differ from PyTorch's for the same seed (the expectation is the same).
    """
    x = _as_tensor(x)
    if not 0.0 <= p <= 1.0:
        raise ValueError(
            message("dropout", f"p must be a probability in [0, 1], got {p!r}", source.here())
        )
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x.mul_(0.0) if inplace else x * 0.0
    keep = (np.random.random_sample(x.shape) >= p).astype(x.dtype) / (1.0 - p)
    return x.mul_(keep) if inplace else x * keep


def embedding(index: Any, weight: Tensor, padding_idx: int | None = None) -> Tensor:
    """Rows of `weight` picked by the integer `index` (any shape): shape index.shape + (dim,)."""
    idx = np.asarray(index)
    if idx.dtype.kind not in "iu":
        raise ValueError(
            message(
                "embedding",
                f"the indices must be integers, got {idx.dtype}",
                source.here(),
                "convert them with .long()",
            )
        )
    n = weight.shape[0]
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        bad = int(idx.min()) if idx.min() < 0 else int(idx.max())
        raise IndexError(
            message(
                "embedding",
                f"index {bad} is out of range for an embedding of {n} rows (valid: 0 to {n - 1})",
                source.here(),
            )
        )
    rows = weight[idx]
    if padding_idx is not None:
        # the padding row gets no gradient but keeps its numbers, as in PyTorch: a row a
        # learner loaded or set is returned as it is (multiplying by a 0/1 mask would zero it)
        keep = (idx != padding_idx)[..., None]
        rows = where(keep, rows, rows.detach())
    return rows


def batch_norm(
    x: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    r"""Normalise each channel (axis 1) over the batch and spatial axes, as PyTorch.

    Rules: training uses the batch's mean and biased variance, and moves the running
    statistics by `momentum` (the running variance is the unbiased one); evaluation
    uses the running statistics.
    """
    x = _as_tensor(x)
    axes = (0, *range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    if training:
        _check_batch_statistics(x)
        mean = x.mean(axes, keepdims=True)
        var = ((x - mean) * (x - mean)).mean(axes, keepdims=True)
        if running_mean is not None and running_var is not None:
            n = x.numel() // x.shape[1]
            with no_grad():
                running_mean.mul_(1 - momentum).add_(mean.reshape(-1).detach() * momentum)
                running_var.mul_(1 - momentum).add_(
                    var.reshape(-1).detach() * (momentum * n / max(n - 1, 1))
                )
    else:
        mean, var = running_mean.reshape(shape), running_var.reshape(shape)  # type: ignore[union-attr]  # eval needs them
    out = (x - mean) / (var + eps).sqrt()
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def _check_batch_statistics(x: Tensor) -> None:
    """A channel's batch statistics need two numbers: one gives variance 0 and output 0."""
    if x.numel() // max(x.shape[1], 1) == 1 if x.ndim > 1 else True:
        raise ValueError(
            message(
                "batch_norm",
                f"expected more than 1 value per channel when training, got input of shape "
                f"{x.shape!r}",
                source.here(),
                "use a batch of 2 or more, or call model.eval() to normalise with the running "
                "statistics",
            )
        )


def layer_norm(
    x: Tensor,
    normalized_shape: Any,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise over the last len(normalized_shape) axes (biased variance), then scale."""
    x = _as_tensor(x)
    k = 1 if isinstance(normalized_shape, int) else len(normalized_shape)
    axes = tuple(range(x.ndim - k, x.ndim))
    mean = x.mean(axes, keepdims=True)
    var = ((x - mean) * (x - mean)).mean(axes, keepdims=True)
    out = (x - mean) / (var + eps).sqrt()
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


# --- layers as functions ------------------------------------------------------------------


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    r"""y = x @ weight.T + bias, with `weight` of shape (out_features, in_features).

    Example:
        >>> import tinygrad_edu as tg
        >>> w = tg.tensor([[1.0, 2.0]])
        >>> tg.nn.functional.linear(tg.tensor([[3.0, 4.0]]), w, tg.tensor([0.5]))
        tensor([[11.5000]])
    """
    x = _as_tensor(x, weight)
    if x.ndim == 0 or x.shape[-1] != weight.shape[-1]:
        raise ShapeError(
            message(
                "linear",
                f"the weight has shape {weight.shape!r}, so the input needs "
                f"{weight.shape[-1]} features in its last axis, got shape {x.shape!r}",
                source.here(),
                f"make the layer Linear({x.shape[-1] if x.ndim else 1}, {weight.shape[0]}), "
                "or check what you pass in",
            )
        )
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


def _class_indices(
    x: Tensor, target: Any, op: str = "cross_entropy", ignore_index: int | None = None
) -> np.ndarray:
    """Check `target` against logits `x` and return it as an integer array (a target
    equal to `ignore_index` may be outside the classes)."""
    if x.ndim not in (1, 2):
        raise ShapeError(
            message(
                op,
                f"expected logits of shape (batch, classes) or (classes,), got {x.shape!r}",
                source.here(),
                "reshape the logits to (-1, classes)",
            )
        )
    # .numpy(), not .data: the class indices become part of the op (which numbers are
    # picked), and a static trace or capture must hear that they left the graph
    t = np.asarray(target.numpy() if isinstance(target, Tensor) else target)
    _check_target_shape(x, t, op)
    _check_whole_numbers(t, op)
    t = t.astype(np.intp)
    _check_in_range(t, x.shape[-1], op, ignore_index)
    return t


def _check_target_shape(x: Tensor, t: np.ndarray, op: str) -> None:
    want = x.shape[:1] if x.ndim == 2 else ()
    if t.shape == want:
        return
    if t.shape == x.shape and x.ndim == 2:
        hint = (
            "for one-hot rows pass the class indices, y.argmax(axis=1); for class "
            "probabilities pass a float target"
        )
    elif t.size == int(np.prod(want)):
        hint = "flatten it: target.reshape(-1)" if want else "pass one class index: target[0]"
    else:
        hint = "pass one class index per row of the logits"
    raise ShapeError(
        message(
            op,
            f"expected target of shape {want!r} (one class index per row of logits "
            f"{x.shape!r}), got {t.shape!r}",
            source.here(),
            hint,
        )
    )


def _check_whole_numbers(t: np.ndarray, op: str) -> None:
    """Class indices may come as floats (`tensor([0., 2.])`), but only whole ones."""
    if t.dtype.kind == "f":
        frac = t != np.round(t)
        if frac.any():
            pos = tuple(int(i) for i in np.argwhere(frac)[0]) if t.ndim else ()
            where = f" at position {pos[0]}" if pos else ""
            raise ValueError(
                message(
                    op,
                    f"target must hold whole-number class indices, got {t[pos].item()!r}{where}",
                    source.here(),
                    "for one probability per example use binary_cross_entropy(p, y)",
                )
            )
    elif t.dtype.kind not in "iub":
        raise ValueError(
            message(op, f"target must hold class indices, got {t.dtype} data", source.here())
        )


def _check_in_range(t: np.ndarray, classes: int, op: str, ignore_index: int | None) -> None:
    bad = ((t < 0) | (t >= classes)) & (t != ignore_index)
    if bad.any():
        pos = tuple(int(i) for i in np.argwhere(bad)[0]) if t.ndim else ()
        where = f" at position {pos[0]}" if pos else ""
        raise IndexError(
            message(
                op,
                f"target class {t[pos].item()}{where} is out of range for logits with {classes} "
                f"classes (valid classes: 0 to {classes - 1})",
                source.here(),
                "class indices start at 0; check out_features of the last layer",
            )
        )


def cross_entropy(
    input: Tensor,  # noqa: A002 - PyTorch's argument name
    target: Any,
    reduction: str = "mean",
    *,
    weight: Any = None,
    ignore_index: int = -100,
    label_smoothing: float = 0.0,
) -> Tensor:
    r"""Softmax cross-entropy of logits against class indices or class probabilities,
    as `torch.nn.functional`.

    loss_i = -log_softmax(input)[i, target_i] = logsumexp(input_i) - input[i, target_i]

    Rules: `input` holds raw scores (logits), shape (batch, classes) or (classes,) for
    one example. `target` holds one class index per example (ints, an int array, or a
    float tensor of whole numbers), shape (batch,) or (). The default reduction is the
    mean over the batch. Built from `log_softmax` and integer-array indexing. With
    `weight`, `ignore_index` or `label_smoothing`, as PyTorch: loss_i is scaled by
    weight[target_i], a target equal to `ignore_index` adds nothing, and the mean divides
    by the sum of the weights of the targets kept; smoothing mixes in the (weighted) mean
    of -log_softmax over all classes: (1 - s) * loss_i + s / classes * sum_c w_c (-logp_ic).

    A float target of the logits' shape holds class probabilities instead (soft labels,
    as PyTorch reads it): loss_i = -sum_c w_c y_ic log_softmax(input)_ic, with y smoothed
    to (1 - s) y + s / classes; the mean divides by the batch size, and an `ignore_index`
    of 0 or more is refused. Gradients reach the target and a Tensor weight too, if they
    require them.

    Args:
        input: the logits (no softmax applied).
        target: the class indices, each in 0 .. classes - 1 (or `ignore_index`), or
            class probabilities of the logits' shape.
        reduction: "mean" (default), "sum" or "none".
        weight: one number per class (default: all 1).
        ignore_index: a target value that is left out (default -100).
        label_smoothing: s in [0, 1] (default 0).

    Raises:
        ShapeError: logits not 1-D/2-D, the target's or the weight's shape does not fit.
        IndexError: a class index outside 0 .. classes - 1.
        ValueError: a target that is not a whole number, a smoothing outside [0, 1].

    Example:
        >>> import tinygrad_edu as tg
        >>> logits = tg.tensor([[2.0, 0.0, 0.0], [0.0, 0.0, 0.0]], requires_grad=True)
        >>> loss = tg.nn.functional.cross_entropy(logits, [0, 2])
        >>> round(loss.item(), 4)
        0.6691
    """
    x = _as_tensor(input)
    if _holds_probabilities(x, target):
        return _soft_cross_entropy(x, target, reduction, weight, ignore_index, label_smoothing)
    t = _class_indices(x, target, "cross_entropy", ignore_index)
    logp = x.log_softmax(axis=-1)
    if weight is None and not label_smoothing and not np.any(t == ignore_index):
        picked = logp[t] if x.ndim == 1 else logp[np.arange(x.shape[0]), t]
        return _reduce("cross_entropy", -picked, reduction)
    _check_smoothing(label_smoothing)
    options = (_class_weights("cross_entropy", weight, logp), ignore_index, label_smoothing)
    return _weighted_nll("cross_entropy", logp, t, reduction, *options)


def _holds_probabilities(x: Tensor, target: Any) -> bool:
    """PyTorch reads a float target of the logits' own shape as class probabilities (a
    class index target has one number fewer per row). Only its shape and dtype are read."""
    t = target if isinstance(target, Tensor) else np.asarray(target)
    return x.ndim in (1, 2) and tuple(t.shape) == x.shape and t.dtype.kind == "f"


def _soft_cross_entropy(
    x: Tensor, target: Any, reduction: str, weight: Any, ignore_index: int, s: float
) -> Tensor:
    """-sum_c w_c y_ic logp_ic per row, for class probabilities y (smoothed by s)."""
    if ignore_index >= 0:  # a negative one can name no class, so PyTorch lets it pass
        raise ValueError(
            message(
                "cross_entropy",
                f"ignore_index={ignore_index} leaves out class indices, but this target "
                f"holds class probabilities (a float target of the logits' shape {x.shape!r})",
                source.here(),
                "give the left-out rows zero probability, or pass class indices",
            )
        )
    _check_smoothing(s)
    y = _as_tensor(target, x)
    if s:
        y = y * (1.0 - s) + s / x.shape[-1]
    logp = x.log_softmax(axis=-1)
    if weight is not None:
        w = _class_weights("cross_entropy", weight, logp)  # checked: one number per class
        # a Tensor weight stays one: with probabilities PyTorch sends it a gradient too
        logp = logp * (weight if isinstance(weight, Tensor) else w)
    return _reduce("cross_entropy", -(logp * y).sum(axis=-1), reduction)


def _check_smoothing(s: float) -> None:
    if not 0.0 <= s <= 1.0:
        raise ValueError(
            message(
                "cross_entropy",
                f"label_smoothing must be between 0.0 and 1.0, got {s!r}",
                source.here(),
            )
        )


def _class_weights(op: str, weight: Any, logp: Tensor) -> np.ndarray:
    """The per-class weights as a plain array (with class indices PyTorch sends them no
    gradient either)."""
    classes = logp.shape[-1]
    if weight is None:
        return np.ones(classes, dtype=logp.dtype)
    w = np.asarray(weight.numpy() if isinstance(weight, Tensor) else weight, dtype=logp.dtype)
    if w.shape != (classes,):
        raise ShapeError(
            message(
                op,
                f"expected one weight per class, shape ({classes},), got weight of shape "
                f"{w.shape!r}",
                source.here(),
            )
        )
    return w


def _weighted_nll(
    op: str, logp: Tensor, t: np.ndarray, reduction: str, w: np.ndarray, ignore: int, s: float
) -> Tensor:
    """-w[t_i] logp[i, t_i] for the kept targets, mixed with label smoothing s, reduced as
    PyTorch: the mean divides by the kept targets' total weight (nan when none is kept)."""
    keep = t != ignore
    safe = np.where(keep, t, 0)  # an ignored row picks class 0, then is masked out
    picked = logp[safe] if logp.ndim == 1 else logp[np.arange(logp.shape[0]), safe]
    loss = -picked * w[safe]
    if s:
        loss = (1.0 - s) * loss + (s / logp.shape[-1]) * -(logp * w).sum(axis=-1)
    # where, not a product with the mask: an ignored row is 0 and sends no gradient back,
    # even where its log-probabilities are -inf (0 * inf would be nan)
    loss = where(keep, loss, 0.0)
    if reduction == "mean":
        total = np.where(keep, w[safe], 0.0).sum()
        with np.errstate(all="ignore"):  # every target ignored: 0 / 0, nan as in PyTorch
            return loss.sum() / total
    return _reduce(op, loss, reduction)


def binary_cross_entropy(
    input: Tensor,  # noqa: A002 - PyTorch's argument name
    target: Any,
    reduction: str = "mean",
    *,
    weight: Any = None,
) -> Tensor:
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
    lo, hi = (float(np.asarray(p).min()), float(np.asarray(p).max())) if p.size else (0.0, 1.0)
    if not (lo >= 0.0 and hi <= 1.0):  # also catches NaN
        raise ValueError(
            message(
                "binary_cross_entropy",
                f"input must be probabilities in [0, 1], got values from {lo:.4g} to {hi:.4g}",
                source.here(),
                "apply .sigmoid() to the model's output first",
            )
        )
    # log is clamped at -100 like PyTorch; the probabilities are clipped first too, because
    # at p = 0 or 1 log's backward would send 0 * (1/0) = NaN (a saturated sigmoid gets
    # there). `tiny` is e^-100, or larger where 1/tiny would overflow (float32)
    tiny = (
        max(float(np.exp(-100.0)), 4.0 / float(np.finfo(p.dtype).max))
        if p.dtype.kind == "f"
        else float(np.exp(-100.0))
    )
    log_p = p.clip(min=tiny).log().clip(min=-100.0)
    log_q = (1.0 - p).clip(min=tiny).log().clip(min=-100.0)
    loss = -(t * log_p + (1.0 - t) * log_q)
    return _reduce("binary_cross_entropy", _weighted(loss, weight), reduction)


def _weighted(loss: Tensor, weight: Any) -> Tensor:
    """Each element's loss times its weight (broadcast, as PyTorch), before the reduction."""
    return loss if weight is None else loss * _as_tensor(weight, loss)


def l1_loss(input: Any, target: Any, reduction: str = "mean") -> Tensor:  # noqa: A002
    """Mean absolute error: mean(|input - target|) (the gradient at 0 is 0, as PyTorch)."""
    x = _as_tensor(input)
    t = _as_tensor(target, x)
    _same_shape("l1_loss", x, t)
    return _reduce("l1_loss", (x - t).abs(), reduction)


def nll_loss(
    input: Tensor,  # noqa: A002 - PyTorch's argument name
    target: Any,
    reduction: str = "mean",
    *,
    weight: Any = None,
    ignore_index: int = -100,
) -> Tensor:
    r"""Negative log-likelihood of log-probabilities: -input[i, target_i], averaged.

    Pair it with `log_softmax` (that pair is `cross_entropy`). `weight` and `ignore_index`
    as in `cross_entropy`.
    """
    x = _as_tensor(input)
    t = _class_indices(x, target, "nll_loss", ignore_index)
    if weight is None and not np.any(t == ignore_index):
        picked = x[t] if x.ndim == 1 else x[np.arange(x.shape[0]), t]
        return _reduce("nll_loss", -picked, reduction)
    w = _class_weights("nll_loss", weight, x)
    return _weighted_nll("nll_loss", x, t, reduction, w, ignore_index, 0.0)


def binary_cross_entropy_with_logits(
    input: Any,  # noqa: A002 - PyTorch's argument name
    target: Any,
    reduction: str = "mean",
    pos_weight: Any = None,
    *,
    weight: Any = None,
) -> Tensor:
    r"""Binary cross-entropy of logits: sigmoid and the loss in one stable step.

    loss = -(pos_weight * y * log sigmoid(x) + (1 - y) * log(1 - sigmoid(x)))

    Both logs come from one log_softmax over [0, x], so they never overflow and the
    gradient is sigmoid(x) - y everywhere (at x = 0 too).
    """
    x = _as_tensor(input)
    t = _as_tensor(target, x)
    _same_shape("binary_cross_entropy_with_logits", x, t)
    logs = stack([zeros_like(x), x], axis=-1).log_softmax(-1)
    log_q, log_p = logs[..., 0], logs[..., 1]  # log(1 - sigmoid x), log sigmoid x
    pos = t * log_p if pos_weight is None else _as_tensor(pos_weight, x) * t * log_p
    loss = _weighted(-(pos + (1.0 - t) * log_q), weight)
    return _reduce("binary_cross_entropy_with_logits", loss, reduction)


def pad(x: Any, pad: tuple, mode: str = "constant", value: float = 0.0) -> Tensor:
    r"""Pad the last axes: `pad=(left, right)` for the last, then `(top, bottom)` for the one
    before, ..., as `torch.nn.functional.pad` (constant mode). Built from `cat`."""
    from ..core.creation import cat, full

    x = _as_tensor(x)
    if mode != "constant" or len(pad) % 2:
        raise ValueError(
            message(
                "pad",
                f"only constant padding with (before, after) pairs is "
                f"supported, got mode={mode!r}, pad={pad!r}",
                source.here(),
            )
        )
    for i in range(len(pad) // 2):
        axis = x.ndim - 1 - i
        parts = []
        for n, at_end in ((pad[2 * i], False), (pad[2 * i + 1], True)):
            if n:
                shape = x.shape[:axis] + (n,) + x.shape[axis + 1 :]
                parts.append((at_end, full(shape, value, dtype=x.dtype)))
        if parts:
            before = [p for end, p in parts if not end]
            after = [p for end, p in parts if end]
            x = cat([*before, x, *after], axis=axis)
    return x


from .conv import adaptive_avg_pool2d, avg_pool2d, conv2d, max_pool2d  # noqa: E402, F401
