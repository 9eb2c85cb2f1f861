"""`tinygrad-edu` (also `python -m tinygrad_edu`): the instructor's command line.

    tinygrad-edu lesson new NN_NAME [--dir notebooks]   a lesson from the template
    tinygrad-edu lesson run PATH... [--timeout S]       run top to bottom, save the outputs
    tinygrad-edu lesson check PATH... [-- ARGS]         saved outputs fresh, then nbval
    tinygrad-edu lesson strip SRC DEST [--force]        the student copy (nbgrader markers)
    tinygrad-edu lesson check --student COPY...         the copy fails its checks gracefully
    tinygrad-edu lesson grade SUBMISSION... [--json]    points per exercise
    tinygrad-edu lessons [DEST] [--no-open] [JUPYTER_OPTION...]
                                                        a learner's copies, opened in JupyterLab

docs/instructor_workflow.md puts them together. Every command's `--help` ends with an
example. Output is plain (no colour) when it goes to a pipe or a file, or when the
NO_COLOR environment variable is set. Exit codes: 0 on success, 1 when a command
refuses or finds a problem (the message says which notebook and cell), 2 for usage
errors; `lesson check` passes pytest's exit code through.
Lesson layer: standard library only at import time.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, TextIO

from . import execute, notebook, strip, template

# One sanitizer for everyone: the project's pytest config and `lesson check` both use
# the copy shipped in the package, so an installed package checks lessons the same way.
SANITIZE_CONFIG = Path(__file__).resolve().parent / "nbval_sanitize.cfg"
GREEN, RED, YELLOW, BOLD, RESET = "\x1b[32m", "\x1b[31m", "\x1b[33m", "\x1b[1m", "\x1b[0m"


def sanitize_config() -> Path:
    """The nbval sanitize file `lesson check` uses (drawings in a renderer-independent form)."""
    return SANITIZE_CONFIG


def use_color(stream: TextIO) -> bool:
    """Colour only for a terminal, and never when NO_COLOR is set (https://no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def _paint(text: str, color: str, stream: TextIO) -> str:
    return f"{color}{text}{RESET}" if use_color(stream) else text


def nbval_command(
    paths: list[str], sanitize: Path | None = None, extra: list[str] | None = None
) -> list[str]:
    """The pytest command line that checks `paths` exactly as the project's CI does."""
    cfg = sanitize or sanitize_config()
    # NOTE: `--opt=value` in one word: pytest takes any separate word that names an
    # existing file into its rootdir guess, which would pull in this repo's pytest config
    return [
        sys.executable,
        "-m",
        "pytest",
        "--nbval",
        "--nbval-current-env",
        f"--nbval-sanitize-with={cfg}",
        "-p",
        "no:cacheprovider",
        *(extra or []),
        *paths,
    ]


def _notebooks(paths: list[str], command: str) -> list[Path] | None:
    """The notebooks named by `paths` (folders give their *.ipynb); None after an error."""
    found: list[Path] = []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            found.extend(
                sorted(p for p in path.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
            )
        elif path.is_file():
            found.append(path)
        else:
            print(f"lesson {command}: no such file or folder: {name}", file=sys.stderr)
            return None
    return found


def _new(args: argparse.Namespace) -> int:
    name = args.name[: -len(".ipynb")] if args.name.endswith(".ipynb") else args.name
    try:
        nb = template.lesson_notebook(name)
    except ValueError as e:
        print(f"lesson new: {e}", file=sys.stderr)
        return 1
    dest = Path(args.dir) / f"{name}.ipynb"
    if dest.exists():
        print(
            f"lesson new: {dest} already exists; choose another NAME or delete it first",
            file=sys.stderr,
        )
        return 1
    dest.parent.mkdir(parents=True, exist_ok=True)
    notebook.write(nb, dest)
    print(f"created {dest}")
    print(
        f"next: write the lesson in JupyterLab, then `tinygrad-edu lesson run {dest}` "
        f"and `tinygrad-edu lesson check {dest}`"
    )
    return 0


def _run(args: argparse.Namespace) -> int:
    status = 0
    for name in args.paths:
        path = Path(name)
        try:
            nb = notebook.read(path)
        except (OSError, ValueError) as e:
            print(f"lesson run: {e}", file=sys.stderr)
            status = 1
            continue
        try:
            ran = execute.execute(nb, path.parent, timeout=args.timeout)
        except ImportError as e:
            print(f"lesson run: {e}", file=sys.stderr)
            return 1
        except execute.KernelError as e:
            print(f"lesson run: {path}: {e}; nothing written", file=sys.stderr)
            status = 1
            continue
        except execute.CellError as e:
            print(
                f"lesson run: {path}: {e}\n  nothing written; fix the cell, or tag a cell "
                "that raises on purpose `raises-exception`",
                file=sys.stderr,
            )
            status = 1
            continue
        scrubbed = execute.scrub_paths(ran, path.parent)
        notebook.write(ran, path)
        note = f", {scrubbed} traceback line{'s' * (scrubbed != 1)} made machine-independent"
        print(f"ran {path}{note if scrubbed else ''}")
        for number, where in execute.machine_paths(ran):
            print(
                f"lesson run: {path}: cell {number} prints a path of this machine ({where}); "
                "nbval will fail elsewhere: print a relative path",
                file=sys.stderr,
            )
            status = 1
    return status


def _strip(args: argparse.Namespace) -> int:
    dest = Path(args.dest)
    if dest.is_dir() or dest.suffix != ".ipynb":
        dest = dest / Path(args.src).name
    try:
        n = strip.strip_file(Path(args.src), dest, force=args.force)
    except (strip.StripError, ValueError, OSError) as e:
        print(f"lesson strip: {e}", file=sys.stderr)
        return 1
    print(
        f"wrote {dest}: {n} solution region{'s' * (n != 1)} removed, outputs cleared, "
        "solution and check cells marked for grading (nbgrader metadata)"
    )
    print(f"next: `tinygrad-edu lesson check --student {dest}`")
    return 0


def saved_output_problems(nb: dict) -> list[str]:
    """Why a notebook's saved outputs cannot be what a fresh top-to-bottom run gives.

    Rules: every code cell with code has run (nbval skips a cell that never ran, so a
    notebook saved unexecuted would pass), and the execution counts read 1, 2, 3, ...
    in order (a count out of order, or a first count above 1, means outputs from an
    earlier or out-of-order run). Cells tagged `nbval-skip` may stay unrun. Tracebacks
    must not name this machine's folders (`lesson run` saves them without).
    """
    problems: list[str] = []
    expected = 1
    unrun = []
    for number, cell in enumerate(nb.get("cells", []), start=1):
        if cell.get("cell_type") != "code" or not notebook.source_text(cell).strip():
            continue
        first = (notebook.source_text(cell).strip().splitlines() or [""])[0][:60]
        count = cell.get("execution_count")
        if count is None:
            if "nbval-skip" not in cell.get("metadata", {}).get("tags", []):
                unrun.append(f"cell {number} ({first!r})")
            continue
        if count != expected and not problems:
            problems.append(
                f"cell {number} ({first!r}) ran as [{count}] where a fresh top-to-bottom run "
                f"gives [{expected}]: its saved outputs are stale (from an earlier or "
                "out-of-order run)"
            )
        expected = count + 1
    if unrun:
        ran_any = expected > 1
        what = "never ran" if ran_any else "never ran: the notebook was never executed"
        more = f" (and {len(unrun) - 1} more)" if len(unrun) > 1 else ""
        problems.insert(0, f"{unrun[0]}{more} {what}, so nbval has no output to compare")
    for number, where in execute.machine_paths(nb)[:1]:
        problems.append(f"cell {number}'s output holds a path of this machine ({where})")
    return problems


def _check(args: argparse.Namespace) -> int:
    paths = _notebooks(args.paths, "check")
    if paths is None:
        return 1
    if not paths:
        print(f"lesson check: no notebooks in {', '.join(args.paths)}", file=sys.stderr)
        return 1
    if args.student:
        return _check_student(paths, args.timeout)
    status = 0
    for path in paths:
        try:
            problems = saved_output_problems(notebook.read(path))
        except (OSError, ValueError) as e:
            problems = [str(e)]
        for problem in problems:
            print(f"lesson check: {path}: {problem}", file=sys.stderr)
            status = 1
    if status:
        print(
            "lesson check: run the notebook top to bottom and save it: "
            "`tinygrad-edu lesson run PATH` (or Restart Kernel and Run All, then save)",
            file=sys.stderr,
        )
        return status
    sanitize = Path(args.sanitize_with) if args.sanitize_with else None
    extra = list(args.pytest_args)
    if not use_color(sys.stdout):  # nbval colours its reports unless told not to
        extra.insert(0, "--color=no")
    cmd = nbval_command([str(p) for p in paths], sanitize, extra)
    print("running:", " ".join(cmd[1:]), flush=True)
    return subprocess.call(cmd)


def _check_student(paths: list[Path], timeout: float) -> int:
    from .grade import student_problems

    status = 0
    for path in paths:
        try:
            problems = student_problems(notebook.read(path), path.parent, timeout=timeout)
        except (OSError, ValueError, ImportError) as e:
            problems = [str(e)]
        if problems:
            status = 1
            print(
                _paint(
                    f"{path}: {len(problems)} problem{'s' * (len(problems) != 1)}", RED, sys.stdout
                )
            )
            for problem in problems:
                print(f"  {problem}")
        else:
            print(
                _paint(f"{path}: ok", GREEN, sys.stdout) + ": it runs, and every check "
                "fails with a message until the exercise is solved"
            )
    return status


# Where learners work: the README's first command and Binder both open this folder.
STUDENT_FOLDER = "my_lessons"
FIRST_LESSON = "01_define_by_run.ipynb"


def lesson_sources(src: Path | None = None) -> Path:
    """The instructor lessons: `src`, else ./notebooks, else the checkout's notebooks/."""
    if src is not None:
        return src
    here = Path("notebooks")
    if (here / FIRST_LESSON).is_file():
        return here
    # an editable install (README's first command): the package sits in the checkout
    return Path(__file__).resolve().parents[2] / "notebooks"


def write_student_copies(src: Path, dest: Path) -> tuple[list[Path], list[Path]]:
    """Strip every lesson in `src` into `dest`; returns (written, kept).

    A copy that already exists is kept, never overwritten: it holds the learner's work,
    and running the README's command again must not erase it. The index
    (notebooks/README.md) goes along, so its links work in `dest` too.
    """
    lessons = sorted(src.glob("[0-9][0-9]*_*.ipynb"))
    if not lessons:
        raise FileNotFoundError(f"{src}: no lesson notebooks here")
    written, kept = [], []
    for path in lessons:
        target = dest / path.name
        if target.exists():
            kept.append(target)
            continue
        strip.strip_file(path, target)
        written.append(target)
    index = src / "README.md"
    if index.is_file() and not (dest / "README.md").exists():
        (dest / "README.md").write_text(index.read_text(encoding="utf-8"), encoding="utf-8")
    return written, kept


def _lessons(args: argparse.Namespace) -> int:
    src = lesson_sources(Path(args.source) if args.source else None)
    dest = Path(args.dest)
    try:
        written, kept = write_student_copies(src, dest)
    except (strip.StripError, ValueError, OSError) as e:
        print(f"lessons: {e}", file=sys.stderr)
        print("lessons: run it from the repository root, or pass --from FOLDER", file=sys.stderr)
        return 1
    print(
        f"{dest}: {len(written)} student cop{'y' if len(written) == 1 else 'ies'} written "
        f"(no solutions, no outputs), {len(kept)} already there and kept (your work)"
    )
    if args.no_open:
        if args.jupyter_args:
            print(
                f"lessons: {' '.join(args.jupyter_args)} not passed on: --no-open starts no "
                "JupyterLab",
                file=sys.stderr,
            )
        return 0
    if _as_root() and "--allow-root" not in args.jupyter_args:
        # Jupyter refuses to start as root (Docker, some classroom images) and only says
        # so in its log; the learner's fix is one option, which is theirs to choose
        print(
            "lessons: running as root, where JupyterLab refuses to start without "
            "--allow-root: `tinygrad-edu lessons --allow-root`",
            file=sys.stderr,
        )
    cmd = jupyter_lab_command(dest / FIRST_LESSON, args.jupyter_args)
    print("running: python", " ".join(cmd[1:]), flush=True)
    return subprocess.call(cmd)


def jupyter_lab_command(first: Path, options: list[str] | None = None) -> list[str]:
    """The command that opens `first` in JupyterLab, with the learner's Jupyter options."""
    return [sys.executable, "-m", "jupyter", "lab", *(options or []), str(first)]


def _as_root() -> bool:
    return getattr(os, "geteuid", lambda: -1)() == 0


# `lessons`' own options; any other option, and every word after it, is JupyterLab's
_LESSONS_FLAGS = ("-h", "--help", "--no-open")
_LESSONS_VALUED = ("--from",)


def split_lessons_argv(words: list[str]) -> tuple[list[str], list[str]]:
    """`lessons`' words as (ours, JupyterLab's).

    Rules: DEST and our options (--from FOLDER, --no-open, --help) come first; the
    first other option starts JupyterLab's, and it keeps every word after it, so
    `--port 8899` stays a pair (we cannot know which of Jupyter's options take a value).

    Example:
        >>> split_lessons_argv(["course", "--allow-root", "--port", "8899", "--no-browser"])
        (['course'], ['--allow-root', '--port', '8899', '--no-browser'])
    """
    ours: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        name = word.split("=", 1)[0]
        if word in _LESSONS_FLAGS or (name in _LESSONS_VALUED and "=" in word):
            ours.append(word)
        elif word in _LESSONS_VALUED:
            ours.extend(words[i : i + 2])
            i += 1
        elif word.startswith("-"):
            return ours, words[i:]
        else:
            ours.append(word)
        i += 1
    return ours, []


def _grade(args: argparse.Namespace) -> int:
    from .grade import grade_notebook, restore_checks
    from .hidden import restore as restore_hidden

    paths = _notebooks(args.submissions, "grade")
    if paths is None:
        return 1
    source = None
    if args.source:
        try:
            source = notebook.read(Path(args.source))
        except (OSError, ValueError) as e:
            print(f"lesson grade: {e}", file=sys.stderr)
            return 1
    results, status = [], 0
    for path in paths:
        try:
            nb = notebook.read(path)
            if source is not None:
                restore_checks(nb, source)
                restore_hidden(nb, source)  # the checks only the instructor's copy holds
            results.append(grade_notebook(nb, path.parent, str(path), timeout=args.timeout))
        except (OSError, ValueError, ImportError) as e:  # GradeError is a ValueError
            print(f"lesson grade: {e}", file=sys.stderr)
            status = 1
    if args.json:
        print(json.dumps([r.to_json() for r in results], indent=2))
    else:
        for result in results:
            print(_table(result, sys.stdout))
    return status


def _points(value: float) -> str:
    return f"{value:g}"


def _table(result, stream: TextIO) -> str:
    rows = [
        (
            e.name,
            f"{_points(e.points)}/{_points(e.max_points)}",
            e.status + (f": {e.detail}" if e.detail and e.status != "passed" else ""),
        )
        for e in result.exercises
    ]
    total = ("total", f"{_points(result.points)}/{_points(result.max_points)}", "")
    header = ("exercise", "points", "result")
    width = [max(len(r[k]) for r in (header, *rows, total)) for k in range(2)]

    def line(row: tuple[str, str, str]) -> str:
        return f"{row[0]:<{width[0]}}  {row[1]:>{width[1]}}  {row[2]}".rstrip()

    colors = {"passed": GREEN, "failed": RED, "not finished": YELLOW}
    out = [_paint(result.notebook, BOLD, stream), line(header)]
    for row, ex in zip(rows, result.exercises):
        out.append(_paint(line(row), colors.get(ex.status, ""), stream))
    out.append(line(total))
    return "\n".join(out) + "\n"


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions are wrapped here (`_describe`), examples keep their lines."""


def _describe(text: str) -> str:
    return "\n\n".join(textwrap.fill(" ".join(p.split()), 88) for p in text.split("\n\n"))


def _examples(*lines: str) -> str:
    return "example:\n" + "\n".join(f"  {line}" for line in lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tinygrad-edu",
        formatter_class=_Formatter,
        description="Instructor tools for tinygrad_edu lesson notebooks.",
        epilog=_examples(
            "tinygrad-edu lesson new 12_attention --dir notebooks", "tinygrad-edu lesson --help"
        ),
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    lesson = sub.add_parser(
        "lesson",
        help="create, run, check, strip and grade lesson notebooks",
        formatter_class=_Formatter,
        description=_describe(
            "Create, run, check, strip and grade lesson notebooks: write -> check -> "
            "release a student copy -> grade (docs/instructor_workflow.md)."
        ),
        epilog=_examples(
            "tinygrad-edu lesson check notebooks/",
            "tinygrad-edu lesson grade submissions/*.ipynb --json",
        ),
    )
    actions = lesson.add_subparsers(dest="action", metavar="ACTION")
    for add_action in (_add_new, _add_run, _add_check, _add_strip, _add_grade):
        add_action(actions)
    _add_lessons_command(sub)
    _add_site_command(sub)
    lesson.set_defaults(func=lambda a: _usage(lesson))
    parser.set_defaults(func=lambda a: _usage(parser))
    return parser


def _add_action(
    actions: Any, name: str, help_text: str, description: str, *examples: str
) -> argparse.ArgumentParser:
    """One `tinygrad-edu lesson ACTION`, with its help, description and examples."""
    return actions.add_parser(
        name,
        help=help_text,
        formatter_class=_Formatter,
        description=_describe(description),
        epilog=_examples(*examples),
    )


def _add_new(actions: Any) -> None:
    cmd = _add_action(
        actions,
        "new",
        "create a lesson notebook from the template",
        "Create NN_NAME.ipynb from the lesson template: title, setup cell (seeded, live "
        "graph on), example sections, Summary, and Exercises with a ### BEGIN SOLUTION / "
        "### END SOLUTION region and a check cell. The name is two digits (the lesson's "
        "place in the course), an underscore, then lowercase words joined by "
        "underscores. Never overwrites an existing file.",
        "tinygrad-edu lesson new 12_attention --dir notebooks",
    )
    cmd.add_argument("name", metavar="NAME", help="file name without .ipynb, e.g. 12_attention")
    cmd.add_argument(
        "--dir", default="notebooks", help="folder to create it in (default: notebooks)"
    )
    cmd.set_defaults(func=_new)


def _add_run(actions: Any) -> None:
    cmd = _add_action(
        actions,
        "run",
        "run notebooks top to bottom and save their outputs",
        "Run each notebook top to bottom in a fresh kernel of this Python (in the "
        "notebook's folder) and save it with its new outputs, which nbval will compare. "
        "Tracebacks keep no folder of this machine. A cell that fails without the "
        "raises-exception tag stops the run, and the file is left as it was.",
        "tinygrad-edu lesson run notebooks/12_attention.ipynb",
    )
    cmd.add_argument("paths", metavar="PATH", nargs="+", help="notebooks to run")
    cmd.add_argument(
        "--timeout",
        type=float,
        default=300.0,
        metavar="S",
        help="seconds one cell may take (default: 300)",
    )
    cmd.set_defaults(func=_run)


def _add_check(actions: Any) -> None:
    cmd = _add_action(
        actions,
        "check",
        "check saved outputs are fresh, then run nbval as CI does",
        "First the saved outputs: a notebook never executed, a cell that never ran, or "
        "outputs from an earlier or out-of-order run (execution counts not 1, 2, 3, ...) "
        "fail, naming the cell. Then pytest --nbval --nbval-current-env "
        "--nbval-sanitize-with CFG runs every cell and compares it with its saved output "
        "(drawings in a renderer-independent form). Arguments after -- go to pytest; the "
        "exit code is pytest's exit code.\n\n"
        "With --student, PATH is a student copy made by `lesson strip`: it runs with no "
        "solution written, and must run to the end while every check fails with a "
        "message (AssertionError, NotImplementedError, NameError), never passes and "
        "never crashes.",
        "tinygrad-edu lesson check notebooks/12_attention.ipynb",
        "tinygrad-edu lesson check --student student/12_attention.ipynb",
        "tinygrad-edu lesson check notebooks/ -- -x -q",
    )
    cmd.add_argument("paths", metavar="PATH", nargs="+", help="notebooks or folders")
    cmd.add_argument(
        "--student", action="store_true", help="check student copies instead (see above)"
    )
    cmd.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        metavar="S",
        help="seconds one cell may take with --student (default: 120)",
    )
    cmd.add_argument(
        "--sanitize-with",
        metavar="CFG",
        default=None,
        help=f"nbval sanitize file (default: {sanitize_config()})",
    )
    cmd.set_defaults(func=_check)


def _add_strip(actions: Any) -> None:
    cmd = _add_action(
        actions,
        "strip",
        "write the student copy without solutions",
        "Copy SRC to DEST with every ### BEGIN SOLUTION ... ### END SOLUTION region "
        "replaced by '# YOUR CODE HERE' and 'raise NotImplementedError(\"Exercise 2 is not "
        "answered yet\")' (at the region's indentation), check cells kept under a first "
        "line naming their exercise, and all outputs and execution counts cleared. In a "
        "learner's kernel an unanswered exercise then says so in one line and Run All goes "
        "on; `lesson grade` still scores it 0. "
        "Solution and check cells get nbgrader cell metadata (grade_id, solution, grade, "
        "points), so `lesson grade` and nbgrader can grade the copy. Refuses to write "
        "over SRC.",
        "tinygrad-edu lesson strip notebooks/12_attention.ipynb student/",
    )
    cmd.add_argument("src", metavar="SRC", help="the instructor notebook (with solutions)")
    cmd.add_argument("dest", metavar="DEST", help="where to write the student notebook")
    cmd.add_argument("--force", action="store_true", help="overwrite DEST if it exists (never SRC)")
    cmd.set_defaults(func=_strip)


def _add_grade(actions: Any) -> None:
    cmd = _add_action(
        actions,
        "grade",
        "run submitted notebooks and report points per exercise",
        "Run each submitted notebook top to bottom in a fresh kernel (errors allowed, "
        "so one broken exercise does not stop the others) and report, per exercise, the "
        "points of its check cells that passed: as a table, or as JSON with --json. With "
        "--source, the instructor's notebook, the checks run as the instructor wrote them "
        "even if a learner edited them, and the checks tagged hidden-check, which `lesson "
        "strip` leaves out of the student copy, are put back and run too. A notebook with a cell that runs longer than "
        "--timeout, or whose kernel dies, is reported as not graded, and the exit code "
        "is then 1.",
        "tinygrad-edu lesson grade submissions/*/12_attention.ipynb",
        "tinygrad-edu lesson grade submissions/ --source notebooks/12_attention.ipynb --json",
    )
    cmd.add_argument(
        "submissions",
        metavar="SUBMISSION",
        nargs="+",
        help="submitted notebooks or folders of them",
    )
    cmd.add_argument(
        "--source",
        metavar="NOTEBOOK",
        default=None,
        help="the instructor's notebook: its check cells replace the learner's, and its "
        "hidden checks (cell tag hidden-check) are added",
    )
    cmd.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        metavar="S",
        help="seconds one cell may take (default: 60)",
    )
    cmd.add_argument("--json", action="store_true", help="print the results as JSON")
    cmd.set_defaults(func=_grade)


def _add_lessons_command(commands: Any) -> None:
    """`tinygrad-edu lessons`: a learner's own copies of the lessons."""
    cmd = commands.add_parser(
        "lessons",
        help="write your own copies of the lessons (no solutions) and open them",
        formatter_class=_Formatter,
        description=_describe(
            "Write a student copy of every lesson into DEST (default: my_lessons): "
            "solutions replaced by '# YOUR CODE HERE' stubs, outputs cleared, as `lesson "
            "strip` makes them. A copy already in DEST is kept (it holds your work), never "
            "overwritten. Then open the first lesson in JupyterLab, unless --no-open.\n\n"
            "Every other option goes to JupyterLab as it is, with the words after it "
            "(`jupyter lab --help-all` lists them): --allow-root, which Jupyter needs to "
            "start as root (Docker, some classroom images), --port 8899, --ip 0.0.0.0, "
            "--no-browser. Put DEST and this command's options first."
        ),
        epilog=_examples(
            "tinygrad-edu lessons",
            "tinygrad-edu lessons course --no-open",
            "tinygrad-edu lessons --allow-root --port 8899 --ip 0.0.0.0 --no-browser",
        ),
    )
    cmd.add_argument(
        "dest",
        metavar="DEST",
        nargs="?",
        default=STUDENT_FOLDER,
        help=f"folder for your copies (default: {STUDENT_FOLDER})",
    )
    cmd.add_argument(
        "--from",
        dest="source",
        metavar="FOLDER",
        default=None,
        help="the instructor lessons (default: ./notebooks, else the checkout's notebooks/)",
    )
    cmd.add_argument(
        "--no-open", action="store_true", help="write the copies, do not start Jupyter"
    )
    cmd.add_argument(
        "jupyter_args",
        metavar="JUPYTER_OPTION",
        nargs="*",
        help="options for JupyterLab, passed on as they are (see above)",
    )
    cmd.set_defaults(func=_lessons)


def _site_build(args: argparse.Namespace) -> int:
    import time

    from . import site

    checkout = Path(__file__).resolve().parents[2]
    if not (checkout / "pyproject.toml").is_file():
        print(
            "site build: run it from a checkout of tinygrad_edu (it builds the wheel)",
            file=sys.stderr,
        )
        return 1
    start = time.perf_counter()
    try:
        out = site.build_site(
            Path(args.out),
            lessons=lesson_sources(Path(args.source) if args.source else None),
            checkout=checkout,
            cache=Path(args.cache) if args.cache else site.default_cache(),
            packages=args.pyodide_packages or site.PINS["pyodide"]["official_packages"],
            say=lambda line: print(f"site build: {line}", flush=True),
        )
    except (site.SiteError, strip.StripError, OSError) as e:
        print(f"site build: {e}", file=sys.stderr)
        return 1
    size, files = site.size(out)
    print(
        f"{out}: {size / 1e6:.1f} MB in {files} files, built in {time.perf_counter() - start:.0f} s; "
        f"serve it as it is: python -m http.server -d {args.out} 8000, then open "
        "http://localhost:8000/lab/index.html"
    )
    return 0


def _add_site_command(commands: Any) -> None:
    """`tinygrad-edu site build OUT`: the lessons as a JupyterLite site (docs/jupyterlite.md)."""
    site = commands.add_parser(
        "site",
        help="build the lessons as a website that runs in the browser (JupyterLite)",
        formatter_class=_Formatter,
        description=_describe(
            "Build a JupyterLite site: JupyterLab and a Python kernel (Pyodide) that run in the "
            "browser, with a learner copy of every lesson, numpy and tinygrad_edu, and Graphviz "
            "compiled to WebAssembly for the drawings. Any static host serves the folder as it "
            "is (try `python -m http.server -d _site`); learners install nothing "
            "(docs/jupyterlite.md)."
        ),
        epilog=_examples("tinygrad-edu site build _site"),
    )
    actions = site.add_subparsers(dest="action", metavar="ACTION")
    cmd = _add_action(
        actions,
        "build",
        "write the site into OUT",
        "Fetch what the site needs (npm: the Pyodide runtime and the WebAssembly Graphviz; "
        "PyPI: the kernel's wheels; Pyodide's package files), check each file's sha256 "
        "against the pins in tinygrad_edu/lesson/site_pins.json and Pyodide's own lock, "
        "build tinygrad_edu's wheel, strip the lessons, and run `jupyter lite build`. "
        "Needs npm, and `pip install tinygrad_edu[site]`. Downloads stay in the cache.",
        "tinygrad-edu site build _site",
        "tinygrad-edu site build _site --pyodide-packages ~/pyodide-0.27.7/",
    )
    cmd.add_argument("out", metavar="OUT", help="the site's folder (replaced if it is a site)")
    cmd.add_argument(
        "--from",
        dest="source",
        metavar="FOLDER",
        default=None,
        help="the instructor lessons (default: ./notebooks, else the checkout's notebooks/)",
    )
    cmd.add_argument(
        "--cache",
        metavar="DIR",
        default=None,
        help="downloads (default: ~/.cache/tinygrad_edu/site)",
    )
    cmd.add_argument(
        "--pyodide-packages",
        metavar="SOURCE",
        default=None,
        help="where Pyodide's package files come from: a URL, a folder, or a zip holding them "
        "(default: Pyodide's official release files); checked against Pyodide's lock either way",
    )
    cmd.set_defaults(func=_site_build)
    site.set_defaults(func=lambda a: _usage(site))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code (also used by the console script)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:  # everything after `--` is for pytest (lesson check) or JupyterLab
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1 :]
    jupyter: list[str] = []
    if argv[:1] == ["lessons"]:  # JupyterLab's options are not ours to parse
        ours, jupyter = split_lessons_argv(argv[1:])
        argv = ["lessons", *ours]
    args = build_parser().parse_args(argv)
    args.pytest_args = extra
    if args.command == "lessons":
        args.jupyter_args = [*args.jupyter_args, *jupyter, *extra]
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
