"""The graph checker itself: it finds labels in a real graphviz SVG shown by JupyterLab, and
it fails on outputs that look like a broken widget (an empty SVG, an empty HTML, text only).

Without these, a live-graph test could pass on a page that shows no graph at all.
"""

from __future__ import annotations

import pytest
from driver import write_notebook
from graphs import wait_for_drawing

pytestmark = pytest.mark.e2e

CELLS = [
    # A graphviz drawing made without tinygrad_edu's graph code: only the checker is under
    # test here. It is laid out by whichever renderer tinygrad_edu finds (Graphviz's dot
    # or the graphviz-pure wheel): the graphviz package's own display needs `dot` on PATH.
    "import graphviz\n"
    "from IPython.display import display, HTML\n"
    "from tinygrad_edu.render.svg import dot_to_svg\n"
    "g = graphviz.Digraph()\n"
    "g.node('t1', 'a')\n"
    "g.node('op1', 'Mul', _attributes={'class': 'tg-new'})\n"
    "g.edge('t1', 'op1')\n"
    "display({'image/svg+xml': dot_to_svg(g.source), 'text/plain': 'g'}, raw=True)",
    "from IPython.display import display, HTML\n"
    'display({\'image/svg+xml\': \'<svg xmlns="http://www.w3.org/2000/svg" width="10" '
    "height=\"10\"><g class=\"graph\"></g></svg>', 'text/plain': 'empty'}, raw=True)",
    "display(HTML(''))",
    "print('a Mul')",
]


def test_checker_reads_svg_and_rejects_broken_outputs(open_notebook, tmp_path):
    nb = open_notebook(write_notebook(tmp_path / "checker.ipynb", CELLS))
    for index in range(len(CELLS)):
        nb.run_cell(index)
    drawing = wait_for_drawing(nb.output(0), ["a", "Mul"])
    assert drawing.how == "img"  # JupyterLab shows image/svg+xml outputs as <img>
    assert [n.id for n in drawing.nodes] == ["t1", "op1"]
    assert [n.id for n in drawing.with_class("tg-new")] == ["op1"]
    assert drawing.edges == 1
    with pytest.raises(
        AssertionError,
        match=r"labels \['a', 'missing'\] after 1 s; found:\n"
        r"img drawing, rendered=True, 2 nodes",
    ):
        wait_for_drawing(nb.output(0), ["a", "missing"], timeout_s=1)
    for broken in (1, 2, 3):
        with pytest.raises(AssertionError, match="no rendered drawing"):
            wait_for_drawing(nb.output(broken), ["a"], timeout_s=1)
