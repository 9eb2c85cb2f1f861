"""The browser's layout program (render/wasm.py), run on CPython through a fake Pyodide bridge.

The fake stands in for the JavaScript side only: its engine lays the DOT out with the
native `dot -Tsvg`, which is what the WebAssembly build of the same Graphviz computes.
Everything between (`find_dot`'s choice, `dot_to_svg`, `compact`, `fit`, the waiting for
the load, the errors) is the package's own code, the same that runs in Pyodide.
"""

import subprocess
from collections import OrderedDict
from concurrent.futures import Future

import pytest

import tinygrad_edu as tg
from tinygrad_edu.core.errors import MissingDependencyError
from tinygrad_edu.render import svg as svg_mod
from tinygrad_edu.render import wasm
from tinygrad_edu.render.svg import RenderError, dot_to_svg

NATIVE_DOT = svg_mod.find_dot()
needs_dot = pytest.mark.skipif(NATIVE_DOT is None, reason="no Graphviz dot")
JS_SOURCE = "export class Graphviz { static async load() { return new Graphviz(); } }"


class FakeEngine:
    """`Graphviz` from @hpcc-js/wasm-graphviz: `layout(dot, "svg", "dot")` -> SVG text."""

    def __init__(self):
        self.sources = []

    def layout(self, source, fmt, engine):
        assert (fmt, engine) == ("svg", "dot")
        self.sources.append(source)
        proc = subprocess.run([NATIVE_DOT, "-Tsvg"], input=source.encode(), capture_output=True)
        if proc.returncode:
            raise RuntimeError("Error: " + proc.stderr.decode())  # as a JsException reads
        return proc.stdout.decode()


class FakeBridge:
    """The calls into JavaScript. `finish_at_load`: the load is over before anyone asks
    (the usual case: it ends between two cells); `jspi`: the cell may block on it."""

    def __init__(self, finish_at_load=True, jspi=True, fail=None):
        self.engine = FakeEngine()
        self.finish_at_load, self.jspi, self.fail = finish_at_load, jspi, fail
        self.loaded, self.blocked = [], 0

    def load(self, js_source):
        self.loaded.append(js_source)
        self.task = Future()
        if self.finish_at_load:
            self.finish()
        return self.task

    def finish(self):
        if self.fail:
            self.task.set_exception(self.fail)
        else:
            self.task.set_result(self.engine)

    def can_block(self):
        return self.jspi

    def block(self, task):
        self.blocked += 1
        self.finish()
        return task.result()


@pytest.fixture
def browser(monkeypatch, tmp_path):
    """Pretend to be Pyodide: the wasm program chosen, its JS module in the wheel, no load yet."""
    js = tmp_path / "graphviz_wasm.js"
    js.write_text(JS_SOURCE)
    monkeypatch.setattr(wasm, "AVAILABLE", True)
    monkeypatch.setattr(wasm, "JS_FILE", js)
    monkeypatch.setattr(wasm, "_STATE", {})
    monkeypatch.setattr(svg_mod, "_CACHE", OrderedDict())  # keyed by program too, but start clean

    def use(bridge):
        monkeypatch.setattr(wasm, "_bridge", bridge)
        return bridge

    return use


def expr():
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    b = (a * 3).sum()
    b.backward()
    return b


def test_find_dot_names_the_wasm_program_in_the_browser(browser):
    assert svg_mod.find_dot() == wasm.PROGRAM == "graphviz-wasm"


@needs_dot
def test_a_drawing_in_the_browser_is_the_servers_drawing(browser):
    bridge = browser(FakeBridge())
    wasm.start()
    b = expr()
    drawing = tg.draw(b)
    got = drawing.svg()
    assert bridge.loaded == [JS_SOURCE]  # the module's text, handed over once
    assert bridge.engine.sources[-1] == drawing.source  # the same DOT a server lays out
    assert bridge.blocked == 0
    with pytest.MonkeyPatch.context() as m:  # the same drawing by the server's path
        m.setattr(wasm, "AVAILABLE", False)
        native = tg.draw(b)
        assert (native.svg(), native.source) == (got, drawing.source)
    assert got.startswith("<svg") and 'class="node tg-node tg-tensor tg-leaf"' in got


@needs_dot
def test_big_graphs_get_the_fast_layout_as_graph_attributes(browser):
    bridge = browser(FakeBridge())
    source = 'digraph G {\n  a [id="node-a", label="x"]\n}\n'
    svg = dot_to_svg(source, fast=True)
    assert bridge.engine.sources == [
        "digraph G {\n" + wasm.FAST_ATTRS + '\n  a [id="node-a", label="x"]\n}\n'
    ]
    assert '<g id="node-a" class="node">' in svg


@needs_dot
def test_a_first_drawing_waits_for_the_load_where_the_browser_can_block(browser):
    bridge = browser(FakeBridge(finish_at_load=False, jspi=True))
    wasm.start()
    assert not bridge.task.done()
    assert "<svg" in tg.draw(expr()).svg()
    assert bridge.blocked == 1


@needs_dot
def test_a_first_drawing_says_in_one_line_to_run_the_cell_again_without_jspi(browser):
    bridge = browser(FakeBridge(finish_at_load=False, jspi=False))
    wasm.start()
    drawing = tg.draw(expr())
    with pytest.raises(MissingDependencyError) as e:
        drawing.svg()
    assert str(e.value) == (
        "the browser's Graphviz is still loading (about a second): run this cell again"
    )
    shown = drawing._repr_mimebundle_()  # the text tree and that line, where the picture goes
    assert list(shown) == ["text/plain"] and shown["text/plain"].endswith(str(e.value))
    bridge.finish()  # between the cells
    assert "<svg" in tg.draw(expr()).svg()
    assert bridge.blocked == 0 and len(bridge.loaded) == 1


@needs_dot
def test_png_and_pdf_say_that_they_need_a_server_and_svg_is_made_here(browser, tmp_path):
    browser(FakeBridge())
    drawing = tg.draw(expr())
    calls = {
        "Drawing.save": lambda fmt: drawing.save(tmp_path / f"g.{fmt}"),
        "Drawing.pipe": lambda fmt: drawing.pipe(fmt),
        "Drawing.render": lambda fmt: drawing.render("g", tmp_path, format=fmt),
    }
    for op, call in calls.items():
        for fmt in ("png", "pdf"):
            with pytest.raises(RenderError) as e:
                call(fmt)
            assert str(e.value) == (
                f"{op}: {fmt.upper()} needs Graphviz's dot program, which cannot run in the "
                "browser (the Graphviz here, in WebAssembly, makes SVG only)\n"
                '  hint: make an SVG here (format="svg", or a file name ending in .svg), or '
                "open the lesson on a server (Binder, or `tinygrad-edu lessons` locally)"
            )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["graphviz_wasm.js"]  # nothing written
    drawing.save(tmp_path / "g.svg")
    assert "<svg" in (tmp_path / "g.svg").read_text()
    assert drawing.render("g", tmp_path, format="svg") == str(tmp_path / "g.svg")
    svg = drawing.pipe("svg")
    assert svg.startswith(b"<?xml") and b">grad [3, 3]</text>" in svg


def test_a_wheel_without_the_module_says_which_wheel_draws(browser, tmp_path):
    bridge = browser(FakeBridge())
    wasm.JS_FILE = tmp_path / "absent.js"  # restored by the fixture's monkeypatch
    with pytest.raises(MissingDependencyError, match="has no WebAssembly Graphviz") as e:
        dot_to_svg('digraph G { a [id="node-a"] }')
    assert "tinygrad-edu site build" in str(e.value)
    assert bridge.loaded == []


def test_a_failed_load_is_an_error_and_the_next_drawing_tries_again(browser):
    bridge = browser(FakeBridge(fail=RuntimeError("WebAssembly.instantiate(): out of memory")))
    with pytest.raises(RenderError, match="did not load: WebAssembly.instantiate"):
        dot_to_svg('digraph G { a [id="node-a"] }')
    bridge.fail = None
    assert len(bridge.loaded) == 1
    if NATIVE_DOT:
        assert "<svg" in dot_to_svg('digraph G { a [id="node-a"] }')
        assert len(bridge.loaded) == 2


@needs_dot
def test_dot_that_graphviz_refuses_is_a_render_error(browser):
    browser(FakeBridge())
    with pytest.raises(RenderError, match="^draw: Graphviz failed: .*syntax error"):
        dot_to_svg("digraph G { a -> }")


class FakePackages:
    """Pyodide's loadPackage: a load that, when it ends, leaves a module importable."""

    def __init__(self, folder, jspi=True, fail=None):
        self.folder, self.jspi, self.fail = folder, jspi, fail
        self.asked, self.tasks = [], []

    def load_package(self, name):
        self.asked.append(name)
        self.tasks.append(Future())
        return self.tasks[-1]

    def finish(self):
        task, name = self.tasks[-1], self.asked[-1]
        if self.fail:
            task.set_exception(self.fail)
        else:
            (self.folder / f"{name}.py").write_text("WHERE = 'the site'\n")
            task.set_result(None)

    def can_block(self):
        return self.jspi

    def block(self, task):
        self.finish()
        return task.result()


@pytest.fixture
def packages(monkeypatch, tmp_path):
    """In the browser, with a package of the site's lock (`tg_site_pkg`) not loaded yet."""
    monkeypatch.setattr(wasm, "AVAILABLE", True)
    monkeypatch.setattr(wasm, "_PACKAGES", {})
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_a_package_imported_inside_a_function_is_loaded_first_and_waited_for(monkeypatch, packages):
    fake = FakePackages(packages)
    monkeypatch.setattr(wasm, "_bridge", fake)
    wasm.need_package("tg_site_pkg")
    import tg_site_pkg

    assert tg_site_pkg.WHERE == "the site" and fake.asked == ["tg_site_pkg"]
    wasm.need_package("tg_site_pkg")  # importable now: not asked again
    wasm.need_package("numpy")  # importable already: never asked
    assert fake.asked == ["tg_site_pkg"]


def test_a_browser_that_cannot_wait_says_in_one_line_to_run_the_cell_again(monkeypatch, packages):
    fake = FakePackages(packages, jspi=False)
    monkeypatch.setattr(wasm, "_bridge", fake)
    with pytest.raises(MissingDependencyError) as err:
        wasm.need_package("tg_site_pkg2")
    assert (
        str(err.value) == "the browser is loading tg_site_pkg2 (a few seconds): run this cell again"
    )
    fake.finish()  # between the cells
    wasm.need_package("tg_site_pkg2")
    assert fake.asked == ["tg_site_pkg2"]  # one load, not one per try


def test_a_failed_package_load_names_the_package_and_is_tried_again(monkeypatch, packages):
    fake = FakePackages(packages, fail=RuntimeError("No known package with name 'tg_nope'"))
    monkeypatch.setattr(wasm, "_bridge", fake)
    with pytest.raises(MissingDependencyError, match="could not load tg_nope: No known package"):
        wasm.need_package("tg_nope")
    fake.fail = None
    wasm.need_package("tg_nope")
    assert fake.asked == ["tg_nope", "tg_nope"]


def test_tg_plot_asks_for_matplotlib_in_the_browser(monkeypatch):
    asked = []
    monkeypatch.setattr(wasm, "need_package", asked.append)
    tg.plot.loss_curve([1.0, 0.5])
    assert asked == ["matplotlib"]
