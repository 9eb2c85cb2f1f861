"""Print the DOT, text and SVG of a wide set of drawings, to check a refactor changes none.

Run it before and after a change of graph/, render/, static/ or widgets/ and compare:

    python scripts/drawing_snapshot.py > before.txt      # on the old code
    python scripts/drawing_snapshot.py > after.txt       # on the new code
    cmp before.txt after.txt

The cases are the tests' and the lessons': micrograd's expression, MLPs and modules
(collapsed, folded, unfolded), an RNN cell called in a loop (its steps folded, one step
expanded), long Python loops summarised at 2,000 ops, capped graphs, backward views
with marks and highlights, static programs (control flow, a backward program), the
backward stepper's pictures and the live view's cell-only drawing. Code runs under the
file name `<case>`, so creation sites read the same on any machine. `--svg` adds the
SVG of the small cases (Graphviz must be installed; its version decides the bytes).
"""

from __future__ import annotations

import hashlib
import linecache
import sys

import numpy as np

import tinygrad_edu as tg
from tinygrad_edu.graph import build_graph, this_cell, watermark
from tinygrad_edu.render.dot import to_dot
from tinygrad_edu.render.text import to_text

PRELUDE = "import numpy as np\n"

CASES = {
    "micrograd": """
a = tg.tensor(2.0, requires_grad=True, name="a")
b = tg.tensor(-3.0, requires_grad=True, name="b")
c = tg.tensor(10.0, requires_grad=True, name="c")
e = a * b; e.name = "e"
d = e + c; d.name = "d"
f = tg.tensor(-2.0, requires_grad=True, name="f")
L = d * f; L.name = "L"
L.backward(retain_graph=True)
roots = [L]
""",
    "tensor_mlp": """
x = tg.tensor(np.arange(6.0).reshape(2, 3) / 10, name="x")
w1 = tg.tensor(np.linspace(-1, 1, 12).reshape(3, 4), requires_grad=True, name="w1")
b1 = tg.tensor(np.zeros(4), requires_grad=True, name="b1")
w2 = tg.tensor(np.linspace(1, -1, 4).reshape(4, 1), requires_grad=True, name="w2")
h = (x @ w1 + b1).relu()
loss = ((h @ w2) ** 2).mean(); loss.name = "loss"
roots = [loss]
""",
    "diamond_shared": """
a = tg.tensor([1.0, 2.0], requires_grad=True, name="a")
k = tg.tensor([3.0, 4.0], name="k")
b = a * 2
c = a + k
d = (b * c).sum(); d.name = "d"
roots = {"d": d, "c": c, "a": a, "lonely": tg.tensor(1.0)}
""",
    "modules": """
tg.manual_seed(0)
net = tg.nn.Sequential(tg.nn.Linear(2, 3), tg.nn.Tanh(), tg.nn.Linear(3, 1))
x = tg.tensor([[1.0, -1.0]], name="x")
y = net(x).sum(); y.name = "y"
roots = [y]
""",
    "deep_mlp": """
tg.manual_seed(0)
layers = []
for _ in range(8):
    layers += [tg.nn.Linear(4, 4), tg.nn.ReLU()]
net = tg.nn.Sequential(*layers, tg.nn.Linear(4, 1))
y = net(tg.randn(3, 4, name="x")).pow(2).mean(); y.name = "loss"
y.backward()
roots = [y]
""",
    "rnn_loop": """
tg.manual_seed(0)
class Net(tg.nn.Module):
    def __init__(self):
        super().__init__()
        self.rnncell = tg.nn.RNNCell(3, 4)
        self.head = tg.nn.Linear(4, 1)
    def forward(self, xs):
        h = tg.zeros(1, 4)
        for x in xs:
            h = self.rnncell(x, h)
        return self.head(h).sum()
net = Net()
xs = [tg.randn(1, 3) for _ in range(9)]
loss = net(xs); loss.name = "loss"
roots = [loss]
""",
    "rnn_short": """
tg.manual_seed(1)
cell = tg.nn.RNNCell(2, 2)
h = tg.zeros(1, 2)
for t in range(3):
    h = cell(tg.randn(1, 2), h)
roots = [h.sum()]
""",
    "loop_2000": """
z = tg.tensor(1.0, requires_grad=True, name="z")
for _ in range(1000):
    z = z * 0.999 + 0.001
z.name = "z"
roots = [z]
""",
    "varied_2000": """
tg.manual_seed(0)
h = tg.randn(4, 8, name="x")
for k in range(520):
    w = tg.randn(8, 8, requires_grad=True, name=f"w{k}")
    b = tg.randn(8, requires_grad=True, name=f"b{k}")
    h = (h @ w + b).tanh() if k % 2 else (h @ w + b).relu() * 0.5
roots = [h.sum()]
""",
    "shared_weight_chain": """
w = tg.tensor(0.5, requires_grad=True, name="w")
z = tg.tensor(1.0, requires_grad=True, name="z")
for _ in range(12):
    z = (z * w).tanh()
out = z + w; out.name = "out"
roots = [out, z]
""",
    "transpose_join": """
tg.manual_seed(0)
h = tg.randn(2, 3, requires_grad=True, name="h")
w = tg.randn(3, 3, requires_grad=True, name="w")
for _ in range(6):
    h = (h @ w.T).tanh()
roots = [h.sum()]
""",
    "capped": """
z = tg.tensor(1.0, requires_grad=True, name="z")
for k in range(12):
    z = (z * 0.9).tanh() if k % 2 else z.exp() * 0.5
z.name = "out"
z.backward(retain_graph=True)
roots = [z]
""",
    "freed_and_inplace": """
a = tg.tensor([1.0, -2.0, 3.0], requires_grad=True, name="a")
b = a.exp() * 2
c = b.clone()
c[0] = 5.0
s = (c * a).sum(); s.name = "s"
s.backward()
roots = [s]
""",
    "escaping": """
s = tg.tensor(1.0, requires_grad=True, name="<script>alert(1)</script>")
q = tg.tensor([1.0, 2.0], requires_grad=True, name='"}{|\\\\ back')
y = (s * q).sum(); y.name = "a & b\\nnext"
roots = [y]
""",
}

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
    src = CASES[name]
    filename = f"<case {name}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns: dict = {"tg": tg, "np": np}
    exec(compile(src, filename, "exec"), ns)
    return ns


def roots_of(ns: dict) -> tuple:
    roots = ns["roots"]
    return (roots,) if isinstance(roots, dict) else tuple(roots)


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
    for name in CASES:
        ns = run_case(name)
        roots = roots_of(ns)
        for options in OPTIONS + EXTRA_OPTIONS.get(name, []):
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
    linecache.cache["<case new>"] = (len(src), None, [src], "<case new>")
    exec(compile(src, "<case new>", "exec"), ns2)
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
    graph = pictures.live_graph([z, y], mark, 150, names={"z": z, "y": y})
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
