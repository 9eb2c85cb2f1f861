"""The summarised forward view, decided on the forward walk's per-op lists.

The full forward graph has one node per tensor and op; at 100,000s of nodes making an
entry for each costs more than a whole drawing may. The walk's per-op lists (walk.py:
where each op's group of nodes sits, the uses of each output, each leaf's users) are
enough to decide everything a summary decides, in the order summarise.py's docstring
gives: collapsed modules, runs of identical collapsed modules, the middle steps of a
module called in a loop, chains of repeated ops, then the cap. Only the nodes kept
after the cap get entries (a sparse RawGraph: dicts keyed by raw position).

What a fold takes is said per op group, with three arrays (`_Units`): the unit of op
k and its constants, the unit of its output (a root output may stay visible), and the
unit of each leaf (a leaf sits in the module all its users share).
Graph layer: imports tinygrad_edu.core, numpy, the standard library and graph/'s
options, summarise, time_steps and walk modules.
"""

from __future__ import annotations

import bisect
import operator
from typing import Any

import numpy as np

from ..core.engine import AccumulateGrad
from .options import DrawOptions
from .summarise import MIN_REPEATS, Summary, chain_links, finish, repeats, signature_text
from .time_steps import STEP
from .walk import NEVER, ForwardWalk


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
    prefixes = _prefixes(walk, options.collapse)
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


def _prefixes(walk: ForwardWalk, collapse: Any) -> list[tuple]:
    """The collapsed module paths, the shortest first (True: every top-level module)."""
    if collapse is True:
        # a leaf's module is a prefix of its first user's: ops name the tops in node order
        return list(dict.fromkeys(m[:1] for m in walk.module if m))
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
            # keep the first and last block: the learner sees how blocks connect
            middle = [summaries[f] for f in run[1:-1]]
            s = Summary(
                "repeat",
                f"{middle[0].name} ... {middle[-1].name}",
                module=summaries[run[0]].module,
                detail=summaries[run[0]].detail,
                pos=middle[0].pos,
            )
            s.blocks = len(middle)
            s.count = sum(m.count for m in middle)
            s.new = any(m.new for m in middle)
            into[run[1:-1]] = len(summaries)
            u.dead.update(run[1:-1])
            summaries.append(s)
        run.clear()

    module_at = _ModuleAt(walk)
    for f in range(len(summaries)):
        s = summaries[f]
        if run and (
            summaries[run[-1]].module != s.module
            or summaries[run[-1]].detail != s.detail
            or _sibling_between(module_at, u, run[-1], f)
        ):
            flush()
        run.append(f)
    flush()
    if u.dead:
        for units in (u.op, u.out, u.leaf):
            folded = units >= 0
            units[folded] = into[units[folded]]


class _ModuleAt:
    """`module_at(i)`: the module path of the node at raw position i."""

    def __init__(self, walk: ForwardWalk) -> None:
        self.walk = walk
        self.leaf_at = {r: j for j, r in enumerate(walk.leaf_pos)}

    def __call__(self, i: int) -> tuple:
        j = self.leaf_at.get(i)
        if j is not None:  # a leaf, or a root in no op's inputs
            return self.walk.leaf_module(j) if j < len(self.walk.first_op) else ()
        return self.walk.module[bisect.bisect_left(self.walk.pos, i - 1)]


def _sibling_between(module_at: _ModuleAt, u: _Units, a: int, b: int) -> bool:
    """Whether another module under a's and b's parent built nodes between a and b."""
    path = tuple(u.summaries[a].name.split("."))
    parent, depth = path[:-1], len(path)
    mine = {path, tuple(u.summaries[b].name.split("."))}
    for i in range(u.span[a][1] + 1, u.span[b][0]):
        m = module_at(i)
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
            f = Summary("repeat", text, ".".join(walk.module[first]), text, pos=walk.pos[first])
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
    back. A leaf a chain takes may make it new.
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
    for f in np.flatnonzero(back).tolist():
        u.summaries[f].count -= int(back[f])
    if walk.first_new_tensor < NEVER:  # a watermark: a chain is new if a leaf it took is
        for j in np.flatnonzero(u.leaf >= u.chains_from).tolist():
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
        self.marked = walk.first_new_node < NEVER or walk.first_new_tensor < NEVER
        self.leaf_at = {r: j for j, r in enumerate(walk.leaf_pos)} if self.marked else {}

    def __getitem__(self, i: int) -> bool:
        if not self.marked:  # no watermark: nothing is new
            return False
        walk = self.walk
        j = self.leaf_at.get(i)
        if j is not None:  # a leaf, or a root in no op's inputs
            return walk.leaf(j).creation_number >= walk.first_new_tensor
        k = bisect.bisect_left(walk.pos, i - 1)  # op k's group ends with its output, pos[k] + 1
        return walk.number[k] >= walk.first_new_node


def _materialise(walk: ForwardWalk, ops: list[int], u: _Units, raw: Any, keep: set) -> list[int]:
    """The visible nodes' raw positions in the groups of `ops`, and in no op's inputs.

    Those in `keep` get RawGraph entries (`keep` empty: the positions only, for the cap).
    """
    root_out, op_unit, out_unit, leaf_unit = walk.root_out, u.op_list, u.out_list, u.leaf_list
    leaf_number, leaf_pos = walk.leaf_number, walk.leaf_pos
    shown: list[int] = []

    def add(i: int, kind: str, obj: Any, op: Any, slot: int, module: tuple, new: bool, num: int):
        raw.kind[i], raw.obj[i], raw.op[i], raw.slot[i] = kind, obj, op, slot
        raw.module[i], raw.new[i], raw.num[i], raw.root[i] = module, new, num, False

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
                        add(r, "tensor", None, op, slot, m, new, r + 1 - k)
                r += 1
            elif type(nxt) is AccumulateGrad:
                j: int = leaf_number(nxt)  # type: ignore[assignment]  # met by the walk: not None
                if leaf_pos[j] == r:  # first seen here
                    if leaf_unit[j] < 0:
                        shown.append(r)
                        if r in keep:
                            v = walk.leaf(j)
                            new_leaf = v.creation_number >= walk.first_new_tensor
                            add(r, "tensor", v, None, 0, walk.leaf_module(j), new_leaf, r + 1 - k)
                            raw.root[r] = j in walk.root_leaf
                    r += 1
        if not folded:
            shown.append(r)
            if r in keep:
                add(r, "op", op, None, 0, m, new, k + 1)
        if out_unit[k] < 0:
            shown.append(r + 1)
            if r + 1 in keep:
                out = root_out.get(k)
                if out is None:
                    out = op.output()
                add(r + 1, "tensor", out, op, -1, m, new, r + 2 - (k + 1))
                raw.root[r + 1] = k in root_out
    first = len(walk.accs) - len(walk.extra)
    for e, t in enumerate(walk.extra):  # roots in no op's inputs come last
        i = walk.leaf_pos[first + e]
        shown.append(i)
        if i in keep:
            new = t.creation_number >= walk.first_new_tensor
            add(i, "tensor", t, None, 0, (), new, i + 1 - len(walk.ops))
            raw.root[i] = True
    return shown
