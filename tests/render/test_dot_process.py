"""The layout program started ahead of each drawing: the same SVG as a single run, sooner."""

import subprocess
import sys
import time

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
    # one dot fed these one after the other puts the modules' clusters in another order;
    # new_and_marks has the legend (one subgraph), so it goes after the warm-up graph
    names = ["micrograd", "modules", "new_and_marks", "modules_collapsed", "loop_folded"]
    for name in names * 2:
        svg_mod._CACHE.clear()  # lay out again, not from the cache
        assert dot_to_svg(render_cases.dot(name)) == _once(render_cases.dot(name)), name


@needs_dot
def test_a_graph_with_one_subgraph_or_none_goes_after_the_warm_up_graph():
    cmd = [DOT, "-Tsvg"]
    source = render_cases.dot("new_and_marks").encode()
    assert source.count(b"subgraph ") == 1  # the legend
    code, out, _ = dot_process.run(cmd, source, 10.0, svg_mod._env())
    assert code == 0
    assert (
        out.decode()
        == subprocess.run(
            cmd, input=source, capture_output=True, env=svg_mod._env()
        ).stdout.decode()
    )
    dot_process.settle()
    assert list(dot_process._WAITING) == [(tuple(cmd), True)]
    (waiting,) = dot_process._WAITING.values()
    assert waiting.poll() is None  # warming up (Graphviz) or reading (graphviz-pure)


@needs_dot
def test_a_graph_with_two_named_subgraphs_goes_to_a_process_without_warm_up():
    # Graphviz 2.43 orders named subgraphs by their names' addresses in memory, which
    # differ after Pango's setup: the modules' clusters came out in another order
    cmd = [DOT, "-Tsvg"]
    source = render_cases.dot("modules").encode()
    code, out, _ = dot_process.run(cmd, source, 10.0, svg_mod._env())
    assert code == 0 and b"warm_up" not in out
    dot_process.settle()
    assert list(dot_process._WAITING) == [(tuple(cmd), False)]


@needs_dot
def test_the_next_drawing_uses_the_process_started_after_the_last_one():
    dot_to_svg(render_cases.dot("micrograd"))
    dot_process.settle()  # started by a helper thread, off the drawing's clock
    (waiting,) = dot_process._WAITING.values()
    assert waiting.poll() is None  # started, waiting for its graph
    dot_to_svg(render_cases.dot("escaping"))
    assert waiting.returncode == 0  # it drew the second graph and exited
    dot_process.settle()
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


@needs_dot
def test_inside_start_next_after_the_next_process_starts_when_the_block_ends():
    # the live view draws inside the block: starting dot must not compete with its drawing
    with dot_process.start_next_after():
        dot_to_svg(render_cases.dot("micrograd"))
        svg_mod._CACHE.clear()
        dot_to_svg(render_cases.dot("micrograd"))  # a second drawing starts its own
        dot_process.settle()
        assert dot_process._WAITING == {}
    dot_process.settle()
    (waiting,) = dot_process._WAITING.values()  # one process for the next drawing, not two
    assert waiting.poll() is None


@needs_dot
def test_a_source_bigger_than_the_pipe_goes_in_pieces_and_draws_as_a_single_run():
    cmd = [DOT, "-Tsvg"]
    padding = "/* " + "x" * 300_000 + " */\n"  # more than a pipe holds (64 KB)
    source = (padding + render_cases.dot("micrograd")).encode()
    code, out, _ = dot_process.run(cmd, source, 10.0, svg_mod._env())
    alone = subprocess.run(cmd, input=source, capture_output=True, env=svg_mod._env())
    assert code == 0 and out == alone.stdout


@pytest.mark.skipif(sys.platform == "win32", reason="sh script")
def test_a_program_that_never_reads_a_big_source_is_stopped_at_the_timeout(tmp_path):
    stuck = tmp_path / "stuckdot"
    stuck.write_text("#!/bin/sh\nsleep 5\n")
    stuck.chmod(0o755)
    source = 'digraph G {\n  a [id="node-a"]\n}\n/* ' + "x" * 300_000 + " */\n"
    t0 = time.perf_counter()
    with pytest.raises(RenderError, match="took longer than 0.2 s"):
        dot_to_svg(source, timeout=0.2, program=str(stuck))
    assert time.perf_counter() - t0 < 3


@pytest.mark.skipif(sys.platform == "win32", reason="sh script")
def test_a_program_that_exits_without_reading_says_why(tmp_path):
    gone = tmp_path / "gonedot"
    gone.write_text("#!/bin/sh\necho 'Error: no layout here' >&2\nexit 3\n")
    gone.chmod(0o755)
    source = "digraph G { a }\n/* " + "x" * 300_000 + " */\n"
    with pytest.raises(RenderError, match="Graphviz failed: Error: no layout here"):
        dot_to_svg(source, program=str(gone))
