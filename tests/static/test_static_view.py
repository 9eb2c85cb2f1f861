"""Drawing a StaticGraph: the Graph model and its DOT (branches as clusters)."""

import tinygrad_edu as tg
from tinygrad_edu.graph import build_graph
from tinygrad_edu.static import cond


def _branchy():
    return tg.static.trace(
        lambda x, w: cond(x.sum() > 0, lambda v: (v * w).relu(), lambda v: -v, x).sum(),
        tg.tensor([1.0, 2.0]),
        tg.tensor([3.0, 1.0]),
    )


def test_static_graph_model_has_branch_clusters_and_roles():
    gm = build_graph(_branchy())
    assert gm.summary() == "static graph, 21 nodes (14 tensors, 7 ops)"
    assert [n.op for n in gm.nodes if n.kind == "op"] == [
        "Sum",
        "Compare",
        "cond",
        "Mul",
        "ReLU",
        "Neg",
        "Sum",
    ]
    assert gm.modules() == ["cond@3", "cond@3.true", "cond@3.false"]
    assert [n.name for n in gm.nodes if n.role == "leaf" and not n.module] == ["x", "w"]
    labels = {(gm.node(e.src).module, e.label, gm.node(e.dst).op) for e in gm.edges if e.label}
    assert labels == {("cond@3.true", "true", "cond"), ("cond@3.false", "false", "cond")}
    assert gm.node(gm.attrs["roots"][0]).role == "output"


def test_backward_program_draws_backward_nodes_with_saved_edges():
    g = tg.static.trace(lambda x: (x * x).relu().sum(), tg.tensor([1.0, -1.0])).grad()
    gm = build_graph(g)
    names = [n.name for n in gm.nodes if n.kind == "op"]
    assert names == ["Mul", "ReLU", "Sum", "SumBackward", "ReLUBackward", "MulBackward", "Add"]
    saved = [(gm.node(e.src).name, gm.node(e.dst).name) for e in gm.edges if e.label == "saved"]
    assert saved == [("Sum", "SumBackward"), ("ReLU", "ReLUBackward"), ("Mul", "MulBackward")]
    dot = tg.draw(g).source
    assert 'label="ReLUBackward"' in dot and 'label="saved"' in dot
    assert 'subgraph "cluster_' not in dot  # no control flow: no clusters


def test_draw_source_names_the_clusters():
    dot = tg.draw(_branchy()).source
    for label in ('label="cond@3.true"', 'label="cond@3.false"', 'label="true"'):
        assert label in dot


def test_constants_are_named_as_in_the_program_text():
    g = tg.static.trace(lambda x: (x * 2.0 + 1.0).relu(), tg.tensor([1.0, -2.0]))
    assert "c2: float64[] = const 2." in str(g) and "c4: float64[] = const 1." in str(g)
    consts = [(n.name, n.value) for n in build_graph(g).nodes if n.role == "constant"]
    assert consts == [("c2", "2.0000"), ("c4", "1.0000")]
    assert 'label="{c2|data 2.0000}"' in tg.draw(g).source
