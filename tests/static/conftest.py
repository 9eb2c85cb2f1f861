"""Every program a static test compiles is also interpreted, and the two runs compared.

`runtime.interpret` is what a program means; the generated Python (codegen.py) is a
printer of it, so a difference on any test program is a bug in the printer.
"""

import pytest

from tinygrad_edu.static import runtime


@pytest.fixture(autouse=True)
def _check_replay_against_interpreter(monkeypatch):
    monkeypatch.setattr(runtime, "CHECK_AGAINST_INTERPRETER", True)
