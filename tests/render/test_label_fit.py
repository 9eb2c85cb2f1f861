"""Every label inside its box, whichever layout program drew it (issue 26).

The check measures the SVG as a browser draws it: each text's extent is its width in
Helvetica/Arial metrics (the font the DOT asks for, `text_width_pt`) at its font
size, around its anchor; the box is the node's polygon or path (its x extent) or
ellipse (its width at the text's height). Debian's dot and graphviz-pure both run
when installed; a missing one is skipped with the reason.
"""

from __future__ import annotations

import html
import math
import re
import shutil
import subprocess

import numpy as np
import pytest
import render_cases

import tinygrad_edu as tg
from tinygrad_edu.graph import build_graph
from tinygrad_edu.render.dot import text_width_pt, to_dot

# Debian's dot by its path (not the first `dot` on PATH); `which` checks it is a runnable
# file (CI hides it behind /dev/null for the README's step, as on a machine without it)
PROGRAMS = {
    "dot": shutil.which("dot", path="/usr/bin"),
    "graphviz-pure": shutil.which("graphviz-pure"),
}
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_NODE = re.compile(r'<g id="([^"]*)" class="node[^"]*">(.*?)</g>', re.S)
_TEXT = re.compile(r"<text([^>]*)>([^<]*)</text>")


def _attr(attrs: str, name: str) -> str | None:
    m = re.search(rf' {name}="([^"]*)"', attrs)
    return m.group(1) if m else None


def labels_past_their_box(svg: str) -> list[tuple[str, str, float]]:
    """(node id, text, pt past the box) for every label that runs out of its node."""
    out = []
    for node_id, body in _NODE.findall(svg):
        ellipse = re.search(
            r'<ellipse[^>]*cx="([-\d.]+)" cy="([-\d.]+)" rx="([\d.]+)" ry="([\d.]+)"', body
        )
        xs: list[float] = []
        for shape in re.finditer(r'<(?:polygon|path)[^>]*? (?:points|d)="([^"]*)"', body):
            xs += [float(v) for v in _NUMBER.findall(shape.group(1))][0::2]
        for attrs, raw in _TEXT.findall(body):
            text = html.unescape(raw).replace("\xa0", " ")
            x, y = float(_attr(attrs, "x")), float(_attr(attrs, "y"))
            size = float(_attr(attrs, "font-size") or 14.0)
            width = text_width_pt(text, size)
            anchor = _attr(attrs, "text-anchor") or "middle"
            left = {"start": x, "middle": x - width / 2, "end": x - width}[anchor]
            if ellipse:
                cx, cy, rx, ry = map(float, ellipse.groups())
                dy = min(1.0, abs(y - 0.3 * size - cy) / ry)  # the text's middle
                half = rx * math.sqrt(1 - dy * dy)
                lo, hi = cx - half, cx + half
            else:
                lo, hi = min(xs), max(xs)
            past = max(lo - left, left + width - hi)
            if past > 0.05:
                out.append((node_id, text, round(past, 2)))
    return out


def _long_labels():
    """Labels of every kind, long ones: value summaries, names, summaries, grad_fns."""
    np.random.seed(0)
    x = tg.tensor(np.random.randn(4, 3), requires_grad=True, name="input_batch")
    w = tg.tensor(np.random.randn(3, 2), requires_grad=True, name="weight_matrix")
    loss = (x @ w).tanh().log_softmax(axis=1).sum()
    loss.name = "loss"
    loss.backward()
    net = tg.nn.Sequential(tg.nn.Linear(3, 4), tg.nn.Tanh(), tg.nn.Linear(4, 1))
    out = net(x).sum()
    return [
        build_graph(loss),
        build_graph(loss, view="backward"),
        build_graph(out, collapse=True),
    ]


def _graphs():
    cases = [render_cases.build(name) for name in render_cases.GOLDEN_CASES]
    return cases + _long_labels()


@pytest.mark.parametrize("program", sorted(PROGRAMS))
@pytest.mark.parametrize("rankdir", ["TB", "LR"])
def test_no_label_runs_past_its_box(program, rankdir):
    path = PROGRAMS[program]
    if not path:
        pytest.skip(f"{program} is not installed")
    past = []
    for graph in _graphs():
        source = to_dot(graph, rankdir=rankdir)
        svg = subprocess.run(
            [path, "-Tsvg"], input=source.encode(), capture_output=True, check=True, timeout=60
        ).stdout.decode()
        past += labels_past_their_box(svg)
    assert past == [], f"{len(past)} labels past their box with {program}: {past[:8]}"


def test_the_check_sees_a_label_past_its_box():
    # a box Graphviz was told is narrower than its text (fixedsize): the check must see it
    if not PROGRAMS["dot"]:
        pytest.skip("Debian's dot is not installed")
    svg = subprocess.run(
        [PROGRAMS["dot"], "-Tsvg"],
        input=b'digraph { a [shape=box, fixedsize=true, width=0.5, label="a long label"] }',
        capture_output=True,
        check=True,
    ).stdout.decode()
    ((_, text, past),) = labels_past_their_box(svg)
    assert text == "a long label" and past > 10
