"""tg.draw / Drawing: reprs, mimebundle, save by suffix; text tree; matplotlib plots."""

import re

import matplotlib
import numpy as np
import pytest

import tinygrad_edu as tg
from tinygrad_edu.render import svg as svg_mod
from tinygrad_edu.render.text import to_text

matplotlib.use("Agg")
needs_dot = pytest.mark.skipif(svg_mod.find_dot() is None, reason="no Graphviz dot")


def expr():
    a = tg.tensor(0.5, requires_grad=True, name="a")
    b = tg.tensor(-1.0, requires_grad=True, name="b")
    y = (a * b).tanh()
    y.name = "y"
    return y


def test_repr_is_deterministic_and_addressless():
    d = tg.draw(expr())
    assert repr(d) == "<Drawing: forward graph, 6 nodes (4 tensors, 2 ops)>"
    assert repr(tg.draw(expr(), view="backward")) == (
        "<Drawing: backward graph, 5 nodes (1 tensor, 2 ops, 2 AccumulateGrad)>")


@needs_dot
def test_mimebundle_has_svg_and_text():
    d = tg.draw(expr())
    bundle = d._repr_mimebundle_()
    assert sorted(bundle) == ["image/svg+xml", "text/plain"]
    assert ">data &#45;0.4621</text>" in bundle["image/svg+xml"]
    assert d.svg() is d.svg()  # laid out once


@needs_dot
def test_save_by_suffix(tmp_path):
    d = tg.draw(expr())
    assert (tmp_path / "g.dot").read_text() if d.save(tmp_path / "g.dot") else False
    assert (tmp_path / "g.dot").read_text() == d.source
    d.save(tmp_path / "g.svg")
    assert (tmp_path / "g.svg").read_text().startswith("<?xml")
    d.save(tmp_path / "g.png")
    assert (tmp_path / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match=re.escape(
            "Drawing.save: cannot save a drawing as '.jpg'\n"
            "  hint: use a file name ending in .svg, .png, .pdf or .dot")):
        d.save(tmp_path / "g.jpg")


def test_text_tree_backward_view():
    y = expr()
    y.backward()
    assert to_text(tg.draw(y, view="backward").graph) == (
        "t1 y () data -0.4621\n"
        "└── op2 TanhBackward\n"
        "    └── op1 MulBackward\n"
        "        ├── acc1 AccumulateGrad a () grad -0.7864\n"  # (1 - tanh^2) * b
        "        └── acc2 AccumulateGrad b () grad 0.3932"
    )


def test_draw_options_reach_the_dot():
    d = tg.draw(expr(), show_values=False, rankdir="TB", highlight=["op1"])
    assert "data " not in d.source and "rankdir=TB" in d.source and "tg-highlight" in d.source


def test_loss_curve_plots_the_numbers():
    fig = tg.plot.loss_curve([3.0, tg.tensor(2.0), 1.0])
    (line,) = fig.axes[0].lines
    assert line.get_ydata().tolist() == [3.0, 2.0, 1.0]


def test_decision_boundary_colours_by_prediction():
    x = np.array([[-1.0, 0.0], [1.0, 0.0]])
    fig = tg.plot.decision_boundary(lambda t: t[:, 0], x, np.array([0, 1]), resolution=10)
    ax = fig.axes[0]
    assert ax.get_title() == "decision boundary" and len(ax.collections) >= 2


def test_gradient_flow_bars_are_mean_abs_grad():
    w = tg.tensor([1.0, -2.0], requires_grad=True)
    v = tg.tensor([3.0], requires_grad=True)
    (w * w).sum().backward()
    fig = tg.plot.gradient_flow([("w", w), ("v", v)])
    heights = [p.get_height() for p in fig.axes[0].patches]
    assert heights == [3.0, 0.0]
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["w", "v (no grad)"]
