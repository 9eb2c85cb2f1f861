"""The lesson template behind `tinygrad-edu lesson new NAME` (STYLE.md section 7).

Title cell, setup cell (imports, seeds, the live graph), two example sections that
each end in an expression, `## Summary`, and `## Exercises` with a solution region
and a check cell. It runs as it is, so `lesson check` passes on a fresh lesson; the
instructor then replaces the example sections with their own.
Lesson layer: standard library only.
"""

from __future__ import annotations

import re

from . import notebook

NAME = re.compile(r"^(?:(\d+)([a-z]?)_)?([A-Za-z][A-Za-z0-9_]*)$")
# a lesson file: its place in the course, then lowercase words (notebooks/NN_topic.ipynb);
# a lesson split to fit a class has a letter per part (03a_topic, 03b_topic)
LESSON_NAME = re.compile(r"^\d{2}[a-z]?_[a-z][a-z0-9]*(?:_[a-z0-9]+)*$")


def check_name(name: str) -> str:
    """`name` if it is a lesson file name like `12_attention`; else a ValueError saying why.

    Example:
        >>> check_name("12_attention")
        '12_attention'
        >>> check_name("attention")
        Traceback (most recent call last):
        ValueError: lesson name 'attention' should look like 12_attention: two digits (its place in the course, with a letter for a part of a split lesson: 03a), an underscore, then lowercase words joined by underscores
    """
    if LESSON_NAME.match(name):
        return name
    raise ValueError(
        f"lesson name {name!r} should look like 12_attention: two digits (its place in the "
        "course, with a letter for a part of a split lesson: 03a), an underscore, then "
        "lowercase words joined by underscores"
    )


def title_of(name: str) -> str:
    """`"11_my_topic"` -> `"Lesson 11: My topic"`, `"03a_x"` -> `"Lesson 3a: X"`; `"x"` -> `"X"`."""
    m = NAME.match(name)
    if m is None:
        raise ValueError(
            f"lesson name {name!r} should look like 11_my_topic: an optional number, then "
            "letters, digits and underscores"
        )
    number, part, words = m.groups()
    words = words.replace("_", " ")
    words = words[0].upper() + words[1:]
    return f"Lesson {int(number)}{part}: {words}" if number else words


SETUP = """\
import numpy as np
import tinygrad_edu as tg
from tinygrad_edu.lesson.check import check_grad, expect_close, expect_equal

np.random.seed(0)  # every random tensor comes from numpy's generator
%load_ext tinygrad_edu"""

INTRO = """\
# {title}

**What you will see:** one or two sentences on what the learner will watch happen.

**Prerequisites:** the lessons this one builds on (see `notebooks/README.md`).

Run the cells from top to bottom (Shift+Enter). With `%load_ext tinygrad_edu` the
graph each cell builds is drawn under it."""

SECTION_1 = """\
## 1. A first graph

Start with *why*: what question does this section answer? Then show it with one small
code cell that ends in an expression, so its value is printed and its graph drawn."""

CODE_1 = """\
x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True, name="x")
w = tg.tensor(2.0, requires_grad=True, name="w")
y = x * w
y"""

SECTION_2 = """\
## 2. One idea per section

Each section adds one idea. A check cell turns a claim in the prose into a cell that
evaluates to `True`, so nbval keeps the claim true."""

CODE_2 = """\
loss = y.sum()
loss.backward()
expect_close(x.grad, [2.0, 2.0, 2.0], "x.grad")"""

SUMMARY = """\
## Summary

1. The first thing the learner should remember.
2. The second."""

EXERCISES = """\
## Exercises

### Exercise 1

Write `cube(x)` that returns `x ** 3`, so that `x.grad` becomes `3 * x ** 2`."""

SOLUTION = """\
def cube(x):
    ### BEGIN SOLUTION
    return x ** 3
    ### END SOLUTION"""

CHECK = """\
x = tg.tensor([1.0, 2.0], requires_grad=True, name="x")
cube(x).sum().backward()
check_grad(x, 3 * x.data ** 2)"""


def lesson_notebook(name: str) -> dict:
    """The template notebook for lesson `name` (`check_name` says which names are valid)."""
    check_name(name)
    return notebook.new_notebook(
        [
            ("markdown", INTRO.format(title=title_of(name))),
            ("code", SETUP),
            ("markdown", SECTION_1),
            ("code", CODE_1),
            ("markdown", SECTION_2),
            ("code", CODE_2),
            ("markdown", SUMMARY),
            ("markdown", EXERCISES),
            ("code", SOLUTION),
            ("code", CHECK),
        ]
    )
