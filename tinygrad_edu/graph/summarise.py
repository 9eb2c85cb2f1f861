"""Summarise big graphs so a drawing never takes seconds: collapse, fold, cap.

Three steps, each optional, on the lean node list from build.py (before any label
text is made, so hidden nodes cost almost nothing):

1. collapse modules: every node built inside a collapsed module path becomes one
   summary node named after the module;
2. fold repeats: runs of collapsed sibling modules with the same ops (`layers.0` ...
   `layers.9`), and long chains of the same ops (`x = x * w + b` in a Python loop),
   become one node "x 10" that keeps the first and last block visible;
3. cap: beyond `max_nodes`, the nodes farthest from the outputs are replaced by
   "N more nodes" markers, one per place where the cut was made.

Graph layer: standard library only.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

DEFAULT_MAX_NODES = 150  # dot lays out ~150 nodes in well under 100 ms
MIN_REPEATS = 4  # a block must repeat this often before it is folded
MAX_PERIOD = 4  # longest repeated op sequence looked for in chains


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
    id: str = ""
    members: list[int] = field(default_factory=list, repr=False)


def _prefixes(raws: list, collapse: Any) -> list[tuple]:
    if collapse is True:
        tops: dict[tuple, None] = {}
        for r in raws:
            if r.module:
                tops.setdefault(r.module[:1], None)
        return list(tops)
    if not collapse:
        return []
    if isinstance(collapse, str):
        collapse = (collapse,)
    return sorted({tuple(str(c).split(".")) for c in collapse}, key=len)


def summarise(raws: list, edges: list[tuple[int, int, int]], collapse: Any = (),
              max_nodes: int | None = DEFAULT_MAX_NODES,
              fold: bool = True) -> tuple[list, list[tuple[int, int, int]], int]:
    """Pick the nodes to show: returns (kept nodes, edges between them, hidden count).

    Kept nodes are the original raw nodes or `Summary` objects, in drawing order;
    edges are `(src, dst, slot)` indices into that list, deduplicated.
    """
    n = len(raws)
    unit = list(range(n))  # raw index -> unit index (raw itself, or n + summary number)
    summaries: list[Summary] = []
    forward = not any(r.kind == "accumulate" for r in raws) and _is_forward(raws, edges)

    prefixes = _prefixes(raws, collapse)
    if prefixes:
        by_prefix: dict[tuple, int] = {}
        for i, r in enumerate(raws):
            m = r.module
            if r.root or not m:
                continue
            for p in prefixes:
                if m[: len(p)] == p:
                    k = by_prefix.get(p)
                    if k is None:
                        k = by_prefix[p] = len(summaries)
                        summaries.append(Summary("module", ".".join(p),
                                                 module=".".join(p[:-1]), pos=i))
                    summaries[k].members.append(i)
                    unit[i] = n + k
                    break
        for s in summaries:
            ops = [raws[i].obj for i in s.members if raws[i].kind == "op"]
            s.count = len(s.members)
            s.detail = _signature_text([type(o).__name__ for o in ops])
            s.new = any(raws[i].new for i in s.members)
        if fold:
            _fold_modules(raws, summaries, unit, n)
    if fold:
        _fold_chains(raws, edges, unit, summaries, n, forward)

    # unit graph
    order: dict[int, None] = {}
    for i in range(n):
        order.setdefault(unit[i], None)
    units = list(order)
    # (src, dst, slot) -> None; edges into or out of a summary are merged whatever the slot
    uedges: dict[tuple[int, int, int], None] = {}
    for s, d, slot in edges:
        us, ud = unit[s], unit[d]
        if us != ud:
            uedges[(us, ud, slot if us < n and ud < n else 0)] = None
    hidden = 0
    if max_nodes is not None and len(units) > max_nodes:
        units, uedges, hidden = _cap(raws, units, uedges, unit, summaries, n, max_nodes,
                                              forward)
    # final order: by position of the first member; summaries ids s1, s2, ...
    def pos(u: int) -> int:
        return u if u < n else summaries[u - n].pos

    units.sort(key=lambda u: (pos(u), u >= n))
    k = 0
    for u in units:
        if u >= n:
            k += 1
            summaries[u - n].id = f"s{k}"
    where = {u: i for i, u in enumerate(units)}
    kept = [raws[u] if u < n else summaries[u - n] for u in units]
    out_edges = sorted((where[s], where[d], slot) for (s, d, slot) in uedges
                       if s in where and d in where)
    return kept, out_edges, hidden


def _is_forward(raws: list, edges: list) -> bool:
    # forward graphs alternate tensor/op along every edge; backward ones link ops directly
    for s, d, _ in edges:
        return raws[s].kind != raws[d].kind
    return True


def _signature_text(names: list[str]) -> str:
    if not names:
        return ""
    return " -> ".join(names) if len(names) <= 4 else f"{len(names)} ops: {', '.join(names[:3])}, ..."


def _fold_modules(raws: list, summaries: list[Summary], unit: list[int], n: int) -> None:
    """Fold runs of >= MIN_REPEATS sibling modules with the same ops into one node."""
    run: list[Summary] = []

    def flush() -> None:
        if len(run) >= MIN_REPEATS:
            first, last = run[0], run[-1]
            # keep the first and last block: the learner sees how blocks connect
            middle = run[1:-1]
            s = Summary("repeat", f"{middle[0].name} ... {middle[-1].name}",
                        module=first.module, detail=f"x{len(middle)}: {first.detail}",
                        pos=middle[0].pos)
            summaries.append(s)
            idx = n + len(summaries) - 1
            for m in middle:
                for i in m.members:
                    unit[i] = idx
                s.members.extend(m.members)
                m.members = []
            s.count = len(s.members)
            s.new = any(raws[i].new for i in s.members)
            del first, last
        run.clear()

    for s in list(summaries):
        if s.role != "module":
            continue
        if run and (run[-1].module != s.module or run[-1].detail != s.detail):
            flush()
        run.append(s)
    flush()


def _fold_chains(raws: list, edges: list, unit: list[int], summaries: list[Summary], n: int,
                 forward: bool) -> None:
    """Fold long chains of one repeated op sequence (a Python loop) into one node."""
    free = [unit[i] == i for i in range(n)]
    succ: dict[int, int] = {}
    if forward:
        producer: dict[int, int] = {}
        consumers: dict[int, list[int]] = {}
        for s, d, _ in edges:
            if raws[s].kind == "op":
                producer[d] = s
            else:
                consumers.setdefault(s, []).append(d)
        for t, a in producer.items():
            users = consumers.get(t, ())
            if len(users) == 1 and not raws[t].root and free[a] and free[users[0]] and free[t]:
                succ[a] = users[0]
    else:
        incoming: dict[int, list[int]] = {}
        for s, d, _ in edges:
            incoming.setdefault(d, []).append(s)
        for b, srcs in incoming.items():
            a = srcs[0]
            if (len(set(srcs)) == 1 and raws[a].kind == "op" and raws[b].kind == "op"
                    and free[a] and free[b]):
                succ[b] = a  # b made a's input: in data order b comes first
    if not succ:
        return
    has_pred = set(succ.values())
    for start in sorted(i for i in succ if i not in has_pred):
        chain = [start]
        while chain[-1] in succ:
            chain.append(succ[chain[-1]])
        if len(chain) >= 2 * MIN_REPEATS:
            _fold_chain(raws, edges, chain, unit, summaries, n, forward)


def _fold_chain(raws: list, edges: list, chain: list[int], unit: list[int],
                summaries: list[Summary], n: int, forward: bool) -> None:
    names = [type(raws[i].obj).__name__ for i in chain]
    i = 0
    folded: list[tuple[int, int, int]] = []  # (start, stop, period) in chain positions
    while i < len(chain):
        best = None
        for p in range(1, MAX_PERIOD + 1):
            j = i + p
            while j < len(chain) and names[j] == names[j - p]:
                j += 1
            reps = (j - i) // p
            if reps >= MIN_REPEATS and (best is None or reps * p > best[1] * best[0]):
                best = (p, reps)
        if best is None:
            i += 1
            continue
        p, reps = best
        # keep the first and the last block visible, fold the blocks between
        folded.append((i + p, i + (reps - 1) * p, p))
        i += reps * p
    if not folded:
        return
    member_ops = set()
    for start, stop, p in folded:
        ops = chain[start:stop]
        s = Summary("repeat", f"x{(stop - start) // p}",
                    module=".".join(raws[ops[0]].module),
                    detail=" -> ".join(names[start:start + p]), pos=ops[0])
        summaries.append(s)
        idx = n + len(summaries) - 1
        for o in ops:
            unit[o] = idx
            member_ops.add(o)
        s.members.extend(ops)
    # the tensors only these ops touch go with them: outputs, constants, one-use leaves
    users: dict[int, list[int]] = {}
    makers: dict[int, int] = {}
    for s_, d, _ in edges:
        if forward:
            if raws[d].kind == "op":
                users.setdefault(s_, []).append(d)
            else:
                makers[d] = s_
    if forward:
        for t in range(n):
            if raws[t].kind != "tensor" or raws[t].root or unit[t] != t:
                continue
            m = makers.get(t)
            us = users.get(t, ())
            if m is not None and m in member_ops:
                owner = unit[m]
            elif m is None and us and all(u in member_ops for u in us) and \
                    len({unit[u] for u in us}) == 1:
                owner = unit[us[0]]
            else:
                continue
            unit[t] = owner
            summaries[owner - n].members.append(t)
    for s in summaries[-len(folded):]:
        s.count = len(s.members)
        s.new = any(raws[i].new for i in s.members)


def _cap(raws: list, units: list[int], uedges: dict, unit: list[int], summaries: list[Summary],
         n: int, max_nodes: int, forward: bool):
    """Keep the `max_nodes` units nearest the outputs; mark each cut with "N more nodes"."""
    up: dict[int, list[int]] = {}  # unit -> units one step further from the outputs
    for (s, d, _) in uedges:
        if forward:
            up.setdefault(d, []).append(s)
        else:
            up.setdefault(s, []).append(d)
    roots = [unit[i] for i, r in enumerate(raws) if r.root]
    budget = max(1, max_nodes - 1)
    kept: dict[int, None] = {}
    queue = deque(dict.fromkeys(roots))
    while queue and len(kept) < budget:
        u = queue.popleft()
        if u in kept:
            continue
        kept[u] = None
        queue.extend(v for v in up.get(u, ()) if v not in kept)
    # hidden units are owned by the first kept unit whose cut edge reaches them
    owner: dict[int, int] = {}
    frontier: deque[tuple[int, int]] = deque()
    for u in kept:
        for v in up.get(u, ()):
            if v not in kept and v not in owner:
                owner[v] = u
                frontier.append((v, u))
    while frontier:
        v, o = frontier.popleft()
        for w in up.get(v, ()):
            if w not in kept and w not in owner:
                owner[w] = o
                frontier.append((w, o))
    markers: dict[int, Summary] = {}

    def size(u: int) -> int:
        return 1 if u < n else max(1, summaries[u - n].count)

    for v, o in owner.items():
        s = markers.get(o)
        if s is None:
            s = markers[o] = Summary("more", "", pos=v if v < n else summaries[v - n].pos)
            summaries.append(s)
            s.id = str(n + len(summaries) - 1)  # unit index until ids are given
        s.count += size(v)
        s.pos = min(s.pos, v if v < n else summaries[v - n].pos)
        if v < n:
            s.new = s.new or raws[v].new
            s.members.append(v)
    hidden = sum(s.count for s in markers.values())
    new_edges: dict[tuple[int, int, int], None] = {}
    for (s, d, slot) in uedges:
        if s in kept and d in kept:
            new_edges[(s, d, slot)] = None
    for o, s in markers.items():
        idx = int(s.id)
        s.id = ""
        s.name = f"{s.count} more node{'s' if s.count != 1 else ''}"
        new_edges[(idx, o, 0) if forward else (o, idx, 0)] = None
        kept[idx] = None
    return list(kept), new_edges, hidden
