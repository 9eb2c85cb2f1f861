"""Run All, as a learner starts a lesson, in JupyterLab at 1280x800.

- A learner's copy (`tinygrad-edu lessons` / `lesson strip`) runs to its last cell with
  every exercise unanswered; each unanswered exercise says so in one line, and no cell
  shows a traceback.
- Lesson 2's two steppers after Run All: the one shown as four clicks is at step 3 and
  says so in the same count as its step text, and the learner's own, "a fresh start",
  has run no step.
"""

from __future__ import annotations

import re
import time

import pytest
from e2e_paths import NOTEBOOKS, SHOTS

from tinygrad_edu.lesson import strip

pytestmark = pytest.mark.e2e

ADVICE = "is not answered yet: write your code where it says YOUR CODE HERE"
NOT_CHECKED = "is not answered yet, so it is not checked"

_PROMPTS = """() => [...document.querySelectorAll(
  '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell.jp-CodeCell .jp-InputPrompt')]
  .map((p) => p.textContent.trim())"""


def run_all(nb, timeout_s: float = 240.0) -> list[str]:
    """Run > Run All Cells (the menu's command), wait until the kernel is done; return
    every code cell's prompt: "[n]:" ran, "[ ]:" or "" never ran (Run All stopped)."""
    nb.page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    deadline = time.monotonic() + timeout_s
    while True:
        time.sleep(1.0)
        prompts = nb.page.evaluate(_PROMPTS)
        busy = any(p == "[*]:" for p in prompts)
        if not busy and nb.kernel_status() == "connected/idle":
            nb.wait_kernel_idle(stable_s=2.0)
            prompts = nb.page.evaluate(_PROMPTS)
            if not any(p == "[*]:" for p in prompts):
                return prompts
        if time.monotonic() > deadline:
            raise AssertionError(f"{nb.name}: Run All still running after {timeout_s:.0f} s")


def _tracebacks(nb) -> list[int]:
    """Cells whose output shows an error, but for the lesson's deliberate ones (tagged
    `raises-exception`, which JupyterLab's Run All runs past)."""
    return [
        i
        for i in nb.code_cell_indices()
        if "raises-exception" not in nb.tags[i]
        and nb.cell(i).locator('[data-mime-type="application/vnd.jupyter.stderr"]').count()
    ]


def _text(nb, index: int) -> str:
    # textContent: Lab skips painting cells outside the window, where innerText is ""
    return (nb.output(index).text_content() or "").strip()


def test_a_learners_copy_runs_all_to_the_end_past_unanswered_exercises(open_notebook, tmp_path):
    copy = tmp_path / "02_backward.ipynb"
    strip.strip_file(NOTEBOOKS / "02_backward.ipynb", copy)
    nb = open_notebook(copy)
    nb.page.set_viewport_size({"width": 1280, "height": 800})
    prompts = run_all(nb)
    never_ran = [i for i, p in zip(nb.code_cell_indices(), prompts) if not re.match(r"\[\d+\]", p)]
    assert never_ran == [], f"Run All stopped: cells {never_ran} never ran ({prompts})"
    assert _tracebacks(nb) == []

    # each exercise: its stub (or the check that calls it) and its checks say one line
    stubs = [i for i in nb.code_cell_indices() if "# YOUR CODE HERE" in nb.source(i)]
    checks = [i for i in nb.code_cell_indices() if nb.source(i).startswith("# Checks Exercise")]
    assert len(stubs) == 3 and len(checks) == 3
    said = [_text(nb, i) for i in sorted(stubs + checks)]
    assert said == [
        f"Exercise 1 {ADVICE}",
        f"Exercise 1 {NOT_CHECKED}",
        "",  # defining Sigmoid runs no stub: the check calls it
        f"Exercise 2 {ADVICE}",
        f"Exercise 3 {ADVICE}",
        f"Exercise 3 {NOT_CHECKED}",
    ]
    # the lesson went on after the exercises: its last code cell ran
    assert re.match(r"\[\d+\]", prompts[-1])

    _scroll_to_top(nb, stubs[0])  # exercise 1 and its check, then exercise 2
    nb.screenshot("learner-copy-run-all")


def _scroll_to_top(nb, index: int) -> None:
    """Cell `index` at the top of the notebook (Lab's own scroll: cells above it may
    change height while they paint, so it scrolls twice)."""
    for _ in range(2):
        nb.page.evaluate(
            "(i) => window.jupyterapp.shell.currentWidget.content.scrollToItem(i, 'start')",
            index,
        )
        nb.page.wait_for_timeout(800)


def _stepper_text(nb, index: int) -> str:
    """The stepper widget's own text (its <pre>), polled until the widget has rendered."""
    area = nb.output(index)
    deadline = time.monotonic() + 20
    while True:
        texts = area.locator(".widget-html pre").all_text_contents()
        if texts:
            return texts[0]
        if time.monotonic() > deadline:
            raise AssertionError(f"cell {index}: no stepper widget; it shows {_text(nb, index)}")
        time.sleep(0.25)


def test_lesson_2_steppers_after_run_all_show_what_their_text_says(open_notebook):
    nb = open_notebook(NOTEBOOKS / "02_backward.ipynb")
    nb.page.set_viewport_size({"width": 1280, "height": 800})
    prompts = run_all(nb)
    assert all(re.match(r"\[\d+\]", p) for p in prompts), prompts

    clicks_index = nb.find_cell("four_clicks.state.advance()")
    clicks = _stepper_text(nb, clicks_index)
    heading, step = clicks.splitlines()[:2]
    assert heading == "BackwardStepper(at step 3; steps 0 to 5)"
    assert step.startswith("step 3: MulBackward")  # one count: the heading's and the step's
    _scroll_to_top(nb, clicks_index)
    nb.screenshot("lesson2-four-clicks-after-run-all")

    # the lesson's prose: click Reset, then Step, on the same stepper
    fresh_index = clicks_index
    nb.output(fresh_index).get_by_role("button", name="Reset", exact=True).click()
    deadline = time.monotonic() + 15
    while not _stepper_text(nb, fresh_index).startswith("BackwardStepper(before"):
        assert time.monotonic() < deadline, "Reset did nothing"
        time.sleep(0.25)
    fresh = _stepper_text(nb, fresh_index)
    assert fresh == "BackwardStepper(before step 0; steps 0 to 5)\n(no node has run yet)"
    # the slider shows no count of its own beside the text
    readouts = nb.output(fresh_index).locator(".widget-readout")
    assert readouts.count() == 0 or not readouts.first.is_visible()

    # a click on Step: the heading and the step text move together
    nb.output(fresh_index).get_by_role("button", name="Step", exact=True).click()
    deadline = time.monotonic() + 15
    while _stepper_text(nb, fresh_index).startswith("BackwardStepper(before"):
        assert time.monotonic() < deadline, "Step did nothing"
        time.sleep(0.25)
    heading, step = _stepper_text(nb, fresh_index).splitlines()[:2]
    assert heading == "BackwardStepper(at step 0; steps 0 to 5)"
    assert step.startswith("step 0: PowBackward")
    _scroll_to_top(nb, fresh_index)
    assert nb.screenshot("lesson2-fresh-stepper-one-step") == SHOTS / (
        "lesson2-fresh-stepper-one-step.png"
    )
