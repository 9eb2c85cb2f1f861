"""The `tinygrad-edu` command: --help texts, `lesson new`, `lesson check`."""

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tinygrad_edu.lesson import cli, notebook
from tinygrad_edu.lesson.cli import main
from tinygrad_edu.lesson.template import title_of

ROOT = Path(__file__).resolve().parents[2]


def _run(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "tinygrad_edu", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


@pytest.mark.parametrize(
    "args, words",
    [
        ([], ["tinygrad-edu", "lesson"]),
        (["lesson"], ["new", "run", "check", "strip", "grade"]),
        (["lesson", "new"], ["NAME", "--dir", "Never overwrites", "two digits"]),
        (["lesson", "run"], ["PATH", "--timeout", "raises-exception", "no folder of this machine"]),
        (
            ["lesson", "strip"],
            [
                "SRC",
                "DEST",
                "# YOUR CODE HERE",
                "raise NotImplementedError",
                "Refuses to write over SRC",
                "nbgrader cell metadata",
            ],
        ),
        (
            ["lesson", "check"],
            [
                "PATH",
                "--nbval-current-env",
                "--sanitize-with",
                "--student",
                "pytest's exit code",
                "never executed",
            ],
        ),
        (["lesson", "grade"], ["SUBMISSION", "--json", "--source", "--timeout", "per exercise"]),
        (
            ["lessons"],
            [
                "DEST",
                "my_lessons",
                "--no-open",
                "--from",
                "never overwritten",
                "JUPYTER_OPTION",
                "--allow-root",
                "goes to JupyterLab",
            ],
        ),
        (["site"], ["build", "JupyterLite", "nothing", "docs/jupyterlite.md"]),
        (
            ["site", "build"],
            ["OUT", "--pyodide-packages", "--cache", "sha256", "site_pins.json", "npm"],
        ),
    ],
)
def test_help_on_each_command(args, words):
    proc = _run(*args, "--help")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: tinygrad-edu")
    text = " ".join(proc.stdout.split())  # argparse wraps lines
    for word in words:
        assert word in text
    # every command ends with a runnable example of itself
    example = proc.stdout.split("\nexample:\n", 1)[1].splitlines()
    assert example and all(line.startswith("  tinygrad-edu ") for line in example)
    assert any(line.split()[: len(args) + 1] == ["tinygrad-edu", *args] for line in example)


def test_no_command_prints_usage_and_fails():
    proc = _run("lesson")
    assert proc.returncode == 2
    assert "usage: tinygrad-edu lesson" in proc.stderr


@pytest.mark.parametrize(
    "name, title",
    [
        ("11_my_topic", "Lesson 11: My topic"),
        ("03_static_vs_dynamic", "Lesson 3: Static vs dynamic"),
        ("03a_static_vs_dynamic", "Lesson 3a: Static vs dynamic"),
        ("attention", "Attention"),
    ],
)
def test_title_of(name, title):
    assert title_of(name) == title


@pytest.mark.parametrize(
    "name",
    [
        "attention",
        "1_attention",
        "123_attention",
        "12-attention",
        "12_Attention",
        "12_",
        "12_my topic",
        "12__x",
        "12_2d",
        "03ab_x",
        "03A_x",
    ],
)
def test_new_refuses_names_that_are_not_nn_words(tmp_path, capsys, name):
    assert main(["lesson", "new", name, "--dir", str(tmp_path)]) == 1
    assert capsys.readouterr().err == (
        f"lesson new: lesson name {name!r} should look like 12_attention: two digits (its "
        "place in the course, with a letter for a part of a split lesson: 03a), an "
        "underscore, then lowercase words joined by underscores\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_new_refuses_existing_files(tmp_path, capsys):
    assert main(["lesson", "new", "11_topic.ipynb", "--dir", str(tmp_path)]) == 0
    path = tmp_path / "11_topic.ipynb"
    before = path.read_text()
    assert main(["lesson", "new", "11_topic", "--dir", str(tmp_path)]) == 1
    assert "already exists" in capsys.readouterr().err
    assert path.read_text() == before


def test_new_notebook_follows_the_lesson_shape(tmp_path):
    assert main(["lesson", "new", "11_my_topic", "--dir", str(tmp_path)]) == 0
    nb = nbformat.read(tmp_path / "11_my_topic.ipynb", as_version=4)
    nbformat.validate(nb)
    sources = [c.source for c in nb.cells]
    assert sources[0].startswith("# Lesson 11: My topic\n")
    setup = sources[1]
    for line in ("import tinygrad_edu as tg", "np.random.seed(0)", "%load_ext tinygrad_edu"):
        assert line in setup.splitlines() or any(s.startswith(line) for s in setup.splitlines())
    heads = [s.splitlines()[0] for s in sources if s.startswith("#")]
    assert heads[-2:] == ["## Summary", "## Exercises"]
    assert any("### BEGIN SOLUTION" in s and "### END SOLUTION" in s for s in sources)
    assert "check_grad(" in sources[-1]  # a check cell follows the exercise
    assert all(
        c.execution_count is None and c.outputs == [] for c in nb.cells if c.cell_type == "code"
    )


def test_check_command_line_uses_the_project_sanitizer():
    cmd = cli.nbval_command(["notebooks/"])
    assert cmd[1:6] == [
        "-m",
        "pytest",
        "--nbval",
        "--nbval-current-env",
        f"--nbval-sanitize-with={cli.sanitize_config()}",
    ]
    assert cmd[-1] == "notebooks/"
    assert cli.sanitize_config().is_file()


def test_check_refuses_missing_paths(capsys):
    assert main(["lesson", "check", "no/such/lesson.ipynb"]) == 1
    assert "no such file or folder: no/such/lesson.ipynb" in capsys.readouterr().err


def _executed(tmp_path, counts, tags=None):
    nb = notebook.new_notebook(
        [("markdown", "# Lesson 12: X")] + [("code", f"x{i} = {i}") for i in range(len(counts))]
    )
    for cell, count in zip(nb["cells"][1:], counts):
        cell["execution_count"] = count
    if tags:
        nb["cells"][1]["metadata"]["tags"] = tags
    path = tmp_path / "12_x.ipynb"
    notebook.write(nb, path)
    return path


@pytest.mark.parametrize(
    "counts, problem",
    [
        (
            [None, None, None],
            "cell 2 ('x0 = 0') (and 2 more) never ran: the notebook was never "
            "executed, so nbval has no output to compare",
        ),
        ([1, None, 2], "cell 3 ('x1 = 1') never ran, so nbval has no output to compare"),
        (
            [1, 3, 2],
            "cell 3 ('x1 = 1') ran as [3] where a fresh top-to-bottom run gives [2]: its "
            "saved outputs are stale (from an earlier or out-of-order run)",
        ),
        ([4, 5, 6], "cell 2 ('x0 = 0') ran as [4] where a fresh top-to-bottom run gives [1]"),
    ],
)
def test_check_fails_a_notebook_whose_saved_outputs_are_not_a_fresh_run(
    tmp_path, capsys, counts, problem
):
    path = _executed(tmp_path, counts)
    assert main(["lesson", "check", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"lesson check: {path}: {problem}" in err
    assert "tinygrad-edu lesson run PATH" in err
    assert cli.saved_output_problems(notebook.read(path))  # and nbval never started


def test_saved_outputs_of_a_fresh_run_have_no_problems(tmp_path):
    assert cli.saved_output_problems(notebook.read(_executed(tmp_path, [1, 2, 3]))) == []
    # a cell nbval skips may stay unrun
    assert (
        cli.saved_output_problems(
            notebook.read(_executed(tmp_path, [None, 1, 2], tags=["nbval-skip"]))
        )
        == []
    )


class _Stream:
    def __init__(self, tty):
        self.tty = tty

    def isatty(self):
        return self.tty


def test_colour_only_on_a_terminal_without_no_color(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert cli.use_color(_Stream(True)) and not cli.use_color(_Stream(False))
    monkeypatch.setenv("NO_COLOR", "1")
    assert not cli.use_color(_Stream(True))


def test_check_tells_nbval_not_to_colour_piped_output(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(cli.subprocess, "call", lambda cmd: calls.append(cmd) or 0)
    path = _executed(tmp_path, [1, 2])
    assert main(["lesson", "check", str(path)]) == 0  # pytest's stdout is captured: no tty
    assert "--color=no" in calls[0]


@pytest.mark.slow
@pytest.mark.notebooks
def test_new_lesson_runs_and_passes_nbval_and_a_failing_one_fails(tmp_path):
    nbclient = pytest.importorskip("nbclient")
    assert main(["lesson", "new", "11_my_topic", "--dir", str(tmp_path)]) == 0
    path = tmp_path / "11_my_topic.ipynb"
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(
        nb, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    nbformat.write(nb, path)
    counts = [c.execution_count for c in nb.cells if c.cell_type == "code"]
    assert counts == list(range(1, len(counts) + 1))
    proc = _run("lesson", "check", str(path), "--", "-q", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "passed" in proc.stdout

    # a changed saved output must fail, and the exit code is pytest's
    cell = next(c for c in nb.cells if c.cell_type == "code" and "y = x * w" in c.source)
    for out in cell.outputs:
        if out.get("output_type") == "execute_result":
            out["data"]["text/plain"] = "tensor([9., 9., 9.])"
    nbformat.write(nb, path)
    proc = _run("lesson", "check", str(path), "--", "-q", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout[-3000:]
    assert "tensor([9., 9., 9.])" in proc.stdout


def test_lessons_writes_student_copies_and_opens_the_first(tmp_path, monkeypatch):
    # what README's first command and Binder open: no solutions, no outputs, graded checks
    ran = []
    monkeypatch.setattr(cli.subprocess, "call", lambda cmd: ran.append(cmd) or 0)
    dest = tmp_path / "mine"
    assert main(["lessons", str(dest), "--from", str(ROOT / "notebooks")]) == 0
    assert ran == [[sys.executable, "-m", "jupyter", "lab", str(dest / cli.FIRST_LESSON)]]
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb")):
        copy = nbformat.read(dest / path.name, as_version=4)
        text = "\n".join(c.source for c in copy.cells)
        assert "### BEGIN SOLUTION" not in text, path.name
        assert all(c.outputs == [] for c in copy.cells if c.cell_type == "code"), path.name
        if "### BEGIN SOLUTION" in path.read_text(encoding="utf-8"):
            assert "raise NotImplementedError" in text, path.name
            graded = [c for c in copy.cells if c.metadata.get("nbgrader", {}).get("grade")]
            assert graded, f"{path.name}: no check cell marked for grading"


@pytest.mark.parametrize(
    "words, dest, jupyter",
    [
        # the command: a root container needs --allow-root, a server a port and ip
        (
            ["--allow-root", "--port", "8899", "--ip", "0.0.0.0", "--no-browser"],
            "my_lessons",
            ["--allow-root", "--port", "8899", "--ip", "0.0.0.0", "--no-browser"],
        ),
        (
            ["course", "--port=8899", "--ServerApp.token="],
            "course",
            ["--port=8899", "--ServerApp.token="],
        ),
        (["course", "--from", "{src}", "--allow-root"], "course", ["--allow-root"]),
        (["--from={src}", "--", "--port", "9000"], "my_lessons", ["--port", "9000"]),
        (["course"], "course", []),
    ],
)
def test_lessons_passes_jupyter_options_to_jupyterlab(tmp_path, monkeypatch, words, dest, jupyter):
    ran = []
    monkeypatch.setattr(cli.subprocess, "call", lambda cmd: ran.append(cmd) or 0)
    monkeypatch.chdir(tmp_path)
    src = str(ROOT / "notebooks")
    words = [w.replace("{src}", src) for w in words]
    ours = [] if any(w.startswith("--from") for w in words) else ["--from", src]
    assert main(["lessons", *ours, *words]) == 0
    first = str(Path(dest) / cli.FIRST_LESSON)
    assert ran == [[sys.executable, "-m", "jupyter", "lab", *jupyter, first]]
    assert (tmp_path / dest / cli.FIRST_LESSON).is_file()


def test_lessons_says_when_root_needs_allow_root(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(cli.subprocess, "call", lambda cmd: 0)
    monkeypatch.setattr(cli, "_as_root", lambda: True)
    src = str(ROOT / "notebooks")
    assert main(["lessons", str(tmp_path / "a"), "--from", src]) == 0
    assert "refuses to start without --allow-root" in capsys.readouterr().err
    assert main(["lessons", str(tmp_path / "b"), "--from", src, "--allow-root"]) == 0
    assert "--allow-root" not in capsys.readouterr().err


def test_lessons_without_lessons_says_where_to_run_it(tmp_path, capsys):
    assert main(["lessons", str(tmp_path / "out"), "--no-open", "--from", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "no lesson notebooks here" in err and "repository root" in err
