"""tg.utils.data: TensorDataset, DataLoader (batching, shuffling, drop_last), random_split,
compared with torch.utils.data where the order is not random."""

import numpy as np
import pytest

import tinygrad_edu as tg

data = tg.utils.data


def _dataset(n=10):
    return data.TensorDataset(tg.arange(2.0 * n).reshape(n, 2), tg.arange(float(n)))


@pytest.mark.torch
@pytest.mark.parametrize(
    "kw",
    [
        dict(batch_size=3),
        dict(batch_size=3, drop_last=True),
        dict(batch_size=5),
        dict(),
        dict(batch_size=20),
    ],
)
def test_unshuffled_batches_match_torch(kw):
    torch = pytest.importorskip("torch")
    x, y = np.arange(20.0).reshape(10, 2), np.arange(10.0)
    ours = list(data.DataLoader(data.TensorDataset(tg.tensor(x), tg.tensor(y)), **kw))
    theirs = list(
        torch.utils.data.DataLoader(
            torch.utils.data.TensorDataset(torch.tensor(x), torch.tensor(y)), **kw
        )
    )
    assert len(ours) == len(theirs) == len(data.DataLoader(_dataset(), **kw))
    for (xb, yb), (txb, tyb) in zip(ours, theirs):
        np.testing.assert_array_equal(xb.numpy(), txb.numpy())
        np.testing.assert_array_equal(yb.numpy(), tyb.numpy())


def test_shuffle_covers_every_example_once_and_repeats_with_a_generator():
    def epoch(loader):
        return [int(v) for _, yb in loader for v in yb.tolist()]

    loader = data.DataLoader(
        _dataset(), batch_size=4, shuffle=True, generator=tg.Generator().manual_seed(0)
    )
    first, second = epoch(loader), epoch(loader)
    assert sorted(first) == sorted(second) == list(range(10))
    assert first != second  # a new order every epoch
    again = data.DataLoader(
        _dataset(), batch_size=4, shuffle=True, generator=tg.Generator().manual_seed(0)
    )
    assert epoch(again) == first
    tg.manual_seed(0)
    a = epoch(data.DataLoader(_dataset(), batch_size=4, shuffle=True))
    tg.manual_seed(0)
    assert epoch(data.DataLoader(_dataset(), batch_size=4, shuffle=True)) == a


def test_custom_dataset_and_collate():
    class Squares(data.Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return tg.tensor([float(i)]), i * i

    xb, yb = next(iter(data.DataLoader(Squares(), batch_size=5)))
    assert xb.shape == (5, 1) and yb.tolist() == [0, 1, 4, 9, 16]
    batches = list(data.DataLoader(Squares(), batch_size=2, collate_fn=lambda b: len(b)))
    assert batches == [2, 2, 1]


def test_random_split_and_subset():
    parts = data.random_split(_dataset(), [7, 3], generator=tg.Generator().manual_seed(1))
    assert [len(p) for p in parts] == [7, 3]
    seen = sorted(int(p[i][1].item()) for p in parts for i in range(len(p)))
    assert seen == list(range(10))
    assert [len(p) for p in data.random_split(_dataset(), [0.5, 0.5])] == [5, 5]


def test_errors():
    with pytest.raises(
        tg.ShapeError,
        match=r"^TensorDataset: the tensors have different "
        r"numbers of rows \[3, 2\]",
    ):
        data.TensorDataset(tg.zeros(3), tg.zeros(2))
    with pytest.raises(
        ValueError, match="^DataLoader: batch_size must be a whole number >= 1, got 0"
    ):
        data.DataLoader(_dataset(), batch_size=0)
    with pytest.raises(ValueError, match=r"^random_split: the lengths \[3, 3\] add up to 6"):
        data.random_split(_dataset(), [3, 3])
