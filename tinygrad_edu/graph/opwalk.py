"""The summarised forward view of big graphs, decided on ops before any tensor node is made.

The full RawGraph has one entry per tensor and op; at 100,000s of nodes making those
entries costs more than a whole drawing may. Here the forward walk's per-op lists
(walk.py: uses of each output, where each op's nodes sit) are enough: the middle
steps of a module called in a loop, then chains of repeated ops, are folded on ops,
and only the nodes that stay visible get RawGraph entries (a sparse RawGraph: dicts
keyed by the walk's raw positions).

Used for every forward view with no collapsed module; tests/graph/test_opwalk.py checks
that the Graph is identical to the full RawGraph's summary.
Graph layer: imports tinygrad_edu.core, numpy and the standard library only.
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


def summarise_forward(
    walk: ForwardWalk, options: DrawOptions, raw: Any
) -> tuple[list, list[tuple[int, int, int]], int] | None:
    """`summarise(full_raw_graph(walk), options)` with no collapse; fills the sparse RawGraph `raw`.

    `raw` gets entries for the visible nodes only (dicts keyed by raw position) and
    `raw.total`, the node count of the full graph. Returns None when two folds would
    share ops (see `_fold`): the caller then lays out the full RawGraph.
    """
    n = walk.total
    fold_of_arr = np.full(len(walk.ops), -1)
    summaries: list[Summary] = []
    fold = options.fold and options.expand is not True  # everything open: nothing folded
    if fold and walk.steps:
        shut = options.expand if isinstance(options.expand, frozenset) else frozenset()
        _fold_steps(walk, shut, options.keep_ends, fold_of_arr, summaries)
    n_steps = len(summaries)  # folds below n_steps are steps, the others chains
    if fold and not _fold(walk, fold_of_arr, summaries):
        return None
    folds = _Folds(fold_of_arr, n_steps, len(summaries) > n_steps)
    leaf_unit, holders = _absorb_leaves(walk, folds, summaries, n)
    if summaries:
        visible = np.flatnonzero(fold_of_arr < 0).tolist()
        # folded ops that keep a visible node: their output (a root) or a leaf
        visible = sorted({*visible, *walk.root_out, *holders})
        units = _materialise(walk, visible, folds, leaf_unit, raw, keep=set())  # positions only
    else:
        units = list(range(n))
    units.extend(range(n, n + len(summaries)))
    unit_edges = _unit_edges(walk, _replayed(walk, fold_of_arr), folds, leaf_unit, n)
    roots_u = _root_units(walk, folds, n)
    picked = finish(
        n, units, unit_edges, roots_u, _NewFlags(walk), summaries, True, options.max_nodes
    )
    # entries only for the nodes kept after the cap: their ops' groups are looked at again
    shown = np.array([u for u in picked[0] if type(u) is int], dtype=np.intp)
    in_groups = shown[shown < walk.n_groups]
    groups = np.unique(np.searchsorted(walk.pos_array + 1, in_groups)).tolist()
    _materialise(walk, groups, folds, leaf_unit, raw, keep=set(shown.tolist()))
    raw.total = n
    return picked


class _Folds:
    """Op k's fold: `of[k]` (a list), -1 for none; folds below `n_steps` are time steps.

    A time-step fold takes its ops' whole groups but their leaves, a root output too; a
    chain fold leaves a root output visible. As summarise.py does, a leaf only one fold
    uses goes into it only when some chain was folded (`chains`).
    """

    def __init__(self, of: np.ndarray, n_steps: int, chains: bool) -> None:
        self.of, self.n_steps, self.chains = of.tolist(), n_steps, chains

    def keeps_root(self, k: int) -> bool:
        """Whether op k's output, a root, is drawn on its own."""
        return self.of[k] < 0 or self.of[k] >= self.n_steps


def _root_units(walk: ForwardWalk, folds: _Folds, n: int) -> list[int]:
    """The roots' units in raw order: a root output in a step fold is that fold."""
    at = [(walk.leaf_pos[j], walk.leaf_pos[j]) for j in walk.root_leaf]  # never in a fold
    for k in walk.root_out:
        out = walk.pos[k] + 1
        at.append((out, out if folds.keeps_root(k) else n + folds.of[k]))
    return [u for _, u in sorted(at)]


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


def _fold_steps(
    walk: ForwardWalk,
    opened: frozenset[str],
    keep_ends: bool,
    fold_of: np.ndarray,
    summaries: list[Summary],
) -> None:
    """Fold the middle steps of a long unroll on ops, as summarise.py's `_fold_steps` does.

    A step's nodes are its ops' groups but their leaves (a leaf sits in the module all
    its users share, without a step); the fold counts them and sits at the first one.
    """
    steps: dict[str, dict[int, list[int]]] = {}  # module -> step -> its ops
    for k, m in enumerate(walk.module):
        if len(m) > 1 and m[1].startswith(STEP):
            steps.setdefault(m[0], {}).setdefault(int(m[1][len(STEP) :]), []).append(k)
    # an op, its constants and its output: the group but its first-seen leaves
    size = np.diff(walk.pos_array, prepend=-2)
    size -= np.bincount(walk.first_op, minlength=len(walk.ops))
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
                start = by_step[run[0]]
                s = Summary(
                    "repeat",
                    f"{top}.{STEP}{run[0]} ... {STEP}{run[-1]}",
                    module=top,
                    detail=signature_text([names[k] for k in start]),
                    pos=_first_not_leaf(walk, start[0]),
                )
                s.blocks = len(run)
                ops = [k for step in run for k in by_step[step]]
                fold_of[ops] = len(summaries)
                summaries.append(s)
                s.count = int(size[ops].sum())
                s.new = number[max(ops)] >= first_new_node  # the newest op is the last
            run = []


def _first_not_leaf(walk: ForwardWalk, k: int) -> int:
    """Raw position of op k's first constant, else of op k: its group's first node in a step."""
    r = walk.start(k)
    for nxt in walk.edges[k]:
        if nxt is None:
            return r
        if type(nxt) is AccumulateGrad and walk.leaf_pos[walk.leaf_number(nxt)] == r:
            r += 1
    return walk.pos[k]


def _replayed(walk: ForwardWalk, fold_of: np.ndarray) -> list[int]:
    """The ops whose edges `_unit_edges` must look at, in order.

    A folded op whose edges all stay inside its fold adds no unit edge: skipped. So a
    folded op is kept when it reads a leaf (which may stay visible), reads an op of
    another unit, or is a root.
    """
    owner, src = walk.edge_owner, walk.edge_source
    keep = fold_of < 0
    from_op = src >= 0
    other = fold_of[src[from_op]] != fold_of[owner[from_op]]
    keep[owner[from_op][other]] = True
    keep[owner[src <= -2]] = True
    keep[list(walk.root_out)] = True
    return np.flatnonzero(keep).tolist()


def _fold(walk: ForwardWalk, fold_of: np.ndarray, summaries: list[Summary]) -> bool:
    """Fold chains of repeated ops outside the step folds: sets `fold_of[k]` to the summary.

    Should two folds claim one op, this returns False and the full walk decides.
    """
    size = None
    for chain in _chains(walk, fold_of):
        # a chain has 4 ops or more: itemgetter returns a tuple
        names = list(operator.itemgetter(*chain.tolist())(walk.names))
        for i, p, reps in repeats(names):
            # keep the first and the last block visible, fold the blocks between
            at = chain[i + p : i + (reps - 1) * p]
            text = " -> ".join(names[i : i + p])
            first, last = int(at[0]), int(at[-1])
            f = Summary("repeat", text, ".".join(walk.module[first]), text, pos=walk.pos[first])
            f.blocks = reps - 2
            if (fold_of[at] >= 0).any():
                return False
            fold_of[at] = len(summaries)
            summaries.append(f)
            if size is None:
                size = _group_sizes(walk)
            # an op, its constants and its output (unless a root); the op's first-seen
            # leaves are counted here too and taken back in _absorb_leaves if they stay
            f.count = int(size[at].sum())
            # creation numbers grow with k: the last member is the newest
            f.new = walk.number[last] >= walk.first_new_node
    return True


def _chains(walk: ForwardWalk, fold_of: np.ndarray) -> list[np.ndarray]:
    """Straight chains of at least MIN_REPEATS unfolded ops, each op's output read only by the next.

    Chains never merge (`op_links`). Each chain is an array of its ops in order; chains
    come in the order of their first ops.
    """
    n_ops = len(walk.ops)
    linked, targets = op_links(walk)  # one pass over the links in Python (~15 ms at 100,000)
    free = (fold_of[linked] < 0) & (fold_of[targets] < 0)  # links between ops of no step fold
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
    one links to it (`chain_links`). The full RawGraph (build.py) links the same.
    """
    single = walk.uses == 1
    if walk.root_out:
        single[list(walk.root_out)] = False
    ops = np.flatnonzero(single)
    return chain_links(ops, walk.user[ops])


def _group_sizes(walk: ForwardWalk) -> np.ndarray:
    """Nodes in op k's group: constants and first-seen leaves, the op, its output."""
    # pos[k] - pos[k - 1]: the whole group (pos[-1] + 2 == 0 starts the first)
    size = np.diff(walk.pos_array, prepend=-2)
    if walk.root_out:
        size[list(walk.root_out)] -= 1  # a root output stays visible: not in any fold
    return size


def _absorb_leaves(
    walk: ForwardWalk, folds: _Folds, summaries: list[Summary], n: int
) -> tuple[_Absorbed, set[int]]:
    """A leaf only one fold uses goes into it (a layer's own weight).

    Returns which leaves went into a fold and the folded ops whose group holds a leaf
    that stays visible (a weight shared with other ops).
    """
    stay: set[int] = set()  # leaves first used in a fold that stay visible
    holders: set[int] = set()
    fold_of = folds.of
    absorbed = _Absorbed(fold_of, walk.first_op, stay, n)
    if not summaries:
        return absorbed, holders
    if not folds.chains:  # step folds only: no leaf goes into them (summarise.py)
        first = np.asarray(walk.first_op, dtype=np.intp)
        held = np.flatnonzero(np.asarray(fold_of)[first] >= 0) if len(first) else first
        stay.update(held.tolist())
        holders.update(first[held].tolist())
        return absorbed, holders
    root_leaf = walk.root_leaf
    # a leaf used once, not a root, goes with its op; only the others need a look
    for j in {*walk.more, *root_leaf}:
        users = walk.users(j)
        if not users:
            continue
        f = fold_of[users[0]]
        if f >= 0 and j not in root_leaf and all(fold_of[k] == f for k in users):
            continue  # its first user is in f: already counted with that op's group
        if f >= 0:  # ops come in order: the first use is where the leaf was first seen
            if f >= folds.n_steps:  # a chain counts its group's leaves; a step does not
                summaries[f].count -= 1
            holders.add(users[0])
            stay.add(j)
    if walk.first_new_tensor < NEVER:  # a watermark: a chain is new if a leaf it took is
        for j in range(len(walk.first_op)):
            f = fold_of[walk.first_op[j]]
            if f >= folds.n_steps and j in absorbed:
                s = summaries[f]
                if not s.new and walk.leaf(j).creation_number >= walk.first_new_tensor:
                    s.new = True
    return absorbed, holders


class _Absorbed:
    """`j in absorbed`: leaf j went into a fold; `absorbed.get(j, d)`: that fold's unit."""

    def __init__(self, fold_of: list[int], first_op: list[int], stay: set[int], n: int) -> None:
        self.fold_of, self.first_op, self.stay, self.n = fold_of, first_op, stay, n

    def __contains__(self, j: int) -> bool:
        return j < len(self.first_op) and self.fold_of[self.first_op[j]] >= 0 and j not in self.stay

    def get(self, j: int, default: int) -> int:
        return self.n + self.fold_of[self.first_op[j]] if j in self else default


def _materialise(
    walk: ForwardWalk, ops: list[int], folds: _Folds, leaf_unit: _Absorbed, raw: Any, keep: set
) -> list[int]:
    """The visible nodes' raw positions in the groups of `ops`, and in no op's inputs.

    Those in `keep` get RawGraph entries (`keep` empty: the positions only, for the cap).
    """
    root_out, fold_of, n_steps = walk.root_out, folds.of, folds.n_steps
    leaf_number, leaf_pos = walk.leaf_number, walk.leaf_pos
    shown: list[int] = []

    def add(i: int, kind: str, obj: Any, op: Any, slot: int, module: tuple, new: bool, num: int):
        raw.kind[i], raw.obj[i], raw.op[i], raw.slot[i] = kind, obj, op, slot
        raw.module[i], raw.new[i], raw.num[i], raw.root[i] = module, new, num, False

    for k in ops:
        op = walk.ops[k]
        folded = fold_of[k] >= 0
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
                    if j not in leaf_unit:
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
        if not folded or (k in root_out and fold_of[k] >= n_steps):
            shown.append(r + 1)
            if r + 1 in keep:
                out = root_out.get(k)
                if out is None:
                    out = op.output()
                add(r + 1, "tensor", out, op, -1, m, new, r + 2 - (k + 1))
                raw.root[r + 1] = k in root_out
    for i, t, new in _extra_roots(walk):  # roots in no op's inputs come last
        shown.append(i)
        if i in keep:
            add(i, "tensor", t, None, 0, (), new, i + 1 - len(walk.ops))
            raw.root[i] = True
    return shown


def _extra_roots(walk: ForwardWalk) -> list[tuple[int, Any, bool]]:
    """(raw position, tensor, is new) of each root that is no op's input; the walk puts
    them after every op."""
    first = len(walk.accs) - len(walk.extra)
    return [
        (walk.leaf_pos[first + e], t, t.creation_number >= walk.first_new_tensor)
        for e, t in enumerate(walk.extra)
    ]


def _unit_edges(
    walk: ForwardWalk, replay: list[int], folds: _Folds, leaf_unit: _Absorbed, n: int
) -> Any:
    """Unit edges in raw-edge order (edges inside a fold dropped, the rest merged).

    `replay`: the ops in order, leaving out folded ops whose inputs all come from their
    own fold (its absorbed leaves, its constants, the op before them in the chain).
    """
    pos, op_number, root_out, edges = walk.pos, walk.op_number, walk.root_out, walk.edges
    fold_of, n_steps = folds.of, folds.n_steps
    leaf_number, leaf_pos = walk.leaf_number, walk.leaf_pos
    acc = AccumulateGrad
    out: dict[tuple[int, int, int], None] = {}
    for k in replay:
        f = fold_of[k]
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
                src = leaf_unit.get(j, leaf_pos[j])  # type: ignore[arg-type]  # met: not None
            else:
                j = op_number(nxt)
                h = fold_of[j]
                src = pos[j] + 1 if h < 0 or (j in root_out and h >= n_steps) else n + h
            if src != dst:
                out[(src, dst, slot if src < n and dst < n else 0)] = None
        if f < 0:
            out[(dst, dst + 1, 0)] = None
        elif k in root_out and f >= n_steps:  # a chain leaves a root output visible
            out[(dst, pos[k] + 1, 0)] = None
    return out
