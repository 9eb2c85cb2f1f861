"""The `tinygrad-edu` command: --help texts, `lesson new`, `lesson check`."""

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tinygrad_edu.lesson import cli
from tinygrad_edu.lesson.cli import main
from tinygrad_edu.lesson.template import title_of

ROOT = Path(__file__).resolve().parents[2]


def _run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "tinygrad_edu", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=120)


@pytest.mark.parametrize("args, words", [
    ([], ["tinygrad-edu", "lesson"]),
    (["lesson"], ["new", "strip", "check"]),
    (["lesson", "new"], ["NAME", "--dir", "Never overwrites"]),
    (["lesson", "strip"], ["SRC", "DEST", "# YOUR CODE HERE", "raise NotImplementedError",
                           "Refuses to write over SRC"]),
    (["lesson", "check"], ["PATH", "--nbval-current-env", "--sanitize-with",
                           "pytest's exit code"]),
])
def test_help_on_each_command(args, words):
    proc = _run(*args, "--help")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: tinygrad-edu")
    text = " ".join(proc.stdout.split())  # argparse wraps lines
    for word in words:
        assert word in text


def test_no_command_prints_usage_and_fails():
    proc = _run("lesson")
    assert proc.returncode == 2
    assert "usage: tinygrad-edu lesson" in proc.stderr


@pytest.mark.parametrize("name, title", [
    ("11_my_topic", "Lesson 11: My topic"),
    ("03_static_vs_dynamic", "Lesson 3: Static vs dynamic"),
    ("attention", "Attention"),
])
def test_title_of(name, title):
    assert title_of(name) == title


def test_new_refuses_bad_names_and_existing_files(tmp_path, capsys):
    assert main(["lesson", "new", "11 my topic", "--dir", str(tmp_path)]) == 1
    assert "should look like 11_my_topic" in capsys.readouterr().err
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
    assert all(c.execution_count is None and c.outputs == []
               for c in nb.cells if c.cell_type == "code")


def test_check_command_line_uses_the_project_sanitizer():
    cmd = cli.nbval_command(["notebooks/"])
    assert cmd[1:6] == ["-m", "pytest", "--nbval", "--nbval-current-env",
                        f"--nbval-sanitize-with={cli.sanitize_config()}"]
    assert cmd[-1] == "notebooks/"
    assert cli.sanitize_config().is_file()


def test_check_refuses_missing_paths(capsys):
    assert main(["lesson", "check", "no/such/lesson.ipynb"]) == 1
    assert "no such file or folder: no/such/lesson.ipynb" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.notebooks
def test_new_lesson_runs_and_passes_nbval_and_a_failing_one_fails(tmp_path):
    nbclient = pytest.importorskip("nbclient")
    assert main(["lesson", "new", "11_my_topic", "--dir", str(tmp_path)]) == 0
    path = tmp_path / "11_my_topic.ipynb"
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, timeout=60, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
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
