"""GraphView driven from Python, headless: traits in, SVG and details text out."""

from __future__ import annotations

import re

import pytest

import tinygrad_edu as tg
from tinygrad_edu.graph import watermark
from tinygrad_edu.widgets import GraphView
from tinygrad_edu.widgets.graph_view import _fallback_class
from tinygrad_edu.widgets.state import GraphViewState


def svg_texts(svg: str) -> list[str]:
    return [t.strip() for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]


@pytest.fixture
def graph():
    x = tg.tensor([1.0, 2.0], requires_grad=True, name="x")
    w = tg.tensor([3.0, 4.0], requires_grad=True, name="w")
    mark = watermark()
    y = (x * w).sum()
    y.name = "y"
    return x, w, y, mark


@pytest.fixture(params=["anywidget", "fallback"])
def view_cls(request):
    return GraphView if request.param == "anywidget" else _fallback_class()


def test_repr_and_mimebundle_carry_svg_and_one_line_summary(graph, view_cls):
    x, w, y, mark = graph
    v = view_cls(y)
    name = view_cls.__name__
    assert repr(v) == f"{name}(forward graph, 6 nodes)"
    data, _ = v._repr_mimebundle_()
    assert data["text/plain"] == f"{name}(forward graph, 6 nodes)"
    assert {"x (2,)", "w (2,)", "y", "sum"} <= set(svg_texts(data["image/svg+xml"]))
    assert "application/vnd.jupyter.widget-view+json" in data


def test_selecting_a_node_shows_its_details(graph, view_cls):
    x, w, y, mark = graph
    y.backward()
    v = view_cls(y)
    v.selected = "t1"
    assert v.details == "x  (t1, leaf tensor)\nshape: (2,) float64\nvalue: [1, 2]\ngrad: [3, 4]"
    v.selected = "op1"
    lines = v.details.splitlines()
    assert lines[0] == "Mul  (op1, op)"
    assert lines[1] == "output shape: (2,) float64"
    assert lines[2] == "saved: freed by backward()"
    assert lines[3].startswith("built at: ") and lines[3].endswith("y = (x * w).sum()")
    v.selected = ""
    assert v.details == ""


def test_saved_tensors_listed_before_backward(graph):
    x, w, y, mark = graph
    v = GraphView(y)
    v.selected = "op1"
    assert "saved: x (2,) float64; w (2,) float64" in v.details.splitlines()


def test_toggles_redraw_the_svg(graph, view_cls):
    x, w, y, mark = graph
    y.backward()
    v = view_cls(y)
    assert "grad [3, 4]" in svg_texts(v.svg)
    v.show_grads = False
    assert not any(t.startswith("grad") for t in svg_texts(v.svg))
    v.show_values = False
    assert not any(t.startswith("data") for t in svg_texts(v.svg))
    v.view = "backward"
    texts = svg_texts(v.svg)
    assert "MulBackward" in texts and "SumBackward" in texts
    assert repr(v) == f"{view_cls.__name__}(backward graph, 5 nodes)"


def test_new_nodes_and_highlight_classes(graph):
    x, w, y, mark = graph
    v = GraphView(y, since=mark)
    assert v.highlight == {"new": ["op1", "t3", "op2", "t4"]}
    svg = v.svg
    v.highlight = {**v.highlight, "current": ["op2"], "anomaly": ["t3"]}
    assert v.svg == svg  # highlighting is CSS in the front end, never a new layout
    with pytest.raises(Exception, match=re.escape("highlight: unknown kind 'hot'")):
        v.highlight = {"hot": ["t1"]}


def test_selection_cleared_when_node_disappears(graph):
    x, w, y, mark = graph
    v = GraphView(y)
    v.selected = "t4"
    z = x * 2
    v.show_graph([z])
    assert v.selected == "" and v.details == ""


def test_state_model_is_plain_traitlets():
    s = GraphViewState()
    seen = []
    s.observe(lambda c: seen.append(c["new"]), names=["view"])
    s.view = "backward"
    assert seen == ["backward"]


def test_esm_is_vendored_and_has_no_imports():
    esm = GraphView._esm
    assert "export default" in esm
    assert not re.search(r"^\s*import\s", esm, flags=re.M)  # no CDN, no build step
    assert 'model.set("selected"' in esm


def test_anomaly_marks_become_highlight(graph):
    x, w, y, mark = graph
    y.grad_fn._mark = "anomaly"  # what detect_anomaly leaves on the node (docs/architecture.md)
    y.grad_fn._mark_text = "produced nan"
    v = GraphView(y)
    assert v.highlight == {"anomaly": ["op2"]}
    v.selected = "op2"
    assert v.details.splitlines()[-1] == "marks: anomaly (produced nan)"


def test_collapse_folds_modules_into_one_node():
    net = tg.nn.Sequential(tg.nn.Linear(2, 3), tg.nn.Tanh(), tg.nn.Linear(3, 1))
    loss = (net(tg.tensor([[0.5, -1.0]])) ** 2).mean()
    v = GraphView(loss)
    # 27 boxes in a chain do not fit a panel at 9 px: the layers are folded, and said so
    assert (
        repr(v) == "GraphView(forward graph, 12 nodes, sequential.0 ... sequential.2 folded to fit)"
    )
    v.fold_to_fit = False  # the learner's "fold to fit" box: every box
    assert repr(v) == "GraphView(forward graph, 27 nodes)"
    v.collapse = True
    assert repr(v) == "GraphView(forward graph, 9 nodes)"
    assert "sequential" in svg_texts(v.svg)
    v.selected = "s1"
    assert v.details.splitlines()[0] == "sequential  (s1, stands for 19 nodes)"


def test_stock_widgets_when_anywidget_is_missing(monkeypatch):
    import sys

    from tinygrad_edu.widgets import graph_view

    monkeypatch.setitem(sys.modules, "anywidget", None)  # `import anywidget` now fails
    assert graph_view._anywidget_class() is None
    import ipywidgets

    assert issubclass(graph_view._fallback_class(), ipywidgets.VBox)
