"""Creation sites name the notebook cell even after the cell has finished.

The live graph draws in `post_run_cell`, when IPython has already taken `get_ipython`
out of the builtins. Sites must still read `cell [N], line L: ...`; a temporary file
name such as `/tmp/ipykernel_1234/5678.py` changes every run and breaks nbval.
"""

import builtins

import pytest


def test_site_resolves_to_the_cell_between_cells():
    interactiveshell = pytest.importorskip("IPython.core.interactiveshell")
    ip = interactiveshell.InteractiveShell.instance()
    try:
        ip.run_cell(
            "import tinygrad_edu as tg\nx = tg.tensor([1.0], requires_grad=True)\ny = x * 2",
            store_history=True,
        )
        count = ip.execution_count - 1
        assert not hasattr(builtins, "get_ipython")  # as in a post_run_cell callback
        assert str(ip.user_ns["y"].grad_fn.site) == f"cell [{count}], line 3: y = x * 2"
    finally:
        interactiveshell.InteractiveShell.clear_instance()
