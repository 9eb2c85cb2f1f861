"""The live graph in a real kernel: one notebook run through nbclient, many assertions.

The notebook is built here with nbformat; each cell's outputs are then checked: graph
cells get exactly one SVG + text/plain summary naming that cell's new nodes, a cell that
changes nothing and a failing cell get no graph, a broken drawing shows a short note
with a hint, and `%unload_ext` stops it all.
"""

from __future__ import annotations

import re

import nbformat
import pytest
from nbclient import NotebookClient

CELLS = [
    # 0: load; nothing to draw yet
    "import tinygrad_edu as tg\n%load_ext tinygrad_edu",
    # 1: a first graph
    'x = tg.tensor([1.0, 2.0], requires_grad=True, name="x")\n'
    'w = tg.tensor([3.0, 4.0], requires_grad=True, name="w")\n'
    "y = (x * w).sum()",
    # 2: no graph change (and retain_outputs is on while loaded)
    "from tinygrad_edu.core.function import _config\n_config['retain_outputs']",
    # 3: fails after building a node
    'z = y * 2\nraise ValueError("boom")',
    # 4: backward: grads appear
    "y.backward()",
    # 5: loading again is a no-op
    "%load_ext tinygrad_edu",
    # 6: one new op on y from an earlier cell
    "q = (y * 3).tanh()",
    # 7: cell 1 run again: its graph replaces, nothing doubles
    'x = tg.tensor([1.0, 2.0], requires_grad=True, name="x")\n'
    'w = tg.tensor([3.0, 4.0], requires_grad=True, name="w")\n'
    "y = (x * w).sum()",
    # 8: pin one tensor
    'tg.watch("q")',
    # 9: a name that is not defined: said under the graph
    'tg.watch("q", "nothing_here")',
    # 10: a plain computation on tensors that need no grad changes no graph
    "c = tg.tensor([1.0]) + 1",
    # 11: back to auto
    "tg.watch()",
    # 12: the drawing itself breaks: a short note, not a traceback
    "import tinygrad_edu.widgets.pictures as _d\n_orig = _d.live_bundle\n"
    "_d.live_bundle = lambda *a, **k: 1 / 0\nr = y * 5",
    # 13: restore; scope all
    "_d.live_bundle = _orig\n%tg scope all",
    # 14: all graph tensors, this cell's nodes new
    "v = y * 2",
    # 15: off: nothing drawn
    "%tg off\nk = y * 3",
    # 16: on again, back to cell scope, with a wrong word
    "%tg on\n%tg scope cell\n%tg sideways",
    # 17: help
    "%tg --help",
    # 18: open the panel (one per kernel)
    "p = tg.live_panel()\np is tg.live_panel(), repr(p)",
    # 19: panel mode: the panel updates in place, the cell gets no graph of its own
    "u = (y * 7).relu()",
    # 20: what the panel shows now
    "print(repr(p)); print(p.highlight['new']); sorted(p._repr_mimebundle_()[0])",
    # 21: a cell that makes only a leaf leaves the panel's graph with ops as it is
    "lone = tg.tensor(1.0, requires_grad=True, name='lone')\nprint(repr(p))",
    # 22: unload
    "%unload_ext tinygrad_edu\n_config['retain_outputs']",
    # 23: nothing drawn after unload
    "s = y * 6",
]


@pytest.fixture(scope="module")
def cells() -> list:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in CELLS]
    NotebookClient(nb, timeout=60, kernel_name="python3", allow_errors=True).execute()
    return nb.cells


def graph_outputs(cell) -> list:
    return [
        o
        for o in cell.outputs
        if o.get("output_type") == "display_data" and "text/html" in o.get("data", {})
    ]


def the_graph(cell) -> tuple[str, str]:
    outs = graph_outputs(cell)
    assert len(outs) == 1, cell.outputs
    assert sorted(outs[0]["data"]) == ["text/html", "text/plain"]  # one copy of the SVG
    return svg_of(outs[0]["data"]["text/html"]), outs[0]["data"]["text/plain"]


def svg_of(html: str) -> str:
    """The SVG inside the live graph's HTML (`inline_html` escaped `&`, then `'`)."""
    doc = re.search(r"srcdoc='([^']*)'", html)[1]
    return doc[doc.index("<svg") :].replace("&#39;", "'").replace("&amp;", "&")


def svg_texts(svg: str) -> list[str]:
    return [
        re.sub(r"&#160;|&nbsp;", " ", t).strip()
        for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    ]


def printed(cell) -> str:
    """What a cell printed: a busy kernel may send one print() as two stream messages (the
    text, then its newline), so the outputs are joined rather than the first one read."""
    return "".join(o["text"] for o in cell.outputs if o.get("name") == "stdout")


def test_load_cell_draws_nothing(cells):
    assert cells[0].outputs == []


def test_cell_output_holds_its_graph_with_new_nodes_named(cells):
    svg, text = the_graph(cells[1])
    labels = svg_texts(svg)
    assert {"x (2,)", "w (2,)", "y", "data [3, 8]", "data 11.0000", "*", "sum"} <= set(labels)
    assert not any(t.startswith("grad") for t in labels)  # no backward yet
    assert text == (
        "live graph: forward graph, 6 nodes (4 tensors, 2 ops)\n"
        "new in this cell: x, w, Mul, t3, Sum, y"
    )


def test_no_change_cell_and_failing_cell_draw_nothing(cells):
    assert [o["data"]["text/plain"] for o in cells[2].outputs] == ["True"]
    assert [o["output_type"] for o in cells[3].outputs] == ["error"]
    assert cells[3].outputs[0]["evalue"] == "boom"


def test_backward_redraws_with_grads(cells):
    svg, text = the_graph(cells[4])
    labels = svg_texts(svg)
    # y = sum(x * w): dy/dx = w = [3, 4], dy/dw = x = [1, 2]
    assert labels[labels.index("x (2,)") + 2] == "grad [3, 4]"
    assert labels[labels.index("w (2,)") + 2] == "grad [1, 2]"
    assert "z" not in labels  # cell scope: the failing cell's z is not what backward touched
    assert "new in this cell: none" in text


def test_second_load_does_not_double_register(cells):
    assert graph_outputs(cells[5]) == []


def test_earlier_tensors_are_dashed_named_leaves(cells):
    svg, text = the_graph(cells[6])
    labels = svg_texts(svg)
    assert text.split("new in this cell: ", 1)[1] == "const, Mul, t6, Tanh, q"
    assert "y" in labels and "x (2,)" not in labels  # y's own history stays in cell 1
    assert "from an earlier cell" in labels  # the legend explains the dashed box
    y_box = re.search(r'<g id="node-t\d+" class="node[^"]*tg-earlier[^>]*>.*?</g>', svg, re.S)
    assert y_box is not None and "stroke-dasharray" in y_box.group(0)


def test_rerunning_a_cell_replaces_its_graph(cells):
    svg, text = the_graph(cells[7])
    assert svg_texts(svg).count("x (2,)") == 1 and svg_texts(svg).count("w (2,)") == 1
    assert text == the_graph(cells[1])[1]  # the same picture as the first run, not two x


def test_watch_pins_and_unpins(cells):
    repr_out = [o for o in cells[8].outputs if o["output_type"] == "execute_result"]
    assert repr_out[0]["data"]["text/plain"] == "LiveGraph(watching 1: q)"
    svg, _ = the_graph(cells[8])
    labels = svg_texts(svg)
    assert "z" not in labels and "q" in labels  # z (cell 3) is not reachable from q
    _, text = the_graph(cells[9])
    assert text.splitlines()[-1] == "not found: nothing_here"
    assert graph_outputs(cells[10]) == []
    svg, _ = the_graph(cells[11])
    assert "z" in svg_texts(svg)


def test_broken_drawing_shows_a_short_note(cells):
    notes = [o["data"]["text/plain"] for o in cells[12].outputs]
    assert notes == [
        "live graph: could not draw this cell's graph (ZeroDivisionError: division by zero)\n"
        "  hint: the cell itself ran fine; tg.watch(loss) draws fewer tensors, and "
        "%unload_ext tinygrad_edu turns the live graph off"
    ]


def test_scope_all_draws_every_graph_tensor(cells):
    assert printed(cells[13]) == (
        "live graph: on, scope all, watching all graph tensors in the notebook\n"
    )
    svg, text = the_graph(cells[14])
    assert {"z", "q", "r", "y", "v"} <= set(svg_texts(svg))
    assert text.split("new in this cell: ", 1)[1] == "const, Mul, v"


def test_off_on_and_a_wrong_word(cells):
    assert graph_outputs(cells[15]) == []
    assert printed(cells[15]).startswith("live graph: off, scope all")
    status, error = cells[16].outputs
    assert status["text"].splitlines()[-1].startswith("live graph: on, scope cell")
    assert error["text"] == (
        "UsageError: %tg: unknown arguments 'sideways'\n"
        "  hint: use %tg on, %tg off, %tg scope cell, %tg scope all, %tg keep recent,"
        " %tg keep last, %tg keep all or %tg reset (%tg --help)\n"
    )
    help_text = printed(cells[17])
    assert "%tg scope cell" in help_text and "%tg reset" in help_text


def test_panel_is_one_widget_updated_in_place(cells):
    first = [o["data"]["text/plain"] for o in cells[18].outputs]
    assert first == ["(True, 'GraphView(forward graph, 29 nodes)')"]
    assert graph_outputs(cells[19]) == [] and cells[19].outputs == []
    printed, bundle = cells[20].outputs
    assert printed["text"].splitlines() == [
        "GraphView(forward graph, 6 nodes)",  # cell scope: y from earlier, then this cell
        "['t5', 'op3', 't6', 'op4', 't7']",  # const 7, Mul, y * 7, ReLU, u
    ]
    assert bundle["data"]["text/plain"] == (
        "['application/vnd.jupyter.widget-view+json', 'image/svg+xml', 'text/plain']"
    )


def test_a_lone_leaf_does_not_replace_the_panels_graph(cells):
    assert printed(cells[21]) == "GraphView(forward graph, 6 nodes)\n"


def test_unload_stops_and_restores(cells):
    assert [o["data"]["text/plain"] for o in cells[22].outputs] == ["False"]
    assert cells[23].outputs == []
