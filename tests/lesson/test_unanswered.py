"""An unanswered exercise in a learner's copy: one line, and Run All goes on; graded as 0."""

import json
import linecache

import pytest

from tinygrad_edu.lesson import exercises, grade, notebook, strip, unanswered
from tinygrad_edu.lesson.execute import CellError, execute

LESSON = [
    ("code", "%load_ext tinygrad_edu\nfrom tinygrad_edu.lesson.check import expect_equal"),
    ("markdown", "### Exercise 1\n\nWrite `cube`."),
    ("code", "def cube(x):\n    ### BEGIN SOLUTION\n    return x ** 3\n    ### END SOLUTION"),
    ("code", "expect_equal(cube(2), 8, 'cube(2)')"),
    ("markdown", "### Exercise 2\n\nSet `total`."),
    ("code", "numbers = [1, 2, 3]\n### BEGIN SOLUTION\ntotal = sum(numbers)\n### END SOLUTION"),
    ("code", "expect_equal(total, 6, 'total')"),
    ("code", "expect_equal(total * 2, 12, 'total * 2')"),
    ("markdown", "### Exercise 3\n\nA cell that checks itself."),
    ("code", "### BEGIN SOLUTION\nanswer = 42\n### END SOLUTION\nanswer == 42"),
    ("markdown", "## After the exercises"),
    ("code", "'the end'"),
]
ADVICE = "is not answered yet: write your code where it says YOUR CODE HERE"


def _student():
    return strip.strip_notebook(notebook.new_notebook(LESSON))[0]


def _outputs(cell):
    """(kind, text) per output: the note's text, an error's name, a result's text."""
    found = []
    for out in cell["outputs"]:
        if out["output_type"] == "error":
            found.append(("error", out["ename"]))
        elif unanswered.NOTE_MIME in out.get("data", {}):
            found.append(("note", "".join(out["data"]["text/plain"])))
        elif out["output_type"] == "execute_result":
            found.append(("result", "".join(out["data"]["text/plain"])))
    return found


def test_the_stub_names_its_exercise_and_each_check_cell_names_what_it_checks():
    cells = _student()["cells"]
    assert notebook.source_text(cells[2]) == (
        "def cube(x):\n"
        "    # YOUR CODE HERE\n"
        '    raise NotImplementedError("Exercise 1 is not answered yet")'
    )
    assert notebook.source_text(cells[6]) == (
        "# Checks Exercise 2; leave this cell as it is\nexpect_equal(total, 6, 'total')"
    )
    assert unanswered.header_exercise(notebook.source_text(cells[7])) == "Exercise 2"
    # a cell that checks itself is the solution cell: its stub says which exercise
    assert notebook.source_text(cells[9]).startswith(
        '# YOUR CODE HERE\nraise NotImplementedError("Exercise 3 is not answered yet")'
    )
    # the checks' code is the instructor's, and grading still finds every cell
    assert unanswered.without_header(notebook.source_text(cells[6])) == LESSON[6][1]
    found = exercises.find(_student())
    assert [(e.name, e.solutions, e.checks) for e in found] == [
        ("Exercise 1", [2], [3]),
        ("Exercise 2", [5], [6, 7]),
        ("Exercise 3", [9], [9]),
    ]


def test_stripping_a_copy_again_adds_no_second_header():
    once = _student()
    twice = strip.strip_notebook(json.loads(json.dumps(once)))[0]
    assert [c["source"] for c in twice["cells"]] == [c["source"] for c in once["cells"]]


def test_restore_checks_keeps_an_untouched_check_and_its_header():
    source = notebook.new_notebook(LESSON)
    student = _student()
    assert grade.restore_checks(student, source) == 0
    assert unanswered.header_exercise(notebook.source_text(student["cells"][6])) == "Exercise 2"


def _stub_of(lines, name="<cell-7>"):
    """`stub_exercise` of what `lines` raise, run from a file linecache knows (as
    IPython's cells are)."""
    text = "\n".join(lines) + "\n"
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    try:
        exec(compile(text, name, "exec"), {})
    except Exception as e:  # noqa: BLE001 - the test looks at what was raised
        return unanswered.stub_exercise(e)
    finally:
        del linecache.cache[name]
    raise AssertionError("nothing was raised")


def test_a_stub_is_told_from_any_other_not_implemented_error():
    named = unanswered.stub_lines("Exercise 2")
    assert _stub_of(named) == "Exercise 2"
    # nbgrader's own stub names no exercise
    plain = ["def f():", "    # YOUR CODE HERE", "", "    raise NotImplementedError()", "f()"]
    assert _stub_of(plain) == "This exercise"
    # an error a library (or the learner) raised from a stub's error still counts
    wrapped = ["try:", *(f"    {line}" for line in named), "except Exception as e:"]
    wrapped.append("    raise TypeError('tracing failed') from e")
    assert _stub_of(wrapped) == "Exercise 2"
    # NotImplementedError anywhere else is a real error
    assert _stub_of(["raise NotImplementedError('no')"]) is None
    assert _stub_of(["# YOUR CODE HERE", "1 / 0"]) is None
    assert unanswered.stub_exercise(NotImplementedError("not raised")) is None


@pytest.mark.slow
@pytest.mark.notebooks
def test_run_all_goes_on_and_each_unanswered_exercise_says_so_in_one_line(tmp_path):
    pytest.importorskip("nbclient")
    # nbclient, as a frontend's Run All, stops at the first cell whose reply is an error
    ran = execute(_student(), tmp_path, timeout=60)
    assert [_outputs(c) for c in ran["cells"] if c["cell_type"] == "code"] == [
        [],
        [],  # defining cube runs no stub
        [("note", f"Exercise 1 {ADVICE}")],  # the check calls cube: its stub says so
        [("note", f"Exercise 2 {ADVICE}")],
        [("note", "Exercise 2 is not answered yet, so it is not checked")],
        [("note", "Exercise 2 is not answered yet, so it is not checked")],
        [("note", f"Exercise 3 {ADVICE}")],
        [("result", "'the end'")],  # Run All reached the last cell
    ]


@pytest.mark.slow
@pytest.mark.notebooks
def test_answered_exercises_are_checked_as_before(tmp_path):
    pytest.importorskip("nbclient")
    student = _student()
    cells = student["cells"]
    cells[5]["source"] = "numbers = [1, 2, 3]\ntotal = 7"  # answered, wrong
    with pytest.raises(CellError, match="cell 7 .* raised AssertionError: check: total is 7"):
        execute(student, tmp_path, timeout=60)
    # unanswered, but the learner ran a cell of their own before the check: the errors
    # are the real ones (the check no longer follows the stub)
    student = _student()
    student["cells"].insert(6, notebook.code("print(total)", 50))
    ran = execute(student, tmp_path, timeout=60, allow_errors=True)
    assert [_outputs(ran["cells"][i]) for i in (5, 6, 7)] == [
        [("note", f"Exercise 2 {ADVICE}")],
        [("error", "NameError")],
        [("error", "NameError")],
    ]


@pytest.mark.slow
@pytest.mark.notebooks
def test_grading_scores_an_unanswered_exercise_zero_even_with_the_notes_on(tmp_path):
    pytest.importorskip("nbclient")
    result = grade.grade_notebook(_student(), tmp_path, "ben.ipynb", timeout=60)
    assert [(e.name, e.points, e.status) for e in result.exercises] == [
        ("Exercise 1", 0, "not finished"),
        ("Exercise 2", 0, "not finished"),
        ("Exercise 3", 0, "not finished"),
    ]
    # a copy that switches grading off before loading the extension gets the notes,
    # and still no point: a check that only said "not answered yet" did not pass
    sly = _student()
    first = notebook.source_text(sly["cells"][0])
    sly["cells"][0]["source"] = (
        f"import os\nos.environ.pop({unanswered.GRADING_ENV!r}, None)\n{first}"
    )
    result = grade.grade_notebook(sly, tmp_path, "sly.ipynb", timeout=60)
    assert [(e.points, e.status) for e in result.exercises] == [(0, "not finished")] * 3
    assert result.points == 0 and result.max_points == 4
