"""A long differential campaign for nn and optim: random training programs in tinygrad_edu
and PyTorch, compared after every step.

    python scripts/fuzz_nn.py -n 3000 --seed 0
    python scripts/fuzz_nn.py -n 200 --seed 5000 --show 3 --shrink

Prints the figures: programs run, mismatches by kind, and how many were *silently
wrong* (tinygrad gave a number, without raising, that PyTorch does not give), with the
first few programs of each kind (`--show N`), made smaller first with `--shrink` and
printed as PyTorch code with every number written out. Differences accepted on purpose
are in KNOWN (tests/nn_differential.py), each with its reason; they are counted apart,
never hidden. Needs torch (a CPU build is enough). One process runs the programs (the
parent only counts), restarted after a crash of PyTorch itself.
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]  # this checkout's tinygrad_edu, not another

import nn_differential as nd  # noqa: E402


def _worker(first: int, n: int, show: int, shrink: bool) -> None:
    """Run programs `first` .. `first + n - 1`, one JSON line each (the parent counts)."""
    torch_lib = nd.torch_lib()
    shown: collections.Counter = collections.Counter()
    for seed in range(first, first + n):
        program = nd.seeded(seed)
        records: list = []
        m = nd.differ(program, torch_lib, records)
        row: dict = {"seed": seed}
        ours, theirs = records
        if m is None and ours.error is not None:  # both refused the same step: their words
            row["both"] = [ours.error_at, nd._short(ours.error), nd._short(theirs.error)]
        if m is not None:
            row.update(kind=m.kind, silent=m.silent, detail=m.detail)
            if shown[m.kind] < show and nd.known(m) is None:
                shown[m.kind] += 1
                small = nd.shrink(program, torch_lib, m.kind) if shrink else program
                again = nd.differ(small, torch_lib) or m
                row.update(detail=again.detail, program=nd.reproducer(small))
        print(json.dumps(row), flush=True)


def _programs(first: int, n: int, show: int, shrink: bool):
    """Yield each program's row from a worker process; a program that crashes the worker
    is yielded as kind 'torch-crash', then the campaign goes on with the next seed."""
    seed, end = first, first + n
    while seed < end:
        cmd = [sys.executable, __file__, "--worker", "--seed", str(seed), "-n", str(end - seed)]
        cmd += ["--show", str(show)] + (["--shrink"] if shrink else [])
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        for line in proc.stdout:
            row = json.loads(line)
            seed = row["seed"] + 1
            yield row
        if proc.wait() != 0 and seed < end:
            detail = f"the process died with status {proc.returncode}"
            yield {"seed": seed, "kind": "torch-crash", "silent": False, "detail": detail}
            seed += 1


def _summary(args: Any, kinds: collections.Counter, accepted: collections.Counter,
             silent: int, seconds: float) -> None:  # fmt: skip
    last = args.seed + args.n - 1
    print(f"\n{args.n} programs (seeds {args.seed}..{last}) in {seconds:.0f} s")
    print(
        f"mismatches: {sum(kinds.values())}"
        + "".join(f"\n  {kind}: {n}" for kind, n in kinds.most_common())
    )
    print(f"silently wrong: {silent}")
    if accepted:
        print("accepted (KNOWN):" + "".join(f"\n  {n}: {r}" for r, n in accepted.items()))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-n", type=int, default=1000, help="programs to run")
    p.add_argument("--seed", type=int, default=0, help="seed of the first program")
    p.add_argument("--show", type=int, default=2, help="programs to print per kind of mismatch")
    p.add_argument("--shrink", action="store_true", help="make the shown programs smaller first")
    p.add_argument("--progress", type=int, default=500, help="print a line every N programs")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        _worker(args.seed, args.n, args.show, args.shrink)
        return 0
    kinds: collections.Counter = collections.Counter()
    accepted: collections.Counter = collections.Counter()
    both: collections.Counter = collections.Counter()  # where both libraries refused
    silent, start = 0, time.time()
    for k, row in enumerate(_programs(args.seed, args.n, args.show, args.shrink)):
        if "both" in row:
            at, mine, theirs = row["both"]
            where = at.split(" ", 2)[-1] if at.startswith("step") else at
            both[where] += 1
            if both[where] <= args.show:
                print(f"--- both raised at {at} (seed {row['seed']}):\n  tinygrad: {mine}\n"
                      f"  torch:    {theirs}\n", flush=True)  # fmt: skip
        if "kind" in row:
            m = nd.Mismatch(row["kind"], row["detail"], row["silent"])
            reason = nd.known(m)
            if reason is not None:
                accepted[reason] += 1
            else:
                kinds[m.kind] += 1
                silent += m.silent
                if "program" in row or m.kind == "torch-crash":
                    quiet = ", silent" if m.silent else ""
                    print(f"--- {m.kind} (seed {row['seed']}{quiet}): {m.detail}", flush=True)
                    print(row.get("program", ""), "\n", flush=True)
        if args.progress and (k + 1) % args.progress == 0:
            print(
                f"... {k + 1} programs, {sum(kinds.values())} mismatches, {silent} silently "
                f"wrong, {time.time() - start:.0f} s",
                flush=True,
            )
    _summary(args, kinds, accepted, silent, time.time() - start)
    print("both raised (agree): " + ", ".join(f"{n} at {at}" for at, n in both.most_common()))
    return 1 if kinds else 0


if __name__ == "__main__":
    sys.exit(main())
