"""Grade learners' notebooks, and check that a student copy fails its checks gracefully.

Both run a notebook top to bottom in a fresh kernel with errors allowed (a learner's
broken cell must not stop the grading of the next exercise), then read each check
cell's outputs:

- a check **passes** when it raised nothing and did not evaluate to `False`;
- it earns its points (nbgrader's `points`, one by default) or none;
- an exercise that still raises `NotImplementedError` somewhere (the stub that
  `lesson strip` leaves, in the answer cell or in a function the check calls) is
  "not finished".

`grade` reports points per exercise; `student_problems` lists what is wrong with a
student copy: a check that passes with no solution written (it would give points for
nothing), a check that crashes instead of failing with a message, a cell outside the
exercises that fails, a solution region still present.
Lesson layer: standard library at import time (nbclient when a notebook runs).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import exercises, notebook, unanswered
from .execute import KernelError, execute

# what a check may raise when the learner has written nothing yet: a failed check, the
# stub itself, or a name the missing solution would have defined
GRACEFUL = ("AssertionError", "NotImplementedError", "NameError")


class GradeError(ValueError):
    """A notebook that cannot be graded (no graded cells, kernel died); the message says why."""


@dataclass
class ExerciseResult:
    """One exercise's grade; `status` is "passed", "failed" or "not finished"."""

    name: str
    points: float
    max_points: float
    status: str
    detail: str = ""
    cells: list[int] = field(default_factory=list)  # its check cells, numbered from 1


@dataclass
class NotebookResult:
    """A graded notebook: per exercise results and the totals."""

    notebook: str
    exercises: list[ExerciseResult]

    @property
    def points(self) -> float:
        return sum(e.points for e in self.exercises)

    @property
    def max_points(self) -> float:
        return sum(e.max_points for e in self.exercises)

    def to_json(self) -> dict:
        return {
            "notebook": self.notebook,
            "points": self.points,
            "max_points": self.max_points,
            "exercises": [asdict(e) for e in self.exercises],
        }


def _error(cell: dict) -> dict | None:
    return next((o for o in cell.get("outputs", []) if o.get("output_type") == "error"), None)


def _noted_unanswered(cell: dict) -> bool:
    """The cell showed the one-line "not answered yet" note (a learner's kernel does;
    a grading kernel raises instead, so only a notebook that switched that off gets here)."""
    return any(unanswered.NOTE_MIME in o.get("data", {}) for o in cell.get("outputs", []))


def _said_false(cell: dict) -> bool:
    for out in cell.get("outputs", []):
        if out.get("output_type") == "execute_result":
            text = out.get("data", {}).get("text/plain", "")
            if ("".join(text) if isinstance(text, list) else text).strip() == "False":
                return True
    return False


def _one_line(err: dict) -> str:
    lines = str(err.get("evalue", "")).strip().splitlines()
    return f"{err.get('ename', 'Error')}: {lines[0]}" if lines else err.get("ename", "Error")


def _first_line(cell: dict) -> str:
    text = unanswered.without_header(notebook.source_text(cell))  # the check's own code
    return (text.strip().splitlines() or [""])[0][:60]


def restore_checks(submission: dict, source: dict) -> int:
    """Put the source's check cells back into a submission, by nbgrader `grade_id`.

    A learner can edit a check cell (locked only in nbgrader's UI); grading with the
    instructor's notebook as `source` runs the checks as written. Returns how many
    cells were restored.
    """
    originals = {}
    for cell in source.get("cells", []):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade") and not meta.get("solution"):
            originals[meta.get("grade_id")] = cell
    if not originals:  # an instructor notebook without metadata: derive it as strip does
        marked = json.loads(json.dumps(source))
        exercises.add_nbgrader_metadata(marked)
        return (
            restore_checks(submission, marked)
            if any(c.get("metadata", {}).get("nbgrader") for c in marked["cells"])
            else 0
        )
    restored = 0
    for cell in submission.get("cells", []):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        original = originals.get(meta.get("grade_id"))
        if original is not None and meta.get("grade") and not meta.get("solution"):
            strip_header = unanswered.without_header  # the line `lesson strip` adds
            if strip_header(notebook.source_text(cell)) != strip_header(
                notebook.source_text(original)
            ):
                cell["source"] = original["source"]
                restored += 1
    return restored


def grade_notebook(
    nb: dict, folder: Path, name: str = "notebook", timeout: float = 60.0
) -> NotebookResult:
    """Run `nb` (errors allowed, `timeout` seconds per cell) and grade every exercise.

    Raises:
        GradeError: no graded cells (not a student copy made by `lesson strip`), or the
            kernel died.
    """
    found = [ex for ex in exercises.find(nb) if ex.checks]
    if not found:
        raise GradeError(
            f"{name}: no graded cells; make the student copy with "
            "`tinygrad-edu lesson strip`, which marks the check cells"
        )
    try:
        ran = execute(nb, folder, timeout=timeout, allow_errors=True, grading=True)
    except KernelError as e:
        raise GradeError(f"{name}: {e}; no exercise could be graded") from None
    cells = ran["cells"]
    results = []
    for ex in found:
        points = max_points = 0.0
        detail = ""
        for i in ex.checks:
            worth = exercises.points_of(cells[i])
            max_points += worth
            err = _error(cells[i])
            if err is None and not _said_false(cells[i]) and not _noted_unanswered(cells[i]):
                points += worth
            elif not detail:
                detail = _one_line(err) if err else f"cell {i + 1} evaluated to False"
        raised = [_error(cells[i]) for i in (*ex.solutions, *ex.checks)]
        noted = any(_noted_unanswered(cells[i]) for i in (*ex.solutions, *ex.checks))
        if points == max_points:
            status = "passed"
        elif noted or any(e and e.get("ename") == "NotImplementedError" for e in raised):
            status = "not finished"
            detail = "NotImplementedError: a `raise NotImplementedError` stub is still there"
        else:
            status = "failed"
        results.append(
            ExerciseResult(ex.name, points, max_points, status, detail, [i + 1 for i in ex.checks])
        )
    return NotebookResult(name, results)


def student_problems(nb: dict, folder: Path, timeout: float = 60.0) -> list[str]:
    """What is wrong with a student copy when run with no solution written ([] = fine)."""
    problems = []
    cells = nb.get("cells", [])
    for number, cell in enumerate(cells, start=1):
        if exercises.has_solution(cell):
            problems.append(
                f"cell {number} ({_first_line(cell)!r}) still holds a solution "
                "region: make the copy with `tinygrad-edu lesson strip`"
            )
    found = exercises.find(nb)
    if not any(ex.checks for ex in found):
        return problems + [
            "no graded exercise found: make the copy with "
            "`tinygrad-edu lesson strip` (it marks solution and check cells)"
        ]
    try:
        ran = execute(nb, folder, timeout=timeout, allow_errors=True, grading=True)
    except KernelError as e:
        return problems + [f"{e} while running the student copy"]
    return problems + _check_problems(found, ran["cells"]) + _other_failures(found, ran["cells"])


def _check_problems(found: list, cells: list) -> list[str]:
    """Check cells that pass with no solution (free points) or crash instead of saying why."""
    problems = []
    for ex in found:
        for i in ex.checks:
            err = _error(cells[i])
            where = f"{ex.name}: check cell {i + 1} ({_first_line(cells[i])!r})"
            if err is None and not _said_false(cells[i]):
                problems.append(
                    f"{where} passes with no solution written, so it gives "
                    "points for nothing; make it test the answer"
                )
            elif err is not None and err.get("ename") not in GRACEFUL:
                problems.append(
                    f"{where} crashes with {_one_line(err)} instead of saying "
                    "what is missing; check the answer exists first (or "
                    "use the helpers in tinygrad_edu.lesson.check)"
                )
    return problems


def _other_failures(found: list, cells: list) -> list[str]:
    """Cells outside the exercises that fail in the student copy (not tagged to raise)."""
    in_exercise = {i for ex in found for i in (*ex.solutions, *ex.checks)}
    problems = []
    for i, cell in enumerate(cells):
        if i in in_exercise or cell.get("cell_type") != "code":
            continue
        err = _error(cell)
        if err is not None and "raises-exception" not in cell.get("metadata", {}).get("tags", []):
            problems.append(
                f"cell {i + 1} ({_first_line(cell)!r}), outside the exercises, "
                f"fails in the student copy: {_one_line(err)}"
            )
    return problems
