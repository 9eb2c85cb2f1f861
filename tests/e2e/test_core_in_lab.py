"""The bare toolkit works from a real front end: a notebook the test writes itself, run cell
by cell in JupyterLab and in Notebook 7, shows the tensor and gradient reprs a learner sees."""

from __future__ import annotations

import pytest
from driver import write_notebook

pytestmark = pytest.mark.e2e

CELLS = [
    "import tinygrad_edu as tg",
    "x = tg.tensor([1.0], requires_grad=True, name='x')\ny = (x * 3.0).sum()\ny",
    "y.backward()\nx.grad",
]


@pytest.mark.parametrize("ui", ["lab", "notebook"])
def test_core_cells_run_and_show_reprs(ui, open_notebook, tmp_path):
    nb = open_notebook(write_notebook(tmp_path / "core.ipynb", CELLS), ui=ui)
    for index in range(len(CELLS)):
        nb.run_cell(index)
        assert nb.errors(index) == "", nb.errors(index)
    # The grad_fn name and the gradient are what the learner checks by eye.
    assert "SumBackward" in nb.output_text(1)
    assert "3." in nb.output_text(2)
    assert nb.prompt_text(2) == "[3]:"
    nb.screenshot(f"core-{ui}")
