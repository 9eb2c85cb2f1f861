"""`Dataset`, `TensorDataset`, `Subset`, `random_split` and `DataLoader`, as in `torch.utils.data`.

A `DataLoader` walks a data set in batches: it picks the indices of each batch (in
order, or shuffled), fetches those examples and stacks them into one tensor per field.
Shuffling draws from a `tg.Generator` when one is given (repeatable runs), otherwise
from numpy's global generator (which `tg.manual_seed` seeds). The order differs from
PyTorch's for the same seed: the two libraries have different random generators.
Sits beside nn/optim/data: imports `tinygrad_edu.core` only.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ..core import source
from ..core.creation import Generator, random_source, stack
from ..core.errors import ShapeError, message
from ..core.tensor import Tensor

__all__ = ["Dataset", "TensorDataset", "Subset", "random_split", "DataLoader", "default_collate"]


class Dataset:
    """Base class of map-style data sets: define `__len__` and `__getitem__(i)`."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} must define __len__")


class TensorDataset(Dataset):
    r"""Examples are rows of the given tensors: `ds[i] == (x[i], y[i])`.

    Raises:
        ShapeError: the tensors have different numbers of rows.

    Example:
        >>> import tinygrad_edu as tg
        >>> ds = tg.utils.data.TensorDataset(tg.arange(6.0).reshape(3, 2), tg.tensor([0, 1, 0]))
        >>> len(ds), ds[1]
        (3, (tensor([2., 3.]), tensor(1)))
    """

    def __init__(self, *tensors: Tensor) -> None:
        sizes = [len(t) for t in tensors]
        if len(set(sizes)) > 1:
            raise ShapeError(
                message(
                    "TensorDataset",
                    f"the tensors have different numbers of rows {sizes}",
                    source.here(),
                    "pass features and labels of the same examples",
                )
            )
        self.tensors = tuple(tensors)

    def __getitem__(self, index: Any) -> tuple:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return len(self.tensors[0]) if self.tensors else 0


class Subset(Dataset):
    """The examples of `dataset` at `indices`, in that order."""

    def __init__(self, dataset: Any, indices: Sequence[int]) -> None:
        self.dataset, self.indices = dataset, list(indices)

    def __getitem__(self, index: int) -> Any:
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Any, lengths: Sequence[Any], generator: Generator | None = None) -> list:
    """Split `dataset` into non-overlapping random subsets of the given lengths (or fractions)."""
    n = len(dataset)
    if lengths and all(isinstance(x, float) for x in lengths) and math.isclose(sum(lengths), 1.0):
        counts = [math.floor(n * f) for f in lengths]
        for i in range(n - sum(counts)):  # the remainder, one each, as PyTorch does
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != n:
        raise ValueError(
            message(
                "random_split",
                f"the lengths {list(lengths)} add up to "
                f"{sum(lengths)}, but the data set has {n} examples",
                source.here(),
            )
        )
    order = random_source(generator).permutation(n).tolist()
    out, start = [], 0
    for k in lengths:
        out.append(Subset(dataset, order[start : start + k]))
        start += k
    return out


def default_collate(batch: list) -> Any:
    """Stack a list of examples into a batch: tensors and numbers stacked, tuples per field."""
    first = batch[0]
    if isinstance(first, Tensor):
        return stack(batch)
    if isinstance(first, np.ndarray):
        return Tensor(np.stack(batch))
    if isinstance(first, (bool, numbers.Number)):
        return Tensor(np.asarray(batch))
    if isinstance(first, dict):
        return {k: default_collate([b[k] for b in batch]) for k in first}
    if isinstance(first, (tuple, list)):
        return [default_collate(list(field)) for field in zip(*batch)]
    return batch


class DataLoader:
    r"""Iterate over `dataset` in batches, as `torch.utils.data.DataLoader`.

    Rules: each pass over the loader is one epoch; with `shuffle=True` every epoch
    has a new order (from `generator`, or numpy's global generator). The last batch
    is smaller unless `drop_last=True`. A `TensorDataset` gives a list with one batch
    tensor per field (`for x, y in loader`). `num_workers` and `pin_memory` are
    accepted and ignored: everything runs in this process.

    Args:
        dataset: anything with `__len__` and `__getitem__`.
        batch_size: examples per batch (default 1).
        shuffle: a new random order every epoch (default False).
        drop_last: skip a last batch smaller than `batch_size`.
        generator: a `tg.Generator` for the shuffled order.
        collate_fn: turns a list of examples into a batch (default `default_collate`).

    Example:
        >>> import tinygrad_edu as tg
        >>> ds = tg.utils.data.TensorDataset(tg.arange(5.0), tg.arange(5.0) * 10)
        >>> [y.tolist() for _, y in tg.utils.data.DataLoader(ds, batch_size=2)]
        [[0.0, 10.0], [20.0, 30.0], [40.0]]
    """

    def __init__(
        self,
        dataset: Any,
        batch_size: int | None = 1,
        shuffle: bool = False,
        sampler: Any = None,
        batch_sampler: Any = None,
        num_workers: int = 0,
        collate_fn: Any = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        generator: Generator | None = None,
        **kwargs: Any,
    ) -> None:
        if batch_size is not None and (
            not isinstance(batch_size, numbers.Integral) or batch_size < 1
        ):
            raise ValueError(
                message(
                    "DataLoader",
                    f"batch_size must be a whole number >= 1, got {batch_size!r}",
                    source.here(),
                )
            )
        if sampler is not None or batch_sampler is not None:
            raise ValueError(
                message(
                    "DataLoader",
                    "custom samplers are not supported",
                    source.here(),
                    "use shuffle=True with a generator",
                )
            )
        self.dataset, self.batch_size, self.shuffle = dataset, batch_size, shuffle
        self.drop_last, self.generator = drop_last, generator
        self.collate_fn = collate_fn

    def _batches(self) -> list:
        n = len(self.dataset)
        order = random_source(self.generator).permutation(n) if self.shuffle else np.arange(n)
        size = self.batch_size or 1
        cuts = [order[i : i + size] for i in range(0, n, size)]
        if self.drop_last and cuts and len(cuts[-1]) < size:
            cuts.pop()
        return cuts

    def __iter__(self) -> Iterator[Any]:
        for idx in self._batches():
            if self.batch_size is None:
                yield self.dataset[int(idx[0])]
            elif isinstance(self.dataset, TensorDataset) and self.collate_fn is None:
                # one indexing per field gives the same batch as stacking the rows
                yield [t[idx] for t in self.dataset.tensors]
            else:
                collate = self.collate_fn or default_collate
                yield collate([self.dataset[int(i)] for i in idx])

    def __len__(self) -> int:
        n, size = len(self.dataset), self.batch_size or 1
        return n // size if self.drop_last else -(-n // size)
