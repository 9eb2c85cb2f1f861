"""Read the graph drawings a learner sees under a cell, straight from the page.

JupyterLab shows an `image/svg+xml` output as an `<img>` with a data: URL (so its nodes are
not in the DOM), the trusted `text/html` of `tg.draw` and the live graph puts the SVG in a
srcdoc `<iframe>`, and the anywidget GraphView puts the `<svg>` inline. `drawings()` handles
all three: it decodes image sources with the browser's own DOMParser and reports, per drawing,
whether the browser actually rendered it (an image with a natural width, an inline SVG with
a size), and each graphviz node's id (its `<title>`), CSS classes and text lines.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

_READ_SVGS = r"""
(root) => {
  const out = [];
  const read = (svg, how, rendered) => {
    const nodes = [...svg.querySelectorAll('g.node')].map((g) => ({
      id: ((g.querySelector(':scope > title') || {}).textContent || '').trim(),
      cls: (g.getAttribute('class') || '').split(/\s+/).filter(Boolean),
      texts: [...g.querySelectorAll('text')].map((t) => t.textContent.trim()).filter(Boolean),
    }));
    const edges = svg.querySelectorAll('g.edge').length;
    out.push({how, rendered, nodes, edges});
  };
  for (const svg of root.querySelectorAll('svg')) {
    // icons in toolbars are SVGs too; a graphviz drawing has a top-level g.graph
    if (!svg.querySelector('g.graph')) continue;
    const r = svg.getBoundingClientRect();
    read(svg, 'inline', r.width > 0 && r.height > 0);
  }
  for (const frame of root.querySelectorAll('iframe.tg-frame')) {
    // tg.draw and the live graph in a trusted notebook: the SVG inline in a srcdoc iframe
    const doc = frame.contentDocument;
    const svg = doc && doc.querySelector('svg');
    if (!svg || !svg.querySelector('g.graph')) continue;
    const r = frame.getBoundingClientRect();
    read(svg, 'frame', r.width > 0 && r.height > 0);
  }
  for (const img of root.querySelectorAll('img')) {
    const src = img.getAttribute('src') || '';
    if (!src.startsWith('data:image/svg+xml')) continue;
    const comma = src.indexOf(',');
    const head = src.slice(0, comma), body = src.slice(comma + 1);
    const text = head.endsWith(';base64') ? atob(body) : decodeURIComponent(body);
    const svg = new DOMParser().parseFromString(text, 'image/svg+xml').documentElement;
    read(svg, 'img', img.complete && img.naturalWidth > 0);
  }
  return out;
}
"""


@dataclass
class Node:
    id: str
    classes: list[str]
    texts: list[str]

    @property
    def label(self) -> str:
        return " | ".join(self.texts)


@dataclass
class Drawing:
    how: str  # "img" (SVG output), "frame" (trusted HTML output) or "inline" (widget)
    rendered: bool
    nodes: list[Node]
    edges: int

    def labels(self) -> list[str]:
        return [t for n in self.nodes for t in n.texts]

    def has_label(self, text: str) -> bool:
        """True when some node shows `text` as one of its text lines (exact match)."""
        return text in self.labels()

    def with_class(self, name: str) -> list[Node]:
        """The nodes carrying CSS class `name` (exact class, not a substring)."""
        return [n for n in self.nodes if name in n.classes]

    def graph_nodes(self) -> list[Node]:
        """tinygrad_edu's graph nodes (class tg-node): the legend's boxes left out."""
        return self.with_class("tg-node")

    def heads(self, css_class: str | None = None) -> list[str]:
        """First text line (the name: "a", "*", "MulBackward") of each graph node, in drawing
        order; only nodes with `css_class` when given."""
        nodes = self.graph_nodes()
        if css_class is not None:
            nodes = [n for n in nodes if css_class in n.classes]
        return [n.texts[0] if n.texts else "" for n in nodes]

    def describe(self) -> str:
        rows = [
            f"{self.how} drawing, rendered={self.rendered}, {len(self.nodes)} nodes, "
            f"{self.edges} edges"
        ]
        rows += [f"  {n.id} [{' '.join(n.classes)}]: {n.label}" for n in self.nodes]
        return "\n".join(rows)


def drawings(locator) -> list[Drawing]:
    """Every graphviz drawing inside `locator` (a cell, an output area, a widget)."""
    raw = locator.evaluate(_READ_SVGS)
    return [
        Drawing(
            d["how"],
            d["rendered"],
            [Node(n["id"], n["cls"], n["texts"]) for n in d["nodes"]],
            d["edges"],
        )
        for d in raw
    ]


def wait_for_drawing(
    locator, labels: list[str] = (), timeout_s: float = 20.0, what: str = "graph"
) -> Drawing:
    """The first rendered drawing in `locator` that shows every label in `labels`.

    Rendering is asynchronous (widget views, image decoding), so this polls; on timeout it
    fails with what *was* drawn, which is what one needs to read a failure.
    """
    deadline = time.monotonic() + timeout_s
    found: list[Drawing] = []
    while True:
        found = drawings(locator)
        for d in found:
            if d.rendered and d.nodes and all(d.has_label(x) for x in labels):
                return d
        if time.monotonic() > deadline:
            break
        time.sleep(0.25)
    seen = "\n".join(d.describe() for d in found) or "no graph drawing at all"
    raise AssertionError(
        f"{what}: no rendered drawing with labels {list(labels)} after {timeout_s:.0f} s; "
        f"found:\n{seen}"
    )
