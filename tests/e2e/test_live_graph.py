"""The live graph in a real browser: `%load_ext tinygrad_edu` draws the notebook's graph
under each cell that changed it, with that cell's new nodes highlighted; the panel
(`tg.live_panel()`) is one interactive view that updates in place and answers clicks.
"""

from __future__ import annotations

import time

import pytest
from driver import write_notebook
from graphs import drawings, wait_for_drawing

pytestmark = pytest.mark.e2e

CELLS = [
    "import tinygrad_edu as tg\n%load_ext tinygrad_edu",
    "a = tg.tensor(2.0, requires_grad=True, name='a')\n"
    "b = tg.tensor(-3.0, requires_grad=True, name='b')\n"
    "c = a * b",
    "d = c + a",
    "print('this cell builds no graph')",
    "d.backward()",
    "panel = tg.live_panel()\npanel",
    "e = d * 2.0",
]
SETUP, FIRST, SECOND, NO_GRAPH, BACKWARD, PANEL, THIRD = range(7)


def _no_drawing_for(area, seconds: float) -> None:
    """Fail if a drawing shows up in `area` within `seconds` (it must stay empty)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = drawings(area)
        assert found == [], "expected no graph here, found:\n" + found[0].describe()
        time.sleep(0.25)


def test_live_graph_grows_cell_by_cell(open_notebook, tmp_path):
    nb = open_notebook(write_notebook(tmp_path / "live.ipynb", CELLS))

    nb.run_cell(SETUP)
    assert nb.errors(SETUP) == ""
    _no_drawing_for(nb.output(SETUP), 0.5)  # no tensors yet: nothing to draw

    nb.run_cell(FIRST)
    first = wait_for_drawing(nb.output(FIRST), ["a", "b", "c", "*"], what="first graph cell")
    assert first.how == "frame"  # trusted HTML: the SVG inline (in an iframe), so it hovers
    assert sorted(first.heads()) == ["*", "a", "b", "c"]
    assert sorted(first.heads("tg-new")) == ["*", "a", "b", "c"]  # all made in this cell
    nb.screenshot_cell(FIRST, "live-first-cell")

    nb.run_cell(SECOND)
    second = wait_for_drawing(nb.output(SECOND), ["a", "c", "d", "+"], what="second graph cell")
    assert sorted(second.heads("tg-new")) == ["+", "d"]  # only what this cell added
    # c and a come from the first cell: dashed named inputs, their history not drawn again
    assert sorted(second.heads("tg-earlier")) == ["a", "c"], second.describe()
    assert not second.has_label("*") and not second.has_label("b")
    assert "new in this cell" in second.labels()  # the legend says what the fill means
    nb.screenshot_cell(SECOND, "live-second-cell")

    nb.run_cell(NO_GRAPH)
    assert nb.output_text(NO_GRAPH).strip() == "this cell builds no graph"
    _no_drawing_for(nb.output(NO_GRAPH), 1.0)

    nb.run_cell(BACKWARD)
    grads = wait_for_drawing(
        nb.output(BACKWARD), ["grad -2.0000", "grad 2.0000"], what="graph after backward"
    )
    assert grads.heads("tg-new") == []  # backward adds gradients, not nodes
    nb.screenshot_cell(BACKWARD, "live-after-backward")

    nb.run_cell(PANEL)
    panel = nb.output(PANEL)
    view = wait_for_drawing(panel, ["a", "b", "c", "d"], what="live panel")
    assert view.how == "inline"  # the widget puts the SVG in the page, so it can be clicked

    nb.run_cell(THIRD)
    _no_drawing_for(nb.output(THIRD), 1.0)  # with the panel open, cells get no own graph
    updated = wait_for_drawing(panel, ["d", "e"], what="panel after a cell")
    assert updated.heads("tg-earlier") == ["d"], updated.describe()  # this cell's graph only
    # the highlight is applied by the widget's JavaScript (CSS class, no new layout)
    assert updated.heads("tg-hl-new") == ["*", "const ()", "e"], updated.describe()
    assert updated.heads("tg-new") == ["*", "const ()", "e"], updated.describe()

    e_node = panel.locator(
        "xpath=.//*[local-name()='g' and contains(concat(' ', @class, ' '), ' node ')]"
        "[.//*[local-name()='text' and normalize-space()='e']]"
    )
    nb.screenshot_cell(PANEL, "live-panel")
    e_node.click()
    details = panel.locator(".tg-gv-details")
    details.wait_for(state="visible", timeout=10_000)
    text = details.inner_text()
    assert text.splitlines()[0].split() == ["e", "(t6,", "output", "tensor)"], text
    assert "value: -8.0000" in text
    clicked = wait_for_drawing(panel, ["e"], what="panel after click")
    assert [n.texts[0] for n in clicked.with_class("tg-selected")] == ["e"]
    nb.screenshot_cell(PANEL, "live-panel-clicked")


# what a learner sees of the panel's picture: the boxes inside the canvas, the smallest text
_PANEL_VIEW = r"""
(area) => {
  const canvas = area.querySelector('.tg-gv-canvas');
  const svg = canvas.querySelector('svg');
  const c = canvas.getBoundingClientRect();
  const k = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  const sizes = [...svg.querySelectorAll('text')].map((t) => parseFloat(getComputedStyle(t).fontSize));
  const boxes = [...svg.querySelectorAll('g.node.tg-node')].map((g) => {
    const r = g.getBoundingClientRect();
    return {
      texts: [...g.querySelectorAll('text')].map((t) => t.textContent.trim()),
      inside: r.top >= c.top - 1 && r.bottom <= c.bottom + 1 && r.left >= c.left - 1
        && r.right <= c.right + 1,
    };
  });
  return {text: Math.min(...sizes) * k, boxes, transform: canvas.querySelector('.tg-gv-stage').style.transform};
}
"""
_SCROLL_TOP = "el => el.closest('.jp-WindowedPanel-outer').scrollTop"


def test_panel_shows_the_whole_graph_and_the_wheel_scrolls_the_page(open_notebook):
    from e2e_paths import NOTEBOOKS

    nb = open_notebook(NOTEBOOKS / "10_train_end_to_end.ipynb")
    nb.page.set_viewport_size({"width": 1280, "height": 800})
    panel_cell = nb.find_cell("panel = tg.live_panel")
    nb.run_through('model.name = "net"')  # the 3-layer MLP and its loss: 40 boxes in full
    panel = nb.output(panel_cell)
    wait_for_drawing(panel, ["loss"], what="lesson 10 panel")
    nb.cell(panel_cell).evaluate("el => el.scrollIntoView({block: 'start'})")
    nb.page.wait_for_timeout(500)
    seen = panel.evaluate(_PANEL_VIEW)
    outside = [b["texts"] for b in seen["boxes"] if not b["inside"]]
    assert outside == [], f"{len(outside)} of {len(seen['boxes'])} boxes outside: {outside}"
    assert seen["text"] >= 9.0, f"panel text {seen['text']:.1f} px"
    assert any(b["texts"][0] == "loss" for b in seen["boxes"])  # the loss is in view
    nb.screenshot("panel-lesson10-whole")

    # five wheel notches over the panel scroll the notebook; the graph stays as it is
    canvas = panel.locator(".tg-gv-canvas")
    box = canvas.bounding_box()
    nb.page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 60)
    before = canvas.evaluate(_SCROLL_TOP)
    for _ in range(5):
        nb.page.mouse.wheel(0, 100)
        nb.page.wait_for_timeout(80)
    nb.page.wait_for_timeout(300)
    assert canvas.evaluate(_SCROLL_TOP) - before >= 300
    assert panel.evaluate(_PANEL_VIEW)["transform"] == seen["transform"]
    # Ctrl + wheel is the learner's choice to zoom: the graph grows, the page stays
    nb.cell(panel_cell).evaluate("el => el.scrollIntoView({block: 'start'})")
    nb.page.wait_for_timeout(300)
    box = canvas.bounding_box()
    nb.page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 60)
    before = canvas.evaluate(_SCROLL_TOP)
    nb.page.keyboard.down("Control")
    nb.page.mouse.wheel(0, -200)
    nb.page.keyboard.up("Control")
    nb.page.wait_for_timeout(300)
    assert canvas.evaluate(_SCROLL_TOP) == before
    assert panel.evaluate(_PANEL_VIEW)["transform"] != seen["transform"]


@pytest.mark.parametrize("lesson", ["01_define_by_run.ipynb", "07_changing_models.ipynb"])
def test_panel_after_run_all_shows_a_graph_with_ops(lesson, open_notebook):
    from e2e_paths import NOTEBOOKS

    nb = open_notebook(NOTEBOOKS / lesson)
    nb.page.set_viewport_size({"width": 1280, "height": 800})
    panel_cell = nb.find_cell("panel = tg.live_panel")
    nb.run_all_code_cells()
    panel = nb.output(panel_cell)
    nb.cell(panel_cell).evaluate("el => el.scrollIntoView({block: 'start'})")
    drawn = wait_for_drawing(panel, [], what=f"{lesson} panel after Run All")
    ops = drawn.with_class("tg-op") + drawn.with_class("tg-summary")
    assert ops, "the panel shows only leaves:\n" + drawn.describe()
    nb.screenshot(f"panel-run-all-{lesson.removesuffix('.ipynb')}")
