"""Fixtures shared by the tests that compare with PyTorch."""

from __future__ import annotations

import pytest

import tinygrad_edu as tg


@pytest.fixture(params=["float32", "float64"])
def default(request):
    """Both libraries' default dtype set to the parameter for one test, then put back."""
    torch = pytest.importorskip("torch")
    old_torch, old_tg = torch.get_default_dtype(), tg.get_default_dtype()
    torch.set_default_dtype(getattr(torch, request.param))
    tg.set_default_dtype(getattr(tg, request.param))
    yield request.param
    torch.set_default_dtype(old_torch)
    tg.set_default_dtype(old_tg)
