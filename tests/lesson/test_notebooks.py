"""The committed lessons keep the house shape (STYLE.md section 7) and were run cleanly.

nbval checks that every cell reproduces its saved output; these tests check what nbval
cannot: that the saved outputs come from one top-to-bottom run in a fresh kernel, that
the lesson has its title / setup / Summary / Exercises, and that the index lists it.
"""

import json
import re
from pathlib import Path

import nbformat
import pytest

from tinygrad_edu.lesson import execute

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
# a lesson too long for one class is split into pieces 03a_..., 03b_...
LESSONS = sorted(NOTEBOOKS.glob("[0-9][0-9]*_*.ipynb"))
PLANNED = [
    "01_define_by_run",
    "02_backward",
    "03a_static_vs_dynamic",
    "03b_static_programs",
    "04_control_flow",
    "05a_varying_sizes",
    "05b_bucketing_and_attention",
    "06_debugging",
    "07_changing_models",
    "08a_myths_memory",
    "08b_myths_speed",
    "09_deployment",
    "10_train_end_to_end",
    "11_views_and_inplace",
    "12_engine_from_scratch",
    "13_autograd_in_depth",
    "14_graph_breaks",
    "15_your_pytorch_code",
    "16_capstone_dynamic_model",
]
ADDRESS = re.compile(r"\b0x[0-9a-f]{6,}\b")


def _lessons():
    return pytest.mark.parametrize("path", LESSONS, ids=[p.stem for p in LESSONS])


def _outputs_text(cell):
    parts = []
    for out in cell.get("outputs", []):
        parts.append(out.get("text", ""))
        parts.extend(str(v) for v in out.get("data", {}).values())
        parts.append(out.get("evalue", ""))
    return "\n".join(parts)


@_lessons()
def test_lesson_has_the_house_shape(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    cells = nb.cells
    number, piece = re.match(r"(\d\d)([a-z]?)_", path.name).groups()
    assert cells[0].cell_type == "markdown"
    assert cells[0].source.startswith(f"# Lesson {int(number)}{piece}: ")
    assert "**What you will see:**" in cells[0].source
    assert "**Prerequisites:**" in cells[0].source
    setup = cells[1].source
    assert cells[1].cell_type == "code"
    assert "import tinygrad_edu as tg" in setup and "np.random.seed(0)" in setup
    heads = [
        line
        for c in cells
        if c.cell_type == "markdown"
        for line in c.source.splitlines()
        if line.startswith("## ")
    ]
    sections = [h for h in heads if re.match(r"## \d+\. ", h)]
    assert 3 <= len(sections) <= 6, sections
    assert [h for h in heads if h in ("## Summary", "## Exercises")] == [
        "## Summary",
        "## Exercises",
    ]
    start = next(
        i
        for i, c in enumerate(cells)
        if c.cell_type == "markdown" and "## Exercises" in c.source.splitlines()
    )
    exercises = cells[start:]
    assert any("### BEGIN SOLUTION" in c.source for c in exercises)


@_lessons()
def test_lesson_was_run_top_to_bottom_without_errors(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert [c.execution_count for c in code] == list(range(1, len(code) + 1))
    for c in code:
        text = _outputs_text(c)
        tagged = "raises-exception" in c.metadata.get("tags", [])
        raises = tagged or c.source.startswith("# NBVAL_RAISES_EXCEPTION")
        errors = [o for o in c.outputs if o.output_type == "error"]
        assert bool(errors) == raises, c.source
        if raises:
            # the tag makes "Run All" (JupyterLab, nbclient) carry on past the cell; nbval
            # honours it too, while the comment alone stops a learner's Run All here
            assert tagged, f"add the cell tag raises-exception to: {c.source}"
            assert c.source.startswith(("# raises on purpose", "# NBVAL_RAISES_EXCEPTION"))
        assert not ADDRESS.search(text), f"memory address in the output of: {c.source}"
        assert "could not draw" not in text, c.source
        assert "Traceback" not in text or raises


@_lessons()
def test_code_lines_fit_88_columns(path):
    nb = nbformat.read(path, as_version=4)
    long = [
        line
        for c in nb.cells
        if c.cell_type == "code"
        for line in c.source.splitlines()
        if len(line) > 88
    ]
    assert long == []


def test_index_lists_every_lesson_in_order():
    index = (NOTEBOOKS / "README.md").read_text()
    positions = [index.find(name) for name in PLANNED]
    assert -1 not in positions and positions == sorted(positions)
    for path in LESSONS:
        assert path.stem in PLANNED, f"{path.name} is not one of the planned lesson names"
        assert f"]({path.name})" in index, f"notebooks/README.md does not link {path.name}"
    assert "https://mybinder.org/v2/gh/" in index
    assert "urlpath=lab/tree/my_lessons/01_define_by_run.ipynb" in index  # student copies
    for word in ("`x`", "`w`", "`b`", "`y`", "`loss`", "`lr`", "`num_steps`"):
        assert word in index


@_lessons()
def test_no_saved_output_holds_a_path_of_the_machine(path):
    # the lessons travel (git, Binder, learners' machines); `tinygrad-edu lesson run`
    # saves tracebacks relative to the import folders
    found = execute.machine_paths(json.loads(path.read_text(encoding="utf-8")))
    assert found == [], f"cells with paths of the machine that ran {path.name}: {found[:5]}"


@_lessons()
def test_every_live_drawing_is_still_saved(path):
    # nbval does not replay display updates: had the live graph replaced an older drawing
    # by its summary (`%tg keep recent`, past KEEP_RECENT_BYTES), nbval would compare that
    # cell's saved summary with a fresh drawing. A lesson that draws more starts with
    # `%tg keep all`.
    from tinygrad_edu.widgets.live import REPLACED_NOTE

    cells = nbformat.read(path, as_version=4).cells
    replaced = [i for i, c in enumerate(cells) if REPLACED_NOTE in _outputs_text(c)]
    assert replaced == [], f"{path.name}: cells {replaced} lost their live drawing"


# Issue 15: a lesson opens with what the learner will be able to do, what it assumes and
# how long it takes (at most a 50-minute class), and closes with PyTorch's names. Lessons
# 3, 5 and 8 are being split to fit (another branch), and lesson 13 has no Summary yet;
# they join this test when they are done.
NOT_YET = ("03_", "05_", "08_", "13_")
SHAPED = [p for p in LESSONS if not p.name.startswith(NOT_YET)]


def estimated_minutes(nb) -> float:
    """Reading at 150 words a minute; a code cell 1 minute (2 when longer than 8 lines,
    half when a one- or two-line check or display); 5 minutes an exercise."""
    from tinygrad_edu.lesson import exercises

    found = exercises.find(json.loads(nbformat.writes(nb)))
    inside = {i for e in found for i in e.solutions + e.checks}
    words = sum(len(c.source.split()) for c in nb.cells if c.cell_type == "markdown")
    code = 0.0
    for i, c in enumerate(nb.cells):
        if c.cell_type == "code" and i not in inside:
            n = len(c.source.strip().splitlines())
            code += 2 if n > 8 else 0.5 if n <= 2 else 1
    return words / 150 + code + 5 * len(found)


@pytest.mark.parametrize("path", SHAPED, ids=[p.stem for p in SHAPED])
def test_lesson_states_objectives_time_and_pytorchs_names(path):
    from tinygrad_edu.lesson import exercises

    nb = nbformat.read(path, as_version=4)
    intro = nb.cells[0].source
    assert "**By the end you can:**\n1. " in intro
    stated = int(re.search(r"\*\*Time:\*\* about (\d+) minutes", intro).group(1))
    estimate = estimated_minutes(nb)
    assert stated <= 50, f"{path.name}: {stated} minutes is more than one class"
    assert estimate <= stated + 0.5, f"{path.name}: says {stated} min, estimate {estimate:.0f}"
    summary = next(c.source for c in nb.cells if c.source.startswith("## Summary"))
    # a table with a PyTorch column: each tinygrad_edu name beside PyTorch's
    assert re.search(r"^\|[^\n]*PyTorch[^\n]*\|\n\|[-| ]+\|$", summary, flags=re.M), path.name
    assert len(exercises.find(json.loads(nbformat.writes(nb)))) >= 2


@pytest.mark.parametrize("path", SHAPED, ids=[p.stem for p in SHAPED])
def test_a_lesson_that_draws_graphs_shows_them_live(path):
    text = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells)
    # 5a and 5b draw RNN graphs folded step by step with tg.draw: a panel following the
    # unfolded training graphs (130 nodes) would show text too small to read
    unpaneled = ("05a_", "05b_", "12_", "13_", "14_")
    if "tg.draw(" in text and not path.name.startswith(unpaneled):
        assert "%load_ext tinygrad_edu" in text or "tg.live_panel()" in text, path.name


HELPERS = ("expect_close(", "expect_equal(", "check_grad(", "tg.gradcheck(")


@pytest.mark.parametrize("path", SHAPED, ids=[p.stem for p in SHAPED])
def test_every_check_says_what_differs(path):
    # a bare `x == y` check only says False; the helpers name the value, what was
    # expected, and (with hint=) the usual fix
    from tinygrad_edu.lesson import exercises

    nb = json.loads(path.read_text(encoding="utf-8"))
    bare = [
        (e.name, "".join(nb["cells"][i]["source"]).splitlines()[-1])
        for e in exercises.find(nb)
        for i in e.checks
        if not any(h in "".join(nb["cells"][i]["source"]) for h in HELPERS)
    ]
    assert bare == [], f"{path.name}: checks without a helper: {bare}"


@pytest.mark.slow
@pytest.mark.notebooks
@pytest.mark.parametrize("path", SHAPED, ids=[p.stem for p in SHAPED])
def test_student_copy_fails_every_check_with_a_message(path, tmp_path):
    # what README's first command and Binder open: nothing passes on leftovers of earlier
    # cells, nothing crashes; `tinygrad-edu lesson check --student` says the same
    from tinygrad_edu.lesson import grade, strip

    student, regions = strip.strip_notebook(json.loads(path.read_text(encoding="utf-8")))
    assert regions >= 2
    assert grade.student_problems(student, NOTEBOOKS, timeout=120) == []
