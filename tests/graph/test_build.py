"""The GraphModel: ids, order, views, new nodes, marks, modules and summaries."""

import html
import re
import time

import numpy as np
import pytest

import tinygrad_edu as tg
from tinygrad_edu.graph import GraphModel, GraphNode, build_graph, register_converter, watermark
from tinygrad_edu.graph.summarise import chain_links
from tinygrad_edu.render.dot import node_details, to_dot


def micrograd():
    a = tg.tensor(2.0, requires_grad=True, name="a")
    b = tg.tensor(-3.0, requires_grad=True, name="b")
    c = tg.tensor(10.0, requires_grad=True, name="c")
    d = a * b + c
    return a, b, c, d


def test_forward_ids_order_and_edges():
    a, b, c, d = micrograd()
    g = build_graph(d)
    assert [(n.id, n.kind, n.name or n.op) for n in g.nodes] == [
        ("t1", "tensor", "a"),
        ("t2", "tensor", "b"),
        ("op1", "op", "Mul"),
        ("t3", "tensor", ""),
        ("t4", "tensor", "c"),
        ("op2", "op", "Add"),
        ("t5", "tensor", ""),
    ]
    assert [(e.src, e.dst, e.slot) for e in g.edges] == [
        ("t1", "op1", 0),
        ("t2", "op1", 1),
        ("op1", "t3", 0),
        ("t3", "op2", 0),
        ("t4", "op2", 1),
        ("op2", "t5", 0),
    ]
    assert g.attrs["roots"] == ["t5"] and g.node("t5").role == "output"
    assert g.node("t1").value == "2.0000" and g.node("t1").role == "leaf"
    assert g.node("op1").site.endswith("d = a * b + c") and g.node("op1").cell is None


def test_ids_do_not_depend_on_what_ran_before():
    first = [n.id for n in build_graph(micrograd()[3]).nodes]
    for _ in range(100):
        tg.tensor(1.0, requires_grad=True) * 3
    assert [n.id for n in build_graph(micrograd()[3]).nodes] == first


def test_grads_after_backward_and_dict_names():
    a, b, c, d = micrograd()
    d.backward()
    g = build_graph({"d": d})
    assert g.node("t1").grad == "-3.0000" and g.node("t2").grad == "2.0000"
    assert g.node("t5").name == "d" and g.node("t5").grad == ""  # non-leaf: no grad kept
    g2 = build_graph([d], names={"ab": d.grad_fn.next_functions[0][0].output()})
    assert g2.node("t5").name == ""


def test_list_of_tensors_and_shared_nodes_appear_once():
    a = tg.tensor([1.0, 2.0], requires_grad=True, name="a")
    y1, y2 = (a * 2).sum(), (a * 3).sum()
    g = build_graph([y1, y2])
    assert [n.id for n in g.nodes if n.name == "a"] == ["t1"]
    assert g.attrs["roots"] == ["t4", "t7"]


def test_backward_view_is_what_pytorch_stores():
    x = tg.tensor([1.0, 2.0], requires_grad=True, name="x")
    y = (x * x).sum()
    g = build_graph(y, view="backward")
    assert [(n.id, n.name) for n in g.nodes] == [
        ("acc1", "AccumulateGrad"),
        ("op1", "MulBackward"),
        ("op2", "SumBackward"),
        ("t1", ""),
    ]
    assert [(e.src, e.dst, e.slot) for e in g.edges] == [
        ("op1", "acc1", 0),
        ("op1", "acc1", 1),
        ("op2", "op1", 0),
        ("t1", "op2", 0),
    ]
    assert g.node("acc1").detail == "x" and g.node("op1").saved == ("x (2,) float64",) * 2
    y.backward()
    g = build_graph(y, view="backward")
    assert g.node("op1").freed and g.node("acc1").grad == "[2, 4]"


def test_new_nodes_after_a_watermark():
    a = tg.tensor(1.0, requires_grad=True, name="a")
    b = a * 2
    mark = watermark()
    c = b + a
    g = build_graph(c, since=mark)
    assert g.new_ids() == ["op2", "t4"]  # `a` and `b` are older than the mark
    d = tg.tensor(5.0, requires_grad=True, name="d")
    assert build_graph(c * d, since=mark).new_ids() == ["op2", "t4", "t5", "op3", "t6"]
    assert build_graph(c).new_ids() == []


def test_marks_from_nodes_and_from_the_caller():
    a = tg.tensor(1.0, requires_grad=True)
    b = a.exp()
    c = b.log()
    b.grad_fn._mark, b.grad_fn._mark_text = "breakpoint", "break_on hit 0"
    g = build_graph(c, marks={c.grad_fn: "current", a: "gradcheck"})
    assert g.marked() == {"gradcheck": ["t1"], "breakpoint": ["op1"], "current": ["op2"]}
    assert g.node("op1").mark_text == "break_on hit 0"
    with pytest.raises(ValueError, match=re.escape("build_graph: unknown mark 'red'")):
        build_graph(c, marks={a: "red"})


def test_errors_name_the_problem():
    with pytest.raises(
        ValueError,
        match=re.escape("build_graph: unknown view 'sideways'\n  hint: use view=\"forward\""),
    ):
        build_graph(tg.tensor(1.0), view="sideways")
    with pytest.raises(
        TypeError,
        match=re.escape("build_graph: expected Tensors (or a list or dict of them), got int"),
    ):
        build_graph([tg.tensor(1.0), 3])


def mlp():
    tg.manual_seed(0)
    net = tg.nn.Sequential(tg.nn.Linear(2, 3), tg.nn.Tanh(), tg.nn.Linear(3, 1))
    return net(tg.tensor([[1.0, -1.0]])).sum()


def test_modules_group_nodes_and_parameters():
    g = build_graph(mlp())
    assert g.modules() == ["sequential", "sequential.0", "sequential.1", "sequential.2"]
    weight = [n for n in g.nodes if n.name == "0.weight"][0]
    assert weight.module == "sequential.0"
    assert g.nodes[-1].module == ""  # the sum outside the network


def test_collapse_modules():
    g = build_graph(mlp(), collapse=True)
    s = [n for n in g.nodes if n.kind == "summary"]
    assert [(n.name, n.role, n.count) for n in s] == [("sequential", "module", 19)]
    assert len(g) == 3 and [(e.src, e.dst) for e in g.edges] == [("s1", "op8"), ("op8", "t13")]
    g = build_graph(mlp(), collapse=["sequential.2"])
    assert [n.name for n in g.nodes if n.kind == "summary"] == ["sequential.2"]


def test_repeated_modules_fold_keeping_first_and_last():
    tg.manual_seed(0)
    blocks = [tg.nn.Sequential(tg.nn.Linear(2, 2), tg.nn.Tanh()) for _ in range(6)]
    net = tg.nn.Sequential(*blocks)
    g = build_graph(net(tg.ones(1, 2)).sum(), collapse=[f"sequential.{i}" for i in range(6)])
    s = [(n.name, n.role, n.blocks) for n in g.nodes if n.kind == "summary"]
    assert s == [
        ("sequential.0", "module", 0),
        ("sequential.1 ... sequential.4", "repeat", 4),
        ("sequential.5", "module", 0),
    ]


def chain(n):
    z = tg.tensor(1.0, requires_grad=True, name="z")
    for _ in range(n):
        z = z * 0.5 + 1.0
    return z


def test_loop_chain_folds_into_one_repeat_node():
    g = build_graph(chain(10))
    (s,) = [n for n in g.nodes if n.kind == "summary"]
    assert (s.role, s.detail, s.blocks, s.count) == ("repeat", "Mul -> Add", 8, 48)
    assert len(g) == 1 + 6 + 1 + 6 and g.attrs["total"] == 61
    short = build_graph(chain(3))  # 3 repeats: below MIN_REPEATS, drawn in full
    assert all(n.kind != "summary" for n in short.nodes) and len(short) == 19


def test_node_cap_threshold_and_more_marker():
    z = chain(20)
    full = build_graph(z, fold=False, max_nodes=None)
    assert len(full) == 121
    assert len(build_graph(z, fold=False, max_nodes=121)) == 121  # at the cap: untouched
    g = build_graph(z, fold=False, max_nodes=120)
    (m,) = [n for n in g.nodes if n.kind == "summary"]
    assert len(g) == 120 and m.role == "more" and m.count == 121 - 119
    assert g.attrs["hidden"] == 2 and g.summary().endswith(", 2 more summarised")
    assert [e.src for e in g.edges if e.dst == g.nodes[1].id] == [m.id]


def test_backward_view_cap_and_fold():
    z = chain(30)
    g = build_graph(z, view="backward")
    assert [n.kind for n in g.nodes].count("summary") == 1
    g = build_graph(z, view="backward", fold=False, max_nodes=10)
    (m,) = [n for n in g.nodes if n.kind == "summary"]
    assert m.count == 62 - 9 and len(g) == 10


def three_sums():
    """Three outputs of one input, each three ops deep: 22 forward nodes, 13 grad_fn nodes."""
    x = tg.randn(3, name="x", requires_grad=True)
    a = (x * 2).exp().sum()
    b = (x + 1).tanh().sum()
    c = (x - 3).relu().sum()
    return {"a": a, "b": b, "c": c}


@pytest.mark.parametrize("view", ["forward", "backward"])
@pytest.mark.parametrize("cap", [1, 2, 4, 5])
def test_a_cap_below_the_roots_keeps_every_root_and_counts_the_rest(view, cap):
    roots = three_sums()
    g = build_graph(roots, view=view, max_nodes=cap, fold=False)
    names = [n.name for n in g.nodes if n.kind != "summary"]
    (more,) = [n for n in g.nodes if n.kind == "summary"]  # one marker joins every cut
    assert sorted(names) == ["a", "b", "c"] and len(g) == 4
    assert more.count == g.attrs["hidden"] == g.attrs["total"] - 3
    assert sorted(e.dst if view == "forward" else e.src for e in g.edges) == sorted(
        g.attrs["roots"]
    )


@pytest.mark.parametrize("view", ["forward", "backward"])
def test_a_capped_drawing_counts_its_markers_in_the_cap(view):
    for cap in range(6, 13):  # below both views' totals (22 and 13 nodes)
        g = build_graph(three_sums(), view=view, max_nodes=cap, fold=False)
        dot = to_dot(g)
        boxes = re.findall(r'\[id="node-([^"]+)"', dot)  # every box the DOT draws
        counted = sum(n.count if n.kind == "summary" else 1 for n in g.nodes)
        assert len(g) <= cap and len(set(boxes)) == len(g), (cap, len(g))
        assert counted == g.attrs["total"] and "more node" in dot


def mlp_loop(calls):
    """An MLP applied in a Python loop: 7 ops a call (two Linears of 3 ops, a ReLU)."""
    tg.manual_seed(0)
    net = tg.nn.Sequential(tg.nn.Linear(4, 4), tg.nn.ReLU(), tg.nn.Linear(4, 4))
    h = tg.randn(3, 4, name="x")
    for _ in range(calls):
        h = net(h)
    return h.pow(2).mean()


def counted_once(g):
    """Whether every node of the graph is drawn, or counted by exactly one summary."""
    shown = sum(n.count if n.kind == "summary" else 1 for n in g.nodes)
    return shown == g.attrs["total"]


def test_backward_view_of_a_long_loop_builds_in_linear_time():
    # every layer's transpose feeds the chain of the layers before: when each of those
    # chains linked into it, folding walked the shared rest once per layer (17 s here)
    loss = mlp_loop(2860)  # 20,020 ops
    t0 = time.perf_counter()
    g = build_graph(loss, view="backward")
    took = time.perf_counter() - t0
    assert took < 3, f"backward view of 20,020 ops took {took:.1f} s"
    assert g.attrs["total"] == 20_028 and counted_once(g)  # 20,020 ops, 7 leaves, loss


def test_backward_folds_never_overlap_and_follow_the_data_path():
    tg.manual_seed(0)
    layers = []
    for _ in range(8):
        layers += [tg.nn.Linear(4, 4), tg.nn.ReLU()]
    net = tg.nn.Sequential(*layers, tg.nn.Linear(4, 1))
    g = build_graph(net(tg.randn(3, 4)).pow(2).mean(), view="backward")
    (s,) = [n for n in g.nodes if n.kind == "summary"]
    # layers 1 and 7 stay open, the 6 between fold: 3 ops and a bias each
    assert (s.detail, s.blocks, s.count) == ("MatMul -> Add -> ReLU", 6, 24)
    assert counted_once(g) and len(g) == 34
    # the transposes stay visible, one per folded layer, each feeding the fold
    into_fold = [g.node(e.dst).name for e in g.edges if e.src == s.id]
    assert into_fold == ["ReLUBackward"] + ["TransposeBackward"] * 6


def test_backward_fold_of_an_rnn_follows_the_hidden_state():
    # `x @ w_ih.T + b_ih` is made before `h @ w_hh.T + b_hh`: the earlier input is not
    # the long chain; the fold runs along h through the time steps
    tg.manual_seed(0)
    cell = tg.nn.RNNCell(3, 4)
    h = tg.zeros(1, 4)
    for _ in range(9):
        h = cell(tg.randn(1, 3), h)
    g = build_graph(h.sum(), view="backward")
    (s,) = [n for n in g.nodes if n.kind == "summary"]
    assert (s.detail, s.blocks) == ("MatMul -> Add -> Add -> Tanh", 7)
    assert counted_once(g)


def test_chain_links_keep_the_longest_chain_into_each_op():
    # op 3 reads ops 1 and 2, and op 2 continues op 0: op 2's chain is the longer, though
    # op 1 is earlier; op 5 reads op 3 (chain 0, 2, 3) and op 4; ops 6 and 7, equally
    # long, both feed op 8: the earlier keeps the link
    ops, readers = np.array([0, 1, 2, 3, 4, 6, 7]), np.array([2, 3, 3, 5, 5, 8, 8])
    kept_ops, kept_readers = chain_links(ops, readers)
    assert list(zip(kept_ops.tolist(), kept_readers.tolist())) == [(0, 2), (2, 3), (3, 5), (6, 8)]


def test_deep_chain_needs_no_recursion():
    z = tg.tensor(1.0, requires_grad=True)
    for _ in range(20000):
        z = z * 1.0
    g = build_graph(z)
    assert g.attrs["total"] == 1 + 3 * 20000 and len(g) < 20


def test_register_converter_is_how_an_object_draws_itself():
    class Value:
        pass

    class Leaf(Value):
        pass

    def drawn(name):
        return lambda obj, **options: GraphModel(
            [GraphNode("v1", "tensor", name=name)], [], {"view": options["view"]}
        )

    register_converter(Value, drawn("value"))
    got = build_graph(Value(), view="backward")
    assert got.nodes[0].name == "value" and got.attrs["view"] == "backward"
    assert build_graph(Leaf()).nodes[0].name == "value"  # a subclass draws as its base
    register_converter(Leaf, drawn("leaf"))  # unless it registers its own
    assert build_graph(Leaf()).nodes[0].name == "leaf"
    register_converter(Value, drawn("again"))  # a cell run twice replaces, never stacks
    assert build_graph(Value()).nodes[0].name == "again"

    class Private:  # a method of its own draws nothing: the registry is the one way
        def _to_graph(self, **options):
            return GraphModel([], [], {"view": "forward"})

    with pytest.raises(TypeError) as e:
        build_graph(Private())
    assert str(e.value) == (
        "build_graph: expected Tensors (or a list or dict of them), got Private\n"
        "  hint: pass the tensors whose graph you want to see; an object of your own draws "
        "once its type is given to tinygrad_edu.graph.register_converter"
    )


def test_summary_and_fingerprint_are_deterministic():
    g = build_graph(micrograd()[3])
    assert g.summary() == "forward graph, 7 nodes (5 tensors, 2 ops)"
    assert g.fingerprint() == build_graph(micrograd()[3]).fingerprint()
    a, b, c, d = micrograd()
    d.backward()
    assert build_graph(d).fingerprint() != g.fingerprint()


def test_value_summaries():
    from tinygrad_edu.graph import summarise_array

    assert summarise_array(np.array([1.0, 2.0, 3.0, 4.0, 5.0])) == "mean 3 std 1.414"
    assert (
        summarise_array(np.array([np.inf, np.nan, 1.0, 1.0, 1.0])) == "mean 1 std 0, 1 nan, 1 inf"
    )
    # a value that rounds to zero keeps no sign: float noise has either sign
    assert summarise_array(np.array([-0.0])) == "0.0000"
    assert summarise_array(np.array(-3e-9)) == summarise_array(np.array(2e-9)) == "0.0000"
    assert summarise_array(np.array(-0.25)) == "-0.2500"


def test_a_mean_that_is_float_noise_next_to_its_std_reads_zero_on_every_cpu():
    from tinygrad_edu.graph import summarise_array

    # the same float32 values summed in another order (numpy's AVX-512, AVX2 and baseline
    # paths) give a mean of 0, 9e-12 or -4e-12: all three read as 0 beside a std of 1.5
    x = np.linspace(-np.pi, np.pi, 200, dtype=np.float32)
    for noise in (0.0, 9.313e-12, -4e-12, 1.2e-9):
        assert summarise_array(x + np.float32(noise)) == "mean 0 std 1.823"
    # below half the last digit of the std shown is noise; above it the mean is shown
    assert summarise_array(np.array([-1.0, 1.0, 0.0, 2e-4, 0.0])) == "mean 0 std 0.6325"
    assert summarise_array(np.array([-1.0, 1.0, 0.0, 4e-4, 0.0])) == "mean 8e-05 std 0.6325"
    # a mean far from zero, or a std of zero (all equal), is shown as it is
    assert summarise_array(np.array([1e-9] * 5)) == "mean 1e-09 std 0"
    assert summarise_array(np.array([1000.0, 1000.5, 999.5, 1000.0, 1000.0])) == (
        "mean 1000 std 0.3162"
    )


def test_fold_takes_constants_in_any_slot_and_own_leaves_but_not_shared_ones():
    tg.manual_seed(0)
    shared = tg.tensor(0.5, requires_grad=True, name="shared")
    z = tg.tensor(1.0, requires_grad=True, name="z")
    for k in range(8):
        own = tg.tensor(float(k), requires_grad=True, name=f"own{k}")
        z = 2.0 * (z * own) + shared  # constant in slot 0, a new leaf, a shared leaf
    g = build_graph(z)
    (s,) = [n for n in g.nodes if n.kind == "summary"]
    names = [n.name for n in g.nodes if n.kind == "tensor" and n.name]
    assert names == ["z", "own0", "shared", "own7"]
    # per block: 3 ops, their 3 outputs, the constant 2.0 and the block's own leaf
    assert s.blocks == 6 and s.count == 6 * 8
    shared_id = [n.id for n in g.nodes if n.name == "shared"][0]
    assert (shared_id, s.id) in [(e.src, e.dst) for e in g.edges]  # shared: wired to the fold


def test_a_module_called_in_a_loop_gets_one_group_per_step():
    np.random.seed(0)
    cell = tg.nn.RNNCell(1, 2)
    h = None
    for t in range(3):
        h = cell(tg.tensor([0.5 * t]), h)
    g = build_graph(h.sum(), max_nodes=None, fold=False)
    ops = [n for n in g.nodes if n.kind == "op"]
    steps = [n.module for n in ops if n.module]
    assert sorted(set(steps)) == ["rnncell.t=0", "rnncell.t=1", "rnncell.t=2"]
    assert steps == sorted(steps)  # the steps in time order, each one contiguous
    assert len(steps) == 3 * (len(steps) // 3)  # the same ops in every step
    params = [n for n in g.nodes if n.role == "leaf"]
    assert {n.module for n in params} == {"rnncell"}  # shared by every step
    assert ops[-1].module == ""  # the sum is outside the cell


def test_a_module_called_once_keeps_its_path():
    layer = tg.nn.Linear(2, 2)
    g = build_graph(layer(tg.tensor([[1.0, 2.0]])).sum(), max_nodes=None, fold=False)
    assert {n.module for n in g.nodes if n.kind == "op"} <= {"linear", ""}


def _unrolled(steps):
    np.random.seed(0)
    cell = tg.nn.RNNCell(1, 3)
    x = tg.tensor(np.arange(steps, dtype=float).reshape(steps, 1), name="x")
    h = None
    for t in range(steps):
        h = cell(x[t], h)
    return h.sum()


def test_a_long_unroll_folds_its_middle_steps_into_one_node():
    g = build_graph(_unrolled(12))
    (s,) = [n for n in g.nodes if n.kind == "summary"]
    assert (s.name, s.module, s.blocks) == ("rnncell.t=1 ... t=10", "rnncell", 10)
    steps = {n.module for n in g.nodes if n.kind == "op" and n.module}
    assert steps == {"rnncell.t=0", "rnncell.t=11"}  # the first and the last stay open
    per_step = len(
        [
            n
            for n in build_graph(_unrolled(12), fold=False, max_nodes=None).nodes
            if n.module == "rnncell.t=3"
        ]
    )
    assert s.count == 10 * per_step
    assert g.attrs["hidden"] == 0  # folded, not cut off by the node cap
    tip = node_details(s)
    assert 'draw one step in full: tg.draw(..., expand="rnncell.t=1"), or expand=True' in tip
    # the fold sits between the steps: the hidden state flows t=0 -> fold -> t=11
    module_of = {n.id: n.module for n in g.nodes}
    into = {module_of[e.src] for e in g.edges if e.dst == s.id}
    out_of = {module_of[e.dst] for e in g.edges if e.src == s.id}
    assert "rnncell.t=0" in into and out_of == {"rnncell.t=11"}
    assert "rnncell.t=1 ... t=10\\n\u00d7 10 steps, the same ops" in to_dot(g)


def test_a_fold_beside_an_opened_step_says_how_to_open_it_too():
    """With step 5 open, the folds before and after it (t=0 ... t=4, t=6 ... t=11, the
    drawing folded to fit the screen) suggest a list that keeps 5 open: naming one step,
    `expand="rnncell.t=0"`, would close the step the learner opened."""
    svg = html.unescape(tg.draw(_unrolled(12), expand="rnncell.t=5").svg())
    hints = sorted(set(re.findall(r"draw (?:this|one) step in full[^\n<]*", svg)))
    assert hints == [
        f'draw this step in full too: tg.draw(..., expand=["rnncell.t=5", "rnncell.t={t}"]),'
        " or expand=True"
        for t in (0, 6)
    ]


def test_expand_opens_the_steps_asked_for():
    g = build_graph(_unrolled(12), expand="rnncell.t=5")
    assert sorted(n.name for n in g.nodes if n.kind == "summary") == [
        "rnncell.t=1 ... t=4",
        "rnncell.t=6 ... t=10",
    ]
    assert {n.module for n in g.nodes if n.kind == "op" and n.module} == {
        "rnncell.t=0",
        "rnncell.t=5",
        "rnncell.t=11",
    }
    every = build_graph(_unrolled(12), expand=True, max_nodes=None)
    assert not [n for n in every.nodes if n.kind == "summary"]
    assert len({n.module for n in every.nodes if n.module.startswith("rnncell.t=")}) == 12


def _folded_steps(g):
    """Each summary's steps as a list of numbers (`rnncell.t=6 ... t=11` -> [6, ..., 11])."""
    out = []
    for n in g.nodes:
        if n.kind == "summary":
            first, last = (int(k) for k in re.findall(r"t=(\d+)", n.name))
            out.append(list(range(first, last + 1)))
    return out


def test_keep_ends_false_folds_each_side_of_an_opened_step_on_its_own():
    # what tg.draw falls back to when an opened step does not fit one screen (lesson 05a)
    g = build_graph(_unrolled(12), expand="rnncell.t=5", keep_ends=False)
    assert [(n.name, n.blocks) for n in g.nodes if n.kind == "summary"] == [
        ("rnncell.t=0 ... t=4", 5),
        ("rnncell.t=6 ... t=11", 6),
    ]
    steps = {n.module for n in g.nodes if n.kind == "op" and n.module.startswith("rnncell")}
    assert steps == {"rnncell.t=5"}
    # the hidden state flows fold -> t=5 -> fold: each fold holds one side only
    module_of = {n.id: n.module or n.name for n in g.nodes}
    fold0, fold6 = (n.id for n in g.nodes if n.kind == "summary")
    assert {module_of[e.dst] for e in g.edges if e.src == fold0} == {"rnncell.t=5"}
    assert "rnncell.t=5" in {module_of[e.src] for e in g.edges if e.dst == fold6}
    # the first or the last step opened: one fold, of the steps after or before it
    assert _folded_steps(build_graph(_unrolled(12), expand="rnncell.t=0", keep_ends=False)) == [
        list(range(1, 12))
    ]
    assert _folded_steps(build_graph(_unrolled(12), expand="rnncell.t=11", keep_ends=False)) == [
        list(range(0, 11))
    ]


def test_collapsed_siblings_fold_only_with_their_neighbours():
    # collapsing every step but t=5 once made one box "rnncell.t=1 ... rnncell.t=10" that
    # claimed the open step too; a fold now stops where another sibling ran between
    g = build_graph(_unrolled(12), collapse=[f"rnncell.t={k}" for k in range(12) if k != 5])
    repeats = [n for n in g.nodes if n.kind == "summary" and n.role == "repeat"]
    assert [(n.name, n.blocks) for n in repeats] == [
        ("rnncell.t=1 ... rnncell.t=3", 3),
        ("rnncell.t=7 ... rnncell.t=10", 4),
    ]
    assert any(n.module == "rnncell.t=5" for n in g.nodes if n.kind == "op")
    every = build_graph(_unrolled(12), collapse=[f"rnncell.t={k}" for k in range(12)])
    (fold,) = [n for n in every.nodes if n.role == "repeat"]
    assert (fold.name, fold.blocks) == ("rnncell.t=1 ... rnncell.t=10", 10)
    # the same for layers: sequential.3 left open splits the layers around it
    net = tg.nn.Sequential(*[tg.nn.Linear(2, 2) for _ in range(8)])
    out = net(tg.tensor([[1.0, 2.0]])).sum()
    g = build_graph(out, collapse=[f"sequential.{k}" for k in range(8) if k != 3])
    assert [n.name for n in g.nodes if n.role == "repeat"] == ["sequential.5 ... sequential.6"]


def test_a_step_opened_with_expand_is_never_folded_as_a_chain():
    from tinygrad_edu.graph.chains import fold_chains

    g = build_graph(_unrolled(12), expand="rnncell.t=5")
    step5 = [n.id for n in g.nodes if n.module == "rnncell.t=5"]
    folded = fold_chains(g, 3)  # what tg.draw tries when a drawing is too tall
    assert [n.id for n in folded.nodes if n.module == "rnncell.t=5"] == step5
    assert g.attrs["opened"] == folded.attrs["opened"] == ["rnncell.t=5"]
    # the same tanh chain folds in a step the learner did not open (t=0 here)
    plain = build_graph(_unrolled(12))
    assert [n.module for n in fold_chains(plain, 3).nodes if n.role == "chain"][0] == "rnncell.t=0"
    assert "opened" not in plain.attrs


def test_short_unrolls_stay_open():
    g = build_graph(_unrolled(3))
    assert not [n for n in g.nodes if n.kind == "summary"]


def test_a_slice_of_named_data_is_named_in_the_drawing():
    g = build_graph(_unrolled(3), expand=True)
    names = [n.name for n in g.nodes if n.role == "constant" and n.name]
    assert names == ["x[0]", "x[1]", "x[2]"]
    x = tg.tensor(np.zeros((3, 4)), name="x")
    assert [x[1:3, 0].name, x[..., None].name, x[::2].name] == [
        "x[1:3, 0]",
        "x[..., None]",
        "x[::2]",
    ]
    assert x[[0, 2]].name is None  # an index of arrays: no short name
    assert tg.tensor(np.zeros(3))[0].name is None  # unnamed data stays unnamed
    w = tg.tensor([1.0, 2.0], requires_grad=True, name="w")
    assert w[0].name is None  # a slice on the graph is drawn with its op instead


def test_backward_view_reads_the_forward_walks_traversal(monkeypatch):
    # one traversal for both views (walk._walk): the backward view adds the AccumulateGrad
    # nodes of leaves asked for themselves (w, used by an earlier graph only), in creation
    # order, and draws a tensor outside any graph (c) with no edge
    from tinygrad_edu.graph import walk

    calls = []
    real = walk._walk
    monkeypatch.setattr(walk, "_walk", lambda roots: calls.append(len(roots)) or real(roots))
    a = tg.tensor(1.0, requires_grad=True, name="a")
    b = tg.tensor(2.0, requires_grad=True, name="b")
    c = tg.tensor(3.0, name="c")
    y = (a * b).exp()
    w = tg.tensor(4.0, requires_grad=True, name="w")
    w.sum().backward()
    g = build_graph(y, a, b, c, a, w, view="backward")
    assert calls == [6]
    assert [(n.id, n.name) for n in g.nodes] == [
        ("acc1", "AccumulateGrad"),
        ("acc2", "AccumulateGrad"),
        ("op1", "MulBackward"),
        ("op2", "ExpBackward"),
        ("acc3", "AccumulateGrad"),
        ("t1", ""),
        ("t2", "a"),
        ("t3", "b"),
        ("t4", "c"),
        ("t5", "a"),
        ("t6", "w"),
    ]
    assert [(e.src, e.dst, e.slot) for e in g.edges] == [
        ("op1", "acc1", 0),
        ("op1", "acc2", 1),
        ("op2", "op1", 0),
        ("t1", "op2", 0),
        ("t2", "acc1", 0),
        ("t3", "acc2", 0),
        ("t5", "acc1", 0),
        ("t6", "acc3", 0),
    ]
