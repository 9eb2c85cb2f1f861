"""tg.static.compile: capture with graph breaks, guards that recompile with a reason,
dynamic sizes, fullgraph, explain(). Every result is compared with running the same
function eagerly, on several random inputs, values and gradients exactly."""

import numpy as np
import pytest
from static_helpers import line_of

import tinygrad_edu as tg


def rand(*shape, seed=0):
    return tg.tensor(np.random.default_rng(seed).normal(size=shape))


def same(a, b):
    """Exactly equal results (Tensors, numbers or tuples of them)."""
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
        return
    if isinstance(a, tg.Tensor):
        assert isinstance(b, tg.Tensor)
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    else:
        assert a == b and type(a) is type(b)


def branchy(x):
    s = x.sum()
    if s > 0:
        return x * 2
    return -x


def no_breaks(x, w):
    h = (x @ w).tanh()
    return (h * h).sum(), h


def many_breaks(x):
    scale = float(x.abs().max())  # a Python number read from a tensor
    y = x / scale
    steps = 0
    while y.sum() < 4.0:  # a data-dependent loop: one break per test
        y = y * 2 + 1
        steps += 1
    n = int((y > 0).sum())
    return y * n, steps


# --- results equal eager --------------------------------------------------------------


def test_a_function_without_breaks_is_one_graph_replayed_for_new_values():
    f = tg.static.compile(no_breaks)
    for seed in range(5):
        x, w = rand(4, 3, seed=seed), rand(3, 2, seed=seed + 10)
        same(f(x, w), no_breaks(x, w))
    e = f.explain()
    assert (e.graph_count, e.break_count, len(e.compiles), f.replays) == (1, 0, 1, 4)
    assert e.ops_per_graph == [("MatMul", "Tanh", "Mul", "Sum")]


def test_a_break_splits_the_graph_and_each_branch_gets_its_own():
    f = tg.static.compile(branchy)
    for seed in range(8):
        x = rand(3, seed=seed)
        same(f(x), branchy(x))
    e = f.explain()
    assert e.graph_count == 3 and e.break_count == 1
    assert e.ops_per_graph == [("Sum", "Compare"), ("Mul",), ("Neg",)]
    assert sorted(e.breaks[0].outcomes) == [False, True]
    assert e.breaks[0].site == line_of(branchy, "if s > 0")
    assert len(e.compiles) == 2 and f.replays == 6  # one capture per branch, then replays


def test_numbers_read_from_tensors_and_a_data_dependent_loop_match_eager():
    f = tg.static.compile(many_breaks)
    xs = [tg.tensor([0.5, -1.0, 2.0]), tg.tensor([1.0, 1.0, 1.0]), tg.tensor([-3.0, 1.0, 0.5])]
    for x in xs + xs:  # the second round replays the paths the first round captured
        same(f(x), many_breaks(x))
    assert len(f.compiles) == 3 and f.replays == 3
    e = f.explain()
    kinds = [b.reason.split(":")[0].split()[0] for b in e.breaks]
    assert "float()" in kinds and "int()" in kinds and "data-dependent" in kinds
    assert line_of(many_breaks, "scale = float") in [b.site for b in e.breaks]
    assert line_of(many_breaks, "while y.sum()") in [b.site for b in e.breaks]


def test_a_replay_does_not_run_the_python_only_the_graphs():
    calls = []

    def f(x):
        calls.append(1)  # a side effect: runs when capturing only
        return x * 3 if x.sum() > 0 else x

    cf = tg.static.compile(f)
    for seed in range(6):
        x = tg.tensor([1.0 + seed, 2.0])
        same(cf(x), f(x))
    assert len(calls) == 6 + 1  # six eager calls, one capture


def test_a_python_number_returned_is_part_of_the_path():
    def f(x):
        return x + 1, int((x > 4).sum())

    cf = tg.static.compile(f)
    for x in [tg.tensor([1.0, 5.0]), tg.tensor([7.0, 5.0]), tg.tensor([2.0, 6.0])]:
        same(cf(x), f(x))
    assert len(cf.compiles) == 2  # the counts 1, 2, 1: the third call replays


def test_a_cond_keeps_both_branches_in_one_graph_and_never_breaks():
    def f(x):
        return tg.static.cond(x.sum() > 0, lambda v: v * 2, lambda v: -v, x)

    cf = tg.static.compile(f, fullgraph=True)
    for seed in range(6):
        x = rand(3, seed=seed)
        same(cf(x), f(x))
    e = cf.explain()
    assert (e.graph_count, e.break_count, len(e.compiles)) == (1, 0, 1)
    assert "cond" in e.ops_per_graph[0]


# --- gradients ------------------------------------------------------------------------


def make_net(seed=0):
    np.random.seed(seed)
    return tg.nn.Sequential(tg.nn.Linear(3, 4), tg.nn.Tanh(), tg.nn.Linear(4, 1))


def test_gradients_through_graphs_and_breaks_equal_eager():
    net = make_net()

    def loss_fn(x, y):
        loss = ((net(x) - y) ** 2).mean()
        if loss > 0.5:  # a break between two graphs that both carry gradients
            loss = loss * 0.5 + (net[0].weight ** 2).sum()
        return loss

    cf = tg.static.compile(loss_fn)
    for seed in range(6):
        x = tg.tensor(rand(5, 3, seed=seed).numpy(), requires_grad=True)
        y = rand(5, 1, seed=seed + 20) * (3 if seed % 2 else 0.1)
        grads = []
        for f in (loss_fn, cf):
            net.zero_grad()
            x.grad = None
            loss = f(x, y)
            loss.backward()
            grads.append(
                [loss.item(), x.grad.numpy().copy()]
                + [p.grad.numpy().copy() for p in net.parameters()]
            )
        for a, b in zip(*grads):
            np.testing.assert_array_equal(a, b)
    assert cf.replays >= 3


def test_an_optimizer_step_between_calls_is_seen_without_recompiling():
    net_c, net_e = make_net(), make_net()
    x, y = rand(6, 3), rand(6, 1, seed=3)
    cf = tg.static.compile(lambda x, y: ((net_c(x) - y) ** 2).mean())
    opts = [tg.optim.SGD(net_c.parameters(), lr=0.1), tg.optim.SGD(net_e.parameters(), lr=0.1)]
    for _ in range(4):
        for f, opt in ((cf, opts[0]), (lambda x, y: ((net_e(x) - y) ** 2).mean(), opts[1])):
            opt.zero_grad()
            f(x, y).backward()
            opt.step()
    for a, b in zip(net_c.parameters(), net_e.parameters()):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert len(cf.compiles) == 1


def test_a_parameter_read_as_a_number_is_read_again_at_every_replay():
    w = tg.tensor([1.0, -2.0])

    def f(x):
        return x * w if w.sum() > 0 else x - w

    cf = tg.static.compile(f)
    x = tg.tensor([3.0, 4.0])
    same(cf(x), f(x))
    w.numpy()[:] = [2.0, 1.0]  # now the other branch: the replay must notice
    same(cf(x), f(x))
    w.numpy()[:] = [0.0, -1.0]
    same(cf(x), f(x))
    assert len(cf.compiles) == 2 and cf.replays == 1


# --- guards and recompiles ------------------------------------------------------------


def test_a_shape_change_recompiles_with_the_reason_and_makes_the_dim_dynamic():
    f = tg.static.compile(lambda x: (x * 2).sum())
    f(rand(3))
    f(rand(5))
    assert f.compiles[1].reason == "x's shape changed from (3,) to (5,); x.shape[0] is now dynamic"


def test_dtype_requires_grad_and_static_arguments_are_guarded():
    def f(x, k):
        return x * k

    cf = tg.static.compile(f)
    x = rand(3)
    cf(x, 2)
    cf(tg.tensor(x.numpy(), requires_grad=True), 2)
    cf(tg.tensor(x.numpy(), requires_grad=True), 3)
    cf(tg.tensor(x.numpy().astype(np.float32)), 3)
    assert [c.reason for c in cf.compiles[1:]] == [
        "x.requires_grad changed from False to True",
        "argument 'k' changed from 2 to 3",
        "x's dtype changed from float64 to float32",
    ]
    same(cf(x, 3), f(x, 3))


def test_a_compiled_module_trains_like_the_module():
    net_c, net_e = make_net(), make_net()
    cnet = tg.static.compile(net_c)
    opt_c = tg.optim.SGD(cnet.parameters(), lr=0.1)  # the module's own parameters
    opt_e = tg.optim.SGD(net_e.parameters(), lr=0.1)
    for seed in range(4):
        x = rand(5, 3, seed=seed)
        for model, opt in ((cnet, opt_c), (net_e, opt_e)):
            opt.zero_grad()
            (model(x) ** 2).mean().backward()
            opt.step()
    for a, b in zip(net_c.parameters(), net_e.parameters()):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert cnet.replays == 3
    with pytest.raises(AttributeError, match="'Sequential' object has no attribute 'nothing'"):
        _ = cnet.nothing


def test_keyword_arguments_are_guarded_like_positional_ones():
    def f(x, k=2.0):
        return x * k

    cf = tg.static.compile(f)
    x = rand(3)
    same(cf(x, k=3.0), f(x, k=3.0))
    same(cf(x, 3.0), f(x, 3.0))  # the same call: a replay
    same(cf(x=x, k=4.0), f(x, 4.0))
    assert [c.reason for c in cf.compiles] == [
        "first call: nothing was captured yet",
        "argument 'k' changed from 3.0 to 4.0",
    ]
    with pytest.raises(TypeError, match="got an unexpected keyword argument 'j'"):
        cf(x, j=1)


def test_a_changed_model_or_global_recompiles_and_says_what_changed():
    net = tg.nn.Sequential(tg.nn.Linear(2, 2))
    cf = tg.static.compile(net)
    x = rand(1, 2)
    cf(x)
    net.append(tg.nn.ReLU())
    same(cf(x), net(x))
    assert cf.compiles[-1].reason == (
        "what the function read changed: sequential now has "
        "sub-modules ['0', '1'], the last trace saw ['0']"
    )


SCALE = 2.0


def scaled(x):
    return x * SCALE


def test_a_global_python_value_is_guarded():
    global SCALE
    cf = tg.static.compile(scaled)
    x = rand(3)
    cf(x)
    SCALE = 3.0
    try:
        same(cf(x), scaled(x))
    finally:
        SCALE = 2.0
    assert (
        cf.compiles[-1].reason
        == "what the function read changed: SCALE is 3.0, the last trace read 2.0"
    )


def test_an_outcome_never_seen_recompiles_with_the_break_line_and_values():
    cf = tg.static.compile(branchy)
    cf(tg.tensor([1.0, 2.0]))
    cf(tg.tensor([-1.0, -2.0]))
    site = line_of(branchy, "if s > 0")
    assert cf.compiles[1].reason == (
        f"the graph break at {site} gave False; the captured paths took True there"
    )


def test_a_captured_tensor_that_changed_shape_recompiles_afresh():
    ws = [tg.tensor([1.0, 2.0])]  # reached through a list: no guard on the function sees it

    def f(x):
        return x * ws[0]

    cf = tg.static.compile(f)
    x = tg.tensor([2.0, 3.0])
    cf(x)
    ws[0].data = tg.tensor([[3.0, 4.0], [5.0, 6.0]])  # the same tensor object, a new shape
    same(cf(x), f(x))
    same(cf(x), f(x))  # replays the new capture, not the old graphs
    assert cf.compiles[1].reason == (
        "captured tensor 'captured' now has shape (2, 2) float64, the capture saw (2,) float64"
    )
    assert len(cf.compiles) == 2 and len(cf.graphs) == 1


def test_after_eight_captures_calls_run_eagerly():
    def f(x):
        return x / float(x.max())  # a new number every call: a new path every call

    cf = tg.static.compile(f)
    for seed in range(10):
        x = rand(3, seed=seed).abs() + 0.1
        same(cf(x), f(x))
    assert len(cf.compiles) == 8 and cf.eager_calls == 2
    e = cf.explain()
    assert e.notes[-1].startswith("call 9: ran eagerly, not captured, as will every call")
    assert "(0 replayed from the graphs, 2 run eagerly)" in str(e)


# --- dynamic sizes --------------------------------------------------------------------


def loss_of(x, y):
    return ((x - y) ** 2).mean()  # mean divides by the batch size: a number in the program


def test_symbolic_sizes_avoid_a_third_compile_and_match_eager():
    cf = tg.static.compile(loss_of)
    for n in (3, 5, 7, 11, 4):
        x, y = rand(n, 2, seed=n), rand(n, 2, seed=n + 1)
        same(cf(x, y), loss_of(x, y))
    assert len(cf.compiles) == 2
    e = cf.explain()
    assert [n.split(":")[0] for n in e.notes] == ["call 3", "call 4", "call 5"]
    assert e.notes[0] == (
        "call 3: re-specialised the graphs for x.shape[0]=7, y.shape[0]=7 from the captures at "
        "sizes (3, 3), (5, 5): no Python ran, nothing was captured"
    )
    assert "x: a tensor of shape (s0, 2), float64" in e.guards[0]


def test_dynamic_false_specialises_every_shape():
    cf = tg.static.compile(loss_of, dynamic=False)
    for n in (3, 5, 7):
        x, y = rand(n, 2), rand(n, 2, seed=1)
        same(cf(x, y), loss_of(x, y))
    assert len(cf.compiles) == 3 and not cf.explain().notes


def test_dynamic_true_needs_two_sizes_then_reuses_them():
    cf = tg.static.compile(lambda x: (x * x).sum(), dynamic=True)
    for n in (3, 5, 7, 9):
        x = rand(n)
        same(cf(x), (x * x).sum())
    assert len(cf.compiles) == 2
    assert cf.compiles[1].reason.startswith("new size x.shape[0]=5 of a dynamic dimension")


def test_a_size_used_in_a_way_that_is_no_multiple_stays_specialised():
    def f(x):
        return x[: x.shape[0] - 1] * 2  # the stop is n - 1: not k * n

    cf = tg.static.compile(f)
    for n in (3, 5, 7):
        x = rand(n)
        same(cf(x), f(x))
    assert len(cf.compiles) == 3
    assert "differ in more than the size" in cf.compiles[2].reason


def test_gradients_after_re_specialising_equal_eager():
    net = make_net()
    cf = tg.static.compile(lambda x: (net(x) ** 2).mean())
    for n in (4, 6, 9):
        grads = []
        for f in (lambda x: (net(x) ** 2).mean(), cf):
            net.zero_grad()
            f(rand(n, 3, seed=n)).backward()
            grads.append([p.grad.numpy().copy() for p in net.parameters()])
        for a, b in zip(*grads):
            np.testing.assert_array_equal(a, b)
    assert len(cf.compiles) == 2


# --- fullgraph and errors -------------------------------------------------------------


def test_fullgraph_refuses_a_break_naming_its_line_and_suggesting_cond():
    cf = tg.static.compile(branchy, fullgraph=True)
    with pytest.raises(tg.static.TracingError) as err:
        cf(tg.tensor([1.0, 2.0]))
    assert str(err.value) == (
        "tg.static.compile: fullgraph=True, but bool() of a traced tensor (value True) decides "
        "Python control flow here: a graph break\n"
        f"  built at: {line_of(branchy, 'if s > 0')}\n"
        "  hint: keep both branches in the graph with tg.static.cond(pred, true_fn, false_fn, "
        "*operands) (tg.where for elementwise choices), or drop fullgraph=True to allow graph "
        "breaks"
    )


def test_fullgraph_refuses_a_number_read_from_a_tensor():
    def f(x):
        return x * x.sum().item()

    with pytest.raises(tg.static.TracingError) as err:
        tg.static.compile(f, fullgraph=True)(tg.tensor([1.0, 2.0]))
    assert str(err.value).startswith(
        "tg.static.compile: fullgraph=True, but item() of a traced tensor turns it into the "
        "Python number 3.0 here: a graph break\n"
    )


def test_backward_inside_a_compiled_function_is_refused():
    def f(w):
        loss = (w * w).sum()
        loss.backward()
        return loss

    with pytest.raises(tg.static.TracingError, match="backward\\(\\) or tg.grad\\(\\) ran inside"):
        tg.static.compile(f)(tg.tensor([1.0, 2.0], requires_grad=True))


# --- explain and drawing --------------------------------------------------------------


def test_explain_reads_as_a_report_and_its_graphs_can_be_drawn():
    cf = tg.static.compile(branchy)
    cf(tg.tensor([1.0, 2.0]))
    cf(tg.tensor([-1.0, -2.0]))
    text = str(cf.explain())
    assert text.splitlines()[0] == (
        "tg.static.compile(branchy): 3 graphs, 1 graph break, "
        "2 compiles, 2 calls (0 replayed from the graphs)"
    )
    for part in (
        "graph 0: 2 ops: Sum, Compare",
        "graph 2: 1 op: Neg",
        f"at: {line_of(branchy, 'if s > 0')}",
        "outcomes seen: True, False",
        "x: a tensor of shape (2,), float64, requires_grad=False",
    ):
        assert part in text
    from tinygrad_edu.graph import build_graph

    g = build_graph(cf.graphs[1])
    assert [n.op for n in g.nodes if n.op] == ["Mul"]


def test_numpy_and_tolist_break_the_graph_and_their_values_are_guarded():
    def f(x):
        top = x.numpy().max()  # numpy takes over: a break, the array is the outcome
        ys = (x * 2).tolist()
        return x / top + len(ys)

    cf = tg.static.compile(f)
    xs = [tg.tensor([1.0, 4.0]), tg.tensor([2.0, 4.0]), tg.tensor([1.0, 4.0])]
    for x in xs:
        same(cf(x), f(x))
    e = cf.explain()
    # each numpy() outcome leads to its own next graph, which ends at its own tolist() break
    assert [b.reason.split()[0] for b in e.breaks] == ["numpy()", "tolist()", "tolist()"]
    assert len(cf.compiles) == 2 and cf.replays == 1  # the third input is the first again


def test_a_traced_numpy_call_warns_that_its_values_are_frozen():
    with pytest.warns(tg.static.TracerWarning, match="numpy\\(\\) of a traced tensor"):
        tg.static.trace(lambda x: x * float(x.numpy().max()), tg.tensor([1.0, 2.0]))


def test_a_value_no_recorded_op_made_makes_the_function_run_eagerly():
    def f(x):
        return x * int(x.argmax())  # argmax is not an op a graph replays

    cf = tg.static.compile(f)
    for x in [tg.tensor([1.0, 5.0, 2.0]), tg.tensor([9.0, 5.0, 2.0]), tg.tensor([1.0, 2.0, 3.0])]:
        same(cf(x), f(x))
    assert len(cf.compiles) == 0 and cf.replays == 0
    assert (
        cf.explain()
        .notes[0]
        .startswith("call 1: runs eagerly from now on: int() at " + line_of(f, "int(x.argmax())"))
    )


# --- a battery of programs, values and gradients against eager ------------------------


def starts_with_a_break(x):
    if x[0].item() > 0:  # a number is an outcome: every new value is a new path
        return x * 2, x
    return x.exp(), x > 0


def counts(x):
    k = (x > 0).sum()
    return x * 3, k, x > 0


def three_ifs(x):
    y = x
    for _ in range(3):
        y = y - 1 if y.mean() > 0 else y + 0.5
    return y.sum()


class Halve(tg.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = tg.nn.Linear(3, 3)

    def forward(self, x):
        h = self.lin(x)
        while h.abs().sum() > 1.0:
            h = h * 0.5
        return h


def sizes_vary(rng):
    return [rng.normal(size=rng.integers(2, 6))]


@pytest.mark.parametrize(
    "fn, make",
    [
        (starts_with_a_break, lambda rng: [rng.choice([-1.0, 2.0], size=3)]),
        (counts, lambda rng: [rng.normal(size=4)]),
        (three_ifs, sizes_vary),
        (Halve(), lambda rng: [rng.normal(size=(2, 3))]),
    ],
    ids=["starts_with_a_break", "counts", "three_ifs", "module_with_a_loop"],
)
def test_programs_match_eager_in_values_and_gradients(fn, make):
    rng = np.random.default_rng(0)
    cf = tg.static.compile(fn)
    for _ in range(12):
        arrays = make(rng)
        results = []
        for f in (fn, cf):
            xs = [tg.tensor(a, requires_grad=True) for a in arrays]
            out = f(*xs)
            outs = out if isinstance(out, tuple) else (out,)
            sum(o.sum() for o in outs if o.dtype.kind == "f").backward()
            results.append((out, [x.grad for x in xs]))
        same(results[1][0], results[0][0])
        same(tuple(results[1][1]), tuple(results[0][1]))
    assert cf.replays > 0


def test_a_tensor_used_as_an_index_breaks_the_graph_and_its_values_are_guarded():
    def f(x):
        y = x[x > 0]  # which elements (and how many) depends on the data
        return (y * y).sum(), y

    cf = tg.static.compile(f)
    values = [[1.0, -2.0, 3.0], [1.0, 2.0, 3.0], [-1.0, -2.0, 3.0], [4.0, -1.0, 5.0]]
    for v in values:
        a, b = tg.tensor(v, requires_grad=True), tg.tensor(v, requires_grad=True)
        ea, eb = f(a), cf(b)
        same(eb, ea)
        ea[0].backward()
        eb[0].backward()
        same(b.grad, a.grad)
    assert len(cf.compiles) == 3 and cf.replays == 1  # the fourth mask is the first's
    assert cf.explain().breaks[0].reason.startswith("a traced tensor used as an index")


def test_a_traced_index_warns_in_a_trace_that_it_is_frozen():
    with pytest.warns(tg.static.TracerWarning, match="used as an index"):
        tg.static.trace(lambda x: x[x > 0].sum(), tg.tensor([1.0, -1.0]))


def test_cross_entropy_labels_are_read_at_every_call_not_frozen():
    net = make_net()
    head = tg.nn.Linear(1, 3)

    def loss_fn(x, labels):
        return tg.nn.functional.cross_entropy(head(net(x)), labels)

    cf = tg.static.compile(loss_fn)
    x = rand(4, 3)
    for labels in ([0, 1, 2, 0], [2, 2, 2, 2], [0, 1, 2, 0]):
        y = tg.tensor(np.array(labels))
        same(cf(x, y), loss_fn(x, y))
    assert len(cf.compiles) == 2 and cf.replays == 1  # the labels are a break's outcome


# --- against torch.compile ------------------------------------------------------------


@pytest.mark.torch
def test_graph_and_break_counts_and_recompiles_match_torch_compile():
    torch = pytest.importorskip("torch")
    import torch._dynamo as dynamo

    def floats(x):
        scale = float(x.abs().max())
        return x / scale

    cases = [
        (branchy, [[1.0, 2.0]]),
        (floats, [[1.0, -2.0]]),
        (no_breaks, [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[1.0], [0.5], [-1.0]]]),
    ]
    for fn, data in cases:  # one call each, as torch._dynamo.explain makes
        ours = tg.static.compile(fn)
        ours(*[tg.tensor(d) for d in data])
        theirs = dynamo.explain(fn)(*[torch.tensor(d, dtype=torch.float64) for d in data])
        e = ours.explain()
        assert (e.graph_count, e.break_count) == (theirs.graph_count, theirs.graph_break_count)

    compiles = []
    f = torch.compile(lambda x: (x * 2).sum(), backend=lambda gm, ex: compiles.append(1) or gm)
    cf = tg.static.compile(lambda x: (x * 2).sum())
    for n in (3, 5, 7, 11):  # static, then one recompile that makes the size dynamic
        f(torch.ones(n, dtype=torch.float64))
        cf(tg.ones(n))
    assert len(cf.compiles) == len(compiles) == 2


# --- the house errors, exact text -----------------------------------------------------


def test_error_texts():
    here = "tests/static/test_compile.py, line"

    def kw_only(x, *, k):
        return x * k

    def returns_a_dict(x):
        return {"y": x * 2}

    def backward_inside(w):
        loss = (w * w).sum()
        loss.backward()
        return loss

    cases = [
        (
            lambda: tg.static.compile(branchy)(tg.ones(2), j=1),
            TypeError,
            "tg.static.compile: got an unexpected keyword argument 'j'\n  built at: " + here,
        ),
        (
            lambda: tg.static.compile(kw_only)(tg.ones(2), k=2.0),
            TypeError,
            "tg.static.compile: keyword-only arguments ['k'] cannot be guarded here\n"
            "  built at: " + here,
        ),
        (
            lambda: tg.static.compile(lambda x, s: x)(tg.ones(2), [1, 2]),
            tg.static.TracingError,
            "tg.static.compile: argument 's' is a list, which is neither a tensor nor hashable, "
            "so no guard can check it\n  built at: " + here,
        ),
        (
            lambda: tg.static.compile(returns_a_dict)(tg.ones(2)),
            tg.static.TracingError,
            "tg.static.compile: the function returned a dict; a compiled function returns "
            "Tensors, Python numbers or a tuple of them\n  hint: return a Tensor or a tuple of "
            "Tensors",
        ),
        (
            lambda: tg.static.compile(backward_inside)(tg.ones(2, requires_grad=True)),
            tg.static.TracingError,
            "tg.static.compile: backward() or tg.grad() ran inside a compiled function: a replay "
            "runs the captured graphs, not your Python, so it would not run again\n"
            f"  built at: {line_of(backward_inside, 'loss.backward()')}\n"
            "  hint: call backward() on the compiled function's result, outside it",
        ),
    ]
    for call, kind, text in cases:
        with pytest.raises(kind) as err:
            call()
        assert str(err.value).startswith(text), str(err.value)


def test_explain_lists_each_path_through_the_graphs():
    cf = tg.static.compile(three_ifs)
    for v in ([3.0, 3.0], [-3.0, -3.0], [3.0, 3.0]):
        cf(tg.tensor(v))
    text = str(cf.explain())
    paths = text.split("Paths")[1].split("\n\n")[0].splitlines()[1:]
    assert paths == [
        "  graph 0 -> break 1 gave True -> graph 1 -> break 2 gave True -> graph 2 -> "
        "break 3 gave True -> graph 3 -> return",
        "  graph 0 -> break 1 gave False -> graph 4 -> break 4 gave False -> graph 5 -> "
        "break 5 gave False -> graph 6 -> return",  # break 1 (after graph 0) is shared
    ]


def detached(x):
    return (x.detach() * x).sum()


def no_grad_inside(x):
    with tg.no_grad():
        target = x * 2  # a target: no gradient flows through it
    return ((x - target) ** 2).sum()


@pytest.mark.parametrize("fn", [detached, no_grad_inside])
def test_gradients_that_stop_inside_are_honoured(fn):
    cf = tg.static.compile(fn)
    for seed in range(3):
        a = tg.tensor(rand(3, seed=seed).numpy(), requires_grad=True)
        b = tg.tensor(a.numpy(), requires_grad=True)
        fn(a).backward()
        cf(b).backward()
        same(b.grad, a.grad)
    with tg.no_grad():  # no gradients needed: the graphs replay
        same(cf(a), fn(a))
        same(cf(b), fn(b))
    e = cf.explain()
    assert cf.eager_calls == 2 and cf.replays == 1
    assert e.notes[0].startswith("call 2: gradients stop inside the function (detach() or no_grad")
    assert e.compiles[1].reason == (
        "what the function read changed: grad mode is False, the last trace read True"
    )


def test_a_program_collected_while_linecache_checks_its_entries_breaks_nothing(
    monkeypatch, tmp_path
):
    # A compiled program's source sits in linecache (tracebacks show it). The cyclic GC may
    # collect the program at any allocation, also inside linecache.checkcache's loop over
    # its keys (run by every traceback, by doctest, by pdb), which fails if a key it listed
    # is gone by the time it reads it: dropping the entry must wait for a safe moment
    import gc
    import linecache
    import os

    real_file = tmp_path / "on_disk.py"
    real_file.write_text("x = 1\n")
    mtime = real_file.stat().st_mtime
    linecache.cache[str(real_file)] = (6, mtime, ["x = 1\n"], str(real_file))  # stat()ed
    g = tg.static.trace(lambda x: (x * 2).sum(), tg.tensor(np.ones(3)))
    g(tg.tensor(np.ones(3)))  # compiled: its entry comes after the file's
    cycle = [g]
    cycle.append(cycle)  # only the cyclic GC can free it now
    del g, cycle
    stat = os.stat

    def stat_then_collect(path, *args, **kwargs):
        if path == str(real_file):
            gc.collect()  # the collector runs here, as it may at any allocation
        return stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat_then_collect)
    linecache.checkcache()  # raised KeyError when the finalizer popped the entry
    monkeypatch.undo()
    linecache.cache.pop(str(real_file), None)
    # the entry goes when the next program is compiled
    tg.static.trace(lambda x: x + 1, tg.tensor(np.ones(2)))(tg.tensor(np.ones(2)))
    assert sum("static compiled" in name for name in linecache.cache) <= 1
