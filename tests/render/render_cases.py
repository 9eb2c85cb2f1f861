"""Graphs built from lesson-style source code: the golden DOT tests' and the drawing snapshot's.

Each case's code ends with `out = dict(tensors=[...], **build_graph options)`. It runs
under the file name `<lesson>` (registered in linecache), so creation sites read
`<lesson>, line 3: ...` on any machine. The cases in `GOLDEN_CASES` have a golden DOT
file: `python tests/render/render_cases.py` prints their DOT (the two-process test
compares it with an in-process run); `python tests/render/render_cases.py --write`
rewrites the golden files after a deliberate change of the drawing (review the diff!).
`scripts/drawing_snapshot.py` draws every case, in many views, to check a refactor.
"""

from __future__ import annotations

import linecache
import sys
from pathlib import Path

import numpy as np

GOLDEN = Path(__file__).parent / "golden"

CASES = {
    "micrograd": """\
a = tg.tensor(2.0, requires_grad=True, name="a")
b = tg.tensor(-3.0, requires_grad=True, name="b")
c = tg.tensor(10.0, requires_grad=True, name="c")
e = a * b; e.name = "e"
d = e + c; d.name = "d"
f = tg.tensor(-2.0, requires_grad=True, name="f")
L = d * f; L.name = "L"
L.backward()
out = dict(tensors=[L])
""",
    "tensor_mlp": """\
x = tg.tensor(np.arange(6.0).reshape(2, 3) / 10, name="x")
w1 = tg.tensor(np.linspace(-1, 1, 12).reshape(3, 4), requires_grad=True, name="w1")
b1 = tg.tensor(np.zeros(4), requires_grad=True, name="b1")
w2 = tg.tensor(np.linspace(1, -1, 4).reshape(4, 1), requires_grad=True, name="w2")
h = (x @ w1 + b1).relu()
loss = ((h @ w2) ** 2).mean(); loss.name = "loss"
loss.backward()
out = dict(tensors=[loss])
""",
    "diamond": """\
a = tg.tensor([1.0, 2.0], requires_grad=True, name="a")
b = a * 2
c = a + 1
d = (b * c).sum(); d.name = "d"
out = dict(tensors=[d])
""",
    "modules": """\
tg.manual_seed(0)
net = tg.nn.Sequential(tg.nn.Linear(2, 3), tg.nn.Tanh(), tg.nn.Linear(3, 1))
x = tg.tensor([[1.0, -1.0]], name="x")
y = net(x).sum(); y.name = "y"
out = dict(tensors=[y])
""",
    "modules_collapsed": """\
tg.manual_seed(0)
net = tg.nn.Sequential(tg.nn.Linear(2, 3), tg.nn.Tanh(), tg.nn.Linear(3, 1))
y = net(tg.tensor([[1.0, -1.0]])).sum(); y.name = "y"
out = dict(tensors=[y], collapse=True)
""",
    "backward": """\
x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True, name="x")
w = tg.tensor([[0.5, -1.0], [0.25, 0.0], [1.0, 2.0]], requires_grad=True, name="w")
y = (x @ w).tanh().sum(); y.name = "y"
y.backward()
out = dict(tensors=[y], view="backward")
""",
    "new_and_marks": """\
a = tg.tensor(1.5, requires_grad=True, name="a")
b = a.exp(); b.name = "b"
mark = watermark()
c = b * a; c.name = "c"
c.grad_fn._mark, c.grad_fn._mark_text = "anomaly", "forward produced 1 nan"
out = dict(tensors=[c], since=mark, marks={b.grad_fn: "current"})
""",
    "escaping": """\
s = tg.tensor(1.0, requires_grad=True, name="<script>alert(1)</script>")
q = tg.tensor([1.0, 2.0], requires_grad=True, name='"}{|\\\\ back')
y = (s * q).sum(); y.name = "a & b\\nnext"
out = dict(tensors=[y])
""",
    "loop_folded": """\
z = tg.tensor(1.0, requires_grad=True, name="z")
for _ in range(30):
    z = z * 0.9 + 0.1
z.name = "z30"
out = dict(tensors=[z])
""",
    "capped": """\
z = tg.tensor(1.0, requires_grad=True, name="z")
for k in range(12):
    z = (z * 0.9).tanh() if k % 2 else z.exp() * 0.5
z.name = "out"
out = dict(tensors=[z], max_nodes=10)
""",
    # the golden files stop here; the snapshot draws these too
    "diamond_shared": """\
a = tg.tensor([1.0, 2.0], requires_grad=True, name="a")
k = tg.tensor([3.0, 4.0], name="k")
b = a * 2
c = a + k
d = (b * c).sum(); d.name = "d"
out = dict(tensors=[{"d": d, "c": c, "a": a, "lonely": tg.tensor(1.0)}])
""",
    "deep_mlp": """\
tg.manual_seed(0)
layers = []
for _ in range(8):
    layers += [tg.nn.Linear(4, 4), tg.nn.ReLU()]
net = tg.nn.Sequential(*layers, tg.nn.Linear(4, 1))
y = net(tg.randn(3, 4, name="x")).pow(2).mean(); y.name = "loss"
y.backward()
out = dict(tensors=[y])
""",
    "rnn_loop": """\
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
out = dict(tensors=[loss])
""",
    "rnn_short": """\
tg.manual_seed(1)
cell = tg.nn.RNNCell(2, 2)
h = tg.zeros(1, 2)
for t in range(3):
    h = cell(tg.randn(1, 2), h)
out = dict(tensors=[h.sum()])
""",
    "loop_2000": """\
z = tg.tensor(1.0, requires_grad=True, name="z")
for _ in range(1000):
    z = z * 0.999 + 0.001
z.name = "z"
out = dict(tensors=[z])
""",
    "varied_2000": """\
tg.manual_seed(0)
h = tg.randn(4, 8, name="x")
for k in range(520):
    w = tg.randn(8, 8, requires_grad=True, name=f"w{k}")
    b = tg.randn(8, requires_grad=True, name=f"b{k}")
    h = (h @ w + b).tanh() if k % 2 else (h @ w + b).relu() * 0.5
out = dict(tensors=[h.sum()])
""",
    "shared_weight_chain": """\
w = tg.tensor(0.5, requires_grad=True, name="w")
z = tg.tensor(1.0, requires_grad=True, name="z")
for _ in range(12):
    z = (z * w).tanh()
result = z + w; result.name = "out"
out = dict(tensors=[result, z])
""",
    "transpose_join": """\
tg.manual_seed(0)
h = tg.randn(2, 3, requires_grad=True, name="h")
w = tg.randn(3, 3, requires_grad=True, name="w")
for _ in range(6):
    h = (h @ w.T).tanh()
out = dict(tensors=[h.sum()])
""",
    "freed_and_inplace": """\
a = tg.tensor([1.0, -2.0, 3.0], requires_grad=True, name="a")
b = a.exp() * 2
c = b.clone()
c[0] = 5.0
s = (c * a).sum(); s.name = "s"
s.backward()
out = dict(tensors=[s])
""",
}


# the cases with a file in golden/, in the order the two-process test prints them
GOLDEN_CASES = (
    "micrograd",
    "tensor_mlp",
    "diamond",
    "modules",
    "modules_collapsed",
    "backward",
    "new_and_marks",
    "escaping",
    "loop_folded",
    "capped",
)


def run(name: str) -> dict:
    """Run one case's code; returns its namespace (the drawing options are in `out`)."""
    import tinygrad_edu as tg
    from tinygrad_edu.graph import watermark

    src = CASES[name]
    filename = "<lesson>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns: dict = {"tg": tg, "np": np, "watermark": watermark}
    exec(compile(src, filename, "exec"), ns)
    return ns


def build(name: str):
    """Run one case's code and return its GraphModel."""
    from tinygrad_edu.graph import build_graph

    ns = run(name)  # held while drawing: intermediates named in the code stay alive and show
    options = dict(ns["out"])
    return build_graph(*options.pop("tensors"), **options)


def dot(name: str) -> str:
    from tinygrad_edu.render.dot import to_dot

    return to_dot(build(name))


def main(argv: list[str]) -> None:
    if "--write" in argv:
        GOLDEN.mkdir(exist_ok=True)
        for name in GOLDEN_CASES:
            (GOLDEN / f"{name}.dot").write_text(dot(name), encoding="utf-8")
        return
    for name in GOLDEN_CASES:
        sys.stdout.write(f"== {name}\n{dot(name)}")


if __name__ == "__main__":
    main(sys.argv[1:])
