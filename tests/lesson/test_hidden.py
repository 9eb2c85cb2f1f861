"""Hidden checks: the instructor's copy holds them, strip leaves them out, grade puts them back."""

import json

import pytest

from tinygrad_edu.lesson import hidden, notebook, strip
from tinygrad_edu.lesson.cli import main

SOLVED = "def cube(x):\n    ### BEGIN SOLUTION\n    return x ** 3\n    ### END SOLUTION"
VISIBLE = "from tinygrad_edu.lesson.check import expect_equal\nexpect_equal(cube(2), 8, 'cube(2)')"
HIDDEN = "expect_equal(cube(-3), -27, 'cube(-3)')"
# an answer written to the visible check: it passes that one and nothing else
GAMED = "def cube(x):\n    return 8"


def _instructor():
    nb = notebook.new_notebook(
        [
            ("markdown", "## Exercises\n\n### Exercise 1\n\nWrite `cube`."),
            ("code", SOLVED),
            ("code", VISIBLE),
            ("code", HIDDEN),
            ("markdown", "### Exercise 2\n\nSet `total`."),
            ("code", "### BEGIN SOLUTION\ntotal = 6\n### END SOLUTION"),
            ("code", "expect_equal(total, 6, 'total')"),
        ]
    )
    nb["cells"][3].setdefault("metadata", {})["tags"] = [hidden.TAG]
    return nb


def _student():
    copy, _ = strip.strip_notebook(_instructor())
    return copy


def test_strip_leaves_a_hidden_check_out_of_the_student_copy():
    copy = _student()
    sources = [notebook.source_text(c) for c in copy["cells"]]
    # a check cell keeps its code under a first line naming its exercise (strip.py)
    assert not any(HIDDEN in s for s in sources)
    assert "# Checks Exercise 1; leave this cell as it is\n" + VISIBLE in sources
    assert len(copy["cells"]) == 6
    ids = [c["metadata"].get("nbgrader", {}).get("grade_id") for c in copy["cells"]]
    assert ids == [
        None,
        "exercise-1-solution",
        "exercise-1-check-1",  # the hidden one was numbered check-2 before it went
        None,
        "exercise-2-solution",
        "exercise-2-check-1",
    ]


def test_restore_puts_the_hidden_check_back_after_the_cell_before_it():
    copy = _student()
    assert hidden.restore(copy, _instructor()) == 1
    back = copy["cells"][3]
    assert notebook.source_text(back) == HIDDEN
    assert back["metadata"]["nbgrader"]["grade_id"] == "exercise-1-check-2"
    assert back["metadata"]["tinygrad_edu"] == {"exercise": "Exercise 1"}
    assert hidden.restore(copy, _instructor()) == 0  # already there: not twice


def test_restore_finds_its_place_by_grade_id_when_cell_ids_changed():
    copy = _student()
    for cell in copy["cells"]:
        cell["id"] = "renamed-" + str(id(cell))  # another editor gave new cell ids
    source = _instructor()
    assert hidden.restore(copy, source) == 1
    assert notebook.source_text(copy["cells"][3]) == HIDDEN


@pytest.mark.slow
@pytest.mark.notebooks
def test_grade_with_the_source_runs_the_hidden_check(tmp_path, capsys):
    pytest.importorskip("nbclient")
    copy = _student()
    copy["cells"][1]["source"] = GAMED
    notebook.write(copy, tmp_path / "ana.ipynb")
    notebook.write(_instructor(), tmp_path / "instructor.ipynb")
    runs = {}
    for name, extra in (("visible only", []), ("with source", ["--source"])):
        args = ["lesson", "grade", str(tmp_path / "ana.ipynb"), "--json"]
        if extra:
            args += ["--source", str(tmp_path / "instructor.ipynb")]
        assert main(args) == 0
        runs[name] = json.loads(capsys.readouterr().out)[0]
    # without the instructor's copy the gamed answer earns the point it was written for
    assert runs["visible only"]["exercises"][0]["points"] == 1.0
    assert runs["visible only"]["max_points"] == 2.0
    gamed = runs["with source"]["exercises"][0]
    assert (gamed["points"], gamed["max_points"], gamed["status"]) == (1.0, 2.0, "failed")
    assert gamed["detail"] == "AssertionError: check: cube(-3) is 8, expected -27"
    assert runs["with source"]["max_points"] == 3.0
