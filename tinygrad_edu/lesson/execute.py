"""Run a notebook in a fresh kernel of this Python, and keep the machine out of its outputs.

`lesson run`, `lesson check --student` and `lesson grade` execute notebooks here, with
nbclient (imported when a notebook runs, so the CLI starts with the standard library
only). The kernel is always this interpreter's ipykernel, never whatever kernelspec
named `python3` comes first on the Jupyter path (another environment's would run
another tinygrad_edu).

A saved notebook travels: to learners, to Binder, into git. IPython's tracebacks name
the files of every frame (`/home/ana/.venv/lib/python3.11/site-packages/...`), so
`scrub_paths` rewrites them relative to the folder Python imports them from
(`tinygrad_edu/core/tensor.py`). nbval never compares tracebacks, so this changes no
check; outputs nbval does compare are only reported (`machine_paths`), because
rewriting them would make the next run differ.
Lesson layer: standard library at import time.
"""

from __future__ import annotations

import json
import os
import re
import sys
import sysconfig
from pathlib import Path
from typing import Any

# a path of the machine that ran the notebook: an absolute path under a usual root, a
# packages folder, or a Windows drive
_MACHINE_PATH = re.compile(
    r"(?<![\w.~/-])/(?:work|root|home|Users|usr|opt|tmp|var|private|srv|mnt|nix)/[^\s'\"]*"
    # a match starts where a word starts: from anywhere inside one, the search would scan
    # the rest of the word again at every position (minutes on a lesson's base64 PNG)
    r"|(?<![^\s'\"])[^\s'\"]*[/\\](?:site|dist)-packages[/\\][^\s'\"]*"
    r"|\b[A-Za-z]:\\[^\s'\"]*"
)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")  # IPython colours a traceback's file names
_PACKAGES_DIR = re.compile(r"(?:[A-Za-z]:)?[^\s'\":]*[/\\](?:site|dist)-packages[/\\]")


class KernelError(RuntimeError):
    """The kernel died, or a cell ran out of time, while a notebook was executed."""


class CellError(RuntimeError):
    """A cell raised although it was not allowed to (no `raises-exception` tag)."""


def _import_roots(folder: Path | None) -> list[str]:
    """Folders whose prefix can go: the notebook's, Python's import roots, the home folder."""
    roots = [p for p in sys.path if p and os.path.isabs(p)]
    roots += [p for p in sysconfig.get_paths().values() if p]
    roots.append(str(Path(__file__).resolve().parents[2]))  # where tinygrad_edu was imported
    if folder is not None:
        roots.append(str(folder.resolve()))
    # longest first, so site-packages wins over the prefix that holds it
    return sorted({os.path.normpath(r) + os.sep for r in roots}, key=len, reverse=True)


def scrub_text(text: str, folder: Path | None = None) -> str:
    """`text` with the machine's folders cut from every path (see the module docstring).

    Example:
        >>> import tinygrad_edu, os
        >>> pkg = os.path.dirname(tinygrad_edu.__file__)
        >>> scrub_text(f"File {pkg}{os.sep}core{os.sep}tensor.py:12, in backward")
        'File tinygrad_edu/core/tensor.py:12, in backward'
    """
    for root in _import_roots(folder):
        text = text.replace(root, "")
    text = _PACKAGES_DIR.sub("", text)  # another environment's packages
    home = os.path.expanduser("~")
    if home not in ("~", os.sep):
        text = text.replace(home + os.sep, "~" + os.sep)
    return text.replace(os.sep, "/") if os.sep != "/" else text


def scrub_paths(nb: dict, folder: Path | None = None) -> int:
    """Cut the machine's folders from every traceback in `nb`; returns the lines changed."""
    changed = 0
    for cell in nb.get("cells", []):
        for out in cell.get("outputs", []):
            if out.get("output_type") != "error":
                continue
            lines = out.get("traceback", [])
            scrubbed = [scrub_text(line, folder) for line in lines]
            changed += sum(a != b for a, b in zip(lines, scrubbed))
            out["traceback"] = scrubbed
    return changed


def _output_texts(out: dict) -> list[str]:
    texts = []
    for key in ("text", "evalue"):
        value = out.get(key)
        texts.append("".join(value) if isinstance(value, list) else value or "")
    for value in out.get("data", {}).values():
        if isinstance(value, (str, list)):
            texts.append("".join(value) if isinstance(value, list) else value)
    texts.extend(out.get("traceback", []))
    return texts


def machine_paths(nb: dict) -> list[tuple[int, str]]:
    """`(cell number from 1, path)` for every machine path still in a saved output."""
    found: list[tuple[int, str]] = []
    for number, cell in enumerate(nb.get("cells", []), start=1):
        for out in cell.get("outputs", []):
            for text in _output_texts(out):
                text = _ANSI.sub("", text)
                found.extend((number, m.group(0)) for m in _MACHINE_PATH.finditer(text))
    return found


# NOTE: numpy's BLAS starts one thread per core for every matmul. On a machine whose
# cores are busy (a CI runner, several kernels at once) the threads wait for each other:
# lesson 8a's (64, 128) @ (128, 128) took 10 ms instead of 0.17 ms, and the lesson 38 s
# instead of 21 s. The lessons' matrices are small, so one thread is as fast on an idle
# machine, and a lesson's run time and timing cells stay steady. A value set outside wins.
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def kernel_env(grading: bool = False) -> dict:
    """The environment variables a lesson's kernel gets on top of this process's; a
    grading kernel lets an unanswered exercise raise (`unanswered.GRADING_ENV`)."""
    env = {name: os.environ.get(name, "1") for name in BLAS_THREADS}
    if grading:
        from .unanswered import GRADING_ENV

        env[GRADING_ENV] = "1"
    return env


def _kernel_manager(grading: bool = False) -> Any:
    from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
    from jupyter_client.manager import KernelManager

    class ThisPython(KernelSpecManager):
        # every kernel name means this interpreter's ipykernel (as nbval --nbval-current-env)
        def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
            return KernelSpec(
                argv=[sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                display_name="Python 3 (this environment)",
                language="python",
                env=kernel_env(grading),
            )

    return KernelManager(kernel_name="python3", kernel_spec_manager=ThisPython())


def missing_tools_message(what: str) -> str:
    return (
        f"{what} needs nbclient and ipykernel: "
        'python -m pip install "tinygrad_edu[dev]" (or: pip install nbclient ipykernel)'
    )


def execute(
    nb: dict,
    folder: Path,
    timeout: float = 120.0,
    allow_errors: bool = False,
    grading: bool = False,
) -> dict:
    """Run every cell of `nb` (a notebook dict) top to bottom in a fresh kernel; returns it.

    Rules: the kernel starts in `folder` (files the lesson opens are found there); a cell
    tagged `raises-exception` may fail, and with `allow_errors` any cell may (grading).
    With `grading`, an unanswered exercise's stub raises as in nbgrader, instead of
    showing a one-line note (what a learner's kernel does, `unanswered.py`).
    A cell that runs longer than `timeout` seconds stops the run (`KernelError`): an
    interrupt does not reach a kernel that was started with SIGINT ignored (from a
    background job), and a grader must never hang. Outputs and execution counts are
    replaced; no per-cell timing is recorded (it would change on every run).

    Raises:
        ImportError: nbclient is not installed (the message says what to install).
        KernelError: the kernel died, or a cell ran longer than `timeout`.
        CellError: a cell failed that was not allowed to (the message names it).
    """
    try:
        import nbclient
        import nbformat
    except ImportError:
        raise ImportError(missing_tools_message("running a notebook")) from None
    node = nbformat.reads(json.dumps(nb), as_version=4)  # sources as strings, as nbclient wants
    client = nbclient.NotebookClient(
        node,
        km=_kernel_manager(grading),
        timeout=timeout,
        allow_errors=allow_errors,
        interrupt_on_timeout=False,
        record_timing=False,
        resources={"metadata": {"path": str(folder)}},
    )
    try:
        client.execute()
    except nbclient.exceptions.DeadKernelError as e:
        raise KernelError(f"the kernel died: {e}") from None
    except nbclient.exceptions.CellTimeoutError:
        raise KernelError(f"a cell ran longer than {timeout:g} s") from None
    except nbclient.exceptions.CellExecutionError as e:
        raise CellError(_failed_cell(node, e)) from None
    return json.loads(nbformat.writes(node))  # a plain dict again, as `notebook.read` gives


def _failed_cell(node: Any, error: Any) -> str:
    for number, cell in enumerate(node.cells, start=1):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error" and "raises-exception" not in cell.get(
                "metadata", {}
            ).get("tags", []):
                first = (cell.source.strip().splitlines() or [""])[0]
                return f"cell {number} ({first[:60]!r}) raised {out.ename}: {out.evalue}"
    return f"a cell raised {getattr(error, 'ename', 'an error')}: {getattr(error, 'evalue', '')}"
