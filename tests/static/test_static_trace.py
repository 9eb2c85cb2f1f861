"""Tracing and replay: every op replays like eager, frozen branches, errors, define-then-run."""

import re
import sys
import warnings

import numpy as np
import pytest
from static_helpers import line_of

import tinygrad_edu as tg
from tinygrad_edu.core.function import OPS

P = np.abs  # positive inputs for log/sqrt/pow

# name -> (function of tensors, input shapes, make inputs positive?)
OP_TABLE = {
    "Add": (lambda a, b: a + b, [(3, 2), (2,)], False),
    "Sub": (lambda a, b: 1.5 - a - b, [(3, 2), (3, 1)], False),
    "Mul": (lambda a, b: a * b * 2.0, [(3, 2), (3, 2)], False),
    "Div": (lambda a, b: a / b, [(3,), (3,)], True),
    "Reciprocal": (lambda a: 2.0 / a, [(3,)], True),
    "Neg": (lambda a: -a, [(4,)], False),
    "Pow": (lambda a, b: a**b + a**2.0, [(3,), (3,)], True),
    "Exp": (lambda a: a.exp(), [(2, 2)], False),
    "Log": (lambda a: a.log(), [(2, 2)], True),
    "Tanh": (lambda a: a.tanh(), [(5,)], False),
    "Detach": (lambda a: a.detach() * a, [(3,)], False),
    "ReLU": (lambda a: a.relu(), [(5,)], False),
    "Sigmoid": (lambda a: a.sigmoid(), [(5,)], False),
    "Abs": (lambda a: a.abs(), [(5,)], False),
    "Sqrt": (lambda a: a.sqrt(), [(5,)], True),
    "Clip": (lambda a: a.clip(-0.5, 0.5), [(6,)], False),
    "Where": (lambda a, b: tg.where(a > b, a, b * 3.0), [(4,), (4,)], False),
    "Compare": (lambda a, b: tg.where(a <= 0.1, a, b), [(4,), (4,)], False),
    "Clone": (lambda a: a.clone() * 1.0, [(3,)], False),
    "Cast": (lambda a: a.astype("float32").astype("float64"), [(3,)], False),
    "MatMul": (lambda a, b: a @ b, [(3, 4), (4, 2)], False),
    "Reshape": (lambda a: a.reshape(2, 3), [(3, 2)], False),
    "Transpose": (lambda a: a.T, [(3, 2)], False),
    "BroadcastTo": (lambda a: a.broadcast_to((3, 2)), [(2,)], False),
    "Index": (lambda a: a[1:, [0, 0, 1]], [(3, 2)], False),
    "Cat": (lambda a, b: tg.cat([a, b], axis=1), [(2, 1), (2, 3)], False),
    "Stack": (lambda a, b: tg.stack([a, b], axis=0), [(2,), (2,)], False),
    "Sum": (lambda a: a.sum(axis=0, keepdims=True), [(3, 2)], False),
    "Max": (lambda a: a.max(axis=1), [(3, 2)], False),
    "Min": (lambda a: a.min(), [(3, 2)], False),
    "Softmax": (lambda a: a.softmax(axis=-1), [(2, 3)], False),
    "LogSoftmax": (lambda a: a.log_softmax(axis=0), [(2, 3)], False),
    "Sin": (lambda a: a.sin(), [(2, 3)], False),
    "Cos": (lambda a: a.cos(), [(2, 3)], False),
    "Erf": (lambda a: a.erf(), [(2, 3)], False),
    # issue 30: PyTorch's further ops (core/ops/arith, indexing, search, products)
    "Remainder": (lambda a, b: a % (b + 0.5), [(2, 3), (3,)], True),
    "Fmod": (lambda a, b: a.fmod(b + 0.5), [(2, 3), (3,)], True),
    "FloorDivide": (lambda a, b: (a // (b + 0.5)).detach() + a, [(2, 3), (3,)], True),
    "RoundingDivide": (lambda a, b: a.div(b + 0.5, rounding_mode="trunc"), [(4,), (4,)], True),
    "Trunc": (lambda a: (a * 3).trunc(), [(5,)], False),
    "Frac": (lambda a: (a * 3).frac(), [(5,)], False),
    "Sign": (lambda a: a.sign() * a, [(5,)], False),
    "Bitwise": (lambda a, b: tg.where((a > 0) & (b < 0), a, b), [(4,), (4,)], False),
    "BitwiseNot": (lambda a: tg.where(~(a > 0), a, a * 2), [(4,)], False),
    "Flip": (lambda a: a.flip(0), [(3, 2)], False),
    "Roll": (lambda a: a.roll(1, 1), [(3, 2)], False),
    "Diagonal": (lambda a: a.diagonal(), [(3, 3)], False),
    "DiagonalScatter": (lambda a: tg.diag(a), [(3,)], False),
    "CumSum": (lambda a: a.cumsum(1), [(2, 3)], False),
    "CumProd": (lambda a: a.cumprod(0), [(3, 2)], False),
    "Einsum": (lambda a, b: tg.einsum("ij,jk->ik", a, b), [(2, 3), (3, 2)], False),
    "VectorNorm": (lambda a: tg.linalg.vector_norm(a, 3, 1), [(2, 3)], False),
}


def _inputs(shapes, positive):
    arrays = [np.random.randn(*s) for s in shapes]
    return [P(a) + 0.5 if positive else a for a in arrays]


def test_op_table_covers_every_replayable_op():
    # Fill, IndexPut and CopySlices are only reachable through in-place changes (fill_,
    # `t[i] = v`, an in-place op on a view), which traces refuse; IndexAdd is the backward
    # of Index and runs inside vjp lines, as SigmoidSlope (sigmoid's backward) does
    # the package's own ops, each a name of its module: a docstring's example (`Cube`), run
    # before this test by the doctests, registers its Function subclass too
    ours = {n for n, cls in OPS.items() if getattr(sys.modules[cls.__module__], n, None) is cls}
    assert ours - set(OP_TABLE) == {
        "Fill",
        "IndexAdd",
        "IndexPut",
        "CopySlices",
        "SigmoidSlope",
    }


@pytest.mark.parametrize("name", sorted(OP_TABLE))
def test_replay_equals_eager_on_new_random_inputs(name):
    fn, shapes, positive = OP_TABLE[name]
    g = tg.static.trace(fn, *[tg.tensor(a) for a in _inputs(shapes, positive)])
    assert name in g.ops
    for _ in range(3):
        new = _inputs(shapes, positive)
        eager = fn(*[tg.tensor(a) for a in new])
        replay = g(*new)
        assert replay.shape == eager.shape and replay.dtype == eager.dtype
        np.testing.assert_allclose(replay.numpy(), eager.numpy(), rtol=1e-12)


def test_replay_does_not_rerun_the_python_function():
    calls = []

    def f(x):
        calls.append(1)
        return x * 3

    g = tg.static.trace(f, tg.tensor([1.0]))
    g(tg.tensor([2.0]))
    g(np.array([3.0]))
    assert len(calls) == 1


def test_program_text_one_op_per_line_with_source_line():
    def f(x, w):
        h = x @ w
        return h.tanh().sum()

    g = tg.static.trace(f, tg.randn(3), tg.randn(3, 2))
    expected = [
        "f(x: float64[3], w: float64[3, 2]):",
        f"    %3: float64[2] = MatMul(x, w)                             # {line_of(f, 'h = x @ w')}",
        f"    %4: float64[2] = Tanh(%3)                                 # {line_of(f, 'tanh')}",
        f"    %5: float64[] = Sum(%4, axis=None, keepdims=False)        # {line_of(f, 'tanh')}",
        "    return %5",
    ]
    assert str(g).splitlines() == expected
    assert repr(g) == str(g)
    assert g.inputs[1] == ("w", (3, 2), np.dtype("float64"))
    assert g.outputs[0].shape == ()


def test_frozen_branch_is_wrong_on_other_inputs_and_warns_with_the_line():
    def f(x):
        if x.sum() > 0:
            return x * 2
        return -x

    with pytest.warns(tg.static.TracerWarning) as rec:
        g = tg.static.trace(f, tg.tensor([1.0, 2.0]))
    text = str(rec[0].message)
    assert text == (
        "trace: bool() of a traced tensor (value True) decided an `if` or `while` here, so the "
        "branch it chose is frozen into the static graph: replay takes the same branch for "
        "every input\n"
        f"  built at: {line_of(f, 'if x.sum() > 0:')}\n"
        "  hint: use tg.static.cond(pred, true_fn, false_fn, *operands) (or tg.where for "
        "elementwise choices) so the graph keeps both branches; trace(..., strict=True) makes "
        "this an error"
    )
    assert rec[0].lineno == int(line_of(f, "if x.sum()").split("line ")[1].split(":")[0])
    neg = tg.tensor([-1.0, -2.0])
    assert f(neg).tolist() == [1.0, 2.0]  # eager takes the other branch
    assert g(neg).tolist() == [-2.0, -4.0]  # the trace replays the frozen one: wrong
    assert g.ops == ("Sum", "Compare", "Mul")


def test_strict_mode_raises_and_item_is_frozen_as_a_number():
    def f(x):
        n = x.sum().item()
        return x * n

    with pytest.raises(
        tg.TracingError,
        match=re.escape(
            "trace: item() of a traced tensor turned it into the Python number 3.0, which is "
            "frozen into the static graph as a constant\n  built at: "
        ),
    ):
        tg.static.trace(f, tg.tensor([1.0, 2.0]), strict=True)
    with pytest.warns(tg.static.TracerWarning):
        g = tg.static.trace(f, tg.tensor([1.0, 2.0]))
    assert g(tg.tensor([1.0, 1.0])).tolist() == [3.0, 3.0]  # eager would give [2, 2]


def test_no_warning_for_values_that_do_not_depend_on_inputs():
    w = tg.tensor([2.0])

    def f(x):
        return x * w if w.item() > 1 else x

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = tg.static.trace(f, tg.tensor([1.0]))
    assert g(tg.tensor([4.0])).tolist() == [8.0]


def test_python_loops_unroll_into_repeated_ops():
    def f(x):
        for _ in range(3):
            x = (x * 2).tanh()
        return x

    g = tg.static.trace(f, tg.tensor([0.1]))
    assert g.ops == ("Mul", "Tanh") * 3


def test_captured_tensors_are_frozen_constants():
    w = tg.tensor([1.0, 2.0], name="w")
    g = tg.static.trace(lambda x: x * w, tg.tensor([1.0, 1.0]))
    assert "    w: float64[2] = const [1., 2.]" in str(g).splitlines()
    w.numpy()[:] = 10.0  # later changes do not reach the graph
    assert g(tg.tensor([1.0, 1.0])).tolist() == [1.0, 2.0]


def test_tuple_outputs_and_keyword_inputs():
    g = tg.static.trace(lambda a, b: (a + b, a * b), tg.tensor([1.0]), tg.tensor([2.0]))
    s, p = g(b=tg.tensor([3.0]), a=tg.tensor([4.0]))
    assert (s.item(), p.item()) == (7.0, 12.0)


def test_wrong_shape_names_input_expected_and_actual():
    g = tg.static.trace(lambda x: x * 2, tg.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(tg.ShapeError) as info:
        g(tg.tensor([1.0, 2.0]))  # the offending call
    assert str(info.value) == (
        "f: input 'x' was traced with shape (3,), got shape (2,)\n"
        f"  built at: {line_of(test_wrong_shape_names_input_expected_and_actual, 'offending')}\n"
        "  hint: a static graph has fixed shapes: trace again for this shape, or use "
        "tg.static.function, which retraces for every new shape"
    )


def test_wrong_dtype_and_wrong_count():
    g = tg.static.trace(lambda x: x * 2, tg.tensor([1.0]))
    with pytest.raises(
        tg.DataError, match=re.escape("f: input 'x' was traced as float64, got float32")
    ):
        g(np.ones(1, dtype=np.float32))
    with pytest.raises(TypeError, match=re.escape("f: expected 1 input(s) ['x'], got 2")):
        g(tg.tensor([1.0]), tg.tensor([1.0]))


def test_inplace_update_of_a_traced_tensor_is_refused():
    def f(x):
        y = x * 1.0
        y += 1.0
        return y * 2

    with pytest.raises(
        tg.TracingError,
        match=re.escape(
            "trace: a traced tensor was changed in place; a static graph records values, not "
            "updates to them"
        ),
    ):
        tg.static.trace(f, tg.tensor([1.0]))


def test_non_tensor_output_is_an_error():
    with pytest.raises(
        tg.TracingError,
        match=re.escape(
            "trace: the traced function returned a float; a static graph's outputs must be Tensors"
        ),
    ):
        tg.static.trace(lambda x: 3.0, tg.tensor([1.0]))


def test_placeholder_trace_and_repr():
    x = tg.static.placeholder((2,), name="x")
    assert repr(x) == "placeholder('x', shape=(2,), dtype=float64)"
    g = tg.static.trace(lambda v: v.log(), x)  # log(0) during the trace: no numpy warning
    np.testing.assert_allclose(g([1.0, np.e]).numpy(), [0.0, 1.0])
    assert g.inputs[0].name == "x"


def test_placeholder_made_inside_a_trace_or_a_branch_is_a_constant_not_a_crash():
    # Only a tg.static.Graph collects placeholders; any other tracer (a trace, a cond
    # branch inside a Graph) has no graph, and placeholder() used to read a missing attribute
    g = tg.static.trace(lambda v: v * 2 + tg.static.placeholder((3,), "y"), tg.ones(3))
    assert "y: float64[3] = const [0., 0., 0.]" in str(g)
    np.testing.assert_allclose(g([1.0, 2.0, 3.0]).numpy(), [2.0, 4.0, 6.0])
    with tg.static.Graph() as graph:
        x = tg.static.placeholder((3,), name="x")
        y = tg.static.cond(
            x.sum() > 0, lambda a: a + tg.static.placeholder((3,), "z"), lambda a: a * 2, x
        )
    assert repr(graph).endswith("placeholders: x)")
    np.testing.assert_allclose(graph.run(y, {"x": [1.0, 2.0, 3.0]}).numpy(), [1.0, 2.0, 3.0])


def test_define_then_run_graph_feeds_and_errors():
    w = tg.tensor([[1.0], [2.0]], name="w")
    with tg.static.Graph() as graph:
        x = tg.static.placeholder((3, 2), name="x")
        b = tg.static.placeholder((1,), name="b")
        y = x @ w + b
        z = (x * x).sum()
    assert repr(graph) == "Graph(4 ops, placeholders: x, b)"
    xs = np.arange(6.0).reshape(3, 2)
    out = graph.run(y, {"x": xs, b: np.array([0.5])})
    np.testing.assert_allclose(out.numpy(), xs @ w.numpy() + 0.5)
    assert graph.run(z, {x: xs}).item() == 55.0  # b is not needed for z
    y2, z2 = graph.run([y, z], {"x": xs, "b": [1.0]})
    assert z2.item() == 55.0
    with pytest.raises(tg.static.FeedError) as info:
        graph.run(y, {"x": xs})
    assert str(info.value).startswith(
        "Graph.run: placeholder 'b' (shape (1,)) needs a value to compute the fetches, but "
        "none was fed\n  built at: "
    )
    assert str(info.value).endswith("  hint: add it to the feeds: {'b': <array of shape (1,)>}")
    with pytest.raises(
        tg.ShapeError,
        match=re.escape("Graph.run: input 'x' was traced with shape (3, 2), got shape (2, 2)"),
    ):
        graph.run(y, {"x": np.ones((2, 2)), "b": [1.0]})
    with pytest.raises(
        tg.static.FeedError, match=re.escape("Graph.run: 'q' is not a placeholder of this graph")
    ):
        graph.run(y, {"q": 1.0})


def test_warning_in_a_notebook_cell_is_located_at_the_cell_not_the_temp_file(monkeypatch):
    import builtins
    import linecache
    import types

    # What IPython does: compile each cell under a temporary file name it maps to the
    # execution count (the file name changes with every kernel, so it must not be printed)
    fname = "/tmp/ipykernel_12345/3141592653.py"
    src = "def f(x):\n    if x.sum() > 0:\n        return x * 2\n    return -x\n"
    linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
    fake = types.SimpleNamespace(compile=types.SimpleNamespace(_filename_map={fname: 4}))
    monkeypatch.setattr(builtins, "get_ipython", lambda: fake, raising=False)
    scope = {}
    exec(compile(src, fname, "exec"), scope)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tg.static.trace(scope["f"], tg.tensor([1.0]))
    finally:
        del linecache.cache[fname]
    (w,) = caught
    printed = warnings.formatwarning(w.message, w.category, w.filename, w.lineno, w.line)
    assert printed.startswith(
        "cell [4]:2: TracerWarning: trace: bool() of a traced tensor (value True) decided an "
        "`if` or `while` here"
    )
    assert "\n  built at: cell [4], line 2: if x.sum() > 0:\n" in printed
    assert "ipykernel" not in printed
