"""add_, sub_, mul_ and div_ under no_grad (an optimizer's step) write straight into the
tensor's storage (core/views.py, `_into_storage`): the numbers, the version counter, the
views that share the storage and the errors must be those of the op run with grad on."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tinygrad_edu as tg

METHODS = ["add_", "sub_", "mul_", "div_"]
SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, 3.0])


def _values(rng, shape, dtype):
    a = rng.standard_normal(shape)
    flat = a.reshape(-1)
    flat[: flat.size // 3] = rng.choice(SPECIAL, size=flat.size // 3)
    return a.astype(dtype)


@settings(max_examples=120, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    method=st.sampled_from(METHODS),
    dtype=st.sampled_from(["float16", "float32", "float64"]),
    operand=st.sampled_from(["same", "row", "scalar array", "python float", "float64 array"]),
)
def test_a_step_without_graph_gives_the_ops_numbers_bit_for_bit(seed, method, dtype, operand):
    rng = np.random.default_rng(seed)
    start = _values(rng, (3, 4), dtype)
    other = {
        "same": lambda: tg.tensor(_values(rng, (3, 4), dtype)),
        "row": lambda: tg.tensor(_values(rng, (4,), dtype)),
        "scalar array": lambda: _values(rng, (), dtype),
        "python float": lambda: float(rng.choice(SPECIAL)),
        "float64 array": lambda: _values(rng, (3, 4), "float64"),  # the op's own path
    }[operand]()
    with_graph, without = tg.tensor(start.copy()), tg.tensor(start.copy())
    with warnings.catch_warnings(record=True) as seen:  # numpy's nan/inf warnings stay
        getattr(with_graph, method)(other)  # silenced, as for every op
        with tg.no_grad():
            getattr(without, method)(other)
    assert not [w for w in seen if issubclass(w.category, RuntimeWarning)]
    assert without.dtype == with_graph.dtype
    bits = f"u{np.dtype(dtype).itemsize}"
    np.testing.assert_array_equal(without.numpy().view(bits), with_graph.numpy().view(bits))
    assert without._version == with_graph._version == 1


def test_a_step_into_a_view_changes_the_base_and_its_version():
    base = tg.zeros(2, 3)
    row = base[1]
    with tg.no_grad():
        row.add_(tg.ones(3))
        row.mul_(2.0)
    np.testing.assert_array_equal(base.numpy(), [[0, 0, 0], [2, 2, 2]])
    assert base._version == row._version == 2


def test_a_saved_tensor_changed_by_a_step_without_graph_is_still_refused():
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    y = (w * w).sum()
    with tg.no_grad():
        w.sub_(tg.tensor([0.5, 0.5]))  # an optimizer step between forward and backward
    with pytest.raises(tg.InplaceError, match="modified in place"):
        y.backward()


def test_the_refusal_names_the_learners_line_of_a_step_without_graph():
    # the step's site skips the package's frames it knows of (add_, _inplace): from a
    # helper, an operator or an optimizer it is still the learner's own line
    def helper(p):
        p.add_(tg.tensor([0.5, 0.5]))  # the helper's line

    for step, line in [
        (lambda w: helper(w), "p.add_(tg.tensor([0.5, 0.5]))  # the helper's line"),
        (lambda w: w.__isub__(0.1), "(lambda w: w.__isub__(0.1), "),
        (lambda w: tg.optim.SGD([w], lr=0.1).step(), "(lambda w: tg.optim.SGD([w], lr=0.1)"),
    ]:
        w = tg.tensor([1.0, 2.0], requires_grad=True)
        w.grad = tg.ones(2)
        y = (w * w).sum()
        with tg.no_grad():
            step(w)
        with pytest.raises(tg.InplaceError) as err:
            y.backward()
        assert line in str(err.value).splitlines()[0]


def test_an_operand_that_would_make_the_tensor_bigger_is_refused_as_before():
    t = tg.zeros(3)
    with tg.no_grad(), pytest.raises(tg.ShapeError) as err:
        t.add_(tg.ones(2, 3))
    with pytest.raises(tg.ShapeError) as err_with_grad:
        t.add_(tg.ones(2, 3))
    first_line = str(err.value).splitlines()[0]  # the lines after it name the call's line
    assert first_line == str(err_with_grad.value).splitlines()[0]
    assert first_line.startswith("add_: ")


def test_an_integer_tensor_takes_the_ops_path_and_its_error():
    t = tg.tensor([1, 2, 3])
    with tg.no_grad(), pytest.raises(tg.DataError, match="cannot store a float"):
        t.mul_(0.5)


def test_a_step_without_graph_inside_a_trace_is_still_seen_by_the_tracer():
    def step(w, g):
        with tg.no_grad():
            w.sub_(g * 0.1)  # the tracer watches ops: it must see this one, and refuse it
        return w * 1.0

    with pytest.raises(tg.TracingError, match="a traced tensor was changed in place"):
        tg.static.trace(step, np.ones(3), np.full(3, 2.0))


def test_a_float64_result_stored_in_a_float16_tensor_overflows_to_inf_without_a_warning():
    t = tg.tensor(np.array([60000.0, 1.0], dtype=np.float16))
    with warnings.catch_warnings(record=True) as seen:
        t.mul_(tg.tensor(np.array([10.0, 1.0])))  # computed in float64, stored as float16
    np.testing.assert_array_equal(t.numpy(), np.array([np.inf, 1.0], dtype=np.float16))
    assert not [str(w.message) for w in seen if issubclass(w.category, RuntimeWarning)]


def test_the_one_pass_step_leaves_shared_and_read_only_memory_to_the_full_checks():
    # `views.step_into` takes only a tensor and an operand that each own their memory: an
    # operand overlapping the tensor, a read-only array or a broadcast view is refused as
    # before, and `x -= x` (the very same numbers) still runs
    x = tg.tensor([1.0, 2.0, 3.0])
    with tg.no_grad():
        x -= x
    np.testing.assert_array_equal(x.numpy(), [0.0, 0.0, 0.0])
    assert x._version == 1
    y = tg.arange(4.0)
    frozen = np.ones(3)
    frozen.flags.writeable = False
    cases = [
        (lambda: y[1:].sub_(y[:3]), "shares some of its numbers"),
        (lambda: tg.from_numpy(frozen).sub_(1.0), "read-only"),
        (lambda: tg.ones(1).expand(3).sub_(1.0), "broadcast view"),
    ]
    for step, why in cases:
        with tg.no_grad(), pytest.raises(tg.InplaceError, match=why):
            step()
    assert y._version == 0
