"""The `dot` kept open between drawings: same SVG as one run, errors and timeouts as one run."""

import subprocess
import sys

import pytest
import render_cases

from tinygrad_edu.render import dot_process
from tinygrad_edu.render import svg as svg_mod
from tinygrad_edu.render.svg import RenderError, dot_to_svg

DOT = svg_mod.find_dot()
streams = pytest.mark.skipif(
    DOT is None or not dot_process.can_stream(DOT, svg_mod._env()),
    reason="no Graphviz dot that can be kept open",
)


@pytest.fixture(autouse=True)
def fresh():
    svg_mod._CACHE.clear()
    dot_process.close_all()
    yield
    dot_process.close_all()


def _once(source: str) -> str:
    out = subprocess.run([DOT, "-Tsvg"], input=source, capture_output=True, text=True, check=True)
    return svg_mod.compact(out.stdout)


@streams
def test_one_open_dot_draws_every_graph_exactly_as_one_run_does():
    names = ["micrograd", "escaping", "loop_folded", "micrograd"]
    svgs = []
    for name in names:
        svg_mod._CACHE.clear()  # lay out again, not from the cache
        svgs.append(dot_to_svg(render_cases.dot(name)))
    pids = {dot_process._OPEN[DOT].proc.pid}
    assert len(pids) == 1  # still the same process after four graphs
    for name, svg in zip(names, svgs):
        assert svg == _once(render_cases.dot(name))  # graph id too: `graph0`, not `page0,1_`


@streams
def test_a_dot_error_is_reported_as_a_single_run_reports_it():
    with pytest.raises(RenderError) as err:
        dot_to_svg("digraph G { a -> }")
    assert str(err.value) == (
        "draw: Graphviz failed: Error: <stdin>: syntax error in line 1 near '}'\n"
        "  hint: this is a bug in tinygrad_edu's DOT; please report it"
    )
    assert ">b</text>" in dot_to_svg("digraph G { b }")  # the next graph draws again


@pytest.mark.skipif(sys.platform == "win32", reason="sh script")
def test_a_layout_slower_than_the_timeout_stops_the_open_process(tmp_path):
    slow = tmp_path / "dot"  # says it is Graphviz's dot, then never answers
    slow.write_text(
        "#!/bin/sh\n[ \"$1\" = -V ] && echo 'dot - graphviz version 9' >&2 && exit\nsleep 5\n"
    )
    slow.chmod(0o755)
    with pytest.raises(RenderError) as err:
        dot_to_svg('digraph G {\n  a [id="node-a"]\n}', timeout=0.2, program=str(slow))
    assert str(err.value) == (
        "draw: Graphviz took longer than 0.2 s to lay out 1 node\n"
        "  hint: draw fewer nodes: tg.draw(..., max_nodes=100) or collapse=True"
    )
    assert dot_process._OPEN[str(slow)].proc is None  # killed; the next graph starts anew


@pytest.mark.skipif(sys.platform == "win32", reason="sh script")
def test_other_layout_programs_run_once_per_graph(tmp_path):
    fake = tmp_path / "graphviz-pure"  # reads all of its input before it answers
    fake.write_text("#!/bin/sh\necho 'graphviz-pure - graphviz-pure version 0' >&2\n")
    fake.chmod(0o755)
    assert dot_process.process_for(str(fake), svg_mod._env()) is None
