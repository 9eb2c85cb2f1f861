"""Creation sites: the line that built a node, found once per line of code.

A drawing labels every node with its site, and a loop's nodes share a few lines, so a
line's site is kept once found (by code object and offset): asking again must give the
same answer without reading the line table and the source again.
"""

from __future__ import annotations

import linecache

import tinygrad_edu as tg
from tinygrad_edu.core import source


def _run(text: str, filename: str) -> dict:
    """Run `text` as if from a file called `filename` (its lines in linecache, as IPython
    does for a cell)."""
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace: dict = {"tg": tg}
    exec(compile(text, filename, "exec"), namespace)
    return namespace


def test_a_line_is_resolved_once_for_all_the_nodes_it_built(monkeypatch):
    ns = _run("x = tg.ones(3, requires_grad=True)\nys = [x * k for k in range(3)]\n", "<loop-cell>")
    nodes = [y.grad_fn for y in ns["ys"]]
    first = nodes[0].site
    assert str(first) == "<loop-cell>, line 2: ys = [x * k for k in range(3)]"
    looked_up = []
    line_at = source.line_at
    monkeypatch.setattr(source, "line_at", lambda *a: looked_up.append(a) or line_at(*a))
    assert [n.site for n in nodes] == [first] * 3
    assert looked_up == []


def test_the_same_file_name_run_again_with_other_code_shows_the_new_line():
    # a notebook cell's file name is its own, but a script edited and run again reuses one:
    # its new code object is a new key, so the line shown is the one that ran
    first = _run("x = tg.ones(2, requires_grad=True)\ny = x * 2\n", "<edited>")["y"].grad_fn
    assert str(first.site) == "<edited>, line 2: y = x * 2"
    again = _run("x = tg.ones(2, requires_grad=True)\ny = x + 5\n", "<edited>")["y"].grad_fn
    assert str(again.site) == "<edited>, line 2: y = x + 5"


def test_a_line_without_source_text_is_not_kept():
    # code run from a string has no text to show yet; it is looked up again next time
    linecache.cache.pop("<nowhere>", None)  # (left by an earlier run of this test)
    namespace: dict = {"tg": tg}
    exec(compile("x = tg.ones(2, requires_grad=True)\ny = x * 2\n", "<nowhere>", "exec"), namespace)
    node = namespace["y"].grad_fn
    assert str(node.site) == "<nowhere>, line 2"
    linecache.cache["<nowhere>"] = (1, None, ["\n", "y = x * 2\n"], "<nowhere>")
    assert str(node.site) == "<nowhere>, line 2: y = x * 2"


def test_two_cells_with_the_same_text_each_show_their_own_cell():
    # code objects compiled from the same text compare equal whatever their file: a site
    # kept by equality would show the first cell's number for the second cell's nodes
    text = "x = tg.ones(2, requires_grad=True)\ny = x * 3\n"
    first = _run(text, "<cell-one>")["y"].grad_fn
    second = _run(text, "<cell-two>")["y"].grad_fn
    assert str(first.site) == "<cell-one>, line 2: y = x * 3"
    assert str(second.site) == "<cell-two>, line 2: y = x * 3"
