"""The live graph's pieces without a kernel: registration, namespace scan, watch, notes."""

from __future__ import annotations

import re

import pytest

import tinygrad_edu as tg
from tinygrad_edu.core import function
from tinygrad_edu.core.errors import DataError
from tinygrad_edu.widgets import live
from tinygrad_edu.widgets.state import WatchList


class FakeEvents:
    def __init__(self) -> None:
        self.callbacks: dict[str, list] = {"pre_run_cell": [], "post_run_cell": []}

    def register(self, event, fn) -> None:
        self.callbacks[event].append(fn)

    def unregister(self, event, fn) -> None:
        self.callbacks[event].remove(fn)


class FakeShell:
    def __init__(self) -> None:
        self.events = FakeEvents()
        self.user_ns: dict = {}


@pytest.fixture
def shell():
    ip = FakeShell()
    yield ip
    live.unload_ipython_extension(ip)


def test_load_registers_once_and_unload_restores(shell):
    before = function._config["retain_outputs"]
    observers = len(function._thread.state.observers)
    live.load_ipython_extension(shell)
    live.load_ipython_extension(shell)
    assert [len(v) for v in shell.events.callbacks.values()] == [1, 1]
    assert function._config["retain_outputs"] is True
    assert len(function._thread.state.observers) == observers + 1
    live.unload_ipython_extension(shell)
    assert [len(v) for v in shell.events.callbacks.values()] == [0, 0]
    assert function._config["retain_outputs"] is before
    assert len(function._thread.state.observers) == observers
    live.unload_ipython_extension(shell)  # a second unload is harmless


def test_namespace_scan_skips_history_private_and_plain_tensors():
    x = tg.tensor([1.0], requires_grad=True, name="x")
    y = x * 2
    ns = {"x": x, "y": y, "_y": y, "Out": {1: y}, "data": tg.tensor([3.0]), "n": 3, "_1": y}
    roots, names, missing, key = live.watched(ns, WatchList())
    assert roots == [x, y] and list(names) == ["x", "y"] and missing == []
    assert [k[0] for k in key] == ["x", "y"]
    y.backward(tg.tensor([1.0]))
    assert live.watched(ns, WatchList())[3] != key  # x has a grad now: the key changes


def test_pinned_names_are_looked_up_each_time():
    x = tg.tensor([1.0], requires_grad=True)
    watch = WatchList(pinned=["loss", x])
    roots, names, missing, _ = live.watched({}, watch)
    assert roots == [x] and missing == ["loss"]
    loss = x * 3
    roots, names, missing, _ = live.watched({"loss": loss}, watch)
    assert roots == [loss, x] and names == {"loss": loss} and missing == []


def test_change_flag_ignores_ops_outside_graphs():
    flag = live._ChangeFlag()
    flag.changed = False
    remove = function.add_observer(flag)
    try:
        tg.tensor([1.0]) + 1
        assert flag.changed is False
        x = tg.tensor([1.0], requires_grad=True)
        with tg.no_grad():
            x * 2  # reads a graph tensor: its picture may change (values)
        assert flag.changed is True
        flag.changed = False
        (x * 2).sum().backward()
        assert flag.changed is True
    finally:
        remove()


def test_watch_rejects_other_things_with_a_hint():
    with pytest.raises(DataError) as err:
        tg.watch(3)
    assert str(err.value) == (
        "watch: expected Tensors or variable names, got int\n"
        '  hint: pass the tensor itself (tg.watch(loss)) or its name (tg.watch("loss"))'
    )
    assert repr(tg.watch()) == "LiveGraph(watching all graph tensors in the notebook)"


def test_failure_text_is_one_line_plus_hint():
    text = live.failure_text(RuntimeError("dot crashed\nlong details"))
    assert text.splitlines() == [
        "live graph: could not draw this cell's graph (RuntimeError: dot crashed)",
        "  hint: the cell itself ran fine; tg.watch(loss) draws fewer tensors, and "
        "%unload_ext tinygrad_edu turns the live graph off",
    ]
    assert re.search(r"0x[0-9a-f]+", text) is None


def test_touched_and_grad_flipped_tell_what_a_cell_changed():
    x = tg.tensor([1.0], requires_grad=True, name="x")
    y = x * 2
    before = live.watched({"x": x, "y": y}, WatchList())[3]
    z = y + 1
    roots, _, _, key = live.watched({"x": x, "y": y, "z": z}, WatchList())
    assert live.touched(roots, key, before, set()) == [z]  # only the new binding
    assert not live.grad_flipped(key, before)
    z.backward(tg.tensor([1.0]))
    after = live.watched({"x": x, "y": y, "z": z}, WatchList())[3]
    assert live.grad_flipped(after, key)  # x has a grad now, same tensor
    assert live.touched(roots, after, key, {id(z.grad_fn)}) == [x, z]  # x's grad, z backward


def test_keep_recent_shrinks_the_oldest_drawings_past_the_budget(shell, monkeypatch):
    shown, replaced = [], []
    monkeypatch.setattr(live, "_show", lambda bundle, display_id=None: shown.append(display_id))
    monkeypatch.setattr(live, "_replace", lambda display_id, b: replaced.append((display_id, b)))
    monkeypatch.setattr(live, "KEEP_RECENT_BYTES", 250)
    live.load_ipython_extension(shell)
    state = live._LIVE
    assert state.keep == "recent"  # the default
    for k, size in enumerate([100, 100, 40, 200, 300]):
        state.show({"text/html": "x" * size, "text/plain": f"drawing {k}"})
    assert shown == [f"tg-live-{k}" for k in range(1, 6)]
    # 100+100+40 fit in 250; the 200 pushes out the two oldest; the 300 is kept alone
    assert [display_id for display_id, _ in replaced] == [f"tg-live-{k}" for k in (1, 2, 3, 4)]
    assert replaced[0][1]["text/plain"] == "drawing 0\n" + live.REPLACED_NOTE
    assert [entry[0] for entry in state.kept] == ["tg-live-5"]
    state.keep = "all"
    for _ in range(3):
        state.show({"text/html": "x" * 300, "text/plain": "big"})
    assert len(replaced) == 4 and len(state.kept) == 4
    state.keep = "last"
    state.show({"text/html": "x", "text/plain": "small"})
    assert [display_id for display_id, _ in replaced[4:]] == [f"tg-live-{k}" for k in range(5, 9)]
    assert [entry[0] for entry in state.kept] == ["tg-live-9"]
