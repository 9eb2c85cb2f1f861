"""The dtype of `tensor <op> operand` is PyTorch's (issue 30): an int or bool tensor with a
Python float takes the default float dtype (float32 after `set_default_dtype`), not numpy's
float64; a Python int keeps an int tensor's dtype; a Python bool takes the tensor's; `/` of
whole numbers gives the default float; a tensor with axes decides before a 0-d one; `-`
with a bool operand is refused. Every arithmetic and comparison operator, with int, bool
and float tensors, Python floats, ints and bools on either side, under float32 and float64
defaults, against torch: the dtype, the values, or an error on both sides.
"""

from __future__ import annotations

import operator

import numpy as np
import pytest

import tinygrad_edu as tg

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

OPS = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": operator.mod,
    "**": operator.pow,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
    "&": operator.and_,
    "|": operator.or_,
    "^": operator.xor,
}
DTYPES = ("int64", "int32", "int16", "uint8", "bool", "float32", "float64")
SCALARS = (2.5, -1.0, 0.0, 3, 0, -2, True, False)
VALUES = {"bool": [True, False, True], "uint8": [1, 2, 7]}
# what PyTorch computes and tinygrad_edu refuses, by name (docs/pytorch_compat.md says so)
REFUSED = {
    ("bool", "**", True): "a bool tensor to a Python bool power (PyTorch: the tensor itself)",
    ("bool", "**", False): "a bool tensor to a Python bool power (PyTorch: all True)",
}


def _tensor(lib, dtype: str, values=None, shape=(3,), op=""):
    # NOTE: numpy refuses an integer to a negative integer power; PyTorch rounds it to 0
    whole = [1, 2, 7] if op == "**" else [1, -2, 7]
    vals = VALUES.get(dtype, whole) if values is None else values
    vals = vals if shape else vals[0]
    return lib.tensor(vals, dtype=getattr(lib, dtype))


def _outcome(fn):
    """('dtype', values) or ('error', None): what one side did."""
    try:
        out = fn()
    except Exception:  # noqa: BLE001 - both sides must refuse; which class is each's own
        return "error", None
    dt = str(out.dtype).replace("torch.", "")
    return dt, np.asarray(out.detach().numpy() if hasattr(out, "detach") else out)


def _agree(theirs, ours, what: str) -> None:
    assert ours[0] == theirs[0], f"{what}: torch gives {theirs[0]}, tinygrad_edu {ours[0]}"
    if theirs[1] is not None:
        np.testing.assert_allclose(
            ours[1].astype(np.float64), theirs[1].astype(np.float64), rtol=1e-6, err_msg=what
        )


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_with_python_number(default, dtype, op):
    fn = OPS[op]
    for s in SCALARS:
        # PyTorch wraps -2 around to 254 for uint8, as here; compared, it is refused here
        wrapped = dtype == "uint8" and type(s) is int and s < 0 and op in "< <= > >= == !="
        for reflected in (False, True):
            what = f"{'s' if reflected else 't'} {op} {'t' if reflected else 's'}"
            what += f" with t {dtype}, s = {s!r}, default {default}"

            def run(lib, s=s, reflected=reflected):
                t = _tensor(lib, dtype, op=op)
                return _outcome(lambda: fn(s, t) if reflected else fn(t, s))

            if wrapped or (not reflected and (dtype, op, s) in REFUSED and type(s) is bool):
                assert run(tg)[0] == "error" and run(torch)[0] != "error", what
                continue
            _agree(run(torch), run(tg), what)


@pytest.mark.parametrize("op", ["+", "-", "*", "/", "**", "%", "//", "<", "=="])
@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_with_tensor(default, dtype, op):
    """Two tensors: the higher kind wins; within a kind, the one with axes decides."""
    fn = OPS[op]
    for other in DTYPES:
        for shape in ((3,), ()):
            what = f"t {op} u with t {dtype}, u {other} of shape {shape}, default {default}"

            def run(lib, other=other, shape=shape):
                t, u = _tensor(lib, dtype, op=op), _tensor(lib, other, [3, 1, 2], shape)
                return _outcome(lambda: fn(t, u))

            _agree(run(torch), run(tg), what)


def test_the_old_promotion_is_gone():
    """What the test above guards: numpy alone turns int64 and float32 into float64."""
    old = tg.get_default_dtype()
    tg.set_default_dtype(tg.float32)
    try:
        assert (np.arange(3) * np.float32(2.5)).dtype == np.float64
        assert (tg.arange(3) * 2.5).dtype == tg.float32
        assert (tg.arange(3) / 2).dtype == tg.float32
        assert (tg.arange(3) + tg.ones(3)).dtype == tg.float32
        assert (tg.tensor([1, 2], dtype=tg.int32) + True).dtype == tg.int32
    finally:
        tg.set_default_dtype(old)


def test_gradients_flow_back_in_each_dtype(default):
    """A float32 tensor with a 0-d float64 one computes in float32; each gradient comes
    back in its own tensor's dtype, as in PyTorch."""
    grads, dtypes = {}, set()
    for lib in (torch, tg):
        x = lib.tensor([0.5, -1.5, 2.0], dtype=lib.float32, requires_grad=True)
        w = lib.tensor(3.0, dtype=lib.float64, requires_grad=True)
        y = (x * w + w / x - (lib.arange(3) * 0.5) * x) ** 2
        dtypes.add(str(y.dtype).replace("torch.", ""))  # the arange's default float decides
        y.sum().backward()
        grads[lib] = [
            (str(g.dtype).replace("torch.", ""), g.detach().numpy()) for g in (x.grad, w.grad)
        ]
    assert dtypes == {default}
    for (t_dt, t_val), (o_dt, o_val) in zip(grads[torch], grads[tg]):
        assert o_dt == t_dt
        np.testing.assert_allclose(o_val, t_val, rtol=1e-5)


def test_subtracting_a_bool_is_refused_with_a_hint():
    mask = tg.tensor([True, False])
    with pytest.raises(TypeError) as err:
        1 - mask
    assert str(err.value).splitlines()[0] == (
        "sub: cannot subtract with a boolean operand (shapes (2,) and ()), as in PyTorch"
    )
    assert str(err.value).splitlines()[-1] == (
        "  hint: to invert a mask use ~mask or mask.logical_not(); for two masks, a ^ b"
    )
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with a bool tensor"):
        1 - torch.tensor([True, False])


@pytest.mark.parametrize("value", [np.float32(1.5), np.float64(1.5), np.int32(3), np.bool_(True)])
def test_a_numpy_number_keeps_its_dtype(default, value):
    """torch.tensor(np.float32(1.5)) is float32 whatever the default, as an array would be."""
    theirs, ours = torch.tensor(value), tg.tensor(value)
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
    assert str(ours) == str(theirs).replace("torch.", "")


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d != "bool"])
def test_clamp_with_number_bounds_takes_pytorchs_dtype(default, dtype):
    """An int tensor clamped by a float bound gives the default float (numpy gave float64);
    in place, that result is refused as PyTorch refuses it."""
    for lo, hi in ((0.5, 2.5), (0, 2), (None, 2.5), (1, None), (-1.5, None)):
        for name in ("clamp", "clip", "clamp_", "clip_"):
            what = f"t.{name}({lo}, {hi}) with t {dtype}, default {default}"

            def run(lib, name=name, lo=lo, hi=hi):
                return _outcome(lambda: getattr(_tensor(lib, dtype), name)(lo, hi))

            _agree(run(torch), run(tg), what)


WHOLE = ("int64", "int32", "int16", "uint8", "bool")
FLOAT_OF_WHOLE = {  # PyTorch computes these of whole numbers in the default float
    "exp": lambda t: t.exp(),
    "log": lambda t: t.log(),
    "sqrt": lambda t: t.sqrt(),
    "sin": lambda t: t.sin(),
    "cos": lambda t: t.cos(),
    "tanh": lambda t: t.tanh(),
    "sigmoid": lambda t: t.sigmoid(),
    "erf": lambda t: t.erf(),  # was cast back to the ints: all 0 or +-1
    "expm1": lambda t: t.expm1(),
    "log1p": lambda t: t.log1p(),
    "reciprocal": lambda t: t.reciprocal(),
}


@pytest.mark.parametrize("op", FLOAT_OF_WHOLE)
@pytest.mark.parametrize("dtype", WHOLE)
def test_float_functions_of_whole_numbers_give_the_default_float(default, dtype, op):
    """numpy picks float64 for ints and float16 for uint8 and bool; PyTorch the default."""
    what = f"t.{op}() with t {dtype}, default {default}"
    values = [1, 0, 3] if dtype in ("uint8", "bool") else [1, 2, 7]

    def run(lib):
        return _outcome(lambda: FLOAT_OF_WHOLE[op](_tensor(lib, dtype, values)))

    _agree(run(torch), run(tg), what)


WHOLE_RESULTS = {
    "sum": lambda lib, t: t.sum(),
    "sum(0)": lambda lib, t: t.sum(0),
    "prod": lambda lib, t: t.prod(),
    "masked_fill(2.7)": lambda lib, t: t.masked_fill(t > 0, 2.7),
    "masked_fill(-2.7)": lambda lib, t: t.masked_fill(t > 0, -2.7),
    "maximum": lambda lib, t: lib.maximum(t, lib.ones_like(t)),
    "minimum": lambda lib, t: lib.minimum(t, lib.ones_like(t)),
    "addcmul(value=1.7)": lambda lib, t: t.addcmul(t, t, value=1.7),
}


@pytest.mark.parametrize("op", WHOLE_RESULTS)
@pytest.mark.parametrize("dtype", WHOLE + ("float32",))
def test_whole_number_results_keep_pytorchs_dtype(default, dtype, op):
    """sum and prod of bool and small ints are int64; a float filled or multiplied into ints
    is cast to them; maximum of ints stays int (no mean of a tie)."""
    if dtype == "bool" and op.startswith(("prod", "addcmul", "masked_fill(-")):
        pytest.skip("PyTorch refuses these for bool, or casts in its own way")
    what = f"{op} with t {dtype}, default {default}"

    def run(lib):
        return _outcome(lambda: WHOLE_RESULTS[op](lib, _tensor(lib, dtype, [1, 0, 3])))

    _agree(run(torch), run(tg), what)


def test_maximum_of_floats_still_shares_a_tie_gradient():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    tg.maximum(x, tg.tensor([1.0, 0.0])).sum().backward()
    assert x.grad.tolist() == [0.5, 1.0]


def test_a_fill_value_that_does_not_fit_is_refused_by_name():
    t = tg.tensor([1, 0, 3], dtype=tg.uint8)
    with pytest.raises(TypeError) as err:
        t.masked_fill(t > 0, -2.7)
    assert str(err.value).splitlines()[0] == (
        "masked_fill: the value -2.7 cannot be stored in this uint8 tensor (shape (3,)) "
        "without overflow, as in PyTorch"
    )
    with pytest.raises(RuntimeError, match="cannot be converted to type uint8_t without overflow"):
        torch.tensor([1, 0, 3], dtype=torch.uint8).masked_fill(torch.tensor(True), -2.7)


@pytest.mark.parametrize("dtype", ["int64", "bool", "float32", "float64"])
@pytest.mark.parametrize("op", ["sum", "mean"])
def test_sum_and_mean_take_pytorchs_dtype_argument(default, dtype, op):
    for target in ("float32", "float64", "int64"):
        what = f"t.{op}(dtype={target}) with t {dtype}, default {default}"

        def run(lib, target=target):
            t = _tensor(lib, dtype, [1, 0, 3])
            return _outcome(lambda: getattr(t, op)(dtype=getattr(lib, target)))

        _agree(run(torch), run(tg), what)
    with pytest.raises(TypeError, match=f"^{op}: unknown dtype 'floaty'"):
        getattr(tg.tensor([1.0]), op)(dtype="floaty")


def test_a_mean_in_whole_numbers_is_refused_with_a_hint():
    with pytest.raises(TypeError) as err:
        tg.tensor([1.0, 2.0]).mean(dtype=tg.int64)
    lines = str(err.value).splitlines()
    assert (
        lines[0] == "mean: dtype=int64 cannot hold a mean: it must be a float dtype, as in PyTorch"
    )
    assert lines[-1] == (
        "  hint: use mean(dtype=tg.float64), or sum(dtype=...) for a whole-number total"
    )


SMALL_INTS = ("uint8", "int8", "int16", "int32")
OUT_OF_RANGE = (-1, -3, 200, 255, 300, 70000, 2**40, 2**63, 2**64 - 1, -(2**63), 2**70)


@pytest.mark.parametrize("op", ["+", "-", "*", "/", "//", "%", "&", "|", "^", "**"])
@pytest.mark.parametrize("dtype", SMALL_INTS)
def test_a_number_the_dtype_cannot_hold_wraps_around_as_in_pytorch(default, dtype, op):
    """`uint8 + -1` counts down modulo 256 (PyTorch stores -1 as 255); numpy raised a bare
    OverflowError. `/` computes in the default float: -2 stays -2. A power is checked as a
    stored number (`uint8 ** 300` refused; it wrapped to `** 44`); past 64 bits, refused."""
    fn = OPS[op]
    for s in OUT_OF_RANGE:
        for reflected in (False, True):
            what = f"{'s' if reflected else 't'} {op} {'t' if reflected else 's'}"
            what += f" with t {dtype}, s = {s}, default {default}"

            def run(lib, s=s, reflected=reflected):
                t = lib.tensor([1, 2, 7], dtype=getattr(lib, dtype))
                return _outcome(lambda: fn(s, t) if reflected else fn(t, s))

            _agree(run(torch), run(tg), what)


@pytest.mark.parametrize("dtype", SMALL_INTS)
def test_a_0d_int_tensor_takes_the_tensors_dtype_as_in_pytorch(default, dtype):
    """maximum(uint8, tensor(-3)) is 253 in PyTorch (the 0-d int takes uint8); it was 1, 2, 7."""
    for name, fn in {"+": operator.add, "*": operator.mul, "max": None, "min": None}.items():
        for value in (-3, 300):
            what = f"{name} of t {dtype} and tensor({value}), default {default}"

            def run(lib, fn=fn, name=name, value=value):
                t, u = lib.tensor([1, 2, 7], dtype=getattr(lib, dtype)), lib.tensor(value)
                pick = fn or (lib.maximum if name == "max" else lib.minimum)
                return _outcome(lambda: pick(t, u))

            _agree(run(torch), run(tg), what)


@pytest.mark.parametrize("op", ["<", "<=", ">", ">=", "==", "!="])
@pytest.mark.parametrize("dtype", SMALL_INTS)
def test_comparing_with_a_number_the_dtype_cannot_hold_is_refused(default, dtype, op):
    """PyTorch wraps the number first (uint8 > -1 is False everywhere, uint8 < -1 True):
    refused by name here, with the cast that compares what was written. A number in range,
    and a 0-d tensor in range, compare as in PyTorch."""
    t = tg.tensor([1, 2, 7], dtype=getattr(tg, dtype))
    for other in (-3, 300, 2**40, tg.tensor(-3), tg.tensor(70000)):
        theirs = other.item() if isinstance(other, tg.Tensor) else other
        if np.iinfo(dtype).min <= theirs <= np.iinfo(dtype).max:
            continue  # this dtype holds it
        with pytest.raises(TypeError) as err:
            OPS[op](t, other)
        assert (
            str(err.value)
            .splitlines()[0]
            .startswith(
                f"compare ({op}): a {dtype} tensor (shape (3,)) cannot hold {theirs}: PyTorch wraps it "
                "around to "
            )
        )
        hint = f"  hint: compare in int64: x.long() {op} {theirs}"
        assert str(err.value).splitlines()[-1] == hint
        assert "test_promotion.py" in str(err.value)  # the learner's line
    for other in (2, 7, tg.tensor(2), tg.tensor(2, dtype=tg.int64)):
        theirs = torch.tensor(other.item()) if isinstance(other, tg.Tensor) else other
        ours = OPS[op](t, other).tolist()
        assert (
            ours == OPS[op](torch.tensor([1, 2, 7], dtype=getattr(torch, dtype)), theirs).tolist()
        )


@pytest.mark.parametrize("op", ["<", ">=", "=="])
def test_a_bool_tensor_compared_with_a_number_past_int64_is_refused(op):
    """A bool tensor meets an int in int64; PyTorch refuses one past it (numpy's iinfo of
    bool raised a bare ValueError here); one at its edge compares as there."""
    t = tg.tensor([True, False])
    for number in (2**63, -(2**63) - 1):
        with pytest.raises((RuntimeError, OverflowError)):  # PyTorch's words differ by sign
            OPS[op](torch.tensor([True, False]), number)
        with pytest.raises(OverflowError) as err:
            OPS[op](t, number)
        assert str(err.value).splitlines()[0] == (
            f"compare ({op}): the number {number} does not fit in int64, which a bool tensor "
            "is compared in; PyTorch refuses it too"
        )
        assert "test_promotion.py" in str(err.value)  # the learner's line
    edge = 2**63 - 1
    assert OPS[op](t, edge).tolist() == OPS[op](torch.tensor([True, False]), edge).tolist()


STORES = {  # a Python int written into the tensor
    "fill_": lambda lib, t, v: t.fill_(v),
    "masked_fill": lambda lib, t, v: t.masked_fill(t > 1, v),
    "where": lambda lib, t, v: lib.where(t > 1, v, t),
    "t[0] = v": lambda lib, t, v: (t.__setitem__(0, v), t)[1],
    "t[mask] = v": lambda lib, t, v: (t.__setitem__(t > 1, v), t)[1],
}


@pytest.mark.parametrize("op", STORES)
@pytest.mark.parametrize("dtype", SMALL_INTS)
def test_an_int_written_into_a_small_int_tensor_is_stored_as_pytorch(default, dtype, op):
    """-1 written into uint8 is 255 (PyTorch lets ints down to -255 in, wrapped around);
    300 is refused by both; numpy raised a bare OverflowError (masked_fill wrapped 300 to 44)."""
    for v in (-1, -255, -256, 127, 128, 255, 256, 300, -129, 40000, 2**31):
        what = f"{op} with t {dtype}, v = {v}, default {default}"

        def run(lib, v=v):
            return _outcome(
                lambda: STORES[op](lib, lib.tensor([1, 2, 7], dtype=getattr(lib, dtype)), v)
            )

        _agree(run(torch), run(tg), what)


@pytest.mark.parametrize("dtype", SMALL_INTS)
def test_a_clamp_bound_the_dtype_cannot_hold_is_refused(default, dtype):
    """uint8.clamp(-1) is 255 everywhere in PyTorch (the bound wraps around): refused here by
    name, as PyTorch itself refuses clamp(max=300). A bound the dtype holds clamps as there."""
    t = tg.tensor([1, 2, 7], dtype=getattr(tg, dtype))
    info = np.iinfo(dtype)
    for lo, hi in ((info.min - 1, None), (None, info.max + 1), (-1 - info.max, 2**40)):
        with pytest.raises(TypeError) as err:
            t.clamp(lo, hi)
        first = str(err.value).splitlines()[0]
        assert first.startswith(f"clamp: a {dtype} tensor (shape (3,)) cannot hold ")
        assert str(err.value).splitlines()[-1].startswith("  hint: clamp in int64: x.long().clamp(")
    for lo, hi in ((0, 5), (2, None), (None, 3)):
        theirs = torch.tensor([1, 2, 7], dtype=getattr(torch, dtype)).clamp(lo, hi)
        assert t.clamp(lo, hi).tolist() == theirs.tolist()
