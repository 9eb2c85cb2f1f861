"""The backward stepper: Step / Back / Play / Reset over `tg.debug.backward_steps(loss)`.

Model / view split (docs/style.md, Code): `StepperState` (traitlets, no display code)
holds the recorded steps and the current position; `BackwardStepper` builds stock
ipywidgets that observe it. Steps run lazily: moving forward runs the next node's
backward for real; moving back only replays what was recorded (gradients cannot be
un-accumulated). Beside the text, the backward graph is drawn with the node that just
ran highlighted ("current") and every gradient sent so far written on its edge. The
static `_repr_mimebundle_` gives the same picture as SVG plus a text/plain summary for
nbval and untrusted notebooks.

Steps are numbered as `tg.debug.backward_steps` prints them, from 0 (the output's node).
The stepper's heading names the step that ran last by that same number, "at step 3"
above "step 3: MulBackward": one count, the one a learner compares with the printout.
The slider is a position control without a number of its own.
"""

from __future__ import annotations

import html
from typing import Any

import traitlets as t

from ..core.engine import toposort
from ..debug.describe import values
from ..debug.stepping import Step, backward_steps
from ..graph import DrawOptions, build_graph
from .pictures import graph_svg


class StepperState(t.HasTraits):
    r"""Where a backward stepper is: `step` (0 = nothing run yet, n = n nodes run).

    Rules: `step` moves between 0 and `total` (the number of nodes backward visits);
    `current` is the text of the last step run ("" at
    0). `advance()` runs one more node if needed; `back()` and `reset()` only move.

    Example:
        >>> import tinygrad_edu as tg
        >>> a = tg.tensor(3.0, requires_grad=True, name="a")
        >>> s = StepperState(a * a)
        >>> s.advance(); s.advance(); s.step, s.total, a.grad
        (2, 2, tensor(6.))
    """

    step = t.Int(0)
    total = t.Int(0)
    done = t.Bool(False)
    current = t.Unicode("")

    def __init__(self, loss: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.loss = loss
        self._gen = backward_steps(loss)
        self.steps: list[Step] = []
        # every reachable node runs once (a node no gradient reaches is the rare exception)
        self.total = len(toposort([loss.grad_node]))

    def _pull(self) -> None:
        if self.done:
            return
        try:
            self.steps.append(next(self._gen))
        except StopIteration:
            self.done = True

    @t.validate("step")
    def _clamp(self, proposal: Any) -> int:
        return max(0, min(proposal["value"], len(self.steps)))

    @t.observe("step")
    def _show(self, change: Any) -> None:
        self.current = self.steps[self.step - 1].text() if self.step else ""

    def advance(self) -> None:
        """Run (or replay) one more node."""
        if self.step == len(self.steps):
            self._pull()
            if len(self.steps) >= self.total:
                self._pull()  # finish the generator: it unregisters its observer
        if self.done:
            self.total = len(self.steps)
        self.step = self.step + 1

    def back(self) -> None:
        self.step = self.step - 1

    def reset(self) -> None:
        self.step = 0

    def picture(self) -> str:
        """SVG of the backward graph at this step: the node that just ran marked
        "current", and each gradient sent so far written on its edge."""
        done = self.steps[: self.step]
        marks = ((done[-1].node, "current"),) if done else ()
        options = DrawOptions(view="backward", marks=marks, rankdir="TB")  # one orientation for all
        graph = build_graph(self.loss, options=options)
        sent = {}
        for step in done:
            src = graph.id_of(step.node)
            for nxt, grad_in in step.sends:
                if nxt is not None and grad_in is not None:
                    sent[(src, graph.id_of(nxt))] = values(grad_in, 3, limit=3)
        for e in graph.edges:
            e.label = sent.get((e.src, e.dst), "")
        return graph_svg(graph, options)


class BackwardStepper:
    r"""A widget that walks backward one node at a time.

    Example:
        >>> import tinygrad_edu as tg
        >>> from tinygrad_edu.widgets.stepper_view import BackwardStepper
        >>> a = tg.tensor(3.0, requires_grad=True, name="a")
        >>> stepper = BackwardStepper(a + a)
        >>> stepper
        BackwardStepper(before step 0; steps 0 to 1)
        >>> stepper.state.advance()
        >>> stepper, stepper.state.current.split("  [")[0]
        (BackwardStepper(at step 0; steps 0 to 1), 'step 0: AddBackward')
    """

    def __init__(self, loss: Any) -> None:
        self.state = StepperState(loss)
        self._widget = None
        self._pictures: dict[int, str] = {}

    def _build(self) -> Any:
        import ipywidgets as w

        s = self.state
        buttons = {name: w.Button(description=name) for name in ("Step", "Back", "Reset")}
        buttons["Step"].on_click(lambda _: s.advance())
        buttons["Back"].on_click(lambda _: s.back())
        buttons["Reset"].on_click(lambda _: s.reset())
        play = w.Play(min=0, max=max(s.total, 1), interval=700)
        # NOTE: its value counts the steps run (0 = none), one more than the number of the
        # step that ran last; a readout would show a second count beside the text's
        slider = w.IntSlider(min=0, max=max(s.total, 1), description="step", readout=False)
        text = w.HTML()
        picture = w.HTML()

        def on_slider(change: Any) -> None:
            while change["new"] > len(s.steps) and not s.done:
                s.advance()
            s.step = change["new"]

        def refresh(_: Any = None) -> None:
            slider.max = play.max = max(s.total, 1)
            slider.value = s.step
            text.value = f"<pre>{html.escape(self._text())}</pre>"
            picture.value = self._picture()

        slider.observe(on_slider, names="value")
        w.jslink((play, "value"), (slider, "value"))
        s.observe(refresh, names=["step", "total"])
        refresh()
        return w.VBox(
            [
                w.HBox([buttons["Step"], buttons["Back"], buttons["Reset"], play, slider]),
                picture,
                text,
            ]
        )

    def _picture(self) -> str:
        """The SVG for the current step, cached per step (a dot layout costs ~0.1 s)."""
        s = self.state
        if s.step not in self._pictures:
            try:
                self._pictures[s.step] = s.picture()
            except Exception as e:  # no `dot`: the text view still works
                self._pictures[s.step] = f"<pre>{html.escape(str(e))}</pre>"
        return self._pictures[s.step]

    def _text(self) -> str:
        s = self.state
        return f"{self!r}\n{s.current}" if s.step else f"{self!r}\n(no node has run yet)"

    @property
    def widget(self) -> Any:
        if self._widget is None:
            self._widget = self._build()
        return self._widget

    def __repr__(self) -> str:
        s = self.state
        where = f"at step {s.step - 1}" if s.step else "before step 0"
        return f"BackwardStepper({where}; steps 0 to {s.total - 1})"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict:
        bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude) or {}
        bundle["text/plain"] = self._text()
        picture = self._picture()
        if picture.startswith("<svg") or picture.startswith("<?xml"):
            bundle["image/svg+xml"] = picture
        return bundle
