"""`python -m tinygrad_edu lessons` with JupyterLab's options, as in a root container:
`--allow-root --port P --ip 127.0.0.1 --no-browser` reach JupyterLab, which serves the
learner's copies, and the browser opens the first one.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from driver import NotebookPage
from e2e_paths import NOTEBOOKS, SHOTS
from labserver import LabServer, _write_settings

pytestmark = pytest.mark.e2e


class LessonsServer(LabServer):
    """JupyterLab as the learner's command starts it (same isolation as LabServer)."""

    def command(self, *options: str) -> list[str]:
        app_settings, _ = _write_settings(self.base)
        return [
            sys.executable,
            "-m",
            "tinygrad_edu",
            "lessons",
            "--from",
            str(NOTEBOOKS),
            *options,
            f"--IdentityProvider.token={self.token}",
            "--ServerApp.port_retries=0",
            f"--LabApp.app_settings_dir={app_settings}",
            f"--LabApp.user_settings_dir={self.base / 'user-settings'}",
            f"--LabApp.workspaces_dir={self.base / 'workspaces'}",
            "--LabApp.expose_app_in_browser=True",
            "--LabApp.extension_manager=readonly",
        ]


def test_lessons_passes_allow_root_port_and_ip_to_jupyterlab(
    _browser_available, browser_context, tmp_path
):
    server = LessonsServer(tmp_path / "lab", SHOTS / "lessons-command.log")
    options = ["--allow-root", "--port", str(server.port), "--ip", "127.0.0.1", "--no-browser"]
    try:
        server.start_command(server.command(*options))
        log = server.log_tail()
        assert "running: python -m jupyter lab --allow-root --port" in log
        assert f"127.0.0.1:{server.port}/lab" in log  # the port and ip we asked for
        # given the first lesson, Jupyter serves its folder: the learner's copies
        assert f"local directory: {server.root / 'my_lessons'}" in log
        server.root = server.root / "my_lessons"
        page = browser_context.new_page()
        page.set_viewport_size({"width": 1280, "height": 800})
        nb = NotebookPage(page, server, "01_define_by_run.ipynb", "lab", SHOTS).open()
        stub = nb.find_cell("# YOUR CODE HERE")  # the learner's copy, not the solutions
        assert nb.kinds[stub] == "code"
        nb.screenshot("lessons-command-first-lesson")
        page.close()
    finally:
        server.stop()


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root needs --allow-root"
)
def test_as_root_without_allow_root_jupyter_refuses_and_lessons_says_what_to_add(tmp_path):
    server = LessonsServer(tmp_path / "lab", SHOTS / "lessons-command-refused.log")
    cmd = server.command("--port", str(server.port), "--ip", "127.0.0.1", "--no-browser")
    proc = subprocess.run(
        cmd, cwd=server.root, env=server.env(), capture_output=True, text=True, timeout=120
    )
    assert proc.returncode != 0
    assert "lessons: running as root" in proc.stderr and "--allow-root" in proc.stderr
    assert "Use --allow-root to bypass" in proc.stdout + proc.stderr  # Jupyter's own refusal
