"""The lesson notebooks, opened and run by a learner in JupyterLab and in Notebook 7: the
drawings each lesson promises appear on the page."""

from __future__ import annotations

import pytest
from e2e_paths import NOTEBOOKS
from graphs import wait_for_drawing

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("ui", ["lab", "notebook"])
def test_static_vs_dynamic_shows_both_graphs(ui, open_notebook):
    nb = open_notebook(NOTEBOOKS / "03a_static_vs_dynamic.ipynb", ui=ui)
    index = nb.run_through('tg.draw({"define-then-run loss"')
    drawing = wait_for_drawing(
        nb.output(index),
        ["define-then-run loss", "define-by-run loss"],
        what="lesson 3a, both graphs",
    )
    heads = drawing.heads()
    # one picture, two graphs of the same model that share the leaves w and b
    assert heads.count("w (3, 2)") == 1 and heads.count("b (2,)") == 1, drawing.describe()
    for op in ("@", "+", "tanh", "*", "sum", "/"):
        assert heads.count(op) == 2, f"{op!r} once per graph:\n{drawing.describe()}"
    nb.screenshot_cell(index, f"lesson03a-both-graphs-{ui}")


def test_define_by_run_graph_grows_as_cells_run(open_notebook):
    nb = open_notebook(NOTEBOOKS / "01_define_by_run.ipynb")
    leaves = nb.run_through('x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True, name="x")')
    first = wait_for_drawing(nb.output(leaves), ["x (3,)", "w"], what="lesson 1, leaves")
    assert sorted(first.heads()) == ["w", "x (3,)"]
    assert sorted(first.heads("tg-new")) == ["w", "x (3,)"]

    product = nb.run_through("y = x * w\ny")
    grown = wait_for_drawing(
        nb.output(product), ["x (3,)", "w", "*", "y (3,)"], what="lesson 1, y = x * w"
    )
    assert sorted(grown.heads("tg-new")) == ["*", "y (3,)"]  # only the cell's own nodes

    total = nb.run_through("z = y + b")
    final = wait_for_drawing(
        nb.output(total), ["y (3,)", "+", "b", "z (3,)"], what="lesson 1, z = y + b"
    )
    assert sorted(final.heads("tg-new")) == ["+", "b", "z (3,)"]
    # this cell's graph: y from the cell before is a dashed input, its history not redrawn
    assert final.heads("tg-earlier") == ["y (3,)"], final.describe()
    assert len(final.graph_nodes()) == 4, final.describe()
    nb.screenshot_cell(total, "lesson01-live-graph")


def test_rnn_drawings_fit_one_screen_with_the_loss_in_view(open_notebook):
    # lesson 5a's RNN drawings were 1,798-2,383 px tall: the loss was screens below
    nb = open_notebook(NOTEBOOKS / "05a_varying_sizes.ipynb")
    nb.page.set_viewport_size({"width": 1280, "height": 800})
    for needle, loss, shot in [
        ("tg.draw(loss_long", "loss_long", "loss_long"),
        ("loss_twelve = sequence_loss", "loss_twelve", "loss_twelve"),
        ('expand="rnncell.t=5"', "loss_twelve", "t5-opened"),  # was 1,557 px tall
    ]:
        index = nb.run_through(needle)
        wait_for_drawing(nb.output(index), [loss], what=f"lesson 5a, {loss}")
        frame = nb.output(index).locator("iframe.tg-frame").first
        frame.evaluate("el => el.scrollIntoView({block: 'start'})")
        nb.page.wait_for_timeout(500)
        box = frame.bounding_box()
        assert box["height"] <= 655, f"{loss}: drawing {box['height']:.0f} px tall"
        inner = nb.output(index).frame_locator("iframe.tg-frame").first
        node = inner.locator("g.node", has=inner.locator(f"text:text-is('{loss}')")).first
        r = node.bounding_box()  # page coordinates: inside the window, not below it
        assert r is not None and r["y"] + r["height"] <= 800, (loss, r)
        nb.screenshot(f"lesson05a-{shot}")
