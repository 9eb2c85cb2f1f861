"""A long differential campaign: random programs in tinygrad_edu and PyTorch, compared.

    python scripts/fuzz_torch.py -n 20000 --seed 0
    python scripts/fuzz_torch.py -n 3000 --seed 1 --inplace-only

Prints the figures: programs run, mismatches by kind, and how many were *silently
wrong* (tinygrad gave a number, without raising, that PyTorch does not give), with
the first few programs of each kind to reproduce (`--show N`). Differences accepted on
purpose are in KNOWN, each with its reason; they are counted apart, never hidden.
Needs torch (a CPU build is enough); the programs come from tests/differential.py.
"""

from __future__ import annotations

import argparse
import collections
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import differential as dt  # noqa: E402

# (kind, a regular expression on the mismatch's detail) -> why the difference is accepted
KNOWN: dict[tuple[str, str], str] = {}


def known(m: dt.Mismatch) -> str | None:
    import re

    for (kind, pattern), reason in KNOWN.items():
        if m.kind == kind and re.search(pattern, m.detail):
            return reason
    return None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-n", type=int, default=1000, help="programs to run")
    p.add_argument("--seed", type=int, default=0, help="seed of the first program")
    p.add_argument(
        "--inplace-only", action="store_true", help="every program changes a tensor in place"
    )
    p.add_argument("--show", type=int, default=2, help="programs to print per kind of mismatch")
    p.add_argument("--progress", type=int, default=1000, help="print a line every N programs")
    args = p.parse_args(argv)

    torch_lib = dt.torch_lib()
    kinds: collections.Counter = collections.Counter()
    accepted: collections.Counter = collections.Counter()
    silent = 0
    shown: collections.Counter = collections.Counter()
    start = time.time()
    for k in range(args.n):
        seed = args.seed + k
        program = dt.generate(random.Random(seed), inplace_only=args.inplace_only)
        m = dt.differ(program, torch_lib)
        if m is not None:
            reason = known(m)
            if reason is not None:
                accepted[reason] += 1
            else:
                kinds[m.kind] += 1
                silent += m.silent
                if shown[m.kind] < args.show:
                    shown[m.kind] += 1
                    print(
                        f"--- {m.kind} (seed {seed}{', silent' if m.silent else ''}): "
                        f"{m.detail}\n{program}\n",
                        flush=True,
                    )
        if args.progress and (k + 1) % args.progress == 0:
            print(
                f"... {k + 1} programs, {sum(kinds.values())} mismatches, {silent} silently "
                f"wrong, {time.time() - start:.0f} s",
                flush=True,
            )
    mode = "in-place programs" if args.inplace_only else "programs"
    print(
        f"\n{args.n} {mode} (seeds {args.seed}..{args.seed + args.n - 1}) in "
        f"{time.time() - start:.0f} s"
    )
    print(
        f"mismatches: {sum(kinds.values())}"
        + "".join(f"\n  {kind}: {n}" for kind, n in kinds.most_common())
    )
    print(f"silently wrong: {silent}")
    if accepted:
        print("accepted (KNOWN):" + "".join(f"\n  {n}: {r}" for r, n in accepted.items()))
    return 1 if kinds else 0


if __name__ == "__main__":
    sys.exit(main())
