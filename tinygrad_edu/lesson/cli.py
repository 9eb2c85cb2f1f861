"""`tinygrad-edu` (also `python -m tinygrad_edu`): the instructor's command line.

    tinygrad-edu lesson new NAME [--dir notebooks]   a lesson from the template
    tinygrad-edu lesson run PATH... [--timeout S]    run top to bottom, save the outputs
    tinygrad-edu lesson strip SRC DEST [--force]     the student copy, solutions removed
    tinygrad-edu lesson check PATH... [-- ARGS]      run nbval on lessons, as CI does

Every command has `--help`. Exit codes: 0 on success, 1 when a command refuses
(the message says why), and `lesson check` passes pytest's own exit code through.
Lesson layer: standard library only at import time.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from . import execute, notebook, strip, template

# One sanitizer for everyone: the project's pytest config and `lesson check` both use
# the copy shipped in the package, so an installed package checks lessons the same way.
SANITIZE_CONFIG = Path(__file__).resolve().parent / "nbval_sanitize.cfg"


def sanitize_config() -> Path:
    """The nbval sanitize file `lesson check` uses (SVG geometry, graphviz version)."""
    return SANITIZE_CONFIG


def nbval_command(paths: list[str], sanitize: Path | None = None,
                  extra: list[str] | None = None) -> list[str]:
    """The pytest command line that checks `paths` exactly as the project's CI does."""
    cfg = sanitize or sanitize_config()
    # NOTE: `--opt=value` in one word: pytest takes any separate word that names an
    # existing file into its rootdir guess, which would pull in this repo's pytest config
    return [sys.executable, "-m", "pytest", "--nbval", "--nbval-current-env",
            f"--nbval-sanitize-with={cfg}", "-p", "no:cacheprovider", *(extra or []),
            *paths]


def _new(args: argparse.Namespace) -> int:
    name = args.name[:-len(".ipynb")] if args.name.endswith(".ipynb") else args.name
    try:
        nb = template.lesson_notebook(name)
    except ValueError as e:
        print(f"lesson new: {e}", file=sys.stderr)
        return 1
    dest = Path(args.dir) / f"{name}.ipynb"
    if dest.exists():
        print(f"lesson new: {dest} already exists; choose another NAME or delete it first",
              file=sys.stderr)
        return 1
    dest.parent.mkdir(parents=True, exist_ok=True)
    notebook.write(nb, dest)
    print(f"created {dest}")
    print(f"next: open it in JupyterLab, write the lesson, run all, then "
          f"`tinygrad-edu lesson check {dest}`")
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
            print(f"lesson run: {path}: {e}\n  nothing written; fix the cell, or tag a cell "
                  "that raises on purpose `raises-exception`", file=sys.stderr)
            status = 1
            continue
        scrubbed = execute.scrub_paths(ran, path.parent)
        notebook.write(ran, path)
        note = f", {scrubbed} traceback line{'s' * (scrubbed != 1)} made machine-independent"
        print(f"ran {path}{note if scrubbed else ''}")
        for number, where in execute.machine_paths(ran):
            print(f"lesson run: {path}: cell {number} prints a path of this machine ({where}); "
                  "nbval will fail elsewhere: print a relative path", file=sys.stderr)
            status = 1
    return status


def _strip(args: argparse.Namespace) -> int:
    try:
        n = strip.strip_file(Path(args.src), Path(args.dest), force=args.force)
    except (strip.StripError, ValueError, OSError) as e:
        print(f"lesson strip: {e}", file=sys.stderr)
        return 1
    print(f"wrote {args.dest}: {n} solution region{'s' * (n != 1)} removed, outputs cleared")
    return 0


def _check(args: argparse.Namespace) -> int:
    missing = [p for p in args.paths if not Path(p).exists()]
    if missing:
        print(f"lesson check: no such file or folder: {', '.join(missing)}", file=sys.stderr)
        return 1
    sanitize = Path(args.sanitize_with) if args.sanitize_with else None
    cmd = nbval_command(args.paths, sanitize, args.pytest_args)
    print("running:", " ".join(cmd[1:]), flush=True)
    return subprocess.call(cmd)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tinygrad-edu",
        description="Instructor tools for tinygrad_edu lesson notebooks.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    lesson = sub.add_parser("lesson", help="create, strip and check lesson notebooks",
                            description="Create, strip and check lesson notebooks.")
    lsub = lesson.add_subparsers(dest="action", metavar="ACTION")

    new = lsub.add_parser(
        "new", help="create a lesson notebook from the template",
        description="Create NAME.ipynb from the lesson template: title, setup cell (seeded, "
                    "live graph on), example sections, Summary, and Exercises with a "
                    "### BEGIN SOLUTION / ### END SOLUTION region and a check cell. "
                    "Never overwrites an existing file.")
    new.add_argument("name", metavar="NAME", help="file name without .ipynb, e.g. 11_my_topic")
    new.add_argument("--dir", default="notebooks", help="folder to create it in "
                     "(default: notebooks)")
    new.set_defaults(func=_new)

    rn = lsub.add_parser(
        "run", help="run notebooks top to bottom and save their outputs",
        description="Run each notebook top to bottom in a fresh kernel of this Python "
                    "(in the notebook's folder) and save it with its new outputs, as "
                    "nbval will compare them. Tracebacks keep no folder of this machine. "
                    "A cell that fails without the raises-exception tag stops the run, "
                    "and the file is left as it was.")
    rn.add_argument("paths", metavar="PATH", nargs="+", help="notebooks to run")
    rn.add_argument("--timeout", type=float, default=300.0, metavar="S",
                    help="seconds one cell may take (default: 300)")
    rn.set_defaults(func=_run)

    st = lsub.add_parser(
        "strip", help="write the student copy without solutions",
        description="Copy SRC to DEST with every ### BEGIN SOLUTION ... ### END SOLUTION "
                    "region replaced by '# YOUR CODE HERE' and 'raise NotImplementedError' "
                    "(at the region's indentation), and all outputs and execution counts "
                    "cleared. Refuses to write over SRC.")
    st.add_argument("src", metavar="SRC", help="the instructor notebook (with solutions)")
    st.add_argument("dest", metavar="DEST", help="where to write the student notebook")
    st.add_argument("--force", action="store_true", help="overwrite DEST if it exists "
                    "(never SRC)")
    st.set_defaults(func=_strip)

    ch = lsub.add_parser(
        "check", help="run the notebooks with nbval, as CI does",
        description="Run pytest --nbval --nbval-current-env --nbval-sanitize-with CFG on "
                    "the given notebooks or folders: every cell must run and reproduce "
                    "its saved output. Arguments after -- go to pytest. Exits with "
                    "pytest's exit code.")
    ch.add_argument("paths", metavar="PATH", nargs="+", help="notebooks or folders")
    ch.add_argument("--sanitize-with", metavar="CFG", default=None,
                    help=f"nbval sanitize file (default: {sanitize_config()})")
    ch.set_defaults(func=_check)

    lesson.set_defaults(func=lambda a: _usage(lesson))
    parser.set_defaults(func=lambda a: _usage(parser))
    return parser


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code (also used by the console script)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:  # everything after `--` is for pytest (lesson check)
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1:]
    args = build_parser().parse_args(argv)
    args.pytest_args = extra
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
