"""Fold the middle of long straight chains, so a drawing fits one screen.

A chain is a run of boxes each with exactly one arrow in and one arrow out: the ops
of `cross_entropy` (log_softmax -> [ ] -> neg -> sum), or an activation after a
matmul. Drawn top to bottom, every op and every unnamed intermediate tensor is a row,
so a 20-op chain runs off the screen. `fold_chains` replaces such a run by one
summary box ("4 ops: log_softmax -> [ ] -> neg -> sum") and keeps what a learner
looks for: named tensors (`h`, `loss`), leaves, outputs, summaries, marked boxes and
the boxes of a step opened with `expand=` stay. It works on a finished GraphModel,
after build_graph, so every view and every summary (collapsed modules, folded steps)
can be folded the same way.
Graph layer: the standard library and model.py only.
"""

from __future__ import annotations

from collections import Counter

from .model import GraphEdge, GraphModel, GraphNode

MIN_FOLD = 3  # fewer boxes than this are not worth a summary box


def _foldable(n: GraphNode, roots: set[str], opened: tuple[str, ...]) -> bool:
    """Boxes a chain may hide: ops and unnamed intermediate tensors, nothing marked.

    Nor a box of a step the learner opened (`expand="rnncell.t=5"`): that step is
    drawn whole, as asked.
    """
    if n.id in roots or n.marks or n.earlier:
        return False
    if opened and any(n.module == o or n.module.startswith(o + ".") for o in opened):
        return False
    if n.kind == "op":
        return True
    return n.kind == "tensor" and n.role == "intermediate" and not n.name


def chain_runs(graph: GraphModel) -> list[list[str]]:
    """The maximal runs of foldable boxes that form a straight line, in graph order."""
    ins: Counter = Counter(e.dst for e in graph.edges)
    outs: Counter = Counter(e.src for e in graph.edges)
    nxt = {e.src: e.dst for e in graph.edges}
    roots = set(graph.attrs.get("roots", ()))
    opened = tuple(graph.attrs.get("opened", ()))
    inner = {
        n.id
        for n in graph.nodes
        if ins[n.id] == 1 and outs[n.id] == 1 and _foldable(n, roots, opened)
    }
    prev = {e.dst: e.src for e in graph.edges if e.dst in inner}
    runs = []
    for n in graph.nodes:
        if n.id not in inner or prev.get(n.id) in inner:
            continue  # not in a chain, or not its first box
        run = [n.id]
        while nxt.get(run[-1]) in inner:
            run.append(nxt[run[-1]])
        runs.append(run)
    return runs


def _describe(graph: GraphModel, run: list[str]) -> str:
    """The chain's ops in order; a long one names its first two and its last."""
    ops = [graph.node(i).name or graph.node(i).op for i in run if graph.node(i).kind == "op"]
    if len(ops) > 4:
        ops = [*ops[:2], "...", ops[-1]]
    return " -> ".join(ops)


def fold_chains(graph: GraphModel, min_len: int = MIN_FOLD) -> GraphModel:
    r"""A copy of `graph` with every straight run of `min_len` or more boxes folded.

    Rules: each run becomes one summary node (`role="chain"`, `count` boxes, `detail`
    the ops in order) at the place of its first box, with the run's one arrow in and
    one arrow out. Ids of the other nodes stay. A graph without such runs comes back
    as it is (the same object).

    Example:
        >>> import tinygrad_edu as tg
        >>> from tinygrad_edu.graph import build_graph
        >>> x = tg.tensor([1.0, 2.0], requires_grad=True, name="x")
        >>> loss = x.exp().tanh().relu().sum()
        >>> g = fold_chains(build_graph({"loss": loss}))
        >>> [(n.name, n.detail) for n in g.nodes]
        [('x', ''), ('folded chain', 'Exp -> Tanh -> ReLU -> Sum'), ('loss', '')]
    """
    runs = [r for r in chain_runs(graph) if len(r) >= min_len]
    if not runs:
        return graph
    folded_into: dict[str, str] = {}
    firsts: dict[str, GraphNode] = {}
    for k, run in enumerate(runs, 1):
        members = [graph.node(i) for i in run]
        summary = GraphNode(
            id=f"c{k}",
            kind="summary",
            name="folded chain",
            role="chain",
            count=len(run),
            detail=_describe(graph, run),
            module=members[0].module if all(m.module == members[0].module for m in members) else "",
            new=any(m.new for m in members),
        )
        firsts[run[0]] = summary
        for i in run:
            folded_into[i] = summary.id
    nodes = []
    for n in graph.nodes:
        if n.id in firsts:
            nodes.append(firsts[n.id])
        elif n.id not in folded_into:
            nodes.append(n)
    edges = []
    for e in graph.edges:
        src, dst = folded_into.get(e.src, e.src), folded_into.get(e.dst, e.dst)
        if src != dst:
            edges.append(GraphEdge(src, dst, e.slot, e.label))
    out = GraphModel(nodes, edges, dict(graph.attrs))
    out._ids_by_object = {k: folded_into.get(v, v) for k, v in graph._ids_by_object.items()}
    return out


def module_levels(graph: GraphModel) -> list[list[str]]:
    """The graph's module paths grouped by depth, the deepest first (what to fold first).

    Example:
        >>> from tinygrad_edu.graph.model import GraphModel, GraphNode
        >>> g = GraphModel([GraphNode("t1", "tensor", module="net.0.q"),
        ...                 GraphNode("t2", "tensor", module="net.1")])
        >>> module_levels(g)
        [['net.0.q'], ['net.0', 'net.1'], ['net']]
    """
    by_depth: dict[int, list[str]] = {}
    for path in graph.modules():
        by_depth.setdefault(path.count("."), []).append(path)
    return [by_depth[d] for d in sorted(by_depth, reverse=True)]
