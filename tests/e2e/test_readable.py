"""Every lesson's drawings, as a learner sees them at 1280x800: they fit their output area,
their text stays legible, a node shows its details on hover, and a saved notebook reopened
still shows its graphs. Screenshots of each lesson's widest drawing go to build/e2e/gallery/.
"""

from __future__ import annotations

import re

import pytest
from e2e_paths import NOTEBOOKS, SHOTS
from graphs import wait_for_drawing

pytestmark = pytest.mark.e2e

GALLERY = SHOTS / "gallery"
MIN_TEXT_PX = 8.0
LESSONS = sorted(p.name for p in NOTEBOOKS.glob("[0-9][0-9]*_*.ipynb"))

# per output: does it scroll sideways, and how big is the smallest text of each drawing in it
_MEASURE = r"""
(area) => [...area.querySelectorAll('.jp-OutputArea-output')].map((out) => {
  const drawings = [];
  const measure = (svg, box) => {
    const vb = svg.viewBox && svg.viewBox.baseVal;
    if (!vb || !vb.width) return;
    const scale = box.width / vb.width;
    // computed, not the attribute: render.svg.compact sets the common size on the graph
    const sizes = [...svg.querySelectorAll('text')].map((t) => parseFloat(
      t.ownerDocument.defaultView.getComputedStyle(t).fontSize));
    drawings.push({width: box.width, text: Math.min(...sizes) * scale});
  };
  for (const frame of out.querySelectorAll('iframe.tg-frame')) {
    const svg = frame.contentDocument && frame.contentDocument.querySelector('svg');
    if (svg) measure(svg, svg.getBoundingClientRect());
  }
  for (const svg of out.querySelectorAll('svg')) {
    if (svg.querySelector('g.graph')) measure(svg, svg.getBoundingClientRect());
  }
  return {scroll: out.scrollWidth, client: out.clientWidth, drawings};
})
"""


def _check_cell(nb, index: int) -> list[dict]:
    """Fail if cell `index`'s output scrolls sideways or shows text under MIN_TEXT_PX."""
    outs = nb.output(index).evaluate(_MEASURE)
    for out in outs:
        assert out["scroll"] <= out["client"], (
            f"{nb.name}: cell {index} output scrolls sideways ({out['scroll']} px in a "
            f"{out['client']} px box)"
        )
        for d in out["drawings"]:
            assert d["text"] >= MIN_TEXT_PX, (
                f"{nb.name}: cell {index} drawing shown {d['width']:.0f} px wide has "
                f"{d['text']:.1f} px text"
            )
    return [d for out in outs for d in out["drawings"]]


@pytest.mark.slow
@pytest.mark.parametrize("lesson", LESSONS)
def test_every_drawing_fits_and_reads(lesson, open_notebook):
    nb = open_notebook(NOTEBOOKS / lesson)
    nb.page.set_viewport_size({"width": 1280, "height": 800})
    widest, widest_cell, drawn = 0.0, None, 0
    for index in nb.code_cell_indices():
        nb.run_cell(index)
        for d in _check_cell(nb, index):
            drawn += 1
            if d["width"] > widest:
                widest, widest_cell = d["width"], index
    if widest_cell is not None:  # what the learner sees of it: the window, not the element
        GALLERY.mkdir(parents=True, exist_ok=True)
        nb.cell(widest_cell).evaluate("el => el.scrollIntoView({block: 'start'})")
        nb.page.wait_for_timeout(700)  # frames paint after their document is ready
        nb.screenshot(f"gallery/{lesson.removesuffix('.ipynb')}")
    print(f"{lesson}: {drawn} drawings, widest {widest:.0f} px")


def _frame_node_title(nb, index: int, label: str) -> str:
    """Hover the node labelled `label` in cell `index`'s drawing; the tooltip text it shows."""
    frame = nb.output(index).frame_locator("iframe.tg-frame").first
    node = frame.locator("g.node", has=frame.locator(f"text:text-is('{label}')")).first
    node.scroll_into_view_if_needed()
    node.hover()
    # what the browser shows as the tooltip: the title of the link under the pointer
    return node.evaluate(
        "g => { const r = g.getBoundingClientRect();"
        " const e = g.ownerDocument.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);"
        " const a = e && e.closest('a'); return a ? a.getAttribute('xlink:title') : ''; }"
    )


@pytest.mark.parametrize("ui", ["lab", "notebook"])
def test_hover_shows_details_and_saved_notebook_shows_graphs(ui, open_notebook):
    nb = open_notebook(NOTEBOOKS / "01_define_by_run.ipynb", ui=ui)
    nb.page.set_viewport_size({"width": 1280, "height": 800})
    index = nb.run_through("z = y + b")
    wait_for_drawing(nb.output(index), ["y (3,)", "+", "b", "z (3,)"], what="lesson 1, z")
    title = _frame_node_title(nb, index, "b").replace("\xa0", " ")
    assert re.fullmatch(r"b  \(t\d+, leaf tensor\)", title.splitlines()[0]), title
    assert title.splitlines()[1] == "shape: () float64", title
    assert re.search(r"^built at|^value: 1\.0000$", title, re.M), title
    nb.screenshot_cell(index, f"hover-details-{ui}")

    nb.page.keyboard.press("Control+s")
    nb.page.wait_for_timeout(1500)
    nb.page.reload(wait_until="domcontentloaded")
    nb.page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=60_000)
    again = wait_for_drawing(
        nb.output(index), ["y (3,)", "+", "b", "z (3,)"], what="saved and reopened"
    )
    assert again.rendered
    nb.screenshot(f"reopened-{ui}")  # the page: cells above may still shift as they paint


def test_saved_stepper_reopens_with_its_picture(open_notebook):
    nb = open_notebook(NOTEBOOKS / "02_backward.ipynb")
    index = nb.run_through("four_clicks.state.advance()")
    wait_for_drawing(nb.output(index), ["PowBackward"], what="lesson 2, the stepper")
    nb.page.keyboard.press("Control+s")
    nb.page.wait_for_timeout(1500)
    nb.page.reload(wait_until="domcontentloaded")
    nb.page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=60_000)
    nb.wait_kernel_idle()
    nb.cell(index).scroll_into_view_if_needed()
    again = wait_for_drawing(nb.output(index), ["PowBackward"], what="stepper reopened")
    assert again.rendered
    assert "Error displaying widget" not in nb.output_text(index)
    nb.screenshot("reopened-stepper")
