"""`%tg keep last`: only the newest drawing stays; earlier ones shrink to a summary and a note."""

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

from tinygrad_edu.widgets.live import REPLACED_NOTE  # noqa: E402

CELLS = [
    "import tinygrad_edu as tg\n%load_ext tinygrad_edu\n%tg keep last",
    "x = tg.tensor(2.0, requires_grad=True, name='x')\ny = x * 3",
    "z = y + 1",
    "n = 5  # draws nothing: the drawing above stays",
    "%tg keep all",
    "u = z * z",
    "v = u.tanh()",
]


@pytest.fixture(scope="module")
def cells() -> list:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in CELLS]
    nbclient.NotebookClient(nb, timeout=60, kernel_name="python3").execute()
    return nb.cells


def drawing(cell) -> dict:
    (out,) = [o for o in cell.outputs if o.get("output_type") == "display_data"]
    return out["data"]


def test_keep_last_says_so(cells):
    assert (
        cells[0]
        .outputs[0]["text"]
        .startswith("live graph: on, scope cell, keeping the newest drawing only, watching")
    )


def test_an_earlier_drawing_becomes_its_summary_and_says_how_to_draw_it(cells):
    old = drawing(cells[1])
    assert old["text/plain"] == (
        "live graph: forward graph, 4 nodes (3 tensors, 1 op)\n"
        "new in this cell: x, const, Mul, y\n" + REPLACED_NOTE
    )
    assert (
        old["text/html"].startswith("<pre>live graph: forward graph")
        and "<svg" not in old["text/html"]
    )
    assert "tg-frame" in drawing(cells[2])["text/html"]  # the newest when `keep all` came
    assert cells[3].outputs == []


def test_keep_all_keeps_every_drawing_again(cells):
    assert "tg-frame" in drawing(cells[5])["text/html"]
    assert "tg-frame" in drawing(cells[6])["text/html"]
    assert REPLACED_NOTE not in drawing(cells[5])["text/plain"]
