"""The backward stepper in a real browser: its Step / Back / Reset buttons, clicked like a
learner clicks them, move through backward one node at a time and show each node's gradient.

loss = a * b + a with a = 2, b = -3: backward visits AddBackward, MulBackward,
AccumulateGrad(b), AccumulateGrad(a); a gets 1 + b = -2 from two paths, b gets a = 2.
"""

from __future__ import annotations

import re
import time

import pytest
from driver import write_notebook
from graphs import drawings

pytestmark = pytest.mark.e2e

CELLS = [
    "import tinygrad_edu as tg\nfrom tinygrad_edu.widgets.stepper_view import BackwardStepper",
    "a = tg.tensor(2.0, requires_grad=True, name='a')\n"
    "b = tg.tensor(-3.0, requires_grad=True, name='b')\n"
    "loss = a * b + a\n"
    "stepper = BackwardStepper(loss)\n"
    "stepper",
]
STEPPER_CELL = 1


def _text(area) -> str:
    return "\n".join(area.locator("pre").all_inner_texts())


def _wait_text(area, pattern: str, timeout_s: float = 15.0) -> str:
    """Poll the stepper's text until `pattern` (a regex) matches; fail showing the text."""
    deadline = time.monotonic() + timeout_s
    while True:
        text = _text(area)
        if re.search(pattern, text):
            return text
        if time.monotonic() > deadline:
            raise AssertionError(f"stepper text never matched {pattern!r}; it shows:\n{text}")
        time.sleep(0.2)


# Edge labels (the gradients sent so far) by the heads of the two nodes each edge joins;
# graphs.py reads nodes only. The widget's HTML child puts its SVG inline in the page.
_READ_EDGES = r"""
(root) => [...root.querySelectorAll('.widget-html svg g.edge')].map((g) => ({
  ends: ((g.querySelector(':scope > title') || {}).textContent || '').trim().split('->'),
  texts: [...g.querySelectorAll('text')].map((t) => t.textContent.trim()).filter(Boolean),
}))
"""


def _picture(area) -> tuple[list[str], set[tuple[frozenset, str]], str]:
    """(the stepper drawing's tg-current nodes' full labels, its edge labels as
    ({head, head}, text), a description for failures)."""
    found = drawings(area)
    if [(d.how, d.rendered) for d in found] != [("inline", True)]:  # the widget's, live
        return [], set(), "drawings: " + "\n".join(d.describe() for d in found)
    d = found[0]
    # a leaf is named by its first two lines; it gains a "grad ..." line once it has run
    heads = {
        n.id: " | ".join(n.texts[:2] if "tg-accumulate" in n.classes else n.texts[:1])
        for n in d.graph_nodes()
    }
    current = [" | ".join(n.texts) for n in d.with_class("tg-current")]
    edges = {
        (frozenset(heads.get(e, e) for e in edge["ends"]), text)
        for edge in area.evaluate(_READ_EDGES)
        for text in edge["texts"]
    }
    return current, edges, d.describe() + f"\nedge labels: {sorted(map(str, edges))}"


def _wait_picture(
    area, current: str, labels: list[tuple[str, str, str]], timeout_s: float = 15.0
) -> None:
    """Poll until exactly one node is tg-current and it is `current`, and every
    (node, node, gradient) in `labels` is written on the edge between those nodes."""
    want = {(frozenset((a, b)), text) for a, b, text in labels}
    deadline = time.monotonic() + timeout_s
    while True:
        got, edges, seen = _picture(area)
        if got == [current] and want <= edges:
            return
        if time.monotonic() > deadline:
            raise AssertionError(
                f"stepper drawing never showed {current!r} as the one "
                f"current node with edge labels {labels}; it shows:\n{seen}"
            )
        time.sleep(0.25)


ADD, MUL = "AddBackward", "MulBackward"
ACC_A, ACC_B = "AccumulateGrad | a", "AccumulateGrad | b"


def test_step_back_reset_buttons_walk_backward(open_notebook, tmp_path):
    nb = open_notebook(write_notebook(tmp_path / "stepper.ipynb", CELLS))
    for index in range(len(CELLS)):
        nb.run_cell(index)
        assert nb.errors(index) == "", nb.errors(index)
    area = nb.output(STEPPER_CELL)
    step = area.get_by_role("button", name="Step", exact=True)
    back = area.get_by_role("button", name="Back", exact=True)
    reset = area.get_by_role("button", name="Reset", exact=True)
    step.wait_for(timeout=20_000)  # the widget view rendered (not just its text/plain)
    _wait_text(area, r"BackwardStepper\(before step 0; steps 0 to 3\)\n\(no node has run yet\)")

    step.click()
    text = _wait_text(area, r"at step 0; steps 0 to 3\)\nstep 0: AddBackward")
    assert "grad in: 1.0000" in text
    # the drawing: AddBackward just ran, and its gradient (1) is written on both its edges
    _wait_picture(area, ADD, [(ADD, MUL, "1.000"), (ADD, ACC_A, "1.000")])
    nb.screenshot_cell(STEPPER_CELL, "stepper-step1")

    step.click()
    text = _wait_text(area, r"at step 1; steps 0 to 3\)\nstep 1: MulBackward")
    assert "sends -3.0000 to AccumulateGrad(a)" in text
    assert "sends 2.0000 to AccumulateGrad(b)" in text
    # the highlight moved on; Mul's gradients joined Add's on the edges
    _wait_picture(area, MUL, [(MUL, ACC_A, "-3.000"), (MUL, ACC_B, "2.000"), (ADD, MUL, "1.000")])
    nb.screenshot_cell(STEPPER_CELL, "stepper-step2")

    step.click()
    step.click()
    text = _wait_text(area, r"at step 3; steps 0 to 3\)\nstep 3: AccumulateGrad\(a\)")
    # the accumulation on the reused leaf, shown as the learner should read it
    assert "grad in: -2.0000 = 1.0000 + -3.0000 (from 2 paths)" in text
    assert "a.grad is now -2.0000" in text
    # a's gradient arrived from both paths: both edges carry theirs, the leaf shows the sum
    _wait_picture(area, f"{ACC_A} | grad -2.0000", [(MUL, ACC_A, "-3.000"), (ADD, ACC_A, "1.000")])
    nb.screenshot_cell(STEPPER_CELL, "stepper-step4")

    back.click()
    text = _wait_text(area, r"at step 2; steps 0 to 3\)\nstep 2: AccumulateGrad\(b\)")
    assert "b.grad is now 2.0000" in text
    _wait_picture(area, f"{ACC_B} | grad 2.0000", [(MUL, ACC_B, "2.000")])

    reset.click()
    _wait_text(area, r"before step 0; steps 0 to 3\)\n\(no node has run yet\)")
