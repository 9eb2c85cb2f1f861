"""GraphView's ES module in headless Chromium, on a plain page with a stand-in model.

No JupyterLab here (tests/e2e does that): the page imports the very `_esm` string the
widget ships, renders it with a small Backbone-like model holding the widget's traits,
and the test clicks, drags and wheels like a learner, then reads back what the module
sent (`selected`, toggles) and what it did to the SVG (classes, transform).
Skipped without /usr/bin/chromium or playwright (CI installs both).
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from pathlib import Path

import pytest

import tinygrad_edu as tg
from tinygrad_edu.graph import watermark
from tinygrad_edu.widgets import GraphView

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

PAGE = """<!doctype html><html><head><style>%(css)s</style></head><body>
<div id="root" style="width: 700px"></div>
<script type="module">
class Model {
  constructor(state) { this.state = state; this.handlers = {}; this.saved = 0; }
  get(k) { return this.state[k]; }
  set(k, v) { this.state[k] = v; for (const f of this.handlers["change:" + k] || []) f(); }
  on(name, f) { (this.handlers[name] ||= []).push(f); }
  off(name, f) { this.handlers[name] = (this.handlers[name] || []).filter((g) => g !== f); }
  save_changes() { this.saved += 1; }
}
const esm = %(esm)s;
const url = URL.createObjectURL(new Blob([esm], { type: "text/javascript" }));
const mod = await import(url);
window.model = new Model(%(state)s);
mod.default.render({ model: window.model, el: document.getElementById("root") });
window.ready = true;
</script></body></html>"""


@pytest.fixture(scope="module")
def page(request):
    if not CHROMIUM.is_file():
        pytest.skip("no /usr/bin/chromium (apt-get install -y chromium)")
    pw = request.getfixturevalue("playwright_api")  # tests/conftest.py: one per process
    profile = tempfile.mkdtemp(prefix="tg-gv-")
    browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=FLAGS)
    try:
        p = browser.new_page(viewport={"width": 900, "height": 700})
        p.set_default_timeout(10_000)
        yield p
    finally:
        browser.close()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def view():
    x = tg.tensor([1.0, 2.0], requires_grad=True, name="x")
    w = tg.tensor([3.0, 4.0], requires_grad=True, name="w")
    mark = watermark()
    y = (x * w).sum()
    y.name = "y"
    return GraphView(y, since=mark)


def load(page, view) -> None:
    traits = [
        "svg",
        "highlight",
        "selected",
        "details",
        "summary",
        "view",
        "show_values",
        "show_grads",
        "collapse",
        "fold_to_fit",
    ]
    state = {k: getattr(view, k) for k in traits}
    html = PAGE % {"css": view._css, "esm": json.dumps(view._esm), "state": json.dumps(state)}
    page.set_content(html)
    page.wait_for_function("window.ready === true")


def node(page, graph_id: str):
    return page.locator(
        f"xpath=//*[local-name()='g' and contains(@class, 'node')]"
        f"[*[local-name()='title' and text()='{graph_id}']]"
    )


def transform(page) -> str:
    return page.eval_on_selector(".tg-gv-stage", "e => e.style.transform")


def test_highlight_classes_follow_the_trait(page, view):
    load(page, view)
    new = page.eval_on_selector_all("g.node.tg-hl-new > title", "ts => ts.map(t => t.textContent)")
    assert new == view.highlight["new"] == ["op1", "t3", "op2", "t4"]
    page.evaluate("model.set('highlight', {current: ['op2']})")
    assert page.eval_on_selector_all(
        "g.node.tg-hl-current > title", "ts => ts.map(t => t.textContent)"
    ) == ["op2"]
    assert page.eval_on_selector_all("g.tg-hl-new", "gs => gs.length") == 0


def test_click_selects_and_python_details_show(page, view):
    load(page, view)
    node(page, "t1").click()
    assert page.evaluate("model.get('selected')") == "t1"
    view.selected = "t1"  # what the kernel does on the synced trait
    page.evaluate(f"model.set('details', {json.dumps(view.details)})")
    text = page.inner_text(".tg-gv-details")
    assert text.splitlines()[0] == "x  (t1, leaf tensor)"
    assert page.eval_on_selector_all(
        "g.node.tg-selected > title", "ts => ts.map(t => t.textContent)"
    ) == ["t1"]
    box = page.locator(".tg-gv-canvas").bounding_box()
    page.mouse.click(box["x"] + box["width"] - 3, box["y"] + 3)  # empty space clears
    assert page.evaluate("model.get('selected')") == ""


def scale_of(text: str) -> float:
    return float(re.search(r"scale\(([\d.]+)\)", text).group(1))


def test_wheel_scrolls_the_page_ctrl_wheel_zooms_drag_pans_reset_fits(page, view):
    load(page, view)
    page.evaluate("document.body.style.height = '3000px'")  # a page long enough to scroll
    fitted = transform(page)
    assert re.fullmatch(r"translate\(0px, 0px\) scale\([\d.]+\)", fitted), fitted
    box = page.locator(".tg-gv-canvas").bounding_box()
    page.mouse.move(box["x"] + 100, box["y"] + 40)
    page.mouse.wheel(0, 300)  # a plain wheel is the page's: it scrolls, the graph stays
    page.wait_for_function("window.scrollY > 0")
    assert transform(page) == fitted
    assert page.eval_on_selector(".tg-gv-hint", "e => e.classList.contains('tg-gv-hint-on')")
    page.evaluate("window.scrollTo(0, 0)")
    page.keyboard.down("Control")  # Ctrl + wheel zooms, and the page stays where it was
    page.mouse.wheel(0, -300)
    page.keyboard.up("Control")
    zoomed = transform(page)
    assert scale_of(zoomed) > scale_of(fitted)
    assert page.evaluate("window.scrollY") == 0
    page.click(".tg-gv-zoom-out")
    assert scale_of(transform(page)) < scale_of(zoomed)
    zoomed = transform(page)
    page.evaluate("model.set('selected', 'op1')")
    page.mouse.move(box["x"] + 100, box["y"] + 40)
    page.mouse.down()
    page.mouse.move(box["x"] + 160, box["y"] + 70, steps=4)
    page.mouse.up()
    assert page.evaluate("model.get('selected')") == "op1"  # a drag is not a click
    assert transform(page) != zoomed
    page.click(".tg-gv-reset")
    assert transform(page) == fitted


def test_a_graph_too_tall_to_read_whole_says_what_is_below(page):
    # a chain of 30 ops (with no repeated block for the summariser to fold), every box
    # drawn (fold to fit off): 9 px text cannot hold it all
    x = tg.tensor([1.0, 2.0], requires_grad=True, name="x")
    y = x
    ops = ["tanh", "neg", "sin", "relu", "cos", "abs"]
    for i in range(30):
        y = getattr(y, ops[(i * i + i // 3) % 6])()
    tall = GraphView(y)
    tall.fold_to_fit = False
    load(page, tall)
    more = page.locator(".tg-gv-more")
    assert more.is_visible()
    below = int(re.match(r"\u25bc (\d+) more box(es)? below", more.inner_text())[1])
    assert 0 < below < 62
    smallest = page.evaluate(
        "() => { const s = document.querySelector('.tg-gv-stage svg');"
        " const k = s.getBoundingClientRect().width / s.viewBox.baseVal.width;"
        " return Math.min(...[...s.querySelectorAll('text')].map("
        " t => parseFloat(getComputedStyle(t).fontSize))) * k; }"
    )
    assert smallest >= 9.0
    more.click()  # the sign takes the learner to the bottom, where the output is
    assert page.locator(".tg-gv-more").inner_text().startswith("\u25b2")
    bottom = page.evaluate(
        "() => { const c = document.querySelector('.tg-gv-canvas').getBoundingClientRect();"
        " const nodes = [...document.querySelectorAll('g.node')];"
        " const last = nodes[nodes.length - 1].getBoundingClientRect();"
        " return [last.bottom, c.bottom]; }"
    )
    assert bottom[0] <= bottom[1]
    tall.fold_to_fit = True  # folded, the whole chain fits: no sign
    load(page, tall)
    assert not page.locator(".tg-gv-more").is_visible()


def test_controls_set_traits(page, view):
    load(page, view)
    page.select_option(".tg-gv-view", "backward")
    page.get_by_label("grads").uncheck()
    page.get_by_label("collapse modules").check()
    state = page.evaluate("[model.get('view'), model.get('show_grads'), model.get('collapse')]")
    assert state == ["backward", False, True]
    page.evaluate("model.set('show_grads', true)")  # Python side changes reach the controls
    assert page.get_by_label("grads").is_checked()
