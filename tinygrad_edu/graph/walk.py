"""The one walk over the core objects behind some tensors, for both views, read once.

`_walk` reads each op's node view once, breadth first. `ForwardWalk` orders what it
read for the forward view (tensors and ops); `BackwardWalk` lists the same nodes with
the AccumulateGrad nodes, in creation order, for the backward view (what backward()
runs): one traversal, two readings. The forward summary (summarise.py) decides
collapsed modules, folds and the cap on the forward walk's per-op lists; the time
steps of a module called in a loop are numbered here, once (time_steps.py).

Why it is written the way it is: at 100,000 ops the time goes into *touching* core
objects, not into arithmetic. Each node, its dict and its edge tuples sit somewhere in a
heap far bigger than the CPU's caches, so every pass that reads an attribute of every
node costs about as much as a whole Python loop. So each op's node view
(`input_nodes`, `creation_number`, `module_path`, `op`) is read exactly once, in the
walk itself, and every edge is turned into a number there (the node it comes from, as
the walk met it); what follows (creation order, raw positions, uses, leaves) is
arithmetic on those numbers, done by numpy.

Raw positions, shared by every consumer: op k's group is [its constants and first-seen
leaves, in slot order], the op, its output; the root tensors that are in no op's inputs
come after all groups. So the node at raw position r in op k's group is tensor number
r + 1 - k, and the op is `op{k+1}`.
Graph layer: imports tinygrad_edu.core, numpy and the standard library only.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..core.engine import AccumulateGrad
from .time_steps import STEP, call_numbers

NEVER = 1 << 62  # a creation number no node reaches: nothing is new without a watermark
CONSTANT = -1  # an edge's source code for an input that needs no grad (`(None, 0)`)
# other source codes: k >= 0 is the k-th op the walk met, -2 - j the j-th leaf it met


class ForwardWalk:
    """The forward graph behind `roots` ((tensor, name) pairs), op by op.

    Per op k (creation order): `ops[k]`, `edges[k]` (its `input_nodes`, the nodes of
    `next_functions` without the pairs), `names[k]` (its `op`), `number[k]` (creation number), `scope[k]` (module path) and `module[k]`
    (the path drawn: with its time step, `("rnncell", "t=3")`, when the module was called
    in a loop), `pos[k]` (raw position; the output is at `pos[k] + 1`; `pos_array` is the
    same as a numpy array). numpy arrays, for numpy consumers: `uses[k]` and `user[k]`
    (how often, and by which op last, its output is read); per edge, in creation order, `edge_owner` (the op it feeds) and
    `edge_source` (the op it comes from, or a code below 0). `ops`, `edges` and `accs` are indexed and iterated like
    lists. Per leaf j (first-seen order, then the root tensors in no op's inputs):
    `accs[j]` (its AccumulateGrad node, None for those roots), `leaf_pos[j]`,
    `first_op[j]` and `more[j]` (the ops using it). `op_number(node)` and
    `leaf_number(node)` give k and j of a core node.
    """

    def __init__(self, roots: list, since: Any) -> None:
        self.first_new_node, self.first_new_tensor = first_new(since)
        met = _walk(roots)
        self._code = met.code
        self._lay_out(met)
        self.module = self.scope
        self.steps = False
        if any(self.scope):
            self._number_steps()
        self._find_roots(roots)

    def _number_steps(self) -> None:
        """Give each call of a module called in a loop its own path, `t=<call>` (time_steps.py)."""
        runs, repeated = call_numbers(self.ops, self.scope, self.edges)
        if not repeated:
            return
        self.steps = True
        self.module = [
            (m[0], f"{STEP}{run}", *m[1:]) if m and m[0] in repeated else m
            for m, run in zip(self.scope, runs)
        ]

    def _lay_out(self, met: _Met) -> None:
        """Creation order, raw positions, output uses and leaves, from the walk's numbers."""
        order = self._put_in_order(met)
        source, owner = _edges_in_order(met, order)
        self._count_uses(source, owner)
        self._place(met, source, owner)
        # per edge, in creation order: the op it feeds, and the op it comes from (k >= 0)
        # or CONSTANT or a leaf (<= -2); for the summary's look at which edges cross folds
        self.edge_owner = owner
        self.edge_source = np.where(source >= 0, self._rank[np.maximum(source, 0)], source)

    def _put_in_order(self, met: _Met) -> np.ndarray:
        """Ops in creation order (numbers are unique, so any sort gives the same order)."""
        numbers = np.fromiter(met.numbers, dtype=np.int64, count=len(met.ops))
        order = np.argsort(numbers)
        self._rank = np.empty(len(order), dtype=np.intp)  # op met m -> its creation order
        self._rank[order] = np.arange(len(order))
        in_order = order.tolist()
        # ops and edges are read through the order, not copied: a copy touches every op
        self.ops = InOrder(met.ops, in_order)
        self.edges = InOrder(met.edges, in_order)
        pick = _picker(in_order)  # names and module paths are a few shared objects: copied
        self.names = pick(met.names)
        self.scope = pick(met.scopes)
        self.number = numbers[order].tolist()
        return order

    def _count_uses(self, source: np.ndarray, owner: np.ndarray) -> None:
        """How often each op's output is read, and by which op last."""
        n = len(self.ops)
        from_op = source >= 0
        read = self._rank[source[from_op]]
        reader = owner[from_op]
        self.uses = np.bincount(read, minlength=n)
        self.user = np.full(n, -1, dtype=np.intp)
        np.maximum.at(self.user, read, reader)  # ops come in order: the last reader is the largest

    def _place(self, met: _Met, source: np.ndarray, owner: np.ndarray) -> None:
        """Raw positions of the ops and their first-seen leaves; the leaves' users."""
        n = len(self.ops)
        # a leaf's first use puts it in that op's group; later uses only read it.
        # `np.unique` finds each leaf's first edge; sorted, they are in first-seen order
        leaf_edges = np.flatnonzero(source <= -2)
        leaf_met = -2 - source[leaf_edges]
        _, first = np.unique(leaf_met, return_index=True)
        first.sort()
        first_edge = leaf_edges[first]
        # a group's nodes: its constants and first-seen leaves, in slot order, then the op
        # and its output; so an edge's raw position counts those before it, plus 2 per op
        takes = source == CONSTANT
        takes[first_edge] = True
        at = np.cumsum(takes) - 1 + 2 * owner
        pos = np.cumsum(np.bincount(owner[takes], minlength=n)) + 2 * np.arange(n)
        self.pos_array, self.pos = pos, pos.tolist()
        self.n_groups = int(pos[-1]) + 2 if n else 0  # raw positions taken by the op groups

        first_met = leaf_met[first]
        self.accs = InOrder(met.leaves, first_met.tolist())  # (not copied either)
        self._leaf_rank = leaf_rank = np.empty(len(met.leaves), dtype=np.intp)  # -> first-seen j
        leaf_rank[first_met] = np.arange(len(first_met))
        self.leaf_pos = at[first_edge].tolist()
        self.first_op = owner[first_edge].tolist()
        self.more: dict[int, list[int]] = {}  # leaf -> the ops using it after its first
        again = np.ones(len(leaf_edges), dtype=bool)
        again[first] = False
        later = leaf_edges[again]
        for j, k in zip(leaf_rank[-2 - source[later]].tolist(), owner[later].tolist()):
            self.more.setdefault(j, []).append(k)

    def _find_roots(self, roots: list) -> None:
        """Roots: an op's output, a leaf, or a tensor in no op's inputs (placed last)."""
        self.root_out: dict[int, Any] = {}  # op k -> the root tensor it made
        self.root_leaf: dict[int, Any] = {}  # leaf number -> root tensor
        self.extra: list = []  # root tensors that are in no op's inputs
        extra_of: dict[int, int] = {}  # id(tensor) -> leaf number, for those
        for t, _ in roots:
            if t.grad_fn is not None:
                self.root_out[self.op_number(t.grad_fn)] = t
                continue
            node = t.grad_node  # a leaf: its AccumulateGrad node, if a graph used it
            j = self.leaf_number(node) if node is not None else None
            if j is None:
                j = extra_of.get(id(t))
            if j is None:
                j = extra_of[id(t)] = len(self.accs)
                self.accs.append(None)
                self.leaf_pos.append(self.n_groups + len(self.extra))
                self.extra.append(t)
            self.root_leaf[j] = t
        self.total = self.n_groups + len(self.extra)

    def op_number(self, node: Any) -> int:
        """k of an op the walk met (its place in creation order)."""
        return int(self._rank[self._code[node]])

    def leaf_number(self, node: Any) -> int | None:
        """j of a leaf's AccumulateGrad node the walk met (first-seen order), else None."""
        code = self._code.get(node, 0)
        return int(self._leaf_rank[-2 - code]) if code <= -2 else None

    def users(self, j: int) -> list[int]:
        """The ops using leaf j, one entry per use, in order."""
        return [self.first_op[j], *self.more.get(j, ())] if j < len(self.first_op) else []

    def leaf(self, j: int) -> Any:
        """The tensor of leaf j."""
        a = self.accs[j]
        return a.variable if a is not None else self.root_leaf[j]

    def leaf_module(self, j: int) -> tuple:
        """A leaf (a parameter) sits in the module all its users share; used outside any: none."""
        modules = [self.scope[k] for k in self.users(j)]
        if not modules or not all(modules):
            return ()
        first = modules[0]
        for m in modules[1:]:
            i = 0
            while i < len(first) and i < len(m) and first[i] == m[i]:
                i += 1
            first = first[:i]
        return first

    def start(self, k: int) -> int:
        """Raw position of the first node of op k's group."""
        return self.pos[k - 1] + 2 if k else 0


class BackwardWalk:
    """The graph behind `roots` as backward() runs it: every grad_fn node, in creation order.

    The same `_walk` reads it as for the forward view (each node's view once), so the
    two views never disagree on what is reachable. Per node i (creation order):
    `nodes[i]` (an op's grad_fn or an AccumulateGrad node), `edges[i]` (its
    `input_nodes`, slot by slot; () for an AccumulateGrad), `scope[i]` (module path)
    and `number[i]` (creation number). `starts[r]` is root r's `grad_node`: its
    grad_fn, a leaf's AccumulateGrad node, or None for a tensor outside any graph.
    """

    def __init__(self, roots: list, since: Any) -> None:
        self.first_new_node, self.first_new_tensor = first_new(since)
        met = _walk(roots)
        self.starts = [t.grad_node for t, _ in roots]
        leaves = list(met.leaves)
        for node in self.starts:  # a leaf asked for itself: its node, unless an op reads it
            if node is not None and node not in met.code:
                met.code[node] = 0
                leaves.append(node)
        nodes = [*met.ops, *leaves]
        numbers = [*met.numbers, *(a.creation_number for a in leaves)]
        order = sorted(range(len(nodes)), key=numbers.__getitem__)  # numbers are unique
        n_ops = len(met.ops)
        self.nodes = [nodes[i] for i in order]
        self.number = [numbers[i] for i in order]
        self.edges = [met.edges[i] if i < n_ops else () for i in order]
        self.scope = [met.scopes[i] if i < n_ops else nodes[i].module_path for i in order]


def first_new(since: Any) -> tuple[int, int]:
    """The first node and tensor creation numbers flagged new (the live view's cell).

    Without a watermark nothing is new: NEVER is a creation number no node reaches.
    """
    return (since.node, since.tensor) if since is not None else (NEVER, NEVER)


class _Met:
    """What the walk read, in the order it met the ops (not yet creation order)."""

    def __init__(self) -> None:
        self.ops: list = []  # op nodes
        self.edges: list = []  # their input_nodes
        self.counts: list[int] = []  # how many (len(input_nodes), read while at hand)
        self.numbers: list[int] = []  # creation numbers
        self.scopes: list[tuple] = []  # module paths
        self.names: list[str] = []  # op names ("Mul")
        self.leaves: list = []  # AccumulateGrad nodes
        self.sources: list[int] = []  # per edge, op by op: the source code (see CONSTANT)
        self.code: dict = {None: CONSTANT}  # core node -> its source code


# one C call reads all a walk needs of a node (the node is in the cache just then)
_NODE_VIEW = operator.attrgetter("input_nodes", "creation_number", "module_path", "op")


def _walk(roots: list) -> _Met:
    """Read the ops behind `roots` once each, breadth first; AccumulateGrad nodes are not entered."""
    met = _Met()
    ops, code, leaves = met.ops, met.code, met.leaves
    add_op, add_leaf, add_source = ops.append, leaves.append, met.sources.append
    add_edges, add_count, add_number = met.edges.append, met.counts.append, met.numbers.append
    add_scope, add_name = met.scopes.append, met.names.append
    acc, source_of = AccumulateGrad, code.get
    for t, _ in roots:
        node = t.grad_fn
        if node is not None and node not in code:  # a tensor asked for twice starts once
            code[node] = len(ops)
            add_op(node)
    # NOTE: `ops` grows while the loop runs over it: each op met is read in its turn.
    # One statement per append: `a(x), b(y)` would also build a tuple per op
    for node in ops:
        edges, number, scope, name = _NODE_VIEW(node)
        add_edges(edges)
        add_count(len(edges))
        add_number(number)
        add_scope(scope)
        add_name(name)
        for nxt in edges:
            source = source_of(nxt)
            if source is None:  # met for the first time
                if type(nxt) is acc:
                    source = code[nxt] = -2 - len(leaves)
                    add_leaf(nxt)
                else:
                    source = code[nxt] = len(ops)
                    add_op(nxt)
            add_source(source)
    return met


def _edges_in_order(met: _Met, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every edge in creation order (op by op, slots in order): its source code and its op."""
    counts = np.fromiter(met.counts, dtype=np.intp, count=len(order))
    n_in = counts[order]
    starts = np.cumsum(counts) - counts  # where op m's edges start, in walk order
    # the edges of the k-th op in creation order are those of op order[k], moved
    reorder = np.repeat(starts[order] - (np.cumsum(n_in) - n_in), n_in)
    reorder += np.arange(len(reorder))
    source = np.fromiter(met.sources, dtype=np.intp, count=len(reorder))[reorder]
    owner = np.repeat(np.arange(len(order)), n_in)  # the op (creation order) each edge feeds
    return source, owner


class InOrder:
    """`items` (in the order the walk met them) read in creation order: `ops[k]`, `len`, `for`."""

    def __init__(self, items: list, order: list[int]) -> None:
        self.items, self.order = items, order

    def __getitem__(self, k: int) -> Any:
        return self.items[self.order[k]]

    def __len__(self) -> int:
        return len(self.order)

    def __iter__(self) -> Any:
        return map(self.items.__getitem__, self.order)

    def append(self, item: Any) -> None:
        self.order.append(len(self.items))
        self.items.append(item)


def _picker(order: list[int]) -> Any:
    """`pick(items)`: the items at `order`, as a list (itemgetter picks in C)."""
    if len(order) < 2:  # itemgetter of one index returns the item, not a tuple
        return lambda items: [items[k] for k in order]
    getter = operator.itemgetter(*order)
    return lambda items: list(getter(items))
