"""tg.data: shapes, dtypes, determinism, what the labels mean, batches, and errors."""

import re

import numpy as np
import pytest

import tinygrad_edu as tg

data = tg.data


def test_make_moons_shapes_dtypes_and_determinism():
    pts, y = data.make_moons(101, noise=0.1, seed=3)
    assert pts.shape == (101, 2) and pts.dtype == np.float64
    assert y.shape == (101,) and y.dtype == np.intp
    assert int((y == 0).sum()) == 50 and int((y == 1).sum()) == 51
    pts2, y2 = data.make_moons(101, noise=0.1, seed=3)
    np.testing.assert_array_equal(pts, pts2)
    np.testing.assert_array_equal(y, y2)
    pts3, _ = data.make_moons(101, noise=0.1, seed=4)
    assert not np.allclose(pts, pts3)


def test_labels_and_lengths_are_numpys_index_type_as_in_the_browser(monkeypatch):
    # The browser's numpy (Pyodide) is 32-bit: np.intp is int32 there and np.bincount
    # refuses int64 labels (no safe cast), which stopped lesson 10. Simulated here by
    # making np.intp int32: every integer array tg.data returns follows it.
    monkeypatch.setattr(np, "intp", np.int32)
    _, moons = data.make_moons(20, seed=0)
    _, spirals = data.make_spirals(5, classes=3, seed=0)
    _, parity = data.make_sequences(6, seed=0, task="parity")
    _, lengths = data.pad_sequences([np.ones((2, 1)), np.ones((3, 1))])
    assert [a.dtype for a in (moons, spirals, parity, lengths)] == [np.dtype(np.int32)] * 4
    assert np.bincount(moons).tolist() == [10, 10]


def test_make_moons_without_noise_lies_on_the_two_half_circles():
    pts, y = data.make_moons(40, noise=0.0, seed=0)
    upper, lower = pts[y == 0], pts[y == 1]
    np.testing.assert_allclose(np.hypot(upper[:, 0], upper[:, 1]), 1.0)
    np.testing.assert_allclose(np.hypot(lower[:, 0] - 1, lower[:, 1] - 0.5), 1.0)
    assert (upper[:, 1] >= -1e-12).all() and (lower[:, 1] <= 0.5 + 1e-12).all()
    assert not (y[:20] == 0).all()  # shuffled


def test_make_moons_does_not_touch_the_global_generator():
    np.random.seed(5)
    expected = np.random.rand()
    np.random.seed(5)
    data.make_moons(10, seed=1)
    assert np.random.rand() == expected


def test_make_spirals_arms_and_radius():
    pts, y = data.make_spirals(30, classes=4, noise=0.0, seed=0)
    assert pts.shape == (120, 2) and y.tolist() == [c for c in range(4) for _ in range(30)]
    radius = np.hypot(pts[:, 0], pts[:, 1])
    np.testing.assert_allclose(radius[:30], np.linspace(0, 1, 30))
    pts_noisy, _ = data.make_spirals(30, classes=4, noise=0.2, seed=0)
    np.testing.assert_allclose(
        np.hypot(pts_noisy[:, 0], pts_noisy[:, 1]), radius
    )  # noise turns, keeps r
    assert not np.allclose(pts_noisy, pts)


@pytest.mark.parametrize("task", ["sum", "parity", "count"])
def test_make_sequences_lengths_and_targets(task):
    xs, y = data.make_sequences(50, min_len=2, max_len=6, seed=0, task=task)
    lengths = [len(x) for x in xs]
    assert len(xs) == 50 and y.shape == (50,)
    assert min(lengths) == 2 and max(lengths) == 6
    assert all(x.shape == (len(x), 1) and x.dtype == np.float64 for x in xs)
    sums = np.array([x.sum() for x in xs])
    if task == "sum":
        assert y.dtype == np.float64 and all(((-1 <= x) & (x < 1)).all() for x in xs)
        np.testing.assert_allclose(y, sums)
    else:
        assert all(set(np.unique(x)) <= {0.0, 1.0} for x in xs)
        if task == "parity":
            assert y.dtype == np.intp and y.tolist() == [int(s) % 2 for s in sums]
            assert 0 < y.sum() < 50
        else:
            assert y.dtype == np.float64 and y.tolist() == sums.tolist()
    again, _ = data.make_sequences(50, min_len=2, max_len=6, seed=0, task=task)
    assert all((a == b).all() for a, b in zip(xs, again))


def test_pad_sequences():
    xs, _ = data.make_sequences(4, min_len=1, max_len=4, seed=2)
    pts, lengths = data.pad_sequences(xs)
    assert pts.shape == (4, lengths.max(), 1) and lengths.tolist() == [len(x) for x in xs]
    for i, x in enumerate(xs):
        np.testing.assert_array_equal(pts[i, : len(x)], x)
        assert (pts[i, len(x) :] == 0).all()


def test_batches_cover_every_example_once():
    pts, y = data.make_moons(23, seed=0)
    got = list(data.batches(pts, y, 5, shuffle=True, seed=1))
    assert [len(yb) for _, yb in got] == [5, 5, 5, 5, 3]
    xs = np.concatenate([xb for xb, _ in got])
    order = [int(np.where((pts == row).all(axis=1))[0][0]) for row in xs]
    assert sorted(order) == list(range(23)) and order != list(range(23))
    np.testing.assert_array_equal(np.concatenate([yb for _, yb in got]), y[order])
    again = [yb.tolist() for _, yb in data.batches(pts, y, 5, shuffle=True, seed=1)]
    assert again == [yb.tolist() for _, yb in got]
    in_order = list(data.batches(pts, y, 10, shuffle=False))
    np.testing.assert_array_equal(in_order[0][0], pts[:10])


def test_batches_of_sequence_lists_stay_lists():
    xs, y = data.make_sequences(7, seed=0)
    (xb, yb), *_ = data.batches(xs, y, 3, shuffle=False)
    assert isinstance(xb, list) and len(xb) == 3 and xb[1] is xs[1]
    np.testing.assert_array_equal(yb, y[:3])


def test_data_errors():
    with pytest.raises(
        ValueError,
        match=re.escape(
            "make_sequences: task must be one of ('sum', 'parity', 'count'), got 'sort'"
        ),
    ):
        data.make_sequences(3, task="sort")
    with pytest.raises(
        ValueError, match=re.escape("make_sequences: min_len (5) is larger than max_len (2)")
    ):
        data.make_sequences(3, min_len=5, max_len=2)
    with pytest.raises(ValueError, match=re.escape("make_moons: n must be at least 1, got 0")):
        data.make_moons(0)
    with pytest.raises(ValueError, match=re.escape("batches: x has 3 examples but y has 2")):
        next(data.batches(np.zeros((3, 2)), np.zeros(2), 2))
