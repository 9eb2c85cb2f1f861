"""tg.static.function's cache, save/load round trips, malformed files, and the passes."""

import json
import re

import numpy as np
import pytest

import tinygrad_edu as tg


def test_function_cache_hits_misses_and_why_it_retraced():
    calls = []

    @tg.static.function
    def f(x, scale):
        calls.append(x.shape)
        return (x * scale).sum()

    assert f(tg.ones(3), 2.0).item() == 6.0
    assert f.cache_info().last_retrace_reason == "first call: nothing was traced yet"
    assert f(tg.ones(3) * 2, 2.0).item() == 12.0  # same shapes, same static arg: replay
    assert f(np.ones(3), 2.0).item() == 6.0  # arrays count like tensors
    assert f(tg.ones(4), 2.0).item() == 8.0
    info = f.cache_info()
    assert (info.hits, info.misses, len(info.entries)) == (2, 2, 2)
    assert info.last_retrace_reason == "x's shape changed from (3,) to (4,)"
    f(tg.ones(4), 3.0)
    assert f.cache_info().last_retrace_reason == "argument 'scale' changed from 2.0 to 3.0"
    f(tg.ones(4).astype("float32"), 3.0)
    assert "float32" in f.cache_info().last_retrace_reason
    assert calls == [(3,), (4,), (4,), (4,)]  # Python ran once per trace only
    assert repr(f.cache_info()).startswith("CacheInfo(entries=4, hits=2, misses=4, last retrace:")
    with pytest.raises(
        tg.TracingError,
        match=re.escape(
            "tg.static.function: argument 'scale' is a list, which is neither a tensor nor "
            "hashable, so no guard can check it"
        ),
    ):
        f(tg.ones(3), [1.0])


def test_equal_static_values_of_different_types_get_their_own_traces():
    @tg.static.function
    def pick(x, k):
        return x[k] * 1.0

    @tg.static.function
    def repeat(x, n):
        for _ in range(n):
            x = x * 2.0
        return x

    x = tg.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert pick(x, 1).tolist() == [3.0, 4.0]
    # True == 1 and hash(True) == hash(1), but x[True] adds an axis: it needs its own trace
    assert pick(x, True).shape == (1, 2, 2)
    assert pick.cache_info().last_retrace_reason == "argument 'k' changed from 1 to True"
    assert repeat(x, 3).tolist() == [[8.0, 16.0], [24.0, 32.0]]
    with pytest.raises(TypeError, match="'float' object cannot be interpreted as an integer"):
        repeat(x, 3.0)  # as eager Python does: a replay of the n=3 trace would hide it
    assert (pick.cache_info().misses, repeat.cache_info().hits) == (2, 0)


def _graph():
    def f(x, w):
        h = (x @ w).relu()
        return tg.static.cond(h.sum() > 1.0, lambda v: v[0].sum() * 2.0, lambda v: v.max(), h)

    return tg.static.trace(f, np.random.randn(2, 3), np.random.randn(3, 4))


def test_save_load_round_trip_runs_without_the_python_code(tmp_path):
    g = _graph()
    dg = g.grad(with_value=True)
    g.save(tmp_path / "model")
    dg.save(str(tmp_path / "step.json"))
    doc = json.loads((tmp_path / "model.json").read_text())
    assert doc["format"] == "tinygrad_edu.static" and doc["version"] == 1
    assert [e["op"] for e in doc["program"]["eqns"]] == list(g.ops)
    g2, dg2 = tg.static.load(tmp_path / "model"), tg.static.load(tmp_path / "step.json")
    assert str(g2) == str(g)
    for _ in range(3):
        x, w = np.random.randn(2, 3), np.random.randn(3, 4)
        assert g2(x, w).item() == g(x, w).item()
        for a, b in zip(dg2(x, w), dg(x, w)):
            np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_custom_functions_cannot_be_exported(tmp_path):
    class Cube(tg.Function):
        @staticmethod
        def forward(ctx, x):
            return x**3

        @staticmethod
        def backward(ctx, g):
            return g

    g = tg.static.trace(lambda x: Cube.apply(x), tg.tensor([2.0]))
    assert g(tg.tensor([3.0])).item() == 27.0  # runs in memory
    with pytest.raises(
        tg.static.FormatError,
        match=re.escape(
            "save: op 'Cube' is a Function defined outside tinygrad_edu, so a loaded graph "
            "could not run it"
        ),
    ):
        g.save(tmp_path / "cube")


def _corrupt(tmp_path, edit):
    tg.static.trace(lambda x: (x * 2.0).exp().sum(), tg.tensor([1.0, 2.0])).save(tmp_path / "m")
    path = tmp_path / "m.json"
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))
    return tmp_path / "m"


def _set(doc, key, value, index=None):
    target = doc["program"]["eqns"][index] if index is not None else doc["program"]
    target[key] = value


HOSTILE = {
    "unknown op": (
        lambda d: _set(d, "op", "os.system", 0),
        "load: program.eqns[0]: unknown op 'os.system'; known ops are the built-in ",
    ),
    "bad reference": (
        lambda d: _set(d, "in", [1, 99], 0),
        "load: program.eqns[0]: input 99 is used before it is computed",
    ),
    "forward reference": (
        lambda d: _set(d, "outputs", [1234]),
        "load: program.outputs: 1234 is not computed by the program",
    ),
    "huge shape": (
        lambda d: d["program"]["vars"][0].update(shape=[10**6, 10**6]),
        "load: program.vars[0]: shape (1000000, 1000000) has 1000000000000 elements",
    ),
    "wrong type": (
        lambda d: _set(d, "attrs", {"axis": {"__class__": "x"}}, 2),
        "load: program.eqns[2].attrs.axis: unsupported attribute value",
    ),
    "unknown attribute": (
        lambda d: _set(d, "attrs", {"cmd": "rm"}, 1),
        "load: program.eqns[1]: Exp has no attribute 'cmd'",
    ),
    "bad dtype": (
        lambda d: d["program"]["vars"][0].update(dtype="object"),
        "load: program.vars[0]: unsupported dtype 'object'",
    ),
    "not our format": (lambda d: d.update(format="pickle"), "not a tinygrad_edu.static file"),
    "extra key": (
        lambda d: d["program"].update(code="print(1)"),
        "load: program: a program must be an object with exactly the keys",
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_malformed_or_hostile_files_are_rejected_with_clear_errors(tmp_path, case):
    edit, text = HOSTILE[case]
    path = _corrupt(tmp_path, edit)
    with pytest.raises(tg.static.FormatError) as info:
        tg.static.load(path)
    assert text in str(info.value)
    assert str(info.value).endswith("  hint: only load files written by StaticGraph.save")


def test_not_json_and_pickled_arrays_are_rejected(tmp_path):
    (tmp_path / "a.json").write_text("{not json")
    with pytest.raises(tg.static.FormatError, match="not valid JSON"):
        tg.static.load(tmp_path / "a")
    path = _corrupt(tmp_path, lambda d: None)
    np.savez(tmp_path / "m.npz", a0=np.array([{"x": 1}], dtype=object), a1=np.array(0.0))
    with pytest.raises(tg.static.FormatError, match="is not a plain numeric array"):
        tg.static.load(path)


def test_dead_code_elimination_and_constant_folding_report_op_counts():
    w = tg.tensor([[1.0, 2.0], [3.0, 4.0]], name="w")

    def f(x):
        unused = (x * 3.0).exp()  # noqa: F841 - computed, never returned
        scale = tg.tensor(2.0) * 3.0  # constant work, done at every replay until folded
        return (x @ w.T) * scale

    g = tg.static.trace(f, tg.tensor([1.0, 1.0]))
    assert g.ops == ("Mul", "Exp", "Mul", "Transpose", "MatMul", "Mul")
    opt = g.optimize()
    assert opt.ops == ("MatMul", "Mul")
    assert str(opt).splitlines()[:2] == [
        "# constant folding: 6 ops -> 4 ops",
        "# dead code elimination: 4 ops -> 2 ops",
    ]
    x = tg.tensor([0.5, -1.0])
    np.testing.assert_allclose(opt(x).numpy(), g(x).numpy())
    assert tg.static.eliminate_dead_code(g).num_ops() == 4


def test_numpy_numbers_are_dynamic_inputs_python_numbers_stay_static():
    calls = []

    @tg.static.function
    def f(x, scale):
        calls.append(1)
        return (x * scale).sum()

    # np.float64 and 0-d arrays are data: one trace for every value of that dtype
    results = [
        f(tg.ones(3), s).item()
        for s in (np.float64(2.0), np.float64(3.0), np.array(4.0), np.float64(5.0))
    ]
    assert results == [6.0, 9.0, 12.0, 15.0]
    info = f.cache_info()
    assert (info.hits, info.misses, len(calls)) == (3, 1, 1)
    assert f.graph_for(tg.ones(3), np.float64(0.0)).inputs[1] == ("scale", (), np.float64)
    # a new numpy dtype is a new signature, and says so
    assert f(tg.ones(3), np.float32(2.0)).item() == 6.0
    assert f.cache_info().last_retrace_reason == "scale's dtype changed from float64 to float32"
    assert f(tg.ones(3), np.int64(2)).item() == 6.0  # int64 keeps its dtype, not float64
    assert f.cache_info().misses == 3

    # Python numbers, bools and strings are static: each new value retraces
    @tg.static.function
    def g(x, scale, mode):
        return (x * scale).sum() if mode == "sum" else (x * scale).mean()

    g(tg.ones(3), 2.0, "sum"), g(tg.ones(3), 3.0, "sum"), g(tg.ones(3), 3, "mean")
    g(tg.ones(3), True, "mean")
    assert (g.cache_info().hits, g.cache_info().misses) == (0, 4)
    g(tg.ones(3), 3.0, "sum")
    assert (g.cache_info().hits, g.cache_info().misses) == (1, 4)


def test_function_and_compile_give_one_retrace_reason_and_keep_one_log():
    # one cache module (guards.py): the same change is told in the same words by both
    def f(x, k):
        return x * k

    traced, compiled = tg.static.function(f), tg.static.compile(f, dynamic=False)
    for g in (traced, compiled):
        g(tg.ones(3), 2.0)
        g(tg.ones(4), 2.0)
        g(tg.ones(4), 2.0)  # a replay: no line in the log
        g(tg.ones(4), 3.0)
        g(tg.ones(4).astype("float32"), 3.0)
    want = [
        "x's shape changed from (3,) to (4,)",
        "argument 'k' changed from 2.0 to 3.0",
        "x's dtype changed from float64 to float32",
    ]
    assert [c.reason for c in traced.compiles[1:]] == want
    assert [c.reason for c in compiled.compiles[1:]] == want
    assert [c.call for c in traced.compiles] == [c.call for c in compiled.compiles] == [1, 2, 4, 5]
    assert traced.cache_info().last_retrace_reason == want[-1]
