"""Summarise big graphs so a drawing never takes seconds: collapse, fold, cap.

Three steps, each optional, decided before any label text is made (so hidden nodes
cost almost nothing):

1. collapse modules: every node built inside a collapsed module path becomes one
   summary node named after the module;
2. fold repeats: runs of collapsed sibling modules with the same ops (`layers.0` ...
   `layers.9`), the steps of a module called in a loop (`rnncell.t=1` ... `t=10`, see
   time_steps.py), and long chains of the same ops (`x = x * w + b` in a Python loop),
   become one node "x 10" that keeps the first and last block visible;
3. cap: beyond `max_nodes` boxes, markers included, the nodes farthest from the
   outputs are replaced by "N more nodes" markers, one per place where the cut was
   made; the roots always stay (then one marker joins every cut, if need be).

The forward view (`summarise_forward`) decides all three on the forward walk's per-op
lists (walk.py), op group by op group: at 100,000s of nodes, making an entry for each
costs more than a whole drawing may, so only the nodes kept after the cap get one (a
sparse RawGraph: dicts keyed by raw position). What a fold takes is said with three
arrays (`_Units`): the unit of op k and its constants, the unit of its output (a root
output may stay visible), and the unit of each leaf (a leaf sits in the module all its
users share, without a time step). The backward view (`summarise_backward`) has one
node per grad_fn and no time steps; it collapses and folds on build.py's RawGraph of
those nodes. Both end in `finish` (the cap, the order).
Graph layer: imports tinygrad_edu.core, numpy, the standard library and graph/'s
options, time_steps and walk modules.
"""

from __future__ import annotations

import bisect
import itertools
import operator
import os
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ..core.engine import AccumulateGrad
from .options import DrawOptions
from .time_steps import STEP
from .walk import NEVER, ForwardWalk

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


# --- the forward view, on the walk ---------------------------------------------------------


class _Units:
    """Which summary each node of the forward graph went into (-1: it stays visible).

    `op[k]`: op k and its constants; `out[k]`: op k's output; `leaf[j]`: leaf j (the
    leaves ops use, first-seen order). Summaries below `chains_from` are modules, module
    runs and steps; from it on, chains. `dead`: module summaries folded into a run.
    """

    def __init__(self, walk: ForwardWalk) -> None:
        self.op = np.full(len(walk.ops), -1)
        self.out = np.full(len(walk.ops), -1)
        self.leaf = np.full(len(walk.first_op), -1)
        self.summaries: list[Summary] = []
        self.span: dict[int, tuple[int, int]] = {}  # module summary -> first, last raw position
        self.dead: set[int] = set()
        self.chains_from = 0

    def freeze(self) -> None:
        """Lists for the loops that look at one op at a time."""
        self.op_list, self.out_list, self.leaf_list = (
            self.op.tolist(),
            self.out.tolist(),
            self.leaf.tolist(),
        )


def summarise_forward(
    walk: ForwardWalk, options: DrawOptions, raw: Any
) -> tuple[list, list[tuple[int, int, int]], int]:
    """Pick the forward view's nodes (see `summarise`); fills the sparse RawGraph `raw`.

    `raw` gets entries for the kept nodes only and `raw.total`, the node count of the
    full graph.
    """
    n = walk.total
    u = _Units(walk)
    fold = options.fold and options.expand is not True  # everything open: nothing folded
    # a leaf's module is a prefix of its first user's: ops meet the tops in node order
    prefixes = _prefixes(walk.module, options.collapse)
    if prefixes:
        _collapse_modules(walk, prefixes, u)
        if fold:
            _fold_modules(walk, u)
    if fold and walk.steps:
        shut = options.expand if isinstance(options.expand, frozenset) else frozenset()
        _fold_steps(walk, shut, options.keep_ends, u)
    u.chains_from = len(u.summaries)
    if fold:
        _fold_chains(walk, u)
    if len(u.summaries) > u.chains_from:  # as summarise.py: leaves join folds after a chain
        _absorb_leaves(walk, u)
    u.freeze()
    summaries = u.summaries
    if summaries:
        visit = (u.op < 0) | (u.out < 0)  # op groups with a visible node
        first_op = np.asarray(walk.first_op, dtype=np.intp)
        visit[first_op[u.leaf < 0]] = True
        units = _materialise(walk, np.flatnonzero(visit).tolist(), u, raw, keep=set())
    else:
        units = list(range(n))
    units.extend(n + f for f in range(len(summaries)) if f not in u.dead)
    unit_edges = _unit_edges(walk, _replayed(walk, u), u, n)
    roots = _root_units(walk, u, n)
    picked = finish(
        n, units, unit_edges, roots, _NewFlags(walk), summaries, True, options.max_nodes
    )
    # entries only for the nodes kept after the cap: their ops' groups are looked at again
    shown = np.array([k for k in picked[0] if type(k) is int], dtype=np.intp)
    in_groups = shown[shown < walk.n_groups]
    groups = np.unique(np.searchsorted(walk.pos_array + 1, in_groups)).tolist()
    _materialise(walk, groups, u, raw, keep=set(shown.tolist()))
    raw.total = n
    return picked


# --- collapsed modules ------------------------------------------------------------------


def _prefixes(modules: Any, collapse: Literal[True] | tuple[str, ...]) -> list[tuple]:
    """The collapsed module paths, the shortest first (True: every top-level module, in the
    order `modules`, the nodes' paths, meet them)."""
    if collapse is True:
        return list(dict.fromkeys(m[:1] for m in modules if m))
    return sorted({tuple(c.split(".")) for c in collapse}, key=len)


def _collapse_modules(walk: ForwardWalk, prefixes: list[tuple], u: _Units) -> None:
    """One summary per collapsed module path, for every node built inside it (not a root)."""
    match: dict[tuple, int] = {}  # module path -> index of its prefix, -1 for none

    def prefix(m: tuple) -> int:
        p = match.get(m)
        if p is None:
            p = match[m] = next((i for i, q in enumerate(prefixes) if m and m[: len(q)] == q), -1)
        return p

    op_p = np.array([prefix(m) for m in walk.module], dtype=np.intp)
    roots = walk.root_leaf
    leaf_p = np.array(
        [-1 if j in roots else prefix(walk.leaf_module(j)) for j in range(len(walk.first_op))],
        dtype=np.intp,
    )
    size = _sizes_without_leaves(walk)
    keeps = np.zeros(len(walk.ops), dtype=np.intp)  # 1: a root output, not in the module
    keeps[list(walk.root_out)] = 1
    leaf_pos = np.asarray(walk.leaf_pos[: len(walk.first_op)], dtype=np.intp)
    found = []  # (first raw position, prefix, its ops, its leaves)
    for p in range(len(prefixes)):
        ops, leaves = np.flatnonzero(op_p == p), np.flatnonzero(leaf_p == p)
        if not len(ops) and not len(leaves):
            continue
        starts = [_first_not_leaf(walk, int(ops[0]))] if len(ops) else []
        starts += [int(leaf_pos[leaves[0]])] if len(leaves) else []
        found.append((min(starts), p, ops, leaves))
    found.sort(key=operator.itemgetter(0))  # summaries in the order of their first node
    for first, p, ops, leaves in found:
        path = prefixes[p]
        s = Summary("module", ".".join(path), module=".".join(path[:-1]), pos=first)
        f = len(u.summaries)
        u.summaries.append(s)
        u.op[ops] = f
        u.out[ops] = f
        u.leaf[leaves] = f
        s.count = int((size[ops] - keeps[ops]).sum()) + len(leaves)
        s.detail = signature_text([walk.names[k] for k in ops[:5].tolist()])
        s.new = bool(len(ops)) and walk.number[int(ops[-1])] >= walk.first_new_node
        if not s.new and walk.first_new_tensor < NEVER:
            s.new = any(
                walk.leaf(j).creation_number >= walk.first_new_tensor for j in leaves.tolist()
            )
        last: list[int] = [int(leaf_pos[leaves[-1]])] if len(leaves) else []
        if len(ops):
            k = int(ops[-1])
            last.append(walk.pos[k] + 1 - int(keeps[k]))
        u.span[f] = (first, max(last))
    for k in walk.root_out:  # a root stays visible: the learner asked for it
        u.out[k] = -1


def _fold_modules(walk: ForwardWalk, u: _Units) -> None:
    """Fold runs of >= MIN_REPEATS adjacent sibling modules with the same ops into one node.

    Adjacent: no other sibling ran between them. `layers.3` left open splits the run
    `layers.0` ... `layers.7` in two, as an opened `rnncell.t=5` splits the steps;
    one box over both sides would claim to hold the open one too.
    """
    summaries = u.summaries
    into = np.arange(len(summaries) + len(summaries) // 2 + 1)  # module summary -> its unit
    run: list[int] = []

    def flush() -> None:
        if len(run) >= MIN_REPEATS:
            s = _repeat_of([summaries[f] for f in run])
            middle = [summaries[f] for f in run[1:-1]]
            s.count = sum(m.count for m in middle)
            s.new = any(m.new for m in middle)
            into[run[1:-1]] = len(summaries)
            u.dead.update(run[1:-1])
            summaries.append(s)
        run.clear()

    module_at = _ModuleAt(walk)
    for f in range(len(summaries)):
        if run:
            between = map(module_at, range(u.span[run[-1]][1] + 1, u.span[f][0]))
            if not _continues(summaries[run[-1]], summaries[f], between):
                flush()
        run.append(f)
    flush()
    if u.dead:
        for units in (u.op, u.out, u.leaf):
            folded = units >= 0
            units[folded] = into[units[folded]]


def _repeat_of(run: list[Summary]) -> Summary:
    """The fold of a run of identical sibling modules (`layers.0` ... `layers.7`): the
    first and the last block stay visible, so the learner sees how blocks connect."""
    middle = run[1:-1]
    s = Summary(
        "repeat",
        f"{middle[0].name} ... {middle[-1].name}",
        module=run[0].module,
        detail=run[0].detail,
        pos=middle[0].pos,
    )
    s.blocks = len(middle)
    return s


def _continues(last: Summary, s: Summary, between: Any) -> bool:
    """Whether module summary `s` extends a run ending with `last`: a sibling with the same
    ops, and no other sibling built a node in `between` (their module paths, in order)."""
    return (
        last.module == s.module
        and last.detail == s.detail
        and not _sibling_between(last, s, between)
    )


class _At:
    """What sits at raw position i of the forward walk: leaf j (or a root in no op's
    inputs), else a node of op k's group (its constants, the op, its output)."""

    def __init__(self, walk: ForwardWalk) -> None:
        self.walk = walk
        self.leaf_at = {r: j for j, r in enumerate(walk.leaf_pos)}

    def leaf(self, i: int) -> int | None:
        return self.leaf_at.get(i)

    def op(self, i: int) -> int:
        return bisect.bisect_left(self.walk.pos, i - 1)  # op k's group ends at pos[k] + 1


class _ModuleAt(_At):
    """`module_at(i)`: the module path of the node at raw position i."""

    def __call__(self, i: int) -> tuple:
        j = self.leaf(i)
        if j is not None:
            return self.walk.leaf_module(j) if j < len(self.walk.first_op) else ()
        return self.walk.module[self.op(i)]


def _sibling_between(a: Summary, b: Summary, between: Any) -> bool:
    """Whether another module under a's and b's parent built a node between a and b.

    `between`: the module paths of the nodes between a's last node and b's first.
    """
    path = tuple(a.name.split("."))
    parent, depth = path[:-1], len(path)
    mine = {path, tuple(b.name.split("."))}
    for m in between:
        if len(m) >= depth and m[: depth - 1] == parent and m[:depth] not in mine:
            return True
    return False


# --- time steps -------------------------------------------------------------------------


def _fold_steps(walk: ForwardWalk, opened: frozenset[str], keep_ends: bool, u: _Units) -> None:
    """Fold the middle of a long unroll into one node per run of closed steps.

    A step's nodes are its ops' groups but their leaves (a leaf sits in the module all
    its users share, without a step), and not what a collapsed module took. The first
    and the last step stay open, so the learner sees how steps connect (`keep_ends=False`
    folds them too); a step opened or missing ends a run: a fold only holds adjacent steps.
    """
    steps: dict[str, dict[int, list[int]]] = {}  # module -> step -> its ops
    op_unit, out_unit = u.op.tolist(), u.out.tolist()
    for k, m in enumerate(walk.module):
        if len(m) > 1 and m[1].startswith(STEP) and (op_unit[k] < 0 or out_unit[k] < 0):
            steps.setdefault(m[0], {}).setdefault(int(m[1][len(STEP) :]), []).append(k)
    size = _sizes_without_leaves(walk)
    first_new_node, number, names = walk.first_new_node, walk.number, walk.names
    for top, by_step in steps.items():
        last = max(by_step)
        if last + 1 < MIN_REPEATS:
            continue
        first, end = (1, last) if keep_ends else (0, last + 1)
        run: list[int] = []
        for t in range(first, end + 1):
            if t < end and t in by_step and f"{top}.{STEP}{t}" not in opened:
                run.append(t)
                continue
            if len(run) >= 2:
                ops = [k for step in run for k in by_step[step]]
                whole = [k for k in ops if op_unit[k] < 0]  # else only a root output is left
                k0 = by_step[run[0]][0]
                s = Summary(
                    "repeat",
                    f"{top}.{STEP}{run[0]} ... {STEP}{run[-1]}",
                    module=top,
                    detail=signature_text([names[k] for k in by_step[run[0]] if op_unit[k] < 0]),
                    pos=_first_not_leaf(walk, k0) if op_unit[k0] < 0 else walk.pos[k0] + 1,
                )
                s.blocks = len(run)
                u.op[whole] = len(u.summaries)
                u.out[ops] = len(u.summaries)
                u.summaries.append(s)
                s.count = int(size[whole].sum()) + len(ops) - len(whole)
                s.new = number[max(ops)] >= first_new_node  # the newest op is the last
            run = []


def _sizes_without_leaves(walk: ForwardWalk) -> np.ndarray:
    """Nodes in op k's group but its first-seen leaves: its constants, the op, its output."""
    size = np.diff(walk.pos_array, prepend=-2)
    return size - np.bincount(walk.first_op, minlength=len(walk.ops))


def _first_not_leaf(walk: ForwardWalk, k: int) -> int:
    """Raw position of op k's first constant, else of op k."""
    r = walk.start(k)
    for nxt in walk.edges[k]:
        if nxt is None:
            return r
        if type(nxt) is AccumulateGrad and walk.leaf_pos[walk.leaf_number(nxt)] == r:
            r += 1
    return walk.pos[k]


# --- chains -----------------------------------------------------------------------------


def _fold_chains(walk: ForwardWalk, u: _Units) -> None:
    """Fold long straight chains of one repeated op sequence (a Python loop) into one node.

    An op, its constants and its output (unless a root) go into the fold; the op's
    first-seen leaves are counted here too and taken back in `_absorb_leaves` if they
    stay. Chains never merge (`op_links`), so no two folds share an op.
    """
    size = None
    for chain in _chains(walk, u.op):
        # a chain has 4 ops or more: itemgetter returns a tuple
        names = list(operator.itemgetter(*chain.tolist())(walk.names))
        for i, p, reps in repeats(names):
            # keep the first and the last block visible, fold the blocks between
            at = chain[i + p : i + (reps - 1) * p]
            text = " -> ".join(names[i : i + p])
            first, last = int(at[0]), int(at[-1])
            module = _shared_module(walk.module, at.tolist())
            f = Summary("repeat", text, module, text, pos=walk.pos[first])
            f.blocks = reps - 2
            u.op[at] = u.out[at] = len(u.summaries)
            u.summaries.append(f)
            if size is None:
                size = np.diff(walk.pos_array, prepend=-2)  # the whole group
                size[list(walk.root_out)] -= 1  # a root output stays visible
            f.count = int(size[at].sum())
            # creation numbers grow with k: the last member is the newest
            f.new = walk.number[last] >= walk.first_new_node
    for k in walk.root_out:
        if u.op[k] >= u.chains_from:
            u.out[k] = -1


def _shared_module(modules: list[tuple], ops: list[int]) -> str:
    """The innermost module path every op in `ops` was built in ("" for none).

    A fold of a loop over several layers (`seq.0` ... `seq.14`) is drawn in the box of
    the module around them all (`seq`), not inside the first layer's box.
    """
    paths = {modules[k] for k in ops}  # a few distinct paths, even in a long loop
    return ".".join(os.path.commonprefix(list(paths))) if len(paths) > 1 else ".".join(*paths)


def _chains(walk: ForwardWalk, op_unit: np.ndarray) -> list[np.ndarray]:
    """Straight chains of at least MIN_REPEATS ops in no fold, each op's output read only by the next.

    Each chain is an array of its ops in order; chains come in the order of their first ops.
    """
    n_ops = len(walk.ops)
    linked, targets = op_links(walk)  # one pass over the links in Python (~15 ms at 100,000)
    free = (op_unit[linked] < 0) & (op_unit[targets] < 0)  # links between ops in no fold
    linked, targets = linked[free], targets[free]
    # numpy for the per-op steps: 100,000 ops are a few array operations
    # each op's chain is named by its first op: start from the op linking to it (or itself)
    # and jump twice as far each round (17 rounds of array operations for 100,000 ops)
    head = np.arange(n_ops)
    head[targets] = linked
    while True:
        further = head[head]
        if (further == head).all():
            break
        head = further
    in_chain = np.zeros(n_ops, dtype=bool)  # linked to another op, or linked from one
    in_chain[linked] = True
    in_chain[targets] = True
    length = np.bincount(head[in_chain], minlength=n_ops)
    members = np.flatnonzero(in_chain & (length[head] >= MIN_REPEATS))
    # a link goes to a later op, so a chain's ops in creation order are the chain in order
    members = members[np.argsort(head[members], kind="stable")]
    return np.split(members, np.flatnonzero(np.diff(head[members])) + 1) if len(members) else []


def op_links(walk: ForwardWalk) -> tuple[np.ndarray, np.ndarray]:
    """The forward view's chain links `(ops, readers)`: op k -> the one op reading its output.

    A root's output is drawn, so it ends its chain. Of several ops feeding one op, only
    one links to it (`chain_links`, the rule the backward view follows too).
    """
    single = walk.uses == 1
    if walk.root_out:
        single[list(walk.root_out)] = False
    ops = np.flatnonzero(single)
    return chain_links(ops, walk.user[ops])


def _absorb_leaves(walk: ForwardWalk, u: _Units) -> None:
    """A leaf only one fold uses goes into it (a layer's own weight), once a chain was folded.

    A chain counted the leaves first seen in its groups: those that stay out are taken
    back; any other summary counts a leaf it takes. A leaf taken may make it new.
    """
    first_op = np.asarray(walk.first_op, dtype=np.intp)
    if not len(first_op):
        return
    free = u.leaf < 0
    free[list(j for j in walk.root_leaf if j < len(first_op))] = False  # a root stays visible
    single = free.copy()
    single[list(walk.more)] = False
    unit_of_first = u.op[first_op]
    take = single & (unit_of_first >= 0)  # used once: goes with its op's fold
    u.leaf[take] = unit_of_first[take]
    op_unit = u.op.tolist()
    for j in walk.more:
        if free[j]:
            users = walk.users(j)
            f = op_unit[users[0]]
            if f >= 0 and all(op_unit[k] == f for k in users):
                u.leaf[j] = f
    chain = unit_of_first >= u.chains_from
    back = np.bincount(unit_of_first[chain & (u.leaf != unit_of_first)])
    taken = free & (u.leaf >= 0)
    more = np.bincount(u.leaf[taken & ~(chain & (u.leaf == unit_of_first))])
    for f in np.flatnonzero(back).tolist():
        u.summaries[f].count -= int(back[f])
    for f in np.flatnonzero(more).tolist():
        u.summaries[f].count += int(more[f])
    if walk.first_new_tensor < NEVER:  # a watermark: a summary is new if a leaf it took is
        for j in np.flatnonzero(taken).tolist():
            s = u.summaries[u.leaf[j]]
            if not s.new and walk.leaf(j).creation_number >= walk.first_new_tensor:
                s.new = True


# --- the units' edges and entries ---------------------------------------------------------


def _replayed(walk: ForwardWalk, u: _Units) -> list[int]:
    """The ops whose edges `_unit_edges` must look at, in order.

    A folded op whose edges all stay inside its unit adds no unit edge: skipped. So an
    op is kept when it is visible, reads a leaf (which may stay out), reads an output
    of another unit, or its own output is in another unit (a root).
    """
    owner, src = walk.edge_owner, walk.edge_source
    keep = (u.op < 0) | (u.out != u.op)
    from_op = src >= 0
    other = u.out[src[from_op]] != u.op[owner[from_op]]
    keep[owner[from_op][other]] = True
    keep[owner[src <= -2]] = True
    return np.flatnonzero(keep).tolist()


def _unit_edges(walk: ForwardWalk, replay: list[int], u: _Units, n: int) -> Any:
    """Unit edges in raw-edge order (edges inside a unit dropped, the rest merged)."""
    pos, op_number, edges = walk.pos, walk.op_number, walk.edges
    leaf_number, leaf_pos = walk.leaf_number, walk.leaf_pos
    op_unit, out_unit, leaf_unit = u.op_list, u.out_list, u.leaf_list
    acc = AccumulateGrad
    out: dict[tuple[int, int, int], None] = {}
    for k in replay:
        f = op_unit[k]
        dst = pos[k] if f < 0 else n + f
        r = pos[k - 1] + 2 if k else 0
        for slot, nxt in enumerate(edges[k]):
            if nxt is None:
                r += 1
                if f < 0:
                    out[(r - 1, dst, slot)] = None
                continue
            if type(nxt) is acc:
                j = leaf_number(nxt)
                if leaf_pos[j] == r:
                    r += 1
                h = leaf_unit[j]
                src = leaf_pos[j] if h < 0 else n + h
            else:
                j = op_number(nxt)
                h = out_unit[j]
                src = pos[j] + 1 if h < 0 else n + h
            if src != dst:
                out[(src, dst, slot if src < n and dst < n else 0)] = None
        h = out_unit[k]
        o = pos[k] + 1 if h < 0 else n + h
        if o != dst:
            out[(dst, o, 0)] = None
    return out


def _root_units(walk: ForwardWalk, u: _Units, n: int) -> list[int]:
    """The roots' units in raw order: a root output in a step fold is that fold."""
    at = [(walk.leaf_pos[j], walk.leaf_pos[j]) for j in walk.root_leaf]  # never in a fold
    for k in walk.root_out:
        out = walk.pos[k] + 1
        at.append((out, out if u.out_list[k] < 0 else n + u.out_list[k]))
    return [unit for _, unit in sorted(at)]


class _NewFlags:
    """`new[i]`: whether raw node i is new, looked up for the nodes the cap hides."""

    def __init__(self, walk: ForwardWalk) -> None:
        self.walk = walk
        marked = walk.first_new_node < NEVER or walk.first_new_tensor < NEVER
        self.at = _At(walk) if marked else None  # no watermark: nothing is new

    def __getitem__(self, i: int) -> bool:
        if self.at is None:
            return False
        walk = self.walk
        j = self.at.leaf(i)
        if j is not None:
            return walk.leaf(j).creation_number >= walk.first_new_tensor
        return walk.number[self.at.op(i)] >= walk.first_new_node


def _materialise(walk: ForwardWalk, ops: list[int], u: _Units, raw: Any, keep: set) -> list[int]:
    """The visible nodes' raw positions in the groups of `ops`, and in no op's inputs.

    Those in `keep` get RawGraph entries (`keep` empty: the positions only, for the cap).
    """
    root_out, op_unit, out_unit, leaf_unit = walk.root_out, u.op_list, u.out_list, u.leaf_list
    leaf_number, leaf_pos = walk.leaf_number, walk.leaf_pos
    shown: list[int] = []
    for k in ops:
        op = walk.ops[k]
        folded = op_unit[k] >= 0
        m = walk.module[k]
        new = walk.number[k] >= walk.first_new_node
        r = walk.start(k)
        for slot, nxt in enumerate(walk.edges[k]):
            if nxt is None:
                if not folded:
                    shown.append(r)
                    if r in keep:
                        _enter(raw, r, "tensor", None, op, slot, m, new, r + 1 - k)
                r += 1
            elif type(nxt) is AccumulateGrad:
                j: int = leaf_number(nxt)  # type: ignore[assignment]  # met by the walk: not None
                if leaf_pos[j] == r:  # first seen here
                    if leaf_unit[j] < 0:
                        shown.append(r)
                        if r in keep:
                            _enter_leaf(walk, raw, r, j, r + 1 - k)
                    r += 1
        if not folded:
            shown.append(r)
            if r in keep:
                _enter(raw, r, "op", op, None, 0, m, new, k + 1)
        if out_unit[k] < 0:
            shown.append(r + 1)
            if r + 1 in keep:
                out = root_out[k] if k in root_out else op.output()
                _enter(raw, r + 1, "tensor", out, op, -1, m, new, r + 1 - k)
                raw.root[r + 1] = k in root_out
    first = len(walk.accs) - len(walk.extra)
    for e, t in enumerate(walk.extra):  # roots in no op's inputs come last
        i = walk.leaf_pos[first + e]
        shown.append(i)
        if i in keep:
            new = t.creation_number >= walk.first_new_tensor
            _enter(raw, i, "tensor", t, None, 0, (), new, i + 1 - len(walk.ops))
            raw.root[i] = True
    return shown


def _enter(
    raw: Any, i: int, kind: str, obj: Any, op: Any, slot: int, module: tuple, new: bool, num: int
) -> None:
    """The sparse RawGraph's entry for the node at raw position i."""
    raw.kind[i], raw.obj[i], raw.op[i], raw.slot[i] = kind, obj, op, slot
    raw.module[i], raw.new[i], raw.num[i], raw.root[i] = module, new, num, False


def _enter_leaf(walk: ForwardWalk, raw: Any, r: int, j: int, num: int) -> None:
    v = walk.leaf(j)
    new = v.creation_number >= walk.first_new_tensor
    _enter(raw, r, "tensor", v, None, 0, walk.leaf_module(j), new, num)
    raw.root[r] = j in walk.root_leaf


# --- the backward view, on its node list ---------------------------------------------------


def summarise_backward(
    raw: Any, options: DrawOptions
) -> tuple[list, list[tuple[int, int, int]], int]:
    """The backward view's nodes to show: returns (kept, edges between them, hidden count).

    `raw` is build.py's backward RawGraph, one entry per grad_fn node (AccumulateGrad
    included), then the roots. Kept entries are raw node indices (int) or `Summary`
    objects, in drawing order; edges are `(src, dst, slot)` positions in that list.
    Of `options`: `collapse`, `fold`, `max_nodes` (`expand=True`: nothing folded).
    """
    n = len(raw)
    opened = options.expand
    fold = options.fold and opened is not True  # everything open: no folded steps, blocks or chains
    unit = list(range(n))  # raw index -> unit: itself, or n + index of its summary
    summaries: list[Summary] = []
    prefixes = _prefixes(raw.module, options.collapse)
    if prefixes:
        _collapse_backward(raw, prefixes, unit, summaries, n)
        if fold:
            _fold_modules_backward(raw, summaries, unit, n)
    if fold and raw.link:
        _fold_chains_backward(raw, unit, summaries, n)
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
    return finish(n, units, unit_edges, roots, raw.new, summaries, False, max_nodes)


def _collapse_backward(
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


def _fold_modules_backward(raw: Any, summaries: list[Summary], unit: list[int], n: int) -> None:
    """`_fold_modules` on the backward view's node list: runs of >= MIN_REPEATS adjacent
    sibling modules with the same ops become one node."""
    run: list[Summary] = []

    def flush() -> None:
        if len(run) >= MIN_REPEATS:
            s = _repeat_of(run)
            middle = run[1:-1]
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
        if run:
            between = itertools.islice(raw.module, run[-1].members[-1] + 1, s.members[0])
            if not _continues(run[-1], s, between):
                flush()
        run.append(s)
    flush()


def _fold_chains_backward(raw: Any, unit: list[int], summaries: list[Summary], n: int) -> None:
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
            _fold_chain_backward(raw, chain, unit, summaries, n)
    if len(summaries) == before:
        return
    # a leaf only one fold uses goes into it (a layer's own weight), while a leaf used
    # elsewhere too (an RNN's shared weight) stays visible
    root = raw.root
    took = {id(s): s for s in summaries[before:]}  # (summaries are not hashable)
    for leaf, users in raw.leaf_ops.items():
        u = unit[users[0]]
        if u >= n and unit[leaf] == leaf and not root[leaf] and all(unit[x] == u for x in users):
            unit[leaf] = u
            summaries[u - n].members.append(leaf)
            took[id(summaries[u - n])] = summaries[u - n]  # a module summary counts it too
    for s in took.values():
        s.count = len(s.members)
        s.new = any(raw.new[i] for i in s.members)


def _fold_chain_backward(
    raw: Any, chain: list[int], unit: list[int], summaries: list[Summary], n: int
) -> None:
    names = [raw.obj[i].op for i in chain]
    for i, p, reps in repeats(names):
        # keep the first and the last block visible, fold the blocks between
        ops = chain[i + p : i + (reps - 1) * p]
        s = Summary(
            "repeat",
            " -> ".join(names[i : i + p]),
            module=_shared_module(raw.module, ops),
            detail=" -> ".join(names[i : i + p]),
            pos=ops[0],
        )
        s.blocks = reps - 2
        summaries.append(s)
        idx = n + len(summaries) - 1
        for o in ops:
            unit[o] = idx
        s.members.extend(ops)


# --- both views ----------------------------------------------------------------------------


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
    Shared by both views' summaries; the forward one leaves hidden nodes out of `units`.
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
    """Keep the units nearest the outputs and mark each cut with "N more nodes".

    `max_nodes` counts every box, markers included. The roots are always kept (the
    learner asked for them): when they and their markers alone pass the cap, the
    drawing is the roots and one marker joining every cut.
    """
    # unit -> units one step further from the outputs (a dict: units may be sparse)
    further: dict[int, list[int]] = {}
    if forward:
        for s, d, _ in unit_edges:
            further.setdefault(d, []).append(s)
    else:
        for s, d, _ in unit_edges:
            further.setdefault(s, []).append(d)
    order = list(_nearest(roots, further, max_nodes))
    low = _most_that_fit(order, len(dict.fromkeys(roots)), further, max_nodes)
    kept = dict.fromkeys(order[:low])
    joined = low + _markers(order[:low], further) > max_nodes  # only the roots, still over
    markers: dict[int, int] = {}  # kept unit -> unit index of its marker
    for unit, owner in _cut_owners(kept, further).items():
        summarised = unit >= n  # a hidden unit may itself be a summary (a fold)
        marker = markers.get(owner)
        if marker is None:
            if joined and markers:
                marker = markers[owner] = next(iter(markers.values()))
            else:
                pos = summaries[unit - n].pos if summarised else unit
                summaries.append(Summary("more", "", pos=pos))
                marker = markers[owner] = n + len(summaries) - 1
        more = summaries[marker - n]
        more.count += max(1, summaries[unit - n].count) if summarised else 1
        more.pos = min(more.pos, summaries[unit - n].pos if summarised else unit)
        more.new = more.new or (summaries[unit - n].new if summarised else new[unit])
    kept_edges = {e: None for e in unit_edges if e[0] in kept and e[1] in kept}
    for owner, marker in markers.items():
        kept_edges[(marker, owner, 0) if forward else (owner, marker, 0)] = None
        kept[marker] = None
    hidden = 0
    for marker in dict.fromkeys(markers.values()):
        more = summaries[marker - n]
        hidden += more.count
        more.name = f"{more.count} more node{'s' if more.count != 1 else ''}"
    return list(kept), kept_edges, hidden


def _most_that_fit(
    order: list[int], least: int, further: dict[int, list[int]], max_nodes: int
) -> int:
    """How many of `order` (nearest first, the roots first) fit beside their markers in
    `max_nodes` boxes; never fewer than the `least` roots. A binary search: boxes(b) =
    b + markers(b) never falls as b grows (a unit kept removes at most the one marker it
    was hidden behind)."""
    low, high = least, max(least, min(len(order), max_nodes - 1))
    while low < high:
        mid = (low + high + 1) // 2
        if mid + _markers(order[:mid], further) <= max_nodes:
            low = mid
        else:
            high = mid - 1
    return low


_NONE: tuple[int, ...] = ()  # no unit further out


def _nearest(roots: list[int], further: dict[int, list[int]], budget: int) -> dict[int, None]:
    """Every root, then units going out from them breadth first, up to `budget` (in order)."""
    kept = dict.fromkeys(roots)
    queue = deque(kept)
    while queue and len(kept) < budget:
        u = queue.popleft()
        for v in further.get(u, _NONE):
            if v not in kept and len(kept) < budget:
                kept[v] = None
                queue.append(v)
    return kept


def _markers(kept: list[int], further: dict[int, list[int]]) -> int:
    """How many "N more nodes" markers `_cut_owners` makes for `kept`: the kept units
    that are first to reach some unit not kept."""
    inside = set(kept)
    claimed: set[int] = set()
    count = 0
    for unit in kept:
        out = [v for v in further.get(unit, _NONE) if v not in inside and v not in claimed]
        if out:
            count += 1
            claimed.update(out)
    return count


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
