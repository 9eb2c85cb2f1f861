"""docs/pytorch_compat.md promises only what exists: every name it lists resolves."""

import pathlib
import re

import pytest

import tinygrad_edu as tg

DOC = pathlib.Path(__file__).parent.parent / "docs" / "pytorch_compat.md"
_, SUPPORTED = DOC.read_text().split("## What is there", 1)
SUPPORTED = SUPPORTED.split("## Known differences", 1)[0]
NAMES = re.findall(r"`((?:torch|Tensor|Module)\.[A-Za-z_][\w.]*)`", SUPPORTED)
ROOTS = {"torch": tg, "Tensor": tg.Tensor, "Module": tg.nn.Module}


def test_the_page_lists_many_names():
    assert len(NAMES) > 250 and len(set(NAMES)) == len(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_listed_name_exists(name):
    root, *path = name.split(".")
    obj = ROOTS[root]
    for part in path:
        assert hasattr(obj, part), f"{name}: no {part!r} in {obj!r}"
        obj = getattr(obj, part)
