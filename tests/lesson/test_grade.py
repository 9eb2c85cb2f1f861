"""Exercises, nbgrader metadata, grading and the student-copy check."""

import json

import pytest

from tinygrad_edu.lesson import exercises, grade, notebook, strip

SOLVED = "def cube(x):\n    ### BEGIN SOLUTION\n    return x ** 3\n    ### END SOLUTION"
LESSON = [
    ("markdown", "## Exercises\n\n### Exercise 1\n\nWrite `cube`."),
    ("code", SOLVED),
    (
        "code",
        "from tinygrad_edu.lesson.check import expect_equal\nexpect_equal(cube(2), 8, 'cube(2)')",
    ),
    ("markdown", "### Exercise 2: a total\n\nSet `total`."),
    ("code", "numbers = [1, 2, 3]\n### BEGIN SOLUTION\ntotal = sum(numbers)\n### END SOLUTION"),
    ("code", "expect_equal(total, 6, 'total')"),
    ("code", "expect_equal(total * 2, 12, 'total * 2')"),
    ("markdown", "### Exercise 3\n\nA cell that checks itself."),
    ("code", "### BEGIN SOLUTION\nanswer = 42\n### END SOLUTION\nanswer == 42"),
]


def _lesson():
    return notebook.new_notebook(LESSON)


def test_exercises_are_found_from_headings_and_markers():
    found = exercises.find(_lesson())
    assert [(e.name, e.slug, e.solutions, e.checks) for e in found] == [
        ("Exercise 1", "exercise-1", [1], [2]),
        ("Exercise 2: a total", "exercise-2-a-total", [4], [5, 6]),
        ("Exercise 3", "exercise-3", [8], [8]),  # no check cell: the solution cell checks
    ]


def test_a_second_solution_after_checks_is_a_new_part():
    nb = notebook.new_notebook(
        [
            ("markdown", "### Exercise 1"),
            ("code", SOLVED),
            ("code", "cube(2)"),
            ("code", SOLVED),
            ("code", "cube(3)"),
        ]
    )
    assert [(e.name, e.solutions, e.checks) for e in exercises.find(nb)] == [
        ("Exercise 1", [1], [2]),
        ("Exercise 1 (part 2)", [3], [4]),
    ]


def test_the_student_copy_carries_nbgrader_metadata():
    nb, regions = strip.strip_notebook(_lesson())
    assert regions == 3
    meta = [c["metadata"].get("nbgrader") for c in nb["cells"]]
    assert meta[0] is None and meta[3] is None
    assert meta[1] == {
        "grade": False,
        "grade_id": "exercise-1-solution",
        "locked": False,
        "schema_version": 3,
        "solution": True,
        "task": False,
    }
    assert meta[2] == {
        "grade": True,
        "grade_id": "exercise-1-check-1",
        "locked": True,
        "points": 1,
        "schema_version": 3,
        "solution": False,
        "task": False,
    }
    assert [m["grade_id"] for m in meta[5:7]] == [
        "exercise-2-a-total-check-1",
        "exercise-2-a-total-check-2",
    ]
    assert meta[8] == {
        "grade": True,
        "grade_id": "exercise-3-solution",
        "locked": False,
        "points": 1,
        "schema_version": 3,
        "solution": True,
        "task": False,
    }
    assert nb["cells"][2]["metadata"]["tinygrad_edu"] == {"exercise": "Exercise 1"}
    # the checks' code is kept word for word, under a line naming the exercise; the
    # solutions are gone
    assert notebook.source_text(nb["cells"][2]) == (
        f"# Checks Exercise 1; leave this cell as it is\n{LESSON[2][1]}"
    )
    assert "return x ** 3" not in json.dumps(nb)
    # and the copy is read back from its metadata, not its headings
    nb["cells"][0]["source"] = "## Exercises\n\nheading edited by a learner"
    assert [(e.name, e.checks) for e in exercises.find(nb)] == [
        ("Exercise 1", [2]),
        ("Exercise 2: a total", [5, 6]),
        ("Exercise 3", [8]),
    ]


def test_points_set_with_nbgrader_are_kept():
    nb = _lesson()
    nb["cells"][2]["metadata"]["nbgrader"] = {
        "grade": True,
        "grade_id": "cube-test",
        "points": 5,
        "solution": False,
    }
    strip.strip_notebook(nb)
    assert nb["cells"][2]["metadata"]["nbgrader"]["grade_id"] == "cube-test"
    assert exercises.points_of(nb["cells"][2]) == 5.0


def test_restore_checks_undoes_a_learners_edit_of_a_check():
    source = _lesson()
    student, _ = strip.strip_notebook(json.loads(json.dumps(source)))
    student["cells"][2]["source"] = "True  # edited"
    assert grade.restore_checks(student, source) == 1
    assert notebook.source_text(student["cells"][2]) == LESSON[2][1]


def _write(tmp_path, nb, name="ana.ipynb"):
    path = tmp_path / name
    notebook.write(nb, path)
    return path


@pytest.mark.slow
@pytest.mark.notebooks
def test_grade_gives_points_per_exercise_and_survives_errors(tmp_path):
    pytest.importorskip("nbclient")
    student, _ = strip.strip_notebook(_lesson())
    cells = student["cells"]
    cells[1]["source"] = SOLVED  # exercise 1 right
    cells[4]["source"] = "numbers = [1, 2, 3]\ntotal = 7"  # exercise 2 wrong
    cells[8]["source"] = "answer = 41\nanswer == 42"  # exercise 3 evaluates to False
    result = grade.grade_notebook(student, tmp_path, "ana.ipynb", timeout=60)
    rows = [(e.name, e.points, e.max_points, e.status) for e in result.exercises]
    assert rows == [
        ("Exercise 1", 1, 1, "passed"),
        ("Exercise 2: a total", 0, 2, "failed"),
        ("Exercise 3", 0, 1, "failed"),
    ]
    assert result.exercises[1].detail == "AssertionError: check: total is 7, expected 6"
    assert (result.points, result.max_points) == (1, 4)
    assert result.to_json()["exercises"][0] == {
        "name": "Exercise 1",
        "points": 1.0,
        "max_points": 1.0,
        "status": "passed",
        "detail": "",
        "cells": [3],
    }


@pytest.mark.slow
@pytest.mark.notebooks
def test_student_check_finds_checks_that_pass_or_crash_without_a_solution(tmp_path):
    pytest.importorskip("nbclient")
    nb = _lesson()
    nb["cells"][2]["source"] = "True"  # passes with no solution: points for nothing
    nb["cells"][6]["source"] = 'int("total")'  # crashes: ValueError, not a message
    nb["cells"].append(notebook.markdown("## Further reading", 98))  # ends exercise 3
    nb["cells"].append(notebook.code("1 / 0", 99))  # outside the exercises
    student, _ = strip.strip_notebook(nb)
    problems = grade.student_problems(student, tmp_path, timeout=60)
    assert problems == [
        "Exercise 1: check cell 3 ('True') passes with no solution written, so it gives "
        "points for nothing; make it test the answer",
        "Exercise 2: a total: check cell 7 ('int(\"total\")') crashes with ValueError: "
        "invalid literal for int() with base 10: 'total' instead of saying what is "
        "missing; check the answer exists first (or use the helpers in "
        "tinygrad_edu.lesson.check)",
        "cell 11 ('1 / 0'), outside the exercises, fails in the student copy: "
        "ZeroDivisionError: division by zero",
    ]
    # cell 6 raises NameError (total was never set): graceful, so not listed. And the
    # instructor's own notebook is no student copy
    solutions_left = grade.student_problems(_lesson(), tmp_path, timeout=60)
    assert solutions_left[0].startswith("cell 2 ('def cube(x):') still holds a solution region")
