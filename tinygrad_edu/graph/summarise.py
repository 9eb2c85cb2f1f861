"""Summarise big graphs so a drawing never takes seconds: collapse, fold, cap.

Three steps, each optional, on the lean node list from build.py (before any label
text is made, so hidden nodes cost almost nothing):

1. collapse modules: every node built inside a collapsed module path becomes one
   summary node named after the module;
2. fold repeats: runs of collapsed sibling modules with the same ops (`layers.0` ...
   `layers.9`), the steps of a module called in a loop (`rnncell.t=1` ... `t=10`, see
   time_steps.py), and long chains of the same ops (`x = x * w + b` in a Python loop),
   become one node "x 10" that keeps the first and last block visible;
3. cap: beyond `max_nodes`, the nodes farthest from the outputs are replaced by
   "N more nodes" markers, one per place where the cut was made.

Graph layer: numpy, the standard library, options.py and time_steps.py only.
"""

from __future__ import annotations

import itertools
import operator
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from .options import DrawOptions
from .time_steps import STEP, step_of

MIN_REPEATS = 4  # a block must repeat this often before it is folded
MAX_PERIOD = 8  # longest repeated op sequence looked for in chains (an MLP layer pair)
_DIVISORS = {p: tuple(q for q in range(1, p) if p % q == 0) for p in range(1, MAX_PERIOD + 1)}


@dataclass
class Summary:
    """A node standing for hidden nodes: a module, a folded repeat, or "N more nodes"."""

    role: str  # "module" | "repeat" | "more"
    name: str
    module: str = ""
    detail: str = ""
    count: int = 0
    new: bool = False
    pos: int = 0  # where it sits in the node order (its first member)
    blocks: int = 0  # repeats: how many identical blocks were folded
    id: str = ""
    members: list[int] = field(default_factory=list, repr=False)


def _prefixes(raw: Any, collapse: Literal[True] | tuple[str, ...]) -> list[tuple]:
    if collapse is True:
        return list(dict.fromkeys(m[:1] for m in raw.module if m))
    return sorted({tuple(c.split(".")) for c in collapse}, key=len)


def summarise(raw: Any, options: DrawOptions) -> tuple[list, list[tuple[int, int, int]], int]:
    """Pick the nodes to show: returns (kept, edges between them, hidden count).

    `raw` is build.py's RawGraph. Kept entries are raw node indices (int) or `Summary`
    objects, in drawing order; edges are `(src, dst, slot)` positions in that list.
    Of `options`: `collapse`, `fold`, `max_nodes`; `expand` names time steps to keep
    open, `keep_ends=False` folds a loop's first and last steps too.
    """
    n = len(raw)
    opened = options.expand
    fold = options.fold and opened is not True  # everything open: no folded steps, blocks or chains
    unit = list(range(n))  # raw index -> unit: itself, or n + index of its summary
    summaries: list[Summary] = []
    prefixes = _prefixes(raw, options.collapse)
    if prefixes:
        _collapse_modules(raw, prefixes, unit, summaries, n)
        if fold:
            _fold_modules(raw, summaries, unit, n)
    if fold and raw.forward:
        shut = opened if isinstance(opened, frozenset) else frozenset()
        _fold_steps(raw, unit, summaries, n, shut, options.keep_ends)
    if fold and raw.link:
        _fold_chains(raw, unit, summaries, n)
    if not summaries:
        units = list(range(n))  # nothing grouped: the raw nodes and edges as they are
        unit_edges: Any = raw.edges
    else:
        units = list(dict.fromkeys(unit))
        # (src, dst, slot); edges into or out of a summary are merged whatever the slot
        unit_edges = dict.fromkeys(
            (us, ud, slot if us < n and ud < n else 0)
            for us, ud, slot in ((unit[s], unit[d], slot) for s, d, slot in raw.edges)
            if us != ud
        )
    roots = [unit[i] for i in itertools.compress(range(n), raw.root)]
    max_nodes = options.max_nodes
    return finish(n, units, unit_edges, roots, raw.new, summaries, raw.forward, max_nodes)


def _collapse_modules(
    raw: Any, prefixes: list[tuple], unit: list[int], summaries: list[Summary], n: int
) -> None:
    """One summary node per collapsed module path, standing for every node built inside it."""
    by_prefix: dict[tuple, int] = {}
    for i, m in enumerate(raw.module):
        if not m or raw.root[i]:  # a root stays visible: the learner asked for it
            continue
        for p in prefixes:
            if m[: len(p)] == p:
                k = by_prefix.get(p)
                if k is None:
                    k = by_prefix[p] = len(summaries)
                    summaries.append(Summary("module", ".".join(p), module=".".join(p[:-1]), pos=i))
                summaries[k].members.append(i)
                unit[i] = n + k
                break
    for s in summaries:
        s.count = len(s.members)
        s.detail = signature_text([raw.obj[i].op for i in s.members if raw.kind[i] == "op"])
        s.new = any(raw.new[i] for i in s.members)


def finish(
    n: int,
    units: list[int],
    unit_edges: Any,
    roots: list[int],
    new: Any,
    summaries: list[Summary],
    forward: bool,
    max_nodes: int | None,
) -> tuple[list, list[tuple[int, int, int]], int]:
    """Cap and order the units: raw indices (< n) and `n + k` for `summaries[k]`.

    `unit_edges` are unit edges in raw-edge order (that order decides ties in the cap),
    `roots` the units of the root tensors in raw order, `new[i]` the flag of raw node i.
    Shared by `summarise` and the op-level pass (opwalk.py), which skips hidden nodes.
    """
    hidden = 0
    if max_nodes is not None and len(units) > max_nodes:
        units, unit_edges, hidden = _cap(unit_edges, roots, new, summaries, forward, n, max_nodes)

    def pos(u: int) -> int:
        return u if u < n else summaries[u - n].pos

    units.sort(key=lambda u: (pos(u), u >= n))
    k = 0
    for u in units:
        if u >= n:
            k += 1
            summaries[u - n].id = f"s{k}"
    where = {u: i for i, u in enumerate(units)}
    kept = [u if u < n else summaries[u - n] for u in units]
    out_edges = sorted(
        (where[s], where[d], slot) for (s, d, slot) in unit_edges if s in where and d in where
    )
    return kept, out_edges, hidden


def signature_text(names: list[str]) -> str:
    if not names:
        return ""
    if len(names) <= 4:
        return " -> ".join(names)
    return f"{', '.join(names[:3])}, ..."


def _fold_modules(raw: Any, summaries: list[Summary], unit: list[int], n: int) -> None:
    """Fold runs of >= MIN_REPEATS adjacent sibling modules with the same ops into one node.

    Adjacent: no other sibling ran between them. `layers.3` left open splits the run
    `layers.0` ... `layers.7` in two, as an opened `rnncell.t=5` splits the steps;
    one box over both sides would claim to hold the open one too.
    """
    run: list[Summary] = []

    def flush() -> None:
        if len(run) >= MIN_REPEATS:
            # keep the first and last block: the learner sees how blocks connect
            middle = run[1:-1]
            s = Summary(
                "repeat",
                f"{middle[0].name} ... {middle[-1].name}",
                module=run[0].module,
                detail=run[0].detail,
                pos=middle[0].pos,
            )
            s.blocks = len(middle)
            summaries.append(s)
            idx = n + len(summaries) - 1
            for m in middle:
                for i in m.members:
                    unit[i] = idx
                s.members.extend(m.members)
                m.members = []
            s.count = len(s.members)
            s.new = any(raw.new[i] for i in s.members)
        run.clear()

    for s in list(summaries):
        if run and (
            run[-1].module != s.module
            or run[-1].detail != s.detail
            or _sibling_between(raw, run[-1], s)
        ):
            flush()
        run.append(s)
    flush()


def _sibling_between(raw: Any, a: Summary, b: Summary) -> bool:
    """Whether another module under a's and b's parent built nodes between a and b."""
    path = tuple(a.name.split("."))
    parent, depth = path[:-1], len(path)
    mine = {path, tuple(b.name.split("."))}
    for m in raw.module[a.members[-1] + 1 : b.members[0]]:
        if len(m) >= depth and m[: depth - 1] == parent and m[:depth] not in mine:
            return True
    return False


def _fold_steps(
    raw: Any,
    unit: list[int],
    summaries: list[Summary],
    n: int,
    opened: frozenset[str],
    keep_ends: bool = True,
) -> None:
    """Fold the middle steps of a long unroll into one node, keeping the steps asked for.

    With `keep_ends=False` the first and the last step are folded too: a drawing with
    an opened step that must fit one screen. Each fold is still one run of adjacent
    steps (`t=0 ... t=4`, `t=6 ... t=11` around an opened `t=5`), never steps from
    both sides of an open one.
    """
    steps: dict[str, dict[int, list[int]]] = {}  # module -> step -> its raw nodes
    for i, m in enumerate(raw.module):
        t = step_of(m)
        if t is not None and unit[i] == i:
            steps.setdefault(m[0], {}).setdefault(t, []).append(i)
    for top, by_step in steps.items():
        last = max(by_step)
        if last + 1 < MIN_REPEATS:
            continue
        # the first and the last step stay open, so the learner sees how steps connect;
        # between them, each run of two or more closed steps becomes one node (a step
        # opened or missing ends a run: a fold only ever holds adjacent steps)
        first, end = (1, last) if keep_ends else (0, last + 1)
        run: list[int] = []
        for t in range(first, end + 1):
            if t < end and t in by_step and f"{top}.{STEP}{t}" not in opened:
                run.append(t)
                continue
            if len(run) >= 2:
                ops = [raw.obj[i].op for i in by_step[run[0]] if raw.kind[i] == "op"]
                s = Summary(
                    "repeat",
                    f"{top}.{STEP}{run[0]} ... {STEP}{run[-1]}",
                    module=top,
                    detail=signature_text(ops),
                    pos=by_step[run[0]][0],
                )
                s.blocks = len(run)
                summaries.append(s)
                for step in run:
                    for i in by_step[step]:
                        unit[i] = n + len(summaries) - 1
                    s.members.extend(by_step[step])
                s.count = len(s.members)
                s.new = any(raw.new[i] for i in s.members)
            run = []


def chain_links(ops: np.ndarray, readers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The links `ops[i] -> readers[i]` that chains follow: one into each reader.

    `readers[i]` is the one op that reads op `ops[i]`'s output; `ops` are in creation
    order, and an op is read only by later ops. Where several such ops feed one op, only
    one links to it, so chains never merge: merged chains would share their end, a fold
    of each would claim the same ops (overlapping boxes), and following every chain to
    its end would walk the shared part once per chain (quadratic in a long loop). The
    longest chain keeps the link, the path the data came along: `h @ w.T` continues
    the previous layer, not the transpose; `x @ w_ih.T + h @ w_hh.T` continues `h`'s
    chain through the time steps, not this step's `x` (on a tie, the earliest op).
    Both views use this one rule. Returns the kept `(ops, readers)`, in the order given.
    """
    size = max(int(ops.max()), int(readers.max())) + 1 if len(ops) else 0
    length = [1] * size  # ops in the chain that ends at op k (k alone: 1)
    kept = [False] * len(ops)
    into = [-1] * size  # reader -> the index of its kept link
    # one pass in creation order: every link into op b comes before b's own link
    for i, (b, a) in enumerate(zip(ops.tolist(), readers.tolist())):
        if length[b] >= length[a]:  # longer than the chain a has (or a has none yet)
            length[a] = length[b] + 1
            if into[a] >= 0:
                kept[into[a]] = False
            into[a] = i
            kept[i] = True
    mask = np.array(kept, dtype=bool)
    return ops[mask], readers[mask]


def _fold_chains(raw: Any, unit: list[int], summaries: list[Summary], n: int) -> None:
    """Fold long straight chains of one repeated op sequence (a Python loop) into one node.

    `raw.link` never joins two chains (`chain_links`), so each op is walked once.
    """
    link = {a: b for a, b in raw.link.items() if unit[a] == a and unit[b] == b}
    has_pred = set(link.values())
    before = len(summaries)
    for start in sorted(a for a in link if a not in has_pred):
        chain = [start]
        while chain[-1] in link:
            chain.append(link[chain[-1]])
        if len(chain) >= MIN_REPEATS:
            _fold_chain(raw, chain, unit, summaries, n)
    if len(summaries) == before:
        return
    # outputs and constants go with their op (an output sits right after its op, the
    # op's constants right before it); so does a leaf only one fold uses (a layer's own
    # weight), while a leaf used elsewhere too (an RNN's shared weight) stays visible
    attach, root = raw.attach, raw.root
    for s in summaries[before:]:
        u = unit[s.members[0]]
        for o in list(s.members):
            t = o + 1
            if raw.forward and t < n and attach[t] == o and not root[t]:
                unit[t] = u
                s.members.append(t)
            t = o - 1  # back to the previous op's output: this op's constants and new leaves
            while t >= 0 and raw.kind[t] == "tensor" and raw.slot[t] != -1:
                if attach[t] == o:
                    unit[t] = u
                    s.members.append(t)
                t -= 1
    for leaf, users in raw.leaf_ops.items():
        u = unit[users[0]]
        if u >= n and unit[leaf] == leaf and not root[leaf] and all(unit[x] == u for x in users):
            unit[leaf] = u
            summaries[u - n].members.append(leaf)
    for s in summaries[before:]:
        s.count = len(s.members)
        s.new = any(raw.new[i] for i in s.members)


def _fold_chain(
    raw: Any, chain: list[int], unit: list[int], summaries: list[Summary], n: int
) -> None:
    names = [raw.obj[i].op for i in chain]
    for i, p, reps in repeats(names):
        # keep the first and the last block visible, fold the blocks between
        ops = chain[i + p : i + (reps - 1) * p]
        s = Summary(
            "repeat",
            " -> ".join(names[i : i + p]),
            module=".".join(raw.module[ops[0]]),
            detail=" -> ".join(names[i : i + p]),
            pos=ops[0],
        )
        s.blocks = reps - 2
        summaries.append(s)
        idx = n + len(summaries) - 1
        for o in ops:
            unit[o] = idx
        s.members.extend(ops)


def repeats(names: list[str]) -> list[tuple[int, int, int]]:
    """Runs of one repeated name sequence in a chain: (start, period, repeats), in order.

    At each position the period covering the most names wins (the shortest on a tie).
    """
    out: list[tuple[int, int, int]] = []
    if not _may_repeat(names):  # most chains of a learner's cell: nothing to look for
        return out
    i = 0
    n = len(names)
    ends = [0] * (MAX_PERIOD + 1)  # ends[p]: where period p stopped matching, from i
    while i < n:
        best = None
        for p in range(1, MAX_PERIOD + 1):
            # a multiple of a period that matched past i + p stops where that one did,
            # with no more names covered: it cannot win, skip its scan (a long loop).
            # (map and max, not any() over a generator: this runs 8 times a name)
            divisors = _DIVISORS[p]
            if divisors and max(map(ends.__getitem__, divisors)) >= i + p:
                ends[p] = 0
                continue
            j = i + p
            while j < n and names[j] == names[j - p]:
                j += 1
            ends[p] = j
            reps = (j - i) // p
            if reps >= MIN_REPEATS and (best is None or reps * p > best[0] * best[1]):
                best = (p, reps)
        if best is None:
            i += 1
            continue
        p, reps = best
        out.append((i, p, reps))
        i += reps * p
    return out


def _may_repeat(names: list[str]) -> bool:
    """Whether some period p has the (MIN_REPEATS - 1) * p matching names in a row a fold needs.

    Compared in C (`map(operator.eq, ...)` into bytes, a substring test), so a chain with
    nothing to fold, 50 different ops in a live cell, costs 30 us here, not 0.3 ms in `repeats`.
    """
    for p in range(1, MAX_PERIOD + 1):
        same = bytes(map(operator.eq, names[p:], names))  # same[k]: names[k + p] == names[k]
        if b"\x01" * ((MIN_REPEATS - 1) * p) in same:
            return True
    return False


def _cap(
    unit_edges: Any,
    roots: list[int],
    new: Any,
    summaries: list[Summary],
    forward: bool,
    n: int,
    max_nodes: int,
) -> tuple[list[int], dict, int]:
    """Keep the `max_nodes` units nearest the outputs; mark each cut with "N more nodes"."""
    # unit -> units one step further from the outputs (a dict: units may be sparse)
    further: dict[int, list[int]] = {}
    if forward:
        for s, d, _ in unit_edges:
            further.setdefault(d, []).append(s)
    else:
        for s, d, _ in unit_edges:
            further.setdefault(s, []).append(d)
    kept = _nearest(roots, further, max(1, max_nodes - 1))  # one place left for a marker
    markers: dict[int, int] = {}  # kept unit -> unit index of its marker
    for unit, owner in _cut_owners(kept, further).items():
        summarised = unit >= n  # a hidden unit may itself be a summary (a fold)
        marker = markers.get(owner)
        if marker is None:
            summaries.append(
                Summary("more", "", pos=summaries[unit - n].pos if summarised else unit)
            )
            marker = markers[owner] = n + len(summaries) - 1
        more = summaries[marker - n]
        more.count += max(1, summaries[unit - n].count) if summarised else 1
        more.pos = min(more.pos, summaries[unit - n].pos if summarised else unit)
        more.new = more.new or (summaries[unit - n].new if summarised else new[unit])
    hidden = 0
    kept_edges = {e: None for e in unit_edges if e[0] in kept and e[1] in kept}
    for owner, marker in markers.items():
        more = summaries[marker - n]
        hidden += more.count
        more.name = f"{more.count} more node{'s' if more.count != 1 else ''}"
        kept_edges[(marker, owner, 0) if forward else (owner, marker, 0)] = None
        kept[marker] = None
    return list(kept), kept_edges, hidden


_NONE: tuple[int, ...] = ()  # no unit further out


def _nearest(roots: list[int], further: dict[int, list[int]], budget: int) -> dict[int, None]:
    """The first `budget` units met going out from the roots, breadth first (in order)."""
    kept: dict[int, None] = {}
    queue = deque(dict.fromkeys(roots))
    while queue and len(kept) < budget:
        u = queue.popleft()
        if u in kept:
            continue
        kept[u] = None
        queue.extend(v for v in further.get(u, _NONE) if v not in kept)
    return kept


def _cut_owners(kept: dict[int, None], further: dict[int, list[int]]) -> dict[int, int]:
    """Hidden unit -> the kept unit whose cut reaches it first: its "N more nodes" marker."""
    owner: dict[int, int] = {}
    frontier: deque[tuple[int, int]] = deque()
    for unit in kept:
        for hidden in further.get(unit, _NONE):
            if hidden not in kept and hidden not in owner:
                owner[hidden] = unit
                frontier.append((hidden, unit))
    while frontier:  # breadth first: each hidden unit goes to the nearest cut
        hidden, cut_at = frontier.popleft()
        for beyond in further.get(hidden, _NONE):
            if beyond not in kept and beyond not in owner:
                owner[beyond] = cut_at
                frontier.append((beyond, cut_at))
    return owner
