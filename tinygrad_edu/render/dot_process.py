"""One long-lived Graphviz `dot` that lays out graph after graph, for the live view.

Starting `dot` costs 12-25 ms before it reads a byte (it loads its plugins), more than
laying out a 20-node graph. Graphviz's `dot` reads several graphs from one stdin and
writes each one's SVG as soon as the graph's closing `}` is read, so one process kept
open answers every drawing of a session in 1-3 ms plus the layout itself.

Rules: only Graphviz's own `dot` on a POSIX system is kept open (`-V` says
`dot - graphviz version`; graphviz-pure waits for the end of its input, and Windows
cannot wait on a pipe with a timeout). Whatever goes wrong (an error on stderr, the
process gone) closes it and `lay_out` returns None, so the caller runs dot once the
usual way and reports dot's own message. A layout slower than the timeout kills the
process, so a notebook never freezes. The processes are closed at interpreter exit.
Render layer: standard library only.
"""

from __future__ import annotations

import atexit
import os
import re
import select
import subprocess
import threading
import time

_END = b"</svg>\n"  # labels are escaped, so this only ever ends a document
_PAGE_ID = re.compile(r'<g id="page\d+,\d+_graph0" class="graph"')  # 2nd graph on: page0,1_
_OPEN: dict[str, DotProcess] = {}
_CAN_STREAM: dict[str, bool] = {}


class LayoutTimeoutError(Exception):
    """dot did not answer within the timeout (the process was stopped)."""


def can_stream(exe: str, env: dict[str, str]) -> bool:
    """Whether `exe` is Graphviz's dot on a system where a pipe can be waited on (cached)."""
    if exe not in _CAN_STREAM:
        ok = os.name == "posix"
        if ok:
            try:
                out = subprocess.run([exe, "-V"], capture_output=True, timeout=5, env=env)
                ok = out.stderr.startswith(b"dot - graphviz version")
            except (OSError, subprocess.TimeoutExpired):
                ok = False
        _CAN_STREAM[exe] = ok
    return _CAN_STREAM[exe]


def process_for(exe: str, env: dict[str, str]) -> DotProcess | None:
    """The open `dot -Tsvg` of `exe`, or None when `exe` cannot be kept open."""
    if not can_stream(exe, env):
        return None
    if exe not in _OPEN:
        _OPEN[exe] = DotProcess([exe, "-Tsvg"], env)
    return _OPEN[exe]


class DotProcess:
    """A `dot -Tsvg` kept open: write one graph, read its SVG up to `</svg>`."""

    def __init__(self, cmd: list[str], env: dict[str, str]) -> None:
        self.cmd, self.env = cmd, env
        self.proc: subprocess.Popen | None = None
        self.lock = threading.Lock()  # one graph in flight at a time

    def lay_out(self, source: str, timeout: float) -> str | None:
        """The SVG of `source`, or None if this process could not lay it out.

        Raises:
            LayoutTimeoutError: no answer within `timeout` seconds (the process is stopped).
        """
        with self.lock:
            try:
                if self.proc is None or self.proc.poll() is not None:
                    self.proc = subprocess.Popen(
                        self.cmd,
                        stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                        env=self.env,
                    )
                # the newline ends the last statement, so dot sees the graph is complete
                self.proc.stdin.write(source.encode("utf-8") + b"\n")
                self.proc.stdin.flush()
                svg = self._read_svg(timeout)
            except OSError:  # the process died under us (broken pipe)
                svg = None
            if svg is None:
                self.close()
                return None
            return _PAGE_ID.sub('<g id="graph0" class="graph"', svg.decode("utf-8"), count=1)

    def _read_svg(self, timeout: float) -> bytes | None:
        out, err = self.proc.stdout.fileno(), self.proc.stderr.fileno()
        got = b""
        deadline = time.monotonic() + timeout
        while not got.endswith(_END):
            left = deadline - time.monotonic()
            ready = select.select([out, err], [], [], max(left, 0))[0] if left > 0 else []
            if not ready:
                self.close(kill=True)  # still laying out: stop it, never freeze the notebook
                raise LayoutTimeoutError
            if err in ready:
                # warnings are harmless; an error means dot skipped this graph
                if b"Error" in os.read(err, 65536):
                    return None
            if out in ready:
                chunk = os.read(out, 65536)
                if not chunk:  # dot exited
                    return None
                got += chunk
        return got

    def close(self, kill: bool = False) -> None:
        """Stop the process (the next graph starts a new one): end its input, or kill it."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            if kill:
                proc.kill()
            proc.stdin.close()  # dot exits at the end of its input
            proc.wait(timeout=1)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
        for pipe in (proc.stdout, proc.stderr):
            pipe.close()


@atexit.register
def close_all() -> None:
    """Close every open dot (at interpreter exit, and in tests)."""
    for process in _OPEN.values():
        process.close()
