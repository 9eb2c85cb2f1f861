"""Instructor tooling: the `tinygrad-edu lesson` commands and helpers for check cells.

- `tinygrad_edu.lesson.check`: `expect_close`, `expect_equal`, `check_grad`,
  `expect_written`, for cells that evaluate to True or fail saying what differs;
  `expect_prediction`, which fails without giving the answer away.
- `tinygrad_edu.lesson.cli`: `lesson new` / `run` / `check` / `strip` / `grade`
  (docs/instructor_workflow.md); `exercises`, `execute` and `grade` behind them.

Lesson layer (the top one): uses the public API; importing it loads no optional package.
"""

from .check import check_grad, expect_close, expect_equal, expect_prediction, expect_written

__all__ = [
    "check_grad",
    "expect_close",
    "expect_equal",
    "expect_prediction",
    "expect_written",
]
