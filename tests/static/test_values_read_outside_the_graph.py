"""Ops whose result numpy computes from the values, recording no node (argmax, sort, nonzero,
...), are never kept silently as constants by a tracer: trace warns, export refuses and
compile breaks the graph there, so its answers stay right for every input."""

import warnings

import numpy as np
import pytest

import tinygrad_edu as tg

# name -> a function whose result depends on the input through an op that records no node
OUTSIDE = {
    "argmax": lambda x: x.argmax(),
    "argmin": lambda x: x.argmin(),
    "max(dim)": lambda x: x.max(dim=0).indices,
    "min(dim)": lambda x: x.min(dim=0).values * 1.0,
    "sort": lambda x: x.sort().indices,
    "argsort": lambda x: x.argsort(),
    "topk": lambda x: x.topk(1).indices,
    "kthvalue": lambda x: x.kthvalue(2).indices,
    "median": lambda x: x.median(dim=0).indices,
    "unique": lambda x: x.unique(),
    "nonzero": lambda x: (x > 0).nonzero(),
    "count_nonzero": lambda x: (x > 0).count_nonzero(),
    "masked_select": lambda x: x.masked_select(x > 0),
    "histc": lambda x: x.histc(bins=3, min=-3, max=3),
    "bucketize": lambda x: tg.bucketize(x, tg.tensor([-1.0, 0.0, 1.0])),
}
EXAMPLE = np.array([1.0, -1.0, 3.0])
OTHER = np.array([5.0, -1.0, -2.0])  # every op above answers differently for it


@pytest.mark.parametrize("name", OUTSIDE)
def test_trace_warns_that_the_result_is_frozen(name):
    fn = OUTSIDE[name]
    assert not np.array_equal(fn(tg.tensor(EXAMPLE)).numpy(), fn(tg.tensor(OTHER)).numpy())
    # masked_select's mask is read as an index (which elements, and how many)
    frozen = "used as an index" if name == "masked_select" else "computed by numpy, outside"
    with pytest.warns(tg.static.TracerWarning, match=frozen):
        tg.static.trace(fn, tg.tensor(EXAMPLE))


@pytest.mark.parametrize("name", OUTSIDE)
def test_export_refuses_naming_the_line(name):
    refused = "used as an index" if name == "masked_select" else "could not guard on data-dep"
    with pytest.raises(tg.static.TracingError, match=refused) as err:
        tg.static.export(OUTSIDE[name], (tg.tensor(EXAMPLE),))
    assert "test_values_read_outside_the_graph.py" in str(err.value)


@pytest.mark.parametrize("name", OUTSIDE)
def test_compile_answers_for_every_input(name):
    fn = OUTSIDE[name]
    compiled = tg.static.compile(fn)
    for x in (EXAMPLE, OTHER, EXAMPLE):
        np.testing.assert_array_equal(compiled(tg.tensor(x)).numpy(), fn(tg.tensor(x)).numpy())


def test_any_and_all_are_recorded_ops_that_replay_for_every_input():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing is frozen
        some = tg.static.trace(lambda x: (x > 0).any(), tg.tensor(EXAMPLE))
        every = tg.static.trace(lambda x: (x > 0).all(), tg.tensor(EXAMPLE))
    assert some(-np.abs(OTHER)).item() is False and some(OTHER).item() is True
    assert every(np.abs(OTHER)).item() is True and every(OTHER).item() is False


@pytest.mark.torch
@pytest.mark.parametrize("values", [[0.0, 1.0], [0.0, 0.0], [float("nan")], [], [[True, False]]])
def test_any_and_all_match_pytorch(values):
    torch = pytest.importorskip("torch")
    for name in ("any", "all"):
        ours, theirs = getattr(tg.tensor(values), name)(), getattr(torch.tensor(values), name)()
        assert ours.dtype == np.bool_ and ours.shape == tuple(theirs.shape)
        assert ours.item() == theirs.item()
