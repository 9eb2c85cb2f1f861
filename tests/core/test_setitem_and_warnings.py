"""Item assignment, its errors, and ops that stay quiet about NaN/inf."""

import re
import subprocess
import sys

import numpy as np
import pytest

import tinygrad_edu as tg


def test_setitem_on_plain_data_and_under_no_grad_bumps_the_version():
    t = tg.zeros(3)
    t[1] = 5.0
    np.testing.assert_array_equal(t.numpy(), [0.0, 5.0, 0.0])
    w = tg.zeros(3, requires_grad=True)
    saved = w * w  # Mul saved w (w * 2 would save only the 2, as in PyTorch)
    with tg.no_grad():
        w[0] = 1.0
    with pytest.raises(tg.InplaceError, match="modified in place"):
        saved.sum().backward()


def test_setitem_on_a_leaf_that_requires_grad_names_the_fix():
    w = tg.zeros(3, requires_grad=True)
    with pytest.raises(tg.InplaceError) as info:
        w[0] = 1.0
    text = str(info.value)
    assert text.startswith(
        "setitem: this tensor (shape (3,)) is a leaf that requires grad; changing it in place "
        "would hide the change from autograd\n"
    )
    assert re.search(r"built at: .*test_setitem_and_warnings\.py, line \d+: w\[0\] = 1\.0", text)
    assert text.endswith(
        "hint: update it inside `with tg.no_grad():` (as optimizers do), or "
        "write x = x ... out of place"
    )


def test_setitem_while_recording_is_differentiable():
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    x = tg.zeros(2, 2)
    x[0] = w * w
    x[1, 0] = w[1]
    x.sum().backward()
    assert x.grad_fn.name == "IndexPutBackward"
    np.testing.assert_array_equal(w.grad.numpy(), [2.0, 5.0])


def test_setitem_with_a_value_of_the_wrong_shape_names_both_shapes():
    w = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x = tg.zeros(2, 2)
    with pytest.raises(tg.ShapeError) as info:
        x[0] = w
    assert str(info.value).startswith(
        "setitem: cannot put a value of shape (3,) into t[0] of a tensor of shape (2, 2): "
    )


def test_setitem_out_of_range_is_a_shape_error():
    t = tg.zeros(3)
    with pytest.raises(
        tg.ShapeError,
        match=re.escape(
            "setitem: index 5 is out of bounds for axis 0 with size 3 (tensor shape (3,))"
        ),
    ):
        t[5] = 1.0


def test_inplace_hint_uses_a_valid_python_name():
    p = tg.zeros(2, requires_grad=True, name="0.weight")
    with pytest.raises(tg.InplaceError, match=re.escape("or write x = x ... out of place")):
        p += 1


def test_ops_do_not_print_numpy_warnings_but_user_numpy_still_does():
    code = (
        "import numpy as np, tinygrad_edu as tg\n"
        "x = tg.tensor([-1.0, 0.0], requires_grad=True)\n"
        "(x.log() + x.sqrt()).sum().backward()\n"
        "np.log(np.array([-1.0]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-W", "default", "-c", code], capture_output=True, text=True, check=True
    )
    assert "elementwise.py" not in proc.stderr
    assert proc.stderr.count("RuntimeWarning") == 1  # the learner's own np.log
