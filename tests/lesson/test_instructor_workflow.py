"""docs/instructor_workflow.md, done: its commands, in its order, on a fresh folder.

The commands are read from the page's ```bash blocks, so the page cannot drift from
what works. Between them the test plays the learners: ana writes the solution, ben
hands in the copy untouched.
"""

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tinygrad_edu.lesson import notebook

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "instructor_workflow.md").read_text(encoding="utf-8")


def _blocks(kind: str) -> list[str]:
    return re.findall(rf"^```{kind}\n(.*?)^```", PAGE, flags=re.S | re.M)


def _commands() -> list[str]:
    return [line for block in _blocks("bash") for line in block.splitlines() if line.strip()]


def _run(line: str, cwd: Path) -> subprocess.CompletedProcess:
    words = shlex.split(line)
    assert words[0] == "tinygrad-edu", line
    return subprocess.run(
        [sys.executable, "-m", "tinygrad_edu", *words[1:]],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_page_walks_through_write_check_release_grade():
    verbs = [shlex.split(c)[1:3] for c in _commands()]
    assert verbs == [
        ["lesson", "new"],
        ["lesson", "run"],
        ["lesson", "check"],
        ["lesson", "strip"],
        ["lesson", "check"],
        ["lesson", "grade"],
        ["lesson", "grade"],
    ]
    assert [h for h in re.findall(r"^## (.+)$", PAGE, flags=re.M)] == [
        "1. Write",
        "2. Run and check",
        "3. Release a student copy",
        "4. Grade",
    ]


@pytest.mark.slow
@pytest.mark.notebooks
def test_the_instructor_workflow_end_to_end(tmp_path):
    pytest.importorskip("nbclient")
    pytest.importorskip("nbval")
    commands = iter(_commands())

    def step(expect_rc: int = 0) -> subprocess.CompletedProcess:
        line = next(commands)
        proc = _run(line, tmp_path)
        assert proc.returncode == expect_rc, f"{line}\n{proc.stdout[-3000:]}\n{proc.stderr}"
        assert "\x1b[" not in proc.stdout  # piped: plain text
        return proc

    # 1. write
    step()
    lesson = tmp_path / "course" / "12_my_topic.ipynb"
    assert lesson.is_file()
    # 2. run and check
    step()
    assert notebook.read(lesson)["cells"][1]["execution_count"] == 1
    proc = step()
    assert "passed" in proc.stdout and "failed" not in proc.stdout
    # 3. release: the copy has no solution, and its check fails gracefully
    step()
    released = tmp_path / "release" / "12_my_topic.ipynb"
    assert "return x ** 3" not in released.read_text()
    assert "ok: it runs, and every check fails with a message" in step().stdout

    # the learners: ana solves the exercise, ben hands in the copy as it was
    for learner in ("ana", "ben"):
        nb = notebook.read(released)
        if learner == "ana":
            cell = next(c for c in nb["cells"] if "YOUR CODE HERE" in notebook.source_text(c))
            cell["source"] = "def cube(x):\n    return x * x * x\n"
        (tmp_path / "submissions" / learner).mkdir(parents=True)
        notebook.write(nb, tmp_path / "submissions" / learner / "12_my_topic.ipynb")

    # 4. grade, as a table and as JSON
    table = step().stdout
    ana, ben = table.strip().split("\n\n")
    assert ana.splitlines()[0] == "submissions/ana/12_my_topic.ipynb"
    assert ana.splitlines()[2].split() == ["Exercise", "1", "1/1", "passed"]
    assert ben + "\n" == _blocks("text")[0]  # the page shows ben's table as it is
    results = json.loads(step().stdout)
    assert [(r["notebook"], r["points"], r["max_points"]) for r in results] == [
        ("submissions/ana/12_my_topic.ipynb", 1.0, 1.0),
        ("submissions/ben/12_my_topic.ipynb", 0.0, 1.0),
    ]
    assert results[1]["exercises"][0]["status"] == "not finished"
    assert next(commands, None) is None
