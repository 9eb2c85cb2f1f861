"""nbval compares drawings in a renderer-independent form, and still catches real changes.

`tinygrad_edu/lesson/nbval_sanitize.cfg` is read here exactly as nbval reads it. The
fixtures in `data/` are one drawing's DOT and the SVG that Debian's Graphviz 2.43 and
the graphviz-pure 0.2.2 wheel made of it (kept raw: version comments included); the
renderers on the machine running the tests are compared with them too. The last test
runs nbval itself on a small notebook saved by one renderer and checked with another.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tinygrad_edu.lesson import cli
from tinygrad_edu.render import svg as svg_mod
from tinygrad_edu.render.drawing import fit, inline_html

plugin = pytest.importorskip("nbval.plugin")

DATA = Path(__file__).resolve().parent / "data"
DOT = (DATA / "drawing.dot").read_text()
DEBIAN = (DATA / "drawing.graphviz-2.43.svg").read_text()
PURE = (DATA / "drawing.graphviz-pure-0.2.2.svg").read_text()
PATTERNS = plugin.get_sanitize_patterns(cli.sanitize_config().read_text())


def sanitize(text: str) -> str:
    for regex, replace in PATTERNS:  # nbval's own loop (IPyNbCell.sanitize)
        text = re.sub(regex, replace, text)
    return text


def _renderers() -> dict[str, str]:
    found = {}
    for name in svg_mod.PROGRAMS:
        path = __import__("shutil").which(
            name, path=os.pathsep.join([os.environ.get("PATH", ""), *svg_mod.interpreter_dirs()])
        )
        if path:
            found[name] = path
    return found


def test_every_rule_of_the_file_is_read_by_nbval():
    # a `replace:` line nbval cannot parse silently drops its rule
    sections = re.findall(r"^\[[\w-]+\]$", cli.sanitize_config().read_text(), flags=re.M)
    assert len(PATTERNS) == len(sections) >= 8


def test_the_two_renderers_draw_differently_but_sanitise_the_same():
    assert DEBIAN != PURE
    assert 'stroke="transparent"' in DEBIAN and 'stroke="transparent"' not in PURE
    assert "graphviz version 2.43" in DEBIAN and "graphviz version 16.1" in PURE
    assert sanitize(DEBIAN) == sanitize(PURE)
    # the HTML output (inline SVG in an iframe, sized from the drawing) too
    html = [inline_html(fit(s), "<Drawing: forward graph>") for s in (DEBIAN, PURE)]
    assert html[0] != html[1] and sanitize(html[0]) == sanitize(html[1])


def test_a_compacted_drawing_sanitises_as_graphviz_wrote_it():
    # lessons saved before `compact` joined the lines (and moved the labels' font size
    # and colour onto the graph) still pass nbval against fresh drawings
    assert "\n<" not in svg_mod.compact(DEBIAN).split("<g", 1)[1]
    assert sanitize(svg_mod.compact(DEBIAN)) == sanitize(DEBIAN)
    assert sanitize(svg_mod.compact(PURE)) == sanitize(PURE)


@pytest.mark.parametrize("program", sorted(_renderers()))
def test_this_machines_renderers_agree_with_the_saved_drawings(program):
    fresh = svg_mod.dot_to_svg(DOT, program=_renderers()[program])
    assert sanitize(fresh) == sanitize(DEBIAN)


def test_the_sanitised_form_keeps_what_the_drawing_says():
    kept = sanitize(DEBIAN)
    for text in (
        "<text>x (3,)</text>",
        "<text>data 0.9880</text>",
        "<text>tanh</text>",
        '<g id="node-t1" class="node tg-node tg-tensor tg-leaf">',
        "<title>op1-&gt;t3</title>",
        'xlink:title="x &#160;(t1, leaf tensor)',
    ):
        assert text in kept, text
    for gone in ("points=", "viewBox", "font-size", "stroke=", "<polygon", "<!--", "<?xml"):
        assert gone not in kept, gone


def test_a_changed_value_on_a_node_still_differs():
    changed = DEBIAN.replace(">data 0.9880</text>", ">data 0.9881</text>")
    assert changed != DEBIAN
    assert sanitize(changed) != sanitize(PURE)


def test_a_missing_node_still_differs():
    # drop the `b` node's whole group, as if the drawing had lost a tensor
    start = DEBIAN.index('<g id="node&#45;t3"')
    end = DEBIAN.index("</g>\n</g>\n", start) + len("</g>\n</g>\n")
    assert "<title>t3</title>" in DEBIAN[start:end]
    missing = DEBIAN[:start] + DEBIAN[end:]
    assert sanitize(missing) != sanitize(PURE)
    assert "<title>t3</title>" not in sanitize(missing)


def test_text_outputs_are_left_alone_but_for_cell_numbers():
    text = "tensor([1., 2.], grad_fn=<MulBackward>)\n  built at: cell [4], line 2: y = x * 2"
    assert sanitize(text) == text.replace("cell [4]", "cell [N]")


NOTEBOOK_CODE = [
    "import tinygrad_edu as tg",
    'x = tg.tensor([1.0, -2.0, 3.0], requires_grad=True, name="x")\n'
    'w = tg.tensor([0.5, 0.25, -1.0], requires_grad=True, name="w")\n'
    "loss = (x * w).sum().tanh()\n"
    "loss.backward()\n"
    "tg.draw(loss)",
]


def _nbval(path: Path, renderer: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, TINYGRAD_EDU_DOT=renderer)
    return subprocess.run(
        cli.nbval_command([str(path)], extra=["-q"]),
        capture_output=True,
        text=True,
        env=env,
        cwd=path.parent,
        timeout=300,
    )


def _edit_drawing(path: Path, edit) -> None:
    nb = json.loads(path.read_text())
    data = nb["cells"][1]["outputs"][0]["data"]
    for kind in ("image/svg+xml", "text/html"):
        before = "".join(data[kind])
        data[kind] = edit(before)
        assert data[kind] != before
    path.write_text(json.dumps(nb))


@pytest.mark.slow
@pytest.mark.notebooks
def test_nbval_passes_across_renderers_and_fails_on_changed_or_missing_nodes(tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    found = _renderers()
    if len(found) < 2:
        pytest.skip(f"needs both Graphviz's dot and graphviz-pure, found {sorted(found)}")
    saved_with, checked_with = found["dot"], found["graphviz-pure"]

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in NOTEBOOK_CODE])
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    monkeypatch.setenv("TINYGRAD_EDU_DOT", saved_with)  # the kernel inherits it
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    path = tmp_path / "drawing.ipynb"
    nbformat.write(nb, path)
    saved = path.read_text()
    drawn = nb.cells[1].outputs[0].data["image/svg+xml"]
    assert 'stroke="transparent"' in drawn or saved_with != "/usr/bin/dot"  # Debian's mark

    proc = _nbval(path, checked_with)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "2 passed" in proc.stdout

    value = re.compile(r"data \[0\.5, 0\.25, (?:-|&(?:amp;)?#45;)1\]")  # `&amp;` in the HTML
    _edit_drawing(path, lambda s: value.sub("data [0.5, 0.25, 1]", s))
    proc = _nbval(path, checked_with)
    assert proc.returncode == 1 and "1 failed" in proc.stdout, proc.stdout[-3000:]
    assert "mismatch 'image/svg+xml'" in proc.stdout and "0.25, 1]</text>" in proc.stdout

    path.write_text(saved)
    # the `w` tensor's node group removed from both the SVG and the HTML output
    node = re.compile(r'<g id="node(?:-|&(?:amp;)?#45;)t2".*?</a>\n?</g>\n?</g>\n?', flags=re.S)
    _edit_drawing(path, lambda s: node.sub("", s, count=1))
    proc = _nbval(path, checked_with)
    assert proc.returncode == 1 and "1 failed" in proc.stdout, proc.stdout[-3000:]
    assert "mismatch 'image/svg+xml'" in proc.stdout


def test_nbval_is_run_by_this_interpreter():
    assert cli.nbval_command(["x.ipynb"])[0] == sys.executable
