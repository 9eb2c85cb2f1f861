"""DrawOptions: one frozen value for every drawing option, checked once, passed down.

tg.draw, the live view and the widgets build one; build_graph, the summary and render
read it. These tests check the one stored form, each error (naming the option and the
function the learner called), and that each entry point really hands its value down.
"""

import dataclasses
import inspect
import re

import pytest

import tinygrad_edu as tg
from tinygrad_edu.graph import DrawOptions, build_graph, watermark
from tinygrad_edu.graph import build as B


def test_options_are_stored_in_one_form():
    mark = watermark()
    a = tg.tensor(1.0, requires_grad=True)
    o = DrawOptions(
        collapse="net.0",
        expand=["rnncell.t=5", "rnncell.t=5"],
        since=tuple(mark),
        marks=[(a, "current")],
        highlight="t1",
    )
    assert o.collapse == ("net.0",)
    assert o.expand == frozenset({"rnncell.t=5"})
    assert o.since == mark and type(o.since) is type(mark)
    assert o.marks == ((a, "current"),)
    assert o.highlight == ("t1",)
    assert DrawOptions(collapse=False).collapse == () == DrawOptions(collapse=None).collapse
    assert DrawOptions(collapse=True).collapse is True
    assert DrawOptions(expand=True).expand is True
    assert DrawOptions(marks={a: "breakpoint"}).marks == ((a, "breakpoint"),)


def test_options_are_frozen_and_changed_by_replace():
    o = DrawOptions(max_nodes=40)
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.max_nodes = 10  # type: ignore[misc]
    smaller = dataclasses.replace(o, max_nodes=10, collapse="net")
    assert (smaller.max_nodes, smaller.collapse, o.max_nodes) == (10, ("net",), 40)


@pytest.mark.parametrize(
    "bad, error, text",
    [
        ({"view": "sideways"}, ValueError, "draw: unknown view 'sideways'\n  hint: use view="),
        ({"rankdir": "XY"}, ValueError, "draw: unknown rankdir 'XY'\n  hint: use \"TB\""),
        ({"marks": {1: "red"}}, ValueError, "draw: unknown mark 'red'\n  hint: use one of"),
        ({"max_nodes": 0}, TypeError, "draw: max_nodes: expected a whole number of nodes"),
        ({"max_nodes": 2.5}, TypeError, "draw: max_nodes: expected a whole number"),
        ({"fold": "yes"}, TypeError, "draw: fold: expected True or False, got 'yes'"),
        ({"keep_ends": 1}, TypeError, "draw: keep_ends: expected True or False, got 1"),
        ({"collapse": 3}, TypeError, "draw: collapse: expected a module path"),
        ({"expand": {"a": 1}}, TypeError, "draw: expand: expected a module path"),
        ({"names": ["x"]}, TypeError, "draw: names: expected a dict name -> Tensor"),
        ({"since": 5}, TypeError, "draw: since: expected a watermark(), got 5"),
        ({"timeout": 0}, TypeError, "draw: timeout: expected a number of seconds above 0"),
        ({"highlight": 3}, TypeError, "draw: highlight: expected a list of node ids, got 3"),
    ],
)
def test_a_bad_option_is_named_by_the_function_called(bad, error, text):
    with pytest.raises(error, match="^" + re.escape(text)):
        DrawOptions(**bad, caller="draw")
    x = tg.tensor(1.0, requires_grad=True)
    if set(bad) <= set(inspect.signature(tg.draw).parameters):
        with pytest.raises(error, match="^" + re.escape(text)):
            tg.draw(x * 2, **bad)  # tg.draw checks them once, before any walk
    with pytest.raises(error, match="^" + re.escape(text.replace("draw:", "build_graph:", 1))):
        build_graph(x * 2, **bad)


def test_an_unknown_option_gets_a_suggestion():
    x = tg.tensor(1.0, requires_grad=True)
    with pytest.raises(
        TypeError,
        match=re.escape("build_graph: unknown option 'colapse'\n  hint: did you mean collapse=?"),
    ):
        build_graph(x * 2, colapse=True)
    with pytest.raises(TypeError, match=re.escape("expected options=DrawOptions(...), got dict")):
        build_graph(x * 2, options={"view": "backward"})


def test_options_and_settings_give_the_same_graph():
    x = tg.tensor([1.0, 2.0], requires_grad=True, name="x")
    y = (x * 3).exp().sum()
    by_value = build_graph(y, options=DrawOptions(view="backward", max_nodes=3))
    by_name = build_graph(y, view="backward", max_nodes=3)
    changed = build_graph(y, options=DrawOptions(view="backward"), max_nodes=3)
    assert by_value.summary() == by_name.summary() == changed.summary()
    assert [n.id for n in by_value.nodes] == [n.id for n in by_name.nodes]
    assert [n.id for n in changed.nodes] == [n.id for n in by_name.nodes]


def test_every_entry_point_hands_its_options_to_build_graph(monkeypatch):
    from tinygrad_edu.widgets import pictures

    seen = []
    real = B._build

    def spy(roots, options):
        seen.append(options)
        return real(roots, options)

    monkeypatch.setattr(B, "_build", spy)
    x = tg.tensor([1.0, 2.0], requires_grad=True, name="x")
    y = (x * x).sum()
    tg.draw(y, view="backward", max_nodes=7, show_values=False, rankdir="LR")
    assert (seen[-1].view, seen[-1].max_nodes, seen[-1].show_values, seen[-1].rankdir) == (
        "backward",
        7,
        False,
        "LR",
    )
    mark = watermark()
    pictures.live_graph([y], DrawOptions(since=mark, max_nodes=60))
    assert (seen[-1].since, seen[-1].max_nodes) == (mark, 60)
    pictures.render_view([y], DrawOptions(view="backward", show_grads=False))
    assert (seen[-1].view, seen[-1].show_grads) == ("backward", False)
