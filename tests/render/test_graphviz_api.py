"""A Drawing as graphviz's objects are used: `.source`, `.pipe(format)`, `.render(...)`, `.view()`.

The names, defaults and return values are the graphviz package's (`Source.pipe`,
`Source.render`); the layout program is the drawings' own (`svg.find_dot`): Graphviz's dot,
graphviz-pure (pinned with TINYGRAD_EDU_DOT), or none.
"""

import shutil

import pytest
from helpers import named_expression, unrolled_rnn

import tinygrad_edu as tg
from tinygrad_edu.core.errors import MissingDependencyError
from tinygrad_edu.render import drawing as drawing_mod
from tinygrad_edu.render import svg as svg_mod
from tinygrad_edu.render.dot import to_dot
from tinygrad_edu.render.svg import RenderError, dot_to_svg

SYSTEM_DOT = shutil.which("dot")
needs_system_dot = pytest.mark.skipif(SYSTEM_DOT is None, reason="no Graphviz dot")
needs_graphviz_pure = pytest.mark.skipif(
    shutil.which("graphviz-pure") is None, reason="graphviz-pure (pip) not installed"
)
PDF, PNG = b"%PDF-", b"\x89PNG\r\n\x1a\n"  # the files' first bytes
INSTALL = (
    "`apt-get install graphviz` (Debian/Ubuntu), `brew install graphviz` (macOS), "
    "`conda install graphviz`"
)


@pytest.fixture
def no_layout_program(monkeypatch):
    monkeypatch.delenv(svg_mod.PIN_VARIABLE, raising=False)
    monkeypatch.setattr(svg_mod.shutil, "which", lambda name, path=None: None)


@needs_system_dot
def test_source_is_the_dot_the_shown_picture_is_laid_out_from():
    d = tg.draw(named_expression(), show_values=False)
    assert d.source == to_dot(d.graph, rankdir="TB", show_values=False)
    assert d.svg() == drawing_mod.fit(dot_to_svg(d.source), max_height_px=drawing_mod.SCREEN_PX)
    # 12 steps with one opened do not fit a screen as built: the first and last steps fold
    # too and the rows move closer; `.source` is that picture's DOT, not the one built
    long = tg.draw(unrolled_rnn(12), expand="rnncell.t=5")
    built = to_dot(long.graph)
    assert "rnncell.t=1 ... t=4" in built
    assert "rnncell.t=0 ... t=4" in long.source and long.source != built
    assert long.source == to_dot(long.graph, rankdir="TB", compact=True)
    assert long.svg() == drawing_mod.fit(
        dot_to_svg(long.source), max_height_px=drawing_mod.SCREEN_PX
    )


def test_without_a_layout_program_source_is_the_dot_as_built(no_layout_program):
    d = tg.draw(named_expression())
    assert d.source == to_dot(d.graph) and isinstance(d.source, str)
    for call in (lambda: d.pipe("svg"), lambda: d.pipe("png"), lambda: d.render("g")):
        with pytest.raises(MissingDependencyError) as e:
            call()
        assert str(e.value).split(":")[0] in ("Drawing.pipe", "Drawing.render")
        assert str(e.value).endswith(
            "Graphviz's `dot` program was not found, so the graph cannot be laid out as a "
            "picture\n  hint: `pip install graphviz-pure` (a dot that pip installs), or "
            f"Graphviz itself: {INSTALL}"
        )


@needs_system_dot
def test_pipe_gives_bytes_in_the_format_asked_for():
    d = tg.draw(named_expression())
    svg = d.pipe("svg")
    assert svg == ('<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n' + d.svg()).encode()
    assert all(f">{label}</text>".encode() in svg for label in ("a", "data -0.4621", "tanh"))
    assert d.pipe("svg", encoding="utf-8") == svg.decode()
    assert d.pipe().startswith(PDF)  # graphviz's default format
    assert d.pipe("pdf").startswith(PDF) and d.pipe(format="PNG").startswith(PNG)


@needs_system_dot
def test_render_writes_the_dot_and_the_picture_and_returns_its_path(tmp_path, monkeypatch):
    d = tg.draw(named_expression())
    path = d.render("my_graph", directory=tmp_path / "out", format="png")
    assert path == str(tmp_path / "out" / "my_graph.png")  # the folder is made
    assert (tmp_path / "out" / "my_graph").read_text() == d.source
    assert (tmp_path / "out" / "my_graph.png").read_bytes().startswith(PNG)

    monkeypatch.chdir(tmp_path)
    assert d.render() == "Drawing.gv.pdf"  # graphviz's defaults: <class>.gv, PDF
    assert (tmp_path / "Drawing.gv").read_text() == d.source
    assert (tmp_path / "Drawing.gv.pdf").read_bytes().startswith(PDF)

    assert d.render("clean", format="svg", cleanup=True) == "clean.svg"
    assert not (tmp_path / "clean").exists()
    assert (tmp_path / "clean.svg").read_bytes() == d.pipe("svg")

    # outfile: the picture's own path, its suffix the format; the DOT beside it as .gv
    assert d.render(outfile="picture.pdf") == "picture.pdf"
    assert (tmp_path / "picture.pdf").read_bytes().startswith(PDF)
    assert (tmp_path / "picture.gv").read_text() == d.source


@needs_system_dot
def test_save_is_render_of_one_file(tmp_path):
    d = tg.draw(named_expression())
    assert d.save(tmp_path / "g.pdf") == str(tmp_path / "g.pdf")
    assert (tmp_path / "g.pdf").read_bytes().startswith(PDF)
    assert d.save(tmp_path / "g.svg") == str(tmp_path / "g.svg")
    assert (tmp_path / "g.svg").read_bytes() == d.pipe("svg")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.pdf", "g.svg"]


@needs_system_dot
def test_a_format_dot_does_not_know_lists_the_ones_it_does(tmp_path, monkeypatch):
    monkeypatch.delenv(svg_mod.PIN_VARIABLE, raising=False)
    with pytest.raises(RenderError) as e:
        tg.draw(named_expression()).render("g", tmp_path, format="jpgx")
    first, hint = str(e.value).split("\n")
    assert first == "Drawing.render: dot, the layout program found, cannot make JPGX"
    assert hint.startswith('  hint: use format="svg", or one of the formats it makes: canon ')
    assert " pdf " in hint and " png " in hint
    assert list(tmp_path.iterdir()) == []  # nothing written


@needs_graphviz_pure
def test_graphviz_pure_makes_svg_and_png_and_says_what_to_do_for_pdf(tmp_path, monkeypatch):
    monkeypatch.setenv(svg_mod.PIN_VARIABLE, "graphviz-pure")
    d = tg.draw(named_expression())
    assert b">data -0.4621</text>" in d.pipe("svg")
    assert d.pipe("png").startswith(PNG)
    with pytest.raises(RenderError) as e:
        d.render("g", tmp_path, format="pdf")
    assert str(e.value) == (
        "Drawing.render: graphviz-pure, the layout program TINYGRAD_EDU_DOT names, cannot "
        'make PDF\n  hint: use format="svg", or set TINYGRAD_EDU_DOT to a Graphviz dot that '
        "makes PDF, or unset it"
    )
    assert list(tmp_path.iterdir()) == []
    # found on its own, where no Graphviz is installed (Binder): install one
    monkeypatch.delenv(svg_mod.PIN_VARIABLE)
    real = shutil.which
    monkeypatch.setattr(svg_mod, "_FOUND", {})  # the dot found by the tests before
    monkeypatch.setattr(
        svg_mod.shutil, "which", lambda name, path=None: None if name == "dot" else real(name)
    )
    assert svg_mod.find_dot().endswith("graphviz-pure")
    with pytest.raises(RenderError) as e:
        d.pipe("pdf")
    assert str(e.value) == (
        "Drawing.pipe: graphviz-pure, the layout program found, cannot make PDF\n"
        f'  hint: use format="svg", or install Graphviz: {INSTALL}'
    )


@needs_system_dot
def test_view_opens_the_rendered_file_with_graphviz(tmp_path, monkeypatch):
    graphviz = pytest.importorskip("graphviz")
    opened = []
    monkeypatch.setattr(graphviz, "view", opened.append)
    d = tg.draw(named_expression())
    assert d.render("g", tmp_path, format="svg") == str(tmp_path / "g.svg") and opened == []
    assert d.render("g", tmp_path, format="svg", view=True) == opened[-1]
    assert d.view("v", tmp_path, cleanup=True) == opened[-1] == str(tmp_path / "v.pdf")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g", "g.svg", "v.pdf"]


@needs_system_dot
def test_view_where_no_viewer_can_be_opened_says_the_file_is_written(tmp_path, monkeypatch):
    graphviz = pytest.importorskip("graphviz")

    def no_xdg_open(path):
        raise FileNotFoundError(2, "No such file or directory", "xdg-open")

    monkeypatch.setattr(graphviz, "view", no_xdg_open)
    with pytest.raises(RenderError) as e:
        tg.draw(named_expression()).view("g", tmp_path)
    assert str(e.value) == (
        f"Drawing.render: {tmp_path / 'g.pdf'} was written, but no viewer could be opened "
        "here ([Errno 2] No such file or directory: 'xdg-open')\n"
        "  hint: open the file yourself (on a server: from the file browser), or leave out "
        "view=True"
    )
    assert (tmp_path / "g.pdf").read_bytes().startswith(PDF)
