"""Graphs for the golden DOT tests, each built from lesson-style source code.

The code runs under the file name `<lesson>` (registered in linecache), so creation
sites read `<lesson>, line 3: ...` on any machine. `python tests/render/render_cases.py`
prints every case's DOT (the two-process test compares it with an in-process run);
`python tests/render/render_cases.py --write` rewrites the golden files after a deliberate
change of the drawing (review the diff!).
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
}


def build(name: str):
    """Run one case's code and return its GraphModel."""
    import tinygrad_edu as tg
    from tinygrad_edu.graph import build_graph, watermark

    src = CASES[name]
    filename = "<lesson>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns: dict = {"tg": tg, "np": np, "watermark": watermark}
    exec(compile(src, filename, "exec"), ns)
    opts = ns["out"]
    return build_graph(*opts.pop("tensors"), **opts)


def dot(name: str) -> str:
    from tinygrad_edu.render.dot import to_dot

    return to_dot(build(name))


def main(argv: list[str]) -> None:
    if "--write" in argv:
        GOLDEN.mkdir(exist_ok=True)
        for name in CASES:
            (GOLDEN / f"{name}.dot").write_text(dot(name), encoding="utf-8")
        return
    for name in CASES:
        sys.stdout.write(f"== {name}\n{dot(name)}")


if __name__ == "__main__":
    main(sys.argv[1:])
