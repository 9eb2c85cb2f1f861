"""Drive a notebook in JupyterLab or Notebook 7 the way a learner does: click a cell, press
Shift+Enter, look at what appears under it.

Both front ends use the same `jp-*` DOM classes for cells, prompts and outputs, so one class
serves both. Every wait has a timeout; a timeout failure names the cell and what it waited for.
"""

from __future__ import annotations

import time
from pathlib import Path

import nbformat

# Kernel start + `import tinygrad_edu` + the first graphviz call happen in the first cell.
FIRST_CELL_TIMEOUT_MS = 90_000
CELL_TIMEOUT_MS = 45_000
RENDER_TIMEOUT_MS = 20_000


_KERNEL_STATUS = """() => {
  const app = window.jupyterapp;
  if (!app) return 'no app';
  const w = app.shell.currentWidget;
  const sc = w && w.sessionContext;
  if (!sc) return 'no notebook';
  if (!sc.isReady) return 'session starting';
  const k = sc.session && sc.session.kernel;
  return k ? k.connectionStatus + '/' + k.status : 'no kernel';
}"""

_WATCH_PROMPT = """el => {
  if (el.__tgObs) el.__tgObs.disconnect();
  el.__tgSeen = [];
  el.__tgObs = new MutationObserver(() => el.__tgSeen.push(el.innerText.trim()));
  el.__tgObs.observe(el, {subtree: true, childList: true, characterData: true});
}"""

_PROMPT_DONE = r"el => el.__tgSeen.includes('[*]:') && /^\[\d+\]:$/.test(el.innerText.trim())"


def write_notebook(path: Path, sources: list[str]) -> Path:
    """Write a code-only notebook with the python3 kernelspec (so no kernel dialog shows)."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [nbformat.v4.new_code_cell(src) for src in sources]
    nbformat.write(nb, str(path))
    return path


class NotebookPage:
    """A notebook open in the browser.

    Args:
        page: a playwright Page.
        server: the LabServer serving the notebook.
        name: path of the notebook relative to the server root.
        ui: "lab" (JupyterLab) or "notebook" (Notebook 7).
        shots: folder for screenshots.
    """

    def __init__(self, page, server, name: str, ui: str, shots: Path):
        self.page = page
        self.server = server
        self.name = name
        self.ui = ui
        self.shots = shots
        self._runs = 0
        # Sources come from the file: Lab renders the editors of off-screen cells lazily, so
        # the page cannot be asked what cell 30 says.
        nb = nbformat.read(str(server.root / name), as_version=4)
        self.kinds = [c.cell_type for c in nb.cells]
        self.sources = [c.source for c in nb.cells]
        self.tags = [list(c.metadata.get("tags", [])) for c in nb.cells]

    def open(self) -> NotebookPage:
        if self.ui == "lab":
            url = self.server.url(f"lab/tree/{self.name}", reset="")
        else:
            url = self.server.url(f"notebooks/{self.name}")
        self.page.goto(url, wait_until="domcontentloaded", timeout=60_000)
        self.page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=60_000)
        self.wait_kernel_idle()
        return self

    def kernel_status(self) -> str:
        """`connectionStatus/status` of the current notebook's kernel, as the page sees it."""
        return self.page.evaluate(_KERNEL_STATUS)

    def wait_kernel_idle(self, timeout_s: float = 90.0, stable_s: float = 1.0) -> None:
        """Wait until the kernel has been connected and idle for `stable_s` seconds in a row.

        Lab flips idle -> connecting -> idle while it opens a notebook and re-renders the cells
        in between; a Shift+Enter sent during that flip can be lost, and a click can hit a
        detached element. The toolbar indicator alone was seen to say idle too early.
        """
        deadline = time.monotonic() + timeout_s
        idle_since = None
        while time.monotonic() < deadline:
            if self.kernel_status() == "connected/idle":
                idle_since = idle_since or time.monotonic()
                if time.monotonic() - idle_since >= stable_s:
                    return
            else:
                idle_since = None
            time.sleep(0.2)
        raise AssertionError(
            f"{self.name}: kernel not idle after {timeout_s:.0f} s (status {self.kernel_status()!r})"
        )

    @property
    def notebook(self):
        # In Lab, only the current notebook panel is visible; `:visible` skips hidden ones.
        return self.page.locator(".jp-NotebookPanel:visible .jp-Notebook").first

    def cells(self):
        return self.notebook.locator(".jp-Cell")

    def cell(self, index: int):
        return self.cells().nth(index)

    def cell_count(self) -> int:
        return self.cells().count()

    def code_cell_indices(self) -> list[int]:
        return [i for i, kind in enumerate(self.kinds) if kind == "code"]

    def output(self, index: int):
        """The output area of cell `index`."""
        return self.cell(index).locator(".jp-OutputArea").first

    def prompt_text(self, index: int) -> str:
        return self.cell(index).locator(".jp-InputPrompt").first.inner_text().strip()

    def run_cell(self, index: int, timeout_ms: int | None = None) -> None:
        """Select cell `index`, press Shift+Enter, wait until its prompt shows `[n]:`."""
        if timeout_ms is None:
            timeout_ms = FIRST_CELL_TIMEOUT_MS if self._runs == 0 else CELL_TIMEOUT_MS
        cell = self.cell(index)
        cell.scroll_into_view_if_needed(timeout=10_000)
        prompt = cell.locator(".jp-InputPrompt").first
        # Record every text the prompt takes: "[*]:" while queued/running, then "[n]:". Waiting
        # for "[n]:" alone would accept a stale count (a re-run cell, or a saved lesson).
        prompt.evaluate(_WATCH_PROMPT)
        for _attempt in range(3):
            # Clicking the prompt selects the cell in command mode in both front ends.
            prompt.click(timeout=10_000)
            self.page.keyboard.press("Shift+Enter")
            try:
                self.page.wait_for_function(
                    "el => el.__tgSeen.length > 0", arg=prompt.element_handle(), timeout=10_000
                )
                break
            except Exception:
                pass  # the page swallowed the keypress (seen under load): press again
        try:
            self.page.wait_for_function(
                _PROMPT_DONE, arg=prompt.element_handle(), timeout=timeout_ms
            )
        except Exception as exc:
            raise AssertionError(
                f"{self.name}: cell {index} did not finish in {timeout_ms / 1000:.0f} s "
                f"(prompt {self.prompt_text(index)!r}, kernel {self.kernel_status()!r}); "
                f"source:\n{self.source(index)}"
            ) from exc
        self._runs += 1

    def run_all_code_cells(self) -> None:
        for index in self.code_cell_indices():
            self.run_cell(index)

    def run_through(self, needle: str) -> int:
        """Run the code cells in order up to the first whose source contains `needle`, the way
        a learner reads a lesson; return that cell's index. An error fails the test, except
        under cells tagged `raises-exception` (the lesson's deliberate errors)."""
        target = self.find_cell(needle)
        for index in self.code_cell_indices():
            if index > target:
                break
            self.run_cell(index)
            source = self.source(index)
            error = self.cell(index).locator(
                ".jp-RenderedText[data-mime-type='application/vnd.jupyter.stderr']"
            )
            shown = self.errors(index) + self.output_text(index)
            # IPython's traceback, or the extension's short one for tinygrad_edu errors
            raised = "Traceback" in shown or "%tb shows the full traceback" in shown
            if "raises-exception" not in self.tags[index] and error.count() and raised:
                raise AssertionError(
                    f"{self.name}: cell {index} raised:\n"
                    f"{self.output_text(index)[-2000:]}\nsource:\n{source}"
                )
        return target

    def source(self, index: int) -> str:
        return self.sources[index]

    def find_cell(self, needle: str) -> int:
        """Index of the first cell whose source contains `needle`."""
        for i, source in enumerate(self.sources):
            if needle in source:
                return i
        raise AssertionError(f"{self.name}: no cell contains {needle!r}")

    def output_text(self, index: int) -> str:
        return self.output(index).inner_text()

    def errors(self, index: int) -> str:
        """Traceback text shown under a cell ('' when none)."""
        err = self.cell(index).locator('[data-mime-type="application/vnd.jupyter.stderr"]')
        return "\n".join(err.all_inner_texts())

    def screenshot(self, label: str) -> Path:
        self.shots.mkdir(parents=True, exist_ok=True)
        path = self.shots / f"{label}.png"
        self.page.screenshot(path=str(path), full_page=False, timeout=15_000)
        return path

    def screenshot_cell(self, index: int, label: str) -> Path:
        self.shots.mkdir(parents=True, exist_ok=True)
        path = self.shots / f"{label}.png"
        self.cell(index).screenshot(path=str(path), timeout=15_000)
        return path
