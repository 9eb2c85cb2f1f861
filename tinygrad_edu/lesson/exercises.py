"""A lesson's exercises: which cells hold solutions, which cells check them, and their points.

Lessons mark exercises the nbgrader way, and nothing else is needed:

    ### Exercise 2                       a markdown heading names the exercise
    def cube(x):                         a code cell with a solution region
        ### BEGIN SOLUTION
        return x ** 3
        ### END SOLUTION
    check_grad(x, 3 * x.data ** 2)       the code cells after it, up to the next heading,
                                         are its checks (one point each)

An exercise with no check cell after its solution checks itself: the code after
`### END SOLUTION` (`accuracy(model, x, y) > 0.9`) is the check, and the solution
cell is graded (nbgrader: `"solution": true, "grade": true`).

`add_nbgrader_metadata` writes nbgrader's cell metadata (schema 3) from that: solution
cells `{"solution": true, "grade": false}`, check cells `{"grade": true, "locked": true,
"points": 1}`, each with a `grade_id` such as `exercise-2-check-1`; metadata an
instructor already set with nbgrader's toolbar is kept. A notebook that carries it
(every student copy) is read from it, so grading never depends on headings a learner
may have edited. The exercise's name goes under the cell's `tinygrad_edu` metadata.
Lesson layer: standard library only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import notebook
from .strip import BEGIN

SCHEMA_VERSION = 3  # nbgrader's cell metadata schema
DEFAULT_POINTS = 1
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", flags=re.M)


@dataclass
class Exercise:
    """One exercise: its name, id, and the indexes (from 0) of its cells."""

    name: str
    slug: str
    solutions: list[int] = field(default_factory=list)
    checks: list[int] = field(default_factory=list)


def slug_of(name: str) -> str:
    """`"Exercise 2: Sigmoid"` -> `"exercise-2-sigmoid"` (nbgrader grade ids: [a-z0-9-])."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "exercise"


def has_solution(cell: dict) -> bool:
    """True when a cell holds a `### BEGIN SOLUTION` region."""
    return any(BEGIN.match(line) for line in notebook.source_text(cell).splitlines())


def _nbgrader(cell: dict) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def _from_markers(nb: dict) -> list[Exercise]:
    found: list[Exercise] = []
    parts: dict[str, int] = {}  # heading -> exercises under it so far
    heading = "Exercise"
    current: Exercise | None = None
    for i, cell in enumerate(nb.get("cells", [])):
        kind = cell.get("cell_type")
        if kind == "markdown" and not has_solution(cell):
            titles = _HEADING.findall(notebook.source_text(cell))
            if titles:
                heading, current = titles[-1], None  # a heading ends the exercise above it
            continue
        if has_solution(cell):
            if current is None or current.checks:  # a solution after checks: a new part
                parts[heading] = parts.get(heading, 0) + 1
                name = heading if parts[heading] == 1 else f"{heading} (part {parts[heading]})"
                slug = slug_of(name)
                while any(e.slug == slug for e in found):  # two headings, one slug
                    slug += "-2"
                current = Exercise(name, slug)
                found.append(current)
            current.solutions.append(i)
        elif current is not None and kind == "code" and notebook.source_text(cell).strip():
            current.checks.append(i)
    for ex in found:
        if not ex.checks:  # it checks itself
            ex.checks = [i for i in ex.solutions if nb["cells"][i].get("cell_type") == "code"]
    return found


def _from_metadata(nb: dict) -> list[Exercise]:
    by_name: dict[str, Exercise] = {}
    for i, cell in enumerate(nb.get("cells", [])):
        meta = _nbgrader(cell)
        if not (meta.get("solution") or meta.get("grade")):
            continue
        grade_id = str(meta.get("grade_id", f"cell-{i + 1}"))
        name = cell.get("metadata", {}).get("tinygrad_edu", {}).get("exercise")
        if not name:  # nbgrader's own notebooks: group by the id's stem
            name = re.sub(r"-(?:solution|check)(?:-\d+)?$", "", grade_id)
        ex = by_name.setdefault(name, Exercise(name, slug_of(name)))
        if meta.get("solution"):
            ex.solutions.append(i)
        if meta.get("grade"):
            ex.checks.append(i)
    return list(by_name.values())


def find(nb: dict) -> list[Exercise]:
    """The notebook's exercises, in order: from nbgrader metadata if any cell has it,
    else from the solution markers and headings (see the module docstring)."""
    if any(_nbgrader(c).get("solution") or _nbgrader(c).get("grade") for c in nb.get("cells", [])):
        return _from_metadata(nb)
    return _from_markers(nb)


def points_of(cell: dict) -> float:
    """A check cell's points (nbgrader's `points`, else DEFAULT_POINTS)."""
    return float(_nbgrader(cell).get("points", DEFAULT_POINTS))


def add_nbgrader_metadata(nb: dict) -> list[Exercise]:
    """Write nbgrader cell metadata for every solution and check cell; returns the exercises.

    Rules: found from the markers (`find`), so run it on the instructor's notebook,
    before solutions are stripped. A cell that already has nbgrader metadata keeps its
    `grade_id` and `points`.
    """
    exercises = _from_markers(nb)
    cells = nb.get("cells", [])
    for ex in exercises:
        for n, i in enumerate(ex.solutions, start=1):
            _mark(
                cells[i],
                ex,
                f"{ex.slug}-solution" + (f"-{n}" if n > 1 else ""),
                solution=True,
                grade=i in ex.checks,
            )
        checks = [i for i in ex.checks if i not in ex.solutions]
        for n, i in enumerate(checks, start=1):
            _mark(cells[i], ex, f"{ex.slug}-check-{n}", solution=False, grade=True)
    return exercises


def _mark(cell: dict, ex: Exercise, grade_id: str, solution: bool, grade: bool) -> None:
    old = _nbgrader(cell)
    meta = {
        "grade": grade,
        "grade_id": old.get("grade_id", grade_id),
        "locked": not solution,  # learners edit answers, never the checks
        "schema_version": SCHEMA_VERSION,
        "solution": solution,
        "task": False,
    }
    if grade:
        meta["points"] = old.get("points", DEFAULT_POINTS)
    cell.setdefault("metadata", {})["nbgrader"] = meta
    cell["metadata"]["tinygrad_edu"] = {"exercise": ex.name}
