"""The layout program started ahead of each drawing: the same SVG as a single run, sooner."""

import subprocess
import sys

import pytest
import render_cases

from tinygrad_edu.render import dot_process
from tinygrad_edu.render import svg as svg_mod
from tinygrad_edu.render.svg import RenderError, dot_to_svg

DOT = svg_mod.find_dot()
needs_dot = pytest.mark.skipif(DOT is None, reason="no Graphviz dot")


@pytest.fixture(autouse=True)
def fresh():
    svg_mod._CACHE.clear()
    dot_process.stop_all()
    yield
    dot_process.stop_all()


def _once(source: str) -> str:
    out = subprocess.run([DOT, "-Tsvg"], input=source, capture_output=True, text=True, check=True)
    return svg_mod.compact(out.stdout)


@needs_dot
def test_every_graph_is_drawn_exactly_as_a_single_run_draws_it():
    # one dot fed these one after the other puts the modules' clusters in another order
    names = ["micrograd", "modules", "modules_collapsed", "loop_folded", "modules"]
    for name in names:
        svg_mod._CACHE.clear()  # lay out again, not from the cache
        assert dot_to_svg(render_cases.dot(name)) == _once(render_cases.dot(name)), name


@needs_dot
def test_the_next_drawing_uses_the_process_started_after_the_last_one():
    dot_to_svg(render_cases.dot("micrograd"))
    (waiting,) = dot_process._WAITING.values()
    assert waiting.poll() is None  # started, waiting for its graph
    dot_to_svg(render_cases.dot("escaping"))
    assert waiting.returncode == 0  # it drew the second graph and exited
    (after,) = dot_process._WAITING.values()
    assert after.pid != waiting.pid
    dot_process.stop_all()
    assert dot_process._WAITING == {} and after.returncode is not None


@needs_dot
def test_a_dot_error_is_reported_and_the_next_graph_draws():
    with pytest.raises(RenderError) as err:
        dot_to_svg("digraph G { a -> }")
    assert str(err.value).startswith(
        "draw: Graphviz failed: Error: <stdin>: syntax error in line 1"
    )
    assert ">b</text>" in dot_to_svg("digraph G { b }")


@pytest.mark.skipif(sys.platform == "win32", reason="sh script")
def test_a_layout_slower_than_the_timeout_is_stopped(tmp_path):
    slow = tmp_path / "slowdot"
    slow.write_text("#!/bin/sh\nsleep 5\n")
    slow.chmod(0o755)
    with pytest.raises(RenderError) as err:
        dot_to_svg('digraph G {\n  a [id="node-a"]\n}', timeout=0.2, program=str(slow))
    assert str(err.value) == (
        "draw: Graphviz took longer than 0.2 s to lay out 1 node\n"
        "  hint: draw fewer nodes: tg.draw(..., max_nodes=100) or collapse=True"
    )
