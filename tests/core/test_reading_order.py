"""docs/reading_order.md sends a learner to named functions at given lines: they are there.

Each numbered step of the first sitting names a file (`tinygrad_edu/core/engine.py`) and
the functions to read in it with their lines (`steps` (line 208)). A change that moves
or renames one fails here with the line it is at now, so the page is fixed with it.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "reading_order.md"
STEP = re.compile(r"^\d+\. ", re.M)
FILE = re.compile(r"`(tinygrad_edu/[\w/]+\.py)`")
CITED = re.compile(r"`([\w.]+)`,?\s+\(?line\s+(\d+)")


def _first_sitting() -> list[str]:
    text = PAGE.read_text(encoding="utf-8")
    sitting = text.split("## One sitting", 1)[1].split("\n## ", 1)[0]
    starts = [m.start() for m in STEP.finditer(sitting)]
    return [sitting[a:b] for a, b in zip(starts, starts[1:] + [len(sitting)])]


def test_each_cited_function_is_at_its_line():
    steps = _first_sitting()
    assert len(steps) >= 4
    wrong, checked = [], 0
    for step in steps:
        path = ROOT / FILE.search(step).group(1)
        lines = path.read_text(encoding="utf-8").splitlines()
        for name, number in CITED.findall(step):
            short = name.rsplit(".", 1)[-1]
            where = [
                i + 1
                for i, line in enumerate(lines)
                if re.match(rf"\s*(def|class) {re.escape(short)}\b", line)
            ]
            checked += 1
            if int(number) not in where:
                wrong.append(f"{path.name}: `{name}` is at line {where}, the page says {number}")
    assert checked >= 10
    assert not wrong, "\n".join(wrong)
