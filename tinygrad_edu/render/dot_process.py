"""A layout program started ahead of time, so a drawing does not wait for it to start.

Starting Graphviz's `dot` costs 12-25 ms before it reads a byte (it loads its plugins),
and the first label it measures costs 15-25 ms more (Pango reads the whole fontconfig
setup): more than laying out a 60-node graph, and the live view draws after every cell.
So after each drawing the next process is started at once and left waiting on its
input; by the time the learner has run the next cell it is ready, and the drawing
costs the layout alone. Most graphs go to a process that has also drawn a one-box
warm-up graph in the drawings' font, so it has measured text already.

Rules: a drawing never depends on what was drawn before it. Each graph gets a fresh
process of its own (one `dot` fed graph after graph carries state between them), and
only the fixed warm-up graph comes before it, and only when that changes nothing:
- Graphviz 2.43 orders a graph's named subgraphs by where their names sit in memory,
  which is the same in every fresh process but not after Pango's setup; so a graph
  with two or more (module clusters, time steps) goes to a process without warm-up.
  One subgraph (the legend) or none comes out as a single run draws it (checked on
  every lesson's drawings, tests/render/test_dot_process.py);
- Graphviz 2.43 numbers the second graph's page (`id="page0,1_graph0"`): written back;
- a graph dot refuses is laid out again alone, so its error names the line as a
  single run would.
The next process is started by a helper thread, so its fork and exec (1-15 ms) stay
off the cell's clock too; the thread lives on and waits for the next request, because
starting a thread makes the caller wait until it runs (up to several ms on a busy machine).
Inside `start_next_after()` (the live view's whole drawing step) the request waits for the
block to end: starting `dot` costs this process ~0.6 ms of CPU and the new `dot` 20-30 ms
more for its warm-up, which would otherwise compete with the rest of the cell's drawing
(the SVG's compaction, the display) for the same cores. Works the same for graphviz-pure
and on Windows. The waiting processes are stopped at interpreter exit.
Render layer: standard library only.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import queue
import re
import select
import subprocess
import threading
import time
from collections.abc import Iterator

from .dot import FONT, quote

# what dot does once per process (load the text plugin, read fontconfig, open the font)
# happens here, and Pango measures every printable character once in the drawings' two
# font sizes (labels 11, legends and edge labels 10): a drawing's labels then cost their
# layout only, ~2 ms less for a live cell's 16-60 boxes (benchmarks/bench_live.py)
_EVERY_CHARACTER = quote("".join(chr(c) for c in range(32, 127)))
WARM_UP = (
    f'digraph warm_up {{ node [fontname="{FONT}", shape=box] '
    f"w11 [fontsize=11, label={_EVERY_CHARACTER}] w10 [fontsize=10, label={_EVERY_CHARACTER}] }}\n"
).encode()
_NAMED_SUBGRAPH = re.compile(rb'\bsubgraph\s+(?:"|[A-Za-z_])')
_PAGE_PREFIX = re.compile(rb' id="page\d+,\d+_')
_WAITING: dict[tuple, subprocess.Popen] = {}  # (command, warmed up) -> a process started ahead
_LOCK = threading.Lock()
_REQUESTS: queue.Queue = queue.Queue()  # (key, command, env) of the processes to start ahead
_STARTER: list[threading.Thread] = []  # the one helper thread that starts them
_HELD = threading.local()  # .requests: those held back by `start_next_after` in this thread


def run(cmd: list[str], source: bytes, timeout: float, env: dict) -> tuple[int, bytes, bytes]:
    """Run `cmd` on `source` as `subprocess.run` would: (return code, stdout, stderr).

    Raises:
        subprocess.TimeoutExpired: no answer within `timeout` seconds (the process is killed).
        OSError: the program cannot be started (e.g. FileNotFoundError).
    """
    # (the regular expression only when it may matter: it costs ms on a big drawing's DOT)
    warm = source.count(b"subgraph") <= 1 or len(_NAMED_SUBGRAPH.findall(source)) <= 1
    key = (tuple(cmd), warm)
    with _LOCK:
        proc = _WAITING.pop(key, None)
    if proc is None or proc.poll() is not None:  # the first drawing, or it went away
        proc = _start(cmd, env, warm)
    try:
        out, err = _exchange(proc, source, timeout)
    except subprocess.TimeoutExpired:
        _stop(proc)
        raise
    finally:  # the next drawing's process, started while we return
        _ask_ahead(key, cmd, env)
    if not warm:
        return proc.returncode, out, err
    warm_up = out.find(b"<title>warm_up</title>")
    if proc.returncode != 0 or warm_up < 0:  # refused (or not a dot): say it as alone
        alone = subprocess.run(cmd, input=source, capture_output=True, timeout=timeout, env=env)
        return alone.returncode, alone.stdout, alone.stderr
    drawing = out[out.index(b"</svg>", warm_up) + len(b"</svg>") :].lstrip(b"\r\n")
    return 0, _PAGE_PREFIX.sub(b' id="', drawing), err


def _exchange(proc: subprocess.Popen, source: bytes, timeout: float) -> tuple[bytes, bytes]:
    """`proc.communicate(source, timeout)` with fewer system calls.

    communicate() writes 4 KB at a time and reads 32 KB, polling before each: here the
    source goes in one write when the pipe takes it (a live graph's DOT does), and each
    wake-up reads all that is there. The timeout holds all the way, as there. For the
    mixed live cell's 60 boxes the exchange alone took 0.6 ms of CPU against 1.1, and
    run() as a whole 1.0-1.1 ms against 1.2-1.4 (benchmarks/README.md).
    """
    if not hasattr(select, "poll"):  # Windows: communicate() uses threads there
        return proc.communicate(source, timeout=timeout)
    deadline = time.monotonic() + timeout
    stdin, stdout, stderr = proc.stdin, proc.stdout, proc.stderr
    assert stdin is not None and stdout is not None and stderr is not None  # made with PIPE
    os.set_blocking(stdin.fileno(), False)  # a full pipe must not block past the timeout
    try:
        sent = os.write(stdin.fileno(), source) if source else 0
    except BlockingIOError:  # the pipe is full (a big graph): poll for room below
        sent = 0
    except BrokenPipeError:  # it exited already: its stderr says why
        sent = len(source)
    poller = select.poll()
    if sent < len(source):
        poller.register(stdin.fileno(), select.POLLOUT)
    else:
        stdin.close()
    out, err = stdout.fileno(), stderr.fileno()
    chunks: dict[int, list[bytes]] = {out: [], err: []}
    for fd in chunks:
        poller.register(fd, select.POLLIN)
    open_fds = len(chunks) + (not stdin.closed)
    while open_fds:
        left = deadline - time.monotonic()
        ready = poller.poll(left * 1000) if left > 0 else []
        if not ready:  # run() stops the process
            raise subprocess.TimeoutExpired(proc.args, timeout)
        for fd, _ in ready:
            if fd in chunks:
                data = os.read(fd, 1 << 20)
                if data:
                    chunks[fd].append(data)
                    continue
            else:
                try:
                    sent += os.write(fd, source[sent : sent + (1 << 16)])
                except BlockingIOError:  # room for less than PIPE_BUF: wait for more
                    continue
                except BrokenPipeError:
                    sent = len(source)
                if sent < len(source):
                    continue
                stdin.close()
            poller.unregister(fd)  # at its end (a pipe read empty, or all sent)
            open_fds -= 1
    stdout.close()
    stderr.close()
    proc.wait(max(0.0, deadline - time.monotonic()))
    return b"".join(chunks[out]), b"".join(chunks[err])


def _start(cmd: list[str], env: dict, warm: bool) -> subprocess.Popen:
    proc = subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    if warm:
        try:  # a few hundred bytes each way: fits the pipes, never blocks; unbuffered, so
            os.write(proc.stdin.fileno(), WARM_UP)  # type: ignore[union-attr]  # nothing is left to flush if it failed
        except OSError:  # it exited already: run() lays the graph out alone
            pass
    return proc


@contextlib.contextmanager
def start_next_after() -> Iterator[None]:
    """Start the next drawings' processes when this block ends, not as each drawing ends."""
    if getattr(_HELD, "requests", None) is not None:  # nested: the outer block starts them
        yield
        return
    _HELD.requests = {}
    try:
        yield
    finally:
        held, _HELD.requests = _HELD.requests, None
        for key, (cmd, env) in held.items():
            _ask_ahead(key, cmd, env)


def _ask_ahead(key: tuple, cmd: list[str], env: dict) -> None:
    """Have the helper thread start a process for `key` (the thread is started once)."""
    held = getattr(_HELD, "requests", None)
    if held is not None:  # inside `start_next_after`: one process per key, at its end
        held[key] = (cmd, env)
        return
    with _LOCK:
        if not _STARTER or not _STARTER[0].is_alive():
            _STARTER[:] = [threading.Thread(target=_starter, daemon=True)]
            _STARTER[0].start()
    _REQUESTS.put((key, cmd, env))


def _starter() -> None:
    while True:
        key, cmd, env = _REQUESTS.get()
        try:
            _start_ahead(key, cmd, env)
        except Exception:  # noqa: BLE001 - the next drawing starts its own and says why
            pass
        finally:
            _REQUESTS.task_done()  # settle() and the exit wait on every request


def _start_ahead(key: tuple, cmd: list[str], env: dict) -> None:
    try:
        proc = _start(cmd, env, warm=key[1])
    except OSError:  # the program went away: the next drawing reports it
        return
    with _LOCK:
        old, _WAITING[key] = _WAITING.get(key), proc
    if old is not None:  # two threads drew at once: keep one spare
        _stop(old)


def _stop(proc: subprocess.Popen) -> None:
    proc.kill()
    for pipe in (proc.stdin, proc.stdout, proc.stderr):  # (nothing buffered in them)
        if pipe is not None:
            pipe.close()
    proc.wait()


def settle() -> None:
    """Wait until the next drawing's process has been started (tests look at it)."""
    _REQUESTS.join()


@atexit.register
def stop_all() -> None:
    """Stop the processes waiting for a next drawing (at exit, and in tests)."""
    settle()  # a process still being started would outlive us
    with _LOCK:
        waiting = list(_WAITING.values())
        _WAITING.clear()
    for proc in waiting:
        _stop(proc)
