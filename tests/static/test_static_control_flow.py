"""cond and while_loop: eager vs traced, both branches kept, gradients, errors."""

import re

import numpy as np
import pytest
from static_helpers import numeric_grad

import tinygrad_edu as tg
from tinygrad_edu.static import cond, while_loop


def branchy(x, w):
    return cond(x.sum() > 0, lambda v: (v * w).tanh(), lambda v: v * v - w, x)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_cond_traced_matches_eager_for_both_branches(sign):
    w = tg.tensor([0.5, -2.0])
    g = tg.static.trace(branchy, tg.tensor([1.0, 2.0]), w)  # traced on the true branch
    assert g.ops == ("Sum", "Compare", "cond")
    x = tg.tensor([sign * 1.5, sign * 0.25])
    np.testing.assert_allclose(g(x, w).numpy(), branchy(x, w).numpy(), rtol=1e-12)


def test_cond_program_text_shows_both_branches_and_captures():
    g = tg.static.trace(
        lambda x, w: cond(x.sum() > 0, lambda v: v * w, lambda v: -v, x),
        tg.tensor([1.0]),
        tg.tensor([2.0]),
    )
    text = [line.split("  #")[0].rstrip() for line in str(g).splitlines()]
    assert text == [
        "f(x: float64[1], w: float64[1]):",
        "    c4: float64[] = const 0.",
        "    %3: float64[] = Sum(x, axis=None, keepdims=False)",
        "    %5: bool[] = Compare(%3, c4, symbol='>')",
        "    %12: float64[1] = cond(%5, x, w)",  # w is captured by the true branch
        "        true(x: float64[1], w: float64[1]):",
        "            %8: float64[1] = Mul(x, w)",
        "            return %8",
        "        false(x: float64[1], w: float64[1]):",
        "            %10: float64[1] = Neg(x)",
        "            return %10",
        "    return %12",
    ]
    assert g(tg.tensor([3.0]), tg.tensor([2.0])).tolist() == [6.0]
    assert g(tg.tensor([-3.0]), tg.tensor([2.0])).tolist() == [3.0]


def test_cond_gradients_flow_through_the_branch_that_ran():
    f = tg.static.trace(branchy, tg.tensor([1.0, 2.0]), tg.tensor([0.5, -2.0]))
    for x in (np.array([1.0, 0.3]), np.array([-1.0, 0.3])):
        w = np.array([0.5, -2.0])
        loss = lambda a, b: f(a, b).sum()
        gx, gw = tg.static.trace(lambda a, b: branchy(a, b).sum(), x, w).grad()(x, w)
        np.testing.assert_allclose(gx.numpy(), numeric_grad(loss, [x, w], 0), atol=1e-8)
        np.testing.assert_allclose(gw.numpy(), numeric_grad(loss, [x, w], 1), atol=1e-8)
        xt, wt = tg.tensor(x, requires_grad=True), tg.tensor(w, requires_grad=True)
        branchy(xt, wt).sum().backward()  # eager cond: plain autograd
        np.testing.assert_allclose(gx.numpy(), xt.grad.numpy(), rtol=1e-12)


def test_cond_branches_must_agree_on_shapes():
    with pytest.raises(
        tg.TracingError,
        match=re.escape(
            "cond: the branches must return the same shapes and dtypes: true_fn returns "
            "float64[2], false_fn returns float64[]"
        ),
    ):
        tg.static.trace(
            lambda x: cond(x.sum() > 0, lambda v: v, lambda v: v.sum(), x), tg.tensor([1.0, 2.0])
        )


def halve_until_small(x):
    return while_loop(lambda v: (v * v).sum() > 1.0, lambda v: v * 0.5, x)


def test_while_loop_traced_runs_a_data_dependent_number_of_steps():
    g = tg.static.trace(halve_until_small, tg.tensor([0.1, 0.1]))  # zero steps when traced
    assert g.ops == ("while_loop",)
    for x in ([0.1, 0.1], [3.0, 4.0], [100.0, -50.0]):
        np.testing.assert_allclose(g(tg.tensor(x)).numpy(), halve_until_small(tg.tensor(x)).numpy())
    assert g(tg.tensor([3.0, 4.0])).tolist() == [0.375, 0.5]


def test_while_loop_tuple_carry_and_captures():
    w = tg.tensor([1.5])

    def f(x):
        return while_loop(lambda i, v: i < 4.0, lambda i, v: (i + 1.0, v * w), (0.0, x))

    g = tg.static.trace(f, tg.tensor([1.0]))
    i, v = g(tg.tensor([2.0]))
    assert i.item() == 4.0 and v.item() == pytest.approx(2.0 * 1.5**4)
    ie, ve = f(tg.tensor([2.0]))
    assert (ie.item(), ve.item()) == (i.item(), v.item())


def test_while_loop_gradient_goes_back_through_the_steps_taken():
    w0 = np.array([1.1])

    def f(x, w):
        out = while_loop(lambda v: v.sum() < 10.0, lambda v: (v * w).tanh() * 5.0 + v, x)
        return (out * out).sum()

    g = tg.static.trace(f, np.array([0.1, 0.2]), w0)
    dg = g.grad()
    for x in (np.array([0.1, 0.2]), np.array([0.3, 0.05]), np.array([11.0, 0.0])):
        gx, gw = dg(x, w0)
        np.testing.assert_allclose(
            gx.numpy(), numeric_grad(lambda a, b: g(a, b), [x, w0.copy()], 0), rtol=1e-5, atol=1e-7
        )
        np.testing.assert_allclose(
            gw.numpy(), numeric_grad(lambda a, b: g(a, b), [x, w0.copy()], 1), rtol=1e-5, atol=1e-7
        )


def test_while_loop_body_must_keep_the_carry_shape():
    with pytest.raises(
        tg.TracingError,
        match=re.escape(
            "while_loop: body_fn must return the carry unchanged in shape and dtype: the carry "
            "is float64[2], body_fn returned float64[]"
        ),
    ):
        tg.static.trace(
            lambda x: while_loop(lambda v: v.sum() < 1, lambda v: v.sum(), x), tg.tensor([0.0, 0.0])
        )
    with pytest.raises(tg.TracingError, match="while_loop: body_fn must return the carry"):
        while_loop(lambda v: v.sum() < 1, lambda v: v.sum(), tg.tensor([0.0, 0.0]))


def test_nested_cond_inside_while_body():
    def f(x):
        body = lambda v: cond(v.sum() > 0, lambda u: u - 1.0, lambda u: u + 1.0, v)
        return while_loop(lambda v: v.abs().sum() > 1.5, body, x)

    g = tg.static.trace(f, tg.tensor([0.0]))
    for x in ([5.0], [-3.5], [0.5]):
        assert g(tg.tensor(x)).tolist() == f(tg.tensor(x)).tolist()
