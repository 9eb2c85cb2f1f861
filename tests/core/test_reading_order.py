"""docs/reading_order.md's first sitting is the code `loss.backward()` runs, and its size is
counted here, not by hand.

Each numbered step of the first sitting names a file (`tinygrad_edu/core/engine.py`) and
the functions to read in it with their lines (`steps` (line 87)). The tests trace a
backward through one op into two leaves and check that the page names every function
that runs, in the files' order, at the lines it gives, and that the size the page states
(lines of code: no blank, comment or docstring lines; and files) is the traced one, within
the budget of one sitting (issue 28: 180 lines in 4 files).
"""

from __future__ import annotations

import io
import re
import sys
import tokenize
from functools import cache
from pathlib import Path

import tinygrad_edu as tg

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "reading_order.md"
PKG = ROOT / "tinygrad_edu"
STEP = re.compile(r"^\d+\. ", re.M)
FILE = re.compile(r"`(tinygrad_edu/[\w/]+\.py)`")
CITED = re.compile(r"`([\w.]+)`,?\s+\(?line\s+(\d+)")
SIZE = re.compile(r"## One sitting: .*\((\d+) lines of code in (\d+) files\)")
BUDGET_LINES, BUDGET_FILES = 180, 4


def _page() -> str:
    return PAGE.read_text(encoding="utf-8")


def _first_sitting() -> list[str]:
    sitting = _page().split("## One sitting", 1)[1].split("\n## ", 1)[0]
    starts = [m.start() for m in STEP.finditer(sitting)]
    return [sitting[a:b] for a, b in zip(starts, starts[1:] + [len(sitting)])]


@cache
def _code_lines(path: str) -> frozenset[int]:
    """Lines of `path` that hold code: not blank, not only a comment, not a docstring."""
    tokens = list(tokenize.generate_tokens(io.StringIO(Path(path).read_text()).readline))
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
    lines: set[int] = set()
    for i, tok in enumerate(tokens):
        if tok.type in skip or tok.type == tokenize.ENDMARKER:
            continue
        before = next(
            (t for t in reversed(tokens[:i]) if t.type not in skip - {tokenize.NEWLINE}), None
        )
        alone = before is None or before.type == tokenize.NEWLINE or before.string == ":"
        if tok.type == tokenize.STRING and alone and tokens[i + 1].type == tokenize.NEWLINE:
            continue  # a docstring (a string that is a whole statement)
        lines.update(range(tok.start[0], tok.end[0] + 1))
    return frozenset(lines)


def _traced_backward() -> list:
    """The package's code objects a `loss.backward()` runs, in the order first run:
    `loss = a * b`, one op between the loss and two leaves."""
    a = tg.tensor(2.0, requires_grad=True)
    b = tg.tensor(3.0, requires_grad=True)
    loss = a * b
    ran: dict = {}

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith(str(PKG)):
            ran.setdefault(frame.f_code, None)

    sys.setprofile(profile)
    try:
        loss.backward()
    finally:
        sys.setprofile(None)
    assert a.grad.item() == 3.0 and b.grad.item() == 2.0
    return list(ran)


def _size(codes: list) -> dict[str, set[int]]:
    """file -> the code lines of the functions that ran there (nested ones counted once)."""
    per_file: dict[str, set[int]] = {}
    for code in codes:
        last = max(line for _, _, line in code.co_lines() if line is not None)
        lines = range(code.co_firstlineno, last + 1)
        code_lines = _code_lines(code.co_filename)
        per_file.setdefault(code.co_filename, set()).update(n for n in lines if n in code_lines)
    return per_file


def _cited_at(lines: list[str], name: str) -> list[int]:
    """Where `name` (`steps`, or `Class.method`) is defined: its `def`/`class` lines."""
    *owner, short = name.split(".")
    start = 0
    if owner:
        start = next(i for i, line in enumerate(lines) if re.match(rf"class {owner[-1]}\b", line))
    return [
        i + 1
        for i, line in enumerate(lines)
        if i >= start and re.match(rf"\s*(def|class) {re.escape(short)}\b", line)
    ][:1]


def test_each_cited_function_is_at_its_line():
    wrong, checked = [], 0
    for step in _first_sitting():
        path = ROOT / FILE.search(step).group(1)
        lines = path.read_text(encoding="utf-8").splitlines()
        for name, number in CITED.findall(step):
            checked += 1
            where = _cited_at(lines, name)
            if [int(number)] != where:
                wrong.append(f"{path.name}: `{name}` is at line {where}, the page says {number}")
    assert checked >= 10
    assert not wrong, "\n".join(wrong)


def test_the_sitting_names_every_function_backward_runs_in_the_order_it_reaches_them():
    steps = _first_sitting()
    files = [FILE.search(step).group(1) for step in steps]
    cited = {
        (FILE.search(step).group(1), name.split(".")[-1])
        for step in steps
        for name, _ in CITED.findall(step)
    }
    ran = _traced_backward()
    missing = []
    for code in ran:
        where = Path(code.co_filename).relative_to(ROOT).as_posix()
        if not code.co_name.startswith("<") and (where, code.co_name) not in cited:
            missing.append(f"{where}: {code.co_name} (line {code.co_firstlineno})")
    assert not missing, "the first sitting does not name:\n" + "\n".join(missing)
    first_reached = list(
        dict.fromkeys(Path(c.co_filename).relative_to(ROOT).as_posix() for c in ran)
    )
    assert first_reached == files  # the page's steps follow the path, file by file


def test_the_stated_size_is_the_traced_one_and_fits_one_sitting():
    per_file = _size(_traced_backward())
    lines, files = sum(map(len, per_file.values())), len(per_file)
    stated = SIZE.search(_page())
    assert stated, "the first sitting's heading states its size: (N lines of code in M files)"
    assert (int(stated.group(1)), int(stated.group(2))) == (lines, files)
    assert lines <= BUDGET_LINES and files <= BUDGET_FILES


def test_code_lines_skip_comments_docstrings_and_blank_lines(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(
        'def f(x):\n    """Doc."""\n    # why\n\n    y = (x +\n         1)\n    return "s"\n'
    )
    assert sorted(_code_lines(str(path))) == [1, 5, 6, 7]
