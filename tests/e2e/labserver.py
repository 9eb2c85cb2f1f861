"""Start and stop an isolated JupyterLab server for the end-to-end tests.

The server gets its own config/data/runtime/IPython/settings/workspace folders under one
temporary directory, so nothing from the machine's Jupyter setup (or a previous run) leaks
in, and a random free port plus a random token on 127.0.0.1. The same server also serves
Notebook 7 (`/tree`, `/notebooks/...`), because the `notebook` package registers itself as a
server extension.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

# Settings that keep pop-ups off the page: the "receive official Jupyter news?" toast would
# cover cells in screenshots and steal keyboard focus from the notebook.
_QUIET_SETTINGS = {
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False},
    # as binder/postBuild sets it: a saved notebook keeps its widgets' state, so a stepper or
    # panel reopens with its picture instead of "Error displaying widget: model not found"
    "@jupyter-widgets/jupyterlab-manager:plugin": {"saveState": True},
}


def free_port() -> int:
    """A TCP port that was free a moment ago (the OS picks it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _write_settings(base: Path) -> tuple[Path, Path]:
    """Write overrides.json (app settings) and the same values as user settings."""
    app_settings = base / "app-settings"
    app_settings.mkdir(parents=True)
    (app_settings / "overrides.json").write_text(json.dumps(_QUIET_SETTINGS, indent=1))
    user_settings = base / "user-settings"
    for plugin, values in _QUIET_SETTINGS.items():
        package, name = plugin.split(":")
        folder = user_settings / package
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.jupyterlab-settings").write_text(json.dumps(values))
    return app_settings, user_settings


class LabServer:
    """One running JupyterLab; `url(path)` builds authenticated URLs.

    Args:
        base: an empty temporary directory; `base / "root"` is what the server serves.
        log_path: where the server's stdout and stderr go (kept for failure reports).
    """

    def __init__(self, base: Path, log_path: Path):
        self.base = base
        self.root = base / "root"
        self.root.mkdir(parents=True)
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.log_path = log_path
        self.proc: subprocess.Popen | None = None
        self._log = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str, **query: str) -> str:
        """An authenticated URL; `?reset` is added to Lab URLs so no old workspace loads."""
        sep = "&" if "?" in path else "?"
        extra = "".join(f"&{k}={v}" for k, v in query.items())
        return f"{self.base_url}/{path.lstrip('/')}{sep}token={self.token}{extra}"

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        for key, sub in [
            ("JUPYTER_CONFIG_DIR", "config"),
            ("JUPYTER_DATA_DIR", "data"),
            ("JUPYTER_RUNTIME_DIR", "runtime"),
            ("IPYTHONDIR", "ipython"),
            ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"),
        ]:
            path = self.base / sub
            path.mkdir(exist_ok=True)
            env[key] = str(path)
        env["JUPYTERLAB_SETTINGS_DIR"] = str(self.base / "user-settings")
        env["PYTHONUNBUFFERED"] = "1"
        # The machine's own startup files must not run inside the kernel under test.
        env.pop("PYTHONSTARTUP", None)
        return env

    def start(self, timeout: float = 90.0) -> None:
        """Launch the server in its own process group and wait until the API answers."""
        app_settings, _ = _write_settings(self.base)
        cmd = [
            sys.executable,
            "-m",
            "jupyter",
            "lab",
            "--allow-root",
            "--no-browser",
            "--ServerApp.open_browser=False",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root}",
            f"--LabApp.app_settings_dir={app_settings}",
            f"--LabApp.user_settings_dir={self.base / 'user-settings'}",
            f"--LabApp.workspaces_dir={self.base / 'workspaces'}",
            # window.jupyterapp lets the driver ask the page whether the kernel is connected.
            "--LabApp.expose_app_in_browser=True",
            "--JupyterNotebookApp.expose_app_in_browser=True",
            # No extension manager: it would try PyPI from the page.
            "--LabApp.extension_manager=readonly",
        ]
        self.start_command(cmd, timeout)

    def start_command(self, cmd: list[str], timeout: float = 90.0) -> None:
        """Run `cmd` (a command that starts this JupyterLab) in its own process group and
        wait until the API answers."""
        self._log = open(self.log_path, "w")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            cmd,
            cwd=self.root,
            env=self.env(),
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"{' '.join(cmd[1:4])} exited with {self.proc.returncode}; "
                    f"log:\n{self.log_tail()}"
                )
            try:
                self.api("GET", "api/status", timeout=2)
                return
            except (urllib.error.URLError, ConnectionError, OSError):
                time.sleep(0.25)
        raise TimeoutError(f"no server after {timeout:.0f} s; log:\n{self.log_tail()}")

    def api(self, method: str, path: str, timeout: float = 10.0):
        """Call the REST API; returns the decoded JSON (or None for an empty body)."""
        req = urllib.request.Request(
            f"{self.base_url}/{path}",
            method=method,
            headers={"Authorization": f"token {self.token}"},
            data=b"" if method in ("POST", "PUT") else None,
        )
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            body = resp.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self) -> None:
        """Stop every kernel (each test opens its own notebooks; idle kernels cost memory)."""
        for session in self.api("GET", "api/sessions"):
            self.api("DELETE", f"api/sessions/{session['id']}")
        for kernel in self.api("GET", "api/kernels"):
            self.api("DELETE", f"api/kernels/{kernel['id']}")

    def stop(self, timeout: float = 20.0) -> None:
        """Shut down kernels and server; escalate to SIGTERM/SIGKILL of our process group."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            try:
                # Graceful: the server stops its kernels, then exits.
                self.api("POST", "api/shutdown", timeout=5)
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self._signal_group(signal.SIGTERM)
                try:
                    self.proc.wait(5)
                except subprocess.TimeoutExpired:
                    self._signal_group(signal.SIGKILL)
                    self.proc.wait(5)
        self._kill_stray_kernels()
        if self._log is not None:
            self._log.close()

    def _signal_group(self, sig: int) -> None:
        try:
            os.killpg(self.proc.pid, sig)
        except ProcessLookupError:
            pass

    def _kill_stray_kernels(self) -> None:
        """Kernels run in their own sessions; find ours by their connection file path."""
        marker = str(self.base / "runtime").encode()
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if marker in cmdline:
                try:
                    os.kill(int(entry.name), signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text()[-chars:]
        except OSError:
            return "(no log)"
