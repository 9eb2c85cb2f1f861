"""`lesson strip`: no solution code survives, stubs keep indentation, nothing is overwritten."""

import ast
import json
import re
from pathlib import Path

import nbformat
import pytest

from tinygrad_edu.lesson import notebook
from tinygrad_edu.lesson.cli import main
from tinygrad_edu.lesson.strip import StripError, strip_file, strip_source

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"

SOLVED = """\
def relu(x):
    ### BEGIN SOLUTION
    secret_one = x * (x > 0)
    return secret_one
    ### END SOLUTION

class Square:
    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        (secret_two,) = ctx.saved_tensors
        return grad_output * 2 * secret_two
        ### END SOLUTION
"""


def _python(text):
    """Cell source without IPython magics, so `ast.parse` can check it."""
    return "\n".join(
        "pass" if line.lstrip().startswith(("%", "!")) else line for line in text.splitlines()
    )


def _solution_lines(text):
    """The lines inside solution regions (markers excluded)."""
    inside, out = False, []
    for line in text.splitlines():
        if "BEGIN SOLUTION" in line:
            inside = True
        elif "END SOLUTION" in line:
            inside = False
        elif inside and line.strip():
            out.append(line.strip())
    return out


def _solved_notebook(tmp_path):
    nb = notebook.new_notebook(
        [
            ("markdown", "# Title"),
            ("code", SOLVED),
            ("markdown", "Why?\n### BEGIN SOLUTION\nsecret_three because\n### END SOLUTION\n"),
            ("code", "x = 1\nx"),
        ]
    )
    nb["cells"][3]["outputs"] = [
        {
            "output_type": "execute_result",
            "execution_count": 4,
            "data": {"text/plain": "secret_four"},
            "metadata": {},
        }
    ]
    nb["cells"][3]["execution_count"] = 4
    nb["metadata"]["widgets"] = {"state": {"secret_five": 1}}
    src = tmp_path / "solved.ipynb"
    notebook.write(nb, src)
    return src


def test_strip_source_replaces_each_region_at_its_indentation():
    out, n = strip_source(SOLVED)
    assert n == 2
    assert (
        out
        == """\
def relu(x):
    # YOUR CODE HERE
    raise NotImplementedError

class Square:
    @staticmethod
    def backward(ctx, grad_output):
        # YOUR CODE HERE
        raise NotImplementedError
"""
    )
    ast.parse(out)


def test_strip_source_without_trailing_newline_and_without_regions():
    assert strip_source("### BEGIN SOLUTION\ny = 2\n### END SOLUTION") == (
        "# YOUR CODE HERE\nraise NotImplementedError",
        1,
    )
    assert strip_source("y = 2\n") == ("y = 2\n", 0)


@pytest.mark.parametrize(
    "text, msg",
    [
        ("### BEGIN SOLUTION\ny = 1\n", "cell, line 1: BEGIN SOLUTION is never closed"),
        ("y = 1\n### END SOLUTION\n", "cell, line 2: END SOLUTION without a ### BEGIN SOLUTION"),
        (
            "### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION\n",
            "cell, line 2: BEGIN SOLUTION inside the region opened at line 1",
        ),
    ],
)
def test_unbalanced_markers_are_refused(text, msg):
    with pytest.raises(StripError, match=re.escape(msg)):
        strip_source(text)


def test_strip_file_removes_solutions_outputs_and_widget_state(tmp_path):
    src = _solved_notebook(tmp_path)
    dest = tmp_path / "student.ipynb"
    assert strip_file(src, dest) == 3
    raw = dest.read_text()
    assert "secret" not in raw  # solutions, outputs and widget state all gone
    nb = nbformat.read(dest, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None
            ast.parse(_python(cell.source))
    assert nb.cells[2].source == "Why?\nYOUR ANSWER HERE\n"
    assert "secret" in src.read_text()  # the instructor copy is untouched


def test_strip_refuses_to_overwrite_the_source_or_an_existing_dest(tmp_path, capsys):
    src = _solved_notebook(tmp_path)
    before = src.read_text()
    assert main(["lesson", "strip", str(src), str(src)]) == 1
    assert "must not overwrite the source notebook" in capsys.readouterr().err
    # the same file through another spelling of the path
    assert main(["lesson", "strip", str(src), str(tmp_path / "." / "solved.ipynb"), "--force"]) == 1
    assert src.read_text() == before

    dest = tmp_path / "student.ipynb"
    dest.write_text("keep me")
    assert main(["lesson", "strip", str(src), str(dest)]) == 1
    assert "already exists; pass --force" in capsys.readouterr().err
    assert dest.read_text() == "keep me"
    assert main(["lesson", "strip", str(src), str(dest), "--force"]) == 0
    assert "3 solution regions removed" in capsys.readouterr().out
    assert json.loads(dest.read_text())["nbformat"] == 4


def test_strip_into_a_folder_keeps_the_file_name(tmp_path):
    src = _solved_notebook(tmp_path)
    (tmp_path / "student").mkdir()
    assert main(["lesson", "strip", str(src), str(tmp_path / "student")]) == 0
    assert "secret" not in (tmp_path / "student" / "solved.ipynb").read_text()
    # the folder the source lives in is the source itself: refused
    assert main(["lesson", "strip", str(src), str(tmp_path), "--force"]) == 1


def test_unbalanced_notebook_writes_nothing(tmp_path, capsys):
    nb = notebook.new_notebook([("code", "x = 1"), ("code", "### BEGIN SOLUTION\ny = 2\n")])
    src = tmp_path / "bad.ipynb"
    notebook.write(nb, src)
    assert main(["lesson", "strip", str(src), str(tmp_path / "out.ipynb")]) == 1
    assert capsys.readouterr().err == (
        "lesson strip: cell 2, line 1: BEGIN SOLUTION is never closed; "
        "add ### END SOLUTION after the solution\n"
    )
    assert not (tmp_path / "out.ipynb").exists()


LESSONS = sorted(NOTEBOOKS.glob("[0-9][0-9]*_*.ipynb"))


@pytest.mark.parametrize("path", LESSONS, ids=[p.stem for p in LESSONS])
def test_every_lesson_strips_clean(path, tmp_path):
    original = nbformat.read(path, as_version=4)
    solutions = [line for cell in original.cells for line in _solution_lines(cell.source)]
    assert solutions, f"{path.name} has no exercise with a solution region"
    dest = tmp_path / path.name
    strip_file(path, dest)
    stripped = nbformat.read(dest, as_version=4)
    nbformat.validate(stripped)
    assert len(stripped.cells) == len(original.cells)
    for cell in stripped.cells:
        assert "SOLUTION" not in cell.source
        if cell.cell_type == "code":
            assert cell.outputs == []
            ast.parse(_python(cell.source))
    code_lines = {line.strip() for cell in stripped.cells for line in cell.source.splitlines()}
    # a solution line may legitimately repeat elsewhere (e.g. `return y`), so count
    # only the lines that appear nowhere outside the solution regions of the original
    outside = {line.strip() for cell in original.cells for line in _outside_solutions(cell.source)}
    leaked = [s for s in solutions if s in code_lines and s not in outside]
    assert leaked == []


def _outside_solutions(text):
    inside = False
    for line in text.splitlines():
        if "BEGIN SOLUTION" in line:
            inside = True
        elif "END SOLUTION" in line:
            inside = False
        elif not inside:
            yield line
