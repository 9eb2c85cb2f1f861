"""Bad input, one row each: the house error (op, what, the learner's line, a hint) or
PyTorch's behaviour, never a raw numpy message, a RecursionError or a silent answer.

Each row: the mistake, the exception class, and pieces of its text in order: the op and
what happened first, then the hint. Every message must also name this file as the line
that built it (`built at:`).
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import tinygrad_edu as tg

HERE = "test_bad_inputs.py"


def _deep(n):
    x = 1.0
    for _ in range(n):
        x = [x]
    return x


def _read_only():
    a = np.ones(3)
    a.flags.writeable = False
    return a


class _WrongShape(tg.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g[:1]  # shape (1,) for an input of shape (3,): PyTorch raises too


class _WrongCount(tg.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g, g


class _NoBackward(tg.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2


def _x():
    return tg.tensor([1.0, 2.0, 3.0], requires_grad=True)


def _m():
    return tg.tensor(np.ones((2, 3)), requires_grad=True)


def _set_grad(value):
    x = _x()
    x.grad = value


def _leaf_hook(hook):
    x = _x()
    x.register_hook(hook)
    (x * 2).sum().backward()


def _nonleaf_hook(hook):
    y = _x() * 2
    y.register_hook(hook)
    y.sum().backward()


def _backward_twice():
    y = (_x() * _x()).sum()
    y.backward()
    y.backward()


def _saved_then_changed():
    y = _x() * 1.0
    z = (y * y).sum()
    y.add_(1.0)
    z.backward()


def _no_grad_view_changed():
    y = _x() * 1.0
    with tg.no_grad():
        v = y[:2]
    v.add_(1.0)


def _eager(cls):
    cls.apply(_x()).sum().backward()


def _static(cls):
    f = tg.static.function(lambda x: cls.apply(x).sum())
    f(_x()).backward()


SHAPE, DATA, INPLACE, BACKWARD = tg.ShapeError, tg.DataError, tg.InplaceError, tg.BackwardError

# name -> (the mistake, exception class, pieces of the message in order)
BAD = {
    # --- data that is not a tensor -------------------------------------------------------
    "text": (
        lambda: tg.tensor("abc"),
        DATA,
        ["tensor: cannot make a tensor from 'abc'", "holds text", "hint: pass numbers"],
    ),
    "text in a list": (lambda: tg.tensor([1, "a"]), DATA, ["tensor:", "holds text"]),
    "None": (lambda: tg.tensor(None), DATA, ["tensor:", "holds Python objects"]),
    "None in a list": (lambda: tg.tensor([1.0, None]), DATA, ["[1.0, None]", "Python objects"]),
    "a dict": (lambda: tg.tensor({1: 2}), DATA, ["{1: 2}", "Python objects"]),
    "an object": (lambda: tg.tensor(object()), DATA, ["<object", "Python objects"]),
    "a complex number": (lambda: tg.tensor(1 + 2j), DATA, ["(1+2j)", "complex numbers"]),
    "a complex dtype": (
        lambda: tg.tensor([1.0], dtype="complex64"),
        DATA,
        [
            "real numbers or booleans, not complex numbers (dtype complex64)",
            "hint: use a numpy dtype",
        ],
    ),
    "an unknown dtype": (
        lambda: tg.tensor([1.0], dtype="nonsense"),
        DATA,
        ["unknown dtype 'nonsense'", "hint: use a numpy dtype"],
    ),
    "a text array": (lambda: tg.tensor(np.array(["a"])), DATA, ["holds text"]),
    "ragged rows": (
        lambda: tg.tensor([[1, 2], [3]]),
        DATA,
        [
            "rows of different lengths [2, 1] cannot form a rectangular array",
            "hint: pad the rows to one length",
        ],
    ),
    "ragged deeper down": (
        lambda: tg.tensor([[1, [2]], [3, 4]]),
        DATA,
        ["rows of different lengths", "rectangular"],
    ),
    "5,000 nested lists": (
        lambda: tg.tensor(_deep(5000)),
        DATA,
        ["nested too deeply", "at most 64 axes", "hint: build the array"],
    ),
    "70 nested lists": (lambda: tg.tensor(_deep(70)), DATA, ["nested too deeply"]),
    "a list of tensors": (
        lambda: tg.tensor([tg.tensor(1.0), tg.tensor(2.0)]),
        DATA,
        ["got a list of Tensors", "hint: use tg.stack"],
    ),
    "a negative size": (
        lambda: tg.zeros(-1),
        SHAPE,
        ["zeros: sizes must be non-negative whole numbers, got (-1,)"],
    ),
    "a fractional size": (lambda: tg.zeros(2.5), SHAPE, ["zeros: sizes", "(2.5,)"]),
    "a text size": (lambda: tg.randn(2, "a"), SHAPE, ["randn: sizes", "(2, 'a')"]),
    # --- requires_grad and .grad ---------------------------------------------------------
    "an int tensor requiring grad": (
        lambda: tg.tensor([1, 2], dtype="int64", requires_grad=True),
        DATA,
        ["only floating-point tensors can require grad, got int64", "hint: make it a float"],
    ),
    "requires_grad = True on ints": (
        lambda: setattr(tg.tensor([1, 2], dtype="int64"), "requires_grad", True),
        DATA,
        ["requires_grad: only floating-point", "astype('float64')"],
    ),
    "requires_grad_() on ints": (
        lambda: tg.tensor([1, 2], dtype="int64").requires_grad_(),
        DATA,
        ["requires_grad: only floating-point"],
    ),
    "switching off a non-leaf": (
        lambda: setattr(_x() * 2, "requires_grad", False),
        BACKWARD,
        ["was computed (grad_fn=MulBackward)", "hint: use x.detach()"],
    ),
    ".grad of the wrong shape": (
        lambda: _set_grad(tg.zeros(2, 3)),
        SHAPE,
        [
            "grad: cannot assign a gradient of shape (2, 3)",
            "which has shape (3,)",
            "hint: a gradient has its tensor's",
        ],
    ),
    ".grad of the wrong dtype": (
        lambda: _set_grad(tg.zeros(3, dtype="float32")),
        SHAPE,
        ["dtype float32", "dtype float64"],
    ),
    ".grad of text": (lambda: _set_grad("abc"), DATA, ["grad: cannot make a tensor from"]),
    "retain_grad without grad": (
        lambda: tg.tensor([1.0]).retain_grad(),
        BACKWARD,
        ["retain_grad:", "does not require grad", "hint:"],
    ),
    # --- hooks ---------------------------------------------------------------------------
    "a hook changing the shape": (
        lambda: _leaf_hook(lambda g: g[:2]),
        SHAPE,
        [
            "hook: hook '<lambda>' returned a gradient of shape (2,) for a gradient of shape (3,)",
            "hint: a hook may change",
        ],
    ),
    "a hook returning (1,) for (3,)": (
        lambda: _leaf_hook(lambda g: tg.zeros(1)),
        SHAPE,
        ["shape (1,) for a gradient of shape (3,)"],
    ),
    "a non-leaf hook changing the shape": (
        lambda: _nonleaf_hook(lambda g: tg.zeros(2, 3)),
        SHAPE,
        ["shape (2, 3) for a gradient of shape (3,)"],
    ),
    "a hook returning text": (
        lambda: _leaf_hook(lambda g: "abc"),
        TypeError,
        ["hook: hook '<lambda>' returned a str, not a Tensor", "hint: return the new gradient"],
    ),
    "a hook that is not callable": (
        lambda: _x().register_hook(3),
        TypeError,
        ["register_hook: a hook must be a function", "got 3"],
    ),
    "a hook on a constant": (
        lambda: tg.tensor([1.0]).register_hook(lambda g: g),
        BACKWARD,
        ["does not require grad, so no gradient will ever reach the hook"],
    ),
    # --- backward ------------------------------------------------------------------------
    "backward of many numbers": (
        lambda: (_x() * 2).backward(),
        BACKWARD,
        [
            "backward: this tensor has shape (3,)",
            "a single number",
            "hint: call y.sum().backward()",
        ],
    ),
    "backward with a wrong gradient": (
        lambda: (_x() * 2).backward(tg.zeros(2)),
        SHAPE,
        ["gradient has shape (2,) but this tensor has shape (3,)"],
    ),
    "backward with a text gradient": (
        lambda: (_x() * 2).backward("abc"),
        DATA,
        ["backward: cannot make a tensor from 'abc'"],
    ),
    "backward of a constant": (
        lambda: tg.tensor([1.0]).sum().backward(),
        BACKWARD,
        [
            "does not require grad and has no grad_fn",
            "hint: create the inputs with requires_grad=True",
        ],
    ),
    "backward twice": (
        _backward_twice,
        tg.GraphFreedError,
        [
            "MulBackward.backward: the values this op saved for backward were freed",
            "hint: pass retain_graph=True",
        ],
    ),
    "tg.grad of an unused input": (
        lambda: tg.grad((_x() * 2).sum(), _x()),
        BACKWARD,
        ["was not used to compute the outputs", "hint: pass allow_unused=True"],
    ),
    "tg.grad of a constant input": (
        lambda: tg.grad((_x() * 2).sum(), tg.tensor([1.0])),
        BACKWARD,
        [
            "grad: input 0, this tensor (shape (1,)), does not require grad",
            "hint: create it with requires_grad=True",
        ],
    ),
    "tg.grad of a list": (
        lambda: tg.grad((_x() * 2).sum(), [[1.0]]),
        TypeError,
        ["grad: input 0 is a list, not a Tensor"],
    ),
    # --- a learner's Function ------------------------------------------------------------
    "backward: too many gradients": (
        lambda: _eager(_WrongCount),
        BACKWARD,
        [
            "_WrongCountBackward: backward returned 2 gradient(s) for 1 input(s)",
            "hint: return one gradient per input",
        ],
    ),
    "backward: (1,) for (3,)": (
        lambda: _eager(_WrongShape),
        SHAPE,
        [
            "_WrongShapeBackward: backward returned a gradient of shape (1,) "
            "for an input of shape (3,)",
            "hint: each gradient must have",
        ],
    ),
    "static backward: too many gradients": (
        lambda: _static(_WrongCount),
        BACKWARD,
        ["_WrongCountBackward: backward returned 2 gradient(s) for 1 input(s)"],
    ),
    "static backward: (1,) for (3,)": (
        lambda: _static(_WrongShape),
        SHAPE,
        [
            "_WrongShapeBackward: backward returned a gradient of "
            "shape (1,) for an input of shape (3,)"
        ],
    ),
    "a Function without backward": (
        lambda: _eager(_NoBackward),
        NotImplementedError,
        [
            "_NoBackwardBackward: this Function has no backward",
            "hint: define `@staticmethod def backward",
        ],
    ),
    # --- shapes --------------------------------------------------------------------------
    "matmul inner sizes": (
        lambda: _m() @ _m(),
        SHAPE,
        [
            "matmul: cannot multiply (2, 3) @ (2, 3): inner sizes 3 and 2 differ",
            "hint: did you mean",
        ],
    ),
    "matmul of a number": (
        lambda: tg.tensor(2.0) @ _m(),
        SHAPE,
        ["@ needs at least one axis on each side", "hint: use *"],
    ),
    "broadcasting clash": (
        lambda: _m() + tg.tensor([1.0, 2.0]),
        SHAPE,
        [
            "add: cannot broadcast shapes (2, 3) and (2,): axis -1 has sizes 3 and 2",
            "hint: shapes broadcast when",
        ],
    ),
    "pow broadcasting clash": (
        lambda: _m() ** tg.tensor([1.0, 2.0]),
        SHAPE,
        ["pow: cannot broadcast shapes"],
    ),
    "reshape size": (
        lambda: _m().reshape(4, 2),
        SHAPE,
        ["reshape: cannot reshape (2, 3) (6 elements) into (4, 2)", "hint:"],
    ),
    "reshape float": (lambda: _m().reshape(2.0, 3), SHAPE, ["reshape: sizes must be whole"]),
    "view of a transpose": (
        lambda: _m().T.view(6),
        SHAPE,
        [
            "view: cannot view a tensor of shape (3, 2) as (6,) without copying",
            "hint: use .reshape",
        ],
    ),
    "sum over a missing axis": (
        lambda: _m().sum(axis=2),
        np.exceptions.AxisError,
        ["sum:", "axis 2 is out of bounds", "hint: a tensor with 2 axes"],
    ),
    "softmax over a missing axis": (
        lambda: _m().softmax(axis=5),
        np.exceptions.AxisError,
        ["softmax:", "axis 5"],
    ),
    "max of nothing": (
        lambda: tg.zeros(0).max(),
        ValueError,
        [
            "max: a tensor with no elements (shape (0,)) has no largest element",
            "hint: reduce over an axis",
        ],
    ),
    "min of nothing": (lambda: tg.zeros(2, 0).min(), ValueError, ["min:", "no smallest"]),
    "an index out of range": (
        lambda: _x()[5],
        SHAPE,
        ["index: index 5 is out of bounds", "(tensor shape (3,))", "hint: valid positions"],
    ),
    "too many indices": (lambda: _x()[0, 0], SHAPE, ["index: too many indices"]),
    "a float index": (lambda: _x()[1.5], SHAPE, ["index:", "hint: index with whole numbers"]),
    "a float index tensor": (
        lambda: _x()[tg.tensor([0.5])],
        SHAPE,
        ["index:", "integer (or boolean) type", ".astype('int64')"],
    ),
    "a mask of the wrong size": (
        lambda: _x()[np.array([True, False])],
        SHAPE,
        ["index: boolean index did not match", "hint: a mask must have the size"],
    ),
    "transpose of a missing axis": (
        lambda: _m().transpose(0, 2),
        SHAPE,
        ["swapaxes: axis 2 is out of range for a tensor with 2 axes", "hint: use axes 0 .. 1"],
    ),
    "permute naming an axis twice": (
        lambda: _m().permute(0, 0),
        SHAPE,
        ["permute: axes (0, 0) do not reorder", "hint: name each axis"],
    ),
    "expand of a real size": (
        lambda: _m().expand(3, 3),
        SHAPE,
        ["broadcast_to: cannot broadcast shape (2, 3) to (3, 3)"],
    ),
    "unsqueeze out of range": (lambda: _m().unsqueeze(4), SHAPE, ["unsqueeze: axis 4"]),
    "squeeze out of range": (lambda: _m().squeeze(3), SHAPE, ["squeeze: axis 3"]),
    "cat of different shapes": (
        lambda: tg.cat([_m(), _x()]),
        SHAPE,
        ["cat: cannot join shapes (2, 3), (3,) along axis 0"],
    ),
    "stack of different shapes": (
        lambda: tg.stack([_m(), _x()]),
        SHAPE,
        ["stack: cannot stack shapes (2, 3), (3,)"],
    ),
    # --- values --------------------------------------------------------------------------
    "clip with a text bound": (
        lambda: _x().clip("a", 1.0),
        DATA,
        ["clip: the bounds must be numbers or None, got 'a'"],
    ),
    "where with a float mask": (
        lambda: tg.where(tg.tensor([1.0, 0.0]), _x()[:2], _x()[:2]),
        DATA,
        ["where: the condition must be boolean", "hint: compare to make a mask"],
    ),
    "item of many": (
        lambda: _x().item(),
        ValueError,
        ["item: only a tensor with one element", "hint: reduce it first"],
    ),
    "if on many": (lambda: bool(_x()), ValueError, ["bool:", "is ambiguous"]),
    "len of a number": (lambda: len(tg.tensor(1.0)), TypeError, ["len: a 0-d tensor"]),
    "~ on floats": (lambda: ~_x(), TypeError, ["invert: ~ needs a boolean tensor, got float64"]),
    "astype text": (lambda: _x().astype("str"), DATA, ["astype:", "not text"]),
    "gradcheck of a non-function": (
        lambda: tg.gradcheck(3, _x()),
        TypeError,
        ["gradcheck: the first argument must be the function"],
    ),
    # --- in place ------------------------------------------------------------------------
    "changing a leaf": (
        lambda: _x().add_(1.0),
        INPLACE,
        [
            "add_: this tensor (shape (3,)) is a leaf that requires grad",
            "hint: update it inside `with tg.no_grad():`",
        ],
    ),
    "changing a view of a leaf": (
        lambda: _x()[0:2].mul_(2.0),
        INPLACE,
        ["mul_:", "is a view of this tensor (shape (3,)), a leaf"],
    ),
    "changing a broadcast view": (
        lambda: (_x() * 1.0)[None].expand(2, 3).add_(1.0),
        INPLACE,
        ["add_:", "is a broadcast view", "hint: change a .clone()"],
    ),
    "x[1:] = x[:-1]": (
        lambda: (lambda y: y.__setitem__(slice(1, None), y[:-1]))(_x() * 1.0),
        INPLACE,
        ["setitem: the value being written shares some of its numbers", "hint: write a .clone()"],
    ),
    "x[[0]] = x": (
        lambda: (lambda y: y.__setitem__(np.array([0]), y))(_x() * 1.0),
        INPLACE,
        ["setitem: the value being written shares"],
    ),
    "setitem of the wrong shape": (
        lambda: (_x() * 1.0).__setitem__(slice(0, 2), tg.zeros(3)),
        SHAPE,
        [
            "setitem: cannot put a value of shape (3,) into t[0:2] of a tensor of shape (3,)",
            "hint: the value must broadcast",
        ],
    ),
    "setitem out of range": (
        lambda: (_x() * 1.0).__setitem__(7, 1.0),
        SHAPE,
        ["setitem: index 7 is out of bounds", "hint: valid positions"],
    ),
    "a float into ints in place": (
        lambda: tg.tensor([1, 2], dtype="int64").add_(0.5),
        DATA,
        [
            "add_: cannot store a float64 result in a int64 tensor",
            "hint: make it a float64 tensor first",
        ],
    ),
    "an in-place op that broadcasts": (
        lambda: (_x() * 1.0).add_(tg.zeros(2, 3)),
        SHAPE,
        ["add_: the result has shape (2, 3)", "hint: in-place ops cannot change a tensor's shape"],
    ),
    "a saved value changed": (
        _saved_then_changed,
        INPLACE,
        [
            "MulBackward.backward: a tensor this op saved for backward was modified in place at",
            "(version 0 when saved, 1 now)",
            "hint: use an out-of-place op",
        ],
    ),
    "a no_grad view changed with grad on": (
        _no_grad_view_changed,
        INPLACE,
        [
            "add_:",
            "a view made inside `with tg.no_grad():`",
            "hint: make the view and change it both",
        ],
    ),
    "a read-only array changed": (
        lambda: tg.from_numpy(_read_only()).add_(1.0),
        INPLACE,
        [
            "add_: the numpy array behind this tensor (shape (3,)) is read-only",
            "hint: make a tensor with its own copy",
        ],
    ),
    "a read-only array written": (
        lambda: tg.from_numpy(_read_only()).__setitem__(0, 5.0),
        INPLACE,
        ["setitem:", "read-only"],
    ),
    # --- layers --------------------------------------------------------------------------
    "mse_loss of different shapes": (
        lambda: tg.nn.functional.mse_loss(_m(), _x()),
        SHAPE,
        ["mse_loss: input shape (2, 3) and target shape (3,) differ", "hint:"],
    ),
    "cross_entropy of a missing class": (
        lambda: tg.nn.functional.cross_entropy(_m(), tg.tensor([0, 5])),
        IndexError,
        ["cross_entropy: target class 5 at position 1 is out of range", "hint:"],
    ),
    "a Linear layer of the wrong size": (
        lambda: tg.nn.Linear(4, 2)(_m()),
        SHAPE,
        ["Linear(4, 2): expected input with 4 features", "hint:"],
    ),
}


@pytest.mark.parametrize("name", BAD)
def test_bad_input_gives_the_house_error(name):
    mistake, kind, pieces = BAD[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(kind) as info:
            mistake()
    text = str(info.value)
    assert type(info.value).__module__.startswith(("tinygrad_edu", "builtins", "numpy")), text
    pattern = ".*".join(re.escape(p) for p in pieces)
    assert re.search(pattern, text, re.S), f"expected {pieces} in order in:\n{text}"
    site = next((ln for ln in text.splitlines() if ln.strip().startswith("built at:")), None)
    assert site is not None and HERE in site, f"no `built at:` line here in:\n{text}"
    assert "Traceback" not in text and "numpy.core" not in text


def test_the_table_is_big_and_never_hits_a_raw_error():
    assert len(BAD) >= 80
    kinds = {row[1] for row in BAD.values()}
    assert RecursionError not in kinds


# --- PyTorch's behaviour rather than an error --------------------------------------------


def test_astype_int_drops_requires_grad():
    y = _x().astype("int64")
    assert not y.requires_grad and y.grad_fn is None  # PyTorch: x.long().requires_grad False


def test_negative_zero_constants_are_not_cached_as_positive_zero():
    x = tg.tensor([1.0])
    _ = x * 0.0  # caches +0.0
    assert (1 / (x * -0.0)).tolist() == [-np.inf]
    assert (1 / (x * 0.0)).tolist() == [np.inf]


def test_a_copy_of_a_read_only_array_can_be_changed():
    t = tg.tensor(_read_only())  # tg.tensor copies, as torch.tensor does
    t.add_(1.0)
    assert t.tolist() == [2.0, 2.0, 2.0]


def test_reading_grad_of_a_non_leaf_warns_and_names_the_fix():
    y = _x() * 2
    with pytest.warns(UserWarning, match=r"(?s)\.grad: tensor 'y' is not a leaf.*retain_grad"):
        assert y.grad is None
