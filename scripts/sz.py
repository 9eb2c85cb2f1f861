"""Print lines of code per package file (non-blank, non-comment), biggest layers first.

Run in CI and quoted in closing notes so the core stays readable in one sitting.
"""

from __future__ import annotations

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent / "tinygrad_edu"


def count(path: pathlib.Path) -> int:
    lines = path.read_text(encoding="utf-8").splitlines()
    return sum(1 for line in lines if line.strip() and not line.strip().startswith("#"))


def main() -> int:
    totals: dict[str, int] = {}
    rows = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        n = count(path)
        layer = rel.parts[0] if len(rel.parts) > 1 else rel.stem
        totals[layer] = totals.get(layer, 0) + n
        rows.append((str(rel), n))
    width = max(len(r) for r, _ in rows)
    for rel, n in rows:
        print(f"{rel:<{width}}  {n:5d}")
    print("-" * (width + 7))
    for layer, n in sorted(totals.items(), key=lambda kv: -kv[1]):
        print(f"{layer:<{width}}  {n:5d}")
    print(f"{'total':<{width}}  {sum(totals.values()):5d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
