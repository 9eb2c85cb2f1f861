"""Run All goes on past an exercise the learner has not answered yet.

In a student copy (`lesson strip`), a solution became nbgrader's stub, which names its
exercise, and each check cell names the exercise it checks in its first line:

    # YOUR CODE HERE
    raise NotImplementedError("Exercise 2 is not answered yet")

    # Checks Exercise 2; leave this cell as it is
    expect_close(dloss_dx, x.grad, "dloss_dx")

Without help the stub raises, and Run All stops there: nothing below it runs, and the
learner meets a traceback before reading the rest of the lesson. In IPython, once the
check helpers are imported (`from tinygrad_edu.lesson.check import ...`, every
lesson's setup cell; `%load_ext tinygrad_edu` too), the kernel instead shows one line,

    Exercise 2 is not answered yet: write your code where it says YOUR CODE HERE

and the cell counts as done, so Run All goes on. The same holds for the check cells run
right after it: they fail only because there is no answer, so each says so in one line
instead of a NameError or an AssertionError about None. Only these are quiet: a stub's
own `NotImplementedError` (its line is `raise NotImplementedError...` under `# YOUR CODE
HERE`, nbgrader's convention, also inside a function the check calls), and an error in
a check cell whose exercise's stub raised in the cell run just before (a check run after
the learner ran their answer fails as it always did). Every other error shows as it did
(with the live graph's short tracebacks while it is on); `%tb` shows the full traceback.

Grading is untouched: `lesson grade` and `lesson check --student` start their kernels
with TINYGRAD_EDU_GRADING=1, where the stub raises as in nbgrader and an unanswered
exercise scores 0; a check cell that shows the one-line note anyway (a notebook that
switched grading off) earns nothing either (`grade.py`).
Lesson layer: standard library at import time (IPython when the note is shown).
"""

from __future__ import annotations

import builtins
import html
import json
import linecache
import os
import re
import sys
from typing import Any

STUB_COMMENT = "# YOUR CODE HERE"
CHECK_HEADER = "# Checks {name}; leave this cell as it is"
GRADING_ENV = "TINYGRAD_EDU_GRADING"  # set in the kernels that grade: the stub raises
NOTE_MIME = "application/vnd.tinygrad-edu.unanswered+json"  # marks the note for graders
ADVICE = "write your code where it says YOUR CODE HERE"
_NOT_ANSWERED = " is not answered yet"
_HEADER = re.compile(r"^# Checks (.+); leave this cell as it is[ \t]*$")
_STUB_RAISE = re.compile(r"^raise NotImplementedError\b")
_NAMED = re.compile(r"^(.+) is not answered yet$")


def stub_lines(name: str | None = None) -> tuple[str, str]:
    """The two lines that replace a solution region: nbgrader's, naming the exercise.

    Example:
        >>> stub_lines("Exercise 2")
        ('# YOUR CODE HERE', 'raise NotImplementedError("Exercise 2 is not answered yet")')
    """
    if name is None:
        return STUB_COMMENT, "raise NotImplementedError"
    return STUB_COMMENT, f"raise NotImplementedError({json.dumps(name + _NOT_ANSWERED)})"


def check_header(name: str) -> str:
    """The first line `lesson strip` gives a check cell of exercise `name`."""
    return CHECK_HEADER.format(name=name)


def header_exercise(source: str) -> str | None:
    """The exercise a cell checks, from its first line; None for any other cell.

    Example:
        >>> header_exercise("# Checks Exercise 2; leave this cell as it is\\ncheck_grad(w, 1)")
        'Exercise 2'
    """
    first = source.lstrip("\n").split("\n", 1)[0]
    found = _HEADER.match(first)
    return found.group(1) if found else None


def without_header(source: str) -> str:
    """A check cell's source without the header `lesson strip` added (for comparing)."""
    if header_exercise(source) is None:
        return source
    return source.lstrip("\n").split("\n", 1)[1] if "\n" in source.strip("\n") else ""


def _is_stub(error: BaseException) -> bool:
    """True when `error` was raised by a stub line (under `# YOUR CODE HERE`)."""
    if not isinstance(error, NotImplementedError) or error.__traceback__ is None:
        return False
    tb = error.__traceback__
    while tb.tb_next is not None:  # the innermost frame raised it
        tb = tb.tb_next
    filename, lineno = tb.tb_frame.f_code.co_filename, tb.tb_lineno
    if not _STUB_RAISE.match(linecache.getline(filename, lineno).strip()):
        return False
    above = lineno - 1
    while above > 0 and not linecache.getline(filename, above).strip():
        above -= 1
    return above > 0 and linecache.getline(filename, above).strip() == STUB_COMMENT


def stub_exercise(error: BaseException) -> str | None:
    """The exercise whose stub raised `error` (or an error it led to); None if no stub did.

    A stub without a name (nbgrader's own `raise NotImplementedError()`) gives
    "This exercise".
    """
    seen: set[int] = set()
    todo: list[BaseException | None] = [error]
    while todo:  # the error itself, then what it was raised from or during
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if _is_stub(e):
            named = _NAMED.match(str(e))
            return named.group(1) if named else "This exercise"
        todo += [e.__context__, e.__cause__]
    return None


def grading() -> bool:
    """True in a kernel that grades: unanswered exercises raise, as in nbgrader."""
    return os.environ.get(GRADING_ENV, "") not in ("", "0")


class Guard:
    """The IPython callbacks: quiet one-line notes for unanswered exercises (module doc).

    `pending` is the exercise whose stub raised in the cell run last (or whose check
    cell ran last, right after it): only that exercise's check cells are quiet next.
    """

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.pending: str | None = None
        self.checks: str | None = None  # the exercise this cell checks, after a stub
        self.quiet = False  # this cell's error was shown as a one-line note

    def pre_run_cell(self, info: Any = None) -> None:
        # NOTE: a shell has one custom error handler; the live graph sets its own when it
        # starts (`%load_ext`, or `tg.live_panel()` in some cell), so take it back, cheaply
        self.shell.set_custom_exc((Exception,), self.show)
        # and be the last to hear that the cell ended: the live graph, like any callback
        # before this one, still sees the error (a cell that raised draws nothing)
        callbacks = self.shell.events.callbacks["post_run_cell"]
        if callbacks and callbacks[-1] != self.post_run_cell:
            self.shell.events.unregister("post_run_cell", self.post_run_cell)
            self.shell.events.register("post_run_cell", self.post_run_cell)
        named = header_exercise(getattr(info, "raw_cell", None) or "")
        self.checks = named if named is not None and named == self.pending else None
        self.pending = self.checks  # any other cell ends the run of checks
        self.quiet = False

    def show(self, shell: Any, etype: type, value: BaseException, tb: Any, tb_offset: Any = None):
        """The custom exception handler: a note for an unanswered exercise, else as before."""
        name = stub_exercise(value)
        if name is not None:
            self.pending = name
            line = f"{name}{_NOT_ANSWERED}: {ADVICE}"
        elif self.checks is not None:
            name = self.checks
            line = f"{name}{_NOT_ANSWERED}, so it is not checked"
        else:
            return _as_before(shell, etype, value, tb, tb_offset)
        sys.last_type, sys.last_value, sys.last_traceback = etype, value, tb  # for %tb
        self.quiet = True
        show_note(name, line)
        return []

    def post_run_cell(self, result: Any = None) -> None:
        if self.quiet and result is not None:
            # the kernel replies "ok", so JupyterLab's Run All (and the kernel, which
            # drops queued cells after an error) goes on to the next cell
            result.error_in_exec = None


def _as_before(shell: Any, etype: type, value: BaseException, tb: Any, tb_offset: Any) -> list:
    """Any other error: the live graph's short tracebacks while it is on, else IPython's."""
    live = sys.modules.get("tinygrad_edu.widgets.live")
    if live is not None and getattr(live, "_LIVE", None) is not None:
        from ..widgets import tracebacks

        return tracebacks.show(shell, etype, value, tb, tb_offset)
    shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
    return []


def show_note(name: str, line: str) -> None:
    """Display the one-line note under the running cell (text, HTML, and a marker)."""
    from IPython.display import display

    head, rest = line[: len(name)], line[len(name) :]
    bundle = {
        "text/plain": line,
        "text/html": (
            '<div class="tg-unanswered" style="border-left:4px solid #d4a017;'
            "background:#fff8e1;padding:4px 8px;font-family:var(--jp-content-font-family,"
            f'sans-serif)"><b>{html.escape(head)}</b>{html.escape(rest)}</div>'
        ),
        NOTE_MIME: {"exercise": name},
    }
    display(bundle, raw=True)


_GUARD: Guard | None = None


def install(shell: Any) -> None:
    """Make unanswered exercises quiet in this shell (nothing while grading)."""
    global _GUARD
    if grading() or not hasattr(shell, "set_custom_exc"):
        return
    if _GUARD is None or _GUARD.shell is not shell:
        _forget()
        _GUARD = Guard(shell)
        shell.events.register("pre_run_cell", _GUARD.pre_run_cell)
        shell.events.register("post_run_cell", _GUARD.post_run_cell)
    shell.set_custom_exc((Exception,), _GUARD.show)


def install_here() -> None:
    """`install` in the running IPython shell, if any (found without importing IPython)."""
    get_ipython = getattr(builtins, "get_ipython", None)  # set by IPython, absent elsewhere
    if get_ipython is not None:
        install(get_ipython())


def _forget() -> None:
    """Drop the guard of another shell (tests make several)."""
    global _GUARD
    if _GUARD is not None:
        for event, callback in (
            ("pre_run_cell", _GUARD.pre_run_cell),
            ("post_run_cell", _GUARD.post_run_cell),
        ):
            try:
                _GUARD.shell.events.unregister(event, callback)
            except ValueError:  # already gone (a reset shell)
                pass
    _GUARD = None
