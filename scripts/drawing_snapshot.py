"""Print the DOT, text and SVG of a wide set of drawings, to check a refactor changes none.

Run it before and after a change of graph/, render/, static/ or widgets/ and compare
(PYTHONPATH picks the checkout's package: Python puts scripts/ on the path, not the
working directory, so without it an installed tinygrad_edu is the one drawn):

    PYTHONPATH=$PWD python scripts/drawing_snapshot.py > before.txt   # on the old code
    PYTHONPATH=$PWD python scripts/drawing_snapshot.py > after.txt    # on the new code
    cmp before.txt after.txt

The cases are the golden DOT tests' (tests/render/render_cases.py, one list for
both) and the lessons': micrograd's expression, MLPs and modules
(collapsed, folded, unfolded), an RNN cell called in a loop (its steps folded, one step
expanded), long Python loops summarised at 2,000 ops, capped graphs, backward views
with marks and highlights, static programs (control flow, a backward program), the
backward stepper's pictures and the live view's cell-only drawing. Code runs under the
file name `<lesson>`, so creation sites read the same on any machine. `--svg` adds the
SVG of the small cases (Graphviz must be installed; its version decides the bytes).
"""

from __future__ import annotations

import hashlib
import linecache
import sys
from pathlib import Path

import tinygrad_edu as tg
from tinygrad_edu.graph import build_graph, this_cell, watermark
from tinygrad_edu.render.dot import to_dot
from tinygrad_edu.render.text import to_text

# the cases are the golden DOT tests' (one list for both): tests/render/render_cases.py
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "render"))
import render_cases  # noqa: E402

OPTIONS = [
    {},
    {"view": "backward"},
    {"fold": False, "max_nodes": None},
    {"collapse": True},
    {"expand": True},
    {"max_nodes": 10},
    {"max_nodes": 40, "view": "backward"},
]

EXTRA_OPTIONS = {
    "rnn_loop": [{"expand": "rnncell.t=4"}, {"collapse": "rnncell"}, {"fold": False}],
    "deep_mlp": [{"collapse": ["0", "2"]}, {"collapse": True, "fold": False}],
    "varied_2000": [{"max_nodes": 150}, {"max_nodes": 400}],
    "loop_2000": [{"max_nodes": None}],
}

SMALL_FOR_SVG = ("micrograd", "tensor_mlp", "modules", "rnn_short", "escaping")


def run_case(name: str) -> dict:
    return render_cases.run(name)


def roots_of(ns: dict) -> tuple:
    return tuple(ns["out"]["tensors"])


def own_options(ns: dict) -> dict:
    """The options the case itself draws with (`max_nodes=10`, `view="backward"`, ...)."""
    return {k: v for k, v in ns["out"].items() if k != "tensors"}


def show(title: str, graph, svg: bool = False, **dot_options) -> None:
    text = f"===== {title}\n{graph.summary()}\nattrs {sorted(graph.attrs.items())!r}\n"
    text += f"fingerprint {graph.fingerprint()}\n"
    text += to_dot(graph, **dot_options) + to_text(graph) + "\n"
    if svg:
        from tinygrad_edu.render.svg import dot_to_svg

        text += dot_to_svg(to_dot(graph, **dot_options)) + "\n"
    if len(text) > 20_000:  # a big graph: its hash, so the snapshot stays small to diff
        head = text[:2_000]
        text = f"{head}\n... sha256 of all {len(text)} chars: {hashlib.sha256(text.encode()).hexdigest()}\n"
    sys.stdout.write(text)


def tensor_cases(svg: bool) -> None:
    for name in render_cases.CASES:
        ns = run_case(name)
        roots = roots_of(ns)
        own = [own_options(ns)] if own_options(ns) else []
        for options in own + OPTIONS + EXTRA_OPTIONS.get(name, []):
            graph = build_graph(*roots, **options)
            show(f"{name} {options}", graph)
        graph = build_graph(*roots)
        first = graph.nodes[len(graph.nodes) // 2].id
        show(
            f"{name} LR no values, highlight {first}",
            graph,
            rankdir="LR",
            show_values=False,
            show_grads=False,
            highlight=[first],
        )
        if svg and name in SMALL_FOR_SVG:
            show(f"{name} svg", graph, svg=True)


def marked_and_new_cases() -> None:
    ns = run_case("micrograd")
    mark = watermark()
    ns2 = {"tg": tg, "L": ns["L"], "a": ns["a"]}
    src = "m = L * a + 1; m.name = 'm'\n"
    linecache.cache["<new cell>"] = (len(src), None, [src], "<new cell>")
    exec(compile(src, "<new cell>", "exec"), ns2)
    m = ns2["m"]
    m.grad_fn.set_mark("anomaly", "forward produced 1 nan")
    marks = {ns["L"].grad_fn: "current", ns["a"]: "breakpoint"}
    for view in ("forward", "backward"):
        graph = build_graph(m, since=mark, marks=marks, view=view)
        show(f"new and marks {view}", graph)
        show(f"this cell {view}", this_cell(graph))


def static_cases() -> None:
    from tinygrad_edu.static import cond, while_loop

    branchy = tg.static.trace(
        lambda x, w: cond(x.sum() > 0, lambda v: (v * w).relu(), lambda v: -v, x).sum(),
        tg.tensor([1.0, 2.0]),
        tg.tensor([3.0, 1.0]),
    )
    show("static cond", build_graph(branchy))
    show("static cond backward program", build_graph(branchy.grad()))
    looped = tg.static.trace(
        lambda x: while_loop(lambda v: v.sum() < 10.0, lambda v: v * 2.0, x),
        tg.tensor([1.0, 2.0]),
    )
    show("static while_loop", build_graph(looped))
    simple = tg.static.trace(lambda x: (x * 2.0 + 1.0).relu(), tg.tensor([1.0, -2.0]))
    show("static constants", build_graph(simple))
    scalar = tg.static.trace(lambda x: (x * x).relu().sum(), tg.tensor([1.0, -1.0]))
    show("static grad", build_graph(scalar.grad()))


def stepper_cases(svg: bool) -> None:
    stepper_module = widgets_module("stepper_view", "stepper")
    a = tg.tensor(3.0, requires_grad=True, name="a")
    b = tg.tensor([1.0, 2.0], requires_grad=True, name="b")
    state = stepper_module.StepperState((a * b + a).sum())
    for _ in range(4):
        state.advance()
        sys.stdout.write(f"===== stepper step {state.step}\n{state.current}\n")
        if svg:
            sys.stdout.write(state.picture() + "\n")


def live_cases(svg: bool) -> None:
    pictures = widgets_module("pictures", "drawing")
    x = tg.tensor([1.0, 2.0], requires_grad=True, name="x")
    y = x * x
    mark = watermark()
    z = (y + 1).sum()
    graph = pictures.live_graph([z, y], since=mark, max_nodes=150, names={"z": z, "y": y})
    sys.stdout.write(f"===== live text\n{pictures.live_text(graph, ['missing'])}\n")
    show("live graph", graph)
    show("live this cell", this_cell(graph))
    sys.stdout.write(f"{pictures.node_details(graph, graph.nodes[0].id)}\n")
    if svg:
        rendered = pictures.render_view([z], since=mark, cell_only=True)
        sys.stdout.write(f"{rendered.summary} {rendered.new_ids} {rendered.fingerprint}\n")
        sys.stdout.write(rendered.svg + "\n")
        sys.stdout.write(pictures.live_bundle(graph)["text/html"] + "\n")


def widgets_module(name: str, old_name: str):
    """A widgets module under its new name or, on older code, its old one."""
    import importlib

    try:
        return importlib.import_module(f"tinygrad_edu.widgets.{name}")
    except ImportError:
        return importlib.import_module(f"tinygrad_edu.widgets.{old_name}")


def main(argv: list[str]) -> None:
    svg = "--svg" in argv
    tensor_cases(svg)
    marked_and_new_cases()
    static_cases()
    stepper_cases(svg)
    live_cases(svg)
    for name in ("micrograd", "rnn_short"):
        drawing = tg.draw(*roots_of(run_case(name)))
        sys.stdout.write(f"===== tg.draw {name}\n{drawing!r}\n{drawing.source}")
        if svg:
            sys.stdout.write(drawing.svg() + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
