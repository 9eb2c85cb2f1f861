"""The summarised forward view of big graphs, decided on ops before any tensor node is made.

build.py's `_walk_forward` makes one RawGraph entry per tensor and op; at 100,000s of
nodes that Python loop alone costs more than a whole drawing may. Here one pass over
the ops records what folding needs (uses of each output, chain links, where each op's
nodes sit), chains of repeated ops are folded on ops, and only the nodes that stay
visible get RawGraph entries (a sparse RawGraph: dicts keyed by raw position).

Raw positions and tensor numbers come out exactly as the full walk's: op k's group is
[its constants and first-seen leaves, in slot order], the op, its output; so the node
at raw position r in op k's group is tensor number r + 1 - k, and the op is `op{k+1}`.
Used for the forward view when no module is collapsed; tests/graph/test_opwalk.py checks
that the Graph is identical to the full walk's.
Graph layer: imports tinygrad_edu.core, numpy and the standard library only.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..core.function import AccumulateGrad
from .steps import has_steps
from .summarise import MIN_REPEATS, Summary, finish, repeats


def collect_ops(roots: list) -> list:
    """The ops behind `roots` in creation order (AccumulateGrad nodes are not entered)."""
    acc = AccumulateGrad
    starts = [t.grad_fn for t, _ in roots if t.grad_fn is not None]
    seen = set(starts)  # nodes hash by identity: no id() call per node
    add = seen.add
    stack = list(starts)
    push, pop = stack.append, stack.pop
    while stack:
        for nxt, _ in pop().next_functions:
            if nxt is not None and nxt not in seen and type(nxt) is not acc:
                add(nxt)
                push(nxt)
    return sorted(seen, key=_by_creation)


_by_creation = operator.attrgetter("creation_number")


class OpPass:
    """Phase 1 on ops only: per op k its raw position `pos[k]` and output uses."""

    def __init__(self, ops: list, roots: list, wm: Any) -> None:
        self.ops = ops
        acc = AccumulateGrad
        index = self.index = dict(zip(ops, range(len(ops))))
        n_ops = len(ops)
        uses = self.uses = [0] * n_ops  # uses of op k's output
        user = self.user = [-1] * n_ops  # the last op using it
        pos: list[int] = []  # raw position of op k (its output is at pos[k] + 1)
        op_inputs: list[int] = []  # how many of op k's inputs are other ops' outputs
        # a leaf is known by its AccumulateGrad node (core makes one per leaf, once)
        first_pos: dict[Any, int] = {}  # leaf's node -> raw position, in first-seen order
        first_op: list[int] = []  # the op that first used each leaf
        again: list[tuple[Any, int]] = []  # (leaf's node, op) for every later use
        seen, add_first, add_again = first_pos.setdefault, first_op.append, again.append
        add_pos, add_inputs = pos.append, op_inputs.append
        r = -1  # raw position of the last node so far
        # the hot loop: one step per input, no per-node entries
        for k, op in enumerate(ops):
            n_in = 0
            for nxt, _ in op.next_functions:
                if nxt is None:  # a constant input: a node of this op's group
                    r += 1
                elif type(nxt) is acc:
                    if seen(nxt, r + 1) > r:  # first seen: a node of this op's group
                        r += 1
                        add_first(k)
                    else:
                        add_again((nxt, k))
                else:
                    j = index[nxt]
                    uses[j] += 1
                    user[j] = k
                    n_in += 1
            r += 1
            add_pos(r)
            add_inputs(n_in)
            r += 1
        self.pos, self.op_inputs = pos, op_inputs
        # leaves by number j (first-seen order): node, raw position, ops using it (per use)
        self.accs: list = list(first_pos)
        self.leaf_pos = list(first_pos.values())
        self.leaf_of = dict(zip(self.accs, range(len(self.accs))))
        self.first_op = first_op
        self.more: dict[int, list[int]] = {}  # leaf -> the ops using it after its first
        for a, k in again:
            self.more.setdefault(self.leaf_of[a], []).append(k)
        # roots: an op's output, a leaf, or a tensor outside the graph (appended at the end)
        self.root_out: dict[int, Any] = {}  # op k -> the root tensor it made
        self.root_leaf: dict[int, Any] = {}  # leaf number -> root tensor
        self.extra: list = []  # root tensors that are in no op's inputs
        extra_of: dict[int, int] = {}  # id(tensor) -> leaf number, for those
        for t, _ in roots:
            if t.grad_fn is not None:
                self.root_out[index[t.grad_fn]] = t
                continue
            node = t.grad_node  # a leaf: its AccumulateGrad node, if a graph used it
            j = self.leaf_of.get(node) if node is not None else None
            if j is None:
                j = extra_of.get(id(t))
            if j is None:
                j = extra_of[id(t)] = len(self.accs)
                self.accs.append(None)
                self.leaf_pos.append(r + 1 + len(self.extra))
                self.extra.append(t)
            self.root_leaf[j] = t
        self.total = r + 1 + len(self.extra)
        self.wn = wm.node if wm is not None else 1 << 62
        self.wt = wm.tensor if wm is not None else 1 << 62

    def users(self, j: int) -> list[int]:
        """The ops using leaf j, one entry per use, in order."""
        return [self.first_op[j], *self.more.get(j, ())] if j < len(self.first_op) else []

    def leaf(self, j: int) -> Any:
        """The tensor of leaf j."""
        a = self.accs[j]
        return a.variable if a is not None else self.root_leaf[j]

    def start(self, k: int) -> int:
        """Raw position of the first node of op k's group."""
        return self.pos[k - 1] + 2 if k else 0


def summarise_forward(
    roots: list, wm: Any, max_nodes: int | None, rg: Any
) -> tuple[list, list[tuple[int, int, int]], int] | None:
    """`summarise(_walk_forward(roots, wm), fold=True)` with no collapse; fills sparse `rg`.

    `rg` gets entries for the visible nodes only (dicts keyed by raw position) and
    `rg.total`, the node count of the full graph. Returns None when two folds would
    share ops (see `_fold`), or when a module was called in a loop (steps.py numbers and
    folds its steps on the full walk): the caller then takes the full walk.
    """
    ops = collect_ops(roots)
    if has_steps(ops):
        return None
    g = OpPass(ops, roots, wm)
    n = g.total
    folded = _fold(g, n)
    if folded is None:
        return None
    fold_of, summaries = folded
    leaf_unit, holders, readers = _absorb_leaves(g, fold_of, summaries, n)
    units = _materialise(g, fold_of, leaf_unit, holders, rg)
    for f in range(len(summaries)):
        units.append(n + f)
    # folded ops whose edges all stay inside their fold add no unit edge: skip them. A
    # fold's ops after its first read the previous op's output: that input is inside
    firsts = {f.pos for f in summaries}
    pos, op_inputs, root_out = g.pos, g.op_inputs, g.root_out
    replay = [
        k
        for k, f in enumerate(fold_of)
        if f < 0 or op_inputs[k] > (pos[k] not in firsts) or k in readers or k in root_out
    ]
    uedges = _unit_edges(g, replay, fold_of, leaf_unit, n)
    roots_u = sorted(i for i in rg.kind if rg.root[i])
    rg.total = n
    return finish(n, units, uedges, roots_u, rg.new, summaries, True, max_nodes)


def _fold(g: OpPass, n: int) -> tuple[list[int], list[Summary]] | None:
    """Fold chains of repeated ops: `fold_of[k]` is op k's summary number or -1.

    Chains never merge: where several ops feed one op (`x @ w.T`: the previous layer and
    the transpose), only the earliest links to it, as in the full walk. Should two folds
    still claim one op, this returns None and the full walk decides.
    """
    ops, root_out = g.ops, g.root_out
    n_ops = len(ops)
    # numpy for the per-op steps: 100,000 ops are a few array operations
    # an output used once (and not a root) links its op to the op using it
    single = np.array(g.uses, dtype=np.intp) == 1
    if root_out:
        single[list(root_out)] = False
    user = np.array(g.user, dtype=np.intp)
    # chains must not merge: of the ops linking to one op, the earliest keeps its link
    # (as build.py's full walk decides)
    sources = np.flatnonzero(single)
    _, first = np.unique(user[sources], return_index=True)
    single[:] = False
    single[sources[first]] = True
    link_a = np.where(single, user, -1)
    has_pred = np.zeros(n_ops, dtype=bool)
    has_pred[link_a[single]] = True
    link = link_a.tolist()
    fold_of = np.full(n_ops, -1)
    summaries: list[Summary] = []
    size = None
    for s in np.flatnonzero(single & ~has_pred).tolist():
        chain = [s]
        k = link[s]
        while k >= 0:
            chain.append(k)
            k = link[k]
        if len(chain) < MIN_REPEATS:
            continue
        names = list(map(_name, map(type, map(ops.__getitem__, chain))))
        for i, p, reps in repeats(names):
            members = chain[i + p : i + (reps - 1) * p]
            first = ops[members[0]]
            text = " -> ".join(names[i : i + p])
            f = Summary(
                "repeat",
                text,
                module=".".join(first.module_path),
                detail=text,
                pos=g.pos[members[0]],
            )
            f.blocks = reps - 2
            at = np.array(members)
            if (fold_of[at] >= 0).any():
                return None
            fold_of[at] = len(summaries)
            summaries.append(f)
            if size is None:
                size = _group_sizes(g)
            # an op, its constants and its output (unless a root); the op's first-seen
            # leaves are counted here too and taken back in _absorb_leaves if they stay
            f.count = int(size[at].sum())
            f.new = (
                ops[max(members)].creation_number >= g.wn
            )  # ids grow with k: the last is the newest
    return fold_of.tolist(), summaries


_name = operator.attrgetter("__name__")


def _group_sizes(g: OpPass) -> np.ndarray:
    """Nodes in op k's group: constants and first-seen leaves, the op, its output."""
    # pos[k] - pos[k - 1]: the whole group (pos[-1] + 2 == 0 starts the first)
    size = np.diff(np.array(g.pos, dtype=np.intp), prepend=-2)
    if g.root_out:
        size[list(g.root_out)] -= 1  # a root output stays visible: not in any fold
    return size


def _absorb_leaves(
    g: OpPass, fold_of: list[int], summaries: list[Summary], n: int
) -> tuple[_Absorbed, set[int], set[int]]:
    """A leaf only one fold uses goes into it (a layer's own weight).

    Returns which leaves went into a fold, the folded ops whose group holds a leaf that
    stays visible (a weight shared with other ops), and the folded ops reading one.
    """
    stay: set[int] = set()  # leaves first used in a fold that stay visible
    holders: set[int] = set()
    readers: set[int] = set()
    absorbed = _Absorbed(fold_of, g.first_op, stay, n)
    if not summaries:
        return absorbed, holders, readers
    root_leaf = g.root_leaf
    # a leaf used once, not a root, goes with its op; only the others need a look
    for j in {*g.more, *root_leaf}:
        users = g.users(j)
        if not users:
            continue
        f = fold_of[users[0]]
        if f >= 0 and j not in root_leaf and all(fold_of[k] == f for k in users):
            continue  # its first user is in f: already counted with that op's group
        if f >= 0:  # ops come in order: the first use is where the leaf was first seen
            summaries[f].count -= 1  # counted with its group, but it stays visible
            holders.add(users[0])
            stay.add(j)
        readers.update(k for k in users if fold_of[k] >= 0)
    if g.wt < 1 << 62:  # a watermark: a fold is new if a leaf it took is
        for j in range(len(g.first_op)):
            if j in absorbed:
                f = summaries[fold_of[g.first_op[j]]]
                if not f.new and g.leaf(j).creation_number >= g.wt:
                    f.new = True
    return absorbed, holders, readers


class _Absorbed:
    """`j in absorbed`: leaf j went into a fold; `absorbed.get(j, d)`: that fold's unit."""

    def __init__(self, fold_of: list[int], first_op: list[int], stay: set[int], n: int) -> None:
        self.fold_of, self.first_op, self.stay, self.n = fold_of, first_op, stay, n

    def __contains__(self, j: int) -> bool:
        return j < len(self.first_op) and self.fold_of[self.first_op[j]] >= 0 and j not in self.stay

    def get(self, j: int, default: int) -> int:
        return self.n + self.fold_of[self.first_op[j]] if j in self else default


def _materialise(
    g: OpPass, fold_of: list[int], leaf_unit: _Absorbed, holders: set[int], rg: Any
) -> list[int]:
    """RawGraph entries for the visible nodes; returns their raw positions."""
    ops, root_out = g.ops, g.root_out
    leaf_of, leaf_pos = g.leaf_of, g.leaf_pos
    shown: list[int] = []

    def add(
        i: int, kind: str, obj: Any, op: Any, slot: int, module: tuple, new: bool, num: int
    ) -> None:
        rg.kind[i], rg.obj[i], rg.op[i], rg.slot[i] = kind, obj, op, slot
        rg.module[i], rg.new[i], rg.num[i], rg.root[i] = module, new, num, False
        shown.append(i)

    visible = [k for k, f in enumerate(fold_of) if f < 0]
    if len(visible) < len(ops):
        visible = sorted({*visible, *root_out, *holders})
    for k in visible:
        op = ops[k]
        folded = fold_of[k] >= 0
        m = op.module_path
        new = op.creation_number >= g.wn
        r = g.start(k)
        for slot, (nxt, _) in enumerate(op.next_functions):
            if nxt is None:
                if not folded:
                    add(r, "tensor", None, op, slot, m, new, r + 1 - k)
                r += 1
            elif type(nxt) is AccumulateGrad:
                j = leaf_of[nxt]
                if leaf_pos[j] == r:  # first seen here
                    if j not in leaf_unit:
                        v = g.leaf(j)
                        add(
                            r,
                            "tensor",
                            v,
                            None,
                            0,
                            _leaf_module(g, j),
                            v.creation_number >= g.wt,
                            r + 1 - k,
                        )
                        rg.root[r] = j in g.root_leaf
                    r += 1
        if not folded:
            add(r, "op", op, None, 0, m, new, k + 1)
        if not folded or k in root_out:
            out = root_out.get(k)
            if out is None:
                out = op.output()
            add(r + 1, "tensor", out, op, -1, m, new, r + 2 - (k + 1))
            rg.root[r + 1] = k in root_out
    n_ops = len(ops)
    for e, t in enumerate(g.extra):  # roots in no op's inputs come last
        i = leaf_pos[len(g.accs) - len(g.extra) + e]
        add(i, "tensor", t, None, 0, (), t.creation_number >= g.wt, i + 1 - n_ops)
        rg.root[i] = True
    return shown


def _leaf_module(g: OpPass, j: int) -> tuple:
    # a leaf (a parameter) sits in the module all its users share; used outside any: none
    modules = [g.ops[k].module_path for k in g.users(j)]
    if not modules or not all(modules):
        return ()
    first = modules[0]
    for m in modules[1:]:
        i = 0
        while i < len(first) and i < len(m) and first[i] == m[i]:
            i += 1
        first = first[:i]
    return first


def _unit_edges(
    g: OpPass, replay: list[int], fold_of: list[int], leaf_unit: _Absorbed, n: int
) -> Any:
    """Unit edges in raw-edge order (edges inside a fold dropped, the rest merged).

    `replay`: the ops in order, leaving out folded ops whose inputs all come from their
    own fold (its absorbed leaves, its constants, the op before them in the chain).
    """
    ops, pos, index, root_out = g.ops, g.pos, g.index, g.root_out
    leaf_of, leaf_pos = g.leaf_of, g.leaf_pos
    acc = AccumulateGrad
    out: dict[tuple[int, int, int], None] = {}
    for k in replay:
        op = ops[k]
        f = fold_of[k]
        dst = pos[k] if f < 0 else n + f
        r = pos[k - 1] + 2 if k else 0
        for slot, (nxt, _) in enumerate(op.next_functions):
            if nxt is None:
                r += 1
                if f < 0:
                    out[(r - 1, dst, slot)] = None
                continue
            if type(nxt) is acc:
                j = leaf_of[nxt]
                if leaf_pos[j] == r:
                    r += 1
                src = leaf_unit.get(j, leaf_pos[j])
            else:
                j = index[nxt]
                h = fold_of[j]
                src = pos[j] + 1 if h < 0 or j in root_out else n + h
            if src != dst:
                out[(src, dst, slot if src < n and dst < n else 0)] = None
        if f < 0:
            out[(dst, dst + 1, 0)] = None
        elif k in root_out:
            out[(dst, pos[k] + 1, 0)] = None
    return out
