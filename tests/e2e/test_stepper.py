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

pytestmark = pytest.mark.e2e

CELLS = [
    "import tinygrad_edu as tg\nfrom tinygrad_edu.widgets.stepper import BackwardStepper",
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
    _wait_text(area, r"BackwardStepper\(step 0 of 4\)\n\(no node has run yet\)")

    step.click()
    text = _wait_text(area, r"step 1 of 4")
    assert "step 0: AddBackward" in text
    assert "grad in: 1.0000" in text
    nb.screenshot_cell(STEPPER_CELL, "stepper-step1")

    step.click()
    text = _wait_text(area, r"step 2 of 4")
    assert "step 1: MulBackward" in text
    assert "sends -3.0000 to AccumulateGrad(a)" in text
    assert "sends 2.0000 to AccumulateGrad(b)" in text

    step.click()
    step.click()
    text = _wait_text(area, r"step 4 of 4")
    # the accumulation on the reused leaf, shown as the learner should read it
    assert "grad in: -2.0000 = 1.0000 + -3.0000 (from 2 paths)" in text
    assert "a.grad is now -2.0000" in text
    nb.screenshot_cell(STEPPER_CELL, "stepper-step4")

    back.click()
    text = _wait_text(area, r"step 3 of 4")
    assert "step 2: AccumulateGrad(b)" in text
    assert "b.grad is now 2.0000" in text

    reset.click()
    _wait_text(area, r"step 0 of 4\)\n\(no node has run yet\)")
