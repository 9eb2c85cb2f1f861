"""`run_script`: run a lesson's script in another Python process, or as near as a browser gets.

Lessons 9 and 16 test an exported model where its code does not exist: a script that
has only numpy and tinygrad_edu, run by a new Python process, must give the same
outputs. A browser has no processes (the JupyterLite kernel is Pyodide, in a web
worker), so there the script runs in the kernel's own interpreter with what a new
process starts from:

- its own `__main__` namespace (no class or variable of the notebook's);
- tinygrad_edu imported afresh: the notebook's copy, with every submodule the lesson
  loaded (the layers in `tinygrad_edu.nn`, ...), is set aside while the script runs
  and put back after, so the script sees only what its own imports load;
- the given folder as working directory, the script's folder first on `sys.path`, its
  own `sys.argv`;
- its output captured, and its exit status: an exception or a nonzero `sys.exit`
  raises `subprocess.CalledProcessError`, as `subprocess.run(..., check=True)` does.

What it shares with the notebook there: other packages already imported (numpy: the
same code a new process would load) and numpy's global random generator.
Lesson layer: standard library only.
"""

from __future__ import annotations

import contextlib
import io
import os
import runpy
import subprocess
import sys
import traceback
from types import ModuleType

IN_BROWSER = sys.platform == "emscripten"  # Pyodide: no process can start


def run_script(script: str, cwd: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`python script args...` run in the folder `cwd`; its output as text.

    A new process (`subprocess.run`) on a computer; in the browser, which has none, the
    script runs in this interpreter with fresh modules (`run_in_this_interpreter`).

    Raises:
        subprocess.CalledProcessError: the script failed; its `stderr` holds the traceback.
    """
    if IN_BROWSER:
        return run_in_this_interpreter(script, cwd, *args)
    return subprocess.run(
        [sys.executable, script, *args], cwd=cwd, capture_output=True, text=True, check=True
    )


def _ours() -> dict[str, ModuleType]:
    return {
        n: m for n, m in sys.modules.items() if n == "tinygrad_edu" or n.startswith("tinygrad_edu.")
    }


def run_in_this_interpreter(script: str, cwd: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`script` run as a new process would run it, in this interpreter (the module's doc)."""
    cmd = [sys.executable, script, *args]
    out, err = io.StringIO(), io.StringIO()
    kept = _ours()
    here, argv, path = os.getcwd(), sys.argv[:], sys.path[:]
    for name in kept:
        del sys.modules[name]
    code = 0
    try:
        os.chdir(cwd)
        sys.argv = [script, *args]
        sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                runpy.run_path(script, run_name="__main__")
            except SystemExit as e:  # sys.exit(n), or sys.exit("why"): printed, status 1
                if isinstance(e.code, int) or e.code is None:
                    code = e.code or 0
                else:
                    print(e.code, file=sys.stderr)
                    code = 1
            except Exception:
                traceback.print_exc()  # what python prints before it exits with 1
                code = 1
    finally:
        for name in _ours():  # the script's own tinygrad_edu, then the notebook's again
            del sys.modules[name]
        sys.modules.update(kept)
        os.chdir(here)
        sys.argv, sys.path[:] = argv, path
    if code:
        raise subprocess.CalledProcessError(code, cmd, out.getvalue(), err.getvalue())
    return subprocess.CompletedProcess(cmd, 0, out.getvalue(), err.getvalue())
