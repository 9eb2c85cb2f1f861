"""A layout program started ahead of time, so a drawing does not wait for it to start.

Starting Graphviz's `dot` costs 12-25 ms before it reads a byte (it loads its plugins),
more than laying out a 20-node graph, and the live view draws after every cell. So
after each drawing the next process is started at once and left waiting on its input:
by the time the learner has run the next cell it is ready, and the drawing costs the
layout alone.

Rules: each graph still gets a fresh process of its own, reading one graph up to the
end of its input, exactly as a single run: one `dot` fed graph after graph carries
state from one to the next (clusters come out in another order), which would make a
drawing depend on what was drawn before it. Works the same for graphviz-pure and on
Windows. The waiting processes are stopped at interpreter exit.
Render layer: standard library only.
"""

from __future__ import annotations

import atexit
import subprocess
import threading

_WAITING: dict[tuple, subprocess.Popen] = {}  # command -> a process started ahead
_LOCK = threading.Lock()


def run(cmd: list[str], source: bytes, timeout: float, env: dict) -> tuple[int, bytes, bytes]:
    """Run `cmd` on `source` as `subprocess.run` would: (return code, stdout, stderr).

    Raises:
        subprocess.TimeoutExpired: no answer within `timeout` seconds (the process is killed).
        OSError: the program cannot be started (e.g. FileNotFoundError).
    """
    key = tuple(cmd)
    with _LOCK:
        proc = _WAITING.pop(key, None)
    if proc is None or proc.poll() is not None:  # the first drawing, or it went away
        proc = _start(cmd, env)
    try:
        out, err = proc.communicate(source, timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    finally:
        _start_ahead(key, cmd, env)  # the next drawing's process, starting while we return
    return proc.returncode, out, err


def _start(cmd: list[str], env: dict) -> subprocess.Popen:
    return subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )


def _start_ahead(key: tuple, cmd: list[str], env: dict) -> None:
    try:
        proc = _start(cmd, env)
    except OSError:  # the program went away: the next drawing reports it
        return
    with _LOCK:
        old, _WAITING[key] = _WAITING.get(key), proc
    if old is not None:  # two threads drew at once: keep one spare
        _stop(old)


def _stop(proc: subprocess.Popen) -> None:
    proc.kill()
    proc.communicate()


@atexit.register
def stop_all() -> None:
    """Stop the processes waiting for a next drawing (at exit, and in tests)."""
    with _LOCK:
        waiting = list(_WAITING.values())
        _WAITING.clear()
    for proc in waiting:
        _stop(proc)
