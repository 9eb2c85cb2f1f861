"""Make the student copy of a lesson: solutions out, outputs cleared.

The instructor's notebook keeps its solutions (so nbval can run it top to bottom);
the student's copy has every region between `### BEGIN SOLUTION` and
`### END SOLUTION` (the nbgrader convention) replaced by a stub at the marker's
indentation:

    def f(x):                   def f(x):
        ### BEGIN SOLUTION          # YOUR CODE HERE
        return x * x   ->           raise NotImplementedError("Exercise 2 is not answered yet")
        ### END SOLUTION

nbgrader's stub, naming the exercise. Markdown cells get `YOUR ANSWER HERE` instead.
Outputs, execution counts and the saved widget state are dropped, so no answer survives
in an output either. Check cells keep their code and gain a first line naming their
exercise (`# Checks Exercise 2; leave this cell as it is`), except those tagged
`hidden-check`, which only the instructor's copy keeps (`hidden.py`). With the names, a
learner's Run All goes on past an unanswered exercise, which says so in one line
(`unanswered.py`). Solution and check cells get nbgrader's cell metadata
(`exercises.add_nbgrader_metadata`), so `lesson grade` (and nbgrader) know which cells
earn points.
Lesson layer: standard library only.
"""

from __future__ import annotations

import re
from pathlib import Path

from . import notebook, unanswered

BEGIN = re.compile(r"^(\s*)(?:#+|<!--)\s*BEGIN SOLUTION\b")
END = re.compile(r"^\s*(?:#+|<!--)\s*END SOLUTION\b")
CODE_STUB = unanswered.stub_lines()  # nbgrader's, for a region outside any exercise
MARKDOWN_STUB = ("YOUR ANSWER HERE",)


class StripError(ValueError):
    """A notebook that cannot be stripped safely (unbalanced markers, bad paths)."""


def strip_source(
    text: str, cell_type: str = "code", where: str = "cell", exercise: str | None = None
) -> tuple[str, int]:
    """Replace every solution region in one cell's source; return `(text, regions)`.

    Rules: a code region becomes nbgrader's two-line stub, whose error names `exercise`
    when given; a markdown region becomes `YOUR ANSWER HERE`.

    Raises:
        StripError: a BEGIN without END, an END without BEGIN, or nested regions.
    """
    stub = unanswered.stub_lines(exercise) if cell_type == "code" else MARKDOWN_STUB
    out: list[str] = []
    regions = 0
    open_at: int | None = None
    lines = text.splitlines(keepends=True)
    for lineno, line in enumerate(lines, start=1):
        begin, end = BEGIN.match(line), END.match(line)
        if begin:
            if open_at is not None:
                raise StripError(
                    f"{where}, line {lineno}: BEGIN SOLUTION inside the region "
                    f"opened at line {open_at}; close it with ### END SOLUTION"
                )
            open_at = lineno
            indent = begin.group(1)
            out.extend(f"{indent}{s}\n" for s in stub)
        elif end:
            if open_at is None:
                raise StripError(
                    f"{where}, line {lineno}: END SOLUTION without a ### BEGIN SOLUTION before it"
                )
            open_at = None
            regions += 1
        elif open_at is None:
            out.append(line)
    if open_at is not None:
        raise StripError(
            f"{where}, line {open_at}: BEGIN SOLUTION is never closed; "
            "add ### END SOLUTION after the solution"
        )
    result = "".join(out)
    if regions and not text.endswith("\n") and result.endswith("\n"):
        result = result[:-1]  # the stub added the newline, the original had none
    return result, regions


def strip_notebook(nb: dict) -> tuple[dict, int]:
    """Strip every cell of a notebook dict in place; return it and the region count."""
    from .exercises import add_nbgrader_metadata  # exercises imports this module
    from .hidden import drop

    found = add_nbgrader_metadata(nb)  # from the markers, so before they go
    solved_in = {i: ex.name for ex in found for i in ex.solutions}
    checked_in = {i: ex.name for ex in found for i in ex.checks if i not in ex.solutions}
    total = 0
    for i, cell in enumerate(nb.get("cells", [])):
        kind = cell.get("cell_type")
        if kind in ("code", "markdown"):
            text, n = strip_source(
                notebook.source_text(cell), kind, where=f"cell {i + 1}", exercise=solved_in.get(i)
            )
            if n:
                cell["source"] = notebook.split_source(text)
                total += n
        if i in checked_in and kind == "code":
            _name_the_exercise(cell, checked_in[i])
        if kind == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
            cell.get("metadata", {}).pop("execution", None)  # the instructor's run's timings
    drop(nb)  # hidden checks: numbered above, held by the instructor's copy only
    nb.get("metadata", {}).pop("widgets", None)  # saved widget state may show answers
    return nb, total


def _name_the_exercise(cell: dict, name: str) -> None:
    """Give a check cell its header line (once): the kernel reads which exercise it checks."""
    text = notebook.source_text(cell)
    if unanswered.header_exercise(text) is None:
        cell["source"] = notebook.split_source(f"{unanswered.check_header(name)}\n{text}")


def strip_file(src: Path, dest: Path, force: bool = False) -> int:
    """Write the student copy of `src` to `dest`; return how many regions were removed.

    Rules: a folder `dest` (or a `dest` not ending in .ipynb, which is created as a
    folder) receives a file of `src`'s name; `dest` may never be `src`
    (the solutions would be lost); an existing `dest` is kept unless `force=True`.

    Raises:
        StripError: for the cases above, or unbalanced markers (nothing is written).
    """
    src, dest = Path(src), Path(dest)
    if dest.is_dir() or dest.suffix != ".ipynb":  # `strip l.ipynb student/`: student/l.ipynb
        dest = dest / src.name
    if not src.is_file():
        raise StripError(f"{src}: no such notebook")
    if dest.exists() and dest.resolve() == src.resolve():
        raise StripError(
            f"{dest}: the student copy must not overwrite the source notebook "
            "(its solutions would be lost); choose another DEST"
        )
    if dest.exists() and not force:
        raise StripError(f"{dest} already exists; pass --force to overwrite it")
    nb, total = strip_notebook(notebook.read(src))
    dest.parent.mkdir(parents=True, exist_ok=True)
    notebook.write(nb, dest)
    return total
