"""Every program a static test compiles is also interpreted, and the two runs compared.

`runtime.interpret` is what a program means; the generated Python (codegen.py) is a
printer of it, so a difference on any test program is a bug in the printer.
"""

import numpy as np
import pytest

from tinygrad_edu.static import runtime


class CheckedReplay:
    """A compiled program whose every run is checked against `runtime.interpret`."""

    def __init__(self, replay):
        self.replay, self.source = replay, replay.source

    def run(self, args, tape=None):
        r = self.replay
        # the interpreter's own copy of the tape: a forward fills it, a gradient reads it
        mine = {} if tape is None else dict(tape)
        outs = r.run(args, tape)
        want = runtime.interpret(r.program, list(args), mine, r.keep_all)
        for got, ref in zip(outs, want, strict=True):
            same = got.shape == ref.shape and got.dtype == ref.dtype
            if not same or not np.array_equal(got, ref, equal_nan=got.dtype.kind in "fc"):
                raise AssertionError(
                    f"compiled replay differs from the interpreter:\n{r.source}\n"
                    f"compiled: {got!r}\ninterpreted: {ref!r}"
                )
        return outs


@pytest.fixture(autouse=True)
def _check_replay_against_interpreter(monkeypatch):
    compiled_runner = runtime.runner
    monkeypatch.setattr(
        runtime, "runner", lambda p, keep_all=False: CheckedReplay(compiled_runner(p, keep_all))
    )
