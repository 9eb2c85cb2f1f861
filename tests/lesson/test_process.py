"""run_script: lessons 9 and 16 run a deployment script in a new Python process; in the
browser, which has none, in the kernel's interpreter with fresh modules. Both ways are
run here on the same scripts and must print the same."""

import os
import subprocess
import sys

import pytest

import tinygrad_edu as tg
from tinygrad_edu.lesson import process

# what the lessons' deployment scripts ask of their process, and where it is
PROBE = """
import os, sys
import numpy as np
import tinygrad_edu as tg

np.save("out.npy", np.arange(3))
print("cwd:", os.path.basename(os.getcwd()), "argv:", sys.argv[1:], "name:", __name__)
print("notebook's class here:", "MLP" in globals())
print("layer code imported:", any(m.startswith("tinygrad_edu.nn") for m in sys.modules))
print("a fresh tinygrad_edu:", not hasattr(tg, "notebook_mark"))
"""
ONE = "cwd: job argv: ['a', 'b'] name: __main__\n"


class MLP:  # a class of the notebook's, which the script must not see
    pass


@pytest.fixture
def job(tmp_path):
    folder = tmp_path / "job"
    folder.mkdir()
    (folder / "probe.py").write_text(PROBE)
    return folder


def test_in_this_interpreter_prints_what_a_new_process_prints(job, monkeypatch):
    tg.nn.Linear(2, 2)  # the notebook has loaded the layer code
    monkeypatch.setattr(tg, "notebook_mark", True, raising=False)
    here, kept = os.getcwd(), sys.modules["tinygrad_edu"]
    native = process.run_script("probe.py", str(job), "a", "b")
    (job / "out.npy").unlink()
    inside = process.run_in_this_interpreter("probe.py", str(job), "a", "b")
    assert native.stdout.startswith(ONE)
    assert inside.stdout == native.stdout
    assert inside.stdout.splitlines()[1:] == [
        "notebook's class here: False",
        "layer code imported: False",
        "a fresh tinygrad_edu: True",
    ]
    assert (job / "out.npy").is_file() and inside.returncode == 0
    assert inside.args == [sys.executable, "probe.py", "a", "b"] == native.args
    # the notebook's modules, folder and argv are back as they were
    assert sys.modules["tinygrad_edu"] is kept and "tinygrad_edu.nn" in sys.modules
    assert os.getcwd() == here and tg.notebook_mark is True


@pytest.mark.parametrize(
    "body, code, said",
    [
        ("raise ValueError('no model file')", 1, "ValueError: no model file"),
        ("import sys; sys.exit(3)", 3, ""),
        ("import sys; sys.exit('cannot deploy')", 1, "cannot deploy"),
    ],
)
def test_a_failing_script_raises_as_subprocess_run_with_check_does(job, body, code, said):
    (job / "bad.py").write_text(body + "\n")
    for run in (process.run_script, process.run_in_this_interpreter):
        with pytest.raises(subprocess.CalledProcessError) as err:
            run("bad.py", str(job))
        assert err.value.returncode == code, run
        assert said in err.value.stderr, (run, err.value.stderr)


def test_in_the_browser_run_script_uses_this_interpreter(job, monkeypatch):
    monkeypatch.setattr(process, "IN_BROWSER", True)
    monkeypatch.setattr(subprocess, "run", None)  # no processes there
    assert process.run_script("probe.py", str(job), "a", "b").stdout.startswith(ONE)
