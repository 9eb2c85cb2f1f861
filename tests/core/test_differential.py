"""Random programs give PyTorch's values, gradients and errors (tests/differential.py).

A bounded number of hypothesis examples here; `scripts/fuzz_torch.py` runs the long
campaign. Without torch, smooth random programs are checked against finite differences.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import differential as dt  # noqa: E402

import tinygrad_edu as tg  # noqa: E402

_settings = settings(
    max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)


def _check(program: dt.Program) -> None:
    torch_lib = dt.torch_lib()
    m = dt.differ(program, torch_lib)
    if m is not None and dt.known(m):  # a documented difference (docs/pytorch_differences.md)
        return
    assert m is None, f"{m.kind}{' (silently wrong)' if m.silent else ''}: {m.detail}\n{program}"


@pytest.mark.torch
@_settings
@given(st.randoms(use_true_random=False))
def test_random_programs_match_pytorch(rng):
    pytest.importorskip("torch")
    _check(dt.generate(rng))


@pytest.mark.torch
@_settings
@given(st.randoms(use_true_random=False))
def test_random_inplace_programs_match_pytorch(rng):
    pytest.importorskip("torch")
    _check(dt.generate(rng, inplace_only=True, more_ops=True))  # copy_, unbind, chunk, ...


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.randoms(use_true_random=False))
def test_random_smooth_programs_match_finite_differences(rng):
    assert dt.fd_check(dt.generate(rng, smooth=True))


def test_the_comparison_can_fail():
    """A tinygrad that gets one gradient wrong is caught (and counted as silently wrong)."""
    program = dt.seeded(7, smooth=True, n_steps=3)
    ours = dt.run(program, dt.TG)
    theirs = dt.run(program, dt.TG)
    assert dt.compare(ours, theirs) is None
    key = next(k for k, v in theirs.grads.items() if v is not None)
    theirs.grads[key] = theirs.grads[key] + 1.0
    m = dt.compare(ours, theirs)
    assert m is not None and m.kind == "grad" and m.silent
    theirs.error, theirs.error_at = RuntimeError("refused"), "phase backward"
    m = dt.compare(ours, theirs)
    assert m.kind == "torch-raised" and m.silent


def test_an_inplace_error_matches_pytorchs_version_error():
    rec = dt.Record(error=tg.InplaceError("x"), error_at="phase backward")
    torch_text = (
        "one of the variables needed for gradient computation has been modified by an "
        "inplace operation: [torch.DoubleTensor [3]] is at version 1; expected version 0"
    )
    other = dt.Record(error=RuntimeError(torch_text), error_at="phase backward")
    assert dt.compare(rec, other) is None
    other.error = RuntimeError("mat1 and mat2 shapes cannot be multiplied")
    assert dt.compare(rec, other).kind == "error-kind"


@pytest.mark.torch
@pytest.mark.parametrize("seed", [0])
def test_the_campaign_script_runs(seed, capsys):
    pytest.importorskip("torch")
    scripts = Path(__file__).resolve().parents[2] / "scripts"
    sys.path.insert(0, str(scripts))
    import fuzz_torch

    status = fuzz_torch.main(["-n", "5", "--seed", str(seed * 100), "--progress", "0"])
    out = capsys.readouterr().out
    assert "5 programs" in out and "silently wrong: " in out
    assert status == (0 if "mismatches: 0" in out else 1)


@pytest.mark.torch
def test_the_sign_of_a_zero_from_matmul_depends_on_pytorchs_kernel():
    # why "matmul-signed-zero" is a KNOWN difference and not a rule to copy: the same
    # numbers give -0.0 as a 2-D product and +0.0 as a batched one in PyTorch
    torch = pytest.importorskip("torch")
    a = torch.tensor([[-0.5], [2.0]], dtype=torch.float64)
    b = torch.tensor([[0.0, 1.5]], dtype=torch.float64)
    assert torch.signbit((a @ b)[0, 0]) and not torch.signbit((a[None] @ b[None])[0, 0, 0])
    assert not np.signbit(np.matmul(a.numpy(), b.numpy())[0, 0])  # numpy: +0.0


@pytest.mark.torch
def test_a_signed_zero_from_matmul_is_told_apart_from_a_wrong_value(monkeypatch):
    # seed 92223 of the in-place campaign: -1.5 / (x @ w) with a zero product, -inf here
    # and +inf in PyTorch; with matmul's zeros made +0.0 on both sides they agree
    pytest.importorskip("torch")
    program = dt.seeded(92223, inplace_only=True)
    m = dt.differ(program, dt.torch_lib())
    assert m.kind == "matmul-signed-zero" and "inf" in m.detail
    assert dt.known(m) is not None
    # a matmul that gets a number wrong is still a plain mismatch
    monkeypatch.setattr(dt.TG, "matmul", staticmethod(lambda a, b: (a @ b) * 1.001))
    m = dt.differ(program, dt.torch_lib())
    assert m.kind in ("forward", "grad") and dt.known(m) is None


def test_programs_are_reproducible_from_a_seed():
    a, b = dt.seeded(11), dt.seeded(11)
    assert str(a) == str(b)
    assert all(np.array_equal(x, y) for x, y in zip(a.weights, b.weights))
    assert random.Random(11).random() == random.Random(11).random()
