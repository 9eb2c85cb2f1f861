"""binder/ follows repo2docker's conventions and installs the package as README.md does."""

import os
import re
import shlex
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BINDER = ROOT / "binder"


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"^```bash\n(.*?)^```", text, flags=re.S | re.M).group(1)
    return block.strip().splitlines()


def _editable_target(words: list[str]) -> str:
    """The `-e TARGET` of a pip command line or requirements line, normalised."""
    i = words.index("-e")
    return words[i + 1].replace(" ", "")


def test_binder_installs_what_readmes_first_command_installs():
    first = shlex.split(_readme_commands()[0])
    readme = _editable_target(first[first.index("install") : first.index("&&")])
    lines = [
        line.strip()
        for line in (BINDER / "requirements.txt").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert lines == [f"-e {readme}"], (lines, readme)
    assert readme == ".[lessons]"  # the extra that brings JupyterLab and graphviz-pure


def test_binder_needs_no_system_graphviz():
    # graphviz-pure (in the lessons extra) draws, and nbval compares drawings whatever drew
    apt = BINDER / "apt.txt"
    assert not apt.exists() or "graphviz" not in apt.read_text()
    pyproject = (ROOT / "pyproject.toml").read_text()
    lessons = re.search(r"^lessons = \[(.*?)\]", pyproject, flags=re.M).group(1)
    assert '"graphviz-pure' in lessons


def test_binder_files_are_the_ones_repo2docker_reads():
    known = {
        "requirements.txt",
        "runtime.txt",
        "postBuild",
        "apt.txt",
        "environment.yml",
        "start",
        "install.R",
        "Project.toml",
        "setup.py",
        "default.nix",
    }
    assert {p.name for p in BINDER.iterdir()} <= known
    runtime = (BINDER / "runtime.txt").read_text().strip()
    major, minor = re.fullmatch(r"python-(\d+)\.(\d+)", runtime).groups()
    needs = re.search(
        r'requires-python = ">=(\d+)\.(\d+)"', (ROOT / "pyproject.toml").read_text()
    ).groups()
    assert (int(major), int(minor)) >= tuple(map(int, needs))
    post = BINDER / "postBuild"
    assert post.stat().st_mode & 0o111, "repo2docker runs postBuild only when executable"
    assert post.read_text().startswith("#!/bin/bash\n") and "\nset -e\n" in post.read_text()


def test_binder_start_gives_one_blas_thread_and_runs_jupyter():
    # repo2docker runs `start` with the server's command as its arguments: it must hand on
    # to them (exec "$@"), or Binder never starts JupyterLab
    start = BINDER / "start"
    assert start.stat().st_mode & 0o111, "repo2docker runs start only when executable"
    text = start.read_text()
    assert text.startswith("#!/bin/bash\n") and text.rstrip().endswith('exec "$@"')
    env = subprocess.run(
        ["bash", str(start), "env"],
        env={"PATH": os.environ["PATH"]},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        assert f"{name}=1" in env
