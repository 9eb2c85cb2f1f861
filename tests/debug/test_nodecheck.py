import re

import numpy as np
import pytest
from debug_helpers import line_of

import tinygrad_edu as tg
from tinygrad_edu.debug import check_nodes


class BadSquare(tg.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x  # wrong on purpose: d(x^2)/dx = 2x


class GoodSquare(BadSquare):
    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 2 * x


def _graph(square):
    tg.manual_seed(0)
    x = tg.randn(4, 3, requires_grad=True, name="x")
    w1 = tg.randn(3, 5, requires_grad=True, name="w1")
    b1 = tg.zeros(5, requires_grad=True, name="b1")
    w2 = tg.randn(5, 2, requires_grad=True, name="w2")
    h = (x @ w1 + b1).relu()
    z = square.apply(h @ w2)
    return (
        (z.softmax(axis=-1).log() * 0.5).mean()
        + z.max()
        + z.reshape(8).sum()
        + z.T.sum(axis=0).clip(-1, 1).sum() / 2
        + (z.exp()[1:3] ** 2).sigmoid().tanh().sum()
        - x.abs().sqrt().sum()
        + tg.where(z > 0, z, z * 0.1).sum()
    )


def test_finds_the_wrong_custom_function_among_built_in_ops():
    report = check_nodes(_graph(BadSquare))
    assert [n.name for n in report.failed] == ["BadSquareBackward"] and not report.ok
    bad = report.failed[0]
    assert bad.mark == "gradcheck"
    assert bad.mark_text.startswith("backward disagrees with finite differences (error ")
    rows = {r.name: r for r in report.rows}
    assert rows["BadSquareBackward"].status == "WRONG"
    assert rows["BadSquareBackward"].site.endswith(
        f"line {line_of('z = square.apply')}: z = square.apply(h @ w2)"
    )
    # the claimed gradient is half the true one everywhere
    m = re.fullmatch(
        r"input 0 at index \(\d, \d\): backward gives (\S+), "
        r"finite differences give (\S+)",
        rows["BadSquareBackward"].detail,
    )
    got, numeric = float(m.group(1)), float(m.group(2))
    assert numeric == pytest.approx(2 * got, rel=1e-4)
    assert all(r.status == "ok" for r in report.rows if r.name != "BadSquareBackward")
    assert len(report.rows) >= 30
    text = str(report).splitlines()
    assert text[0].split() == ["node", "result", "built", "at"]
    assert text[-1] == f"{len(report.rows)} nodes checked, 1 wrong: BadSquareBackward"


def test_all_built_in_and_a_correct_custom_function_pass():
    report = check_nodes(_graph(GoodSquare))
    assert report.ok and report.failed == []
    assert {r.status for r in report.rows} == {"ok"}


def test_works_after_backward_by_recomputing_and_skips_what_is_lost():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * x).tanh()
    loss = (y * y).sum()
    loss.backward()  # frees the saved values: inputs are recomputed from the leaves
    report = check_nodes(loss)
    assert [r.status for r in report.rows] == ["ok"] * 5
    # Add keeps nothing, so its constant input is gone once the graph is freed (and Sum's
    # input with it): the rules are still checked, on stand-in values, and the report says so
    loss = (x + tg.tensor([5.0, 6.0])).sum()
    loss.backward()
    report = check_nodes(loss)
    assert [(r.name, r.status, r.detail) for r in report.rows] == [
        ("AddBackward", "ok", "input 1 not kept: checked with stand-in values"),
        ("SumBackward", "ok", "input 0 not kept: checked with stand-in values"),
    ]


def test_skips_only_when_no_stand_in_is_possible():
    class Shift(tg.Function):
        @staticmethod
        def forward(ctx, a, k):
            return a + k  # integer k: a random stand-in could be an index out of range

        @staticmethod
        def backward(ctx, g):
            return g, None

    w = tg.tensor([1.0, 2.0], requires_grad=True)
    report = check_nodes(Shift.apply(w, tg.tensor(np.array([1, 2]))).sum())
    assert [(r.name, r.status) for r in report.rows] == [
        ("ShiftBackward", "skipped"),
        ("SumBackward", "ok"),
    ]
    assert report.ok
    assert str(report).splitlines()[2].strip() == (
        "inputs not available (freed, or not kept by the op, and not floats)"
    )


def test_crashing_backward_is_a_finding():
    class Crash(tg.Function):
        @staticmethod
        def forward(ctx, x):
            return x + 1

        @staticmethod
        def backward(ctx, g):
            raise ValueError("oops")

    x = tg.tensor([1.0], requires_grad=True)
    report = check_nodes(Crash.apply(x).sum())
    assert [r.detail for r in report.rows if r.status == "WRONG"] == ["ValueError: oops"]
    np.testing.assert_equal(x.grad, None)  # nothing was accumulated


def test_mlp_on_data_that_needs_no_grad_checks_every_node():
    # the usual ML case: data x and targets y need no grad; only the parameters do
    tg.manual_seed(0)
    x, y = tg.randn(8, 3, name="x"), tg.randn(8, 2, name="y")
    labels = np.array([0, 1, 1, 0, 1, 0, 0, 1])
    model = tg.nn.Sequential(tg.nn.Linear(3, 5), tg.nn.Tanh(), tg.nn.Linear(5, 2))
    z = BadSquare.apply(model(x))
    loss = tg.nn.functional.mse_loss(z, y) + tg.nn.functional.cross_entropy(model(x * 2.0), labels)
    report = check_nodes(loss)
    assert [n.name for n in report.failed] == ["BadSquareBackward"]
    assert {r.status for r in report.rows if r.name != "BadSquareBackward"} == {"ok"}
    # x reached the first MatMul only as data: the op saved it, so it is checked exactly
    first = report.rows[1]
    assert first.name == "MatMulBackward" and first.status == "ok" and first.detail == ""
    # y reaches Sub only as data that Sub does not keep: stand-in values, said so
    notes = [(r.name, r.detail) for r in report.rows if r.detail and r.status == "ok"]
    assert notes == [("SubBackward", "input 1 not kept: checked with stand-in values")]
    assert len(report.rows) >= 20


def test_stand_in_values_still_catch_a_rule_that_ignores_an_unkept_constant():
    class Scale(tg.Function):
        @staticmethod
        def forward(ctx, a, c):
            return a * c  # keeps nothing: c is not available to backward

        @staticmethod
        def backward(ctx, g):
            return g, None  # wrong: d(a c)/da = c

    w = tg.tensor([1.0, 2.0], requires_grad=True)
    report = check_nodes(Scale.apply(w, tg.tensor([3.0, 4.0])).sum())
    assert [n.name for n in report.failed] == ["ScaleBackward"]


def test_report_text_is_exact_and_the_site_comes_last_unpadded():
    x = tg.tensor([[1.0, -2.0], [0.5, 3.0]], name="x")
    w = tg.tensor([0.5, -1.0], requires_grad=True, name="w")
    loss = (BadSquare.apply(x * w) - 1.0).sum()
    here = f"tests/debug/test_nodecheck.py, line {line_of('loss = (BadSquare')}: "
    assert str(check_nodes(loss)) == (
        "node               result   built at\n"
        f"MulBackward        ok       {here}loss = (BadSquare.apply(x * w) - 1.0).sum()\n"
        f"BadSquareBackward  WRONG    {here}loss = (BadSquare.apply(x * w) - 1.0).sum()\n"
        "                   input 0 at index (1, 1): backward gives -1.54958, "
        "finite differences give -3.09917\n"
        f"SubBackward        ok       {here}loss = (BadSquare.apply(x * w) - 1.0).sum()\n"
        "                   input 1 not kept: checked with stand-in values\n"
        f"SumBackward        ok       {here}loss = (BadSquare.apply(x * w) - 1.0).sum()\n"
        "                   input 0 not kept: checked with stand-in values\n"
        "4 nodes checked, 1 wrong: BadSquareBackward"
    )
