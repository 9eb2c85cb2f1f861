"""`lesson run` and the helpers behind it: a fresh kernel of this Python, no machine paths."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import tinygrad_edu
from tinygrad_edu.lesson import execute, notebook

PKG = os.path.dirname(tinygrad_edu.__file__)


@pytest.mark.parametrize(
    "text",
    [
        "File \x1b[0;32m/work/wt-11/tinygrad_edu/core/tensor.py:511\x1b[0m, in backward",
        "/home/ana/.venv/lib/python3.11/site-packages/numpy/core/fromnumeric.py:86",
        "saved to /tmp/tmpab12/model.json",
        "C:\\Users\\ana\\lesson\\model.json",
        "/opt/conda/lib/python3.12/dist-packages/IPython/core/interactiveshell.py",
    ],
)
def test_machine_paths_are_found_in_any_output(text):
    nb = {
        "cells": [
            {
                "cell_type": "code",
                "source": "",
                "outputs": [
                    {"output_type": "error", "ename": "E", "evalue": "", "traceback": [text]}
                ],
            }
        ]
    }
    assert [n for n, _ in execute.machine_paths(nb)] == [1]


@pytest.mark.parametrize(
    "text",
    [
        "tensor([1., 2.])",
        "see https://mybinder.org/v2/gh/x/y",
        "a/b/c.py",
        "~/lesson.ipynb",
        '<svg xmlns="http://www.w3.org/2000/svg">',
    ],
)
def test_ordinary_outputs_hold_no_machine_path(text):
    nb = {
        "cells": [
            {
                "cell_type": "code",
                "source": "",
                "outputs": [{"output_type": "stream", "name": "stdout", "text": text}],
            }
        ]
    }
    assert execute.machine_paths(nb) == []


def test_a_long_word_is_searched_in_linear_time():
    # a saved PNG is one base64 word of ~50,000 characters with many "/": searching it from
    # every position took lesson 10's check four minutes
    png = "iVBORw0KGgo/AAAAN+SUhEUgAA/" * 4000
    nb = {"cells": [{"outputs": [{"output_type": "display_data", "data": {"image/png": png}}]}]}
    start = time.perf_counter()
    assert execute.machine_paths(nb) == []
    assert time.perf_counter() - start < 5.0  # about 0.01 s; the old pattern took minutes


def test_scrub_cuts_import_roots_packages_folders_and_home():
    pkg_file = os.path.join(PKG, "core", "tensor.py")
    other_env = "/srv/envs/py3/lib/python3.12/site-packages/numpy/linalg.py"
    home_file = os.path.join(os.path.expanduser("~"), "notes", "x.py")
    assert execute.scrub_text(f"File {pkg_file}:12") == "File tinygrad_edu/core/tensor.py:12"
    assert execute.scrub_text(other_env) == "numpy/linalg.py"
    assert execute.scrub_text(home_file) in ("~/notes/x.py", "notes/x.py")  # home may be cwd


def test_scrub_paths_changes_tracebacks_only():
    pkg_file = os.path.join(PKG, "core", "tensor.py")
    nb = {
        "cells": [
            {
                "cell_type": "code",
                "source": "",
                "outputs": [
                    {"output_type": "stream", "name": "stdout", "text": f"{pkg_file}\n"},
                    {
                        "output_type": "error",
                        "ename": "E",
                        "evalue": f"at {pkg_file}",
                        "traceback": [f"File {pkg_file}:3", "plain line"],
                    },
                ],
            }
        ]
    }
    assert execute.scrub_paths(nb) == 1
    out = nb["cells"][0]["outputs"]
    assert out[1]["traceback"] == ["File tinygrad_edu/core/tensor.py:3", "plain line"]
    # nbval compares these, so they stay as the kernel printed them (and are reported)
    assert out[0]["text"] == f"{pkg_file}\n" and out[1]["evalue"] == f"at {pkg_file}"


def _lesson(tmp_path: Path, cells: list[tuple[str, list[str]]]) -> Path:
    nb = notebook.new_notebook([("code", src) for src, _ in cells])
    for cell, (_, tags) in zip(nb["cells"], cells):
        if tags:
            cell["metadata"]["tags"] = tags
    path = tmp_path / "01_lesson.ipynb"
    notebook.write(nb, path)
    return path


def _cli(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "tinygrad_edu", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


@pytest.mark.slow
@pytest.mark.notebooks
def test_lesson_run_saves_outputs_without_machine_paths(tmp_path):
    pytest.importorskip("nbclient")
    path = _lesson(
        tmp_path,
        [
            (f"import sys, tinygrad_edu as tg\nprint(sys.executable == {sys.executable!r})", []),
            (
                "# raises on purpose: a shape error from inside the library\n"
                "tg.tensor([1.0, 2.0]) @ tg.tensor([1.0, 2.0, 3.0])",
                ["raises-exception"],
            ),
        ],
    )
    proc = _cli("lesson", "run", str(path))
    assert proc.returncode == 0, proc.stderr
    assert "traceback line" in proc.stdout and "machine-independent" in proc.stdout
    nb = json.loads(path.read_text())
    first, second = (c["outputs"] for c in nb["cells"])
    assert first[0]["text"] == ["True\n"]  # the kernel is this interpreter
    assert second[0]["ename"] == "ShapeError"
    assert "tinygrad_edu/core/" in "".join(second[0]["traceback"])
    assert execute.machine_paths(nb) == []
    assert [c["execution_count"] for c in nb["cells"]] == [1, 2]


@pytest.mark.slow
@pytest.mark.notebooks
def test_lesson_run_names_a_failing_cell_and_writes_nothing(tmp_path):
    pytest.importorskip("nbclient")
    path = _lesson(tmp_path, [("x = 1", []), ("y = x / 0", [])])
    before = path.read_text()
    proc = _cli("lesson", "run", str(path))
    assert proc.returncode == 1
    assert "cell 2 ('y = x / 0') raised ZeroDivisionError: division by zero" in proc.stderr
    assert "nothing written" in proc.stderr
    assert path.read_text() == before


def test_a_lesson_kernel_runs_blas_on_one_thread_unless_told_otherwise(monkeypatch):
    for name in execute.BLAS_THREADS:
        monkeypatch.delenv(name, raising=False)
    assert execute.kernel_env() == dict.fromkeys(execute.BLAS_THREADS, "1")
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")
    assert execute.kernel_env()["OPENBLAS_NUM_THREADS"] == "4"
    spec = execute._kernel_manager().kernel_spec
    assert spec.env["OPENBLAS_NUM_THREADS"] == "4" and spec.env["MKL_NUM_THREADS"] == "1"
