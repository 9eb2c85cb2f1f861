"""Random training programs give PyTorch's losses, gradients, weights, running statistics
and optimizer state, step after step (tests/nn_differential.py).

A few hundred seeded programs and a bounded number of hypothesis examples here;
`scripts/fuzz_nn.py` runs the long campaign.
"""

from __future__ import annotations

import dataclasses
import random
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import nn_differential as nd  # noqa: E402

_settings = settings(
    max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)


def _check(program: nd.NNProgram) -> None:
    m = nd.differ(program, nd.torch_lib())
    if m is not None and nd.known(m):  # a documented difference (docs/pytorch_differences.md)
        return
    assert m is None, f"{m.kind}{' (silently wrong)' if m.silent else ''}: {m.detail}\n{program}"


@pytest.mark.torch
@pytest.mark.parametrize("first", range(0, 300, 50))
def test_seeded_training_programs_match_pytorch(first):
    pytest.importorskip("torch")
    for seed in range(first, first + 50):
        _check(nd.seeded(seed))


@pytest.mark.torch
@_settings
@given(st.randoms(use_true_random=False))
def test_random_training_programs_match_pytorch(rng):
    pytest.importorskip("torch")
    _check(nd.generate(rng))


def test_the_comparison_can_fail():
    """A tinygrad that gets one number wrong is caught (and counted as silently wrong)."""
    program = next(p for p in map(nd.seeded, range(100)) if nd.run(p, nd.TG).error is None)
    ours, theirs = nd.run(program, nd.TG), nd.run(program, nd.TG)
    assert nd.compare(ours, theirs) is None
    name = next(iter(theirs.snapshots[-1]["params"]))
    theirs.snapshots[-1]["params"][name] = theirs.snapshots[-1]["params"][name] + 1e-6
    m = nd.compare(ours, theirs)
    assert m is not None and m.kind == "param" and m.silent and name in m.detail
    theirs.error, theirs.error_at = RuntimeError("refused"), "step 0 forward"
    m = nd.compare(ours, theirs)
    assert m.kind == "torch-raised" and m.silent


def test_a_gradient_that_is_none_on_one_side_only_is_a_mismatch():
    program = next(p for p in map(nd.seeded, range(100)) if nd.run(p, nd.TG).error is None)
    ours, theirs = nd.run(program, nd.TG), nd.run(program, nd.TG)
    name = next(iter(theirs.snapshots[0]["grads"]))
    theirs.snapshots[0]["grads"][name] = None
    ours.snapshots[0]["grads"][name] = np.zeros(1)
    assert nd.compare(ours, theirs).kind == "grad"


def test_programs_are_reproducible_from_a_seed():
    a, b = nd.seeded(11), nd.seeded(11)
    assert str(a) == str(b) and nd.reproducer(a) == nd.reproducer(b)
    assert all(np.array_equal(x, y) for x, y in zip(a.inputs, b.inputs))
    assert random.Random(11).random() == random.Random(11).random()


@pytest.mark.torch
def test_the_reproducer_is_pytorch_code_that_runs():
    torch = pytest.importorskip("torch")
    import torch.nn as nn
    import torch.optim as optim

    default = torch.get_default_dtype()
    ran = 0
    try:
        for program in map(nd.seeded, range(40)):
            if program.closure or nd.run(program, nd.torch_lib()).error is not None:
                continue
            scope = {"torch": torch, "nn": nn, "optim": optim}
            exec(compile(nd.reproducer(program), "<reproducer>", "exec"), scope)  # noqa: S102
            assert "loss" in scope
            ran += 1
    finally:
        torch.set_default_dtype(default)
    assert ran > 20


@pytest.mark.torch
def test_the_campaign_script_runs(capsys):
    pytest.importorskip("torch")
    scripts = Path(__file__).resolve().parents[2] / "scripts"
    sys.path.insert(0, str(scripts))
    import fuzz_nn

    status = fuzz_nn.main(["-n", "5", "--seed", "0", "--progress", "0"])
    out = capsys.readouterr().out
    assert "5 programs" in out and "silently wrong: " in out
    assert status == (0 if "mismatches: 0" in out else 1)


@pytest.mark.torch
def test_rounding_noise_is_told_apart_from_a_wrong_step(monkeypatch):
    # seed 8: a LayerNorm over one number, whose weight's gradient is 0 here and ~1e-16 in
    # PyTorch; RMSprop turns that into a step of size lr. With gradients below 1e-7 made
    # 0 in both libraries the two agree, so it is counted as "tiny-gradient"
    pytest.importorskip("torch")
    program = nd.seeded(8)
    m = nd.differ(program, nd.torch_lib())
    assert m.kind == "tiny-gradient" and nd.known(m) is not None
    # an RMSprop that gets its step wrong is still a plain mismatch
    update = nd.TG.optim.RMSprop._update
    monkeypatch.setattr(nd.TG.optim.RMSprop, "_update", lambda *a: update(*a) * 1.001)
    m = nd.differ(program, nd.torch_lib())
    assert m.kind in ("param", "state") and nd.known(m) is None


@pytest.mark.torch
def test_an_inplace_activation_pytorch_refuses_must_give_the_out_of_place_answer(monkeypatch):
    # seed 217: LeakyReLU(negative_slope=-0.5, inplace=True); PyTorch refuses its backward,
    # tinygrad's gradient is PyTorch's for the same model without inplace=True
    pytest.importorskip("torch")
    program = nd.seeded(217)
    m = nd.differ(program, nd.torch_lib())
    assert m.kind == "inplace-activation" and nd.known(m) is not None
    # when the out-of-place run gives other numbers (here: other weights), it is not accepted
    out_of_place = nd._out_of_place
    monkeypatch.setattr(
        nd, "_out_of_place", lambda p: dataclasses.replace(out_of_place(p), weight_seed=1)
    )
    m = nd.differ(program, nd.torch_lib())
    assert m.kind == "torch-raised" and nd.known(m) is None
