"""Draw a static program: convert a `StaticGraph` into the plain `GraphModel` model.

Each program input, constant and equation result becomes a tensor node, each
equation an op node (a `vjp` line is drawn as `<Op>Backward`, like PyTorch's
grad_fn names, with a dashed "saved" edge from the forward op whose values it
reads). The branches of a `cond` and the condition and body of a `while_loop` are
drawn inside clusters (`cond@3.true`, `while_loop@5.body`) through the `module`
field, so `tg.draw(static_graph)` shows both branches side by side. Ids come from a
counter in program order: the same program always gives the same GraphModel.

Static layer, its drawing: imports the graph model (static sits above graph, as the
debug views do) and registers `static_graph_to_graph` with `build_graph`; no drawing
packages.
"""

from __future__ import annotations

from typing import Any

from ..graph import GraphEdge, GraphModel, GraphNode, register_converter, summarise_array
from . import ir
from .exported import ExportedProgram
from .ir import ZERO, Program
from .program import StaticGraph


class _Builder:
    def __init__(self) -> None:
        self.graph = GraphModel(attrs={"view": "static", "roots": [], "hidden": 0})
        self.n_tensor = 0
        self.n_op = 0

    def tensor(self, v: Any, role: str, module: str, value: str = "", name: str = "") -> str:
        self.n_tensor += 1
        nid = f"t{self.n_tensor}"
        self.graph.nodes.append(
            GraphNode(
                id=nid,
                kind="tensor",
                name=name or v.name or "",
                shape=tuple(v.shape),
                dtype=v.dtype.name,
                value=value,
                role=role,
                module=module,
            )
        )
        return nid

    def op(self, name: str, op: str, site: str | None, module: str) -> str:
        self.n_op += 1
        nid = f"op{self.n_op}"
        self.graph.nodes.append(
            GraphNode(id=nid, kind="op", name=name, op=op, site=site or "", module=module)
        )
        return nid

    def edge(self, src: str, dst: str, slot: int = 0, label: str = "") -> None:
        self.graph.edges.append(GraphEdge(src, dst, slot, label))

    def program(self, p: Program, module: str, inputs: list | None, top: bool) -> tuple:
        """Add `p`'s nodes; returns (var id -> node id, eqn out[0] -> op node id)."""
        ids: dict[int, str] = {}
        for k, vid in enumerate(p.inputs):
            ids[vid] = self.tensor(p.vars[vid], "leaf", module)
            if inputs is not None and k < len(inputs):  # the value passed in from outside
                self.edge(inputs[k], ids[vid], k)
        names = ir.names(p)  # constants by their name in the program text (`c6`)
        for vid, arr in p.consts.items():
            ids[vid] = self.tensor(
                p.vars[vid], "constant", module, summarise_array(arr), names[vid]
            )
        ops: dict[int, str] = {}
        outputs = set(p.outputs)
        for e in p.eqns:
            if e.op == "vjp":
                name, opname = f"{e.attrs['op']}Backward", e.attrs["op"]
            else:
                name, opname = e.op, e.op
            oid = self.op(name, opname, e.site, module)
            if e.outs:
                ops[e.outs[0]] = oid
            if e.op == "vjp" and e.attrs["of"] in ops:
                self.edge(ops[e.attrs["of"]], oid, 0, "saved")
            for slot, i in enumerate(e.ins):
                if i != ZERO and i in ids:
                    self.edge(ids[i], oid, slot)
            for key, sub in e.subs.items():
                sub_module = f"{module + '.' if module else ''}{e.op}@{oid[2:]}.{key}"
                passed: list[str] | None = [ids[i] for i in e.ins if i in ids]
                if e.op == "cond":
                    passed = passed[1:]  # type: ignore[index]  # a list here  # the predicate chooses; it is not passed in
                if e.op == "vjp":
                    passed = None
                sub_ids, _ = self.program(sub, sub_module, passed, False)
                for o in sub.outputs:
                    self.edge(sub_ids[o], oid, 0, key)
            for o in e.outs:
                role = "output" if top and o in outputs else "intermediate"
                ids[o] = self.tensor(p.vars[o], role, module)
                self.edge(oid, ids[o])
        for vid in p.outputs:
            if top and vid in ids:
                self.graph.attrs["roots"].append(ids[vid])
        return ids, ops


def static_graph_to_graph(g: StaticGraph, **options: Any) -> GraphModel:
    r"""The `GraphModel` model of a StaticGraph's program (what `tg.draw(static_graph)` draws).

    Rules: inputs are leaves, captured arrays constants, returned values outputs;
    sub-programs of `cond` / `while_loop` (and their backward programs) sit in
    clusters named `<op>@<n>.<part>`. Drawing options other than these are ignored.

    Example:
        >>> import tinygrad_edu as tg
        >>> from tinygrad_edu.graph import build_graph
        >>> g = tg.static.trace(lambda x: (x * 2).relu(), tg.tensor([1.0]))
        >>> build_graph(g).summary()
        'static graph, 6 nodes (4 tensors, 2 ops)'
    """
    b = _Builder()
    b.program(g.program, "", None, True)
    b.graph.attrs["total"] = len(b.graph.nodes)
    return b.graph


register_converter(StaticGraph, static_graph_to_graph)
# an exported program is drawn with its dynamic sizes as symbols: (s0, 2)
register_converter(ExportedProgram, lambda ep, **o: static_graph_to_graph(ep.symbolic_graph(), **o))
