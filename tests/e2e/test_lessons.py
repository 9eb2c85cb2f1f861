"""The lesson notebooks, opened and run by a learner in JupyterLab and in Notebook 7: the
drawings each lesson promises appear on the page."""

from __future__ import annotations

import pytest
from conftest import NOTEBOOKS
from graphs import wait_for_drawing

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("ui", ["lab", "notebook"])
def test_static_vs_dynamic_shows_both_graphs(ui, open_notebook):
    nb = open_notebook(NOTEBOOKS / "03_static_vs_dynamic.ipynb", ui=ui)
    index = nb.run_through('tg.draw({"define-then-run loss"')
    drawing = wait_for_drawing(nb.output(index), ["define-then-run loss", "define-by-run loss"],
                               what="lesson 3, both graphs")
    heads = drawing.heads()
    # one picture, two graphs of the same model that share the leaves w and b
    assert heads.count("w (3, 2)") == 1 and heads.count("b (2,)") == 1, drawing.describe()
    for op in ("@", "+", "tanh", "*", "sum", "/"):
        assert heads.count(op) == 2, f"{op!r} once per graph:\n{drawing.describe()}"
    nb.screenshot_cell(index, f"lesson03-both-graphs-{ui}")
