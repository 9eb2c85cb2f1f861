"""One forward walk: the ops behind some tensors, read from the core objects once.

Every forward consumer works from what this walk records. The op-level summary
(opwalk.py) decides folds and the cap on its per-op lists; the full RawGraph, one entry
per tensor and op (build.py's `full_raw_graph`), is laid out from the same lists; the time
steps of a module called in a loop are numbered here, once (time_steps.py). Each op's node
view (`next_functions`, `creation_number`, `module_path`) is read exactly once: those
are properties, and at 100,000 ops every extra pass over them costs tens of ms.

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

from ..core.function import AccumulateGrad
from .time_steps import STEP, call_numbers

NEVER = 1 << 62  # a creation number no node reaches: nothing is new without a watermark


class ForwardWalk:
    """The forward graph behind `roots` ((tensor, name) pairs), op by op.

    Per op k (creation order): `ops[k]`, `edges[k]` (its `next_functions`), `number[k]`
    (creation number), `scope[k]` (module path) and `module[k]` (the path drawn: with
    its time step, `("rnncell", "t=3")`, when the module was called in a loop),
    `pos[k]` (raw position; the output is at `pos[k] + 1`), `uses[k]` and `user[k]`
    (how often, and by which op last, its output is read), `op_inputs[k]` (inputs that
    are other ops' outputs). Per leaf j (first-seen order, then the root tensors in no
    op's inputs): `accs[j]` (its AccumulateGrad node, None for those roots),
    `leaf_pos[j]`, `first_op[j]` and `more[j]` (the ops using it).
    """

    def __init__(self, roots: list, since: Any) -> None:
        # nodes made after the `since` watermark are flagged new (the live view's cell)
        self.first_new_node = since.node if since is not None else NEVER
        self.first_new_tensor = since.tensor if since is not None else NEVER
        self.ops, self.edges, self.number = _collect_ops(roots)
        self.scope = list(map(_module_path, self.ops))
        self.module = self.scope
        self.steps = False
        if any(self.scope):
            self._number_steps()
        self._lay_out()
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

    def _lay_out(self) -> None:
        """Raw positions, output uses and leaves, in one loop over the recorded edges."""
        acc = AccumulateGrad
        index = self.index = dict(zip(self.ops, range(len(self.ops))))
        uses = self.uses = [0] * len(self.ops)
        user = self.user = [-1] * len(self.ops)
        pos: list[int] = []
        op_inputs: list[int] = []
        # a leaf is known by its AccumulateGrad node (core makes one per leaf, once)
        first_pos: dict[Any, int] = {}  # leaf's node -> raw position, in first-seen order
        first_op: list[int] = []  # the op that first used each leaf
        again: list[tuple[Any, int]] = []  # (leaf's node, op) for every later use
        seen, add_first, add_again = first_pos.setdefault, first_op.append, again.append
        add_pos, add_inputs = pos.append, op_inputs.append
        r = -1  # raw position of the last node so far
        # the hot loop: one step per input, no per-node entries
        for k, edges in enumerate(self.edges):
            n_in = 0
            for nxt, _ in edges:
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
        self.pos, self.op_inputs, self.first_op = pos, op_inputs, first_op
        self.accs: list = list(first_pos)
        self.leaf_pos = list(first_pos.values())
        self.leaf_of = dict(zip(self.accs, range(len(self.accs))))
        self.more: dict[int, list[int]] = {}  # leaf -> the ops using it after its first
        for a, k in again:
            self.more.setdefault(self.leaf_of[a], []).append(k)
        self.n_groups = r + 1  # raw positions taken by the op groups

    def _find_roots(self, roots: list) -> None:
        """Roots: an op's output, a leaf, or a tensor in no op's inputs (placed last)."""
        self.root_out: dict[int, Any] = {}  # op k -> the root tensor it made
        self.root_leaf: dict[int, Any] = {}  # leaf number -> root tensor
        self.extra: list = []  # root tensors that are in no op's inputs
        extra_of: dict[int, int] = {}  # id(tensor) -> leaf number, for those
        for t, _ in roots:
            if t.grad_fn is not None:
                self.root_out[self.index[t.grad_fn]] = t
                continue
            node = t.grad_node  # a leaf: its AccumulateGrad node, if a graph used it
            j = self.leaf_of.get(node) if node is not None else None
            if j is None:
                j = extra_of.get(id(t))
            if j is None:
                j = extra_of[id(t)] = len(self.accs)
                self.accs.append(None)
                self.leaf_pos.append(self.n_groups + len(self.extra))
                self.extra.append(t)
            self.root_leaf[j] = t
        self.total = self.n_groups + len(self.extra)

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


def _collect_ops(roots: list) -> tuple[list, list, list[int]]:
    """The ops behind `roots` in creation order, their `next_functions` and creation numbers.

    AccumulateGrad nodes (leaves) are not entered; each op's edges are read once, here.
    """
    acc = AccumulateGrad
    # a tensor asked for twice starts the walk once (dict: in order, no repeats)
    starts = list(dict.fromkeys(t.grad_fn for t, _ in roots if t.grad_fn is not None))
    seen = set(starts)  # nodes hash by identity: no id() call per node
    add = seen.add
    nodes: list = []
    edges: list = []
    add_node, add_edges = nodes.append, edges.append
    stack = list(starts)
    push, pop = stack.append, stack.pop
    while stack:
        node = pop()
        node_edges = node.next_functions
        add_node(node)
        add_edges(node_edges)
        for nxt, _ in node_edges:
            if nxt is not None and nxt not in seen and type(nxt) is not acc:
                add(nxt)
                push(nxt)
    numbers = list(map(_creation_number, nodes))
    if len(nodes) < 2:
        return nodes, edges, numbers
    # numpy sorts 100,000 numbers in a blink; itemgetter then picks in that order, in C
    order = operator.itemgetter(*np.argsort(np.array(numbers), kind="stable").tolist())
    return list(order(nodes)), list(order(edges)), list(order(numbers))


_creation_number = operator.attrgetter("creation_number")
_module_path = operator.attrgetter("module_path")
