"""`explain()` for `tg.static.compile`: graphs, graph breaks, guards and recompiles, in words.

Modelled on `torch._dynamo.explain`: how many graphs and breaks, why each break
happened and on which line of the learner's code, the ops of each graph, the guards a
call must pass to replay, and every (re)compile with its reason. It reports on the
cache entry the last call used; `compiles` and `notes` cover every call.

Static layer: imports the core, numpy and the standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import guards
from .capture import PathTree, same_value


@dataclass
class BreakInfo:
    """One graph break: why, where (the learner's line), and the outcomes seen there."""

    reason: str
    site: str | None
    after_graph: int | None  # the graph it ends (None: no ops before it)
    outcomes: list = field(default_factory=list)

    def __str__(self) -> str:
        seen = ", ".join(repr(o) for o in self.outcomes)
        return f"{self.reason}\n      at: {self.site}\n      outcomes seen: {seen}"


@dataclass
class Explanation:
    """What `CompiledFn.explain()` returns; `print` it for the report."""

    graphs: list  # StaticGraph per graph (`tg.draw(e.graphs[0])`)
    breaks: list  # BreakInfo per break
    guards: list  # one line per guard
    compiles: list  # guards.LogEntry per capture: call number and reason
    notes: list  # re-specialisations and eager fallbacks, with the call number
    text: str = ""

    @property
    def graph_count(self) -> int:
        return len(self.graphs)

    @property
    def break_count(self) -> int:
        return len(self.breaks)

    @property
    def ops_per_graph(self) -> list:
        return [g.ops for g in self.graphs]

    @property
    def recompiles(self) -> list:
        """The reasons of every compile after the first."""
        return [c.reason for c in self.compiles[1:]]

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.text

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(self.text)


def explain(f: Any) -> Explanation:
    tree: PathTree | None = f._tree()
    regions = tree.regions() if tree is not None else []
    graph_of: dict[int, int] = {}
    graphs: list[Any] = []
    for r in regions:
        if r.eqns:
            graph_of[id(r)] = len(graphs)
            graphs.append(r.graph)
    breaks = [
        _break_info(tree, r, graph_of.get(id(r)))  # type: ignore[arg-type]  # regions: a tree
        for r in regions
        if r.brk is not None
    ]
    e = Explanation(graphs, breaks, _guards(f, tree), list(f.compiles), list(f.notes))
    e.text = _text(f, e, regions, graph_of)
    return e


def _break_info(tree: PathTree, region: Any, graph: int | None) -> BreakInfo:
    outcomes: list = []
    for p in tree.paths:
        for k, r in enumerate(p.regions[:-1]):
            if r is region and not any(same_value(p.outcomes[k], o) for o in outcomes):
                outcomes.append(p.outcomes[k])
    site = str(region.brk.site) if region.brk.site is not None else None
    return BreakInfo(region.brk.reason(), site, graph, outcomes)


def _guards(f: Any, tree: PathTree | None) -> list:
    if f._last is None:
        return []
    entry, _, parts = f._last
    names = guards.arg_names(f.fn, len(parts))
    lines = []
    symbols = iter(range(len(f._dim_names(names))))  # s0, s1, ... in the order of the dims
    for name, p in zip(names, entry.key):
        if p[0] == "array":
            dims = [f"s{next(symbols)}" if n is None else str(n) for n in p[1]]
            shape = "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"
            lines.append(f"{name}: a tensor of shape {shape}, {p[2]}, requires_grad={p[3]}")
        else:
            lines.append(f"{name} == {p[2]!r} ({type(p[2]).__name__})")
    for label, d in entry.state.items():
        lines.append(_state_text(label, d))
    if tree is not None:
        for vid, (shape, dtype, _) in tree.lifted_types.items():
            if tree.lifted_names.get(vid) in entry.state:
                continue  # a module's parameter: its guard is listed above
            lines.append(
                f"captured tensor {tree.lifted_names.get(vid)!r}: shape {shape!r}, "
                f"{dtype.name} (its values are read at every call)"
            )
    return lines


def _state_text(label: str, d: tuple) -> str:
    if d[0] == "value":
        return f"{label} == {d[2]} ({d[1]})"
    if d[0] == "module":
        return f"{label} is a {d[1]} with sub-modules {list(d[2])}"
    if d[0] == "tensor":
        return (
            f"{label} is the same tensor object, of shape {d[2]!r} {d[3]} (its values are "
            "read at every call, not guarded)"
        )
    if d[0] == "array":
        return f"{label} is an array with the same shape, dtype and values"
    return f"{label} is unchanged"


def _text(f: Any, e: Explanation, regions: list, graph_of: dict) -> str:
    """`explain()`'s text: a header line, then one section per part of the story."""
    lines = [
        f"tg.static.compile({f.name}): {_n(e.graph_count, 'graph')}, "
        f"{_n(e.break_count, 'graph break')}, {_n(len(e.compiles), 'compile')}, "
        f"{_n(f.calls, 'call')} ({f.replays} replayed from the graphs"
        + (f", {f.eager_calls} run eagerly)" if f.eager_calls else ")")
    ]
    lines += _graphs_section(f, e, regions, graph_of)
    lines += _breaks_section(f, e, regions, graph_of)
    lines += _guards_section(e)
    lines.append("")
    lines.append("Compiles:")
    lines.extend(f"  {c}" for c in e.compiles or ["(none)"])
    if e.notes:
        lines.append("")
        lines.append("Notes:")
        shown = e.notes if len(e.notes) <= 8 else e.notes[:4] + ["..."] + e.notes[-3:]
        lines.extend(f"  {n}" for n in shown)
    dims = f._dim_names(guards.arg_names(f.fn, len(f._last[2]))) if f._last is not None else []
    if dims:
        lines.append("")
        lines.append(
            f"Dynamic sizes: {', '.join(dims)}. The graphs have fixed shapes: a new size "
            "re-specialises the captured program (no Python runs) once two captures "
            "at different sizes show which numbers are the size."
        )
    lines.append("")
    lines.append(
        "Gradients: a replayed graph runs as one CompiledFunction autograd node; its "
        "backward is the graph's gradient program, built from each op's own backward."
    )
    return "\n".join(lines)


def _graphs_section(f: Any, e: Explanation, regions: list, graph_of: dict) -> list[str]:
    lines = ["", "Graphs (draw one with tg.draw(f.graphs[i]); print it for its program):"]
    for r in regions:
        i = graph_of.get(id(r))
        if i is None:
            continue
        ops = ", ".join(r.graph.ops)
        lines.append(f"  graph {i}: {_n(len(r.eqns), 'op')}: {ops}")
    if not e.graphs:
        lines.append("  (none: " + ("not called yet)" if f._last is None else "no ops to capture)"))
    return lines


def _breaks_section(f: Any, e: Explanation, regions: list, graph_of: dict) -> list[str]:
    """Each break, then each path through them; nothing when the function has no break."""
    if not e.breaks:
        return []
    lines = [
        "",
        "Graph breaks (Python read a tensor's value; a replay reads it from the graph",
        "before and runs the graph that followed it; the Python between is not run):",
    ]
    for k, b in enumerate(e.breaks, 1):
        after = f"after graph {b.after_graph}" if b.after_graph is not None else "before any op"
        lines.append(f"  break {k} ({after}): {b}")
    lines.append("")
    lines.append("Paths (each capture: the graphs it runs and the value read at each break):")
    break_of = {id(r): k for k, r in enumerate((r for r in regions if r.brk), 1)}
    lines.extend(f"  {_path_text(p, graph_of, break_of)}" for p in f._tree().paths)
    return lines


def _guards_section(e: Explanation) -> list[str]:
    lines = ["", "Guards (checked before a call replays; a failed one recompiles):"]
    lines.extend(f"  {g}" for g in e.guards or ["(none: not called yet)"])
    if e.breaks:
        lines.append(
            "  and at each break: the value read must be one a capture saw, or the "
            "call captures a new path"
        )
    return lines


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _path_text(path: Any, graph_of: dict, break_of: dict) -> str:
    """`graph 0 -> break 1 gave True -> graph 1 -> return`: one path through the tree."""
    parts = []
    for k, r in enumerate(path.regions):
        if id(r) in graph_of:
            parts.append(f"graph {graph_of[id(r)]}")
        if k < len(path.outcomes):
            parts.append(f"break {break_of[id(r)]} gave {_short(path.outcomes[k])}")
    return " -> ".join(parts + ["return"]) + (" [re-specialised]" if path.derived else "")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 24 else text[:21] + "..."
