r"""GraphModel -> DOT text, pure and byte-identical for the same GraphModel on any machine.

The picture follows micrograd's `draw_dot`: a record `name | data | grad` per scalar,
a small ellipse per op (`+`, `*`, `tanh`), arrows in data-flow order. Tensors show
their shape and a value summary instead of one number. The backward view keeps the
same layout but draws `grad_fn` nodes, with arrows pointing the way gradients flow.

Every SVG node gets `id="node-<graph id>"` and `class="tg-node tg-<kind> [tg-new]
[tg-earlier] [tg-<mark>]"`, so a widget can highlight nodes by CSS without a new layout,
and a tooltip with its details (`node_details`), shown on hover where the SVG is inline. Labels are
escaped, so a tensor named `<script>` or `"}{|` draws as text. No graphviz import:
this module only writes text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..core.errors import message
from ..graph.model import MARKS, GraphEdge, GraphModel, GraphNode
from ..graph.values import shape_text

FAST_LAYOUT_NODES = 120  # above this many nodes, straight edges and short optimisation

OP_SYMBOLS = {
    "Add": "+",
    "Sub": "-",
    "Mul": "*",
    "Div": "/",
    "Reciprocal": "1/x",
    "Neg": "neg",
    "Pow": "**",
    "MatMul": "@",
    "ReLU": "relu",
    "LogSoftmax": "log_softmax",
    "BroadcastTo": "broadcast_to",
    "Index": "[ ]",
    "IndexAdd": "index_add",
    "IndexPut": "[ ] =",
    "CopySlices": "copy into view",
}

FONT = "Helvetica,Arial,sans-serif"
FONT_SIZE = 11  # points, every node label (the legend's are 10)
INK = "#333333"
NODE_MARGIN_PT = 0.08 * 72  # the node margin below, on each side of a label
DEFAULT_WIDTH_IN = 0.75  # Graphviz's narrowest box: narrower labels never need a width
# Advance widths of ASCII 32..126 in Helvetica/Arial (Liberation Sans has the same
# metrics), per 2048 units of the em. The font stack asks for these fonts, so a browser
# draws them this wide; graphviz-pure estimates narrower, and its boxes were too small.
_ADVANCE = (
    569, 569, 727, 1139, 1139, 1821, 1366, 391, 682, 682, 797, 1196, 569, 682, 569, 569,
    1139, 1139, 1139, 1139, 1139, 1139, 1139, 1139, 1139, 1139, 569, 569, 1196, 1196, 1196,
    1139, 2079, 1366, 1366, 1479, 1479, 1366, 1251, 1593, 1479, 569, 1024, 1366, 1139, 1706,
    1479, 1593, 1366, 1593, 1479, 1366, 1251, 1479, 1366, 1933, 1366, 1366, 1251, 569, 569,
    569, 961, 1139, 682, 1139, 1139, 1024, 1139, 1139, 569, 1139, 1139, 455, 455, 1024, 455,
    1706, 1139, 1139, 1139, 1139, 682, 1024, 569, 1139, 1024, 1479, 1024, 1024, 1024, 684,
    532, 684, 1196,
)  # fmt: skip


def text_width_pt(text: str, size: float = FONT_SIZE) -> float:
    """How wide a browser draws `text` in Helvetica/Arial at `size` points.

    Characters outside ASCII count as a full em (the widest of them, e.g. "\u2026").

    Example:
        >>> round(text_width_pt("data 2.0000"), 2)
        58.11
    """
    units = sum(_ADVANCE[ord(c) - 32] if 32 <= ord(c) < 127 else 2048 for c in text)
    return units / 2048 * size


FILL = {  # tensor roles and summaries, light so the text stays readable in print
    "leaf": "#e3f2fd",
    "output": "#e8f5e9",
    "constant": "#f5f5f5",
    "intermediate": "#ffffff",
    "op": "#ffffff",
    "accumulate": "#e3f2fd",
    "summary": "#eeeeee",
}
NEW_FILL = "#fff59d"
NOT_KEPT = "value not kept"  # an intermediate freed once nothing held it
NOT_KEPT_WHY = (
    "not kept (no variable holds this intermediate, so it was freed; "
    "the live graph, %load_ext tinygrad_edu, keeps every value)"
)
MARK_STYLE = {  # mark -> (border colour, fill)
    "anomaly": ("#c62828", "#ffcdd2"),
    "breakpoint": ("#ef6c00", "#ffe0b2"),
    "current": ("#1565c0", "#bbdefb"),
    "gradcheck": ("#6a1b9a", "#e1bee7"),
}
LEGEND_TEXT = {
    "new": "new in this cell",
    "anomaly": "anomaly (NaN/inf)",
    "breakpoint": "breakpoint hit",
    "current": "current backward step",
    "gradcheck": "gradcheck mismatch",
    "earlier": "from an earlier cell",
}


def quote(text: str) -> str:
    r"""A DOT double-quoted string: backslashes and quotes escaped, newlines kept as `\n`.

    Example:
        >>> print(quote('say "hi" \\ bye'))
        "say \"hi\" \\ bye"
    """
    text = _printable(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{text}"'


# what record_field must escape: record syntax, a quote, a backslash, spaces a record squeezes
_RECORD_SPECIAL = re.compile(r'[{}|<>"\\]|  |^ ')


def record_field(text: str) -> str:
    r"""Escape text for one field of a record label, ready to sit inside DOT quotes.

    Rules: `{`, `}`, `|`, `<`, `>` are record syntax and `"` ends the DOT string, so
    each gets one backslash; a backslash becomes two; newlines become spaces.

    Example:
        >>> print(record_field('"}{|<script> a\\b'))
        \"\}\{\|\<script\> a\\b
    """
    text = _printable(text).replace("\n", " ")
    if _RECORD_SPECIAL.search(text) is None:
        return text  # the usual label: nothing to escape (the loop below is per character)
    out = []
    for ch in text:
        if ch in '{}|<>"\\':
            out.append("\\" + ch)
        elif ch == " " and (not out or out[-1] == " "):
            out.append("\\ ")  # records squeeze spaces; keep what the learner typed
        else:
            out.append(ch)
    return "".join(out)


def _printable(text: str) -> str:
    text = str(text)
    if text.replace("\n", "").isprintable():  # the usual text: one C-level check, no loop
        return text
    return "".join(ch if ch.isprintable() or ch == "\n" else "?" for ch in text)


def _num(n: int) -> str:
    return f"{n:,}"


def op_symbol(op: str) -> str:
    """The short op label micrograd would draw: `+`, `*`, `@`, `tanh`."""
    return OP_SYMBOLS.get(op, op.lower())


def to_dot(
    graph: GraphModel,
    rankdir: str = "TB",
    show_values: bool = True,
    show_grads: bool = True,
    highlight: Iterable[str] = (),
    compact: bool = False,
) -> str:
    r"""Write a GraphModel as DOT text.

    Rules: the output depends only on the GraphModel and the options (byte-identical across
    runs and machines). Scalars draw as records `name | data 2.0000 | grad 1.0000`,
    other tensors as `name (3, 2) | mean .. std ..`, ops as ellipses with their
    symbol; grads appear once a backward has filled them. New nodes are filled
    yellow; marked nodes get their colour (anomaly red, breakpoint orange, current
    step blue, gradcheck purple) and a legend explains the colours in use. Ids in
    `highlight` get a thick border and the `tg-highlight` class. Module nodes sit in
    clusters named after the module path.

    Args:
        graph: from `build_graph`.
        rankdir: "TB" (top to bottom, the default: notebooks are narrow and tall) or
            "LR" (left to right).
        show_values: draw value summaries.
        show_grads: draw gradient summaries.
        highlight: graph node ids to emphasise.
        compact: rows closer together and boxes only as tall as their text, for a
            drawing that must fit one screen with nothing left to fold (a step the
            learner opened stays whole); the text keeps its size.

    Returns:
        The DOT source.

    Example:
        >>> import tinygrad_edu as tg
        >>> from tinygrad_edu.graph import build_graph
        >>> a = tg.tensor(2.0, requires_grad=True, name="a")
        >>> print(to_dot(build_graph(a.tanh())).splitlines()[4])
          t1 [id="node-t1", class="tg-node tg-tensor tg-leaf", shape=record, label="{a|data 2.0000}", width=0.967, fillcolor="#e3f2fd", tooltip="a  (t1, leaf tensor)\nshape: () float64\nvalue: 2.0000\ngrad: none yet"]
    """
    _check_rankdir(rankdir)
    backward = graph.attrs.get("view") == "backward"
    order = _step_order(graph)
    lines = [
        "digraph G {",
        *_defaults(rankdir, len(graph.nodes), bool(order), backward, compact),
    ]
    highlighted = set(highlight)
    across = rankdir in ("LR", "RL")  # record fields side by side
    opened = tuple(graph.attrs.get("opened", ()))  # steps the learner opened with expand=
    node_lines = {
        n.id: _node_line(n, show_values, show_grads, n.id in highlighted, across, opened)
        for n in graph.nodes
    }
    _emit_nodes(graph, node_lines, lines)
    lines.extend(_edge_line(e, backward) for e in graph.edges)
    lines.extend(f"  {a} -> {b} [style=invis]" for a, b in order)
    _legend(graph, lines)
    lines.append("}")
    return "\n".join(lines) + "\n"


def _check_rankdir(rankdir: str) -> None:
    if rankdir not in ("LR", "TB", "RL", "BT"):
        raise ValueError(
            message(
                "to_dot",
                f"unknown rankdir {rankdir!r}",
                None,
                'use "LR" (left to right) or "TB" (top to bottom)',
            )
        )


def _defaults(
    rankdir: str, n_nodes: int, has_steps: bool, backward: bool, compact: bool = False
) -> list[str]:
    """The graph, node and edge attribute lines every drawing starts with."""
    graph_attrs = [
        f"rankdir={rankdir}",
        f'fontname="{FONT}"',
        "bgcolor=white",
        "nodesep=0.25",
        "ranksep=0.1" if compact else "ranksep=0.35",
    ]
    if n_nodes > FAST_LAYOUT_NODES:
        # newrank: the same layout for our big graphs in half the time (graphviz 2.43)
        graph_attrs += ["splines=line", "mclimit=0.1", "nslimit=1", "nslimit1=1", "newrank=true"]
    elif has_steps:  # ranks across clusters: without it the steps' boxes are ranked apart
        graph_attrs.append("newrank=true")
    edge_colour = "#b23b3b" if backward else "#555555"
    return [
        f"  graph [{', '.join(graph_attrs)}]",
        f'  node [fontname="{FONT}", fontsize=11, color="{INK}", fontcolor="#111111", '
        f'style=filled, penwidth=1, margin="0.08,0.04", height={0.2 if compact else 0.3}]',
        f'  edge [color="{edge_colour}", arrowsize=0.7, penwidth=1]',
    ]


def _edge_line(e: GraphEdge, backward: bool) -> str:
    label = f', label={quote(e.label)}, fontsize=10, fontcolor="#b23b3b"' if e.label else ""
    if backward:  # same ranks as the forward picture, arrows the way gradients go
        return f'  {e.dst} -> {e.src} [id="edge-{e.src}-{e.dst}-{e.slot}", dir=back{label}]'
    return f'  {e.src} -> {e.dst} [id="edge-{e.src}-{e.dst}-{e.slot}"{label}]'


def _step_order(graph: GraphModel) -> list[tuple[str, str]]:
    """Invisible edges that stack a loop's time steps top to bottom, one below the other.

    A step's first ops read only the shared weights, so without help Graphviz ranks
    every step's first row at the top and puts the steps side by side: as wide as the
    loop is long. An edge from the last node of step t to each node of step t + 1 that
    has no input inside its own step puts step t + 1 below step t. Folded steps
    (`rnncell.t=1 ... t=10`) count as one step.
    """
    steps: dict[str, dict[int, list[str]]] = {}  # module -> step number -> node ids
    for n in graph.nodes:
        top, dot_t, rest = n.module.partition(".t=")
        if n.kind == "summary" and ".t=" in n.name:
            top, dot_t, rest = n.name.partition(".t=")
        if dot_t:
            number = rest.split(".")[0].split(" ")[0]
            steps.setdefault(top, {}).setdefault(int(number), []).append(n.id)
    out: list[tuple[str, str]] = []
    for by_step in steps.values():
        ordered = [by_step[k] for k in sorted(by_step)]
        for before, after in zip(ordered, ordered[1:]):
            inside = set(after)
            fed = {e.dst for e in graph.edges if e.src in inside and e.dst in inside}
            out.extend((before[-1], node) for node in after if node not in fed)
    return out


def _emit_nodes(graph: GraphModel, node_lines: dict[str, str], lines: list[str]) -> None:
    """Nodes in graph order; a module's cluster is written where its first node appears."""
    children: dict[str, list[str]] = {}  # module path -> child module paths
    members: dict[str, list[str]] = {}
    for n in graph.nodes:
        members.setdefault(n.module, []).append(n.id)
    for m in graph.modules():
        parent = m.rpartition(".")[0]
        children.setdefault(parent, []).append(m)
    owner = {}  # module path -> the top-level cluster that contains it
    for m in graph.modules():
        owner[m] = m.split(".")[0]
    done: set[str] = set()

    def cluster(path: str, indent: str) -> None:
        done.add(path)
        lines.append(f'{indent}subgraph "cluster_{_safe(path)}" {{')
        lines.append(
            f'{indent}  graph [label={quote(path)}, id="cluster-{_safe(path)}", '
            f'class="tg-module", style="rounded,dashed", color="#9e9e9e", '
            'fontcolor="#616161", fontsize=10, labeljust=l]'
        )
        for node_id in members.get(path, ()):
            lines.append(f"{indent}  {node_lines[node_id]}")
        for child in children.get(path, ()):
            cluster(child, indent + "  ")
        lines.append(f"{indent}}}")

    for n in graph.nodes:
        if not n.module:
            lines.append(f"  {node_lines[n.id]}")
            continue
        top = owner.get(n.module, n.module)
        if top not in done:
            cluster(top, "  ")


def _safe(path: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "._" else "_" for ch in path)


def _classes(n: GraphNode, highlighted: bool) -> str:
    cls = ["tg-node", f"tg-{n.kind}"]
    if n.role:
        cls.append(f"tg-{n.role}")
    if n.new:
        cls.append("tg-new")
    if n.earlier:
        cls.append("tg-earlier")
    cls += [f"tg-{m}" for m in n.marks]
    if highlighted:
        cls.append("tg-highlight")
    return " ".join(cls)


def _node_line(
    n: GraphNode,
    show_values: bool,
    show_grads: bool,
    highlighted: bool,
    across: bool = False,
    opened: tuple[str, ...] = (),
) -> str:
    attrs = [f'id="node-{n.id}"', f'class="{_classes(n, highlighted)}"']
    attrs += _shape_and_label(n, show_values, show_grads)
    width = _min_width(n, show_values, show_grads, across)
    if width:
        attrs.append(f"width={width:.3f}")
    attrs += _colours(n, highlighted)
    if n.earlier and n.kind == "tensor":  # made by an earlier cell: a dashed input, not expanded
        attrs.append('style="filled,dashed"')
    tip = _tooltip(n, opened)
    if tip:
        attrs.append(f"tooltip={quote(tip)}")
    return f"{n.id} [{', '.join(attrs)}]"


def _shape_and_label(n: GraphNode, show_values: bool, show_grads: bool) -> list[str]:
    """micrograd's shapes: a record per tensor, a small ellipse per op, boxes for the rest."""
    if n.kind == "tensor":
        return ["shape=record", f"label={_tensor_label(n, show_values, show_grads)}"]
    if n.kind == "op" and not n.name.endswith("Backward"):
        return ["shape=ellipse, width=0.45, height=0.3", f"label={quote(op_symbol(n.op))}"]
    text = quote(_box_text(n, show_grads))
    if n.kind in ("op", "accumulate"):  # a grad_fn, as PyTorch names it, or AccumulateGrad
        return ['shape=box, style="rounded,filled"', f"label={text}"]
    return ['shape=box, style="rounded,dashed,filled"', f"label={text}"]


def _box_text(n: GraphNode, show_grads: bool) -> str:
    """The text of a box that is not a tensor or a forward op: a grad_fn, AccumulateGrad, a summary."""
    if n.kind == "op":
        return n.name
    if n.kind == "accumulate":
        text = "AccumulateGrad"
        leaf = " ".join(x for x in (n.detail, shape_text(n.shape) if n.shape else "") if x)
        if leaf:
            text += f"\n{leaf}"
        if show_grads and n.grad:
            text += f"\ngrad {n.grad}"
        return text
    return _summary_text(n)


def _colours(n: GraphNode, highlighted: bool) -> list[str]:
    """Fill by role, yellow when new; a mark's colours over both; a thick highlight border."""
    fill = FILL.get(n.role if n.kind == "tensor" else n.kind, "#ffffff")
    border = ""
    width = 1.0
    if n.new:
        fill = NEW_FILL
    if n.marks:  # the first mark in MARKS order wins: anomaly over breakpoint ...
        border, fill = MARK_STYLE[n.marks[0]]
        width = 2.0
    if highlighted:
        width = 3.0
        border = border or "#1565c0"
    attrs = [f'fillcolor="{fill}"']
    if border:
        attrs.append(f'color="{border}"')
    if width != 1.0:
        attrs.append(f"penwidth={width:g}")
    return attrs


def _min_width(n: GraphNode, show_values: bool, show_grads: bool, across: bool) -> float:
    """The box width (inches) its label needs in the browser's font; 0 when Graphviz's least will do.

    Graphviz sizes a box by its own estimate of the text; Debian's dot measures the font
    the browser uses, graphviz-pure guesses narrower, and the text ran past the box
    (issue 26). A width as wide as the label in Helvetica/Arial metrics fixes both: dot
    takes the larger of the two. Ops' ellipses are wider than their label already.
    """
    if n.kind == "op" and not n.name.endswith("Backward"):
        return 0.0
    if n.kind == "tensor":
        texts = _tensor_fields(n, show_values, show_grads)
    else:
        texts = _box_text(n, show_grads).split("\n")
    widths = [text_width_pt(t) + 2 * NODE_MARGIN_PT for t in texts]
    need = (sum(widths) if across and n.kind == "tensor" else max(widths)) / 72
    return need if need > DEFAULT_WIDTH_IN else 0.0


def _tensor_fields(n: GraphNode, show_values: bool, show_grads: bool) -> list[str]:
    """The record's fields as the learner reads them: name and shape, data, grad."""
    fields = []
    scalar = n.shape is not None and all(d == 1 for d in n.shape)
    head = n.name
    # a scalar is named by its name or shown by its value; a shape says little there
    if not scalar or not (n.name or (n.value and show_values)):
        shape = shape_text(n.shape)
        if n.role == "constant" and not n.value:
            shape = f"const {shape}".strip()
        head = f"{head} {shape}".strip()
        if n.dtype and n.dtype not in ("float64", ""):
            head += f" {n.dtype}"
    if head:
        fields.append(head)
    if show_values and n.value:
        fields.append(f"data {n.value}")
    elif show_values and n.role == "intermediate":  # freed: a bare "()" said nothing
        fields.append(NOT_KEPT)
    if show_grads and n.grad:
        fields.append(f"grad {n.grad}")
    return fields


def _tensor_label(n: GraphNode, show_values: bool, show_grads: bool) -> str:
    fields = [record_field(f) for f in _tensor_fields(n, show_values, show_grads)] or [" "]
    body = "|".join(fields)  # fields are escaped for the record and the DOT string already
    # braces flip a record against the rank direction: fields stack top to bottom in a
    # TB drawing (narrow nodes), and sit side by side in LR, as micrograd draws them
    return '"{' + body + '}"'


def _summary_text(n: GraphNode) -> str:
    if n.role == "chain":  # a straight run folded to fit the screen (graph/chains.py)
        ops = " -> ".join(
            op if op == "..." or op.endswith("Backward") else op_symbol(op)
            for op in n.detail.split(" -> ")
        )
        return f"{ops}\n({_num(n.count)} boxes folded)"
    if n.role == "more":
        return f"... {_num(n.count)} more node{'s' if n.count != 1 else ''}"
    if n.role == "repeat":
        if ".t=" in n.name:  # folded time steps: "rnncell.t=1 ... t=10"
            return f"{n.name}\n\u00d7 {n.blocks} steps, the same ops\n({n.detail})"
        if n.name != n.detail:  # folded modules: "layers.1 ... layers.8"
            return f"{n.name}\n{n.blocks} identical blocks\n({n.detail})"
        return f"{n.detail}\nrepeated {_num(n.blocks)} more times\n({_num(n.count)} nodes)"
    return f"{n.name}\n{_num(n.count)} nodes: {n.detail}" if n.detail else n.name


def _tooltip(n: GraphNode, opened: tuple[str, ...] = ()) -> str:
    text = node_details(n, opened)
    if n.earlier:
        text += "\nfrom an earlier cell"
    return text


def _legend(graph: GraphModel, lines: list[str]) -> None:
    used = []
    if any(n.new for n in graph.nodes):
        used.append("new")
    if any(n.earlier for n in graph.nodes):
        used.append("earlier")
    marked = {m for n in graph.nodes for m in n.marks}
    used += [m for m in MARKS if m in marked]
    if not used:
        return
    lines.append('  subgraph "cluster_legend" {')
    lines.append(
        '    graph [label="legend", id="cluster-legend", style="rounded", color="#bdbdbd", '
        'fontcolor="#616161", fontsize=10, labeljust=l]'
    )
    for kind in used:
        border, fill = MARK_STYLE.get(kind, (INK, "#ffffff" if kind == "earlier" else NEW_FILL))
        dashed = ', style="filled,dashed"' if kind == "earlier" else ""
        lines.append(
            f'    legend_{kind} [id="legend-{kind}", class="tg-legend", shape=box{dashed}, '
            f'fontsize=10, height=0.2, fillcolor="{fill}", color="{border}", '
            f"label={quote(LEGEND_TEXT[kind])}]"
        )
    lines.append("  }")


def node_details(n: GraphNode, opened: tuple[str, ...] = ()) -> str:
    r"""What a learner asks about one box: what it is, shape and dtype, value, grad, its line.

    The same text is the node's hover tooltip in inline SVG and the GraphView's
    details pane.

    Example:
        >>> import tinygrad_edu as tg
        >>> from tinygrad_edu.graph import build_graph
        >>> x = tg.tensor([1.0, 2.0], requires_grad=True, name="x")
        >>> print(node_details(build_graph({"y": x * x}).node("t1")))
        x  (t1, leaf tensor)
        shape: (2,) float64
        value: [1, 2]
        grad: none yet
    """
    if n.kind == "summary":
        lines = [f"{n.name}  ({n.id}, stands for {n.count} nodes)"]
        if n.detail:
            lines.append(f"folded: {n.detail}")
        lines.append(_how_to_open(n, opened))
    elif n.kind == "tensor":
        lines = [f"{n.display_name()}  ({n.id}, {n.role + ' ' if n.role else ''}tensor)"]
        lines.append(f"shape: {shape_text(n.shape)} {n.dtype}".rstrip())
        if n.value:
            lines.append(f"value: {n.value}")
        elif n.role == "intermediate":
            lines.append(f"value: {NOT_KEPT_WHY}")
        if n.requires_grad:
            lines.append(f"grad: {n.grad or 'none yet'}")
    else:
        what = "op" if n.kind == "op" else "gradient accumulator"
        lines = [f"{n.display_name()}  ({n.id}, {what})"]
        if n.op and n.op != n.name:
            lines.append(f"op: {n.op}")
        lines.append(f"output shape: {shape_text(n.shape)} {n.dtype}".rstrip())
        if n.kind == "accumulate":
            lines.append(f"value: {n.value}")
            lines.append(f"grad: {n.grad or 'none yet'}")
        if n.freed:
            lines.append("saved: freed by backward()")
        elif n.saved:
            lines.append("saved: " + "; ".join(n.saved))
        elif n.kind == "op":
            lines.append("saved: nothing")
    if n.site:
        lines.append(f"built at: {n.site}")
    if n.module:
        lines.append(f"module: {n.module}")
    if n.marks:
        lines.append(f"marks: {', '.join(n.marks)}" + (f" ({n.mark_text})" if n.mark_text else ""))
    return "\n".join(lines)


def _how_to_open(n: GraphNode, opened: tuple[str, ...] = ()) -> str:
    """The tooltip line that says how to draw what a summary box hides (`opened`: the steps
    already drawn in full, which the suggested `expand=` keeps open)."""
    if n.role == "more":
        return "draw every node: tg.draw(..., max_nodes=None)"
    if n.role == "module":
        return f"draw its nodes: leave {n.name!r} out of collapse="
    if n.role == "fitted":  # a module folded so the drawing fits one screen
        return "folded to fit the screen: tg.draw(..., expand=True) draws every box"
    if n.role == "chain":
        return "draw every box: tg.draw(..., expand=True)"
    if ".t=" in n.name:
        first = n.name.split(" ...")[0]
        if opened:  # expand= takes a list: naming only this step would close the others
            steps = ", ".join(f'"{step}"' for step in (*opened, first))
            return f"draw this step in full too: tg.draw(..., expand=[{steps}]), or expand=True"
        return f'draw one step in full: tg.draw(..., expand="{first}"), or expand=True'
    return "draw every block: tg.draw(..., expand=True)"
