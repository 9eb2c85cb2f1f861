"""Acceptance (issue 17): PyTorch programs run unchanged with `import tinygrad_edu as torch`.

Each program of `programs.py` runs twice: once with `torch` the real PyTorch, once with
`torch` (and `torch.nn`, `torch.optim`, ...) bound to tinygrad_edu. What they print must
agree: the same words, and numbers equal to 1e-4 relative or to one unit of the last
digit printed. Both run with PyTorch's default dtype, float32 (`set_default_dtype`), so
a program mixing its own float32 data with new parameters works as it does in PyTorch.
Programs that draw random numbers print only what holds for any draw: the libraries'
generators differ. Skipped without torch.
"""

import contextlib
import io
import re
import sys

import pytest

import tinygrad_edu

from .programs import KNOWN_GAPS, PROGRAMS

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

# `import torch.nn as nn` inside a program must find tinygrad_edu's modules
_OURS = {
    "torch": "tinygrad_edu",
    "torch.nn": "tinygrad_edu.nn",
    "torch.nn.functional": "tinygrad_edu.nn.functional",
    "torch.nn.init": "tinygrad_edu.nn.init",
    "torch.nn.utils": "tinygrad_edu.nn.utils",
    "torch.optim": "tinygrad_edu.optim",
    "torch.optim.lr_scheduler": "tinygrad_edu.optim.lr_scheduler",
    "torch.utils": "tinygrad_edu.utils",
    "torch.utils.data": "tinygrad_edu.utils.data",
    "torch.autograd": "tinygrad_edu.autograd",
}


@contextlib.contextmanager
def _as_torch():
    import importlib

    saved = {name: sys.modules.get(name) for name in _OURS}
    try:
        for name, ours in _OURS.items():
            sys.modules[name] = importlib.import_module(ours)
        yield
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def run(source: str, ours: bool) -> str:
    out = io.StringIO()
    scope = {"__name__": "__program__"}
    lib = tinygrad_edu if ours else torch
    old = lib.get_default_dtype()
    lib.set_default_dtype(lib.float32 if DEFAULT == "float32" else lib.float64)
    try:
        with contextlib.redirect_stdout(out), _as_torch() if ours else contextlib.nullcontext():
            exec(compile(source, "<program>", "exec"), scope)
    finally:
        lib.set_default_dtype(old)
    return out.getvalue()


DEFAULT = "float32"


_NUMBER = re.compile(r"-?\d+(?:\.\d*)?(?:e[-+]?\d+)?")


_SIZE = re.compile(r"(?:torch\.)?Size\(\[([^\]]*)\]\)")


_DTYPE = re.compile(r"torch\.((?:float|int|uint|bool|complex)\d*)\b")


def _as_tuple(match: re.Match) -> str:
    inner = match.group(1)
    return f"({inner},)" if inner and "," not in inner else f"({inner})"


def _normalise(text: str) -> str:
    # the two spelling differences allowed (docs/pytorch_compat.md lists them): a shape
    # prints as the tuple (2, 3), PyTorch's as torch.Size([2, 3]); a dtype as float64,
    # PyTorch's as torch.float64
    return _DTYPE.sub(r"\1", _SIZE.sub(_as_tuple, text))


def _last_digit(token: str) -> float:
    """One unit of the last digit printed (0.123 -> 0.001): rounding may flip it."""
    if "." not in token or "e" in token:
        return 0.0
    return 1.01 * 10.0 ** -len(token.split(".")[1])


def differences(theirs: str, ours: str, rtol: float = 1e-4, atol: float = 1e-6) -> list:
    """Lines whose words differ, or whose numbers differ by more than the tolerance."""
    bad = []
    t_lines, o_lines = _normalise(theirs).splitlines(), _normalise(ours).splitlines()
    if len(t_lines) != len(o_lines):
        return [f"{len(t_lines)} lines from torch, {len(o_lines)} from tinygrad_edu"]
    for t, o in zip(t_lines, o_lines):
        tn, on = _NUMBER.findall(t), _NUMBER.findall(o)
        words_t, words_o = _NUMBER.sub("#", t).split(), _NUMBER.sub("#", o).split()
        same = (
            words_t == words_o
            and len(tn) == len(on)
            and all(
                abs(float(a) - float(b)) <= max(atol + rtol * abs(float(a)), _last_digit(a))
                for a, b in zip(tn, on)
            )
        )
        if not same:
            bad.append(f"torch: {t}\n ours: {o}")
    return bad


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_prints_what_pytorch_prints(name):
    theirs = run(PROGRAMS[name], ours=False)
    ours = run(PROGRAMS[name], ours=True)
    assert theirs.strip(), "the program printed nothing"
    bad = differences(theirs, ours)
    assert not bad, "\n".join(bad)


def test_the_comparison_can_fail():
    assert differences("loss 0.5000\n", "loss 0.5002\n")
    assert not differences("loss 0.5000\n", "loss 0.5001\n")  # rounding may flip a digit
    assert differences("7 steps\n", "8 steps\n")
    assert differences("True\n", "False\n")
    assert not differences("torch.Size([2, 3]) 1.0\n", "(2, 3) 1.0000001\n")
    assert not differences("torch.Size([16]) torch.Size([])\n", "Size([16]) ()\n")
    assert differences("torch.Size([16])\n", "(16, 1)\n")
    assert not differences(
        "tensor([1.], dtype=torch.float64) torch.int64\n", "tensor([1.], dtype=float64) int64\n"
    )
    assert differences("torch.int64\n", "int32\n")
    assert tinygrad_edu.__name__ == "tinygrad_edu"


@pytest.mark.parametrize("name", KNOWN_GAPS)
def test_known_gap_still_fails(name):
    source, reason = KNOWN_GAPS[name]
    theirs = run(source, ours=False)
    try:
        ours = run(source, ours=True)
    except Exception:  # noqa: BLE001 - any failure is the gap we know about
        return
    assert differences(theirs, ours), f"{name} runs now ({reason} was fixed): move it to PROGRAMS"
