"""Two checkouts of tinygrad_edu, timed against each other fairly on a noisy machine.

Run: `python benchmarks/compare.py /tmp/main-ref` (another checkout's root; this one is the
other side). Add `--rounds 12` for more rounds, `--only W1,W2` for some workloads.

A shared machine's speed drifts by 10-20 % over minutes, so two separate runs of
bench_core.py compare the machine as much as the code. Here each round runs one fresh
process per checkout (PYTHONPATH picks the package), taking turns in which goes first;
each process times every workload a few times and reports its best. The table shows,
per checkout, the best and the median over rounds, and the median over rounds of the
ratio between the two checkouts *in the same round* (the fairest figure: both ran within
seconds of each other). Wall time (`time.perf_counter`), as a learner waits for it; BLAS
runs on one thread on both sides (numpy's matmul, so W1 and W4 are not timing its threads).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPEATS = 7  # timed runs per workload in one process; its best is reported
# BLAS on one thread, in every process (set before numpy loads): on a shared machine its
# worker threads wait for cores, which makes the matmul workloads' times swing by 5x
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")


def _best(fn, repeats: int = REPEATS) -> float:
    """Best wall time of `repeats` runs (bench_core's timing loop; the worker put it on the path)."""
    import bench_core

    return min(bench_core.in_turns({"fn": fn}, repeats)["fn"])


def worker(only: list[str]) -> None:
    """One process: time the workloads with whichever tinygrad_edu PYTHONPATH gives."""
    sys.modules["torch"] = None  # bench_core's PyTorch column is not wanted here
    sys.path.insert(0, HERE)
    import bench_core as bc

    x, y = bc.moons()
    out: dict[str, float] = {}
    if "W1" in only:
        out["W1"] = _best(bc.w1_tg(x, y)) / bc.W1_STEPS * 1e3  # ms per step
    if "W2" in only:
        out["W2"] = _best(bc.chain_tg(2000)) / 2000 * 1e6  # us per op
    if "W3" in only:
        out["W3"] = _best(bc.chain_tg(100_000), repeats=2)  # s in all
    if "W4" in only:
        xs, labels = bc.w4_data()
        out["W4"] = _best(bc.w4_tg(xs, labels)) / bc.W4_STEPS * 1e3  # ms per step
    print(json.dumps(out))


def numpy_floor(only: list[str]) -> dict[str, float]:
    """The hand-written numpy versions, in the same units (for the ratio to numpy)."""
    sys.modules["torch"] = None
    sys.path.insert(0, HERE)
    import bench_core as bc

    x, y = bc.moons()
    out = {}
    if "W1" in only:
        out["W1"] = _best(bc.w1_numpy(x, y)) / bc.W1_STEPS * 1e3
    if "W2" in only:
        out["W2"] = _best(bc.chain_numpy(2000)) / 2000 * 1e6
    if "W3" in only:
        out["W3"] = _best(bc.chain_numpy(100_000), repeats=2)
    if "W4" in only:
        xs, labels = bc.w4_data()
        out["W4"] = _best(bc.w4_numpy(xs, labels)) / bc.W4_STEPS * 1e3
    return out


def run_one(root: str, only: list[str]) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=root)
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--only", ",".join(only)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    args = sys.argv[1:]
    only = ["W1", "W2", "W3", "W4"]
    if "--only" in args:
        only = args[args.index("--only") + 1].split(",")
    if "--worker" in args:
        worker(only)
        return
    rounds = int(args[args.index("--rounds") + 1]) if "--rounds" in args else 8
    ref = os.path.abspath(args[0])
    ours = os.path.dirname(HERE)
    sides = {"ref": ref, "ours": ours}
    results: dict[str, list[dict]] = {"ref": [], "ours": []}
    for r in range(rounds):
        order = ["ref", "ours"] if r % 2 == 0 else ["ours", "ref"]
        for side in order:
            results[side].append(run_one(sides[side], only))
        print(
            f"round {r + 1}/{rounds}: "
            + "  ".join(
                f"{w} {results['ref'][-1][w]:.3f}/{results['ours'][-1][w]:.3f}" for w in only
            ),
            flush=True,
        )
    floor = numpy_floor(only)
    units = {"W1": "ms/step", "W2": "us/op", "W3": "s", "W4": "ms/step"}
    print(f"\nref  = {ref}\nours = {ours}\n{rounds} rounds, best of {REPEATS} per process")
    print(
        f"{'':4} {'unit':8} {'ref min':>9} {'ref med':>9} {'ours min':>9} {'ours med':>9}"
        f" {'ours/ref':>9} {'numpy':>8} {'ref/np':>7} {'ours/np':>7}"
    )
    for w in only:
        a = [res[w] for res in results["ref"]]
        b = [res[w] for res in results["ours"]]
        paired = statistics.median(y / x for x, y in zip(a, b))
        print(
            f"{w:4} {units[w]:8} {min(a):9.3f} {statistics.median(a):9.3f} {min(b):9.3f}"
            f" {statistics.median(b):9.3f} {paired:9.3f} {floor[w]:8.3f}"
            f" {min(a) / floor[w]:7.2f} {min(b) / floor[w]:7.2f}"
        )


if __name__ == "__main__":
    main()
