"""tg.draw / Drawing: reprs, mimebundle, save by suffix; text tree; matplotlib plots."""

import re

import matplotlib
import numpy as np
import pytest
from helpers import named_expression, unrolled_rnn

import tinygrad_edu as tg
from tinygrad_edu.render import drawing as svg_fit
from tinygrad_edu.render import svg as svg_mod
from tinygrad_edu.render.dot import node_details as render_details
from tinygrad_edu.render.dot import to_dot
from tinygrad_edu.render.text import to_text

matplotlib.use("Agg")
needs_dot = pytest.mark.skipif(svg_mod.find_dot() is None, reason="no Graphviz dot")


def test_repr_is_deterministic_and_addressless():
    d = tg.draw(named_expression())
    assert repr(d) == "<Drawing: forward graph, 6 nodes (4 tensors, 2 ops)>"
    assert repr(tg.draw(named_expression(), view="backward")) == (
        "<Drawing: backward graph, 5 nodes (1 tensor, 2 ops, 2 AccumulateGrad)>"
    )


@needs_dot
def test_mimebundle_has_svg_html_and_text():
    d = tg.draw(named_expression())
    bundle = d._repr_mimebundle_()
    assert sorted(bundle) == ["image/svg+xml", "text/html", "text/plain"]
    assert ">data -0.4621</text>" in bundle["image/svg+xml"]
    assert d.svg() is d.svg()  # laid out once
    html = bundle["text/html"]
    # the same SVG inline in a srcdoc iframe: its entities escaped once, quotes kept
    assert ">data -0.4621</text>" in html and 'class="node tg-node' in html
    assert "&amp;#10;" in html  # the tooltips' line breaks: an entity inside srcdoc
    assert "<?xml" not in html and "<!--" not in html
    # untrusted front-ends drop the iframe and the style: the note is what is left
    assert html.endswith(
        '<pre class="tg-untrusted">&lt;Drawing: forward graph, 6 nodes '
        "(4 tensors, 2 ops)&gt;\n(trust the notebook to see the drawing: "
        "File &gt; Trust Notebook)</pre></div>"
    )


def chain(n):
    z = tg.tensor(1.0, requires_grad=True, name="z")
    for _ in range(n):
        z = z * 0.5 + 0.25
    return z


@needs_dot
def test_chains_draw_top_to_bottom_and_fit_the_output_area():
    d = tg.draw(chain(3))
    assert "rankdir=TB" in d.source
    svg = d.svg()
    assert svg_fit.natural_width_px(svg) < svg_fit.AREA_PX  # narrow: kept at its own size
    assert 'style="max-width:100%;height:auto"' in svg


@needs_dot
def test_a_wide_drawing_is_declared_at_most_the_output_area_with_legible_text():
    leaves = [tg.tensor(float(i), requires_grad=True, name=f"leaf_{i}") for i in range(14)]
    total = leaves[0]
    for leaf in leaves[1:]:
        total = total + leaf  # every leaf on one rank: wide in any orientation
    d = tg.draw(total, max_nodes=None)
    svg = d.svg()
    m = re.search(r'<svg style="[^"]*" width="([\d.]+)pt"', svg)
    assert m and float(m.group(1)) * 4 / 3 <= svg_fit.AREA_PX + 0.01
    assert svg_fit.smallest_text_px(svg) >= svg_fit.MIN_TEXT_PX


def test_fit_shrinks_only_what_is_too_wide():
    wide = '<svg width="900pt" height="90pt" viewBox="0 0 900 90"><text font-size="11.00">'
    fitted = svg_fit.fit(wide)
    assert 'width="624.75pt" height="62.48pt"' in fitted  # 833 px, height in proportion
    assert svg_fit.fit(fitted) == fitted
    narrow = '<svg width="90pt" height="90pt" viewBox="0 0 90 90"><text font-size="11.00">'
    assert svg_fit.fit(narrow) == narrow.replace(
        "<svg ", '<svg style="max-width:100%;height:auto" '
    )
    assert svg_fit.smallest_text_px(wide) == pytest.approx(
        11 * 4 / 3 * 833 / 1200
    )  # 11 pt text, shrunk


@needs_dot
def test_save_by_suffix(tmp_path):
    d = tg.draw(named_expression())
    assert (tmp_path / "g.dot").read_text() if d.save(tmp_path / "g.dot") else False
    assert (tmp_path / "g.dot").read_text() == d.source
    d.save(tmp_path / "g.svg")
    assert (tmp_path / "g.svg").read_text().startswith("<?xml")
    d.save(tmp_path / "g.png")
    assert (tmp_path / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(
        ValueError,
        match=re.escape(
            "Drawing.save: cannot save a drawing as '.jpg'\n"
            "  hint: use a file name ending in .svg, .png, .pdf or .dot"
        ),
    ):
        d.save(tmp_path / "g.jpg")


def test_text_tree_backward_view():
    y = named_expression()
    y.backward()
    assert to_text(tg.draw(y, view="backward").graph) == (
        "t1 y () data -0.4621\n"
        "└── op2 TanhBackward\n"
        "    └── op1 MulBackward\n"
        "        ├── acc1 AccumulateGrad a () grad -0.7864\n"  # (1 - tanh^2) * b
        "        └── acc2 AccumulateGrad b () grad 0.3932"
    )


def test_draw_options_reach_the_dot():
    d = tg.draw(named_expression(), show_values=False, rankdir="TB", highlight=["op1"])
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


def test_time_steps_are_stacked_one_below_the_other():
    # the graph as built (`.source` would settle the layout first, which folds more here)
    graph = tg.draw(unrolled_rnn(12), expand="rnncell.t=5").graph
    source = to_dot(graph)
    assert "newrank=true" in source
    fold = next(n for n in graph.nodes if n.name == "rnncell.t=1 ... t=4")
    # the fold hangs below step 0's last node; step 5's first row below the fold
    last_of_t0 = [n.id for n in graph.nodes if n.module == "rnncell.t=0"][-1]
    assert f"  {last_of_t0} -> {fold.id} [style=invis]" in source
    step5 = {n.id for n in graph.nodes if n.module == "rnncell.t=5"}
    fed = {e.dst for e in graph.edges if e.src in step5}
    firsts = sorted(step5 - fed)  # the transposes and the slice x[5]
    assert len(firsts) == 3
    assert all(f"  {fold.id} -> {i} [style=invis]" in source for i in firsts)
    assert "style=invis" not in tg.draw(chain(3)).source  # no loop over a module: no help


@needs_dot
def test_a_long_unroll_fits_the_output_area_with_legible_text():
    for options in ({}, {"expand": "rnncell.t=5"}):
        svg = tg.draw(unrolled_rnn(12), show_values=False, **options).svg()
        assert svg_fit.smallest_text_px(svg) >= svg_fit.MIN_TEXT_PX, options


def test_draw_names_tensors_by_the_callers_variables():
    # nothing passes name=: the boxes take the names the code bound them to (issue 26)
    a = tg.tensor(2.0, requires_grad=True)
    b = tg.tensor(-3.0, requires_grad=True)
    prod = a * b
    loss = prod + a
    lines = tg.draw(loss).source
    for name in ("a", "b", "prod", "loss"):
        assert f'label="{{{name}|data' in lines, (name, lines)
    # a name given with name= or a dict key still wins
    assert 'label="{total|data' in tg.draw({"total": loss}).source
    # names=False-like: an explicit mapping replaces the caller's variables
    assert 'label="{loss|' not in tg.draw(loss, names={}).source


def test_a_freed_intermediate_says_its_value_was_not_kept():
    x = tg.tensor(1.5, requires_grad=True, name="x")
    out = ((x * 2.0) + 1.0).tanh()  # x * 2 and + 1 are freed: no variable holds them
    d = tg.draw(out)
    labels = d.source
    assert labels.count("value not kept") == 2, labels
    assert 'label="{out|data 0.9993}"' in labels
    node = next(n for n in d.graph.nodes if n.role == "intermediate")
    assert "value: not kept (no variable holds this intermediate" in render_details(node)


def _shown_height_and_text(svg: str) -> tuple[float, float]:
    """Height and smallest text in px as a notebook shows the SVG (833 px wide at most)."""
    w, h = (
        float(v) * 4 / 3 for v in re.search(r'width="([\d.]+)pt" height="([\d.]+)pt"', svg).groups()
    )
    view_w = float(re.search(r'viewBox="[\d.\-]+ [\d.\-]+ ([\d.]+)', svg).group(1))
    shown = min(1.0, 833 / w)
    text = min(float(f) for f in re.findall(r'font-size="([\d.]+)"', svg))
    return h * shown, text * w * shown / view_w


def _rnn_loss(steps: int):
    np.random.seed(0)
    cell = tg.nn.RNNCell(1, 4)
    w_out = tg.tensor(np.random.randn(4), requires_grad=True, name="w_out")
    h = None
    for t in range(steps):
        h = cell(tg.tensor([[0.1 * t]]), h)
    return (h @ w_out - 1.0) ** 2


@pytest.mark.parametrize("steps", [2, 3, 12])
def test_an_rnn_drawing_fits_one_screen_with_the_loss(steps):
    # lesson 05a's drawings were 1,798-2,383 px tall, the loss below the screen's edge
    loss = _rnn_loss(steps)
    d = tg.draw(loss, show_values=False)
    height, text = _shown_height_and_text(d.svg())
    assert height <= svg_fit.SCREEN_PX + 1 and text >= 9.0, (height, text)
    assert 'label="{loss|' in d.source or 'label="{loss}' in d.source
    folded = [n for n in d.graph.nodes if n.kind == "summary"]
    assert folded and all(render_details(n).splitlines()[-1] for n in folded)


@needs_dot
def test_an_opened_step_fits_one_screen_whole_between_folds_of_its_neighbours():
    # lesson 05a's `tg.draw(loss_twelve, show_values=False, expand="rnncell.t=5")` was
    # 1,557 px tall: steps 1-4 and 6-10 folded, but t=0 and t=11 open, t=5 chain-folded
    np.random.seed(0)
    cell = tg.nn.RNNCell(1, 4)
    w_out = tg.tensor(np.random.randn(4) * 0.5, requires_grad=True, name="w_out")
    x = tg.tensor(np.linspace(-1, 1, 12).reshape(12, 1), name="x")
    h = None
    for t in range(12):
        h = cell(x[t], h)
    loss = (h @ w_out - 1.0) ** 2
    d = tg.draw(loss, show_values=False, expand="rnncell.t=5")
    height, text = _shown_height_and_text(d.svg())
    assert height <= svg_fit.SCREEN_PX + 1 and text >= 9.0, (height, text)
    assert 'label="{loss}"' in d.source  # the loss is drawn, so in view
    # step 5 whole: every box it has when nothing at all is folded
    full = tg.draw(loss, expand=True, max_nodes=None).graph
    whole = [(n.kind, n.op, n.name) for n in full.nodes if n.module == "rnncell.t=5"]
    assert [(n.kind, n.op, n.name) for n in d.graph.nodes if n.module == "rnncell.t=5"] == whole
    # each fold is one side of it, adjacent steps only, and says how to open a step
    folds = [n for n in d.graph.nodes if n.kind == "summary"]
    assert [(n.name, n.blocks) for n in folds] == [
        ("rnncell.t=0 ... t=4", 5),
        ("rnncell.t=6 ... t=11", 6),
    ]
    assert 'tg.draw(..., expand="rnncell.t=0"), or expand=True' in render_details(folds[0])
    assert 'tg.draw(..., expand="rnncell.t=6"), or expand=True' in render_details(folds[1])
    # the text kept its size: only the rows moved closer together
    roomy = svg_mod.dot_to_svg(svg_fit.to_dot(d.graph, show_values=False))
    fonts = re.compile(r'font-size="([\d.]+)"')
    assert sorted(fonts.findall(d.svg())) == sorted(fonts.findall(roomy))
    assert _shown_height_and_text(svg_fit.fit(roomy, 833, svg_fit.SCREEN_PX))[0] > 700


def test_a_long_chain_folds_to_fit_and_expand_true_draws_every_box():
    x = tg.tensor([1.0, 2.0], requires_grad=True, name="x")
    y = x
    ops = ["tanh", "neg", "sin", "relu", "cos", "abs"]
    for i in range(30):  # no repeated block, so only a chain fold can shorten it
        y = getattr(y, ops[(i * i + i // 3) % 6])()
    d = tg.draw(y)
    height, text = _shown_height_and_text(d.svg())
    assert height <= svg_fit.SCREEN_PX + 1 and text >= 9.0, (height, text)
    (chain,) = [n for n in d.graph.nodes if n.role == "chain"]
    assert "draw every box: tg.draw(..., expand=True)" in render_details(chain)
    full = tg.draw(y, expand=True)
    full.svg()
    assert len(full.graph.nodes) == 61 and not any(n.kind == "summary" for n in full.graph.nodes)
