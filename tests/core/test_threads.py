"""Modes with a context manager are per thread, as in PyTorch: grad mode, anomaly mode,
tracing and the module path. Each test makes two threads meet at a barrier while one of
them is inside a mode, so the other runs its ops exactly then."""

import threading

import numpy as np

import tinygrad_edu as tg
from tinygrad_edu.core import function


def _in_two_threads(inside, outside):
    """Run `inside(wait)` and `outside()` in two threads; `outside` runs while `inside`
    is blocked in `wait()`, i.e. in the middle of its mode. Returns both results."""
    entered, done = threading.Event(), threading.Event()
    results, errors = {}, []

    def wait():
        entered.set()
        assert done.wait(10), "the other thread never finished"

    def run(key, fn, *args):
        try:
            results[key] = fn(*args)
        except BaseException as e:  # noqa: BLE001 - reported in the main thread
            errors.append(e)
            entered.set()
            done.set()

    def run_outside():
        assert entered.wait(10), "the first thread never entered its mode"
        run("outside", outside)
        done.set()

    threads = [
        threading.Thread(target=run, args=("inside", inside, wait)),
        threading.Thread(target=run_outside),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    if errors:
        raise errors[0]
    return results["inside"], results["outside"]


def test_no_grad_in_one_thread_leaves_recording_on_in_another():
    x = tg.tensor([1.0, 2.0], requires_grad=True)

    def inside(wait):
        with tg.no_grad():
            wait()
            return tg.is_grad_enabled(), (x * 2).requires_grad

    def outside():
        return tg.is_grad_enabled(), (x * 2).requires_grad

    assert _in_two_threads(inside, outside) == ((False, False), (True, True))
    assert tg.is_grad_enabled()


def test_a_new_thread_starts_with_grad_on_even_if_its_parent_is_in_no_grad():
    seen = []
    with tg.no_grad():
        t = threading.Thread(target=lambda: seen.append(tg.is_grad_enabled()))
        t.start()
        t.join()
    assert seen == [True]


def test_two_threads_train_side_by_side_and_both_get_the_right_gradients():
    def train(seed):
        rng = np.random.default_rng(seed)
        w = tg.tensor(rng.standard_normal(3), requires_grad=True)
        x = tg.tensor(rng.standard_normal((8, 3)))
        for _ in range(200):
            loss = ((x @ w) ** 2).mean()
            loss.backward()  # the engine switches grad off in its own thread only
            with tg.no_grad():
                w -= 0.01 * w.grad
            w.grad = None
        return w.numpy().copy()

    expected = [train(1), train(2)]
    got = [None, None]

    def worker(i):
        got[i] = train(i + 1)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_array_equal(got[1], expected[1])


def test_anomaly_mode_is_per_thread():
    x = tg.tensor([-1.0], requires_grad=True)

    def inside(wait):
        with tg.debug.detect_anomaly():
            wait()
            return tg.debug.is_anomaly_enabled()

    def outside():
        y = x.log()  # NaN, but this thread is not in anomaly mode: no error
        return tg.debug.is_anomaly_enabled(), bool(np.isnan(y.numpy()).all())

    assert _in_two_threads(inside, outside) == (True, (False, True))
    assert function._thread.state.observers == []


def test_a_trace_records_only_its_own_threads_ops():
    x = tg.tensor([1.0, 2.0])

    def inside(wait):
        def f(a):
            wait()  # the other thread runs a dozen ops now
            return a * 2

        return tg.static.trace(f, x).program.count_ops()

    def outside():
        y = x
        for _ in range(12):
            y = y + 1
        return y.numpy().tolist()

    n_steps, values = _in_two_threads(inside, outside)
    assert n_steps == 1 and values == [13.0, 14.0]
