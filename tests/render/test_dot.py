"""Golden DOT text: the same code draws byte-identical DOT, in this process and another."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import render_cases

import tinygrad_edu as tg
from tinygrad_edu.graph import build_graph
from tinygrad_edu.render.dot import quote, record_field, to_dot

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", render_cases.GOLDEN_CASES)
def test_golden_dot(name):
    golden = (render_cases.GOLDEN / f"{name}.dot").read_text(encoding="utf-8")
    assert render_cases.dot(name) == golden


def test_dot_identical_in_a_fresh_process_after_unrelated_work():
    # ids are renumbered per graph: what ran before (here: many tensors and ops) never shows
    junk = tg.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(50):
        junk = junk * 2
    here = "".join(f"== {n}\n{render_cases.dot(n)}" for n in render_cases.GOLDEN_CASES)
    env = dict(os.environ, PYTHONHASHSEED="123")
    out = subprocess.run(
        [sys.executable, str(ROOT / "tests/render/render_cases.py")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        check=True,
    )
    assert out.stdout == here


def test_micrograd_record_labels():
    dot = render_cases.dot("micrograd")
    assert 'label="{a|data 2.0000|grad 6.0000}"' in dot
    assert 'label="{e|data -6.0000}"' in dot  # non-leaf: no grad kept, like PyTorch
    assert re.search(r'op1 \[.*label="\*"', dot)
    assert "t1 -> op1" in dot and "op3 -> t7" in dot


def test_show_values_and_grads_off():
    g = render_cases.build("micrograd")
    dot = to_dot(g, show_values=False, show_grads=False)
    assert "data " not in dot and "grad " not in dot
    assert 'label="{a}"' in dot


def test_top_to_bottom_records_are_not_braced():
    dot = to_dot(render_cases.build("micrograd"), rankdir="TB")
    assert "rankdir=TB" in dot and 'label="{a|data 2.0000|grad 6.0000}"' in dot


def test_backward_view_keeps_forward_ranks_and_points_arrows_to_inputs():
    dot = render_cases.dot("backward")
    assert 'label="MatMulBackward"' in dot and "AccumulateGrad\\nx (3,)" in dot
    assert 'op1 -> op2 [id="edge-op2-op1-0", dir=back]' in dot


def test_new_nodes_filled_marks_coloured_and_legend_only_when_needed():
    dot = render_cases.dot("new_and_marks")
    assert re.search(r'op2 \[.*class="tg-node tg-op tg-new tg-anomaly".*fillcolor="#ffcdd2"', dot)
    assert re.search(r't3 \[.*tg-new.*fillcolor="#fff59d"', dot)
    assert re.search(r'op1 \[.*tg-current.*color="#1565c0"', dot)
    assert 'label="new in this cell"' in dot and 'label="anomaly (NaN/inf)"' in dot
    assert "cluster_legend" not in render_cases.dot("micrograd")


def test_highlight_ids():
    dot = to_dot(render_cases.build("micrograd"), highlight=["op2"])
    assert re.search(r"op2 \[.*tg-highlight.*penwidth=3", dot)


def test_modules_are_clusters_named_by_path():
    dot = render_cases.dot("modules")
    assert 'subgraph "cluster_sequential" {' in dot
    assert 'subgraph "cluster_sequential.0" {' in dot
    assert dot.index('"cluster_sequential"') < dot.index('"cluster_sequential.0"')


def clusters_of(dot: str) -> dict[str, list[str]]:
    """Node id -> the module clusters around it in the DOT, outermost first."""
    around: list[str] = []
    where = {}
    for line in dot.splitlines():
        if m := re.match(r'\s*subgraph "cluster_([^"]+)" \{', line):
            around.append(m.group(1))
        elif line.strip() == "}" and around:
            around.pop()
        elif m := re.match(r'\s*(\w+) \[id="node-', line):
            where[m.group(1)] = list(around)
    return where


@pytest.mark.parametrize("view", ["forward", "backward"])
def test_a_fold_over_several_layers_sits_in_the_module_around_them(view):
    tg.manual_seed(0)
    layers = []
    for _ in range(8):  # one chain of 8 Linear + ReLU layers: the middle 6 fold
        layers += [tg.nn.Linear(4, 4), tg.nn.ReLU()]
    out = tg.nn.Sequential(*layers)(tg.randn(2, 4, name="x")).sum()
    dot = to_dot(build_graph(out, view=view))  # as built (draw() may fold more to fit)
    (fold,) = re.findall(r'(\w+) \[id="node-\w+", class="tg-node tg-summary tg-repeat"', dot)
    assert "repeated 6 more times" in dot
    # its ops were built in sequential.2 ... sequential.15: it is drawn in no layer's box
    assert clusters_of(dot)[fold] == ["sequential"]
    assert 'subgraph "cluster_sequential.0" {' in dot  # the first layer stays open


def test_escaping_record_and_quoted_labels():
    assert record_field('"}{|<script>') == '\\"\\}\\{\\|\\<script\\>'
    assert quote('a "b" \\ c\nd') == '"a \\"b\\" \\\\ c\\nd"'
    dot = render_cases.dot("escaping")
    assert 'label="{\\<script\\>alert(1)\\</script\\>|data 1.0000}"' in dot


def test_unknown_rankdir():
    with pytest.raises(
        ValueError,
        match=re.escape('to_dot: unknown rankdir \'XY\'\n  hint: use "LR" (left to right) or "TB"'),
    ):
        to_dot(build_graph(tg.tensor(1.0)), rankdir="XY")
