"""Hidden checks: check cells that only the instructor's copy holds, run when grading.

A learner reads every visible check, so a visible check can be written to: an answer
that prints the number the check compares with, or special-cases the check's example,
passes. An instructor adds a check the learner never sees by giving a code cell the tag
`hidden-check` (JupyterLab: property inspector, Cell Tags), anywhere among an
exercise's check cells:

- in the instructor's notebook it is a check like the others: nbval and `lesson run`
  run it, and it counts (nbgrader's `points`) in the exercise above it;
- `lesson strip` numbers it with the other checks (so its nbgrader `grade_id` is fixed)
  and then leaves it out of the student copy (`drop`);
- `lesson grade --source INSTRUCTOR.ipynb` puts it back into each submission, right
  after the cell that came before it in the instructor's notebook (`restore`), so it
  runs with the learner's answers and earns or loses its points like any check.

Grading without `--source` cannot run what the submission does not hold, so the total
is then out of the visible checks' points only.
Lesson layer: standard library only.
"""

from __future__ import annotations

import copy

from . import exercises

TAG = "hidden-check"


def is_hidden(cell: dict) -> bool:
    """True for a cell tagged `hidden-check`."""
    return TAG in cell.get("metadata", {}).get("tags", [])


def drop(nb: dict) -> int:
    """Remove every hidden check from a notebook (the student copy); return how many."""
    cells = nb.get("cells", [])
    kept = [c for c in cells if not is_hidden(c)]
    nb["cells"] = kept
    return len(cells) - len(kept)


def _grade_id(cell: dict) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def restore(submission: dict, source: dict) -> int:
    """Insert the source's hidden checks into a submission that lacks them; return how many.

    Rules: a hidden check goes right after the submission's copy of the cell that
    precedes it in the source, found by cell `id` (strip keeps them), else by nbgrader
    `grade_id`; with neither, at the end. One the submission already holds (same
    `grade_id`) is left alone. A source without nbgrader metadata gets it as `lesson
    strip` would give it, so the ids match the student copy's.
    """
    marked = copy.deepcopy(source)
    if not any(_grade_id(c) for c in marked.get("cells", [])):
        exercises.add_nbgrader_metadata(marked)
    cells = submission.setdefault("cells", [])
    have = {_grade_id(c) for c in cells} - {None}
    restored = 0
    for i, cell in enumerate(marked.get("cells", [])):
        if not is_hidden(cell) or _grade_id(cell) in have:
            continue
        at = len(cells)
        for before in reversed(marked["cells"][:i]):
            found = _position(cells, before)
            if found is not None:
                at = found + 1
                break
        cells.insert(at, copy.deepcopy(cell))
        have.add(_grade_id(cell))
        restored += 1
    return restored


def _position(cells: list, wanted: dict) -> int | None:
    """Where `wanted` (a source cell) sits in the submission: by cell id, else grade_id."""
    for key in (lambda c: c.get("id"), _grade_id):
        value = key(wanted)
        if value is not None:
            for j, cell in enumerate(cells):
                if key(cell) == value:
                    return j
    return None
