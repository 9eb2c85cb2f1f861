"""Issue 30's ops on random shapes, dims and dtypes (float, int64, int32, bool) agree with
PyTorch: the same values and dtype, or an error on both sides. The cases in ops_cases.py
check chosen inputs and gradients; this sweeps the inputs a course's code might pass.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tinygrad_edu as tg

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

BINARY = {
    "%": lambda lib, x, y: x % y,
    "fmod": lambda lib, x, y: lib.fmod(x, y),
    "//": lambda lib, x, y: x // y,
    "div trunc": lambda lib, x, y: lib.div(x, y, rounding_mode="trunc"),
    "div floor": lambda lib, x, y: lib.div(x, y, rounding_mode="floor"),
    "&": lambda lib, x, y: x & y,
    "|": lambda lib, x, y: x | y,
    "^": lambda lib, x, y: x ^ y,
    "logical_or": lambda lib, x, y: lib.logical_or(x, y),
}
ALONG = {  # ops along one dim d
    "flip": lambda lib, x, d: x.flip(d),
    "roll": lambda lib, x, d: x.roll(2, d),
    "cumsum": lambda lib, x, d: x.cumsum(d),
    "cumprod": lambda lib, x, d: x.cumprod(d),
    "sort": lambda lib, x, d: x.sort(dim=d, stable=True),
    "sort descending": lambda lib, x, d: x.sort(dim=d, descending=True, stable=True),
    "argsort": lambda lib, x, d: x.argsort(dim=d, stable=True),
    "count_nonzero": lambda lib, x, d: lib.count_nonzero(x, d),
    "sign": lambda lib, x, d: x.sign(),
    "trunc": lambda lib, x, d: x.trunc(),
    "mode": lambda lib, x, d: x.mode(d).values,
    "median": lambda lib, x, d: x.median(d).values,
    "kthvalue": lambda lib, x, d: x.kthvalue(1, d).values,
    "movedim": lambda lib, x, d: x.movedim(d, 0),
    "repeat_interleave": lambda lib, x, d: x.repeat_interleave(2, dim=d),
    "take_along_dim": lambda lib, x, d: lib.take_along_dim(x, x.argsort(dim=d, stable=True), d),
}


def _draw(rng, kind, shape):
    if kind == "float":
        return np.round(rng.standard_normal(shape) * 3, 1)  # ties and zeros happen
    if kind == "bool":
        return rng.random(shape) > 0.5
    a = rng.integers(-6, 7, shape)
    return a.astype(np.int32) if kind == "int32" else a


def _run(fn, lib, *args):
    try:
        return fn(lib, *[lib.tensor(a.copy()) if isinstance(a, np.ndarray) else a for a in args])
    except Exception as e:  # noqa: BLE001 - an error is an answer to compare
        return e


def _same(t, o) -> bool:
    if isinstance(t, Exception) or isinstance(o, Exception):
        return isinstance(t, Exception) and isinstance(o, Exception)
    if isinstance(t, tuple):
        return len(t) == len(o) and all(_same(a, b) for a, b in zip(t, o))
    a, b = t.numpy(), o.numpy()
    return (
        str(t.dtype).replace("torch.", "") == str(o.dtype)
        and a.shape == b.shape
        and np.allclose(a, b, rtol=1e-9, atol=1e-12, equal_nan=True)
    )


@pytest.mark.parametrize("kind", ["float", "int64", "int32", "bool"])
def test_random_inputs_agree_with_pytorch(kind):
    rng = np.random.default_rng(["float", "int64", "int32", "bool"].index(kind))
    bad = []
    for _ in range(40):
        nd = int(rng.integers(1, 4))
        shape = tuple(int(n) for n in rng.integers(1, 5, nd))
        x = _draw(rng, kind, shape)
        y = _draw(rng, kind, shape[int(rng.integers(0, nd)) :])  # broadcasts against x
        if kind in ("int64", "int32"):
            y = np.where(y == 0, 3, y).astype(y.dtype)  # integer division by zero: its own case
        for name, fn in BINARY.items():
            t, o = _run(fn, torch, x, y), _run(fn, tg, x, y)
            if not _same(t, o):
                bad.append(f"{name} {kind} {x.shape} {y.shape}: torch {t!r}, ours {o!r}")
        d = int(rng.integers(-nd, nd))
        for name, fn in ALONG.items():
            t, o = _run(fn, torch, x, d), _run(fn, tg, x, d)
            if not _same(t, o):
                bad.append(f"{name} {kind} {x.shape} dim {d}: torch {t!r}, ours {o!r}")
    assert not bad, "\n".join(bad[:10])


FUNCTIONS = {  # what a course applies to any tensor: whole numbers go to the default float
    "exp": lambda lib, x, d: x.exp(),
    "log": lambda lib, x, d: (x.abs() + 1).log() if x.dtype != lib.bool else x.log(),
    "sqrt": lambda lib, x, d: x.abs().sqrt() if x.dtype != lib.bool else x.sqrt(),
    "sin": lambda lib, x, d: x.sin(),
    "cos": lambda lib, x, d: x.cos(),
    "tanh": lambda lib, x, d: x.tanh(),
    "sigmoid": lambda lib, x, d: x.sigmoid(),
    "erf": lambda lib, x, d: x.erf(),
    "expm1": lambda lib, x, d: x.expm1(),
    "reciprocal": lambda lib, x, d: x.reciprocal(),
    "sum": lambda lib, x, d: x.sum(),
    "sum(d)": lambda lib, x, d: x.sum(d),
    "prod(d)": lambda lib, x, d: x.prod(d),
    "maximum": lambda lib, x, d: lib.maximum(x, x.flip(d)),
    "minimum": lambda lib, x, d: lib.minimum(x, x.flip(d)),
    "masked_fill": lambda lib, x, d: x.masked_fill(x.flip(d) > 0, 2.5),
    "clamp": lambda lib, x, d: x.clamp(-1.5, 2.5),
    "clamp int": lambda lib, x, d: x.clamp(min=-1),
    "where": lambda lib, x, d: lib.where(x.flip(d) > 0, x, 2.5),
    # PyTorch's method and function names for the comparisons (were missing)
    "eq": lambda lib, x, d: x.eq(x.flip(d)),
    "ne": lambda lib, x, d: lib.ne(x, 1),
    "lt": lambda lib, x, d: x.lt(x.flip(d)),
    "le": lambda lib, x, d: lib.le(x, 0),
    "gt": lambda lib, x, d: x.gt(0.5),
    "ge": lambda lib, x, d: x.ge(x.flip(d)),
    "greater": lambda lib, x, d: lib.greater(x, x.flip(d)),
    "less_equal": lambda lib, x, d: x.less_equal(1),
    "not_equal": lambda lib, x, d: x.not_equal(x.flip(d)),
    "clamp_min": lambda lib, x, d: x.clamp_min(-1),
    "clamp_max": lambda lib, x, d: lib.clamp_max(x, 2.5),
    "clamp_min(tensor)": lambda lib, x, d: x.clamp_min(x.flip(d)),
    "clamp_min_": lambda lib, x, d: x.clamp_min_(0),
    "clamp_max_": lambda lib, x, d: x.clamp_max_(x.flip(d)),
    "nansum": lambda lib, x, d: x.nansum(),
    "nansum(d)": lambda lib, x, d: lib.nansum(x, d, keepdim=True),
    # no kernel in PyTorch for these dtypes: refused on both sides (we answered)
    "abs": lambda lib, x, d: x.abs(),
    "relu": lambda lib, x, d: x.relu(),
    "round": lambda lib, x, d: x.round(),
    "argmax": lambda lib, x, d: x.argmax(d),
    "argmin": lambda lib, x, d: x.argmin(),
    "topk": lambda lib, x, d: x.topk(1, d).values,
    "softmax": lambda lib, x, d: x.softmax(d),
    "log_softmax": lambda lib, x, d: x.log_softmax(d),
    "std": lambda lib, x, d: x.std(),
    "var(d)": lambda lib, x, d: x.var(d),
}


@pytest.mark.filterwarnings("ignore:(std|var)\\(\\). degrees of freedom")  # torch's, one number
@pytest.mark.parametrize("kind", ["float", "int64", "int32", "bool"])
def test_functions_of_random_inputs_agree_with_pytorch(default, kind):
    """Both libraries on the same default float: the result dtype is PyTorch's (numpy's
    rules gave float64, or float16 for bool, and erf of ints came back as ints)."""
    rng = np.random.default_rng(10 + ["float", "int64", "int32", "bool"].index(kind))
    rtol = 1e-6 if default == "float32" else 1e-12
    bad = []
    for _ in range(20):
        nd = int(rng.integers(1, 4))
        x = _draw(rng, kind, tuple(int(n) for n in rng.integers(1, 5, nd)))
        if kind == "float":
            x[rng.random(x.shape) < 0.2] = np.nan  # for nansum (and nan everywhere else)
        d = int(rng.integers(-nd, nd))
        for name, fn in FUNCTIONS.items():
            t, o = _run(fn, torch, x, d), _run(fn, tg, x, d)
            if not _close(t, o, rtol):
                bad.append(f"{name} {kind} {x.shape} dim {d}: torch {t!r}, ours {o!r}")
    assert not bad, "\n".join(bad[:10])


def _close(t, o, rtol: float) -> bool:
    if isinstance(t, Exception) or isinstance(o, Exception):
        return isinstance(t, Exception) and isinstance(o, Exception)
    a, b = t.detach().numpy(), o.numpy()
    return (
        str(t.dtype).replace("torch.", "") == str(o.dtype)
        and a.shape == b.shape
        and np.allclose(a, b, rtol=rtol, atol=rtol, equal_nan=True)
    )


def _after(op: str):
    """`x op= y` through another name for x: PyTorch changes x itself (Python without
    __iand__ & co. rebinds the name to a new tensor, and x keeps its old numbers)."""
    code = f"def f(lib, x, y):\n    alias = x\n    alias {op} y\n    return x\n"
    scope: dict = {}
    exec(code, scope)  # noqa: S102 - the augmented assignment itself is what is tested
    return scope["f"]


IN_PLACE = {op: _after(op) for op in ("&=", "|=", "^=", "**=", "+=", "*=", "//=", "%=")}
KINDS = ["float32", "float64", "int64", "int32", "uint8", "bool"]
SHAPES = [(), (0,), (3,), (2, 3)]


def _draw_kind(rng, kind, shape):
    if kind == "uint8":
        return np.asarray(rng.integers(0, 7, shape), dtype=np.uint8)
    if kind == "float32":
        return np.asarray(_draw(rng, "float", shape), dtype=np.float32)
    return np.asarray(_draw(rng, "float" if kind == "float64" else kind, shape))


@pytest.mark.parametrize("kind", KINDS)
def test_augmented_assignment_changes_the_tensor_in_place(kind):
    """`x &= y`, `x |= y`, `x ^= y` and `x **= y` rebound the name (aliases and views kept
    the old numbers) and `**=` could turn a float32 tensor into float64; an int64 result
    into a uint8 tensor is stored (wrapping around, as PyTorch's), not refused; an empty
    tensor divided by zero is empty, not an error."""
    rng = np.random.default_rng(20 + KINDS.index(kind))
    bad = []
    for shape, kind2 in itertools.product(SHAPES, KINDS):
        x = _draw_kind(rng, kind, shape)
        y = _draw_kind(rng, kind2, shape[1:])
        if kind2 in ("int64", "int32"):  # whole numbers to negative powers: not this test's
            y = np.where(y == 0, 2, np.abs(y)).astype(y.dtype)
        for op, fn in IN_PLACE.items():
            for other in (y, 2):
                t, o = _run(fn, torch, x, other), _run(fn, tg, x, other)
                if not _close(t, o, 1e-6):
                    bad.append(f"{op} {kind}{shape} {kind2}: torch {t!r}, ours {o!r}")
    assert not bad, "\n".join(bad[:10])


DTYPED = {  # results whose dtype PyTorch picks by its own rule, not numpy's
    "all": lambda lib, x, d: x.all(),
    "any": lambda lib, x, d: x.any(),
    "all(d)": lambda lib, x, d: x.all(d),
    "any(d, keepdim)": lambda lib, x, d: x.any(d, keepdim=True),
    "max(d)": lambda lib, x, d: x.max(d),
    "min(d)": lambda lib, x, d: x.min(d, keepdim=True),
    "mode(d)": lambda lib, x, d: x.mode(d),
    "logsumexp(d)": lambda lib, x, d: x.logsumexp(d),
    "square": lambda lib, x, d: x.square(),
    "pow(2, x)": lambda lib, x, d: lib.pow(2, x.abs() if x.dtype in (lib.int64, lib.int32) else x),
    "pow(0.5, x)": lambda lib, x, d: lib.pow(0.5, x),
    "prod(d, keepdim)": lambda lib, x, d: x.prod(d, keepdim=True),  # of a 0-d: its dim 0 / -1
    "count_nonzero(d)": lambda lib, x, d: x.count_nonzero(d),
}


@pytest.mark.parametrize("kind", KINDS)
def test_result_dtypes_agree_with_pytorch(default, kind):
    """all/any of uint8 answer in uint8 (and take a dim), max/min/mode of a 0-d bool stay
    bool, logsumexp of uint8 no longer wraps around, square of bool is int64, and
    tg.pow(2, x) has x's dtype (it was float64)."""
    rng = np.random.default_rng(30 + KINDS.index(kind))
    rtol = 1e-6 if "float32" in (default, kind) else 1e-12
    bad = []
    for shape in SHAPES:
        x = _draw_kind(rng, kind, shape)
        for d in range(-max(len(shape), 1), max(len(shape), 1)):
            for name, fn in DTYPED.items():
                t, o = _run(fn, torch, x, d), _run(fn, tg, x, d)
                t, o = (tuple(t), tuple(o)) if isinstance(o, tuple) else (t, o)
                if not _close_all(t, o, rtol):
                    bad.append(f"{name} {kind}{shape} dim {d}: torch {t!r}, ours {o!r}")
    assert not bad, "\n".join(bad[:10])


def _close_all(t, o, rtol: float) -> bool:
    if isinstance(t, tuple) and isinstance(o, tuple):
        return len(t) == len(o) and all(_close(a, b, rtol) for a, b in zip(t, o))
    return _close(t, o, rtol)


GRADIENTS = {  # x.grad after f(x).sum().backward()
    "norm": lambda lib, x: x.norm(),
    "norm(dim)": lambda lib, x: x.norm(dim=-1),
    "norm(p=3, dim)": lambda lib, x: x.norm(3, dim=0, keepdim=True),
    "norm(inf)": lambda lib, x: x.norm(float("inf")),
    "median": lambda lib, x: x.median(),
    "median(dim)": lambda lib, x: x.median(-1).values,
    "amax": lambda lib, x: x.amax(),
    "std(dim)": lambda lib, x: x.std(0),
    "prod": lambda lib, x: x.prod(),
    "nansum": lambda lib, x: (x / x).nansum(-1) * x.sum(),  # 0 / 0 is nan: its gradient 0
    "kthvalue": lambda lib, x: x.kthvalue(1).values if x.ndim else x,
    "x ** -0.5": lambda lib, x: x**-0.5,
}


def _grad(fn, lib, a):
    x = lib.tensor(a.copy(), requires_grad=True)
    try:
        fn(lib, x).sum().backward()
    except Exception as e:  # noqa: BLE001 - an error is an answer to compare
        return e
    return x.grad


@pytest.mark.filterwarnings("ignore:std\\(\\). degrees of freedom")  # torch's, for one number
@pytest.mark.parametrize("kind", ["float32", "float64"])
def test_gradients_of_ties_and_zero_rows_agree_with_pytorch(kind):
    """The norm of a zero row (or of a number) has gradient 0, as PyTorch's, not nan (sqrt of
    a sum of squares); a median over all elements shares its gradient between the elements
    equal to it. Inputs repeat values and hold zero rows on purpose."""
    rng = np.random.default_rng(40 + (kind == "float64"))
    bad = []
    for shape in [(), (4,), (2, 3), (3, 1, 2)]:
        for _ in range(4):
            x = np.asarray(rng.integers(-2, 3, shape) / 2, dtype=kind)  # ties and zeros
            if x.ndim == 2:
                x[0] = 0  # a zero row
            for name, fn in GRADIENTS.items():
                t, o = _grad(fn, torch, x), _grad(fn, tg, x)
                if not _close(t, o, 1e-6):
                    bad.append(f"{name} {kind}{shape} {x.ravel()}: torch {t!r}, ours {o!r}")
    assert not bad, "\n".join(bad[:10])


@pytest.mark.parametrize("kind", ["int64", "int32", "uint8", "bool"])
def test_whole_number_powers_agree_with_pytorch(kind):
    """A tensor of negative whole powers gives 0, 1 or -1 as PyTorch's kernel (numpy refused:
    'Integers to negative integer powers'); a negative number as the power is refused on
    both sides, in the house format here."""
    rng = np.random.default_rng(50 + ["int64", "int32", "uint8", "bool"].index(kind))
    bad = []
    for shape in [(), (0,), (5,), (2, 3)]:
        x = _draw_kind(rng, kind, shape)
        for ekind in ["int64", "int32"]:
            e = _draw_kind(rng, ekind, shape[1:])
            cases = {
                "x ** e": lambda lib, x, e: x**e,
                "pow(x, e)": lambda lib, x, e: lib.pow(x, e),
                "x ** -2": lambda lib, x, e: x**-2,
                "pow_(-1)": lambda lib, x, e: x.pow_(-1),
                "3 ** e": lambda lib, x, e: 3**e,
            }
            for name, fn in cases.items():
                t, o = _run(fn, torch, x, e), _run(fn, tg, x, e)
                if not _same(t, o):
                    bad.append(f"{name} {kind}{shape} {ekind}: torch {t!r}, ours {o!r}")
    assert not bad, "\n".join(bad[:10])


PIECES = {  # shapes and dtypes of what sort / topk / split / chunk give back
    "sort": lambda lib, x: tuple(x.sort(stable=True)),
    # one element per row (which of tied elements PyTorch's topk picks is not promised);
    # bool is refused on both sides
    "topk": lambda lib, x: tuple((x[..., :1] if x.ndim else x).topk(1)),
    "split(1)": lambda lib, x: x.split(1),
    "split(2, -1)": lambda lib, x: x.split(2, -1),
    "chunk(2)": lambda lib, x: x.chunk(2),
    "chunk(3, -1)": lambda lib, x: x.chunk(3, -1),
    "unbind": lambda lib, x: x.unbind(),
}


@pytest.mark.parametrize("kind", KINDS)
def test_pieces_of_numbers_and_empty_tensors_agree_with_pytorch(kind):
    """sort of a 0-d bool stays bool (was int64); topk of a 0-d tensor gives a 0-d index (was
    shape (1,)); an empty dim splits into one empty piece (was none) and chunks into
    `chunks` empty pieces (was ZeroDivisionError)."""
    rng = np.random.default_rng(60 + KINDS.index(kind))
    bad = []
    for shape in [(), (0,), (2, 0), (0, 3), (5,), (2, 3)]:
        x = _draw_kind(rng, kind, shape)
        for name, fn in PIECES.items():
            t, o = _run(fn, torch, x), _run(fn, tg, x)
            if not _same(t, o):
                bad.append(f"{name} {kind}{shape}: torch {t!r}, ours {o!r}")
    assert not bad, "\n".join(bad[:10])


def test_where_with_the_condition_alone_gives_the_indices_as_pytorch():
    rng = np.random.default_rng(70)
    for shape in [(), (0,), (5,), (2, 3)]:
        x = np.asarray(_draw(rng, "float", shape))
        t, o = (
            _run(lambda lib, x: lib.where(x > 0), torch, x),
            _run(lambda lib, x: lib.where(x > 0), tg, x),
        )
        assert _same(t, o), (shape, t, o)
    with pytest.raises(TypeError, match="two values, or the condition alone"):
        tg.where(tg.tensor([True]), tg.tensor([1.0]))


@pytest.mark.parametrize("kind", ["float", "int64", "int32"])
def test_kthvalue_of_ties_picks_pytorchs_element(kind):
    """Of tied values PyTorch's kthvalue returns the one its quickselect stops at (k=3 of
    twenty equal numbers is index 13), not the first in sorted order; the gradient goes
    to that element. Few distinct values on purpose; nan counts as the largest."""
    rng = np.random.default_rng(80 + ["float", "int64", "int32"].index(kind))
    bad = []
    for _ in range(60):
        nd = int(rng.integers(1, 4))
        shape = tuple(int(n) for n in rng.integers(1, 12, nd))
        x = rng.integers(0, 3, shape)
        if kind == "float":
            x = x / 2
            x[rng.random(shape) < 0.1] = np.nan
        x = x.astype(np.int32) if kind == "int32" else x
        d = int(rng.integers(-nd, nd))
        k = int(rng.integers(1, shape[d] + 1))
        t, o = (
            _run(lambda lib, x, k, d: tuple(x.kthvalue(k, d, keepdim=True)), lib, x, k, d)
            for lib in (torch, tg)
        )
        if not _same(t, o):
            bad.append(f"kthvalue({k}, {d}) {kind} {x.tolist()}: torch {t!r}, ours {o!r}")
    assert not bad, "\n".join(bad[:5])


def test_powers_of_signed_zeros_and_infinities_agree_with_pytorch(default):
    """x ** -0.5 is PyTorch's rsqrt, 1 / sqrt(x): -inf at -0.0 and nan at -inf (IEEE pow
    gave +inf and 0); its neighbours already agreed, and are kept so. A 0-d tensor exponent
    is PyTorch's Tensor ** Tensor, IEEE pow (numpy took a 0-d 0.5 as sqrt: -0.0 at -0.0
    and nan at -inf, where PyTorch gives 0.0 and inf). Values and gradients."""
    values = [-0.0, 0.0, -np.inf, np.inf, 4.0, -4.0, np.nan, 0.3]
    bad = []
    numbers = (-0.5, 0.5, -1, -1.0, -2, -1.5, -3, 2, 3, 0.0, -np.inf)
    for e, as_tensor in [(e, False) for e in numbers] + [(e, True) for e in (0.5, -0.5, 2.0)]:
        for lib_name in ("value", "grad"):
            out = {}
            for lib in (torch, tg):
                x = lib.tensor(values, requires_grad=True)
                y = x ** lib.tensor(e) if as_tensor else x**e
                if lib_name == "grad":
                    y.sum().backward()
                    y = x.grad
                out[lib] = y.detach().numpy()
            t, o = out[torch], out[tg]
            signs = np.signbit(np.where(np.isnan(t), 0, t)), np.signbit(np.where(np.isnan(o), 0, o))
            rtol = 1e-6 if default == "float32" else 1e-12  # the last digit may differ
            if not (np.allclose(t, o, rtol, 0, equal_nan=True) and np.array_equal(*signs)):
                bad.append(f"x ** {e} (tensor: {as_tensor}) {lib_name}: torch {t}, ours {o}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize(
    "op, make",
    [
        ("abs", lambda lib: lib.tensor([True, False]).abs()),
        ("relu", lambda lib: lib.nn.functional.relu(lib.tensor([True, False]))),
        ("round", lambda lib: lib.tensor([True, False]).round()),
        ("argmax", lambda lib: lib.tensor([True, False]).argmax()),
        ("topk", lambda lib: lib.tensor([True, False]).topk(1)),
        ("softmax", lambda lib: lib.tensor([1, 2]).softmax(0)),
        ("log_softmax", lambda lib: lib.tensor([1, 2]).log_softmax(-1)),
        ("std", lambda lib: lib.tensor([1, 2]).std()),
        ("var", lambda lib: lib.tensor([1, 2], dtype=lib.uint8).var(0)),
    ],
)
def test_what_pytorch_has_no_kernel_for_is_refused_by_name(op, make):
    """numpy answered these (abs of bools, softmax of ints in float64); PyTorch refuses."""
    with pytest.raises((RuntimeError, NotImplementedError)):
        make(torch)
    with pytest.raises(TypeError) as err:
        make(tg)
    lines = str(err.value).splitlines()
    assert lines[0].startswith(f"{op}: needs ") and lines[0].endswith(", as in PyTorch")
    assert "test_ops_fuzz.py" in lines[1]  # the learner's line
    assert lines[-1] == "  hint: convert it first with .float() (or .long() for whole numbers)"
