import numpy as np

import tinygrad_edu as tg
from tinygrad_edu.widgets.stepper_view import BackwardStepper, StepperState


def _graph():
    a = tg.tensor([1.0, 2.0], requires_grad=True, name="a")
    b = tg.tensor(3.0, requires_grad=True, name="b")
    return a, b, ((a + a) * b).tanh().sum()


def test_state_steps_forward_back_reset_and_final_grads_equal_backward():
    a, b, loss = _graph()
    s = StepperState(loss)
    assert (s.step, s.total, s.current) == (0, 6, "")
    s.advance()
    assert s.step == 1 and s.current.startswith("step 0: SumBackward")
    for _ in range(10):  # past the end: stays at the last step
        s.advance()
    assert (s.step, s.total) == (6, 6)
    assert s.current.startswith("step 5: AccumulateGrad(a)\n  grad in: ")
    assert "(from 2 paths)" in s.current
    s.back()
    assert s.current.startswith("step 4: ")
    s.reset()
    assert (s.step, s.current) == (0, "")
    ra, rb, ref = _graph()
    ref.backward()
    np.testing.assert_allclose(a.grad.numpy(), ra.grad.numpy())
    np.testing.assert_allclose(b.grad.numpy(), rb.grad.numpy())


def test_widget_buttons_slider_and_static_repr():
    a, b, loss = _graph()
    stepper = BackwardStepper(loss)
    assert repr(stepper) == "BackwardStepper(before step 0; steps 0 to 5)"
    box = stepper.widget
    controls, picture, text = box.children
    assert picture.value.lstrip().startswith("<")  # the backward graph (SVG)
    step_btn, back_btn, reset_btn, play, slider = controls.children
    assert [w.description for w in (step_btn, back_btn, reset_btn)] == ["Step", "Back", "Reset"]
    assert "(no node has run yet)" in text.value
    step_btn.click()
    step_btn.click()
    assert stepper.state.step == 2 and slider.value == 2
    assert "step 1: TanhBackward" in text.value
    back_btn.click()
    assert "step 0: SumBackward" in text.value and slider.value == 1
    slider.value = 6  # dragging ahead runs the remaining nodes
    assert stepper.state.step == 6 and a.grad is not None
    reset_btn.click()
    assert slider.value == 0
    bundle = stepper._repr_mimebundle_()
    assert bundle["text/plain"] == (
        "BackwardStepper(before step 0; steps 0 to 5)\n(no node has run yet)"
    )
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_picture_marks_the_node_that_just_ran_and_writes_sent_gradients_on_edges():
    import re

    import tinygrad_edu as tg
    from tinygrad_edu.widgets.stepper_view import BackwardStepper

    a = tg.tensor(2.0, requires_grad=True, name="a")
    b = tg.tensor(-3.0, requires_grad=True, name="b")
    stepper = BackwardStepper(a * b + a)
    first = stepper._picture()
    assert "tg-current" not in first.replace("&#45;", "-")  # nothing has run yet
    stepper.state.advance()  # AddBackward runs and sends 1 to MulBackward and to a
    svg = stepper._picture().replace("&#45;", "-")
    current = re.findall(r'<g id="node-(\w+)" class="node tg-node tg-op tg-current"', svg)
    assert len(current) == 1
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    assert texts.count("1.000") == 2  # the two gradients AddBackward sent
    stepper.state.advance()  # MulBackward: sends b = -3 to a and a = 2 to b
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", stepper._picture().replace("&#45;", "-"))
    assert "-3.000" in texts and "2.000" in texts
    bundle = stepper._repr_mimebundle_()
    assert bundle["image/svg+xml"].lstrip().startswith("<")
    assert bundle["text/plain"].startswith("BackwardStepper(at step 1; steps 0 to ")


def test_the_heading_and_the_step_text_count_alike():
    # the issue: "step 5 of 6" above "step 4: AccumulateGrad(w)". The heading names the
    # step that ran last by the number the step's own text (and backward_steps) gives it,
    # and the slider shows no count of its own
    import re

    a, b, loss = _graph()
    stepper = BackwardStepper(loss)
    _, _, text = stepper.widget.children
    slider = stepper.widget.children[0].children[-1]
    assert slider.readout is False
    seen = []
    for _ in range(stepper.state.total):
        stepper.state.advance()
        heading, step_line = stepper._text().splitlines()[:2]
        at = re.fullmatch(r"BackwardStepper\(at step (\d+); steps 0 to 5\)", heading)
        number = re.match(r"step (\d+): ", step_line)
        assert at and number and at.group(1) == number.group(1), stepper._text()
        assert f"<pre>{heading}" in text.value  # what the widget shows, too
        seen.append(int(at.group(1)))
    assert seen == [0, 1, 2, 3, 4, 5]
