"""The forward summary, decided on the walk's op groups (summarise.py), as drawings show it.

Every summary accounts for the nodes it hides: each node of the graph is drawn, or
counted by exactly one summary box (a module, a fold, "N more nodes"). Random programs
(loops, shared leaves, modules called in a loop, roots inside folds, watermarks) check
that under every option, beside the drawings the lessons make.
"""

import random

import pytest

import tinygrad_edu as tg
from tinygrad_edu import nn
from tinygrad_edu.core.engine import AccumulateGrad
from tinygrad_edu.graph import build as B
from tinygrad_edu.graph import build_graph, watermark


def same(*tensors, **options):
    """The graph, checked: every node drawn or counted once, edges between drawn nodes.

    The cap counts every box, markers included, except when the roots (always drawn)
    and one marker alone pass it.
    """
    g = build_graph(*tensors, **options)
    counted = sum(n.count if n.kind == "summary" else 1 for n in g.nodes)
    assert counted == g.attrs["total"]
    cap = options.get("max_nodes", 150)
    if cap is not None:
        assert len(g) <= max(cap, len(g.attrs["roots"]) + 1)
    ids = {n.id for n in g.nodes}
    assert all(e.src in ids and e.dst in ids for e in g.edges)
    assert set(g.attrs["roots"]) <= ids
    if options.get("fold") is False and options.get("max_nodes", 1) is None:
        assert len(g) == g.attrs["total"] or options.get("collapse")  # nothing else hides
    return g


def test_loop_that_folds_with_a_watermark_and_a_root_inside_the_chain():
    z = tg.tensor(1.0, requires_grad=True, name="z")
    w = tg.tensor(0.5, requires_grad=True, name="w")
    mid = None
    mark = None
    for i in range(40):
        z = z * w + 0.001  # w is shared by every step: it stays visible
        if i == 20:
            mid, mark = z, watermark()
    g = same({"out": z, "mid": mid}, since=mark)
    repeat = [n for n in g.nodes if n.role == "repeat"]
    assert [(n.detail, n.blocks) for n in repeat] == [("Mul -> Add", 19), ("Mul -> Add", 17)]
    assert g.attrs["total"] == 40 * 5 + 2 and g.node("t2").name == "w"


def test_mlp_layers_fold_with_their_own_weights():
    h = tg.randn(2, 4, name="x")
    weights = []
    for k in range(12):
        weights.append(tg.randn(4, 4, requires_grad=True, name=f"w{k}"))
        h = (h @ weights[-1]).tanh() * 0.5
    g = same(h.sum())
    (repeat,) = [n for n in g.nodes if n.role == "repeat"]
    # 10 folded layers: 3 ops, 3 outputs, 1 constant, 1 weight each (x only in the first)
    assert (repeat.blocks, repeat.count) == (10, 80)
    # a weight asked for stays visible; a hand-made watermark flags only tensors made late
    g = same(h.sum(), weights[5], since=(weights[11].creation_number, 1 << 40))
    (repeat,) = [n for n in g.nodes if n.role == "repeat"]
    assert (repeat.count, repeat.new, g.node("t27").name) == (79, False, "w5")
    g = same(h.sum(), since=(weights[7].creation_number, 1 << 40))
    assert [n.new for n in g.nodes if n.role == "repeat"] == [True]


class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(tg.tensor(0.9))

    def forward(self, x):
        return (x * self.w).tanh()


def test_modules_fold_on_ops_and_leaves_take_their_users_module():
    net = nn.Sequential(*[Scale() for _ in range(8)])
    shared = tg.tensor(2.0, requires_grad=True, name="shared")
    y = (net(tg.randn(3, name="x")) * shared).sum() + shared
    g = same(y)
    # blocks 1 ... 6 fold into one box in the module around them all, not in block 1
    (fold,) = [n for n in g.nodes if n.role == "repeat"]
    assert fold.module == "sequential" and fold.blocks == 6
    assert {n.module for n in g.nodes} == {"", "sequential", "sequential.0", "sequential.7"}
    assert g.node("t2").module == "sequential.0" and g.node("t2").name == "0.w"
    assert same(y, max_nodes=6).attrs["hidden"] > 0


def test_merging_chains_keep_the_earliest_link_and_fold_once():
    # x @ weight.T in every Linear: each transpose and the previous layer feed one matmul;
    # only the data path (the earlier op) links to it, so the layers fold into one node
    net = nn.Sequential(*[nn.Sequential(nn.Linear(3, 3), nn.Tanh()) for _ in range(6)])
    y = net(tg.randn(2, 3, name="x")).sum()
    g = same(y)
    repeat = [n for n in g.nodes if n.role == "repeat"]
    assert [(n.detail, n.blocks) for n in repeat] == [("MatMul -> Add -> Tanh", 4)]
    # per hidden layer: 3 ops, their 3 outputs and the bias (a leaf only its Add uses);
    # the transposed weights stay outside, each feeding the fold
    assert repeat[0].count == 4 * 7


def random_program(seed: int):
    """A random mix of shared leaves, constants, loops (folds), branches and roots."""
    rng = random.Random(seed)
    pool = [
        tg.tensor(rng.uniform(0.5, 1.5), requires_grad=True, name=f"p{i}")
        for i in range(rng.randint(1, 4))
    ]
    roots = []
    mark = None
    for _ in range(rng.randint(1, 6)):
        if mark is None and rng.random() < 0.3:
            mark = watermark()  # what comes after is new (folds with new weights too)
        x = rng.choice(pool)
        steps = rng.choice([1, 3, 6, 30])
        pattern = [rng.choice("amtlx") for _ in range(rng.randint(1, 3))]
        for _ in range(steps):
            for p in pattern:
                if p == "a":
                    x = x + rng.choice([0.5, rng.choice(pool)])
                elif p == "m":
                    x = x * tg.tensor(0.9) if rng.random() < 0.5 else x * rng.choice(pool)
                elif p == "t":
                    x = x.tanh()
                elif p == "l":
                    x = (x * x + 1.0).log()
                else:
                    x = x * tg.tensor(1.0, requires_grad=True, name="fresh")
        pool.append(x)
        if rng.random() < 0.4:
            roots.append(x)
    roots.append(pool[-1])
    if rng.random() < 0.3:
        roots.append(pool[0])  # a leaf asked for too
    if rng.random() < 0.2:
        roots.append(tg.tensor(3.0, name="alone"))  # in no op's inputs
    return roots, mark


@pytest.mark.parametrize("seed", range(60))
@pytest.mark.parametrize("max_nodes", [150, 12, None])
def test_random_programs_account_for_every_node(seed, max_nodes):
    roots, mark = random_program(seed)
    same(roots, max_nodes=max_nodes, since=mark)
    same(roots, max_nodes=max_nodes, since=mark, fold=False)


def test_varied_graph_over_the_cap():
    rng = random.Random(0)
    x = tg.randn(3, name="x")
    steps = [
        lambda a, w: a * w,
        lambda a, w: (a + w).tanh(),
        lambda a, w: a.exp() - w,
        lambda a, w: a.sum() * w,
        lambda a, w: a / 2.0,
    ]
    for k in range(120):  # no op sequence repeats four times in a row: little folds
        x = rng.choice(steps)(x, tg.tensor(float(k), requires_grad=True, name=f"w{k}"))
        if k == 60:
            mid = x.sum()
    g = same(x.sum(), mid)
    assert g.attrs["hidden"] > 300 and [n.role for n in g.nodes].count("more") == 2


def test_expand_true_draws_every_block_of_a_folded_loop():
    # a folded chain's tooltip says "draw every block: tg.draw(..., expand=True)": that
    # takes the full RawGraph with nothing folded, exactly as fold=False does
    z = tg.tensor(1.0, requires_grad=True, name="z")
    for _ in range(30):
        z = z * 0.9 + 0.1
    assert [n.role for n in build_graph(z).nodes].count("repeat") == 1
    every = build_graph(z, expand=True, max_nodes=None)
    plain = build_graph(z, fold=False, max_nodes=None)
    assert [vars(n) for n in every.nodes] == [vars(n) for n in plain.nodes]
    # per step: two ops, their outputs and their constants 0.9 and 0.1; then z itself
    assert len(every) == 30 * 6 + 1 and every.attrs["hidden"] == 0


def test_a_root_asked_for_twice_is_walked_once():
    x = tg.tensor(2.0, requires_grad=True, name="x")
    y = x * 3.0
    assert build_graph([y, y, x]).summary() == build_graph(y, x).summary()
    g = same([y, y])
    assert [n.id for n in g.nodes] == ["t1", "t2", "op1", "t3"] and g.attrs["roots"] == ["t3"]


def plain_walk(roots):
    """The walk's per-op lists the slow, obvious way: one edge at a time, in Python."""
    acc = AccumulateGrad
    ops, stack = [], list(dict.fromkeys(t.grad_fn for t, _ in roots if t.grad_fn is not None))
    seen = set(stack)
    while stack:
        node = stack.pop()
        ops.append(node)
        for nxt, _ in node.next_functions:
            if nxt is not None and type(nxt) is not acc and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    ops.sort(key=lambda node: node.creation_number)
    index = {node: k for k, node in enumerate(ops)}
    uses, user, owner, source, pos = [0] * len(ops), [-1] * len(ops), [], [], []
    leaf_pos, first_op, more = {}, [], {}
    r = -1
    for k, node in enumerate(ops):
        for nxt, _ in node.next_functions:
            owner.append(k)
            source.append(-1 if nxt is None else -2 if type(nxt) is acc else index[nxt])
            if nxt is None:
                r += 1
            elif type(nxt) is acc:
                if nxt not in leaf_pos:
                    r += 1
                    leaf_pos[nxt] = r
                    first_op.append(k)
                else:
                    more.setdefault(list(leaf_pos).index(nxt), []).append(k)
            else:
                uses[index[nxt]] += 1
                user[index[nxt]] = k
        r += 2
        pos.append(r - 1)
    return (
        ops,
        uses,
        user,
        (owner, source),
        pos,
        list(leaf_pos),
        list(leaf_pos.values()),
        first_op,
        more,
    )


@pytest.mark.parametrize("seed", range(40))
def test_the_walks_numpy_layout_is_the_plain_one(seed):
    roots, _ = random_program(seed)
    roots = B._roots(tuple(roots))
    walk = B.ForwardWalk(roots, None)
    ops, uses, user, edges, pos, accs, leaf_pos, first_op, more = plain_walk(roots)
    n_leaves = len(accs)
    assert list(walk.ops) == ops and [list(e) for e in walk.edges] == [
        [node for node, _ in op.next_functions] for op in ops
    ]
    assert walk.names == [op.op for op in ops]
    assert walk.number == [op.creation_number for op in ops]
    assert walk.uses.tolist() == uses and walk.user.tolist() == user
    leaf_or_source = walk.edge_source.clip(min=-2)  # the walk numbers leaves below -2 its own way
    assert (walk.edge_owner.tolist(), leaf_or_source.tolist()) == edges and walk.pos == pos
    assert list(walk.accs)[:n_leaves] == accs and walk.leaf_pos[:n_leaves] == leaf_pos
    assert walk.first_op == first_op and walk.more == more
    assert all(walk.op_number(op) == k for k, op in enumerate(ops))
    assert all(walk.leaf_number(a) == j for j, a in enumerate(accs))


def test_the_quick_no_repeat_check_never_hides_a_run(monkeypatch):
    # repeats() returns at once when no period has the matching names a fold needs;
    # on random chains (runs planted in half of them) it finds what the full scan finds
    from tinygrad_edu.graph import summarise

    rng = random.Random(1)
    for _ in range(2000):
        alphabet = rng.choice(["ab", "abc", "abcdefgh"])
        names = [rng.choice(alphabet) for _ in range(rng.randint(0, 60))]
        if rng.random() < 0.5:
            block = [rng.choice(alphabet) for _ in range(rng.randint(1, 9))]
            names[len(names) // 2 : len(names) // 2] = block * rng.randint(2, 6)
        quick = summarise.repeats(names)
        with monkeypatch.context() as m:
            m.setattr(summarise, "_may_repeat", lambda names: True)
            assert summarise.repeats(names) == quick, names


class Cell(nn.Module):
    """An RNN-like cell: a weight of its own, a shared one passed in, a constant."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(tg.tensor(0.7))

    def forward(self, x, h, shared):
        return (x * self.w + h * shared).tanh() * 0.5


def step_program(seed: int):
    """A module called in a loop, with chains before, inside and after it, roots and a mark."""
    rng = random.Random(seed)
    cell, other = Cell(), Cell()
    shared = tg.tensor(1.1, requires_grad=True, name="shared")
    h = tg.tensor(0.3, requires_grad=True, name="h0")
    for _ in range(rng.choice([0, 5])):  # a chain before the loop
        h = h * 0.9 + 0.1
    roots, mark = [], None
    steps = rng.choice([2, 4, 9, 14])
    for t in range(steps):
        if mark is None and rng.random() < 0.15:
            mark = watermark()
        x = tg.tensor(float(t), name=f"x{t}") if rng.random() < 0.5 else h * 2.0
        h = cell(x, h, shared if rng.random() < 0.7 else tg.tensor(1.0, requires_grad=True))
        if rng.random() < 0.2:
            for _ in range(5):  # a chain between two steps
                h = h + 0.01
        if rng.random() < 0.1:
            roots.append(h)  # a step's output asked for
    if rng.random() < 0.5:
        for _ in range(rng.choice([2, 5])):
            h = other(h, h, shared)  # a second module called in a loop
    for _ in range(rng.choice([0, 6])):  # a chain after it
        h = h.exp() * 0.1
    roots.append(h)
    if rng.random() < 0.3:
        roots.append(shared)
    return roots, mark, steps


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("max_nodes", [150, 12, None])
def test_step_programs_account_for_every_node(seed, max_nodes):
    roots, mark, steps = step_program(seed)
    assert B.ForwardWalk(B._roots((roots,)), mark).steps  # time steps numbered
    same(roots, max_nodes=max_nodes, since=mark)
    opened = frozenset({f"cell.t={steps // 2}", "cell.t=1"})
    same(roots, max_nodes=max_nodes, since=mark, expand=opened)
    same(roots, max_nodes=max_nodes, keep_ends=False, expand=opened)
    same(roots, max_nodes=max_nodes, since=mark, expand=True)
    same(roots, max_nodes=max_nodes, since=mark, collapse=True)
    same(roots, max_nodes=max_nodes, since=mark, collapse=["cell.t=2", "cell.t=5", "other"])
    same(roots, max_nodes=max_nodes, since=mark, collapse=[f"cell.t={t}" for t in range(9)])


class Block(nn.Module):
    """Two inner modules, one of them a Scale: a parent with children to collapse."""

    def __init__(self, kind: int):
        super().__init__()
        self.a, self.b = Scale(), Scale()
        self.kind = kind

    def forward(self, x, shared):
        x = self.a(x) + (shared if self.kind else 0.5)
        return self.b(x) * (2.0 if self.kind == 2 else 1.0)


class Stack(nn.Sequential):
    """Blocks called by one module: siblings `stack.0`, `stack.1`, ... to collapse and fold."""

    def forward(self, x, shared, rng, roots):
        for block in self:
            x = block(x, shared)
            if rng.random() < 0.15:
                roots.append(x)  # a block's output asked for
            if rng.random() < 0.1:
                x = x.tanh()  # an op between two blocks, in the parent only
        return x


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("max_nodes", [150, 9, None])
def test_module_programs_account_for_every_node(seed, max_nodes):
    rng = random.Random(seed)
    shared = tg.tensor(1.5, requires_grad=True, name="shared")
    net = Stack(*[Block(rng.choice([0, 0, 0, 1, 2])) for _ in range(rng.randint(1, 9))])
    roots: list = []
    mark = watermark() if rng.random() < 0.2 else None
    x = net(tg.randn(2, name="x"), shared, rng, roots)
    for _ in range(rng.choice([0, 1, 4])):  # called in a loop too (time steps)
        x = net(x, shared, rng, roots)
    roots.append(x.sum() * shared)
    if rng.random() < 0.3:
        roots.append(shared)
    # paths of one call, of a time step, and of the leaves, which carry no step
    paths = [f"stack.t=1.{i}" for i in range(len(net))] + [f"stack.{i}" for i in range(len(net))]
    for collapse in (True, paths, paths[1::2], [p + ".a" for p in paths], ["stack.t=0"]):
        same(roots, max_nodes=max_nodes, since=mark, collapse=collapse)
        same(roots, max_nodes=max_nodes, since=mark, collapse=collapse, fold=False)
