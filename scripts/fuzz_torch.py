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
import json
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import differential as dt  # noqa: E402

# differences accepted on purpose, each with its reason (kept beside the comparison)
KNOWN = dt.KNOWN
known = dt.known


def _worker(first: int, n: int, inplace_only: bool, more_ops: bool = False) -> None:
    """Run programs `first` .. `first + n - 1`, one JSON line each (the parent counts)."""
    torch_lib = dt.torch_lib()
    for seed in range(first, first + n):
        program = dt.generate(random.Random(seed), inplace_only=inplace_only, more_ops=more_ops)
        m = dt.differ(program, torch_lib)
        row = {"seed": seed}
        if m is not None:
            row.update(kind=m.kind, silent=m.silent, detail=m.detail, program=str(program))
        print(json.dumps(row), flush=True)


def _programs(first: int, n: int, inplace_only: bool, more_ops: bool = False):
    """Yield each program's row from worker processes; a program that crashes the worker
    (PyTorch itself segfaults on a few) is yielded as kind 'torch-crash', then the campaign
    goes on with the next seed."""
    seed, end = first, first + n
    while seed < end:
        cmd = [sys.executable, __file__, "--worker", "--seed", str(seed), "-n", str(end - seed)]
        if inplace_only:
            cmd.append("--inplace-only")
        if more_ops:
            cmd.append("--more-ops")
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        for line in proc.stdout:
            row = json.loads(line)
            seed = row["seed"] + 1
            yield row
        if proc.wait() != 0 and seed < end:
            yield {
                "seed": seed,
                "kind": "torch-crash",
                "silent": False,
                "detail": f"the process died with status {proc.returncode}",
                "program": str(
                    dt.generate(random.Random(seed), inplace_only=inplace_only, more_ops=more_ops)
                ),
            }
            seed += 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-n", type=int, default=1000, help="programs to run")
    p.add_argument("--seed", type=int, default=0, help="seed of the first program")
    p.add_argument(
        "--inplace-only", action="store_true", help="every program changes a tensor in place"
    )
    p.add_argument(
        "--more-ops",
        action="store_true",
        help="also copy_ and more views (view, flatten, movedim, unbind, chunk, t)",
    )
    p.add_argument("--show", type=int, default=2, help="programs to print per kind of mismatch")
    p.add_argument("--progress", type=int, default=1000, help="print a line every N programs")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        _worker(args.seed, args.n, args.inplace_only, args.more_ops)
        return 0

    kinds: collections.Counter = collections.Counter()
    accepted: collections.Counter = collections.Counter()
    crashed = []
    silent = 0
    shown: collections.Counter = collections.Counter()
    start = time.time()
    for k, row in enumerate(_programs(args.seed, args.n, args.inplace_only, args.more_ops)):
        if row.get("kind") == "torch-crash":
            crashed.append(row["seed"])
            print(
                f"--- torch-crash (seed {row['seed']}): {row['detail']}\n{row['program']}\n",
                flush=True,
            )
        elif "kind" in row:
            m = dt.Mismatch(row["kind"], row["detail"], row["silent"])
            reason = known(m)
            if reason is not None:
                accepted[reason] += 1
            else:
                kinds[m.kind] += 1
                silent += m.silent
                if shown[m.kind] < args.show:
                    shown[m.kind] += 1
                    print(
                        f"--- {m.kind} (seed {row['seed']}{', silent' if m.silent else ''}): "
                        f"{m.detail}\n{row['program']}\n",
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
    if crashed:
        print(f"PyTorch crashed (not compared): {len(crashed)} (seeds {crashed[:10]})")
    return 1 if kinds else 0


if __name__ == "__main__":
    sys.exit(main())
